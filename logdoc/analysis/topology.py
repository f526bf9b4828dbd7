"""What NCCL's topology detection and graph search printed per process that the ranks of one communicator
must agree on, told only by comparing ranks (``analysis.topology_disagreement``):

* ``cross_nic``: the ring graph's ``crossNic`` (``Pattern 4, crossNic N, nChannels ...``, NCCL_GRAPH), per
  communicator. Each process searches its own node's topology; the line of a process belongs to the
  communicator whose ``Init START`` came before it, or else whose ``Init COMPLETE`` follows it, in that
  process (its ``commId``; without one, its size; without either, the process's only communicator);
* ``cpu``: the CPU type (architecture and vendor) of each host, from the topology print's top-level
  ``CPU/<id> (arch/vendor/model)`` lines (NCCL_GRAPH), or NCCL's own ``CPUs with mixed vendors were
  detected.`` / ``... mixed architecture ...`` line when the hosts' lines are not in the log.

A process that printed two values for one communicator is left out of it. Each finding says whether the job
failed (a failure-like event, or an init that a process started and never completed: a hang at init)
and the NCCL release the job runs (the oldest one, when the ranks printed several): which releases did
not align these values is knowledge, in the rules.
"""
from __future__ import annotations

import re
from typing import Any

from ..events import Event
from ..lazyre import lazy_re
from .common import short_host, synthetic
from .disagreements import _describe, _failure_idx, _minority, _ranks_hosts, _values, versions, who
from .job import Job
from .ranges import members_text

_PATTERN = lazy_re(r"Pattern (\d+), crossNic (\d+), nChannels (\d+)")
RING_PATTERN = "4"  # NCCL_TOPO_PATTERN_RING (src/include/graph.h): the ring graph
_CPU = lazy_re(r"(?:^|INFO )CPU/[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)? \((\d+)/(\d+)/(\d+)\)[ \t]*$", re.M)
_MIXED = lazy_re(r"CPUs with mixed (architecture|vendors) were detected")
_VERSION = lazy_re(r"^(\d+)\.(\d+)\.(\d+)")
# NCCL_TOPO_CPU_ARCH_* / NCCL_TOPO_CPU_VENDOR_* (src/include/graph.h): how the numbers print
_ARCH = {"1": "x86_64", "2": "POWER", "3": "arm64"}
_VENDOR = {"1": "Intel", "2": "AMD", "3": "Zhaoxin"}
MAX_PER_VALUE = 4  # evidence lines kept per value
_UNNAMED = "(unnamed)"


def analyze(job: Job) -> list[Event]:
    rings, cpus = _scan(job)
    out = _cross_nic(job, rings) if rings else []
    if cpus:
        out.extend(_cpu(job, cpus))
    return out


def _scan(job: Job) -> tuple[list[int], list[tuple[Event, str]]]:
    """The positions of the ``crossNic`` lines and the CPU lines with their message, in one pass over the
    INFO lines (their message field, not the text built from header and message)."""
    rings: list[int] = []
    cpus: list[tuple[Event, str]] = []
    events = job.events
    for i in job.by_kind.get("nccl.info", ()):
        ev = events[i]
        msg = ev.fields.get("message")
        if msg.__class__ is not str:
            msg = ev.text
        if "crossNic" in msg:
            rings.append(i)
        elif "CPU" in msg:
            cpus.append((ev, msg))
    return rings, cpus


def _state(job: Job) -> dict[str, Any]:
    """The job's NCCL release (the oldest printed) and whether it failed; computed once, when a finding needs it."""
    got = job.cache.get("topology_state")
    if got is not None:
        return got
    oldest = None
    for v in versions(job)["nccl"][0].values():
        m = _VERSION.match(str(v))
        if m:
            key = tuple(int(x) for x in m.groups())
            if oldest is None or key < oldest:
                oldest = key
    failures = job.cache.get("failure_idx")
    if failures is None:
        failures = job.cache["failure_idx"] = _failure_idx(job)
    got = job.cache["topology_state"] = {"nccl_version": ".".join(map(str, oldest)) if oldest else None,
                                         "failures": len(failures) > 0}
    return got


def _emit(job: Job, aspect: str, what: str, per: dict[Any, str], evs: dict[Any, list[Event]], unfinished: list,
          between: str = "ranks", **fields: Any) -> Event:
    values = _values(per)
    minority = _minority(values, job)
    mr, mh = _ranks_hosts(job, evs, minority)
    evidence = [e for ws in sorted(values.values(), key=len) for w in ws[:MAX_PER_VALUE] for e in evs.get(w, ())[:1]]
    state = _state(job)
    failed = state["failures"] or bool(unfinished)
    text = f"{what} differs between {between}: {_describe(values)}"
    return synthetic("analysis.topology_disagreement", text, evidence, level="WARN", on_ranks=mr, on_hosts=mh,
                     aspect=aspect, what=what, values=values, minority=minority, nccl_version=state["nccl_version"],
                     failed=failed, unfinished=unfinished,
                     unfinished_on=members_text(unfinished) if unfinished else None, **fields)


# -- crossNic of the ring graph, per communicator ------------------------------------------------------

def _comm_key(ev: Event) -> str:
    f = ev.fields
    if f.get("comm_id"):
        return str(f["comm_id"])
    if f.get("nranks") is not None:
        return f"nranks={f['nranks']}"
    return _UNNAMED


def _cross_nic(job: Job, lines: list[int]) -> list[Event]:
    inits = list(job.by_kind.get("nccl.comm_init", ()))
    seen: dict[str, dict[Any, set]] = {}
    evs: dict[str, dict[Any, list[Event]]] = {}
    started: dict[tuple, str] = {}  # process -> the communicator whose init it started and did not complete
    pending: dict[tuple, list[Event]] = {}  # process -> ring lines not yet tied to a communicator

    def put(key: str, ev: Event, value: str) -> None:
        w = who(ev)
        seen.setdefault(key, {}).setdefault(w, set()).add(value)
        evs.setdefault(key, {}).setdefault(w, []).append(ev)

    for i in sorted(lines + inits):
        ev = job.events[i]
        proc = (ev.file, short_host(ev.host), ev.pid)
        if ev.kind == "nccl.comm_init":
            phase = ev.fields.get("phase")
            key = _comm_key(ev)
            if phase == "START":
                pending.pop(proc, None)  # lines before another init's start: no communicator known
                started[proc] = key
                continue
            for e in pending.pop(proc, ()):
                put(key, e, _ring_cross_nic(e))
            started.pop(proc, None)
            continue
        m = _PATTERN.search(ev.text)
        if not m or m.group(1) != RING_PATTERN:
            continue
        if proc in started:
            put(started[proc], ev, m.group(2))
        else:
            pending.setdefault(proc, []).append(ev)
    # lines of an init that never completed (or whose init lines are not in the log), with no START line
    # before them: the process's only communicator
    for proc, left in pending.items():
        for e in left:
            put(_UNNAMED, e, _ring_cross_nic(e))
    unfinished_by: dict[str, list] = {}
    for proc, key in started.items():
        unfinished_by.setdefault(key, []).extend(w for w in evs.get(key, {}) if _proc(evs[key][w][0]) == proc)
    # (a process that printed no init line at all, NCCL_DEBUG_SUBSYS without INIT, says nothing of its init)
    with_init = {_proc(job.events[i]) for i in inits}
    for proc in pending:
        if proc in with_init:
            unfinished_by.setdefault(_UNNAMED, []).extend(w for w in evs.get(_UNNAMED, {})
                                                          if _proc(evs[_UNNAMED][w][0]) == proc)
    if _UNNAMED in seen and len(seen) > 1 and set(seen[_UNNAMED]) - set(unfinished_by.get(_UNNAMED, ())):
        # lines not tied to a communicator, in a job of several: comparable only as the init every one of
        # those processes was in when its log ended
        del seen[_UNNAMED]
    out = []
    for key in sorted(seen):
        per = {w: next(iter(vs)) for w, vs in seen[key].items() if len(vs) == 1}
        if len(per) < 2 or len(set(per.values())) < 2:
            continue
        ev_of = {w: evs[key][w] for w in per}
        comm = None if key == _UNNAMED else key
        what = f"the ring graph's crossNic{f' of communicator {comm}' if comm else ''}"
        out.append(_emit(job, "cross_nic", what, per, ev_of, sorted(set(unfinished_by.get(key, ())), key=str),
                         comm_id=comm))
    return out


def _proc(ev: Event) -> tuple:
    return (ev.file, short_host(ev.host), ev.pid)


def _ring_cross_nic(ev: Event) -> str:
    m = _PATTERN.search(ev.text)
    return m.group(2) if m else "?"


# -- CPU types per host ----------------------------------------------------------------------------------

def cpu_name(arch: str, vendor: str) -> str:
    a = _ARCH.get(arch, f"arch {arch}")
    if vendor in ("0", ""):
        return a
    return f"{a} {_VENDOR.get(vendor, f'vendor {vendor}')}"


def _cpu(job: Job, lines: list[tuple[Event, str]]) -> list[Event]:
    per: dict[Any, set] = {}
    evs: dict[Any, list[Event]] = {}
    mixed: dict[str, Event] = {}
    for ev, text in lines:
        if "mixed" in text:
            m = _MIXED.search(text)
            if m:
                mixed.setdefault(m.group(1), ev)
            continue
        m = _CPU.search(text)
        if not m:
            continue
        w = short_host(ev.host) or who(ev)
        per.setdefault(w, set()).add(cpu_name(m.group(1), m.group(2)))
        evs.setdefault(w, []).append(ev)
    out = []
    # a host whose sockets print two types is left out (NCCL tunes with its first CPU's)
    one = {w: next(iter(vs)) for w, vs in per.items() if len(vs) == 1}
    if len(one) >= 2 and len(set(one.values())) >= 2:
        out.append(_emit(job, "cpu", "the CPU type", one, {w: evs[w] for w in one}, [], between="hosts", basis="hosts",
                         mixed=sorted(mixed)))
    elif mixed:
        names = " and ".join("vendors" if k == "vendors" else "architectures" for k in sorted(mixed))
        state = _state(job)
        out.append(synthetic("analysis.topology_disagreement",
                             f"NCCL found CPUs of mixed {names} among the ranks", list(mixed.values()), level="WARN",
                             aspect="cpu", what="the CPU type", values={}, minority=[], basis="nccl",
                             mixed=sorted(mixed), nccl_version=state["nccl_version"], failed=state["failures"],
                             unfinished=[], unfinished_on=None))
    return out


__all__ = ["analyze", "cpu_name"]
