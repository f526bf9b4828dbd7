"""What the ranks (or hosts) do not agree on: versions, NCCL_* settings, transports, interfaces,
communicator sizes, GPUs.

Every finding is an ``analysis.*`` event whose ``values`` maps each value to the ranks (or, for
host-level facts, the hosts) that printed it. A rank is named by its number; a process whose rank is
unknown by ``host:pid``; a host by its short name. Nothing is reported when only one value was seen.

One module, over 500 lines: every finding is the same computation (facts per rank or host, values mapped to
ranks, the minority against a uniform majority, worded with the majority as a count), and its parts share
those tables and helpers (``_values``, ``_minority``, ``_describe``, ``host_ranks``).
"""
from __future__ import annotations

import ipaddress
from array import array
import re
from typing import Any, Iterable

from ..events import Event
from .common import as_int, gated, is_agent, ranks_text, short_host, synthetic
from .ranges import mapping_text
from .cascade import first_failure, is_failure
from .job import Job
from ..lazyre import lazy_re

_NCCL_VERSION_TEXT = lazy_re(r"NCCL version:? (\d+\.\d+\.\d+)")
_TORCH_VERSION = lazy_re(r"torch==(\d+\.\d+[\w.+-]*)")
_DRIVER = lazy_re(r"cudaDriverVersion (\d+)")
_GDR_LINE = lazy_re(r"GPU Direct RDMA (Enabled|Disabled) for")
_PG_SIZE = lazy_re(r"\bsize: (\d+), global rank: (\d+).*?PG Name: (\S+)", re.S)
FORCED = ("NCCL_PROTO", "NCCL_ALGO")
# printed at every communicator init when set, so "not printed" on a rank that printed others means unset
ALWAYS_PRINTED = {"NCCL_PROTO", "NCCL_ALGO", "NCCL_SOCKET_IFNAME", "NCCL_NET_PLUGIN", "NCCL_IB_DISABLE",
                  "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_SOCKET_FAMILY", "NCCL_NET", "NCCL_IB_HCA",
                  "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL", "NCCL_CROSS_NIC", "NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"}
NOT_PRINTED = "(unset)"


def who(ev: Event) -> Any:
    """How a process is named in ``values``: its rank, else ``host:pid``, else the host or file."""
    if ev.rank is not None:
        return ev.rank
    h = short_host(ev.host)
    if h and ev.pid is not None:
        return f"{h}:{ev.pid}"
    return h or ev.file


def _sorted_whos(items: Iterable) -> list:
    ints = sorted(x for x in items if isinstance(x, int))
    strs = sorted(str(x) for x in items if not isinstance(x, int))
    return ints + strs


def _values(pairs: dict[Any, str]) -> dict[str, list]:
    out: dict[str, set] = {}
    for w, v in pairs.items():
        out.setdefault(v, set()).add(w)
    return {v: _sorted_whos(ws) for v, ws in sorted(out.items())}


def _ranks_hosts(job: Job, evs_by_who: dict[Any, list[Event]], whos: Iterable) -> tuple[list[int], list[str]]:
    ranks, hosts = set(), set()
    for w in whos:
        for ev in evs_by_who.get(w, ()):
            if ev.rank is not None:
                ranks.add(ev.rank)
            if ev.host:
                hosts.add(short_host(ev.host))
    return sorted(ranks), sorted(hosts)


def _minority(values: dict[str, list], job: Job | None = None, hosts: bool = False) -> list:
    """The odd group: the smallest one. When several are equally small, the one where the job's first
    failure is; when that does not decide either, all of them (the finding is symmetric)."""
    if not values:
        return []
    groups = list(values.values())
    small = min(len(g) for g in groups)
    tied = [g for g in groups if len(g) == small]
    if len(tied) == 1 or job is None:
        return tied[0]
    hr = host_ranks(job) if hosts else {}
    member_ranks = [{r for w in g for r in (hr.get(w, ()) if hosts else ([w] if isinstance(w, int) else []))}
                    for g in tied]
    union = set().union(*member_ranks)
    failures = job.cache.get("failure_idx")
    if failures is None:
        failures = job.cache["failure_idx"] = _failure_idx(job)
    ff = first_failure(job.timeline, [job.events[i] for i in failures if job.events[i].rank in union])
    hit = [g for g, rs in zip(tied, member_ranks) if ff and set(ff.ranks) & rs]
    if len(hit) == 1:
        return hit[0]
    return _sorted_whos({w for g in tied for w in g})


def _describe(values: dict[str, list]) -> str:
    if sum(len(ws) for ws in values.values()) > 16:  # a big job: the majority as a count, the minority listed
        return mapping_text(values)
    parts = []
    for v, ws in values.items():
        ints = [w for w in ws if isinstance(w, int)]
        strs = [str(w) for w in ws if not isinstance(w, int)]
        names = []
        if ints:
            names.append(ranks_text(ints))
        names.extend(strs)
        parts.append(f"{v} on {', '.join(names)}")
    return "; ".join(parts)


def analyze(job: Job) -> list[Event]:
    out: list[Event] = []
    out.extend(_versions(job))
    out.extend(_env(job))
    out.extend(_transports(job))
    out.extend(_interfaces(job))
    out.extend(_nranks(job))
    out.extend(_duplicate_gpu(job))
    return out


# -- versions ----------------------------------------------------------------------------------------

def versions(job: Job) -> dict[str, tuple[dict[Any, str], dict[Any, list[Event]]]]:
    """component -> ({who: version}, {who: [events]}). Components: nccl, cuda (NCCL's build), cuda_driver, torch."""
    comp: dict[str, tuple[dict, dict]] = {c: ({}, {}) for c in ("nccl", "cuda", "cuda_driver", "torch")}

    def put(c: str, w: Any, v: str, ev: Event) -> None:
        vals, evs = comp[c]
        if w not in vals:
            vals[w] = v
        evs.setdefault(w, []).append(ev)

    bare: list[Event] = []
    for i in job.by_kind.get("nccl.version", ()):
        ev = job.events[i]
        if ev.fields.get("source"):
            continue  # a release stated elsewhere (collect_env's packages, vLLM): no process's banner
        if ev.rank is None and not ev.host:
            bare.append(ev)  # the <= 2.21 banner (no prefix): judged below
            continue
        v = ev.fields.get("version")
        if v:
            put("nccl", who(ev), f"{v}{ev.fields.get('suffix') or ''}", ev)
        c = ev.fields.get("cuda")
        if c:
            put("cuda", who(ev), str(c), ev)
    from ..kb.versions import nccl_release

    # the version PyTorch prints in its NCCL errors (a field where the grammar read it, else its words in
    # whatever quotes it: a communicator aborted for an earlier error, a watchdog's exception), the
    # release undone from the misprint of PyTorch up to 1.10 (21.0.3 for 2.10.3)
    quoting = sorted(k for k in job.by_kind if k.startswith("torch.") and k not in ("torch.nccl_error",
                                                                                     "torch.async_exception",
                                                                                     "torch.pg_info"))
    for kind in ("torch.nccl_error", "torch.async_exception", "torch.pg_info", *quoting):
        for i in job.by_kind.get(kind, ()):
            ev = job.events[i]
            w = who(ev)
            if w in comp["nccl"][0]:
                continue
            v = ev.fields.get("nccl_version")
            if not v and "NCCL version" in (ev.text or ""):
                m = _NCCL_VERSION_TEXT.search(ev.text)
                v = nccl_release(m.group(1)) if m else None
            if v:
                put("nccl", w, str(v).split("+")[0], ev)
    known_in_file: dict[str, set] = {}
    for w, evs in comp["nccl"][1].items():
        for ev in evs:
            known_in_file.setdefault(ev.file, set()).add(comp["nccl"][0][w])
    for ev in bare:
        v = ev.fields.get("version")
        if not v:
            continue
        val = f"{v}{ev.fields.get('suffix') or ''}"
        if ev.fields.get("cuda"):
            put("cuda", who(ev), str(ev.fields["cuda"]), ev)
        if val in known_in_file.get(ev.file, ()):  # the same version is printed with a prefix in that file
            continue
        put("nccl", who(ev), val, ev)
    for i in job.by_kind.get("nccl.info", ()):
        ev = job.events[i]
        if "cudaDriverVersion" in ev.text:
            m = _DRIVER.search(ev.text)
            if m:
                put("cuda_driver", who(ev), m.group(1), ev)
    for kind in ("torch.exception", "torchrun.child_failed"):
        for i in job.by_kind.get(kind, ()):
            ev = job.events[i]
            if "torch==" not in ev.text:
                continue
            m = _TORCH_VERSION.search(ev.text)
            if not m:
                continue
            host = short_host(ev.host)
            if host is None:
                hs = {short_host(f.get("host")) for f in ev.fields.get("failures") or () if isinstance(f, dict)}
                hs.discard(None)
                host = next(iter(hs)) if len(hs) == 1 else None
            put("torch", host or ev.file, m.group(1).rstrip("'\""), ev)
    return comp


def _versions(job: Job) -> list[Event]:
    out = []
    for component, (vals, evs) in versions(job).items():
        if len(set(vals.values())) < 2:
            continue
        # compare the NCCL release without suffix first; a suffix-only difference still counts
        values = _values(vals)
        ranks_by, hosts_by = {}, {}
        for v, ws in values.items():
            r, h = _ranks_hosts(job, evs, ws)
            ranks_by[v], hosts_by[v] = r, h
        minority = _minority(values, job)
        mr, mh = _ranks_hosts(job, evs, minority)
        evidence = [evs[w][0] for ws in values.values() for w in ws]
        name = {"nccl": "NCCL version", "cuda": "CUDA version NCCL was built with", "cuda_driver": "CUDA driver version",
                "torch": "PyTorch version"}[component]
        text = f"{name} differs across the job: {_describe(values)}"
        out.append(synthetic("analysis.version_mismatch", text, evidence, level="WARN", on_ranks=mr, on_hosts=mh,
                             component=component, versions=sorted(values), by_version=values,
                             ranks_by_version=ranks_by, hosts_by_version=hosts_by, minority=minority,
                             minority_ranks=mr, minority_hosts=mh))
    return out


# -- NCCL_* settings -------------------------------------------------------------------------------------

def env_settings(job: Job) -> tuple[dict[str, dict[Any, str]], dict[Any, list[Event]], set]:
    """name -> {who: value}; who -> events; the whos that printed any setting."""
    per: dict[str, dict[Any, str]] = {}
    evs: dict[Any, list[Event]] = {}
    printers: set = set()
    for i in job.by_kind.get("nccl.env", ()):
        ev = job.events[i]
        if ev.fields.get("from_environment") is False or ev.fields.get("source") == "shell":
            continue  # (a shell's printout of the environment is no process's report of what it read)
        name, value = ev.fields.get("name"), ev.fields.get("value")
        if not name:
            continue
        w = who(ev)
        printers.add(w)
        per.setdefault(str(name), {}).setdefault(w, str(value))
        evs.setdefault(w, []).append(ev)
    return per, evs, printers


def _env(job: Job) -> list[Event]:
    per, evs, printers = env_settings(job)
    out = []
    if len(printers) < 2:
        return out
    for name, vals in sorted(per.items()):
        full = dict(vals)
        if name in ALWAYS_PRINTED:
            for w in printers:
                full.setdefault(w, NOT_PRINTED)
        distinct = set(full.values())
        ev_list = [e for w in full for e in evs.get(w, ()) if e.fields.get("name") == name]
        values = _values(full)
        if len(distinct) > 1:
            minority = _minority(values, job)
            mr, mh = _ranks_hosts(job, evs, minority)
            text = f"{name} differs between ranks: {_describe(values)}"
            out.append(synthetic("analysis.env_disagreement", text, ev_list, level="WARN", on_ranks=mr, on_hosts=mh,
                                 name=name, values=values, forced=name in FORCED, minority=minority))
        if name in FORCED and any(v != NOT_PRINTED for v in distinct):
            agree = len(distinct) == 1
            text = (f"{name} is forced to {next(iter(distinct))} on every rank that printed its settings" if agree
                    else f"{name} is forced on some ranks only or to different values: {_describe(values)}")
            out.append(synthetic("analysis.env_forced", text, ev_list, level="INFO", name=name, values=values,
                                 agree=agree))
    return out


# -- transports -----------------------------------------------------------------------------------------

def transport_facts(job: Job) -> dict[str, dict[str, Any]]:
    """Per host: networks, transports (with counts), GDR use, GPU Direct RDMA support lines, IB devices."""
    cached = job.cache.get("transport_facts")
    if cached is not None:
        return cached
    hosts: dict[str, dict[str, Any]] = {}
    job.cache["transport_facts"] = hosts

    def h_of(ev: Event) -> str | None:
        return short_host(ev.host)

    def slot(h: str) -> dict[str, Any]:
        d = hosts.get(h)
        if d is None:
            d = hosts[h] = {"network": set(), "net": set(), "gdr": set(), "transports": {}, "gdr_support": set(),
                            "ib_devices": None, "ring_gdr": set(), "peers": {}, "_evs": {}}
        return d

    for i in job.by_kind.get("nccl.connection", ()):
        ev = job.events[i]
        h = h_of(ev)
        if not h:
            continue
        d = slot(h)
        f = ev.fields
        t = str(f.get("transport") or "")
        d["transports"][t] = d["transports"].get(t, 0) + 1
        net = f.get("net")
        if net:
            d["net"].add(str(net))
            d["gdr"].add(bool(f.get("gdr")))
            d["_evs"].setdefault("net", ev)
            d["_evs"].setdefault(("gdr", bool(f.get("gdr"))), ev)
        if len(d["peers"]) < 64:
            d["peers"].setdefault(f"{f.get('src_rank')}->{f.get('dst_rank')}", t)
    for i in job.by_kind.get("nccl.using_network", ()):
        ev = job.events[i]
        h = h_of(ev)
        if h:
            d = slot(h)
            d["network"].add(str(ev.fields.get("network")))
            d["_evs"].setdefault("network", ev)
    for i in job.by_kind.get("nccl.connected_all_rings", ()):
        ev = job.events[i]
        h = h_of(ev)
        g = as_int(ev.fields.get("gdr"))
        if h and g is not None:
            d = slot(h)
            d["ring_gdr"].add(g)
            d["_evs"].setdefault(("ring_gdr", g), ev)
    for i in job.by_kind.get("nccl.net_ib", ()):
        ev = job.events[i]
        h = h_of(ev)
        if h:
            d = slot(h)
            names = sorted({str(x.get("name")) for x in ev.fields.get("devices") or () if isinstance(x, dict)})
            d["ib_devices"] = sorted(set(d["ib_devices"] or []) | set(names))
            d["_evs"].setdefault("ib", ev)
    for i in job.by_kind.get("nccl.info", ()):
        ev = job.events[i]
        text = ev.text
        h = h_of(ev)
        if not h:
            continue
        if "NET/IB : No device found" in text:
            d = slot(h)
            if d["ib_devices"] is None:
                d["ib_devices"] = []
            d["_evs"].setdefault("ib", ev)
        elif "GPU Direct RDMA" in text:
            m = _GDR_LINE.search(text)
            if m:
                d = slot(h)
                d["gdr_support"].add(m.group(1))
                d["_evs"].setdefault(("gdr_support", m.group(1)), ev)
    return hosts


def host_ranks(job: Job) -> dict[str, set]:
    cached = job.cache.get("host_ranks")
    if cached is not None:
        return cached
    out: dict[str, set] = {}
    job.cache["host_ranks"] = out
    for ev in job.events:
        if ev.host and ev.rank is not None and not is_agent(ev):
            out.setdefault(short_host(ev.host), set()).add(ev.rank)
    return out


def _by_host_values(job: Job, per_host: dict[str, str], hr: dict[str, set]) -> tuple[dict, dict]:
    """value -> ranks (the ranks on those hosts; host names when no rank is known), value -> hosts."""
    hosts = _values(per_host)
    ranks: dict[str, list] = {}
    for v, hs in hosts.items():
        rs = sorted({r for h in hs for r in hr.get(h, ())})
        ranks[v] = rs if rs else list(hs)
    return ranks, hosts


def _transports(job: Job) -> list[Event]:
    facts = transport_facts(job)
    if len(facts) < 2:
        return []
    hr = host_ranks(job)
    by_host = {h: _plain(d) for h, d in facts.items()}
    out = []

    def emit(aspect: str, per_host: dict[str, str], what: str, ev_keys: tuple) -> None:
        if len(per_host) < 2 or len(set(per_host.values())) < 2:
            return
        values, hosts = _by_host_values(job, per_host, hr)
        minority_hosts = _minority(hosts, job, hosts=True)
        evidence = []
        for v, hs in hosts.items():
            for h in hs:
                for k in ev_keys:
                    e = facts[h]["_evs"].get(k) if not callable(k) else facts[h]["_evs"].get(k(v))
                    if e is not None:
                        evidence.append(e)
                        break
        text = f"{what} differs between hosts: {_describe(hosts)}"
        out.append(synthetic("analysis.transport_disagreement", text, evidence, level="WARN",
                             on_ranks=sorted({r for h in minority_hosts for r in hr.get(h, ())}), on_hosts=minority_hosts,
                             aspect=aspect, values=values, hosts=hosts, by_host=by_host, minority=minority_hosts,
                             minority_hosts=minority_hosts))

    network = {}
    for h, d in facts.items():
        nets = set(d["network"]) | set(d["net"])
        if nets:
            network[h] = ",".join(sorted(nets))
    emit("network", network, "the network NCCL uses (Using network / NET transport)", ("network", "net"))
    gdr = {}
    for h, d in facts.items():
        if "IB" not in (set(d["network"]) | set(d["net"])):
            continue
        if d["gdr"]:
            gdr[h] = "GDRDMA" if d["gdr"] == {True} else ("no GDRDMA" if d["gdr"] == {False} else "GDRDMA on some connections")
        elif d["ring_gdr"]:
            gdr[h] = "GDRDMA" if 1 in d["ring_gdr"] else "no GDRDMA"
    emit("gdr", gdr, "GPUDirect RDMA on the NET/IB connections",
         (lambda v: ("gdr", v == "GDRDMA"), lambda v: ("ring_gdr", 1 if v == "GDRDMA" else 0), "net"))
    emit("gdr_support", {h: ",".join(sorted(d["gdr_support"])) for h, d in facts.items() if d["gdr_support"]},
         "GPU Direct RDMA support", (lambda v: ("gdr_support", v.split(",")[0]),))
    emit("ib_devices", {h: (",".join(d["ib_devices"]) or "none") for h, d in facts.items() if d["ib_devices"] is not None},
         "the IB/RoCE devices NCCL found", ("ib",))
    return out


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if k.startswith("_"):
            continue
        out[k] = sorted(v, key=str) if isinstance(v, set) else v
    return out


# -- interfaces and addresses -------------------------------------------------------------------------

def _subnet(addr: str) -> str | None:
    a = addr.split("%")[0].strip("[]")
    try:
        ip = ipaddress.ip_address(a)
    except ValueError:
        return None
    if ip.version == 4:
        return str(ipaddress.ip_network(f"{a}/24", strict=False))
    if ip.is_link_local:
        return "fe80::/64"
    return str(ipaddress.ip_network(f"{a}/64", strict=False))


def interface_facts(job: Job) -> dict[str, dict[str, Any]]:
    cached = job.cache.get("interface_facts")
    if cached is not None:
        return cached
    hosts: dict[str, dict[str, Any]] = {}
    job.cache["interface_facts"] = hosts

    def slot(h: str) -> dict[str, Any]:
        d = hosts.get(h)
        if d is None:
            d = hosts[h] = {"socket": {}, "bootstrap": {}, "ib_oob": {}, "_evs": {}}
        return d

    for i in job.by_kind.get("nccl.net_socket", ()):
        ev = job.events[i]
        h = short_host(ev.host)
        if not h:
            continue
        d = slot(h)
        for itf in ev.fields.get("interfaces") or ():
            if isinstance(itf, dict):
                d["socket"][str(itf.get("name"))] = str(itf.get("addr"))
        d["_evs"].setdefault("socket", ev)
    for i in job.by_kind.get("nccl.bootstrap", ()):
        ev = job.events[i]
        h = short_host(ev.host)
        if h and ev.fields.get("name"):
            d = slot(h)
            d["bootstrap"][str(ev.fields["name"])] = str(ev.fields.get("addr"))
            d["_evs"].setdefault("bootstrap", ev)
    for i in job.by_kind.get("nccl.net_ib", ()):
        ev = job.events[i]
        h = short_host(ev.host)
        if h and ev.fields.get("oob_if"):
            d = slot(h)
            d["ib_oob"][str(ev.fields["oob_if"])] = str(ev.fields.get("oob_addr"))
            d["_evs"].setdefault("ib_oob", ev)
    return hosts


_VIRTUAL = lazy_re(r"^(docker\d*|br-[0-9a-f]+|virbr\d*|veth\w*|cni\d*|flannel[\w.]*|lxcbr\d*)$")


def _special(name: str, addr: str) -> str | None:
    a = addr.split("%")[0].strip("[]")
    if name == "lo" or a.startswith("127.") or a == "::1":
        return "loopback"
    if _VIRTUAL.match(name) or a.startswith("172.17."):
        return "docker-bridge"
    return None


_IPV4 = lazy_re(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")
# a socket that could not be opened or kept: what a wrong or unrouted network does (not an IB transport error)
_CONNECT_FAIL = lazy_re(r"(?i)connect\w*\W[^\n]*?(?:fail|refused|timed?\s?out|unreachable|reset|closed)|"
                           r"connection (?:refused|timed out|reset|closed)|no route to host|network is unreachable|"
                           r"timed out (?:connecting|waiting for)")
_CONNECT_FAIL_SEARCH = gated(_CONNECT_FAIL)  # (common.gated: the same matches, most texts not searched)


def _connect_failures(job: Job, own_net: dict[str, set], net_hosts: dict[str, list]) -> list[tuple[Event, str, str]]:
    """Connect or timeout failures that join two of the job's networks: ``(event, its network, the peer's)``.

    The event's host is in one network; an address in its message is in another one that hosts of the job
    use. IB completion errors are not counted: they travel on the IB fabric, not on these addresses."""
    out: list[tuple[Event, str, str]] = []
    failures = job.cache.get("failure_idx")
    if failures is None:
        failures = job.cache["failure_idx"] = _failure_idx(job)
    seen: set = set()
    for i in failures:
        ev = job.events[i]
        text = ev.text
        if "NET/IB" in text or not _CONNECT_FAIL_SEARCH.search(text):
            continue
        h = short_host(ev.host)
        mine = own_net.get(h) if h else None
        if not mine:
            continue
        for addr in _IPV4.findall(text):
            peer = _subnet(addr)
            if peer is None or peer in mine or peer not in net_hosts:
                continue
            key = (min(mine), peer)
            if key not in seen:
                seen.add(key)
                out.append((ev, min(mine), peer))
            break
        if len(out) >= 8:
            break
    return out


def _interfaces(job: Job) -> list[Event]:
    """Interfaces and addresses that do not fit together. Reported:

    * ``name``: the hosts use differently named interfaces (one that only some nodes have);
    * ``subnet`` with ``basis``:
      - ``special``: a loopback or container-bridge address (never reachable from another host);
      - ``lone``: a few hosts alone in their networks against a majority that shares one;
      - ``failure``: a connect or timeout failure joins two of the networks.

    Hosts in many networks and nothing else is a routed cluster: not reported (``subnets`` are in the
    anatomy)."""
    facts = interface_facts(job)
    if len(facts) < 2:
        return []
    hr = host_ranks(job)
    by_host = {h: {k: v for k, v in d.items() if not k.startswith("_")} for h, d in facts.items()}
    chosen: dict[str, dict[str, str]] = {}
    for h, d in facts.items():
        ifs = d["socket"] or d["bootstrap"] or d["ib_oob"]
        if ifs:
            chosen[h] = ifs
    if len(chosen) < 2:
        return []
    key = {h: ",".join(f"{n}:{a}" for n, a in sorted(ifs.items())) for h, ifs in chosen.items()}
    names = {h: ",".join(sorted(ifs)) for h, ifs in chosen.items()}
    subnets: dict[str, str] = {}
    own_net: dict[str, set] = {}
    specials: dict[str, str] = {}
    for h, ifs in chosen.items():
        nets = set()
        for n, a in ifs.items():
            sp = _special(n, a)
            if sp:
                specials[h] = sp
            sn = _subnet(a)
            if sn:
                nets.add(sn)
        subnets[h] = ",".join(sorted(nets))
        own_net[h] = nets
    out = []

    def evidence_of(hs: Iterable[str], limit: int = 40) -> list[Event]:
        evidence = []
        for h in hs:
            e = facts[h]["_evs"].get("socket") or facts[h]["_evs"].get("bootstrap") or facts[h]["_evs"].get("ib_oob")
            if e is not None:
                evidence.append(e)
                if len(evidence) >= limit:
                    break
        return evidence

    def emit(aspect: str, what: str, per_host: dict[str, str], minority_hosts: list[str], extra: list[Event] = (),
             **fields: Any) -> None:
        values, hosts = _by_host_values(job, per_host, hr)
        # the odd hosts' lines first, then some of the others' for comparison
        evidence = list(extra) + evidence_of(minority_hosts) + evidence_of(h for h in chosen if h not in set(minority_hosts))
        text = f"{what}: {_describe(hosts)}"
        out.append(synthetic("analysis.interface_disagreement", text, evidence, level="WARN",
                             on_ranks=sorted({r for h in minority_hosts for r in hr.get(h, ())}), on_hosts=minority_hosts,
                             aspect=aspect, values=values, hosts=hosts, by_host=by_host, minority=minority_hosts,
                             minority_hosts=minority_hosts, subnets=_values(subnets), special=specials, **fields))

    if len(set(names.values())) > 1:
        _, name_hosts = _by_host_values(job, names, hr)
        emit("name", "the hosts use differently named interfaces for NCCL", names,
             _minority(name_hosts, job, hosts=True))
    if specials:
        kinds_ = "/".join(sorted(set(specials.values())))
        emit("subnet", f"some hosts use a {kinds_} address for NCCL, which other hosts cannot reach", key,
             sorted(specials), basis="special", reason=f"a {kinds_} address")
        return out
    if len(set(subnets.values())) < 2:
        return out
    net_hosts: dict[str, list] = {}
    for h, nets in own_net.items():
        for n in nets:
            net_hosts.setdefault(n, []).append(h)
    joined = _connect_failures(job, own_net, net_hosts)
    if joined:
        nets = sorted({n for _, a, b in joined for n in (a, b)})
        pairs = "; ".join(f"{a} to {b}" for _, a, b in joined[:3])
        involved = sorted({h for n in nets for h in net_hosts.get(n, ())})
        reporters = sorted({short_host(ev.host) for ev, _, _ in joined if ev.host})
        emit("subnet", f"a connection failed between hosts in different networks ({pairs}; /24 or /64: the netmask "
             "is not printed)", subnets, reporters or involved, extra=[ev for ev, _, _ in joined], basis="failure",
             networks=nets, reason="a connection failed across networks")
        return out
    by_net = _values(subnets)
    big = max(by_net.items(), key=lambda kv: len(kv[1]))
    rest = [h for n, hs in by_net.items() if n != big[0] for h in hs]
    # a lone minority: the others share one network and the odd hosts are few (at most a tenth, and
    # fewer than the majority by far); a routed cluster spread over many networks is not reported
    if (len(big[1]) >= 2 and len(big[1]) > 3 * len(rest) and len(rest) <= max(1, len(subnets) // 10)
            and sum(1 for n in by_net if n != big[0]) <= len(rest)):
        emit("subnet", f"{len(rest)} of {len(subnets)} hosts are alone in another network than the others "
             "(/24 or /64: the netmask is not printed)", subnets, sorted(rest), basis="lone", majority_network=big[0],
             reason=f"{len(rest)} host{'s' if len(rest) > 1 else ''} alone in another network")
    return out


# -- communicator sizes and membership ------------------------------------------------------------------

def _nranks(job: Job) -> list[Event]:
    out = []
    sizes_by: dict[str, dict[Any, str]] = {}
    claims: dict[str, dict[int, set]] = {}
    evs: dict[str, list[Event]] = {}
    for i in job.by_kind.get("nccl.comm_init", ()):
        ev = job.events[i]
        cid = ev.fields.get("comm_id")
        if not cid:
            continue
        cid = str(cid)
        n, r = as_int(ev.fields.get("nranks")), as_int(ev.fields.get("rank"))
        if n is not None:
            sizes_by.setdefault(cid, {})[who(ev)] = str(n)
        if r is not None:
            claims.setdefault(cid, {}).setdefault(r, set()).add(f"{short_host(ev.host)}:{ev.pid}")
        evs.setdefault(cid, []).append(ev)
    for cid in sorted(evs):
        sizes = sizes_by.get(cid, {})
        if len(set(sizes.values())) > 1:
            values = _values(sizes)
            out.append(synthetic("analysis.nranks_disagreement", f"communicator {cid}: nranks differs: {_describe(values)}",
                                 evs[cid], level="ERROR", on_ranks=[w for w in _minority(values) if isinstance(w, int)],
                                 aspect="nranks", comm_id=cid, values=values, minority=_minority(values)))
        dup = {str(r): sorted(ps) for r, ps in claims.get(cid, {}).items() if len(ps) > 1}
        if dup:
            out.append(synthetic("analysis.nranks_disagreement",
                                 f"communicator {cid}: the same rank is claimed by several processes: "
                                 + "; ".join(f"rank {r} by {', '.join(ps)}" for r, ps in dup.items()),
                                 evs[cid], level="ERROR", aspect="duplicate_rank", comm_id=cid, values=dup))
    # torch: the same process group name with different sizes
    sizes_pg: dict[str, dict[Any, str]] = {}
    evs_pg: dict[str, list[Event]] = {}
    for i in job.by_kind.get("torch.pg_info", ()):
        ev = job.events[i]
        m = _PG_SIZE.search(ev.text)
        if m:
            sizes_pg.setdefault(m.group(3), {})[who(ev)] = m.group(1)
            evs_pg.setdefault(m.group(3), []).append(ev)
    for name, vals in sorted(sizes_pg.items()):
        if len(set(vals.values())) > 1:
            values = _values(vals)
            out.append(synthetic("analysis.nranks_disagreement", f"process group {name}: size differs: {_describe(values)}",
                                 evs_pg[name], level="ERROR", aspect="pg_size", pg=name, values=values,
                                 minority=_minority(values)))
    return out


def _duplicate_gpu(job: Job) -> list[Event]:
    out = []
    seen: dict[tuple, dict[int, Event]] = {}
    for i in job.by_kind.get("nccl.comm_init", ()):
        ev = job.events[i]
        f = ev.fields
        bus, r = f.get("bus_id"), as_int(f.get("rank"))
        h = short_host(ev.host)
        if bus is None or r is None or not h:
            continue
        group = f.get("comm_id") or (f"nranks={f.get('nranks')}")
        seen.setdefault((str(group), h, str(bus)), {}).setdefault(r, ev)
    for (group, h, bus), ranks in sorted(seen.items()):
        evs = list(ranks.values())
        if len(ranks) > 1 and len({e.pid for e in evs}) > 1:
            global_ranks = sorted({e.rank for e in evs if e.rank is not None}) or sorted(ranks)
            out.append(synthetic("analysis.duplicate_gpu",
                                 f"{ranks_text(sorted(ranks))} of communicator {group} use the same GPU (busId {bus}) on {h}",
                                 evs, level="ERROR", on_ranks=global_ranks, on_hosts=[h], host=h, bus_id=bus,
                                 ranks=global_ranks, comm_ranks=sorted(ranks), comm_id=group))
    return out


__all__ = ["analyze", "versions", "env_settings", "transport_facts", "interface_facts", "who"]


def _failure_idx(job: Job) -> "array[int]":
    """The positions of the job's failure-like events (a 4-byte array: a failing job of many ranks has
    a few failure lines per rank)."""
    return array("i", (i for i, e in enumerate(job.events) if is_failure(e)))
