"""Sampled stacks of a stuck job (``py-spy dump`` of each rank): which collective each process is blocked in.

A rank's dump names, in its innermost torch.distributed frame (``stack.collective`` events of
:func:`logdoc.classify.neighbours.classify_stack_frame`), the collective it waits in. When the dumps of two or
more processes show different collectives (one rank in ``all_reduce``, the others in ``broadcast``),
the ranks took different paths through the program: ``analysis.collective_mismatch`` with
``source: py-spy``. Point-to-point calls (``send``/``recv`` and their batched forms) differ between
ranks by design and never count; nor do dumps of one process only.
"""
from __future__ import annotations

from ..events import Event
from .common import synthetic
from .job import Job

POINT_TO_POINT = frozenset(("send", "recv", "isend", "irecv", "batch_isend_irecv", "P2POp", "send_object_list",
                            "recv_object_list"))
MAX_PROCESSES = 4096


def analyze(job: Job) -> list[Event]:
    idx = job.by_kind.get("stack.collective", ())
    if len(idx) < 2:
        return []
    first: dict[tuple, Event] = {}  # process -> its innermost collective frame (the first in its file)
    for i in idx:
        ev = job.events[i]
        key = (ev.file, ev.rank, ev.host, ev.pid)
        if key not in first and len(first) < MAX_PROCESSES:
            first[key] = ev
    if len(first) < 2:
        return []
    by_op: dict[str, list[Event]] = {}
    for ev in first.values():
        by_op.setdefault(str(ev.fields.get("function")), []).append(ev)
    if len(by_op) < 2 or POINT_TO_POINT & set(by_op):
        return []

    def who(evs: list[Event]) -> list:
        ranks = sorted({e.rank for e in evs if e.rank is not None})
        return ranks if len(ranks) == len({(e.file, e.rank, e.host, e.pid) for e in evs}) else sorted({e.file for e in evs})

    values = {op: who(evs) for op, evs in sorted(by_op.items(), key=lambda kv: (-len(kv[1]), kv[0]))}
    ordered = sorted(by_op.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    tie = len(ordered[0][1]) == len(ordered[1][1])  # no majority: no side is the odd one out
    minority_evs = [] if tie else [e for _, evs in ordered[1:] for e in evs]
    minority = sorted({e.rank for e in minority_evs if e.rank is not None})
    ranks = sorted({e.rank for e in first.values() if e.rank is not None})
    parts = []
    for op, evs in ordered:
        w = who(evs)
        label = ", ".join(str(x) for x in w)
        parts.append(f"{'rank' + ('s' if len(w) > 1 else '') if all(isinstance(x, int) for x in w) else 'the dump in'} "
                     f"{label} in {op}")
    text = "py-spy stacks: " + "; ".join(parts)
    evidence = [evs[0] for _, evs in ordered]
    return [synthetic("analysis.collective_mismatch", text, evidence, level="ERROR", on_ranks=minority,
                      aspect="op_type", values=values, ranks=ranks, minority_ranks=minority, source="py-spy")]
