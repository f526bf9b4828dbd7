"""The job's shape as the log shows it: how many nodes, whether it runs in containers, which
transports NCCL chose, and ranks of several nodes that NCCL took for one host.

A generic error (``unhandled system error``, ``unhandled cuda error``, a bare ``Connection reset by
peer``) names no cause; what the rest of the log shows about the job decides which cause comes first
(one node: no firewall between nodes, but shared memory; containers: Docker's 64 MB /dev/shm, no
host network). Each finding is one ``analysis.context`` event (level INFO, never a failure by itself)
with ``aspect`` and the lines that decided it as evidence, so that rules (``with`` / ``without``) and
the differentials (``for`` / ``against``) can argue from it:

* ``nodes``: ``nodes`` (how many), ``basis`` (what decided it: ``nNodes`` of NCCL's communicator
  summary, torchrun's ``group_world_size``, nccl-tests' device list, the hosts that printed lines, a
  launcher that runs on one node by construction), ``single``;
* ``container``: ``hints`` (container words in paths or messages, a Docker bridge address, a veth /
  CNI interface; not eth0 alone, which bare-metal hosts and VMs name their NIC too);
* ``rdma_netdev``: ``interfaces`` (the socket or bootstrap interface is the network device of an RDMA
  NIC: an IPoIB ``ib*`` interface, or a ConnectX port named ``...np<N>``; on a host that shows it, the
  NIC's verbs devices exist too, so a process that lists none is in a container without them);
* ``net_plugin``: ``values`` (host -> ``internal`` or the external plugin it loaded), ``hosts`` (the
  hosts of each value): the hosts do not load the same NCCL network plugin (one finds none and uses
  NCCL's internal IB / socket code, another loads an external one such as HPC-X's RDMA/SHARP plugin);
* ``transport``: ``transports`` (the distinct transports of NCCL's connection lines), ``intra``
  (peer-to-peer or shared memory seen), ``inter`` (a network transport seen);
* ``ib_expected``: ``reasons`` (the job is meant to use an RDMA network: an RDMA NIC's network device
  as the socket interface, an NCCL_IB_* setting other than NCCL_IB_DISABLE=1, another process on
  NET/IB, a network plugin that failed to start);
* ``same_host``: ``ranks`` (two ranks on one CUDA device, connected by a transport NCCL uses only
  inside one host), ``devices`` (how many devices the host's lines show), ``nranks``, ``wrap`` (every
  rank r on device r mod devices: several nodes of that many GPUs each, taken for one host),
  ``transport``;
* ``cuda_driver``: ``built`` (the CUDA release PyTorch was built with, collect_env's ``CUDA used to build
  PyTorch``, else the toolkit's ``nvcc --version``), ``driver`` (the newest CUDA release the driver supports,
  nvidia-smi's ``CUDA Version``), ``major`` (the driver is of an older major release: CUDA cannot run at all;
  else only through CUDA's minor version compatibility), ``built_by``; only when the paste shows both and the
  build is newer;
* ``nccl_installs``: ``installs`` (two NCCL installations in one paste: packages of different releases from
  ``pip list``, ``conda list``, ``dpkg -l`` or collect_env, or one library name at two paths of ``ldconfig -p``).

Standard library only (it runs in the browser too).
"""
from __future__ import annotations

import re

from ..events import Event
from .common import as_int, gated, short_host, synthetic
from .job import Job
from ..lazyre import lazy_re

KIND = "analysis.context"

# launchers that put every process of the job on one node
_ONE_NODE = lazy_re(r"multiproc_executor\.py|multiproc_worker_utils\.py|VllmWorker(?:Process)?\b")
_CONTAINER = lazy_re(r"\bdocker\b|containerd|kubepods|/var/run/secrets/kubernetes|\bkubernetes\b|\bk8s\b",
                        re.I)
_BRIDGE = lazy_re(r"(?<![\d.])172\.17\.\d{1,3}\.\d{1,3}(?![\d.])")
_VIRTUAL_IF = lazy_re(r"^(?:veth\w*|cni\d*|flannel[\w.]*|cali\w+|docker\d+)$")
_INTRA = ("P2P", "SHM")
_MASKED_IF = lazy_re(r"\[\d+\]([A-Za-z][\w.-]{0,30}?)(?=[:<\s]|\.<|$)")
_RDMA_NETDEV = lazy_re(r"^(?:ib[a-z]?\d[\w.]*|ibp\w+|\w+np\d+(?:d\d+)?)$")
_CONTAINER_SEARCH = gated(_CONTAINER)  # (common.gated: the same matches, most texts not searched)
MAX_TEXT = 4000   # characters of an event's text looked at for container words


def analyze(job: Job) -> list[Event]:
    rdma = _rdma_names(job)  # (read once: rdma_netdev and ib_expected both argue from it)
    found = (_nodes(job), _container(job), _rdma_netdev(rdma), _net_plugin(job), _transport(job), _same_host(job),
             _ib_expected(job, rdma), _cuda_driver(job), _nccl_installs(job))
    return [ev for ev in found if ev is not None]


def _of(job: Job, *kinds: str) -> list[Event]:
    evs = job.events
    return [evs[i] for k in kinds for i in job.by_kind.get(k, ())]


def _nodes(job: Job) -> Event | None:
    # NCCL's communicator summary: `comm 0x.. rank 0 nRanks 16 nNodes 2 localRanks 8 ...`
    infos = [e for e in _of(job, "nccl.comm_info") if as_int(e.fields.get("nnodes")) is not None]
    if infos:
        best = max(infos, key=lambda e: as_int(e.fields.get("nnodes")) or 0)
        n = as_int(best.fields["nnodes"]) or 0
        return _node_event(n, "nNodes", [best], f"NCCL's communicator summary says nNodes {n}")
    # torchrun's rendezvous result: group_world_size is the number of agents (nodes)
    for e in _of(job, "torchrun.rendezvous"):
        m = re.search(r"group_world_size=(\d+)", e.text or "")
        if m:
            n = int(m.group(1))
            return _node_event(n, "group_world_size", [e], f"torchrun's rendezvous has group_world_size={n}")
    # nccl-tests' device list: one line per rank with its host
    dev = _of(job, "nccltests.device")
    hosts = {short_host(e.fields.get("test_host")) for e in dev if e.fields.get("test_host")}
    if hosts:
        return _node_event(len(hosts), "nccl-tests devices", dev[:4],
                           f"nccl-tests lists its ranks on {len(hosts)} host{'s' if len(hosts) != 1 else ''}")
    if dev:  # the single-process nccl-tests (2016-2017) names no host: one process drives every GPU
        return _node_event(1, "nccl-tests devices", dev[:4], "one nccl-tests process drives every GPU of its list")
    # the hosts that printed NCCL lines (their header names the host)
    printed: dict[str, Event] = {}
    for e in job.events:
        if e.kind.startswith("nccl.") and e.host and not e.kind.startswith("nccl.progress"):
            printed.setdefault(short_host(e.host) or e.host, e)
    if len(printed) >= 2:
        return _node_event(len(printed), "hosts", list(printed.values())[:4],
                           f"NCCL lines come from {len(printed)} hosts")
    # a launcher that runs every process on one node
    for e in job.events:
        text = e.text or ""
        if e.process is not None and _ONE_NODE.search(e.process) or len(text) <= MAX_TEXT and _ONE_NODE.search(text):
            return _node_event(1, "launcher", [e], "the processes are vLLM's multiprocessing workers, "
                                                   "which run on one node")
    return None


def _node_event(n: int, basis: str, evidence: list[Event], text: str) -> Event:
    return synthetic(KIND, text + ".", evidence, level="INFO", aspect="nodes", nodes=n, basis=basis,
                     single=n == 1)


def _container(job: Job) -> Event | None:
    hints: list[str] = []
    evidence: list[Event] = []

    def hint(name: str, ev: Event) -> None:
        if name not in hints:
            hints.append(name)
            evidence.append(ev)

    ifaces: dict[str, Event] = {}
    for e in _of(job, "nccl.net_socket", "nccl.bootstrap"):
        names = e.fields.get("interfaces") or []
        if e.kind == "nccl.bootstrap" and e.fields.get("name"):
            names = [{"name": e.fields["name"], "addr": e.fields.get("addr")}]
        for it in names:
            name = it.get("name") if isinstance(it, dict) else str(it).split(":", 1)[0]
            addr = it.get("addr") if isinstance(it, dict) else None
            if name:
                ifaces.setdefault(name, e)
                if _VIRTUAL_IF.match(name):
                    hint(f"virtual interface {name}", e)
            if addr and _BRIDGE.search(str(addr)):
                hint(f"Docker bridge address {addr}", e)
    for e in job.events:
        if e.kind.startswith("analysis."):
            continue
        text = e.text or ""
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT]
        m = _CONTAINER_SEARCH.search(text)
        if m:
            hint(m.group(0).lower(), e)
        if len(hints) >= 4:
            break
    if not hints:
        return None
    return synthetic(KIND, "Container hints: " + "; ".join(hints) + ".", evidence, level="INFO",
                     aspect="container", hints=hints)


def _rdma_netdev(rdma: tuple[list[str], list[Event]]) -> Event | None:
    names, evidence = rdma
    if not names:
        return None
    return synthetic(KIND, "NCCL's socket interface " + ", ".join(names) + " is the network device of an RDMA NIC.",
                     evidence, level="INFO", aspect="rdma_netdev", interfaces=names)


def _rdma_names(job: Job) -> tuple[list[str], list[Event]]:
    """The socket or bootstrap interfaces that are an RDMA NIC's network device, and their lines."""
    names: list[str] = []
    evidence: list[Event] = []
    for e in _of(job, "nccl.net_socket", "nccl.bootstrap", "nccl.info"):
        if e.kind == "nccl.info":  # the same line with its address masked or cut (`Using [0]ib0.<ip>`)
            msg = str(e.fields.get("message") or "")
            if not msg.startswith(("NET/Socket : Using", "Bootstrap : Using")):
                continue
            items = _MASKED_IF.findall(msg)
        else:
            items = e.fields.get("interfaces") or []
        if e.kind == "nccl.bootstrap" and e.fields.get("name"):
            items = [{"name": e.fields["name"]}]
        for it in items:
            name = it.get("name") if isinstance(it, dict) else str(it).split(":", 1)[0]
            if name and _RDMA_NETDEV.match(name) and name not in names:
                names.append(name)
                evidence.append(e)
    return names, evidence


# a network plugin that failed to start (aws-ofi-nccl's `NET/OFI ... initialization failed`, NCCL's
# `NET/Plugin : ... failed`): the job was set up for the fabric that plugin drives
_PLUGIN_FAILED = lazy_re(r"NET/(?:OFI|Plugin)\b.{0,120}?(?:[Ff]ail|[Uu]nable|[Ee]rror)")


def _ib_expected(job: Job, rdma: tuple[list[str], list[Event]]) -> Event | None:
    """The log shows the job is meant to use an RDMA network (InfiniBand, RoCE, EFA): the socket
    interface is an RDMA NIC's network device, an NCCL_IB_* setting asks for it (not NCCL_IB_DISABLE=1),
    another process of the job uses NET/IB, or a network plugin failed to start. Without one of these,
    a process that finds no IB device is on a machine that has none, which is no fault."""
    reasons: list[str] = []
    names, evidence = rdma[0], list(rdma[1])
    if names:
        reasons.append(f"the socket interface {names[0]} is an RDMA NIC's network device" if len(names) == 1 else
                       "the socket interfaces " + ", ".join(names) + " are RDMA NICs' network devices")
    for e in _of(job, "nccl.env"):
        name, value = str(e.fields.get("name") or ""), str(e.fields.get("value") or "").rstrip(".")
        if name.startswith("NCCL_IB_") and not (name == "NCCL_IB_DISABLE" and value == "1"):
            reasons.append(f"{name}={value} is set")
            evidence.append(e)
            break
    for e in _of(job, "nccl.net_ib"):
        reasons.append(f"a process on {e.host} uses NET/IB" if e.host else "a process uses NET/IB")
        evidence.append(e)
        break
    for e in _of(job, "nccl.warn"):
        if "NET/" in (e.text or "") and _PLUGIN_FAILED.search(e.text or "") is not None:
            reasons.append("a network plugin failed to start")
            evidence.append(e)
            break
    if not reasons:
        return None
    return synthetic(KIND, "The job is meant to use an RDMA network: " + "; ".join(reasons) + ".", evidence,
                     level="INFO", aspect="ib_expected", reasons=reasons)


# which NCCL network plugin a process uses, in every release's wording (grammars/nccl_messages.tsv)
_PLUGIN_INTERNAL = lazy_re(r"NET/Plugin ?: (?:No plugin found|Could not find:?\s*\S*\.? ?Using internal)|"
                              r"using internal implementation")
_PLUGIN_EXTERNAL = lazy_re(r"Plugin Path : (?P<path>\S+)|NET/Plugin: Loaded net plugin (?P<name>\S+)|"
                              r"Using network (?P<net>\w*ext\w*)\b")


def _net_plugin(job: Job) -> Event | None:
    per_host: dict[str, tuple[str, Event]] = {}
    for e in job.events:
        if e.kind not in ("nccl.info", "nccl.using_network") or not e.host:
            continue
        text = e.text or ""
        if "lugin" not in text and "Using network" not in text:
            continue
        host = short_host(e.host) or e.host
        m = _PLUGIN_EXTERNAL.search(text)
        if m is not None:
            val = "external " + (m["path"] or m["name"] or f"(network {m['net']})")
            old = per_host.get(host)
            if old is None or old[0] == "internal" or "(network" in old[0]:
                per_host[host] = (val, e)
        elif _PLUGIN_INTERNAL.search(text) and host not in per_host:
            per_host[host] = ("internal", e)
    kinds = {v.split(" ", 1)[0] for v, _ in per_host.values()}
    if len(kinds) < 2:
        return None
    values: dict[str, list[str]] = {}
    for host, (v, _) in sorted(per_host.items()):
        values.setdefault(v, []).append(host)
    words = "; ".join(f"{', '.join(h)}: {v}" for v, h in values.items())
    return synthetic(KIND, f"The hosts do not load the same NCCL network plugin ({words}).",
                     [e for _, e in per_host.values()], level="INFO", aspect="net_plugin",
                     values={h: v for h, (v, _) in sorted(per_host.items())}, hosts=values)


def _transport(job: Job) -> Event | None:
    seen: dict[str, Event] = {}
    for e in _of(job, "nccl.connection"):
        t = str(e.fields.get("transport") or "")
        if t:
            seen.setdefault(t.split("/")[0] if t.startswith(("P2P", "SHM")) else "/".join(t.split("/")[:2]), e)
    if not seen:
        return None
    names = sorted(seen)
    intra = any(n.startswith(_INTRA) for n in names)
    inter = any(n.startswith(("NET", "COLLNET", "CollNet")) for n in names)
    return synthetic(KIND, "NCCL connects through " + ", ".join(names) + ".", list(seen.values()), level="INFO",
                     aspect="transport", transports=names, intra=intra, inter=inter)


def _same_host(job: Job) -> Event | None:
    """Two ranks on one CUDA device joined by P2P or SHM, which NCCL uses only between ranks it
    believes share a host (the same host hash: hostname and boot id, or NCCL_HOSTID)."""
    conns = _of(job, "nccl.connection")
    if not conns:
        return None
    by_host: dict[str, dict[int, str]] = {}
    intra: dict[str, list[Event]] = {}
    for e in conns:
        f = e.fields
        t = str(f.get("transport") or "")
        if not t.startswith(_INTRA):
            continue  # (a network connection names a rank of another host)
        host = short_host(e.host) or ""
        devs = by_host.setdefault(host, {})
        for r, d in ((f.get("src_rank"), f.get("src_dev")), (f.get("dst_rank"), f.get("dst_dev"))):
            r = as_int(r)
            if r is not None and d is not None:
                devs.setdefault(r, str(d))
        intra.setdefault(host, []).append(e)
    for host, evs in intra.items():
        devs = by_host.get(host, {})
        for e in evs:
            f = e.fields
            a, b = as_int(f.get("src_rank")), as_int(f.get("dst_rank"))
            if a is None or b is None or a == b:
                continue
            others = [r for r, d in devs.items() if d == devs.get(b) and r != b]
            if not others:
                continue
            nums = [as_int(d) for d in devs.values()]
            ndev = max(n for n in nums if n is not None) + 1 if any(n is not None for n in nums) else len(set(devs.values()))
            nranks = len(devs)
            wrap = _wraps(devs)
            other = others[0]
            text = (f"Rank {b} and rank {other} are both on CUDA device {devs[b]}, and NCCL joins rank {a} to "
                    f"rank {b} through {f.get('transport')}, a transport it uses only inside one host")
            if wrap:
                text += (f"; every rank r is on device r mod {ndev}: ranks of several nodes with {ndev} GPUs "
                         f"each, taken for one host")
            return synthetic(KIND, text + ".", [e], level="INFO", on_ranks=[b, other],
                             aspect="same_host", ranks=sorted([b, other]), devices=ndev, nranks=nranks,
                             wrap=bool(wrap), transport=f.get("transport"))
    return None


def _wraps(devs: dict[int, str]) -> bool:
    """Every rank r is on device number r mod G, G the number of devices (the highest device number
    seen, plus one), and some rank is G or more: ranks of several nodes of G GPUs each."""
    nums = {}
    for r, d in devs.items():
        n = as_int(d)
        if n is None:
            return False
        nums[r] = n
    g = max(nums.values()) + 1 if nums else 0
    return g >= 2 and max(nums) >= g and all(n == r % g for r, n in nums.items())


_RELEASE = lazy_re(r"^(\d{1,2})\.(\d{1,2})\b")


def _release(value: object) -> tuple[int, int] | None:
    m = _RELEASE.match(str(value or ""))
    return (int(m[1]), int(m[2])) if m is not None else None


def _cuda_driver(job: Job) -> Event | None:
    """The CUDA release the paste's PyTorch (or toolkit) was built with, newer than the driver's (both stated)."""
    facts: dict[str, Event] = {}
    for e in _of(job, "env.fact"):
        facts.setdefault(str(e.fields.get("fact")), e)
    drv = facts.get("driver_cuda")
    built = facts.get("torch_cuda") or facts.get("nvcc_cuda")
    if drv is None or built is None:
        return None
    d, b = _release(drv.fields.get("value")), _release(built.fields.get("value"))
    if d is None or b is None or b <= d:
        return None
    by = "PyTorch" if built.fields.get("fact") == "torch_cuda" else "nvcc"
    text = (f"{by} is built for CUDA {b[0]}.{b[1]}, the driver supports CUDA {d[0]}.{d[1]}"
            + (" (an older major release)" if b[0] > d[0] else " (the same major release: minor version compatibility)"))
    return synthetic(KIND, text, [built, drv], level="INFO", aspect="cuda_driver", built=f"{b[0]}.{b[1]}",
                     driver=f"{d[0]}.{d[1]}", major=b[0] > d[0], built_by=by)


_PACKAGE_SOURCES = ("pip ", "conda ", "dpkg ")


def _nccl_installs(job: Job) -> Event | None:
    """Two NCCL installations the paste lists (packages of different releases, or one soname at two paths)."""
    pkgs: dict[str, Event] = {}
    for e in _of(job, "nccl.version"):
        src = str(e.fields.get("source") or "")
        if src.startswith(_PACKAGE_SOURCES) and e.fields.get("version"):
            pkgs.setdefault(f"{e.fields['version']} ({src})", e)
    paths: dict[str, dict[str, Event]] = {}
    for e in _of(job, "env.fact"):
        if e.fields.get("fact") == "nccl_library":
            for path in str(e.fields.get("value") or "").split("; "):
                paths.setdefault(path.rsplit("/", 1)[-1], {}).setdefault(path, e)
    installs: list[str] = []
    evidence: list[Event] = []
    if len({k.split(" ", 1)[0] for k in pkgs}) > 1:
        installs += sorted(pkgs)
        evidence += [pkgs[k] for k in sorted(pkgs)]
    for so, at in sorted(paths.items()):
        if len(at) > 1:
            installs += sorted(at)
            evidence += [e for e in (at[k] for k in sorted(at)) if all(e is not x for x in evidence)]
    if not installs:
        return None
    return synthetic(KIND, "Two NCCL installations: " + ", ".join(installs), evidence, level="INFO",
                     aspect="nccl_installs", installs=installs)
