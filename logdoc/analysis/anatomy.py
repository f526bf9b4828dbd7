"""The job's anatomy, without judging it: ranks, hosts, versions, communicators, transports, interfaces,
NCCL settings, time span, attempts. Everything is plain JSON (str keys, lists, numbers, None).

Keys of :func:`build`'s result:

* ``world_size``; ``ranks``: one entry per rank (``rank``, ``host``, ``hosts``, ``pids``, ``local_rank``,
  ``node_rank``, ``bus_id``, ``cuda_dev``, ``files``, ``attempts``, ``events``, ``errors``,
  ``last_activity``, ``rank_sources``); ``ranks_without_output``; ``hosts`` (names) and ``by_host``
  (``ranks``, ``pids``, ``bus_ids``);
* ``versions``: ``{"nccl"|"cuda"|"cuda_driver"|"torch": {version: {"ranks", "hosts", "processes"}}}``;
* ``communicators`` (below) and ``failed_communicators`` (their ids);
* ``transports``: per host ``network``, ``net``, ``gdr``, ``transports`` (``NET/IB/0/GDRDMA``: count),
  ``gdr_support``, ``ib_devices``, ``ring_gdr``, ``peers`` (``"src->dst"``: transport, first 64);
* ``interfaces``: per host ``socket``, ``bootstrap``, ``ib_oob`` (``{name: address}``);
* ``env``: ``{NCCL_X: {value: [ranks]}}`` (processes without a rank as ``host:pid``);
* ``agreement``: one row per aspect (``aspect``, ``agree``, ``values``): what the ranks agree on and not;
* ``time_span`` (``start``, ``end``, ``seconds``, ``year_borrowed``); ``attempts`` (per torchrun attempt:
  ``ranks``, ``files``, ``events``, ``first_failure``); ``progress`` (per process group: stuck SeqNum and
  the per-rank table); ``files`` (per file: ranks, events, how its name was read); ``attribution``
  (events per rank source, unattributed count, conflicts between sources).

Communicators come from two sides that the logs rarely join explicitly:

* NCCL: ``comm 0x... rank R nranks N ... commId 0x... - Init START/COMPLETE`` per process, grouped across
  processes by ``commId`` (2.16+), else by creation order and size;
* PyTorch: the process groups named in prefixes (``[PG ID 1 PG GUID 1(mesh_pp) Rank 0]``), with their
  failures (watchdog timeouts, async errors, ``failure detected by watchdog``).

They are joined by the comm pointer when torch printed it (``ProcessGroupNCCL created ncclComm_ 0x...``,
``link: "pointer"``), else, when every process created as many NCCL communicators as there are process
groups, by creation order (``link: "order"``: a guess, flagged as such). Unjoined ones are listed alone.
"""
from __future__ import annotations

from typing import Any

from ..events import Event, keyed
from ..lazyre import lazy_re
from ..shorten import shorten
from .attribution import TRUST
from .cascade import first_failure, is_failure
from .common import is_agent, as_int, short_host
from .disagreements import (ALWAYS_PRINTED, NOT_PRINTED, env_settings, interface_facts, transport_facts, versions)
from .job import WORK_KINDS, Job

_PTR = lazy_re(r"ncclComm_?\s*(0x[0-9a-fA-F]+)")
_FAIL_KINDS = set(WORK_KINDS) | {"torch.watchdog_failure", "torch.thread_exception"}
MAX_POINTERS = 64


def _sorted_mixed(items) -> list:
    ints = sorted(x for x in items if isinstance(x, int))
    return ints + sorted(str(x) for x in items if not isinstance(x, int))


def build(job: Job, progress_tables: dict[str, Any]) -> dict[str, Any]:
    events = job.events
    tl = job.timeline
    start, end = tl.span()
    comms = communicators(job, progress_tables)
    env, _, printers = env_settings(job)
    env_out = {}
    for name, vals in sorted(env.items()):
        out: dict[str, list] = {}
        for w, v in vals.items():
            out.setdefault(v, []).append(w)
        env_out[name] = {v: _sorted_mixed(ws) for v, ws in sorted(out.items())}
    vers = {}
    for comp, (vals, evs) in versions(job).items():
        if not vals:
            continue
        d: dict[str, dict[str, list]] = {}
        for w, v in vals.items():
            slot = d.setdefault(v, {"ranks": [], "hosts": [], "processes": []})
            for ev in evs.get(w, ())[:1]:
                if ev.rank is not None:
                    slot["ranks"].append(ev.rank)
                if ev.host:
                    slot["hosts"].append(short_host(ev.host))
                if ev.rank is None:
                    slot["processes"].append(str(w))
        vers[comp] = {v: {k: _sorted_mixed(set(x)) for k, x in s.items()} for v, s in sorted(d.items())}
    transports = {h: {k: (sorted(v, key=str) if isinstance(v, set) else v) for k, v in d.items() if not k.startswith("_")}
                  for h, d in sorted(transport_facts(job).items())}
    interfaces = {h: {k: v for k, v in d.items() if not k.startswith("_")} for h, d in sorted(interface_facts(job).items())}
    ranks = _ranks(job)
    hosts: dict[str, dict[str, set]] = {}
    for r in ranks:
        for h in r["hosts"]:
            slot = hosts.setdefault(h, {"ranks": set(), "pids": set(), "bus_ids": set()})
            slot["ranks"].add(r["rank"])
            slot["pids"].update(r["pids"])
            bus = r.get("bus_id")
            if bus:
                slot["bus_ids"].update(bus if isinstance(bus, (list, tuple, set)) else [bus])
    for ev in events:
        if ev.host and not is_agent(ev):
            hosts.setdefault(short_host(ev.host), {"ranks": set(), "pids": set(), "bus_ids": set()})
    members = job.members()
    without = [r for r in members if r not in job.ranks_seen]
    sources: dict[str, int] = {}
    unattributed = 0
    for ev in events:
        n = 1 + ev.folds  # the unread facts it carries (logdoc/facts.py)
        if ev.rank is None:
            unattributed += n
        else:
            sources[ev.rank_source or "envelope"] = sources.get(ev.rank_source or "envelope", 0) + n
    return {
        "world_size": job.world_size or (len(members) or None),
        "ranks": ranks,
        "ranks_without_output": without if len(without) <= 4096 else without[:4096],
        "hosts": sorted(hosts),
        "by_host": {h: {k: sorted(v) for k, v in d.items()} for h, d in sorted(hosts.items())},
        "versions": vers,
        "communicators": comms,
        "failed_communicators": [c["id"] for c in comms if c.get("failed")],
        "transports": transports,
        "interfaces": interfaces,
        "env": env_out,
        "agreement": agreement(job, vers, env, printers, transports, interfaces),
        "time_span": {
            "start": tl.iso_seconds(start), "end": tl.iso_seconds(end),
            "seconds": (end - start) if start is not None and end is not None else None,
            "year_borrowed": tl.year_borrowed,
        },
        "attempts": _attempts(job),
        "progress": progress_tables,
        "files": _files(job),
        "attribution": {
            "by_source": dict(sorted(sources.items(), key=lambda kv: TRUST.index(kv[0]) if kv[0] in TRUST else 99)),
            "unattributed_events": unattributed,
            "conflicts": [{"file": c.file, "line": c.line, "chosen": list(c.chosen), "other": list(c.other)}
                          for c in job.attr.conflicts[:20]],
        },
    }


def _ranks(job: Job) -> list[dict[str, Any]]:
    tl = job.timeline
    per: dict[int, _RankRow] = {}
    # one dict operation per event: count distinct shapes, then fold them per rank
    shapes: dict[tuple, list] = {}
    for i, ev in enumerate(job.events):
        r = ev.rank
        if r is None or is_agent(ev):
            continue
        key = (r, ev.host, ev.pid if ev.kind.startswith("nccl.") else None, ev.local_rank, ev.node_rank, ev.file,
               ev.attempt, ev.rank_source)
        slot = shapes.get(key)
        lo = tl.lo_at(i)
        if slot is None:
            shapes[key] = [1 + ev.folds, 1 if is_failure(ev) else 0, lo]
        else:
            slot[0] += 1 + ev.folds
            if is_failure(ev):
                slot[1] += 1
            if lo is not None and (slot[2] is None or lo > slot[2]):
                slot[2] = lo
    for (r, host, pid, lr, nr, file, att, src), (count, errors, last) in shapes.items():
        d = per.get(r)
        if d is None:
            d = per[r] = _RankRow()
        d.events += count
        d.errors += errors
        if host:
            d.hosts = _with(d.hosts, short_host(host))
        if pid is not None:
            d.pids = _with(d.pids, pid)
        if lr is not None:
            d.local_rank = _with(d.local_rank, lr)
        if nr is not None:
            d.node_rank = _with(d.node_rank, nr)
        d.files = _with(d.files, file)
        if att is not None:
            d.attempts = _with(d.attempts, att)
        if src:
            d.sources = _with(d.sources, src)
        if last is not None and (d.last is None or last > d.last):
            d.last = last
    del shapes
    for i in job.by_kind.get("nccl.comm_init", ()):
        ev = job.events[i]
        d = per.get(ev.rank) if ev.rank is not None else None
        if d is not None and job.world_size and as_int(ev.fields.get("nranks")) == job.world_size:
            if ev.fields.get("bus_id") is not None:
                d.bus_id = _with(d.bus_id, str(ev.fields["bus_id"]))
            if ev.fields.get("cuda_dev") is not None:
                d.cuda_dev = _with(d.cuda_dev, as_int(ev.fields["cuda_dev"]))
    for p, r in enumerate(job.attr.proc_rank):
        d = per.get(r)
        if d is not None:
            for pid in job.attr.proc_pids[p]:
                d.pids = _with(d.pids, pid)
    out = []
    one = lambda s: (sorted(s)[0] if len(s) == 1 else (sorted(s) if s else None))  # noqa: E731
    for r in sorted(per):
        d = per[r]
        out.append(keyed({  # a row per rank: its names held once for the job
            "rank": r,
            "host": one(d.hosts),
            "hosts": sorted(d.hosts),
            "pids": sorted(d.pids),
            "local_rank": one(d.local_rank),
            "node_rank": one(d.node_rank),
            "bus_id": one(d.bus_id),
            "cuda_dev": one(tuple(x for x in d.cuda_dev if x is not None)),
            "files": list(d.files),
            "attempts": sorted(d.attempts),
            "events": d.events,
            "errors": d.errors,
            "last_activity": tl.iso_seconds(d.last),
            "rank_sources": sorted(d.sources),
        }))
    return out


class _RankRow:
    """What :func:`_ranks` gathers of one rank before its row is written: the distinct values seen of
    each name as a tuple in the order first seen (a rank has one host, one pid, one file, mostly: a set
    and a dict each, as before, cost about 2.5 kB a rank, 25 MB at 10,000 ranks at the peak of
    ``analyze``), the counts, and the last second of activity."""

    __slots__ = ("hosts", "pids", "local_rank", "node_rank", "bus_id", "cuda_dev", "files", "attempts", "sources",
                 "events", "errors", "last")

    def __init__(self) -> None:
        self.hosts = self.pids = self.local_rank = self.node_rank = self.bus_id = self.cuda_dev = ()
        self.files = self.attempts = self.sources = ()
        self.events = self.errors = 0
        self.last: int | None = None


def _with(values: tuple, v: Any) -> tuple:
    """``values`` with ``v`` added at its end, unless it holds it already."""
    return values if v in values else values + (v,)


def _files(job: Job) -> list[dict[str, Any]]:
    per: dict[str, dict[str, Any]] = {}
    for name in job.attr.paths:
        per[name] = {"file": name, "ranks": set(), "events": 0}
    for ev in job.events:
        d = per.setdefault(ev.file, {"file": ev.file, "ranks": set(), "events": 0})
        d["events"] += 1 + ev.folds
        if ev.rank is not None:
            d["ranks"].add(ev.rank)
    out = []
    for name, d in per.items():
        pi = job.attr.paths.get(name)
        out.append(keyed({"file": name, "ranks": sorted(d["ranks"])[:64], "events": d["events"],
                          "named_as": pi.how if pi else None}))
    return out


def _attempts(job: Job) -> list[dict[str, Any]]:
    per: dict[int, list[Event]] = {}
    for ev in job.events:
        if ev.attempt is not None:
            per.setdefault(ev.attempt, []).append(ev)
    out = []
    for a in sorted(per):
        evs = per[a]
        ff = first_failure(job.timeline, [e for e in evs if is_failure(e)])
        out.append({
            "attempt": a,
            "ranks": sorted({e.rank for e in evs if e.rank is not None}),
            "files": list(dict.fromkeys(e.file for e in evs))[:64],
            "events": sum(1 + e.folds for e in evs),
            "first_failure": ff.to_dict() if ff else None,
        })
    return out


# -- communicators -----------------------------------------------------------------------------------

def communicators(job: Job, progress_tables: dict[str, Any]) -> list[dict[str, Any]]:
    events = job.events
    # NCCL communicators, per process in creation order
    per_proc: dict[tuple, list[str]] = {}       # (host, pid) -> [pointer, ...] in order
    info: dict[tuple, dict[str, Any]] = {}      # (host, pid, pointer) -> fields + state
    idxs = sorted([*job.by_kind.get("nccl.comm_init", ()), *job.by_kind.get("nccl.comm_info", ())],
                  key=lambda i: (events[i].file, events[i].line))
    for i in idxs:
        ev = events[i]
        ptr = ev.fields.get("comm")
        if not ptr or ev.pid is None:
            continue
        pk = (short_host(ev.host), ev.pid)
        lst = per_proc.setdefault(pk, [])
        if ptr not in lst:
            lst.append(ptr)
        d = info.setdefault((pk[0], pk[1], ptr), {"phases": set(), "rank": None, "nranks": None, "comm_id": None,
                                                 "global": None, "evs": [], "nnodes": None, "parent": None})
        f = ev.fields
        if f.get("phase"):
            d["phases"].add(f["phase"])
        d["rank"] = as_int(f.get("rank")) if d["rank"] is None else d["rank"]
        d["nranks"] = as_int(f.get("nranks")) if d["nranks"] is None else d["nranks"]
        d["comm_id"] = d["comm_id"] or f.get("comm_id")
        d["nnodes"] = d["nnodes"] or as_int(f.get("nnodes"))
        d["parent"] = d["parent"] or f.get("parent")
        if ev.rank is not None:
            d["global"] = ev.rank
        d["evs"].append(ev)
    groups: dict[Any, dict[str, Any]] = {}
    for pk, ptrs in per_proc.items():
        for idx, ptr in enumerate(ptrs):
            d = info[(pk[0], pk[1], ptr)]
            gkey = ("id", d["comm_id"]) if d["comm_id"] else ("order", idx, d["nranks"])
            g = groups.setdefault(gkey, {"comm_id": d["comm_id"], "size": d["nranks"], "members": set(), "hosts": set(),
                                         "pointers": {}, "started": 0, "complete": 0, "index": idx, "procs": set(),
                                         "nnodes": d["nnodes"], "split": bool(d["parent"]), "evs": []})
            g["index"] = min(g["index"], idx)
            if d["global"] is not None:
                g["members"].add(d["global"])
            if pk[0]:
                g["hosts"].add(pk[0])
            who = d["global"] if d["global"] is not None else f"{pk[0]}:{pk[1]}"
            if len(g["pointers"]) < MAX_POINTERS:
                g["pointers"][str(who)] = ptr
            g["started"] += 1 if ("START" in d["phases"] or "COMPLETE" in d["phases"]) else 0
            g["complete"] += 1 if "COMPLETE" in d["phases"] else 0
            g["procs"].add(pk)
            g["evs"].extend(d["evs"][:1])
    nccl_groups = sorted(groups.values(), key=lambda g: (g["index"], str(g["comm_id"])))
    # torch process groups
    pgs: dict[str, dict[str, Any]] = {}
    for i, key in job.pg_key.items():
        ev = events[i]
        g = pgs.setdefault(key, {"ranks": set(), "failed": False, "fail_ranks": set(), "seqs": set(), "ops": set(),
                                 "evidence": [], "kinds": set(), "time": None})
        if ev.rank is not None:
            g["ranks"].add(ev.rank)
        if ev.kind in _FAIL_KINDS:
            g["failed"] = True
            if ev.rank is not None:
                g["fail_ranks"].add(ev.rank)
            s = as_int(ev.fields.get("seq"))
            if s is not None:
                g["seqs"].add(s)
            if ev.fields.get("op_type"):
                g["ops"].add(str(ev.fields["op_type"]))
            g["kinds"].add(ev.kind)
            if len(g["evidence"]) < 20:
                g["evidence"].append(ev)
            t = job.timeline.seconds(ev)
            if t is not None and (g["time"] is None or t < g["time"]):
                g["time"] = t
    for key in job.pg_desc:
        pgs.setdefault(key, {"ranks": set(), "failed": False, "fail_ranks": set(), "seqs": set(), "ops": set(),
                             "evidence": [], "kinds": set(), "time": None})
    # links: by pointer (torch printed it), else by creation order
    link: dict[str, tuple[int, str]] = {}
    ptr_group: dict[tuple, int] = {}
    for (h, pid, ptr), d in info.items():
        for gi, g in enumerate(nccl_groups):
            if (h, pid) in g["procs"] and ptr in g["pointers"].values():
                ptr_group[(h, pid, ptr)] = gi
                break
    for i, key in job.pg_key.items():
        ev = events[i]
        if "ncclComm" not in ev.text:
            continue
        m = _PTR.search(ev.text)
        if not m:
            continue
        ptr = m.group(1).lower()
        for (h, pid, p), gi in ptr_group.items():
            if p.lower() == ptr and (ev.pid is None or ev.pid == pid) and (not ev.host or short_host(ev.host) == h):
                link[key] = (gi, "pointer")
                break
    numeric = sorted((k for k in pgs if k.isdigit() and k not in link), key=int)
    free_groups = [gi for gi in range(len(nccl_groups)) if gi not in {v[0] for v in link.values()}]
    counts = {len(ptrs) for ptrs in per_proc.values()}
    if numeric and len(numeric) == len(free_groups) and counts == {len(nccl_groups)}:
        for key, gi in zip(numeric, free_groups):
            link[key] = (gi, "order")
    out: list[dict[str, Any]] = []
    linked_groups = {v[0]: k for k, v in link.items()}
    pg_done = set()
    for gi, g in enumerate(nccl_groups):
        key = linked_groups.get(gi)
        entry = _nccl_entry(g, gi)
        if key is not None:
            entry.update(_pg_entry(job, key, pgs[key], progress_tables))
            entry["link"] = link[key][1]
            pg_done.add(key)
            entry["id"] = _pg_id(job, key)
        out.append(entry)
    for key in sorted(pgs, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k)):
        if key in pg_done:
            continue
        entry = {"id": _pg_id(job, key), "nccl_comm_id": None, "size": None, "members": sorted(pgs[key]["ranks"]),
                 "hosts": [], "pointers": {}, "init": None, "link": None}
        entry.update(_pg_entry(job, key, pgs[key], progress_tables))
        out.append(entry)
    return out


def _pg_id(job: Job, key: str) -> str:
    return job.pg_label(key)


def _nccl_entry(g: dict[str, Any], gi: int) -> dict[str, Any]:
    return {
        "id": g["comm_id"] or f"comm#{gi}",
        "nccl_comm_id": g["comm_id"],
        "size": g["size"],
        "members": sorted(g["members"]),
        "hosts": sorted(g["hosts"]),
        "nnodes": g["nnodes"],
        "pointers": g["pointers"],
        "init": {"started": g["started"], "complete": g["complete"]},
        "split": g["split"],
        "creation_index": g["index"],
        "pg_id": None,
        "description": None,
        "link": None,
        "failed": False,
        "failure": None,
    }


def _pg_entry(job: Job, key: str, pg: dict[str, Any], progress_tables: dict[str, Any]) -> dict[str, Any]:
    failure = None
    if pg["failed"]:
        failure = {
            "ranks": sorted(pg["fail_ranks"]),
            "seq": min(pg["seqs"]) if pg["seqs"] else None,
            "op_types": sorted(pg["ops"]),
            "kinds": sorted(pg["kinds"]),
            "time": job.timeline.iso_seconds(pg["time"]),
            "evidence": [[e.file, e.line] for e in sorted(pg["evidence"], key=job.timeline.key)],
            "nccl_warnings": _nccl_warnings(job, pg),
            "progress": progress_tables.get(key, {}).get("table"),
        }
    return {
        "pg_id": key,
        "description": job.pg_desc.get(key),
        "pg_ranks_seen": sorted(pg["ranks"]),
        "failed": pg["failed"],
        "failure": failure,
    }


def _nccl_warnings(job: Job, pg: dict[str, Any]) -> list[dict[str, Any]]:
    """NCCL WARN lines of the failing processes in the same second as (or just before) the group's failure."""
    procs = {job.attr.proc_of[job.index(e)] for e in pg["evidence"] if job.index(e) is not None}
    t = pg["time"]
    out = []
    for i in job.by_kind.get("nccl.warn", ()):
        if job.attr.proc_of[i] not in procs:
            continue
        ev = job.events[i]
        s = job.timeline.seconds(ev)
        if t is not None and s is not None and not (t - 5 <= s <= t):
            continue
        out.append({"file": ev.file, "line": ev.line, "rank": ev.rank, "text": shorten(ev.text.split("\n", 1)[0], 300)})
        if len(out) >= 10:
            break
    return out


def agreement(job: Job, vers: dict, env: dict, printers: set, transports: dict, interfaces: dict) -> list[dict[str, Any]]:
    """What the ranks (hosts) agree and disagree on, one row per aspect."""
    rows = []
    for comp, label in (("nccl", "NCCL version"), ("cuda", "CUDA (NCCL build)"), ("cuda_driver", "CUDA driver"),
                        ("torch", "PyTorch version")):
        vs = vers.get(comp)
        if vs:
            rows.append({"aspect": label, "agree": len(vs) == 1,
                         "values": {v: d["ranks"] or d["hosts"] or d["processes"] for v, d in vs.items()}})
    for name, vals in sorted(env.items()):
        full = dict(vals)
        if name in ALWAYS_PRINTED:
            for w in printers:
                full.setdefault(w, NOT_PRINTED)
        values: dict[str, list] = {}
        for w, v in full.items():
            values.setdefault(v, []).append(w)
        rows.append({"aspect": name, "agree": len(values) == 1,
                     "values": {v: _sorted_mixed(ws) for v, ws in sorted(values.items())}})
    for key, label in (("network", "network (Using network)"), ("net", "NET transport")):
        per = {h: ",".join(d.get(key) or []) for h, d in transports.items() if d.get(key)}
        if per:
            values = {}
            for h, v in per.items():
                values.setdefault(v, []).append(h)
            rows.append({"aspect": label, "agree": len(values) == 1, "values": {v: sorted(hs) for v, hs in values.items()}})
    per = {h: ",".join(sorted(d.get("socket") or {})) for h, d in interfaces.items() if d.get("socket")}
    if per:
        values = {}
        for h, v in per.items():
            values.setdefault(v, []).append(h)
        rows.append({"aspect": "socket interface", "agree": len(values) == 1,
                     "values": {v: sorted(hs) for v, hs in values.items()}})
    return rows
