"""Which rank, host and torchrun attempt every event belongs to.

Sources of a rank, in order of trust (``Event.rank_source``):

1. ``envelope``  - the parser already set ``rank``: ``[rankN]:`` (excepthook, c10 prefix), Open MPI /
   MPICH tags, ``[rankN]:`` tee prefixes.
2. ``torchrun``  - a torchrun ``[defaultN]:`` local rank (or a ``--log-dir`` ``attempt_N/<local_rank>/``
   file) joined with what the agent said about its node: the ``Rendezvous complete`` result
   (``group_rank``, ``local_ranks``, ``global_ranks``), or a ChildFailedError summary
   (``rank : R (local_rank: L)``, ``pid``, ``host``). Agent lines about one worker (``failed (exitcode:
   ...) local_rank: L (pid: P)``, ``Sending process P closing signal``) get that worker's rank.
3. ``prefix``    - torch prefixes inside the message: ``[PG ID 0 PG GUID 0(default_pg) Rank R]`` and the
   older ``[PG 0 Rank R]``; a bare ``[Rank R]`` (or the pg_rank of another group) only when the job
   shows no process group other than the default one; ``ProcessGroupNCCL initialization options: ...
   global rank: R``.
4. ``nccl-init`` - an NCCL ``host:pid`` joined with that process's ``comm 0x... rank R nranks N`` init
   lines of the *world* communicator (the largest ``nranks`` of the job; a process has several comms,
   and a process that only shows smaller ones is left alone).
5. ``filename``  - the file's own name (``rank3.log``, ``rank-3.out``, ``train_rank3.log``) or a folder
   named exactly after a rank, as launchers write them (``rank_3/``, Open MPI's ``rank.3/stdout``);
   never a ``rankN`` inside a longer folder name (``run-rank0-validation/``), and never when the file's
   own lines print another rank or several.

``stream`` means the event itself carries none of these, but another event of the same process did
(the same pid on the same host, the same torchrun local rank on the same node and attempt, the same
per-process file). The best source of the process is used, and an event's own source wins over the
process's at the same level. Events that nothing attributes keep ``rank = None``.

Files also give: ``attempt_N/<local_rank>/{stdout,stderr}.log|error.json`` (torchrun ``--log-dir``),
``slurm-<job>-<task>.out`` (the task id, usually the node rank), ``nccl.<host>.<pid>`` (NCCL_DEBUG_FILE).

Attempts come from ``attempt_N`` folders, the agent's ``Worker group FAILED. k/n attempts left; will
restart worker group`` lines (the lines after it in the same file and node belong to the next attempt),
``restart_count=N`` in the rendezvous result, and ``attempt_N`` in a ChildFailedError ``error_file``.

One module, over 500 lines: :func:`attribute` is one algorithm (process keys joined by union-find, then each
event's own source weighed against its process's best), and its steps share a dozen per-event tables that a
split would pass between modules; the path and torchrun readers it needs are small and only its own.
"""
from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..events import Event
from .common import is_agent, as_int, short_host
from ..lazyre import lazy_re

TRUST = ("envelope", "torchrun", "prefix", "nccl-init", "filename")
_LEVEL = {name: i for i, name in enumerate(TRUST)}

# -- file and folder names ------------------------------------------------------------------------

_LOGDIR = lazy_re(r"(?:^|/)(?:(?P<run>[^/]+)/)?attempt_(?P<attempt>\d+)/(?P<lr>\d+)/"
                     r"(?:stdout|stderr)\.log(?:\.gz)?$|(?:^|/)(?:(?P<run2>[^/]+)/)?attempt_(?P<attempt2>\d+)/"
                     r"(?P<lr2>\d+)/error\.json(?:\.gz)?$")
_ATTEMPT = lazy_re(r"(?:^|/)attempt_(\d+)(?:/|$)")
_NCCLFILE = lazy_re(r"^nccl[._-](?P<host>[A-Za-z0-9][A-Za-z0-9_-]*?)[._-](?P<pid>\d+)(?:\.(?:log|txt|out))?(?:\.gz)?$")
_SLURM = lazy_re(r"^slurm-(?P<job>\d+)[-_.](?P<task>\d+)\.(?:out|err|log|txt)(?:\.gz)?$")
_LOCALRANK = lazy_re(r"(?:^|[^a-z0-9])local[_-]?rank[_-]?(\d+)(?![0-9])", re.I)
_RANK = lazy_re(r"(?:^|(?<=[^a-z0-9]))(?<!pp_)(?<!tp_)(?<!dp_)(?<!cp_)(?<!ep_)(?<!pp-)(?<!tp-)(?<!dp-)"
                   r"(?<!node_)(?<!node-)(?<!group_)(?:global[_-]?)?rank[_-]?(\d+)(?![0-9])", re.I)
# A folder is trusted only when its whole name is a rank, as launchers write them: ``rank3/``,
# ``rank_3/``, ``rank-3/``, Open MPI's ``--output-filename DIR`` -> ``DIR/1/rank.3/stdout``. A
# ``rankN`` inside a longer folder name (``run-rank0-validation/``) says nothing about the file.
_RANK_DIR = lazy_re(r"(?:global[_-]?)?rank[._-]?(\d+)", re.I)
# Launchers put a rank's folder right above its files (``rank3/stdout.log``, ``DIR/1/rank.3/stdout``); a
# folder further up is the user's own tree (``/home/rank24/jobs/run7/logs/train.log``), which names no rank
# of the job, and a whole job's files under it would all read as that one rank.
MAX_RANK_DIRS = 2


@dataclass(slots=True)
class PathInfo:
    rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    attempt: int | None = None
    host: str | None = None
    pid: int | None = None
    run: str | None = None
    per_process: bool = False
    how: str | None = None  # "torchrun-logdir", "nccl-debug-file", "slurm", "rank-name"


def path_info(name: str) -> PathInfo:
    """What a file's path says about the process that wrote it."""
    p = name.replace("\\", "/")
    info = PathInfo()
    m = _ATTEMPT.search(p)
    if m:
        info.attempt = int(m.group(1))
    m = _LOGDIR.search(p)
    if m:
        info.local_rank = int(m["lr"] or m["lr2"])
        info.attempt = int(m["attempt"] or m["attempt2"])
        info.run = m["run"] or m["run2"]
        info.per_process = True
        info.how = "torchrun-logdir"
    base = p.rsplit("/", 1)[-1]
    m = _NCCLFILE.match(base)
    if m:
        info.host = m["host"]
        info.pid = int(m["pid"])
        info.per_process = True
        info.how = info.how or "nccl-debug-file"
    m = _SLURM.match(base)
    if m:
        info.node_rank = int(m["task"])
        info.how = info.how or "slurm"
    if info.how != "torchrun-logdir":
        m = _LOCALRANK.search(base)
        if m:
            info.local_rank = int(m.group(1))
            info.per_process = True
            info.how = info.how or "local-rank-name"
        else:
            parts = p.split("/")
            m = _RANK.search(base)  # the file's own name
            # else the nearest folder named exactly after a rank, among the file's MAX_RANK_DIRS nearest
            for comp in reversed(parts[-1 - MAX_RANK_DIRS:-1]):
                if m is not None:
                    break
                if _LOCALRANK.search(comp):
                    continue
                m = _RANK_DIR.fullmatch(comp)
            if m:
                info.rank = int(m.group(1))
                info.per_process = True
                info.how = info.how or "rank-name"
    return info


def _distrust_names(events: list[Event], paths: dict[str, PathInfo]) -> None:
    """A path's rank never stands against the ranks the file's lines print: a file whose lines name
    another rank (``[rank3]:``, ``[PG ID 0 ... Rank 3]``), or several, is not that rank's log."""
    printed: dict[str, set[int]] = {}
    for ev in events:
        pi = paths.get(ev.file)
        if pi is None or pi.rank is None or pi.how != "rank-name" or is_agent(ev):
            continue
        r = ev.rank if ev.rank_source == "envelope" or (ev.rank is not None and ev.rank_source is None) else None
        if r is None and not ev.kind.startswith("nccl."):
            pg_id, desc, prank = pg_of(ev)
            if prank is not None and is_default_pg(pg_id, desc):
                r = prank
        if r is not None:
            printed.setdefault(ev.file, set()).add(r)
    for name, ranks in printed.items():
        pi = paths[name]
        if ranks != {pi.rank}:
            pi.rank = None
            pi.per_process = False
            pi.how = None


# -- torch prefixes inside messages ---------------------------------------------------------------

_PREFIX = lazy_re(r"^\s*\[(?:PG ID (?P<id>\d+) PG GUID (?P<guid>[^\s()\]]+)(?:\((?P<desc>[^)\s]*)\))? "
                     r"|PG (?P<id2>\d+) )?Rank (?P<r>\d+)\]")
_GLOBAL_RANK = lazy_re(r"global rank: (\d+)")
_DEFAULT_DESCS = ("default_pg", "", None)


def pg_of(ev: Event) -> tuple[str | None, str | None, int | None]:
    """``(pg_id, pg_desc, pg_rank)`` of a torch event, from its fields or its message prefix."""
    f = ev.fields
    pid, desc, prank = f.get("pg_id"), f.get("pg_desc"), f.get("pg_rank")
    if pid is None and desc is None and prank is None and ev.kind.startswith(("torch.", "gloo.", "store.")) and ev.text[:1] in " [":
        m = _PREFIX.match(ev.text)
        if m:
            pid = m["id"] if m["id"] is not None else m["id2"]
            desc = m["desc"]
            prank = m["r"]
    pid_s = None if pid is None else str(pid)
    if desc in ("undefined",):
        desc = None
    return pid_s, desc, as_int(prank)


def is_default_pg(pg_id: str | None, desc: str | None) -> bool:
    return pg_id == "0" or desc == "default_pg"


# -- torchrun agent facts ------------------------------------------------------------------------

_RDZV_KV = lazy_re(r"\b(group_rank|group_world_size|restart_count)=(\d+)")
_RDZV_LIST = lazy_re(r"\b(local_ranks|global_ranks)=\[([\d,\s]*)\]")
_RDZV_JOIN = lazy_re(r"has joined round \d+ of the rendezvous '[^']*' as rank (\d+) in a world of size (\d+)")
_RESTART = lazy_re(r"(\d+)/(\d+) attempts left")
_PIDTEXT = lazy_re(r"\(pid: (\d+)\)|Sending process (\d+) closing signal")


def rendezvous_facts(ev: Event) -> dict[str, Any] | None:
    text = ev.text
    if "group_rank=" not in text and "has joined round" not in text:
        return None
    out: dict[str, Any] = {}
    for k, v in _RDZV_KV.findall(text):
        out[k] = int(v)
    for k, v in _RDZV_LIST.findall(text):
        out[k] = [int(x) for x in v.replace(" ", "").split(",") if x]
    m = _RDZV_JOIN.search(text)
    if m:
        out.setdefault("group_rank", int(m.group(1)))
        out.setdefault("group_world_size", int(m.group(2)))
    return out or None


def restart_next_attempt(ev: Event, current: int) -> int:
    """The attempt that starts after a ``torchrun.restart`` line."""
    rem, mx = as_int(ev.fields.get("remaining")), as_int(ev.fields.get("max_restarts"))
    if rem is None or mx is None:
        m = _RESTART.search(ev.text)
        if m:
            rem, mx = int(m.group(1)), int(m.group(2))
    if rem is not None and mx is not None and mx >= rem:
        return max(current + 1, mx - rem + 1)
    return current + 1


def _failures(ev: Event) -> list[dict]:
    fs = ev.fields.get("failures")
    return [f for f in fs if isinstance(f, dict)] if isinstance(fs, list) else []


# -- union-find over process keys ----------------------------------------------------------------

class _UF:
    __slots__ = ("parent",)

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        parent = self.parent
        root = x
        while True:
            p = parent.setdefault(root, root)
            if p == root:
                break
            root = p
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


@dataclass(slots=True)
class Conflict:
    file: str
    line: int
    chosen: tuple[str, int]
    other: tuple[str, int]


@dataclass
class Attribution:
    """The result: per event its process; per process its rank, host and pids."""

    proc_of: array                              # event index -> process index (4-byte numbers)
    proc_rank: list[int | None]                 # process index -> rank (best source)
    proc_host: list[str | None]
    proc_pids: list[list[int]]
    proc_files: list[list[str]]
    paths: dict[str, PathInfo]
    world_size: int | None
    nccl_world: dict[tuple, dict]               # (host, pid) -> world comm init fields
    conflicts: list[Conflict] = field(default_factory=list)
    pgs: dict[str, dict] = field(default_factory=dict)  # pg_id -> {desc, guid}


def attribute(events: list[Event], files: Iterable[str] = ()) -> Attribution:
    """Fill ``rank``, ``rank_source``, ``attempt``, ``host`` (and ``local_rank`` / ``node_rank`` from
    paths) on ``events`` in place, and return what was learnt about processes."""
    n = len(events)
    names = list(dict.fromkeys([*files, *(ev.file for ev in events)]))
    paths = {name: path_info(name) for name in names}
    for ev in events:  # a second analysis of the same events starts from what the parser said
        if ev.rank_source not in (None, "envelope"):
            ev.rank = None
            ev.rank_source = None

    agent_flags = bytearray(is_agent(ev) for ev in events)  # (a byte an event, not a list slot)
    _distrust_names(events, paths)

    # 0. path facts onto events (never overriding what the line said)
    for i, ev in enumerate(events):
        pi = paths[ev.file]
        if ev.local_rank is None and pi.local_rank is not None and not agent_flags[i]:
            ev.local_rank = pi.local_rank
        if ev.node_rank is None and pi.node_rank is not None:
            ev.node_rank = pi.node_rank

    by_file: dict[str, list[int]] = {}
    for i, ev in enumerate(events):
        by_file.setdefault(ev.file, []).append(i)
    for name, idxs in by_file.items():
        idxs.sort(key=lambda i: (events[i].line, i))
        by_file[name] = array("i", idxs)  # (4 bytes a position, not a number object each)

    _assign_attempts(events, by_file, paths)

    def node_key(ev: Event) -> tuple:
        pi = paths[ev.file]
        if pi.how == "torchrun-logdir":
            return ("logdir", pi.run)
        return ("file", ev.file, ev.node_rank)

    # local rank -> rank per node and attempt, from lines that carry both
    lr_hist: dict[tuple, dict[int, set]] = {}
    for i, ev in enumerate(events):
        if ev.rank is not None and ev.local_rank is not None and not agent_flags[i]:
            lr_hist.setdefault(node_key(ev), {}).setdefault(ev.local_rank, set()).add((ev.attempt, ev.rank))

    # 1. facts per event
    envelope = [ev.rank for ev in events]
    job_pgs: dict[str, dict] = {}
    non_default = False
    for ev in events:
        if ev.kind.startswith("nccl."):
            continue
        pid_, desc, _ = pg_of(ev)
        if pid_ is not None or desc is not None:
            if not is_default_pg(pid_, desc):
                non_default = True
            if pid_ is not None:
                d = job_pgs.setdefault(pid_, {"desc": None, "guid": None})
                d["desc"] = d["desc"] or desc
                g = ev.fields.get("pg_guid")
                d["guid"] = d["guid"] or (str(g) if g is not None else None)

    # NCCL world communicator per (host, pid)
    comms: dict[tuple, list[Event]] = {}
    job_max = 0
    for ev in events:
        if ev.kind in ("nccl.comm_init", "nccl.comm_info") and ev.pid is not None:
            nr = as_int(ev.fields.get("nranks"))
            if nr is None or as_int(ev.fields.get("rank")) is None:
                continue
            comms.setdefault((short_host(ev.host) or paths[ev.file].host, ev.pid), []).append(ev)
            job_max = max(job_max, nr)
    nccl_world: dict[tuple, dict] = {}
    nccl_rank: dict[tuple, int] = {}
    for key, evs in comms.items():
        world = [e for e in evs if as_int(e.fields.get("nranks")) == job_max]
        if not world:
            continue
        unsplit = [e for e in world if not e.fields.get("parent")] or world
        first = unsplit[0]
        nccl_world[key] = first.fields  # (read only: the event's own fields, not a copy per process)
        nccl_rank[key] = as_int(first.fields.get("rank"))  # type: ignore[assignment]

    # host of a pid within a file (for lines that print a pid but no host: torch's Python logger)
    file_pid_hosts: dict[tuple[str, int], tuple] = {}  # (the distinct hosts as a tuple: mostly one)
    seen_fph: set = set()
    for ev in events:
        if ev.pid is not None and ev.host:
            k3 = (ev.file, ev.pid, ev.host)
            if k3 not in seen_fph:
                seen_fph.add(k3)
                fp = (ev.file, ev.pid)
                file_pid_hosts[fp] = _with(file_pid_hosts.get(fp, ()), short_host(ev.host))
    pid_memo: dict[tuple, tuple] = {}

    def pid_key(file: str, pid: int, host: str | None) -> tuple:
        k3 = (file, pid, host)
        got = pid_memo.get(k3)
        if got is None:
            got = pid_memo[k3] = _pid_key(file, pid, host)
        return got

    def _pid_key(file: str, pid: int, host: str | None) -> tuple:
        h = short_host(host) or paths[file].host
        if h is None:
            hs = file_pid_hosts.get((file, pid))
            if hs and len(hs) == 1:
                h = next(iter(hs))
        return ("pid", h, pid) if h else ("pidf", file, pid)

    # torchrun facts: child-failed summaries and rendezvous results
    cf_by_pid: dict[tuple, int] = {}           # (host, pid) -> rank
    cf_pid_any: dict[int, set] = {}            # pid -> ranks (any host)
    cf_local: dict[tuple, int] = {}            # (host, attempt, local_rank) -> rank
    cf_node_local: dict[tuple, int] = {}       # (file, node_rank, attempt, local_rank) -> rank
    cf_hosts_by_attempt: dict[int | None, set] = {}
    rdzv: dict[tuple, dict] = {}               # (file, node_rank, attempt) -> facts
    for ev in events:
        if not ev.kind.startswith(("torchrun.", "torch.")):
            continue
        if ev.kind == "torchrun.child_failed":
            for f in _failures(ev):
                r, lr, pid = as_int(f.get("rank")), as_int(f.get("local_rank")), as_int(f.get("pid"))
                h = short_host(f.get("host"))
                ef = f.get("error_file") or ""
                m = _ATTEMPT.search(str(ef).replace("\\", "/"))
                att = int(m.group(1)) if m else ev.attempt
                if r is None:
                    continue
                if pid is not None:
                    cf_by_pid[(h, pid)] = r
                    cf_pid_any.setdefault(pid, set()).add(r)
                if lr is not None:
                    cf_local[(h, att, lr)] = r
                    cf_node_local[(ev.file, ev.node_rank, att, lr)] = r
                    cf_hosts_by_attempt.setdefault(att, set()).add(h)
        elif ev.kind.startswith("torchrun.") or "group_rank=" in ev.text or "has joined round" in ev.text:
            facts = rendezvous_facts(ev)
            if facts:
                rdzv.setdefault((ev.file, ev.node_rank, ev.attempt), {}).update(facts)

    # 2. process keys and union
    uf = _UF()
    keys_of: list[tuple] = [None] * n  # type: ignore[list-item]
    single = _single_process_files(events, by_file, paths)
    del by_file
    # one object per key and per (level, rank) pair for the events that share it: a job of many ranks
    # would hold a tuple an event in each list below (about 130 bytes an event at the peak of analyze)
    held: dict[tuple, tuple] = {}
    last_ks: list[tuple] | None = None
    for i, ev in enumerate(events):
        agent = agent_flags[i]
        ks: list[tuple] = []
        if ev.pid is not None and not agent:
            ks.append(pid_key(ev.file, ev.pid, ev.host))
        if ev.local_rank is not None and not agent:
            ks.append(("local", node_key(ev), ev.local_rank, ev.attempt))
        if envelope[i] is not None and not agent:
            ks.append(("rank", ev.attempt, envelope[i]))
        if ev.file in single and not agent:
            ks.append(("file", ev.file))
        if agent:
            wpid = _agent_worker_pid(ev)
            if wpid is not None:
                ks.append(pid_key(ev.file, wpid, None))
        if not ks:
            ks.append(("event", i))
        if ks != last_ks:  # consecutive lines of one process repeat the same keys
            for k in ks[1:]:
                uf.union(ks[0], k)
            last_ks = ks
        k0 = ks[0]
        keys_of[i] = held.setdefault(k0, k0)
    roots: dict[Any, int] = {}
    key_root: dict[Any, int] = {}
    proc_of = array("i", bytes(4 * n))  # (4 bytes an event, not a list's 8-byte slot)
    for i in range(n):
        k = keys_of[i]
        p = key_root.get(k)
        if p is None:
            r = uf.find(k)
            p = roots.get(r)
            if p is None:
                p = roots[r] = len(roots)
            key_root[k] = p
        proc_of[i] = p
    nproc = len(roots)
    del keys_of, key_root  # (the per-event tables go as soon as they are read: the peak holds fewer)

    # the (host, pid) keys that belong to each process
    proc_pidkeys: list[tuple] = [()] * nproc  # (distinct keys: a tuple each, mostly of one)
    for k in list(uf.parent):
        if k[0] == "pid":
            r = roots.get(uf.find(k))
            if r is not None:
                proc_pidkeys[r] += (k,)

    # torch.multiprocessing.spawn numbers its processes 0..nprocs-1: the rank, on one node
    hosts_seen = {short_host(ev.host) for ev in events if ev.host}
    one_node = len(hosts_seen) <= 1 and all(ev.node_rank is None for ev in events)

    # 3. own candidates per event: list of (level, rank)
    own: list[tuple[int, int] | None] = [None] * n
    for i, ev in enumerate(events):
        if envelope[i] is not None:
            own[i] = _pair(held, 0, envelope[i])  # type: ignore[assignment]
            continue
        f = ev.fields
        if one_node and (f.get("spawn_process") is not None or f.get("launcher") == "spawn"):
            idx = as_int(f.get("spawn_process")) if f.get("spawn_process") is not None else as_int(f.get("local_rank"))
            if idx is not None:
                own[i] = _pair(held, 1, idx)
                continue
        cand = _torchrun_rank(ev, paths, rdzv, cf_local, cf_node_local, cf_hosts_by_attempt, events, cf_by_pid,
                              cf_pid_any, pid_key)
        if cand is None and ev.local_rank is not None and not agent_flags[i]:
            # the same local rank of the same node was one rank in every other attempt
            seen = lr_hist.get(node_key(ev), {}).get(ev.local_rank)
            if seen and len({r for _, r in seen}) == 1 and all(a != ev.attempt for a, _ in seen):
                cand = next(iter(seen))[1]
        if cand is not None:
            own[i] = _pair(held, 1, cand)
            continue
        if not ev.kind.startswith("nccl.") and not agent_flags[i]:
            pid_, desc, prank = pg_of(ev)
            if prank is not None and (is_default_pg(pid_, desc) or not non_default):
                own[i] = _pair(held, 2, prank)
                continue
            if ev.kind == "torch.pg_info" or "global rank:" in ev.text:
                m = _GLOBAL_RANK.search(ev.text)
                if m:
                    own[i] = _pair(held, 2, int(m.group(1)))
                    continue
        if ev.pid is not None and not agent_flags[i]:
            k = pid_key(ev.file, ev.pid, ev.host)
            r = nccl_rank.get(k[1:]) if k[0] == "pid" else None
            if r is not None:
                own[i] = _pair(held, 3, r)
                continue
        pi = paths[ev.file]
        if pi.rank is not None and not agent_flags[i]:
            own[i] = _pair(held, 4, pi.rank)
    del envelope

    # process-level: pid facts (NCCL world comm, child-failed pids) and the best own candidate
    proc_best: list[tuple[int, int] | None] = [None] * nproc
    # per process and level, the one rank it names or _MANY (the best level is the first that names one):
    # a slot per level and process, not a dict and a set each (about 600 bytes a process)
    nl = len(TRUST)
    per_level: list = [None] * (nproc * nl)

    def name(p: int, lvl: int, r: int) -> None:
        j = p * nl + lvl
        got = per_level[j]
        if got is None:
            per_level[j] = r
        elif got is not _MANY and got != r:
            per_level[j] = _MANY

    for p in range(nproc):
        for k in proc_pidkeys[p]:
            _, h, pid = k
            r = nccl_rank.get((h, pid))
            if r is not None:
                name(p, 3, r)
            r = cf_by_pid.get((h, pid))
            if r is None and pid in cf_pid_any and len(cf_pid_any[pid]) == 1:
                hosts_cf = {hh for (hh, pp) in cf_by_pid if pp == pid}
                if hosts_cf <= {"localhost", None, h}:
                    r = next(iter(cf_pid_any[pid]))
            if r is not None:
                name(p, 1, r)
    for i, ev in enumerate(events):
        if agent_flags[i]:
            continue  # agent lines name a worker; they do not speak for it
        o = own[i]
        if o is not None:
            name(proc_of[i], o[0], o[1])
    for p in range(nproc):
        for lvl in range(nl):
            r = per_level[p * nl + lvl]
            if r is not None and r is not _MANY:
                proc_best[p] = (lvl, r)
                break
    del per_level

    # 4. resolve per event
    conflicts: list[Conflict] = []
    for i, ev in enumerate(events):
        o = own[i]
        pb = proc_best[proc_of[i]]
        if o is not None and (pb is None or o[0] <= pb[0]):
            ev.rank = o[1]
            ev.rank_source = TRUST[o[0]]
            if pb is not None and pb[1] != o[1] and len(conflicts) < 200:
                conflicts.append(Conflict(ev.file, ev.line, (TRUST[o[0]], o[1]), (TRUST[pb[0]] + "/stream", pb[1])))
        elif pb is not None and not (ev.kind == "torchrun.child_failed" and len(_failures(ev)) != 1):
            ev.rank = pb[1]
            ev.rank_source = "stream" if o is None or o[0] != pb[0] else TRUST[pb[0]]
            if o is not None and o[1] != pb[1] and len(conflicts) < 200:
                conflicts.append(Conflict(ev.file, ev.line, (TRUST[pb[0]] + "/stream", pb[1]), (TRUST[o[0]], o[1])))
        elif ev.kind == "torchrun.child_failed":
            fs = _failures(ev)
            if len(fs) == 1 and as_int(fs[0].get("rank")) is not None:
                ev.rank = as_int(fs[0].get("rank"))
                ev.rank_source = "torchrun"
        else:
            ev.rank = None
            ev.rank_source = None
    del own

    # 5. hosts and pids per process; fill hosts
    # (the distinct values as tuples in the order first seen: a process has one host, pid and file, mostly)
    proc_hosts: list[tuple] = [()] * nproc
    proc_pid_set: list[tuple] = [()] * nproc
    proc_file_set: list[tuple] = [()] * nproc
    for i, ev in enumerate(events):
        p = proc_of[i]
        proc_file_set[p] = _with(proc_file_set[p], ev.file)
        if agent_flags[i]:
            continue
        if ev.host:
            proc_hosts[p] = _with(proc_hosts[p], short_host(ev.host))
        elif paths[ev.file].host:
            proc_hosts[p] = _with(proc_hosts[p], paths[ev.file].host)
        if ev.pid is not None:
            proc_pid_set[p] = _with(proc_pid_set[p], ev.pid)
    for p in range(nproc):
        for k in proc_pidkeys[p]:
            if k[1]:
                proc_hosts[p] = _with(proc_hosts[p], k[1])
            proc_pid_set[p] = _with(proc_pid_set[p], k[2])
    proc_host = [h[0] if len(h) == 1 else None for h in proc_hosts]
    rank_hosts: dict[tuple, tuple] = {}
    for i, ev in enumerate(events):
        if ev.rank is not None and not agent_flags[i]:
            h = proc_host[proc_of[i]]
            if h:
                ar = (ev.attempt, ev.rank)
                rank_hosts[ar] = _with(rank_hosts.get(ar, ()), h)
    for i, ev in enumerate(events):
        if ev.host is None and not agent_flags[i]:
            h = proc_host[proc_of[i]]
            if h is None and ev.rank is not None:
                hs = rank_hosts.get((ev.attempt, ev.rank))
                if hs and len(hs) == 1:
                    h = next(iter(hs))
            if h is not None:
                ev.host = h

    proc_rank = [pb[1] if pb is not None else None for pb in proc_best]
    world = job_max or None
    return Attribution(
        proc_of=proc_of,
        proc_rank=proc_rank,
        proc_host=proc_host,
        proc_pids=[sorted(s) for s in proc_pid_set],
        proc_files=[list(d) for d in proc_file_set],
        paths=paths,
        world_size=world,
        nccl_world=nccl_world,
        conflicts=conflicts,
        pgs=job_pgs,
    )


def _agent_worker_pid(ev: Event) -> int | None:
    """The worker pid an agent line is about (``failed (exitcode...) (pid: P)``, ``Sending process P``)."""
    if ev.kind == "torchrun.child_failed":
        return None
    pid = as_int(ev.fields.get("pid"))
    if pid is not None:
        return pid
    m = _PIDTEXT.search(ev.text)
    if m:
        return int(m.group(1) or m.group(2))
    return None


def _torchrun_rank(ev: Event, paths, rdzv, cf_local, cf_node_local, cf_hosts_by_attempt, events, cf_by_pid,
                   cf_pid_any, pid_key) -> int | None:
    if is_agent(ev):
        if ev.kind == "torchrun.child_failed":
            return None
        wpid = _agent_worker_pid(ev)
        if wpid is not None:
            k = pid_key(ev.file, wpid, None)
            r = cf_by_pid.get(k[1:]) if k[0] == "pid" else None
            if r is None and wpid in cf_pid_any and len(cf_pid_any[wpid]) == 1:
                r = next(iter(cf_pid_any[wpid]))
            if r is not None:
                return r
        lr = as_int(ev.fields.get("local_rank"))
        if lr is not None:
            r = cf_node_local.get((ev.file, ev.node_rank, ev.attempt, lr))
            if r is not None:
                return r
            return _rdzv_rank(rdzv.get((ev.file, ev.node_rank, ev.attempt)), lr)
        return None
    lr = ev.local_rank
    if lr is None:
        return None
    facts = rdzv.get((ev.file, ev.node_rank, ev.attempt))
    r = _rdzv_rank(facts, lr)
    if r is not None:
        return r
    r = cf_node_local.get((ev.file, ev.node_rank, ev.attempt, lr))
    if r is not None:
        return r
    h = short_host(ev.host)
    if h is not None:
        r = cf_local.get((h, ev.attempt, lr))
        if r is not None:
            return r
    pi = paths[ev.file]
    if pi.how == "torchrun-logdir":
        hosts = cf_hosts_by_attempt.get(ev.attempt)
        if hosts and len(hosts) == 1:
            r = cf_local.get((next(iter(hosts)), ev.attempt, lr))
            if r is not None:
                return r
        facts_all = [f for (file, _nr, att), f in rdzv.items() if att == ev.attempt]
        if len(facts_all) == 1:
            return _rdzv_rank(facts_all[0], lr)
    return None


def _rdzv_rank(facts: dict | None, lr: int) -> int | None:
    if not facts:
        return None
    lrs, grs = facts.get("local_ranks"), facts.get("global_ranks")
    if lrs and grs and len(lrs) == len(grs) and lr in lrs:
        return grs[lrs.index(lr)]
    g = facts.get("group_rank")
    if g is not None and lrs:
        return g * len(lrs) + lr
    return None


_MANY = object()  # a process's level that names more than one rank


def _with(values: tuple, v: Any) -> tuple:
    """``values`` with ``v`` added at its end, unless it holds it already."""
    return values if v in values else values + (v,)


def _pair(held: dict, level: int, rank: int) -> tuple[int, int]:
    """``(level, rank)``, one object for every event that has it."""
    t = (level, rank)
    return held.setdefault(t, t)


def _single_process_files(events: list[Event], by_file: dict[str, list[int]], paths: dict[str, PathInfo]) -> set[str]:
    """Files written by one process: by their name, or because nothing in them says otherwise."""
    out = set()
    for name, idxs in by_file.items():
        pi = paths[name]
        if pi.per_process:
            out.add(name)
            continue
        ranks, pids, lrs, hosts = set(), set(), set(), set()
        agent = False
        for i in idxs:
            ev = events[i]
            if is_agent(ev):
                agent = True
                break
            if ev.rank is not None:
                ranks.add(ev.rank)
            if ev.pid is not None:
                pids.add(ev.pid)
            if ev.local_rank is not None:
                lrs.add(ev.local_rank)
            if ev.host:
                hosts.add(short_host(ev.host))
            if len(ranks) > 1 or len(pids) > 1 or len(lrs) > 1 or len(hosts) > 1:
                break
        else:
            if not agent:
                out.add(name)
    return out


def _assign_attempts(events: list[Event], by_file: dict[str, list[int]], paths: dict[str, PathInfo]) -> None:
    for name, idxs in by_file.items():
        pi = paths[name]
        if pi.attempt is not None:
            for i in idxs:
                if events[i].attempt is None:
                    events[i].attempt = pi.attempt
            continue
        has = any(events[i].kind == "torchrun.restart" or "restart_count=" in events[i].text for i in idxs)
        if not has:
            continue
        current: dict[Any, int] = {}
        for i in idxs:
            ev = events[i]
            node = ev.node_rank
            if "restart_count=" in ev.text:
                m = re.search(r"restart_count=(\d+)", ev.text)
                if m:
                    current[node] = int(m.group(1))
            if node in current:
                cur = current[node]
            elif current:
                cur = max(current.values())
            else:
                cur = 0
            if ev.attempt is None:
                ev.attempt = cur
            if ev.kind == "torchrun.restart":
                current[node] = restart_next_attempt(ev, current.get(node, 0))
    # a failure summary names the attempt of its error files (below); a job whose only attempt is 0
    # (a --log-dir tree next to its console) has every event in attempt 0
    for ev in events:
        if ev.kind == "torchrun.child_failed" and ev.attempt is None:
            for f in _failures(ev):
                m = _ATTEMPT.search(str(f.get("error_file") or "").replace("\\", "/"))
                if m:
                    ev.attempt = int(m.group(1))
                    break
    seen_attempts = {ev.attempt for ev in events if ev.attempt is not None}
    if seen_attempts == {0}:
        for ev in events:
            if ev.attempt is None:
                ev.attempt = 0
