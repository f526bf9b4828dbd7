"""Who did not arrive: hung ranks from SeqNum progress, monitored barriers, desync reports, Gloo
timeouts; collectives that differ at the same SeqNum; missing and silent ranks.

Per process group, every rank's progress is read from
``Watchdog caught collective operation timeout: WorkNCCL(SeqNum=S, OpType=OP, ...)`` (waits in S),
``failure detected by watchdog at work sequence id: S PG status: last enqueued work: E, last completed
work: C`` and ``Last enqueued NCCL work: E, last completed NCCL work: C`` (flight recorder / periodic
updates). The sequence most waiting ranks are stuck in is the group's stuck SeqNum; a rank that
enqueued less than it (or is stuck in an earlier one) is the hung rank; when every rank that printed
anything waits, the members that printed no timeout are named instead.

One module, over 500 lines: every finding answers the same question (which member of a group did not
arrive) from the same per-group tables of members, SeqNums and quiet ranks, and later findings are decided on
earlier ones (Gloo timeouts and peer exits only without a hung rank; missing logs leave out ranks already named).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..events import Event
from .common import is_agent, as_int, ranks_text, synthetic
from .job import MAX_RANKS, WORK_KINDS, Job, is_error
from ..lazyre import lazy_re

_BARRIER = lazy_re(r"Ranks? ([\d,\s]+?) failed to pass monitoredBarrier in (\d+) ms")
_REACHED = lazy_re(r"Rank (\d+) successfully reached monitoredBarrier")
_LAGGING = lazy_re(r"ranks \[([\d,\s]*)\] are the lagging ranks")
_JOINED_NOT_FINISHED = lazy_re(r"\[([\d,\s]*)\] joined but didn't finish collective #(\d+)")
_FINISHED_NOT_JOINED = lazy_re(r"\[([\d,\s]*)\] finished collective #(\d+), but didn't join collective #(\d+)")
_GLOO_TIMEOUT = lazy_re(r"Timed out waiting (\d+)ms for (recv|send) operation")
_CLIENTS = lazy_re(r"(\d+)/(\d+) clients joined")
P2P_OPS = {"SEND", "RECV", "RECVANYSOURCE"}
NUMEL_OPS = {"ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "REDUCE_SCATTER",
             "_REDUCE_SCATTER_BASE", "ALLREDUCE_COALESCED"}
SILENT_GAP = 60  # seconds


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


class _Rec:
    __slots__ = ("waits", "failed", "enq", "comp", "evs")

    def __init__(self) -> None:
        self.waits: dict[int, str | None] = {}   # seq -> op type (timeouts)
        self.failed: dict[int, str | None] = {}  # seq -> op type (async errors, failures)
        self.enq: int | None = None
        self.comp: int | None = None
        self.evs: list[Event] = []


def analyze(job: Job) -> tuple[list[Event], dict[str, Any]]:
    """Synthetic events, and the per-group progress tables (for the anatomy)."""
    out: list[Event] = []
    tables: dict[str, Any] = {}
    hung, tables = _seqnum(job)
    out.extend(hung)
    barrier = _barrier(job)
    out.extend(barrier)
    out.extend(_desync(job))
    out.extend(_busy(job))
    if not barrier and not any(e.kind == "analysis.hung_rank" for e in hung):
        out.extend(_gloo_timeouts(job))
    if not any(e.kind == "analysis.hung_rank" for e in out):
        out.extend(_peer_exited(job))
    out.extend(_collective_mismatch(job))
    missing = _clients_joined(job)
    if not missing:
        named = {r for e in out if e.kind in ("analysis.hung_rank", "analysis.peer_exited") for r in e.fields.get("ranks") or ()}
        missing = _missing_logs(job, named)
    out.extend(missing)
    out.extend(_silent(job))
    return out, tables


# -- SeqNum progress per process group ------------------------------------------------------------

def _seqnum(job: Job) -> tuple[list[Event], dict[str, Any]]:
    events = job.events
    recs: dict[str, dict[int, _Rec]] = {}
    timeouts_seen: set[str] = set()
    for i, key in job.pg_key.items():
        ev = events[i]
        if ev.rank is None:
            continue
        kind = ev.kind
        seq = as_int(ev.fields.get("seq"))
        op = ev.fields.get("op_type")
        prog = job.progress_of(i)
        if seq is None and prog is None:
            continue
        rec = recs.setdefault(key, {}).setdefault(ev.rank, _Rec())
        if kind == "torch.watchdog_timeout" and seq is not None:
            rec.waits[seq] = op or rec.waits.get(seq)
            timeouts_seen.add(key)
            rec.evs.append(ev)
        elif kind in WORK_KINDS and seq is not None:
            rec.failed[seq] = op or rec.failed.get(seq)
            rec.evs.append(ev)
        elif kind == "torch.watchdog_failure" and seq is not None:
            rec.failed.setdefault(seq, None)
            rec.evs.append(ev)
        if prog is not None:
            e, c = prog
            rec.enq = e if rec.enq is None else max(rec.enq, e)
            rec.comp = c if rec.comp is None else max(rec.comp, c)
            if ev not in rec.evs:
                rec.evs.append(ev)
    out: list[Event] = []
    tables: dict[str, Any] = {}
    members_all = job.members()
    for key, per_rank in sorted(recs.items()):
        waiting = {r: rec for r, rec in per_rank.items() if rec.waits}
        stuck_pool = waiting or {r: rec for r, rec in per_rank.items() if rec.failed}
        if not stuck_pool:
            continue
        seqs = Counter()
        for rec in stuck_pool.values():
            for s in (rec.waits or rec.failed):
                seqs[s] += 1
        stuck = min(s for s, c in seqs.items() if c == max(seqs.values()))
        ops = Counter(op for rec in stuck_pool.values() for s, op in (rec.waits or rec.failed).items() if s == stuck and op)
        op_type = ops.most_common(1)[0][0] if ops else None
        default = key == "0" or job.pg_desc.get(key) == "default_pg" or len(job.pg_desc) <= 1
        members = members_all if default else sorted(per_rank)
        rows: list[tuple[str, list[int]]] = []
        groups: dict[str, list[int]] = {}
        culprits: set[int] = set()
        behind: set[int] = set()
        silent: list[int] = []
        op_s = f" {op_type}" if op_type else ""
        for r in members:
            rec = per_rank.get(r)
            if rec is None:
                silent.append(r)
                continue
            mine = rec.waits or rec.failed
            if stuck in mine:
                what = "wait in" if stuck in rec.waits else "failed in"
                groups.setdefault(f"{what} SeqNum {stuck}{op_s}", []).append(r)
                continue
            if rec.enq is not None and rec.enq < stuck:
                c = rec.comp if rec.comp is not None else rec.enq
                if c >= rec.enq:
                    groups.setdefault(f"completed {c} and never enqueued {stuck}", []).append(r)
                else:
                    groups.setdefault(f"enqueued {rec.enq}, completed {c} and never enqueued {stuck}", []).append(r)
                culprits.add(r)
                continue
            lower = [s for s in mine if s < stuck]
            if lower:
                s = min(lower)
                groups.setdefault(f"{'wait' if s in rec.waits else 'failed'} in SeqNum {s}{_op(mine.get(s))}", []).append(r)
                behind.add(r)
                continue
            if rec.comp is not None and rec.comp >= stuck:
                groups.setdefault(f"completed {rec.comp}", []).append(r)
                continue
            higher = [s for s in mine if s > stuck]
            if higher:
                s = min(higher)
                groups.setdefault(f"{'wait' if s in rec.waits else 'failed'} in SeqNum {s}{_op(mine.get(s))}", []).append(r)
                continue
            silent.append(r)
        culprits |= behind
        if silent:
            printed = [r for r in silent if r in job.ranks_seen]
            mute = [r for r in silent if r not in job.ranks_seen]
            if printed:
                groups.setdefault(f"printed no progress for SeqNum {stuck} in this group", []).extend(printed)
            if mute:
                label = "has no relevant output" if all(r in job.ranks_from_files for r in mute) else _no_output(job)
                groups.setdefault(label, []).extend(mute)
            # the members that printed nothing name the hung rank only when nobody failed otherwise in
            # this sequence (a rank with an error explains the wait) and they printed no error at all
            failed_here = any(stuck in rec.failed and stuck not in rec.waits for rec in per_rank.values())
            quiet = _trusted_quiet(job, [r for r in silent if not job.errors_by_rank.get(r)], len(members))
            if not culprits and key in timeouts_seen and not failed_here:
                culprits |= set(quiet)
        for label, rs in groups.items():
            rows.append((label, sorted(rs)))
        rows.sort(key=lambda row: (-len(row[1]), row[1][0]))
        table = [f"{ranks_text(rs)} {_verb(label, rs)}" for label, rs in rows]
        waiting_ranks = sorted(r for r, rec in per_rank.items() if stuck in (rec.waits or rec.failed))
        tables[key] = {
            "pg": key, "pg_desc": job.pg_desc.get(key), "seq": stuck, "op_type": op_type,
            "rows": [{"ranks": rs, "state": label} for label, rs in rows], "table": table,
            "members": members if len(members) <= 4096 else None,
        }
        if not culprits:
            continue
        evidence = [e for r in sorted(per_rank) for e in per_rank[r].evs]
        detail = "; ".join(table)
        label = job.pg_label(key)
        text = (f"{ranks_text(culprits)} did not reach SeqNum {stuck}{op_s} in {label}: {detail}")
        out.append(synthetic(
            "analysis.hung_rank", text, evidence, level="ERROR", on_ranks=culprits,
            on_hosts=[e.host for e in evidence if e.rank in culprits and e.host],
            ranks=sorted(culprits), seq=stuck, op_type=op_type, pg=job.pg_desc.get(key) or key, pg_id=key,
            pg_desc=job.pg_desc.get(key), waiting_ranks=waiting_ranks, table=table, detail=detail,
            source="watchdog", silent_ranks=sorted(silent)))
    return out, tables


def _op(op: str | None) -> str:
    return f" {op}" if op else ""


def _verb(label: str, rs: list[int]) -> str:
    """Rows are written for several ranks ("wait in"); fix the verb for one rank ("waits in")."""
    if len(set(rs)) != 1:
        return label
    for a, b in (("wait in", "waits in"), ("has no", "has no"), ("printed", "printed")):
        if label.startswith(a):
            return b + label[len(a):]
    return label


# -- monitored barrier, desync report, Gloo timeouts ----------------------------------------------

def _barrier(job: Job) -> list[Event]:
    failed: dict[tuple, set] = {}
    evidence: dict[tuple, list[Event]] = {}
    reached: set[int] = set()
    reporters: set[int] = set()
    for ev in job.events:
        if not ev.kind.startswith(("torch.", "gloo.")):
            continue
        text = ev.text
        if "monitoredBarrier" not in text:
            continue
        for m in _REACHED.finditer(text):
            reached.add(int(m.group(1)))
        fr = ev.fields.get("failed_ranks")
        ranks = [as_int(x) for x in fr] if isinstance(fr, list) else None
        timeout = as_int(ev.fields.get("timeout_ms"))
        if ranks is None:
            m = _BARRIER.search(text)
            if m:
                ranks, timeout = _ints(m.group(1)), int(m.group(2))
        if ranks:
            key = (timeout,)
            failed.setdefault(key, set()).update(r for r in ranks if r is not None)
            evidence.setdefault(key, []).append(ev)
            if ev.rank is not None:
                reporters.add(ev.rank)
    out = []
    for key, ranks in failed.items():
        waiting = sorted((reached | reporters) - ranks)
        table = []
        if waiting:
            table.append(f"{ranks_text(waiting)} reached the monitored barrier")
        table.append(f"{ranks_text(ranks)} did not pass it within {key[0]} ms" if key[0] else
                     f"{ranks_text(ranks)} did not pass it")
        detail = "; ".join(table)
        out.append(synthetic("analysis.hung_rank", f"{ranks_text(ranks)} did not reach the monitored barrier: {detail}",
                             evidence[key], level="ERROR", on_ranks=ranks, ranks=sorted(ranks), seq=None, op_type="BARRIER",
                             pg=None, waiting_ranks=waiting, table=table, detail=detail, source="monitored_barrier",
                             timeout_ms=key[0]))
    return out


def _desync(job: Job) -> list[Event]:
    out = []
    hung: dict[Any, set] = {}
    straggle: dict[int, set] = {}
    ev_h: dict[Any, list[Event]] = {}
    ev_s: dict[int, list[Event]] = {}
    for i in job.by_kind.get("torch.desync_report", ()):
        ev = job.events[i]
        for m in _LAGGING.finditer(ev.text):
            hung.setdefault(("never", None), set()).update(_ints(m.group(1)))
            ev_h.setdefault(("never", None), []).append(ev)
        for m in _FINISHED_NOT_JOINED.finditer(ev.text):
            k = ("join", int(m.group(3)))
            hung.setdefault(k, set()).update(_ints(m.group(1)))
            ev_h.setdefault(k, []).append(ev)
        for m in _JOINED_NOT_FINISHED.finditer(ev.text):
            s = int(m.group(2))
            straggle.setdefault(s, set()).update(_ints(m.group(1)))
            ev_s.setdefault(s, []).append(ev)
    for (how, seq), ranks in hung.items():
        if not ranks:
            continue
        if how == "never":
            detail = f"{ranks_text(ranks)} never joined any collective (desync report)"
        else:
            detail = f"{ranks_text(ranks)} finished collective #{seq - 1} and never joined #{seq} (desync report)"
        evs = ev_h[(how, seq)]
        out.append(synthetic("analysis.hung_rank", detail, evs, level="ERROR", on_ranks=ranks, ranks=sorted(ranks),
                             seq=seq, op_type=None, pg=_pg_name(job, job.pg_key.get(job.index(evs[0]))),
                             waiting_ranks=[], table=[detail], detail=detail, source="desync_report"))
    for seq, ranks in straggle.items():
        detail = f"{ranks_text(ranks)} joined collective #{seq} but did not finish it (desync report)"
        out.append(synthetic("analysis.straggler", detail, ev_s[seq], level="WARN", on_ranks=ranks, ranks=sorted(ranks),
                             seq=seq, pg=_pg_name(job, job.pg_key.get(job.index(ev_s[seq][0]))), detail=detail, source="desync_report"))
    return out


def _trusted_quiet(job: Job, quiet: list[int], n_members: int) -> list[int]:
    """Quiet ranks that can be named: those with a log (a file or some line) always; those with nothing at
    all in the logs given only when they are few (else the logs are just incomplete)."""
    seen = [r for r in quiet if r in job.ranks_seen or r in job.ranks_from_files]
    unseen = [r for r in quiet if r not in seen]
    if unseen and len(unseen) <= max(1, n_members // 4):
        return quiet
    return seen


def _no_output(job: Job) -> str:
    """What is said of members with no output at all: when the logs hold one rank's output only (a
    paste of one rank), that they were named from that rank's side alone (its wait, its lost peer),
    not from anything they printed."""
    given = job.ranks_seen | job.ranks_from_files
    if len(given) == 1:
        return (f"has no output in these logs (only rank {next(iter(given))}'s output was given: "
                "whether it hung, was slow or died is not shown)")
    return "has no output in these logs"


def _pg_name(job: Job, key: str | None) -> str | None:
    return None if key is None else (job.pg_desc.get(key) or key)


def _gloo_timeouts(job: Job) -> list[Event]:
    """Gloo has no SeqNum: ranks that time out in a collective while a member printed no error."""
    timed: dict[int, list[Event]] = {}
    for kind in ("gloo.error", "gloo.connect_full_mesh", "torch.exception", "torch.terminate"):
        for i in job.by_kind.get(kind, ()):
            ev = job.events[i]
            if ev.rank is not None and _GLOO_TIMEOUT.search(ev.text) and "connectFullMesh" not in ev.text:
                timed.setdefault(ev.rank, []).append(ev)
    if not timed:
        return []
    members = job.members()
    quiet = _trusted_quiet(job, [r for r in members if r not in timed and not job.errors_by_rank.get(r)], len(members))
    if not quiet:
        return _late_in_gloo_collective(job, timed, members)
    if len(quiet) >= len(members):
        return []
    others = [r for r in members if r not in timed and r not in quiet]
    table = [f"{ranks_text(timed)} timed out waiting in a Gloo collective"]
    printed = [r for r in quiet if r in job.ranks_seen or r in job.ranks_from_files]
    mute = [r for r in quiet if r not in printed]
    if printed:
        table.append(f"{ranks_text(printed)} reported no error")
    if mute:
        table.append(f"{ranks_text(mute)} {_no_output(job)}")
    if others:
        table.append(f"{ranks_text(others)} failed otherwise")
    detail = "; ".join(table)
    evidence = [e for r in sorted(timed) for e in timed[r]]
    ev = synthetic("analysis.hung_rank", f"{ranks_text(quiet)} did not reach the collective: {detail}", evidence,
                   level="ERROR", on_ranks=quiet, ranks=sorted(quiet), seq=None, op_type=None, pg=None,
                   waiting_ranks=sorted(timed), table=table, detail=detail, source="gloo_timeout")
    return [ev]


def _late_in_gloo_collective(job: Job, timed: dict[int, list[Event]], members: list[int]) -> list[Event]:
    """Most ranks timed out waiting in a Gloo collective; the few that did not time out reached it later
    and found their pairs already closed ("Connection closed/reset by peer"): they were the slow ones."""
    from .common import is_agent
    from .job import is_error

    errs: dict[int, list[Event]] = {}
    for ev in job.events:
        if ev.rank is not None and ev.rank not in timed and not is_agent(ev) and is_error(ev):
            errs.setdefault(ev.rank, []).append(ev)
    late: dict[int, list[Event]] = {}
    for r in members:
        if r in timed:
            continue
        mine = errs.get(r)
        if not mine:
            return []
        closed = [e for e in mine if _PEER_CLOSED.search(e.text)]
        if len(closed) != len(mine):
            return []  # this rank failed some other way: not merely late
        late[r] = closed
    if not late or len(late) * 2 >= len(members):
        return []
    detail = (f"{ranks_text(timed)} timed out waiting in a Gloo collective; {ranks_text(late)} did not time out "
              f"and found the connection already closed when it got there")
    evidence = [e for r in sorted(late) for e in late[r][:1]]
    return [synthetic("analysis.straggler", f"{ranks_text(late)} reached the collective late: {detail}", evidence,
                      level="ERROR", on_ranks=list(late), ranks=sorted(late), seq=None, pg=None, detail=detail,
                      source="gloo_timeout", waiting_ranks=sorted(timed))]


# -- collectives that differ at the same SeqNum -----------------------------------------------------

def _collective_mismatch(job: Job) -> list[Event]:
    per: dict[tuple, dict[int, tuple]] = {}
    evs: dict[tuple, list[Event]] = {}
    for i, key in job.pg_key.items():
        ev = job.events[i]
        if ev.kind not in WORK_KINDS or ev.rank is None:
            continue
        seq, op = as_int(ev.fields.get("seq")), ev.fields.get("op_type")
        if seq is None or not op:
            continue
        k = (key, seq)
        per.setdefault(k, {})[ev.rank] = (str(op), as_int(ev.fields.get("numel_in")), as_int(ev.fields.get("numel_out")))
        evs.setdefault(k, []).append(ev)
    out = []
    for (key, seq), ranks in sorted(per.items()):
        if len(ranks) < 2:
            continue
        ops = {v[0] for v in ranks.values()}
        if len(ops) > 1 and not ops <= P2P_OPS:
            aspect = "op_type"
            values: dict[str, list[int]] = {}
            for r, v in ranks.items():
                values.setdefault(v[0], []).append(r)
        elif len(ops) == 1 and next(iter(ops)) in NUMEL_OPS and _sizes_differ(ranks.values()):
            aspect = "numel"
            values = {}
            for r, v in ranks.items():
                if v[1] is not None or v[2] is not None:
                    values.setdefault(f"NumelIn={_size(v[1])}, NumelOut={_size(v[2])}", []).append(r)
        else:
            continue
        values = {k: sorted(v) for k, v in sorted(values.items())}
        parts = [f"{ranks_text(rs)}: {val}" for val, rs in values.items()]
        from .disagreements import _minority
        minority = _minority(values, job)
        text = f"ranks run different collectives at SeqNum {seq} of {job.pg_label(key)} ({aspect}): " + "; ".join(parts)
        ev = synthetic("analysis.collective_mismatch", text, evs[(key, seq)], level="ERROR", on_ranks=minority,
                       ranks=sorted(ranks), pg=job.pg_desc.get(key) or key, pg_id=key, pg_desc=job.pg_desc.get(key),
                       seq=seq, aspect=aspect, values=values, minority_ranks=minority, source="watchdog")
        out.append(ev)
    out.extend(_detail_mismatch(job))
    return out


def _sizes_differ(records) -> bool:
    """Two ranks' sizes differ only where both were read: a record cut before NumelIn or NumelOut says nothing."""
    ins = {v[1] for v in records if v[1] is not None}
    outs = {v[2] for v in records if v[2] is not None}
    return len(ins) > 1 or len(outs) > 1


def _size(n: int | None) -> str:
    return "?" if n is None else str(n)


_DETAIL_ASPECT = {"op type": ("op_type", "op_type"), "shapes": ("shape", "shape"), "dtypes": ("dtype", "dtype"),
                  "sequence number": ("seq", "seq"), "devices": ("device", "devices")}


def _detail_mismatch(job: Job) -> list[Event]:
    """TORCH_DISTRIBUTED_DEBUG=DETAIL reports pairs (this rank vs another); together they name the odd rank."""
    per: dict[tuple, dict[int, str]] = {}
    evs: dict[tuple, list[Event]] = {}
    for i in job.by_kind.get("torch.collective_mismatch", ()):
        ev = job.events[i]
        f = ev.fields
        seq = as_int(f.get("seq"))
        me, other = as_int(f.get("rank")), as_int(f.get("other_rank"))
        if me is None:
            me = ev.rank
        for aspect in f.get("differs") or ():
            name, field_ = _DETAIL_ASPECT.get(str(aspect), (str(aspect), None))
            if field_ is None:
                continue
            k = (job.pg_key.get(i), seq, name)
            vals = per.setdefault(k, {})
            mine, theirs = f.get(field_), f.get("other_" + field_)
            if me is not None and mine is not None:
                vals.setdefault(me, str(mine))
            if other is not None and theirs is not None:
                vals.setdefault(other, str(theirs))
            evs.setdefault(k, []).append(ev)
    out = []
    for (key, seq, name), vals in sorted(per.items(), key=lambda kv: str(kv[0])):
        values: dict[str, list[int]] = {}
        for r, v in vals.items():
            values.setdefault(v, []).append(r)
        if len(values) < 2:
            continue
        values = {v: sorted(rs) for v, rs in sorted(values.items())}
        from .disagreements import _minority
        minority = _minority(values, job)
        parts = "; ".join(f"{ranks_text(rs)}: {v}" for v, rs in values.items())
        label = job.pg_label(key) if key is not None else "the process group"
        text = f"ranks run different collectives at SeqNum {seq} of {label} ({name}, DETAIL report): {parts}"
        out.append(synthetic("analysis.collective_mismatch", text, evs[(key, seq, name)], level="ERROR",
                             on_ranks=minority, ranks=sorted(vals), pg=_pg_name(job, key), pg_id=key,
                             pg_desc=job.pg_desc.get(key) if key else None, seq=seq, aspect=name, values=values,
                             minority_ranks=minority, source="detail"))
    return out


# -- rendezvous: k/n clients joined --------------------------------------------------------------

_BARRIER_JOINED = lazy_re(r"world_size=(\d+), (?:num_workers_joined|worker_count)=(\d+)")


def _barrier_waits(job: Job) -> list[tuple[Event, set[int]]]:
    """The store-based barrier's last status line of each key still waiting when the log ends, with the
    ranks that printed one (each adds itself to the count before it waits). Not a key whose barrier timed
    out (that line is read instead), nor one a later ``Completed store-based barrier`` line closed."""
    last: dict[str, tuple[int, Event]] = {}
    waiting: dict[str, set[int]] = {}
    for i in job.by_kind.get("store.barrier_wait", ()):
        ev = job.events[i]
        key = str(ev.fields.get("store_key") or "")
        last[key] = (i, ev)
        r = as_int(ev.fields.get("rank"))
        if r is not None:
            waiting.setdefault(key, set()).add(r)
    if not last:
        return []
    closed: dict[str, list[Event]] = {}
    for kind in ("store.barrier_timeout", "store.info"):
        for i in job.by_kind.get(kind, ()):
            ev = job.events[i]
            key = ev.fields.get("store_key")
            if key and (kind == "store.barrier_timeout" or "Completed store-based barrier" in ev.text):
                closed.setdefault(str(key), []).append(ev)
    out = []
    for key, (_, ev) in last.items():
        if any(c.kind == "store.barrier_timeout" or c.file != ev.file or c.line > ev.line for c in closed.get(key, ())):
            continue
        out.append((ev, waiting.get(key, set())))
    return out


def _clients_joined(job: Job) -> list[Event]:
    """``k/n clients joined`` (TCPStore), the store-based barrier's count when it timed out
    (``num_workers_joined`` / ``worker_count``) and its count while it still waits at the log's end."""
    out = []
    found = [("store.clients_joined", "clients_joined", job.events[i], None) for i in job.by_kind.get("store.clients_joined", ())]
    found += [("store.barrier_timeout", "store_barrier", job.events[i], None) for i in job.by_kind.get("store.barrier_timeout", ())]
    found += [("store.barrier_wait", "store_barrier", ev, ranks) for ev, ranks in _barrier_waits(job)]
    out.extend(_lightning_members(job))
    for kind, source, ev, arrived in found:
        if kind == "store.clients_joined":
            joined, world = as_int(ev.fields.get("joined")), as_int(ev.fields.get("world_size"))
            m = _CLIENTS.search(ev.text) if joined is None or world is None else None
            if m:
                joined, world = int(m.group(1)), int(m.group(2))
        else:
            joined = as_int(ev.fields.get("num_workers_joined", ev.fields.get("joined")))
            world = as_int(ev.fields.get("world_size"))
            m = _BARRIER_JOINED.search(ev.text) if joined is None or world is None else None
            if m:
                world, joined = int(m.group(1)), int(m.group(2))
        if joined is None or world is None or world - joined <= 0 or world > MAX_RANKS:
            continue
        missing = world - joined
        if arrived and len(arrived) == joined and all(r < world for r in arrived):
            # the ranks that printed the barrier's status line are the ones counted: the others are missing
            seen, unseen = sorted(arrived), [r for r in range(world) if r not in arrived]
            named, whence = unseen, "it printed no such status line"
        else:
            seen = sorted(r for r in job.known_ranks if r < world)
            unseen = [r for r in range(world) if r not in job.known_ranks]
            named, whence = (unseen if len(unseen) == missing else []), "no output from it in these logs"
        what = "clients joined the store" if source == "clients_joined" else "ranks reached the store-based barrier"
        if named:
            text = f"{joined}/{world} {what}: {ranks_text(named)} never arrived ({whence})"
        else:
            text = f"{joined}/{world} {what}: {missing} rank(s) never arrived"
        out.append(synthetic("analysis.missing_ranks", text, [ev], level="ERROR", on_ranks=named, ranks=named,
                             world_size=world, seen=joined, seen_ranks=seen, source=source,
                             missing_count=missing, candidates=unseen))
    return out


def _lightning_members(job: Job) -> list[Event]:
    """PyTorch Lightning's `Initializing distributed: GLOBAL_RANK: r, MEMBER: r+1/W` (each process, before
    init_process_group) where some ranks are announced twice and others never, and rank 0's `All distributed
    processes registered` never follows: the processes of several nodes took the same global ranks."""
    members: dict[int, list[Event]] = {}
    registered: set[int] = set()
    for i in job.by_kind.get("app.lightning", ()):
        ev = job.events[i]
        world = as_int(ev.fields.get("world_size"))
        if world is None or not 1 < world <= MAX_RANKS:
            continue
        if ev.template == "logdoc:lightning:registered":
            registered.add(world)
        elif ev.template == "logdoc:lightning:member" and as_int(ev.fields.get("global_rank")) is not None:
            members.setdefault(world, []).append(ev)
    out = []
    for world, evs in sorted(members.items()):
        if world in registered:
            continue
        counts = Counter(as_int(e.fields.get("global_rank")) for e in evs)
        duplicated = sorted(r for r, n in counts.items() if n > 1 and r < world)
        missing = [r for r in range(world) if r not in counts]
        if not duplicated or not missing:
            continue
        text = (f"{len(counts)}/{world} ranks announced by Lightning: {ranks_text(duplicated)} twice or more, "
                f"{ranks_text(missing)} never")
        out.append(synthetic("analysis.missing_ranks", text, [e for e in evs if counts[as_int(e.fields.get("global_rank"))] > 1],
                             level="ERROR", on_ranks=missing, ranks=missing, world_size=world, seen=len(counts),
                             seen_ranks=sorted(counts), source="lightning", missing_count=len(missing),
                             candidates=missing, duplicated=duplicated))
    return out


# -- the peer the others lost -----------------------------------------------------------------------

_PEER_CLOSED = lazy_re(r"Connection closed by (?:remote )?peer|Connection reset by peer|remote process exited"
                          r"|ncclRemoteError|Broken pipe")
_PEER_ADDR = lazy_re(r"(?:remote peer|by peer|peer) \[?([0-9a-fA-F.:]+?)\]?(?:<\d+>|:\d+)")


def _peer_exited(job: Job) -> list[Event]:
    """Ranks report that a peer closed the connection; the member(s) that printed no error are that peer."""
    from .disagreements import host_ranks, interface_facts

    reporters: dict[int, list[Event]] = {}
    addrs: set[str] = set()
    for kind in ("gloo.error", "torch.exception", "nccl.warn", "torch.async_exception", "torch.nccl_error"):
        for i in job.by_kind.get(kind, ()):
            ev = job.events[i]
            if ev.rank is None or not _PEER_CLOSED.search(ev.text):
                continue
            reporters.setdefault(ev.rank, []).append(ev)
            for m in _PEER_ADDR.finditer(ev.text):
                a = m.group(1)
                if not a.startswith("127.") and a != "::1":
                    addrs.add(a)
    if not reporters:
        return []
    members = job.members()
    stopped = _stopped_by_launcher(job)
    quiet = [r for r in members if r not in reporters and not job.errors_by_rank.get(r) and r not in stopped]
    quiet = _trusted_quiet(job, quiet, len(members))
    peer_hosts: list[str] = []
    if addrs:
        by_addr = {}
        for h, d in interface_facts(job).items():
            for part in ("socket", "bootstrap", "ib_oob"):
                for a in d[part].values():
                    by_addr[a.split("%")[0].strip("[]")] = h
        peer_hosts = sorted({by_addr[a] for a in addrs if a in by_addr})
        if peer_hosts:
            hr = host_ranks(job)
            on_peer = {r for h in peer_hosts for r in hr.get(h, ())}
            narrowed = [r for r in quiet if r in on_peer]
            if narrowed:
                quiet = narrowed
    if not quiet or len(quiet) * 2 > len(members):
        return []
    table = [f"{ranks_text(reporters)} lost the connection to a peer"]
    if peer_hosts:
        table[0] += f" on {', '.join(peer_hosts)}"
    printed = [r for r in quiet if r in job.ranks_seen or r in job.ranks_from_files]
    if printed:
        table.append(f"{ranks_text(printed)} printed no error")
    mute = [r for r in quiet if r not in printed]
    if mute:
        table.append(f"{ranks_text(mute)} {_no_output(job)}")
    detail = "; ".join(table)
    evidence = [e for r in sorted(reporters) for e in reporters[r][:2]]
    return [synthetic("analysis.peer_exited", f"{ranks_text(quiet)} probably exited or was killed: {detail}",
                      evidence, level="ERROR", on_ranks=quiet, on_hosts=peer_hosts, ranks=sorted(quiet),
                      reporting_ranks=sorted(reporters), peer_addrs=sorted(addrs), peer_hosts=peer_hosts,
                      table=table, detail=detail)]


def _stopped_by_launcher(job: Job) -> set[int]:
    """Ranks that torchrun (or mp.spawn) terminated with SIGTERM: alive until the launcher stopped them."""
    out = set()
    for i in job.by_kind.get("torchrun.sigterm", ()):
        r = job.events[i].rank
        if r is not None:
            out.add(r)
    for i in job.by_kind.get("torchrun.child_failed", ()):
        for f in job.events[i].fields.get("failures") or ():
            if isinstance(f, dict) and (as_int(f.get("exitcode")) in (-15, 143) or f.get("signal") == "SIGTERM"):
                r = as_int(f.get("rank"))
                if r is not None:
                    out.add(r)
    return out


def _missing_logs(job: Job, named: set[int]) -> list[Event]:
    """Per-rank files were given, but not for every member of a failed job (rank 0 missing is the usual one).

    Only when the list of input files is known (a file with nothing relevant in it is not a missing log), and
    not for ranks another finding already explains (a hung or exited rank)."""
    if not job.files or not job.ranks_from_files or not any(is_error(e) for e in job.events):
        return []
    per_rank_files = [n for n, pi in job.attr.paths.items() if pi.rank is not None]
    if len(per_rank_files) * 2 < len(job.attr.paths):
        return []  # mostly consoles or node files: a rank without lines there may just have printed nothing
    known = job.known_ranks
    if not known:
        return []
    members = job.members()
    missing = [r for r in members if r not in known and r not in named]
    if not missing:
        return []
    first = next((e for e in job.events if is_error(e)), job.events[0])
    size = job.world_size or len(members)
    text = (f"no log line from {ranks_text(missing)} of a {size}-rank job"
            + (" (rank 0 hosts the store and the NCCL unique id)" if 0 in missing else ""))
    return [synthetic("analysis.missing_ranks", text, [first], level="WARN", on_ranks=missing if len(missing) == 1 else (),
                      ranks=missing, world_size=size, seen=len(known & set(members)), seen_ranks=sorted(known),
                      source="logs", missing_count=len(missing), candidates=missing)]


# -- silent ranks ------------------------------------------------------------------------------------

def _silent(job: Job, gap: int = SILENT_GAP) -> list[Event]:
    """A rank whose last relevant line is bounded in time and comes long before the others' last lines."""
    tl = job.timeline
    last: dict[tuple, int] = {}
    end_lo: dict[tuple, int] = {}
    for i, ev in enumerate(job.events):
        if ev.rank is None or is_agent(ev) or ev.kind.startswith("analysis."):
            continue
        k = (ev.attempt, ev.rank)
        lo = tl.lo_at(i)
        if lo is not None and (k not in end_lo or lo > end_lo[k]):
            end_lo[k] = lo
        cur = last.get(k)
        if cur is None or tl.key_at(i) > tl.key_at(cur):
            last[k] = i
    out = []
    attempts = {k[0] for k in last}
    for att in attempts:
        ranks = [k for k in last if k[0] == att]
        ends: dict[int, int] = {}
        for k in ranks:
            hi = tl.hi_at(last[k])
            if hi is not None:
                ends[k[1]] = hi
        if len(ends) < 2:
            continue
        job_end = max(end_lo.get(k, -1) for k in ranks)
        silent = {r: t for r, t in ends.items() if job_end - t >= gap}
        if not silent or len(silent) * 2 >= len(ranks):
            continue
        others_end = tl.iso_seconds(job_end)
        for r, t in sorted(silent.items()):
            ev = job.events[last[(att, r)]]
            text = (f"rank {r}'s last line is at {tl.iso_seconds(t)} or before, {job_end - t} s before the other "
                    f"ranks' last lines ({others_end})")
            s = synthetic("analysis.silent_rank", text, [ev], level="WARN", on_ranks=[r], ranks=[r],
                          last_time=tl.iso_seconds(t), others_last_time=others_end, gap_seconds=job_end - t,
                          attempt=att)
            out.append(s)
    return out


BUSY_SHARE = 0.8  # a bar that has run at least this share of the timeout ran through the wait


def _busy(job: Job) -> list[Event]:
    """A rank still working when the others' collective timed out: a progress bar of the program's own
    work (``app.progress``, or a bar a timeout message was glued to) that had already run for about the
    whole timeout and was not finished. The waiting ranks were not waiting for a hung rank but for one
    busy with work outside collectives (tokenizing, downloading, loading a checkpoint, evaluating)
    longer than the process group's timeout."""
    timeouts = [ev for ev in job.events if ev.kind == "torch.watchdog_timeout"
                and as_int((ev.fields or {}).get("timeout_ms"))]
    if not timeouts:
        return []
    limit = min(as_int(ev.fields["timeout_ms"]) for ev in timeouts)
    best: tuple[int, Event, dict[str, Any]] | None = None
    for ev in job.events:
        f = ev.fields or {}
        if ev.kind == "app.progress":
            bar = f
        elif f.get("bar_elapsed_s") is not None:
            bar = {k[4:]: v for k, v in f.items() if k.startswith("bar_")}
        else:
            continue
        elapsed, pct = bar.get("elapsed_s"), bar.get("percent")
        if not isinstance(elapsed, int) or elapsed * 1000 < BUSY_SHARE * limit:
            continue
        if isinstance(pct, int) and pct >= 100 or bar.get("remaining_s") == 0:
            continue  # finished before the timeout fired
        if best is None or elapsed > best[0]:
            best = (elapsed, ev, bar)
    if best is None:
        return []
    elapsed, bar_ev, bar = best
    first = timeouts[0]
    waiting = sorted({r for r in (_waiting_rank(ev) for ev in timeouts) if r is not None})
    desc = bar.get("desc") or "a progress bar"
    detail = (f"{desc} had run for {_clock(elapsed)}" + (f" ({bar['percent']}%" if bar.get("percent") is not None else "")
              + (f", {_clock(bar['remaining_s'])} to go)" if isinstance(bar.get("remaining_s"), int) else ")" if bar.get("percent") is not None else "")
              + f" when the collective timeout of {limit // 1000} s fired")
    ev = synthetic("analysis.busy_rank", detail, [bar_ev, first], level="ERROR",
                   # (a bar that a message was glued to belongs to another process than the message)
                   on_ranks=[bar_ev.rank] if bar_ev.rank is not None and bar_ev.kind == "app.progress" else (),
                   timeout_ms=limit, seq=as_int(first.fields.get("seq")), op_type=first.fields.get("op_type"),
                   desc=bar.get("desc"), elapsed_s=elapsed, remaining_s=bar.get("remaining_s"),
                   percent=bar.get("percent"), waiting_ranks=waiting, detail=detail)
    return [ev]


def _waiting_rank(ev: Event) -> int | None:
    if ev.rank is not None:
        return ev.rank
    return as_int((ev.fields or {}).get("pg_rank"))


def _clock(seconds: int) -> str:
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"

