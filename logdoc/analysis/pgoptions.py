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


__all__ = ["analyze", "option_facts", "GROUP_OPTIONS"]
