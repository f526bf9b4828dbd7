"""Progress per rank and per NCCL communicator from NCCL's own collective lines; who is behind.

With ``NCCL_DEBUG=INFO`` and the COLL subsystem every rank prints each collective it launches::

    AllReduce: opCount 1f sendbuff 0x... recvbuff 0x... count 1048576 datatype 7 op 0 root 0 comm 0x55d0c8a0 [nranks=2] stream 0x...

(``%s: opCount %lx ...`` from 2.4, ``AllReduce: opCount ...`` with the name in the format in 2.3), and
from 2.13 a ``NCCL CALL ncclAllReduce(sendbuff,recvbuff,count,datatype,op,root,comm,stream)`` line per
call at TRACE level (no opCount: the calls are counted). The parser reads these lines into events whose
``fields.format`` / ``fields.args`` hold the printf format and its values; this module names the values
from the format, so every release's wording is read the same way.

A comm pointer is private to a process; the communicator it belongs to is named by the ``commId`` hash
of the process's ``Init START/COMPLETE`` lines (or of the ``NCCL CALL ncclCommInitRank(comm, nranks,
commIdHash, rank, dev)`` line), which every rank of the communicator prints alike. Without an init line,
the communicators of a process are told apart by their size and order of first use.

A digest (and ``explain``, which folds as a digest does) keeps a communicator's first and last few
launches of each process whole and folds the rest into one ``nccl.progress`` event
(:func:`logdoc.digest.fold_launches`): its rows are read here as launches, in their place in the whole
sequence, so the folded form gives what every launch gives.

On a communicator where the ranks stopped at different opCounts, the ranks behind (no more of them than
at the front) did not launch the collective the others launched and wait in. With times (NCCL
timestamps, launcher or logger prefixes) a rank that launched most collectives last, seconds after the
others, and kept going is a straggler (``analysis.straggler``); one whose last launch is long before
the end of the job, or that was never late before, is hung (``analysis.hung_rank``). Equal counts give
nothing. The end of the job is the last line of any rank or the time a scheduler stopped it
(``job.stopped``, :mod:`logdoc.stops`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median
from typing import Any

from ..events import Event, field_of
from .common import ranks_text, synthetic
from .job import Job
from .timeline import parse_stamp
from ..stops import stopped_sentence
from ..lazyre import lazy_re

_CONV = lazy_re(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcsp]")
_LABEL = lazy_re(r"(\w+)\W*$")
CALL_ARGS = ("coll", "sendbuff", "recvbuff", "count", "datatype", "op", "root", "comm", "stream")
INIT_CALL_ARGS = ("comm", "nranks", "comm_id", "rank", "dev")
LATE_SECONDS = 1        # a launch this much after the first rank's counts as late
LATE_SHARE = 0.6        # late in this share of the common collectives: consistently late
MIN_COMMON = 3          # collectives every rank launched, needed to judge lateness
WINDOW = 48             # lateness is judged on the last WINDOW of them (the digest keeps the last 64 per comm)
STOPPED_SECONDS = 60    # last launch this long before the end of the job (and 5 usual intervals): stopped


def labels(fmt: str) -> list[str]:
    """Names of a printf format's values: the word before each conversion (``opCount %lx`` -> opCount,
    ``[nranks=%d]`` -> nranks); a leading ``%s:`` is the collective's name (``coll``)."""
    out = []
    pos = 0
    for m in _CONV.finditer(fmt):
        before = fmt[pos:m.start()]
        lab = _LABEL.search(before)
        name = lab.group(1) if lab else ""
        if m.start() == 0 and fmt[m.end():m.end() + 1] == ":":
            name = "coll"
        out.append(name)
        pos = m.end()
    return out


_NAMES: dict[str, tuple[str, ...]] = {}


def launch_of(ev: Event) -> dict[str, Any] | None:
    """The collective an NCCL event launches: ``{coll, op_count (int or None), count, datatype, op, root,
    comm, nranks, via}`` (``op`` and ``root`` as printed, None where the line has none), or None when the
    event is no launch line."""
    f = ev.fields or {}
    fmt = f.get("format")
    args = f.get("args")
    if not isinstance(fmt, str) or not isinstance(args, list):
        return None
    if "opCount %" in fmt and "comm %p" in fmt:
        names = _NAMES.get(fmt) or _NAMES.setdefault(fmt, tuple(labels(fmt)))  # once per format: every launch asks
        if len(names) != len(args):
            return None
        vals = dict(zip(names, args))
        coll = vals.get("coll") or (fmt.split(":", 1)[0].strip() if not fmt.startswith("opCount") else _coll_of(f))
        try:
            op_count = int(str(vals.get("opCount")), 16)
        except ValueError:
            return None
        return {"coll": coll, "op_count": op_count, "op_count_text": str(vals.get("opCount")),
                "count": _int(vals.get("count")), "datatype": _int(vals.get("datatype")), "op": vals.get("op"),
                "root": vals.get("root"), "comm": vals.get("comm"), "nranks": _int(vals.get("nranks")), "via": "coll"}
    if fmt.startswith("nccl%s(") and len(args) == len(CALL_ARGS):
        vals = dict(zip(CALL_ARGS, args))
        return {"coll": vals["coll"], "op_count": None, "op_count_text": None, "count": _int(vals["count"]),
                "datatype": _int(vals["datatype"]), "op": vals["op"], "root": vals["root"], "comm": vals["comm"],
                "nranks": None, "via": "call"}
    return None


def _coll_of(f: dict) -> str:
    """2.3.5 printed no name (``opCount %lx ...``); its call site's file names it (``all_gather.cu``)."""
    m = re.search(r"(\w+)\.cu\b", str(f.get("catalog_location") or ""))
    return "".join(w.capitalize() for w in m.group(1).split("_")) if m else "collective"


def _init_call(ev: Event) -> dict[str, Any] | None:
    f = ev.fields or {}
    fmt, args = f.get("format"), f.get("args")
    if isinstance(fmt, str) and fmt.startswith("ncclCommInitRank(") and isinstance(args, list) \
            and len(args) == len(INIT_CALL_ARGS):
        return dict(zip(INIT_CALL_ARGS, args))
    return None


def _int(v: Any) -> int | None:
    try:
        return int(str(v))
    except (TypeError, ValueError):
        return None


def _norm_ptr(p: Any) -> str:
    s = str(p or "").lower()
    return s[2:] if s.startswith("0x") else s


def _norm_id(p: Any) -> str:
    s = _norm_ptr(p).lstrip("0")
    return "0x" + (s or "0")


@dataclass(frozen=True, slots=True)
class FoldedLaunch:
    """A launch a digest folded into a ``nccl.progress`` event: its line, no event (evidence: the report cites its line)."""
    progress: Event
    line: int
    time = None
    file = property(lambda self: self.progress.file)
    rank = property(lambda self: self.progress.rank)
    host = property(lambda self: self.progress.host)
    attempt = property(lambda self: self.progress.attempt)


def _folded(job: Job) -> dict[tuple, tuple[tuple[Event, int, int], list[tuple[int, int | None, dict]]]]:
    """The folded launches of every process and comm: ``{(process, comm): ((progress event, ordinal of the first
    row, launches), [(line, second, launch), ...])}``, a launch as :func:`launch_of` gives it; two streams of
    one process on one comm (its lines told two ranks apart) as one, as on every line."""
    out: dict[tuple, tuple[tuple[Event, int, int], list]] = {}
    clock = job.timeline.clock
    for i in job.by_kind.get("nccl.progress", ()):
        ev = job.events[i]
        f = ev.fields
        rows = []
        for row in f.get("tail") or ():
            try:  # [line, time, coll, opCount, count, datatype, op, root]; digests before op and root: 6 values
                line, stamp, coll, oc, count, dtype, op, root = row if len(row) == 8 else (*row, None, None)
                op_count = int(str(oc), 16) if oc is not None else None
            except (TypeError, ValueError):
                continue
            st = parse_stamp(stamp) if stamp else None
            rows.append((int(line), clock.seconds(st) if st is not None else None,
                         {"coll": coll, "op_count": op_count, "op_count_text": oc, "count": count, "datatype": dtype,
                          "op": op, "root": root, "comm": f.get("comm"), "nranks": f.get("nranks"),
                          "via": f.get("via") or "coll"}))
        if rows and f.get("comm"):
            rows.sort(key=lambda r: r[0])
            pc = (_proc(ev), _norm_ptr(f["comm"]))
            have = out.get(pc)
            count = int(f.get("count") or len(rows))
            # opCount lines over CALL lines of the same calls, as for whole launches
            if have is None or (have[1][0][2]["via"] == "call" and rows[0][2]["via"] == "coll"):
                out[pc] = ((ev, int(f.get("start") or 0), count), rows)
            elif have[1][0][2]["via"] == rows[0][2]["via"]:
                (prog, _, n), kept = have
                rows = sorted(kept + rows, key=lambda r: r[0])
                n += count
                out[pc] = ((ev if ev.line > prog.line else prog, n - len(rows), n), rows)
    return out


class _Member:
    __slots__ = ("who", "comm_rank", "launches", "order", "via", "host", "total")

    def __init__(self, who: int, comm_rank: int | None, via: str, host: str | None) -> None:
        self.total = 0  # launch lines read, the folded ones included
        self.who = who
        self.comm_rank = comm_rank
        self.launches: dict[int, tuple[dict, Event, int | None]] = {}  # op index -> (launch, event, seconds)
        self.order: list[int] = []
        self.via = via
        self.host = host

    @property
    def last(self) -> int:
        return max(self.order) if self.order else -1


def _proc(ev: Event) -> tuple:
    if ev.pid is not None:
        return ev.file, ev.host, ev.pid
    if ev.host:  # a masked pid (X letters): the GPU of the line's header, and the name a prefix gave, tell them apart
        return ev.file, ev.host, None, ev.process, field_of(ev, "dev")
    return ev.file, None, None, ev.rank


def collect(job: Job, every: bool = False) -> dict[str, dict[str, Any]]:
    """Communicators and their members' launches: ``{comm key: {"label", "comm_id", "nranks", "members":
    {member: _Member}, "by_global_rank": bool, "procs": [(process, comm ptr, comm rank, [(launch, event or
    folded row)])]}}``; those of two members or more, or ``every`` one (computed once per job)."""
    comms = job.cache.get("nccl_comms")
    if comms is None:
        comms = job.cache["nccl_comms"] = _gather(job)
    return comms if every else {k: v for k, v in comms.items() if len(v["members"]) >= 2}


def _gather(job: Job) -> dict[str, dict[str, Any]]:
    events = job.events
    ids: dict[tuple, dict[str, Any]] = {}  # (process, comm ptr) -> {comm_id, rank, nranks}
    launches: list[tuple[tuple, str, dict, Event]] = []
    for kind in ("nccl.comm_init", "nccl.comm_info"):
        for i in job.by_kind.get(kind, ()):
            ev = events[i]
            f = ev.fields
            if not f.get("comm"):
                continue
            rec = ids.setdefault((_proc(ev), _norm_ptr(f["comm"])), {})
            if f.get("comm_id"):
                rec["comm_id"] = _norm_id(f["comm_id"])
            for k in ("rank", "nranks"):
                if _int(f.get(k)) is not None:
                    rec.setdefault(k, _int(f.get(k)))
    for kind in ("nccl.info", "nccl.call", "nccl.trace_level"):
        for i in job.by_kind.get(kind, ()):
            ev = events[i]
            init = _init_call(ev) if kind != "nccl.info" else None
            if init is not None:
                rec = ids.setdefault((_proc(ev), _norm_ptr(init["comm"])), {})
                rec.setdefault("comm_id", _norm_id(init["comm_id"]))
                for k in ("rank", "nranks"):
                    if _int(init.get(k)) is not None:
                        rec.setdefault(k, _int(init[k]))
                continue
            la = launch_of(ev)
            if la is not None and la.get("comm"):
                launches.append((_proc(ev), _norm_ptr(la["comm"]), la, ev))
    folded = _folded(job)
    if not launches and not folded:
        return {}
    # a process/comm with opCount lines ignores its CALL lines (the same calls, counted)
    has_coll = {(p, c) for p, c, la, _ in launches if la["via"] == "coll"}
    has_coll |= {pc for pc, (_, rows) in folded.items() if any(la["via"] == "coll" for _, _, la in rows)}
    per_pc: dict[tuple, list[tuple[dict, Event]]] = {}
    for p, c, la, ev in launches:
        if la["via"] == "call" and (p, c) in has_coll:
            continue
        per_pc.setdefault((p, c), []).append((la, ev))
    # launches a digest folded (logdoc/digest.py, nccl.progress): its rows, with the launches it kept
    # whole at their lines; every launch has its place in the whole sequence (``counts``, ``ordinal``)
    ordinal: dict[int, int] = {}   # id(event) -> its place among its process's launches on the comm
    counts: dict[tuple, int] = {}
    seconds: dict[int, int | None] = {}
    for pc, ((prog, start, count), rows) in folded.items():
        whole = {ev.line: (la, ev) for la, ev in per_pc.get(pc, ())}
        first = per_pc.get(pc, [])[:1]
        items = []
        for j, (line, sec, la) in enumerate(rows):
            hit = whole.get(line)
            if hit is not None:
                items.append(hit)
                ordinal[id(hit[1])] = start + j
            else:
                stand_in = FoldedLaunch(prog, line)
                items.append((la, stand_in))
                ordinal[id(stand_in)] = start + j
                seconds[id(stand_in)] = sec
        if first and first[0][1].line < (rows[0][0] if rows else 1 << 62):
            items.insert(0, first[0])
            ordinal[id(first[0][1])] = 0
        per_pc[pc] = items
        counts[pc] = count or len(items)
    # communicator key of each (process, comm)
    unnamed_order: dict[tuple, list[str]] = {}
    for (p, c), items in per_pc.items():
        if "comm_id" not in ids.get((p, c), {}):
            unnamed_order.setdefault(p, []).append(c)
    def size_of(pc: tuple) -> int | None:
        return ids.get(pc, {}).get("nranks") or next((la["nranks"] for la, _ in per_pc[pc] if la["nranks"]), None)

    nranks_of = {pc: size_of(pc) for pc in per_pc}
    # an unnamed communicator's place among the process's unnamed ones of its size, by first launch
    # (computed once per process: a log with many communicators stays linear)
    place: dict[tuple, int] = {}
    for p, cs in unnamed_order.items():
        seen_sizes: dict[int | None, int] = {}
        for cc in sorted(cs, key=lambda cc: job.timeline.key(per_pc[(p, cc)][0][1])):
            size = nranks_of[(p, cc)]
            place[(p, cc)] = seen_sizes.get(size, 0)
            seen_sizes[size] = place[(p, cc)] + 1
    comms: dict[str, dict[str, Any]] = {}
    for (p, c), items in sorted(per_pc.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        info = ids.get((p, c), {})
        nranks = nranks_of[(p, c)]
        if "comm_id" in info:
            key = "id:" + info["comm_id"]
            label = f"NCCL communicator {info['comm_id']}"
        else:
            k = place.get((p, c), 0)
            key = f"size:{nranks}#{k}"
            label = f"the NCCL communicator of {nranks} ranks" if k == 0 else f"NCCL communicator #{k + 1} of {nranks} ranks"
        comm = comms.setdefault(key, {"label": label, "comm_id": info.get("comm_id"), "nranks": nranks, "members": {},
                                      "procs": []})
        comm["procs"].append((p, c, info.get("rank"), items))
    for comm in comms.values():
        by_global = all(items[0][1].rank is not None for _, _, _, items in comm["procs"])
        comm["by_global_rank"] = by_global
        for p, c, crank, items in comm["procs"]:
            first = items[0][1]
            who = first.rank if by_global else crank
            if who is None:
                continue
            m = comm["members"].get(who)
            if m is None:
                m = comm["members"][who] = _Member(who, crank, items[0][0]["via"], first.host)
            m.total += counts.get((p, c), len(items))
            n = 0
            for la, ev in items:
                n = ordinal.get(id(ev), n)
                idx = la["op_count"] if la["op_count"] is not None else n
                n += 1
                if idx in m.launches and la["op_count"] is not None:
                    continue  # a group's several ops under one opCount: the first names it
                sec = seconds[id(ev)] if id(ev) in seconds else job.timeline.seconds(ev)
                m.launches[idx] = (la, ev if not isinstance(ev, FoldedLaunch) else None, sec)
                m.order.append(idx)
    return comms


def _end_of_job(job: Job) -> tuple[int | None, Event | None]:
    """The latest second of the job: a scheduler's stop time, else the last stamped line of any rank."""
    tl = job.timeline
    stop_ev = None
    best = None
    stops = list(job.by_kind.get("job.stopped", ()))
    stops += [i for i in job.by_kind.get("torchrun.signal", ()) if "death signal" in job.events[i].text]
    for i in stops:
        ev = job.events[i]
        s = tl.seconds(ev)
        if s is None:
            st = parse_stamp(ev.fields.get("stop_time"))
            s = tl.clock.seconds(st) if st is not None else None
        stop_ev = stop_ev or ev
        if s is not None and (best is None or s > best):
            best, stop_ev = s, ev
    _, hi = tl.span()
    end = max(x for x in (best, hi) if x is not None) if (best is not None or hi is not None) else None
    return end, stop_ev


def _desc(la: dict) -> str:
    what = la["coll"]
    if la["op_count_text"] is not None:
        what += f" opCount {la['op_count_text']}"
    extra = []
    if la.get("count") is not None:
        extra.append(f"count {la['count']}")
    if la.get("datatype") is not None:
        extra.append(f"datatype {la['datatype']}")
    return what + (f" ({', '.join(extra)})" if extra else "")


def _who(comm: dict, rs) -> str:
    if comm["by_global_rank"]:
        return ranks_text(rs)
    return "comm " + ranks_text(rs)


def analyze(job: Job) -> list[Event]:
    comms = collect(job)
    if not comms:
        return []
    end, stop_ev = _end_of_job(job)
    out: list[Event] = []
    for key, comm in sorted(comms.items()):
        members: dict[int, _Member] = comm["members"]
        top = max(m.last for m in members.values())
        front = sorted(r for r, m in members.items() if m.last == top)
        behind = sorted(r for r, m in members.items() if m.last < top)
        if not behind or len(behind) > len(front):
            continue
        if any(job.errors_by_rank.get(r) for r in behind) and comm["by_global_rank"]:
            continue  # a rank behind that printed an error crashed or failed: its own error says why
        via = members[front[0]].via
        top_la = members[front[0]].launches[top][0]
        # per-rank rows: the last collective each side reached
        rows: dict[str, list[int]] = {}
        for r in front:
            rows.setdefault(f"launched {_desc(top_la)} and waits in it", []).append(r)
        for r in behind:
            m = members[r]
            la = m.launches[m.last][0]
            if via == "call":
                rows.setdefault(f"made {m.last + 1} calls, the last {_desc(la)}", []).append(r)
            else:
                rows.setdefault(f"reached {_desc(la)} and never launched opCount {top_la['op_count_text']}", []).append(r)
        if via == "call":
            front_rows = {f"made {top + 1} calls, the last {_desc(top_la)}": front}
            rows = {**front_rows, **{k: v for k, v in rows.items() if not k.startswith("launched")}}
        table = [f"{_who(comm, rs)} {label}" for label, rs in rows.items()]
        # timing: consistently late, or stopped?
        common = [i for i in sorted(members[front[0]].launches)
                  if all(i in m.launches and m.launches[i][2] is not None for m in members.values())][-WINDOW:]
        late: dict[int, list[float]] = {}
        late_count: dict[int, int] = {r: 0 for r in members}
        for i in common:
            times = {r: m.launches[i][2] for r, m in members.items()}
            t0 = min(times.values())
            worst = max(times.values())
            for r, t in times.items():
                late.setdefault(r, []).append(t - t0)
                if t - t0 >= LATE_SECONDS and t == worst:
                    late_count[r] += 1
        timed = len(common) >= MIN_COMMON
        straggling = [r for r in behind if timed and late_count[r] >= LATE_SHARE * len(common)]
        stopped = []
        gaps: dict[int, int] = {}
        for r in behind:
            m = members[r]
            t_last = m.launches[m.last][2]
            ts = sorted(t for _, _, t in m.launches.values() if t is not None)[-WINDOW:]
            usual = median([b - a for a, b in zip(ts, ts[1:])]) if len(ts) >= 2 else 0
            if end is not None and t_last is not None:
                gaps[r] = end - t_last
                if end - t_last >= max(STOPPED_SECONDS, 5 * usual):
                    stopped.append(r)
        evidence = []
        for r in behind + front:
            m = members[r]
            if m.launches[m.last][1] is not None:
                evidence.append(m.launches[m.last][1])
        for r in straggling:
            m = members[r]
            evidence.extend(m.launches[i][1] for i in common[-3:] if i in m.launches and m.launches[i][1] is not None)
        if stop_ev is not None:
            evidence.append(stop_ev)
        who_front = _who(comm, front)
        hosts = [members[r].host for r in behind if members[r].host]
        base = dict(pg=comm["label"], pg_id=comm["comm_id"] or key, pg_desc=None, comm_id=comm["comm_id"],
                    op_type=top_la["coll"], seq=top, op_count=top_la["op_count_text"],
                    behind_op_count={r: members[r].launches[members[r].last][0]["op_count_text"] for r in behind}, waiting_ranks=front, table=table,
                    source="nccl_" + via, stopped_by=stopped_sentence(stop_ev),
                    stop_reason=(stop_ev.fields.get("reason") or stop_ev.fields.get("signal")) if stop_ev is not None else None)
        ranks_named = comm["by_global_rank"]
        on = behind if ranks_named else []
        if straggling and not stopped:
            mean_lag = {r: round(sum(late[r]) / len(late[r]), 1) for r in straggling}
            lag_txt = ", ".join(f"{_who(comm, [r])} by {mean_lag[r]:g} s on average" for r in straggling)
            n_late = min(late_count[r] for r in straggling)
            detail = (f"{_who(comm, straggling)} launched {n_late} of the {len(common)} collectives that every rank "
                      f"launched on {comm['label']} last ({lag_txt}); " + "; ".join(table))
            out.append(synthetic("analysis.straggler", f"{_who(comm, straggling)} is consistently late: {detail}",
                                 evidence, level="WARN", on_ranks=straggling if ranks_named else [], on_hosts=hosts,
                                 ranks=straggling, detail=detail, lag_seconds=mean_lag,
                                 late_count={r: late_count[r] for r in straggling}, common_count=len(common), **base))
            continue
        if stopped:
            why = (f"its last launch was {max(gaps[r] for r in stopped)} s before the end of the job"
                   if len(stopped) == 1 else f"their last launches were {min(gaps[r] for r in stopped)} s or more "
                                              f"before the end of the job")
            verdict = f"hung: {why}"
        elif timed:
            verdict = "not late before, then stopped launching"
        else:
            verdict = "no timestamps to tell a hang from a slow rank"
        detail = f"{who_front} wait{'s' if len(front) == 1 else ''} in {_desc(top_la)} on {comm['label']}; " + \
                 "; ".join(table[1:] if table and table[0].startswith(who_front) else table) + f" ({verdict})"
        text = f"{_who(comm, behind)} did not launch {top_la['coll']} opCount {top_la['op_count_text']}" \
            if via == "coll" else f"{_who(comm, behind)} made fewer {top_la['coll']} calls"
        out.append(synthetic("analysis.hung_rank", f"{text} on {comm['label']}: {detail}", evidence, level="ERROR",
                             on_ranks=on, on_hosts=hosts, ranks=behind, detail=detail, silent_ranks=[],
                             gap_seconds={r: gaps[r] for r in stopped} or None, **base))
    return out


def progress_table(job: Job) -> list[dict[str, Any]]:
    """Per communicator: each member's last collective (for the anatomy and tests)."""
    out = []
    for key, comm in sorted(collect(job).items()):
        rows = []
        for r, m in sorted(comm["members"].items()):
            la = m.launches[m.last][0]
            rows.append({"member": r, "comm_rank": m.comm_rank, "last": m.last, "collective": _desc(la),
                         "launches": m.total})
        out.append({"comm": comm["label"], "comm_id": comm["comm_id"], "nranks": comm["nranks"],
                    "by_global_rank": comm["by_global_rank"], "rows": rows})
    return out
