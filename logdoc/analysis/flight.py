"""What the flight-recorder dumps of the ranks say together (the checks of PyTorch's ``torchfrtrace``).

Per process group (entries' ``process_group`` name, members from the dumps' ``pg_config``):

* missing ranks: members of the group with no dump (``analysis.missing_ranks``, source ``flight_recorder``);
* mismatched collectives: at the same collective sequence id the ranks recorded different ops, input or
  output sizes, or dtypes (``analysis.collective_mismatch``, source ``flight_recorder``), with the
  size rules of ``torchfrtrace`` (all_to_all / scatter / gather sizes may differ);
* the first collective not completed everywhere: the ranks that never recorded it while the others
  did and wait in it are hung (``analysis.hung_rank``, source ``flight_recorder``).

Every finding names the last collective each side reached and the caller's frame from the recorded
stack, and is tied to the text logs of the same ranks: their last line (or their first error) is part
of the evidence.
"""
from __future__ import annotations

import ast
from typing import Any

from ..events import Event
from .common import as_int, ranks_text, synthetic
from .job import Job, is_error

# ops whose sizes legitimately differ across ranks (torchfrtrace: Op.match)
_FREE_INPUT = {"all_to_all", "scatter", "alltoall", "alltoall_base", "all_to_all_single"}
_FREE_OUTPUT = {"all_to_all", "gather", "alltoall", "alltoall_base", "all_to_all_single"}


def _members(job: Job, dumps: dict[int, Event], pg_name: str | None, pg_desc: str | None) -> list[int] | None:
    found = None
    for ev in dumps.values():
        cfg = ev.fields.get("pg_config") or {}
        if not isinstance(cfg, dict):
            continue
        cands = [cfg.get(pg_name)] if pg_name in cfg else []
        if not cands:
            cands = [c for c in cfg.values() if isinstance(c, dict) and pg_desc and c.get("desc") == pg_desc]
        if not cands and len(cfg) == 1:
            cands = list(cfg.values())
        for c in cands:
            if not isinstance(c, dict):
                continue
            ranks = c.get("ranks")
            if isinstance(ranks, str):
                try:
                    ranks = ast.literal_eval(ranks)
                except (ValueError, SyntaxError):
                    ranks = None
            if isinstance(ranks, (list, tuple)) and all(isinstance(r, int) for r in ranks):
                found = sorted(set(found or ()) | set(ranks))
    return found


def _last_text_line(job: Job, rank: int) -> Event | None:
    """The first error of a rank's text log, else its last line: how its log ties to the dump."""
    last = None
    for ev in job.events:
        if ev.rank != rank or ev.kind.startswith(("fr.", "analysis.")):
            continue
        if is_error(ev):
            return ev
        if last is None or job.timeline.key(ev) > job.timeline.key(last):
            last = ev
    return last


def _desc(ev: Event | None) -> str:
    if ev is None:
        return "nothing"
    f = ev.fields
    where = f" at {f['user_frame']}" if f.get("user_frame") else ""
    return f"#{f.get('seq')} {f.get('profiling_name') or f.get('op')} (input sizes {f.get('input_sizes')}){where}"


def analyze(job: Job) -> list[Event]:
    entries = job.by_kind.get("fr.entry")
    if not entries:
        return []
    dumps: dict[int, Event] = {}
    for i in job.by_kind.get("fr.dump", ()):
        ev = job.events[i]
        if ev.rank is not None:
            dumps[ev.rank] = ev
    # (pg name) -> rank -> seq -> entry (collectives only)
    groups: dict[str, dict[int, dict[int, Event]]] = {}
    desc: dict[str, str | None] = {}
    for i in entries:
        ev = job.events[i]
        f = ev.fields
        if ev.rank is None or f.get("is_p2p"):
            continue
        seq = as_int(f.get("collective_seq_id"))
        if seq is None or seq <= 0:
            continue
        key = str(f.get("pg_name") if f.get("pg_name") is not None else f.get("pg_id"))
        desc.setdefault(key, f.get("pg_desc"))
        groups.setdefault(key, {}).setdefault(ev.rank, {})[seq] = ev
    out: list[Event] = []
    for key, per_rank in sorted(groups.items()):
        pg_desc = desc.get(key)
        label = f"process group {key} ({pg_desc})" if pg_desc and pg_desc != key else f"process group {key}"
        members = _members(job, dumps, key, pg_desc)
        if members is None:
            members = job.members() if pg_desc == "default_pg" else sorted(per_rank)
        missing = [r for r in members if r not in dumps]
        if missing and dumps:
            ev0 = next(iter(next(iter(per_rank.values())).values()))
            text = (f"no flight-recorder dump from {ranks_text(missing)} of {label} "
                    f"(dumps from {ranks_text(sorted(dumps))})")
            out.append(synthetic("analysis.missing_ranks", text, [ev0], level="WARN",
                                 on_ranks=missing if len(missing) == 1 else (), ranks=missing, world_size=len(members),
                                 seen=len([r for r in members if r in dumps]), seen_ranks=sorted(dumps),
                                 source="flight_recorder", missing_count=len(missing), candidates=missing))
        found = _mismatches(job, key, label, pg_desc, per_rank)
        found += _not_completed(job, key, label, pg_desc, per_rank, missing)
        if not found:
            found = _late(job, key, label, pg_desc, per_rank)
        out.extend(found)
    return out


LATE_SECONDS = 1.0   # created this much after the first rank's entry counts as late
LATE_SHARE = 0.6     # late in this share of the collectives every rank recorded: consistently late
WINDOW = 48          # the last collectives every rank recorded that are compared


def _late(job: Job, key: str, label: str, pg_desc: str | None, per_rank: dict[int, dict[int, Event]]) -> list[Event]:
    """A rank that enqueued most collectives last, seconds after the others (``time_created_ns``: when
    the rank's host issued the call), while every rank kept going: a straggler."""
    ranks = sorted(per_rank)
    if len(ranks) < 2:
        return []
    common = sorted(set.intersection(*(set(d) for d in per_rank.values())))
    common = [s for s in common if all(per_rank[r][s].fields.get("created_ns") for r in ranks)][-WINDOW:]
    if len(common) < 3:
        return []
    late_count = {r: 0 for r in ranks}
    lags: dict[int, list[float]] = {r: [] for r in ranks}
    for s in common:
        t = {r: per_rank[r][s].fields["created_ns"] / 1e9 for r in ranks}
        t0, worst = min(t.values()), max(t.values())
        for r, x in t.items():
            lags[r].append(x - t0)
            if x - t0 >= LATE_SECONDS and x == worst:
                late_count[r] += 1
    slow = [r for r in ranks if late_count[r] >= LATE_SHARE * len(common)]
    if not slow or len(slow) * 2 > len(ranks):
        return []
    mean = {r: round(sum(lags[r]) / len(lags[r]), 1) for r in slow}
    detail = (f"{ranks_text(slow)} enqueued {min(late_count[r] for r in slow)} of the {len(common)} collectives of "
              f"{label} that every rank recorded last ("
              + ", ".join(f"rank {r} by {mean[r]:g} s on average" for r in slow) + ", flight recorder)")
    evidence = [per_rank[r][s] for s in common[-2:] for r in ranks]
    return [synthetic("analysis.straggler", f"{ranks_text(slow)} is consistently late: {detail}", evidence, level="WARN",
                      on_ranks=slow, ranks=slow, seq=common[-1], pg=pg_desc or key, pg_id=key, pg_desc=pg_desc,
                      detail=detail, source="flight_recorder", waiting_ranks=[r for r in ranks if r not in slow],
                      lag_seconds=mean, late_count={r: late_count[r] for r in slow}, common_count=len(common))]


def _mismatches(job: Job, key: str, label: str, pg_desc: str | None, per_rank: dict[int, dict[int, Event]]) -> list[Event]:
    out = []
    seqs = sorted({s for d in per_rank.values() for s in d})
    for s in seqs:
        here = {r: d[s] for r, d in per_rank.items() if s in d}
        if len(here) < 2:
            continue
        for aspect, get in (("op_type", lambda f: f.get("op")),
                            ("input_sizes", lambda f: None if f.get("op") in _FREE_INPUT else str(f.get("input_sizes"))),
                            ("output_sizes", lambda f: None if f.get("op") in _FREE_OUTPUT else str(f.get("output_sizes"))),
                            ("dtypes", lambda f: str(sorted(set(f.get("input_dtypes") or []) | set(f.get("output_dtypes") or []))))):
            values: dict[str, list[int]] = {}
            for r, ev in here.items():
                v = get(ev.fields)
                if v is None:
                    continue
                values.setdefault(str(v), []).append(r)
            if len(values) < 2:
                continue
            values = {k: sorted(v) for k, v in sorted(values.items())}
            from .disagreements import _minority

            minority = _minority(values, job)
            evs = [here[r] for r in sorted(here)]
            ties = [t for t in (_last_text_line(job, r) for r in minority) if t is not None]
            parts = "; ".join(f"{ranks_text(rs)}: {v}" for v, rs in values.items())
            stack = "; ".join(f"rank {r} at {here[r].fields.get('user_frame')}" for r in minority
                              if here[r].fields.get("user_frame"))
            text = (f"ranks run different collectives at collective #{s} of {label} ({aspect}, flight recorder): {parts}"
                    + (f" ({stack})" if stack else ""))
            out.append(synthetic("analysis.collective_mismatch", text, evs + ties, level="ERROR", on_ranks=minority,
                                 ranks=sorted(here), pg=pg_desc or key, pg_id=key, pg_desc=pg_desc, seq=s, aspect=aspect,
                                 values=values, minority_ranks=minority, source="flight_recorder"))
            return out  # the first mismatch explains the rest (everything after it is off by then)
    return out


def _state(ev: Event) -> str:
    f = ev.fields
    raw = f.get("raw_state") or f.get("state")
    return f"{raw}, retired" if f.get("retired") and raw != "completed" else str(raw)


def _not_completed(job: Job, key: str, label: str, pg_desc: str | None, per_rank: dict[int, dict[int, Event]],
                   missing: list[int]) -> list[Event]:
    """The first collective that not every rank recorded: the ranks that stopped before it are behind.

    A collective cannot finish before every rank of the group has called it, so a rank whose last
    recorded sequence id is smaller than the others' is the one they wait for (as with NCCL's opCount).
    States are shown as recorded: a Gloo work is ``retired`` when it ended, also with an error, so
    "completed" on one rank does not clear the others."""
    last = {r: max(d) for r, d in per_rank.items() if d}
    if len(last) < 2:
        return []
    top = max(last.values())
    front = sorted(r for r, s in last.items() if s == top)
    behind = sorted(r for r, s in last.items() if s < top)
    if not behind or len(behind) > len(front):
        return []
    first = min(last[r] for r in behind) + 1
    waiting = sorted(r for r, d in per_rank.items() if first in d)
    if not waiting:
        return []
    w_ev = per_rank[waiting[0]][first]
    rows = [f"{ranks_text(waiting)} recorded {_desc(w_ev)} ({_state(w_ev)})"]
    evidence = [per_rank[r][first] for r in waiting]
    for r in behind:
        ev = per_rank[r][last[r]]
        rows.append(f"rank {r} last recorded {_desc(ev)} ({_state(ev)}) and never reached #{first}")
        evidence.append(ev)
    if missing:
        rows.append(f"{ranks_text(missing)} has no dump")
    ties = []
    for r in behind:
        t = _last_text_line(job, r)
        if t is not None:
            ties.append(t)
            rows.append(f"rank {r}'s own log: {t.file}:{t.line}")
    detail = "; ".join(rows)
    op = w_ev.fields.get("op_type")
    text = f"{ranks_text(behind)} never reached collective #{first} {op or ''} of {label} (flight recorder): {detail}"
    return [synthetic("analysis.hung_rank", text, evidence + ties, level="ERROR", on_ranks=behind, ranks=behind,
                      seq=first, op_type=op, pg=pg_desc or key, pg_id=key, pg_desc=pg_desc, waiting_ranks=waiting,
                      table=rows, detail=detail, source="flight_recorder", silent_ranks=[])]
