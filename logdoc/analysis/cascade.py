"""Where it started: the nature of a failure event, the first failure among candidates, restarts.

Nature of an event (:func:`nature`):

* ``root``    - something went wrong *here*: CUDA out of memory or another CUDA error, an Xid, an IB
  completion error or a failed verbs call, a shared-memory failure, a duplicate GPU, running out of file
  descriptors, a port in use, ``message truncated``, a SIGKILL / SIGSEGV / SIGBUS death, a Python exception
  that is not a distributed-communication error (``KeyError`` in user code), a Gloo enforce failure, a
  DETAIL collective mismatch report.
* ``symptom`` - the consequence of a failure elsewhere: watchdog timeouts and async errors, ``Connection
  closed/reset by peer``, ``ncclRemoteError``, Gloo receive timeouts, store timeouts and closed store
  connections, SIGTERM / SIGABRT exits, torchrun's summary.
* ``neutral`` - anything else (a WARN that is neither, NCCL back-trace lines, ...).

:func:`first_failure` picks, among candidate events, those that can be the earliest: an event whose
earliest possible second (its own stamp, or the last stamp before it in its file) is not after the
latest possible second of every other candidate. Among those, a ``root`` beats a ``neutral`` beats a
``symptom``; then the earlier known time; then file order. Events the log cannot order against the
winner (different files, same second or no stamps) with the same nature are reported with it:
``ranks`` and ``hosts`` are the origin.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..events import Event
from ..lazyre import lazy_re
from ..shorten import shorten
from .common import as_int, gated, ranks_text, short_host, synthetic
from .timeline import Timeline

ROOT, NEUTRAL, SYMPTOM = 0, 1, 2
NATURE = {ROOT: "root", NEUTRAL: "neutral", SYMPTOM: "symptom"}

ROOT_TEXT = lazy_re(
    r"out of memory|OutOfMemoryError|CUDA error|cudaError|Cuda failure|illegal memory access|unspecified launch failure"
    r"|Got completion from peer|completion with error|ibv_\w+ failed|Call to ibv_\w+ failed|shared memory|/dev/shm"
    r"|Duplicate GPU|Too many open files|EMFILE|Address already in use|EADDRINUSE|message truncated"
    r"|Message truncated|No such device|no socket interface found|No usable listening interface|\bXid\b"
    r"|Segmentation fault|SIGSEGV|SIGKILL|Signal 9\b|SIGBUS|Signal 7\b|unhandled cuda error|EnforceNotMet"
    r"|Collectives differ|collective mismatch|Unable to find address|Name or service not known"
    r"|cudaErrorSystemNotReady|NVLink|fabric manager|Mismatched NCCL version|Network is unreachable|No route to host")
SYMPTOM_TEXT = lazy_re(
    r"Connection closed by (?:remote )?peer|Connection reset by peer|remote process exited|ncclRemoteError"
    r"|Timed out waiting|timed out|Timeout\(ms\)|[Ww]atchdog|Some NCCL operations have failed|SIGTERM|Signal 15\b"
    r"|closing signal|RendezvousClosedError|Failed to recv, got 0 bytes|Failed to send|store->get|Socket Timeout"
    r"|Read error|received errors while waiting|Broken pipe|SignalException|ChildFailedError|SIGABRT|Signal 6\b"
    r"|failed to pass monitoredBarrier|clients joined|wait timeout after|dump signal")
_ROOT_SEARCH, _SYMPTOM_SEARCH = gated(ROOT_TEXT), gated(SYMPTOM_TEXT)  # (common.gated: the same matches)
_DIST_EXC = ("DistBackendError", "DistNetworkError", "DistStoreError", "DistError", "ChildFailedError",
             "SignalException", "RendezvousClosedError", "RendezvousTimeoutError", "ProcessExitedException",
             "RendezvousClosedException", "RendezvousTimeoutException")
_WRAPPERS = ("torch.async_exception", "torch.terminate", "torch.nccl_error",
             "torch.watchdog_failure", "torch.exception")
_SYMPTOM_KINDS = ("torch.watchdog_timeout", "torch.teardown", "store.nccl_unique_id", "store.connect_failed", "torch.watchdog_failure", "torch.work_progress", "torch.flight_recorder",
                  "torch.heartbeat", "torch.desync_report", "torch.monitored_barrier",
                  "torchrun.child_failed", "torchrun.sigterm", "torchrun.restart", "store.recv_closed",
                  "store.client_timeout", "store.wait_timeout", "store.clients_joined", "store.connect_retry",
                  "store.barrier_timeout")
_ROOT_KINDS = ("cuda.oom", "cuda.error", "kernel.xid", "torch.collective_mismatch", "store.listen_failed",
               "store.resolve_failed")
_ROOT_EXIT = {-9, -11, -7, -4, -8, 137, 139, 135}
_SYMPTOM_EXIT = {-15, -6, 143, 134, -2}


def _exit_nature(code: int | None, signal: Any = None) -> int:
    """A death by SIGKILL / SIGSEGV / SIGBUS is a root cause; SIGTERM / SIGABRT are consequences; a plain
    exit status (1: an exception) only repeats what the worker's own output says, so it counts as a symptom."""
    sig = str(signal or "")
    if code in _ROOT_EXIT or sig in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"):
        return ROOT
    if code in _SYMPTOM_EXIT or sig in ("SIGTERM", "SIGABRT", "SIGINT"):
        return SYMPTOM
    if code is not None and code > 0:
        return SYMPTOM
    return NEUTRAL


def failure_entries(ev: Event) -> list[dict]:
    fs = ev.fields.get("failures")
    return [f for f in fs if isinstance(f, dict)] if isinstance(fs, list) else []


def nature(ev: Event) -> int:
    kind = ev.kind
    if kind in _ROOT_KINDS:
        return ROOT
    if kind == "torchrun.child_failed":
        # the summary of the agent: as telling as its most telling entry (a SIGKILL is a root cause)
        best = min((_exit_nature(as_int(f.get("exitcode")), f.get("signal")) for f in failure_entries(ev)),
                   default=SYMPTOM)
        return ROOT if best == ROOT else SYMPTOM
    if kind in ("torchrun.worker_failed",):
        return _exit_nature(as_int(ev.fields.get("exitcode")), ev.fields.get("signal"))
    if kind in _SYMPTOM_KINDS:
        return SYMPTOM
    if kind.startswith("analysis."):
        return NEUTRAL
    text = ev.text
    if kind == "torch.exception":
        exc = str(ev.fields.get("exc_type") or "")
        msg = str(ev.fields.get("exc_message") or text)
        if _ROOT_SEARCH.search(msg):
            return ROOT
        if _SYMPTOM_SEARCH.search(msg) or exc.rsplit(".", 1)[-1] in _DIST_EXC:
            return SYMPTOM
        return ROOT
    if kind in _WRAPPERS:
        if kind == "torch.terminate" and "EnforceNotMet" in text:
            return ROOT
        result = str(ev.fields.get("nccl_result") or "")
        if result == "ncclRemoteError":
            return SYMPTOM
        if result == "ncclUnhandledCudaError":
            return ROOT
        return NEUTRAL if _ROOT_SEARCH.search(text) else SYMPTOM
    if kind == "nccl.trace":
        return SYMPTOM if ev.fields.get("code_name") == "ncclRemoteError" else NEUTRAL
    if kind.startswith(("nccl.", "gloo.", "store.", "torch.", "torchrun.", "cuda.")) or ev.level in ("ERROR", "FATAL"):
        if _ROOT_SEARCH.search(text):
            return ROOT
        if _SYMPTOM_SEARCH.search(text):
            return SYMPTOM
    return NEUTRAL


def is_failure(ev: Event) -> bool:
    """An event that can be (part of) a failure: error level, an NCCL WARN, or a root-cause kind."""
    if ev.kind.startswith("analysis."):
        return False
    if ev.level in ("ERROR", "FATAL") or ev.kind in ("nccl.warn", "torch.exception", "torch.terminate", "gloo.error",
                                                     "gloo.connect_full_mesh", "torchrun.worker_failed"):
        return True
    return ev.kind in _ROOT_KINDS


@dataclass
class FirstFailure:
    event: Event | None
    ranks: list[int] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    time: str | None = None
    nature: str | None = None
    tied: list[Event] = field(default_factory=list)
    candidates: int = 0

    def to_dict(self) -> dict[str, Any]:
        ev = self.event
        return {
            "kind": ev.kind if ev else None,
            "file": ev.file if ev else None,
            "line": ev.line if ev else None,
            "text": headline(ev) if ev else None,
            "ranks": self.ranks,
            "hosts": self.hosts,
            "time": self.time,
            "nature": self.nature,
            "tied": [[e.file, e.line] for e in self.tied],
            "candidates": self.candidates,
        }

    def __bool__(self) -> bool:
        return self.event is not None


_OBSERVED = ("torchrun.worker_failed", "torchrun.child_failed")


def bounds(timeline: Timeline, ev: Event) -> tuple[int | None, int | None]:
    """When the failure an event reports can have happened. The agent logs a worker's death when it
    notices it (it polls), so its stamp is only an upper bound of the death."""
    lo, hi = timeline.bounds(ev)
    if ev.kind in _OBSERVED and nature(ev) == ROOT:
        return None, hi
    return lo, hi


def origin_ranks(ev: Event) -> list[int]:
    """The ranks an event speaks for: its rank; for a torchrun summary, the entries of its nature."""
    if ev.kind == "torchrun.child_failed":
        n = nature(ev)
        rs = sorted({as_int(f.get("rank")) for f in failure_entries(ev)
                     if _exit_nature(as_int(f.get("exitcode")), f.get("signal")) == n and as_int(f.get("rank")) is not None})
        if rs:
            return rs
    return [ev.rank] if ev.rank is not None else []


def origin_hosts(ev: Event) -> list[str]:
    if ev.kind == "torchrun.child_failed":
        n = nature(ev)
        hs = sorted({short_host(f.get("host")) for f in failure_entries(ev)
                     if _exit_nature(as_int(f.get("exitcode")), f.get("signal")) == n and f.get("host")})
        if hs:
            return [h for h in hs if h]
    return [short_host(ev.host)] if ev.host else []


def headline(ev: Event) -> str:
    """One line that says what the event is (an exception's type and message, not ``Traceback ...``)."""
    f = ev.fields
    if f.get("exc_type") and ev.kind != "torchrun.child_failed":
        msg = str(f.get("exc_message") or "").strip().split("\n", 1)[0]
        return shorten(f"{str(f['exc_type']).rsplit('.', 1)[-1]}: {msg}", 200)
    if ev.kind == "torchrun.child_failed":
        parts = []
        for x in failure_entries(ev)[:4]:
            parts.append(f"rank {x.get('rank')} exitcode {x.get('exitcode')}" + (f" ({x['signal']})" if x.get("signal") else ""))
        return "torchrun: " + ", ".join(parts) if parts else "torchrun: worker group failed"
    return shorten(ev.text.strip().split("\n", 1)[0], 200)


def first_failure(timeline: Timeline, candidates: Iterable[Event]) -> FirstFailure:
    cands = list(candidates)
    if not cands:
        return FirstFailure(None)
    bounds_ = [bounds(timeline, c) for c in cands]
    his = [hi for lo, hi in bounds_ if hi is not None]
    earliest_hi = min(his) if his else None
    contention = [(c, b) for c, b in zip(cands, bounds_) if earliest_hi is None or b[0] is None or b[0] <= earliest_hi]
    # within one file, only the first candidate of each nature can be first
    seen: set[tuple[str, int]] = set()
    pruned = []
    for c, b in sorted(contention, key=lambda cb: timeline.key(cb[0])):
        k = (c.file, nature(c))
        if k in seen:
            continue
        seen.add(k)
        pruned.append((c, b))
    BIG = 1 << 62

    def rank_key(cb: tuple[Event, tuple]) -> tuple:
        c, (lo, hi) = cb
        own = timeline.seconds(c) if not (c.kind in _OBSERVED and nature(c) == ROOT) else None
        t = own if own is not None else (lo if lo is not None else (hi if hi is not None else BIG))
        return (nature(c), t, timeline.key(c))

    if not pruned:
        return FirstFailure(None)
    pruned.sort(key=rank_key)
    winner = pruned[0][0]
    wn = nature(winner)
    tied = [winner]
    for c, _ in pruned[1:]:
        if nature(c) != wn or c.file == winner.file:
            continue
        if _unordered(timeline, c, winner):
            tied.append(c)
    ranks = sorted({r for e in tied for r in origin_ranks(e)})
    hosts = sorted({h for e in tied for h in origin_hosts(e)})
    return FirstFailure(winner, ranks, hosts, timeline.iso(winner), NATURE[wn], tied, len(cands))


def _unordered(timeline: Timeline, a: Event, b: Event) -> bool:
    """The log cannot say which of two events of different files came first."""
    alo, ahi = bounds(timeline, a)
    blo, bhi = bounds(timeline, b)
    if ahi is not None and blo is not None and ahi < blo:
        return False
    if bhi is not None and alo is not None and bhi < alo:
        return False
    return True


def restarts(events: list[Event], timeline: Timeline) -> list[Event]:
    """``analysis.restart`` per failed torchrun attempt that was followed by another one."""
    by_attempt: dict[int, list[Event]] = {}
    restart_lines: dict[int, list[Event]] = {}
    for ev in events:
        if ev.attempt is None:
            continue
        if ev.kind == "torchrun.restart":
            restart_lines.setdefault(ev.attempt, []).append(ev)
        if is_failure(ev):
            by_attempt.setdefault(ev.attempt, []).append(ev)
    attempts = sorted({ev.attempt for ev in events if ev.attempt is not None})
    out = []
    for n in attempts[:-1]:
        later = [a for a in attempts if a > n]
        ff = first_failure(timeline, by_attempt.get(n, ()))
        last = first_failure(timeline, by_attempt.get(attempts[-1], ()))
        evidence = ([ff.event] if ff else []) + restart_lines.get(n, [])
        if not evidence:
            continue
        where = f" on {ranks_text(ff.ranks)}" if ff and ff.ranks else ""
        first_line = shorten(headline(ff.event), 160) if ff else "no failure line"
        text = (f"torchrun restarted the workers after attempt {n} failed{where} ({first_line}); "
                f"the failures of attempt{'s' if len(later) > 1 else ''} {', '.join(map(str, later))} are probably "
                f"its consequences")
        out.append(synthetic("analysis.restart", text, evidence, level="WARN", on_ranks=ff.ranks if ff else (),
                             on_hosts=ff.hosts if ff else (), attempt=n, later_attempts=later,
                             origin_ranks=ff.ranks if ff else [], origin_hosts=ff.hosts if ff else [],
                             first_failure=ff.to_dict() if ff else None,
                             last_attempt_failure=last.to_dict() if last else None))
    return out
