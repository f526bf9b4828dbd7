"""What the ranks' ProcessGroupNCCL options say: the ranks of one process group that run it with different
options, and a watchdog timeout read against the timeout the group was given.

PyTorch prints each ProcessGroupNCCL's options when it creates it (``torch.pg_info`` events, every
release's wording: 1.10 - 2.0's block, 2.1's one line, 2.2+'s ``initialization options`` and
``environments`` lines). Two kinds of facts are in them:

* the group's own options (``TIMEOUT(ms)``, ``USE_HIGH_PRIORITY_STREAM``): compared between the processes
  that printed the same group (its GUID / description where the prefix names it; an unnamed group only
  where each process printed one value for it);
* the process's settings (``TORCH_NCCL_*`` / ``NCCL_*``, ``TORCH_DISTRIBUTED_DEBUG``): read from the
  environment once per process, compared between processes whatever group printed them. A name torch
  renamed (``NCCL_ASYNC_ERROR_HANDLING``, 2.2: ``TORCH_NCCL_ASYNC_ERROR_HANDLING``) is one setting.

A process that printed two values for one fact (two unnamed groups, a restart) is left out of that fact;
a fact printed by one process only is never a disagreement.
"""
from __future__ import annotations

from typing import Any

from ..events import Event
from ..lazyre import lazy_re
from .attribution import pg_of
from .common import as_int, synthetic
from .disagreements import _describe, _minority, _values, who
from .job import Job

# NAME: value, as every wording prints them (`, `-separated or one a line; a name may carry a note in
# parentheses: `TORCH_NCCL_ENABLE_MONITORING (Whether to kill program when ...): 1`)
_PAIR = lazy_re(r"(?:^|[\n,:\]])[ \t]*((?:TORCH_)?NCCL_[A-Z0-9_]{2,60}|TORCH_[A-Z0-9_]{2,60}|TIMEOUT\(ms\)|"
                r"USE_HIGH_PRIORITY_STREAM)(?: \([^()\n]{1,120}\))?: ([^,\s]{1,40})(?=,|[ \t]*(?:\n|$))")
GROUP_OPTIONS = ("TIMEOUT(ms)", "USE_HIGH_PRIORITY_STREAM")  # per process group; the others per process
# (the ones torch renamed with a TORCH_ prefix in 2.2 keep one key; TORCH_DISTRIBUTED_DEBUG was always so)
_UNNAMED = "(unnamed)"
MAX_PER_VALUE = 4  # evidence lines kept per value


def _key(name: str) -> str:
    return name[6:] if name.startswith("TORCH_NCCL_") else name


def _group(ev: Event) -> str:
    f = ev.fields
    guid = f.get("pg_guid")
    pid_, desc, _ = pg_of(ev)
    name = str(guid) if guid is not None else (str(f["pg_name"]) if f.get("pg_name") is not None else pid_)
    if name is None and desc is None:
        return _UNNAMED
    return f"{name} ({desc})" if name is not None and desc and desc != name else str(name if name is not None else desc)


def option_facts(job: Job) -> dict[tuple[str, str], tuple[dict[Any, str], dict[Any, list[Event]], str]]:
    """``(group, key) -> ({who: value}, {who: [events]}, the name as printed)``; group ``""`` for a
    process's settings. A who with two values for one fact is left out of it."""
    cached = job.cache.get("pg_option_facts")
    if cached is not None:
        return cached
    seen: dict[tuple[str, str], dict[Any, set]] = {}
    evs: dict[tuple[str, str], dict[Any, list[Event]]] = {}
    names: dict[tuple[str, str], str] = {}
    for i in job.by_kind.get("torch.pg_info", ()):
        ev = job.events[i]
        text = ev.text
        if "ProcessGroupNCCL" not in text or ": " not in text:
            continue
        w = who(ev)
        group = None
        for m in _PAIR.finditer(text):
            name, value = m.group(1), m.group(2)
            if name in GROUP_OPTIONS:
                if group is None:
                    group = _group(ev)
                fact = (group, name)
            else:
                fact = ("", _key(name))
            names.setdefault(fact, name)
            seen.setdefault(fact, {}).setdefault(w, set()).add(value)
            per = evs.setdefault(fact, {}).setdefault(w, [])
            if not per or per[-1] is not ev:
                per.append(ev)
    out = {}
    for fact, per_who in seen.items():
        vals = {w: next(iter(vs)) for w, vs in per_who.items() if len(vs) == 1}
        out[fact] = (vals, {w: evs[fact][w] for w in vals}, names[fact])
    job.cache["pg_option_facts"] = out
    return out


def _timeouts(job: Job) -> list[Event]:
    """The watchdog's timeouts that state their Timeout(ms), in the job's order."""
    got = [job.events[i] for k in ("torch.watchdog_timeout", "torch.async_exception") for i in job.by_kind.get(k, ())
           if as_int(job.events[i].fields.get("timeout_ms")) is not None]
    return sorted(got, key=job.timeline.key)


def analyze(job: Job) -> list[Event]:
    if not job.by_kind.get("torch.pg_info"):
        return []
    return _disagreements(job) + _watchdog_against_options(job)


def _disagreements(job: Job) -> list[Event]:
    out = []
    fired = None
    for (group, key), (vals, evs, name) in sorted(option_facts(job).items()):
        if len(vals) < 2 or len(set(vals.values())) < 2:
            continue
        values = _values(vals)
        numeric = all(as_int(v) is not None for v in values)
        if numeric:  # (in order: 60000 before 1800000)
            values = dict(sorted(values.items(), key=lambda kv: as_int(kv[0])))
        minority = _minority(values, job)
        extra: dict[str, Any] = {}
        lead: list[Event] = []
        where = f"the ranks of process group {group}" if group else "the ranks"
        if name == "TIMEOUT(ms)" and numeric:
            if fired is None:
                fired = _timeouts(job)
            shortest = min(as_int(v) for v in values)
            short = values[str(shortest)] if str(shortest) in values else next(iter(values.values()))
            hits = [e for e in fired if who(e) in vals and as_int(e.fields.get("timeout_ms")) == as_int(vals[who(e)])]
            extra = {"shortest_ms": shortest, "longest_ms": max(as_int(v) for v in values), "short": short,
                     "timed_out": sorted({who(e) for e in hits}, key=str),
                     "fired_short": bool(hits) and as_int(hits[0].fields.get("timeout_ms")) == shortest}
            if extra["fired_short"]:
                minority = short
                lead = [hits[0]]
        # the odd ranks' lines first (the finding points at them), then the others' for comparison
        odd = set(minority)
        order = sorted(values.items(), key=lambda kv: not odd.intersection(kv[1]))
        evidence = lead + [e for v, ws in order for w in ws[:MAX_PER_VALUE] for e in evs[w][:1]]
        text = f"{name} differs between {where}: {_describe(values)}"
        if extra.get("fired_short"):
            first = who(lead[0])
            text += (f"; the watchdog of {f'rank {first}' if isinstance(first, int) else first} fired first, "
                     f"after Timeout(ms)={extra['shortest_ms']}")
        ranks = sorted(w for w in minority if isinstance(w, int))
        out.append(synthetic("analysis.pg_options_disagreement", text, evidence, level="WARN", on_ranks=ranks,
                             name=name, option=key, pg=group or None, values=values, minority=minority, **extra))
    return out


# -- a watchdog timeout read against the timeout its group was created with ----------------------------

DEFAULT_TIMEOUTS_MS = (600000, 1800000)  # ProcessGroupNCCL's default: 30 min, 10 min since torch 2.2


def _watchdog_against_options(job: Job) -> list[Event]:
    """A watchdog that fired at another timeout than the one its group printed at creation. The group is
    the one the watchdog's prefix names; else any group the process printed (a timeout one of them has
    is no finding); else, when the process printed none, the default group as every process that printed
    it agrees (``basis`` says which)."""
    facts = option_facts(job)
    timeouts = {g: vals for (g, k), (vals, _, _) in facts.items() if k == "TIMEOUT(ms)"}
    if not timeouts:
        return []
    fired = _timeouts(job)
    default = next((g for g in timeouts if g.startswith("0 ") or g == "0" or "default_pg" in g), None)
    agreed = timeouts.get(default or _UNNAMED) or {}
    agreed_ms = as_int(next(iter(set(agreed.values())))) if len(set(agreed.values())) == 1 else None
    found: dict[tuple, dict[str, Any]] = {}
    seen: set = set()
    for ev in fired:
        w = who(ev)
        if w in seen:
            continue  # (a process's first timeout: the others are the same collective told again)
        seen.add(w)
        n = as_int(ev.fields.get("timeout_ms"))
        group = _group(ev) if any(ev.fields.get(k) is not None for k in ("pg_guid", "pg_desc", "pg_id")) else None
        mine = {g: as_int(vals[w]) for g, vals in timeouts.items() if w in vals}
        if group is not None and group in mine:
            configured, basis, pg = mine[group], "group", group
            if configured == n and n in DEFAULT_TIMEOUTS_MS and group != default and (mine.get(default) or 0) > n:
                configured, basis, pg = mine[default], "subgroup", default  # (as below, the group named)
        elif mine:
            pg = default if default in mine else (next(iter(mine)) if len(mine) == 1 else None)
            configured, basis = (mine[pg] if pg else None), "process"
            if n in mine.values():
                # a group of its own has that timeout: a finding only where it is torch's default and the
                # default group was given longer (a subgroup created without `timeout=`)
                if not (n in DEFAULT_TIMEOUTS_MS and configured is not None and configured > n):
                    continue
                basis = "subgroup"
        elif agreed_ms is not None:
            configured, basis, pg = agreed_ms, "job", default
        else:
            continue
        if configured is None or configured == n:
            continue
        slot = found.setdefault((n, configured, pg, basis), {"events": [], "whos": []})
        slot["events"].append(ev)
        slot["whos"].append(w)
        for g, vals in timeouts.items():
            evs = facts[(g, "TIMEOUT(ms)")][1]
            if basis == "job" and g == pg and not slot["events"][1:]:
                slot["events"].append(next(iter(evs.values()))[0])
            elif w in evs and (pg is None or g == pg or (basis == "subgroup" and as_int(vals[w]) == n)):
                slot["events"].append(evs[w][0])
    out = []
    for (n, configured, pg, basis), slot in found.items():
        whos = sorted(set(slot["whos"]), key=str)
        ranks = sorted(w for w in whos if isinstance(w, int))
        names = ", ".join(str(w) for w in whos) if not ranks or len(ranks) < len(whos) else None
        on = f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}" if names is None else names
        ev0 = slot["events"][0]
        group = f"process group {pg}" if pg else "its process group"
        text = (f"the watchdog of {on} fired after Timeout(ms)={n}, but {group} was created with TIMEOUT(ms): "
                f"{configured}" + (" (as the other ranks printed it)" if basis == "job" else "")
                + (f"; another group of the same process has {n}" if basis == "subgroup" else ""))
        out.append(synthetic("analysis.pg_timeout_mismatch", text, slot["events"], level="WARN", on_ranks=ranks,
                             timeout_ms=n, configured_ms=configured, pg=pg, basis=basis, ranks=ranks,
                             default_timeout=n in DEFAULT_TIMEOUTS_MS, longer=configured > n,
                             seq=ev0.fields.get("seq"), op_type=ev0.fields.get("op_type")))
    return out


__all__ = ["analyze", "option_facts", "GROUP_OPTIONS", "DEFAULT_TIMEOUTS_MS"]
