"""Ranks that launch different collectives under the same opCount of one NCCL communicator.

With ``NCCL_DEBUG=INFO`` and the COLL subsystem every rank prints each collective it launches
(``Broadcast: opCount 0 sendbuff ... count 25503912 datatype 6 op 0 root 0 comm 0x... [nranks=8]``, read by
:func:`logdoc.analysis.collectives.launch_of`; :func:`~logdoc.analysis.collectives.collect` ties each process's
comm pointer to its communicator). Every member of a communicator takes part in each of its collectives, in
the same order, so at one opCount all members launch the same collective with the same count, datatype,
reduction op and root. When they do not (rank 0 broadcasts 25503912 float16 values, the others 53 int64
values), the ranks took different paths through the program: ``analysis.collective_mismatch`` with
``source: nccl_launch``, ``aspect`` the values that differ, and the launch lines as evidence.

Whole launch lines are compared, and the launches a digest folded into a process's ``nccl.progress`` event
(:mod:`logdoc.digest`; ``logdoc explain`` folds a long run of launches so too) by its rows, which keep the
last :data:`logdoc.digest.TAIL` launches' values (a difference further back than that is not seen); such a
launch's evidence is its line, which the report shows by this finding's words where the line's text was
not kept. Only opCounts that every compared
member launched once (several launches under one opCount are a group, ``ncclGroupStart``), and only
before the first point-to-point launch on the communicator (``Send``/``Recv`` differ between ranks by
design, and a rank that takes no part in them counts its opCounts differently from then on). A
communicator known only by its size and order of first use (no ``commId`` from an init line) is compared
only when it has no more processes than ranks: two groups of one size (tensor- and data-parallel) would
otherwise be read as one. The first opCount that differs is reported; what follows it is off by then.
"""
from __future__ import annotations

from typing import Any

from ..events import Event
from .collectives import FoldedLaunch, collect
from .common import ranks_text, synthetic
from .job import Job

P2P = frozenset(("Send", "Recv", "SendRecv"))
ROOTED = frozenset(("Broadcast", "Reduce", "Gather", "Scatter"))
REDUCING = frozenset(("AllReduce", "Reduce", "ReduceScatter"))
# ncclDataType_t and ncclRedOp_t (https://github.com/NVIDIA/nccl/blob/master/src/nccl.h.in)
DATATYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bfloat16",
             "float8e4m3", "float8e5m2")
OPS = ("sum", "prod", "max", "min", "avg")
MAX_EVIDENCE = 8  # launch lines kept per group of alike members


def _name(table: tuple[str, ...], v: Any) -> str:
    try:
        i = int(str(v))
    except (TypeError, ValueError):
        return str(v)
    return f"{i} ({table[i]})" if 0 <= i < len(table) else str(i)


def _member_of(comm: dict[str, Any]) -> dict[int, Any]:
    """Each process's member name: its global rank, else its comm rank, else the process."""
    procs = comm["procs"]
    if comm["by_global_rank"]:
        return {j: items[0][1].rank for j, (_, _, _, items) in enumerate(procs)}
    if all(crank is not None for _, _, crank, _ in procs):
        return {j: f"comm rank {crank}" for j, (_, _, crank, _) in enumerate(procs)}
    out = {}
    for j, (p, _, _, _) in enumerate(procs):
        file, host, pid = p[0], p[1], p[2]
        if pid is None and len(p) == 5 and (p[3] or p[4] is not None):  # a masked pid (collectives._proc)
            out[j] = p[3] or f"{host} GPU {p[4]}"
            continue
        out[j] = f"{host}:{pid}" if host and pid else (f"pid {pid}" if pid else str(file).rsplit("/", 1)[-1])
    return out


def _first_p2p(prog: Event) -> int | None:
    """The first point-to-point opCount of the launches a ``nccl.progress`` event folded."""
    ocs = []
    for coll, o in ((prog.fields or {}).get("ops") or {}).items():
        if coll in P2P:
            try:
                ocs.append(int(str(o.get("first_op_count")), 16))
            except (AttributeError, ValueError):
                continue
    return min(ocs, default=None)


def _launches(items: list) -> tuple[dict[int, tuple[dict, Any]], int | None]:
    """A process's launches by opCount (those launched once; a launch a digest folded stands as its
    :class:`~logdoc.analysis.collectives.FoldedLaunch`), and its first point-to-point opCount."""
    seen: dict[int, list] = {}
    first_p2p = None
    progress: dict[int, Event] = {}
    for la, ev in items:
        if isinstance(ev, FoldedLaunch):
            progress[id(ev.progress)] = ev.progress
        oc = la.get("op_count")
        if la.get("via") != "coll" or oc is None:
            continue
        if la.get("coll") in P2P and (first_p2p is None or oc < first_p2p):
            first_p2p = oc
        seen.setdefault(oc, []).append((la, ev))
    for prog in progress.values():
        oc = _first_p2p(prog)
        if oc is not None and (first_p2p is None or oc < first_p2p):
            first_p2p = oc
    whole = {oc: hits[0] for oc, hits in seen.items() if len(hits) == 1}
    return whole, first_p2p


def _aspects(launches: list[tuple[dict, Event]]) -> list[str]:
    colls = {la["coll"] for la, _ in launches}
    if len(colls) > 1:
        return ["op_type"]
    coll = next(iter(colls))
    out = [a for a in ("count", "datatype") if len({la.get(a) for la, _ in launches}) > 1]
    for a, applies in (("op", REDUCING), ("root", ROOTED)):
        if coll in applies and len({la.get(a) for la, _ in launches}) > 1:
            out.append(a)
    return out


def _value(la: dict, aspects: list[str]) -> str:
    if aspects == ["op_type"]:
        return str(la["coll"])
    parts = []
    for a in aspects:
        v = la.get(a)
        parts.append(f"{a} {_name(DATATYPES, v) if a == 'datatype' else _name(OPS, v) if a == 'op' else v}")
    return f"{la['coll']} ({', '.join(parts)})"


def _who(ws: list) -> str:
    ints = [w for w in ws if isinstance(w, int)]
    return ranks_text(ints) if len(ints) == len(ws) else ", ".join(str(w) for w in ws)


def analyze(job: Job) -> list[Event]:
    from .disagreements import _minority

    out: list[Event] = []
    for key, comm in sorted(collect(job, every=True).items()):
        procs = comm["procs"]
        if len(procs) < 2:
            continue
        if comm["comm_id"] is None and (comm["nranks"] is None or len(procs) > comm["nranks"]):
            continue  # several communicators of one size, or none known: not one group
        names = _member_of(comm)
        per: dict[Any, dict[int, tuple[dict, Event]]] = {}
        stop = None
        for j, (_, _, _, items) in enumerate(procs):
            if names[j] is None or names[j] in per:
                continue  # the same member twice (a restarted process): its first run
            per[names[j]], p2p = _launches(items)
            if p2p is not None and (stop is None or p2p < stop):
                stop = p2p
        if len(per) < 2:
            continue
        shared = sorted({oc for d in per.values() for oc in d if stop is None or oc < stop})
        for oc in shared:
            here = {w: d[oc] for w, d in per.items() if oc in d}
            if len(here) < 2:
                continue
            launches = list(here.values())
            aspects = _aspects(launches)
            if not aspects:
                continue
            values: dict[str, list] = {}
            lines: dict[str, list[Event]] = {}
            for w, (la, ev) in here.items():
                v = _value(la, aspects)
                values.setdefault(v, []).append(w)
                lines.setdefault(v, []).append(ev)
            order = sorted(values, key=lambda v: (-len(values[v]), v))
            values = {v: sorted(values[v], key=str) if not comm["by_global_rank"] else sorted(values[v]) for v in order}
            minority = _minority(values, job)
            members = sorted(here, key=lambda w: (isinstance(w, str), w if isinstance(w, int) else 0, str(w)))
            aspect = ", ".join(aspects)
            text = (f"ranks launch different collectives at opCount {launches[0][0]['op_count_text']} of {comm['label']} "
                    f"({aspect}): " + "; ".join(f"{_who(ws)}: {v}" for v, ws in values.items()))
            odd = [v for v in order if set(values[v]) <= set(minority)]  # the odd group's lines first
            evidence = [ev for v in odd + [v for v in order if v not in odd] for ev in lines[v][:MAX_EVIDENCE]]
            on = [w for w in minority if isinstance(w, int)] if comm["by_global_rank"] else []
            out.append(synthetic("analysis.collective_mismatch", text, evidence, level="ERROR", on_ranks=on,
                                 ranks=members, pg=comm["label"], pg_id=comm["comm_id"] or key, pg_desc=None,
                                 seq=oc, op_count=launches[0][0]["op_count_text"], aspect=aspect, values=values,
                                 minority_ranks=minority, minority=_who(minority) if minority else None,
                                 source="nccl_launch"))
            break  # the first opCount that differs explains the rest
    return out
