"""Generic multi-node NCCL init reconstruction (x86 nodes), version-aware.

A Cluster has N nodes x G GPUs, one process per GPU (torchrun), rank = node*G + gpu.  Each node's log
is that node's shared console (all local ranks write to the same stdout); lines of the local ranks are
interleaved phase by phase.  Only formats valid for the process's NCCL version are used (Proc checks
every format against the catalog).
"""
from __future__ import annotations

from ncclfmt import Proc, vt

A100_BUS = [0x7000, 0xF000, 0x47000, 0x4E000, 0x87000, 0x90000, 0xB7000, 0xBD000]
A100_AFF = ["ffff0000,00000000,00000000,00000000,ffff0000,00000000,00000000,00000000",
            "ffff0000,00000000,00000000,00000000,ffff0000,00000000,00000000,00000000",
            "0000ffff,00000000,00000000,00000000,0000ffff,00000000,00000000,00000000",
            "0000ffff,00000000,00000000,00000000,0000ffff,00000000,00000000,00000000",
            "00000000,00000000,ffff0000,00000000,00000000,00000000,ffff0000,00000000",
            "00000000,00000000,ffff0000,00000000,00000000,00000000,ffff0000,00000000",
            "00000000,00000000,0000ffff,00000000,00000000,00000000,0000ffff,00000000",
            "00000000,00000000,0000ffff,00000000,00000000,00000000,0000ffff,00000000"]


class Node:
    def __init__(self, cl, n, host, ip, pids, ver, cuda, ifname):
        self.cl, self.n, self.host, self.ip, self.ifname = cl, n, host, ip, ifname
        self.log = []
        self.procs = []
        for g in range(cl.G):
            p = Proc(self.log, host, pids[g], ver, cuda, dev=g)
            p.rank = n * cl.G + g
            p.gpu = g
            p.v = vt(ver)
            self.procs.append(p)


class Cluster:
    def __init__(self, G, nodes, ver, cuda, net="IB", nch=2, bus=None, aff=None, ib_devs=None, gdr=True,
                 driver=12040, env=(), legacy_ipc=False, socket_if=None, ranks_filter=None):
        """nodes: list of (host, ip, [pid per gpu]); ver may be a str or a list (one per node)."""
        self.G, self.net, self.nch, self.gdr, self.driver = G, net, nch, gdr, driver
        self.bus = bus or A100_BUS
        self.aff = aff or A100_AFF
        self.ib_devs = ib_devs
        self.env = list(env)
        self.socket_if = socket_if
        vers = ver if isinstance(ver, list) else [ver] * len(nodes)
        cudas = cuda if isinstance(cuda, list) else [cuda] * len(nodes)
        self.nodes = [Node(self, i, h, ip, pids, vers[i], cudas[i], socket_if) for i, (h, ip, pids) in enumerate(nodes)]
        self.N = len(nodes)
        self.R = self.N * G
        self.legacy_ipc = legacy_ipc
        self.p2p = 1

    # ---- ring topology ------------------------------------------------------------------------
    def ring(self, c):
        """global ring for channel c: each node's GPUs rotated to start at c mod G."""
        s = c % self.G
        local = [(s + i) % self.G for i in range(self.G)]
        return [n * self.G + g for n in range(self.N) for g in local]

    def ring_from0(self, c):
        r = self.ring(c)
        i = r.index(0)
        return r[i:] + r[:i]

    def tree(self, c, rank):
        """(down0, down1, down2, up) for a chain-per-node tree with node heads linked (illustrative)."""
        r = self.ring(c)
        node = rank // self.G
        chain = [x for x in r if x // self.G == node]
        i = chain.index(rank)
        down = chain[i + 1] if i + 1 < len(chain) else -1
        up = chain[i - 1] if i > 0 else -1
        d1 = -1
        if i == 0:
            heads = [[x for x in r if x // self.G == m][0] for m in range(self.N)]
            if node == 0 and self.N > 1:
                d1 = heads[1]
            elif node > 0:
                up = heads[node - 1] if c % 2 == 0 else heads[0]
                if node + 1 < self.N:
                    d1 = heads[node + 1]
        return (down, d1, -1, up)

    # ---- phases -------------------------------------------------------------------------------
    def pre(self, node, p, rank0_banner=True):
        v, tid = p.v, p.pid
        for e in self.env:
            if e[1] is None:
                p.info(tid, "%s set by environment to %lld." if v >= (2, 16, 5) else "%s set by environment to %lu.",
                       e[0], e[2])
            else:
                p.info(tid, e[1], e[2])
        if v >= (2, 24, 3):
            p.info(tid, "Bootstrap: Using%s", f" {node.ifname}:{node.ip}<0>")
        else:
            p.info(tid, "Bootstrap : Using%s", f" {node.ifname}:{node.ip}<0>")
        if v >= (2, 26, 2):
            p.info(tid, "%s/Plugin: Could not find:%s. %s", "NET", " libnccl-net.so", "Using internal network plugin.")
        elif v >= (2, 22, 3):
            p.info(tid, "NET/Plugin: Could not find:%s. Using internal network plugin.", " libnccl-net.so")
        elif v >= (2, 21, 5):
            p.info(tid, "NET/Plugin: No plugin found (%s)", "libnccl-net.so")
            p.info(tid, "NET/Plugin: Using internal network plugin.")
        elif v >= (2, 17, 1):
            p.info(tid, "NET/Plugin : Plugin load (%s) returned %d : %s", "libnccl-net.so", 2,
                   "libnccl-net.so: cannot open shared object file: No such file or directory")
            p.info(tid, "NET/Plugin : No plugin found, using internal implementation")
        p.info(tid, "cudaDriverVersion %d", self.driver)
        if v >= (2, 22, 3) or (p.rank == 0 and rank0_banner):
            p.version_banner(tid)

    def net_lines(self, node, p, tid, first):
        v = p.v
        if self.net == "IB":
            if first:
                devs = "".join(f" [{i}]{d}:1/{t}" for i, (d, t) in enumerate(self.ib_devs))
                p.info(tid, "NET/IB : Using%s %s; OOB %s:%s", devs, "[RO]", node.ifname, f"{node.ip}<0>")
            if v >= (2, 27, 3):
                if first:
                    p.info(tid, "Initialized NET plugin %s", "IB")
                p.info(tid, "Assigned NET plugin %s to comm", "IB")
            if (2, 19, 1) <= v <= (2, 21, 5):
                p.info(tid, "Using non-device net plugin version %d", 0)
            p.info(tid, "Using network %s", "IB")
        else:
            if first:
                if not any(e[0] == "NCCL_IB_DISABLE" and e[2] == 1 for e in self.env):
                    p.info(tid, "NET/IB : No device found.")
                if v >= (2, 28, 3):
                    p.info(tid, "Failed to initialize NET plugin %s", "IB")
                p.info(tid, "NET/Socket : Using%s", f" [0]{self.socket_if}:{node.ip}<0>")
                if v >= (2, 27, 3):
                    p.info(tid, "Initialized NET plugin %s", "Socket")
            if v >= (2, 27, 3):
                p.info(tid, "Assigned NET plugin %s to comm", "Socket")
            if (2, 19, 1) <= v <= (2, 21, 5):
                p.info(tid, "Using non-device net plugin version %d", 0)
            p.info(tid, "Using network %s", "Socket")

    def init_start(self, node, p, tid, comm, commid, first=True, func="ncclCommInitRankConfig"):
        v = p.v
        self.net_lines(node, p, tid, first)
        args = (comm, p.rank, self.R, p.gpu, p.gpu, self.bus[p.gpu], commid)
        if v >= (2, 23, 4):
            p.info(tid, "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START", func, *args)
        elif v >= (2, 21, 5):
            p.info(tid, "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START", *args)
        elif v >= (2, 18, 3):
            p.info(tid, "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START", *args)

    def init_topo(self, node, p, tid, comm, timing=None, proxy_tids=None):
        v = p.v
        if v >= (2, 23, 4) and timing:
            p.info(tid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *timing)
        if v <= (2, 27, 7):
            p.info(tid, "Setting affinity for GPU %d to %s", p.gpu, self.aff[p.gpu])
        p.info(tid, "NVLS multicast support is %savailable on dev %d", "not ", p.gpu)
        if v >= (2, 20, 3):
            p.info(tid, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d", comm, p.rank,
                   self.R, self.N, self.G, p.gpu, 0)
        if p.rank == 0:
            for c in range(self.nch):
                p.ring(tid, c, self.nch, self.ring_from0(c))
        p.trees(tid, [self.tree(c, p.rank) for c in range(self.nch)])
        p.info(tid, "P2P Chunksize set to %d", 524288)
        if (2, 24, 3) <= v <= (2, 26, 6):
            p.info(tid, "Check P2P Type intraNodeP2pSupport %d directMode %d", self.p2p, 0)
        elif (2, 27, 3) <= v <= (2, 28, 3):
            p.info(tid, "Check P2P Type isAllDirectP2p %d directMode %d", self.p2p, 0)
        if v >= (2, 23, 4) and proxy_tids:
            p.info(proxy_tids[0], "[Proxy Service] Device %d CPU core %d", p.gpu, proxy_tids[2])
            p.info(proxy_tids[1], "[Proxy Service UDS] Device %d CPU core %d", p.gpu, proxy_tids[2] + 1)

    def connect(self, node, p, tid, conn=0, which=None):
        """Ring connections of rank p for all channels (receive then send per channel)."""
        v = p.v
        for c in range(self.nch):
            r = self.ring(c)
            i = r.index(p.rank)
            prev, nxt = r[i - 1], r[(i + 1) % len(r)]
            for kind, a, b in (("receive", prev, p.rank), ("send", p.rank, nxt)):
                same = a // self.G == b // self.G
                if same:
                    if kind == "receive":
                        continue  # P2P lines are printed by the sender side only
                    if v >= (2, 20, 3):
                        kind_p2p = "IPC" if (self.legacy_ipc or v < (2, 19, 1)) else "CUMEM"
                        p.info(tid, "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s", c, conn, a, a % self.G, b,
                               b % self.G, kind_p2p, "/read", "")
                    else:
                        p.info(tid, "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/IPC%s%s", c, conn, a, a % self.G, b,
                               b % self.G, "/read", "")
                else:
                    netname = "IB" if self.net == "IB" else "Socket"
                    nic = (p.gpu if self.net == "IB" else 0)
                    gdr = "/GDRDMA" if (self.gdr and self.net == "IB") else ""
                    if v >= (2, 26, 2):
                        p.info(tid, f"Channel %02d/%d : %d[%d] -> %d[%d] [{kind}] via NET/%s/%d%s%s%s", c, conn, a,
                               a % self.G, b, b % self.G, netname, nic, gdr, "", "")
                    else:
                        p.info(tid, f"Channel %02d/%d : %d[%d] -> %d[%d] [{kind}] via NET/%s/%d%s%s", c, conn, a,
                               a % self.G, b, b % self.G, netname, nic, gdr, "")

    def connected(self, p, tid, gdr=None):
        v = p.v
        if v >= (2, 24, 3):
            p.info(tid, "Connected all rings, use ring PXN %d GDR %d", 0, int((self.gdr and self.net == "IB") if gdr is None else gdr))
        else:
            p.info(tid, "Connected all rings")
        p.info(tid, "Connected all trees")

    def init_tail(self, node, p, tid, comm, commid, timing=None, func="ncclCommInitRankConfig"):
        v = p.v
        p.info(tid, "threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld", 8, 8, 64, 8 * self.R, 8, 64, 512, 512)
        if v >= (2, 20, 3):
            p.info(tid, "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
                   self.nch, self.nch, 0, self.nch * 2, 2)
        elif v >= (2, 17, 1):
            p.info(tid, "%d coll channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
                   self.nch, 0, self.nch * 2, 2)
        if v == (2, 21, 5):
            p.info(tid, "TUNER/Plugin: Plugin load returned %d : %s : when loading %s", 2,
                   "libnccl-tuner.so: cannot open shared object file: No such file or directory", "libnccl-tuner.so")
            p.info(tid, "TUNER/Plugin: Using internal tuner plugin.")
        if p.rank == 0:
            if (2, 22, 3) <= v <= (2, 23, 4):
                p.info(tid, "CC %s, Multi-GPU CC %s, workFifoBytes %d", "Off", "Off", 1048576)
            elif v >= (2, 24, 3):
                p.info(tid, "CC %s, workFifoBytes %d", "Off", 1048576)
        args = (comm, p.rank, self.R, p.gpu, p.gpu, self.bus[p.gpu], commid)
        if v >= (2, 23, 4):
            p.info(tid, "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE", func, *args)
            if timing:
                p.info(tid, "Init timings - %s: rank %d nranks %d total %.2f (kernels %.2f, alloc %.2f, bootstrap %.2f, "
                       "allgathers %.2f, topo %.2f, graphs %.2f, connections %.2f, rest %.2f)", func, p.rank, self.R, *timing)
        elif v >= (2, 21, 5):
            p.info(tid, "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE", *args)
        else:
            p.info(tid, "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE", *args)

    def full_init(self, comms, commid, phases=("pre", "start", "topo", "conn", "tail"), timing=None):
        """Standard init of one communicator on all ranks. comms[rank] = pointer string.
        For NCCL >= 2.22 the ring connections are made at the first collective (runtime connect):
        'conn' then comes after 'tail'."""
        for node in self.nodes:
            lazy = node.procs[0].v >= (2, 22, 3)
            order = ["pre", "start", "topo"] + (["tail", "conn"] if lazy else ["conn", "tail"])
            for ph in order:
                if ph not in phases:
                    continue
                for p in node.procs:
                    tid = p.pid
                    c = comms[p.rank]
                    if ph == "pre":
                        self.pre(node, p)
                    elif ph == "start":
                        self.init_start(node, p, tid, c, commid)
                    elif ph == "topo":
                        ptids = (p.pid + 61, p.pid + 62, 4 + 16 * p.gpu)
                        self.init_topo(node, p, tid, c, timing and timing(p, "boot"), ptids)
                    elif ph == "conn":
                        self.connect(node, p, tid)
                        self.connected(p, tid)
                    elif ph == "tail":
                        self.init_tail(node, p, tid, c, commid, timing and timing(p, "init"))
