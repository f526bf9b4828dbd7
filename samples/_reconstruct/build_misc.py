"""Reconstructed NCCL samples (not from a seed story, except nccl-gloo-64node-connectfullmesh = seed 000).

Run: python samples/_reconstruct/build_misc.py [name ...]
"""
from __future__ import annotations

import datetime as dt
import random
import sys

from cluster import Cluster
from ncclfmt import Proc, c10, pylog, child_failed, write_sample
from torchfmt import nccl_async_text, nccl_sync_text, cxx_frames

D = dt.datetime
IB8 = [(f"mlx5_{i}", "IB") for i in range(8)]
IB4 = [(f"mlx5_{i}", "IB") for i in range(4)]
SITE = "/opt/venv/lib/python3.11/site-packages"
SRC27 = "/pytorch/torch/csrc/distributed/c10d"
SRC25 = "../torch/csrc/distributed/c10d"


def comm_ptrs(R, seed):
    rnd = random.Random(seed)
    return {r: "0x%x" % (0x55d0_0000_0000 + rnd.randrange(0x10_0000_0000) * 16) for r in range(R)}


def timing_fn(seed):
    rnd = random.Random(seed)

    def f(p, kind):
        if kind == "boot":
            tot = 0.0031 + rnd.random() * 0.4
            return (tot, 0.00004, 0.00019, tot - 0.0006, 0.00016, 0.0)
        k = 0.21 + rnd.random() * 0.03
        return (k + 0.95 + rnd.random() * 0.2, k, 0.01, 0.02, 0.01, 0.31, 0.04, 0.52, 0.03)
    return f


def yaml_text(title, description, how, torch, nccl, healthy, category, origin, notes):
    def block(s, ind="  "):
        import textwrap
        return "\n".join(textwrap.wrap(s, 100, initial_indent=ind, subsequent_indent=ind))
    cat = "null" if category is None else category
    return (f'title: "{title}"\n'
            f"description: >-\n{block(description)}\n"
            f"origin: reconstructed\n"
            f"produced:\n  how: >-\n{block(how, '    ')}\n"
            f'  torch: "{torch}"\n  nccl: "{nccl}"\n  date: "2026-11-29"\n'
            f"expect:\n  healthy: {'true' if healthy else 'false'}\n  category: {cat}\n  rule: null\n"
            f"  origin_ranks: {origin}\n"
            f"notes: >-\n{block(notes)}\n")


# ------------------------------------------------------------------------------------------------
def healthy_2node_16gpu():
    cl = Cluster(8, [("dgxa100-07", "10.33.1.17", [41210 + i for i in range(8)]),
                     ("dgxa100-08", "10.33.1.18", [39877 + i for i in range(8)])],
                 "2.21.5", "12.4", net="IB", nch=8, ib_devs=IB8, driver=12040, socket_if="enp226s0", legacy_ipc=True,
                 env=[("NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME set by environment to %s", "enp226s0"),
                      ("NCCL_CUMEM_ENABLE", None, 0)])
    comms = comm_ptrs(16, 6)
    cl.full_init(comms, 0x9A6F2C31E0B7D458)
    files = {f"node{n.n}.log": n.log for n in cl.nodes}
    y = yaml_text(
        "Healthy init: 2 nodes x 8 A100, NCCL 2.21.5 over InfiniBand with GPUDirect RDMA, all 16 ranks reach Init COMPLETE",
        "torchrun on two DGX A100 nodes (8 GPUs each, mlx5_0..mlx5_7 HDR InfiniBand), NCCL_DEBUG=INFO. "
        "Every rank finds the eight HCAs (NET/IB : Using [0]mlx5_0:1/IB ... [RO]; OOB enp226s0:...), "
        "chooses 'Using network IB', builds 8 rings over all 16 ranks, connects intra-node peers via "
        "P2P/IPC/read (NCCL_CUMEM_ENABLE=0) and inter-node peers via NET/IB/<hca>/GDRDMA, prints "
        "Connected all rings / trees and Init COMPLETE. No warning or error. One file per node (the shared "
        "console of its 8 local ranks; the bare 'NCCL version 2.21.5+cuda12.4' banner is printed only by the "
        "process of rank 0, as NCCL <= 2.21 does).",
        "reconstructed line for line from NCCL 2.21.5 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and shared/reference/nccl-init-topology-lines.md; generator: "
        "samples/_reconstruct/build_misc.py",
        "2.5.1", "2.21.5", True, None, "[]",
        "Healthy: no error-severity diagnosis. A report may summarise the topology: 2 nodes, 16 ranks, "
        "network IB with GDR (every inter-node connection says /GDRDMA), intra-node P2P/IPC, all 16 ranks "
        "Init COMPLETE on the same commId. Nothing here (the NCCL_CUMEM_ENABLE/NCCL_SOCKET_IFNAME env lines, "
        "the TUNER/Plugin 'Plugin load returned 2' lines, the absent libnccl-net.so plugin) is a problem.")
    write_sample("nccl-healthy-2node-16gpu-ib-gdr", files, y)



# ------------------------------------------------------------------------------------------------
# torch 2.7.1 (PyPI) watchdog / abort blocks.  Line numbers :632, :2271, :670, :1746 from public
# 2.7.x logs; the others are estimates.
WD27 = [
    ("c10::Error::Error(c10::SourceLocation, std::string)", "0x98", "libc10.so"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)", "0x2b4", "libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::watchdogHandler()", "0x890", "libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::ncclCommWatchdog()", "0x14d", "libtorch_cuda.so"),
    ("<unknown function>", "0x145c0", f"{SITE}/torch/lib/libtorch.so"),
    ("<unknown function>", "0x94ac3", "/lib/x86_64-linux-gnu/libc.so.6"),
    ("<unknown function>", "0x126850", "/lib/x86_64-linux-gnu/libc.so.6"),
]
PG0 = "[PG ID 0 PG GUID 0(default_pg) Rank {r}]"
DUMP_TAIL = ("This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the "
             "order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
             "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the "
             "communications library (e.g. NCCL), etc. ")


def work(seq, op, ni, no, tmo):
    return f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={ni}, NumelOut={no}, Timeout(ms)={tmo})"


def timeout27(r, t, ns, w, ran, seq, enq, comp, addr, first_pg=True):
    pg = PG0.format(r=r)
    msg = f"[Rank {r}] Watchdog caught collective operation timeout: {w} ran for {ran} milliseconds before timing out."
    out = [c10(r, "E", t, ns, "ProcessGroupNCCL.cpp", 632, msg),
           c10(r, "E", t, ns + 81337, "ProcessGroupNCCL.cpp", 2271,
               f"{pg}  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {enq}, last completed work: {comp}"),
           c10(r, "E", t, ns + 90412, "ProcessGroupNCCL.cpp", 670,
               "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. "
               "You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")]
    if first_pg:
        out.append(c10(r, "E", t, ns + 141862, "ProcessGroupNCCL.cpp", 2106, f"{pg} First PG on this rank to signal dumping."))
    out.append(c10(r, "E", t, ns + 583224, "ProcessGroupNCCL.cpp", 1746,
                   f"{pg} Received a dump signal due to a collective timeout from this local rank and we will try our best "
                   f"to dump the debug info. Last enqueued NCCL work: {enq}, last completed NCCL work: {comp}.{DUMP_TAIL}"))
    out.append(c10(r, "E", t, ns + 601190, "ProcessGroupNCCL.cpp", 684,
                   f"[Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
                   "kernels, subsequent GPU operations might run on corrupted/incomplete data."))
    out.append(c10(r, "E", t, ns + 608871, "ProcessGroupNCCL.cpp", 690,
                   f"[Rank {r}] To avoid data inconsistency, we are taking the entire process down."))
    fr = cxx_frames(f"checkTimeout at {SRC27}/ProcessGroupNCCL.cpp:635", WD27, f"{SITE}/torch/lib", addr)
    out.append(c10(r, "E", t, ns + 1433015, "ProcessGroupNCCL.cpp", 1899,
                   f"{pg} Process group watchdog thread terminated with exception: {msg}"))
    out += fr + ["", "terminate called after throwing an instance of 'c10::DistBackendError'",
                 f"  what():  {pg} Process group watchdog thread terminated with exception: {msg}"] + fr + [""]
    return out


def agent27(apid, t, lines_kind, **kw):
    return pylog(lines_kind, t, apid, "site-packages/torch/distributed/elastic/multiprocessing/api.py", kw["line"], kw["msg"])


TB27 = [
    "Traceback (most recent call last):",
    '  File "/opt/venv/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    f'  File "{SITE}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    f'  File "{SITE}/torch/distributed/run.py", line 892, in main',
    "    run(args)",
    f'  File "{SITE}/torch/distributed/run.py", line 883, in run',
    "    elastic_launch(",
    f'  File "{SITE}/torch/distributed/launcher/api.py", line 139, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    f'  File "{SITE}/torch/distributed/launcher/api.py", line 270, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
]


def torchrun_end27(log, apid, t, host, failed, others, script="train.py"):
    """failed: list of (rank, local_rank, pid, exitcode) in the order the agent observed them."""
    r0, l0, p0, c0 = failed[0]
    log.append(pylog("E", t, apid, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 874,
                     f"failed (exitcode: {c0}) local_rank: {l0} (pid: {p0}) of binary: /opt/venv/bin/python3"))
    log += TB27
    ts = t.strftime("%Y-%m-%d_%H:%M:%S")
    root = dict(time=ts, host=host, rank=r0, local_rank=l0, exitcode=c0, pid=p0)
    rest = [dict(time=ts, host=host, rank=r, local_rank=l, exitcode=c, pid=p) for r, l, p, c in failed[1:] + others]
    log += child_failed(script, rest, root)


def py_tb(rank, frames, exc_lines, prefix=True):
    pre = f"[rank{rank}]: " if prefix else ""
    out = [f"{pre}Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        out.append(f'{pre}  File "{f}", line {ln}, in {fn}')
        out.append(f"{pre}    {code}")
    out += [f"{pre}{l}" for e in exc_lines for l in e.split("\n")]
    return out


# ------------------------------------------------------------------------------------------------
def socket_fallback():
    nodes = [("gpu-node-11", "10.60.2.11", [182301 + i for i in range(4)]),
             ("gpu-node-12", "10.60.2.12", [90417 + i for i in range(4)])]
    L40 = [0x1B000, 0x2C000, 0x9D000, 0xAE000]
    cl = Cluster(4, nodes, "2.26.2", "12.2", net="Socket", nch=2, bus=L40, socket_if="eno1", driver=12040,
                 aff=["ffffffff,00000000,ffffffff"] * 2 + ["00000000,ffffffff,00000000,ffffffff"] * 2)
    comms = comm_ptrs(8, 7)
    cl.full_init(comms, 0x5E27A0C4913BD86F, timing=timing_fn(7))
    t = D(2026, 11, 24, 3, 41, 9)
    w = work(3, "ALLREDUCE", 8030261248, 8030261248, 600000)
    for node in cl.nodes:
        for p in node.procs:
            node.log += timeout27(p.rank, t, 110512384 + 9173311 * p.rank, w, 600031 + 7 * p.rank, 3, 3, 2,
                                  0x7F3A10000000 + 0x1000000 * p.rank)
    for node in cl.nodes:
        g0 = node.n * 4
        torchrun_end27(node.log, 182290 if node.n == 0 else 90400, D(2026, 11, 24, 3, 41, 12, 511000), node.host,
                       [(g0 + i, i, node.procs[i].pid, -6) for i in range(4)], [])
    files = {f"node{n.n}.log": n.log for n in cl.nodes}
    y = yaml_text(
        "IB silently unavailable: NCCL falls back to TCP sockets on a 1 GbE port, a large all-reduce then times out on every rank",
        "Two nodes x 4 L40S, torchrun, PyTorch 2.7.1 with NCCL 2.26.2, NCCL_DEBUG=INFO. The nodes have "
        "ConnectX-6 adapters, but after a kernel update the RDMA stack is not loaded, so libibverbs lists no "
        "device: every rank prints 'NET/IB : No device found.' and, with NCCL_SOCKET_IFNAME unset, NCCL's "
        "socket transport picks the first usable interface, the 1 GbE management port eno1 ('NET/Socket : Using "
        "[0]eno1:10.60.2.11<0>', 'Using network Socket', every inter-node connection 'via NET/Socket/0'). Init "
        "and the first collectives succeed, but the third collective, an all-reduce of the flattened fp32 "
        "gradients of an 8B-parameter model (NumelIn=8030261248, 32 GB), cannot finish within the 10-minute "
        "timeout over that link: all 8 ranks time out on SeqNum=3 at the same time, each with last enqueued 3, "
        "last completed 2, and abort (SIGABRT).",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and PyTorch 2.7 formats (torch-messages.tsv); generator: "
        "samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "ib_unavailable_fallback_socket", "[0, 1, 2, 3, 4, 5, 6, 7]",
        "Root cause is the transport choice, the same on every rank: 'NET/IB : No device found.' followed by "
        "'NET/Socket : Using [0]eno1:...' and 'Using network Socket', all inter-node channels 'via NET/Socket/0' "
        "(no NET/IB, no GDRDMA, 'Connected all rings, use ring PXN 0 GDR 0'). The watchdog timeouts are the "
        "consequence: every rank, on both nodes, times out on the same SeqNum=3 ALLREDUCE with 'last enqueued "
        "work: 3, last completed work: 2' within one second, so no rank lags or hangs (contrast with a "
        "collective_timeout_hung_rank case); the collective was simply too slow over a 1 GbE TCP path. The "
        "diagnosis must name IB being unavailable (RDMA devices missing on both nodes) and the silent fallback to "
        "sockets on the management NIC, not a hung rank; torchrun's root cause (local rank 0, exitcode -6) is a "
        "victim. origin_ranks lists all ranks because the condition is on every rank. torch line numbers other "
        "than :632/:2271/:670/:1746 are estimates.")
    write_sample("nccl-socket-fallback", files, y)


# ------------------------------------------------------------------------------------------------
def shm_exhausted():
    host, ip = "a7f3c2d91b04", "172.17.0.3"   # docker container: random hostname, bridge address
    pids = [201 + i for i in range(4)]
    ADA = [0x1B000, 0x3D000, 0x9C000, 0xBB000]
    cl = Cluster(4, [(host, ip, pids)], "2.26.2", "12.2", net="Socket", nch=2, bus=ADA, socket_if="eth0",
                 driver=12020, aff=["ffffffff"] * 4)
    cl.p2p = 0
    node = cl.nodes[0]
    comms = comm_ptrs(4, 8)
    tf = timing_fn(8)
    for p in node.procs:
        cl.pre(node, p)
    for p in node.procs:
        cl.init_start(node, p, p.pid, comms[p.rank], 0x23C9E1F08A5B7D42)
    for p in node.procs:
        cl.init_topo(node, p, p.pid, comms[p.rank], tf(p, "boot"), (p.pid + 57, p.pid + 58, 2 + 4 * p.gpu))
    for p in node.procs:
        cl.init_tail(node, p, p.pid, comms[p.rank], 0x23C9E1F08A5B7D42, tf(p, "init"))
    # first all_reduce: runtime connection, SHM transport between all GPUs (no P2P on these boards)
    t = D(2026, 11, 20, 14, 2, 37)
    segs = {0: "nccl-Qm3YwA", 1: "nccl-8dKfzR", 2: "nccl-Lx0vTe", 3: "nccl-Vb7nJc"}
    ok_ranks = [0, 1]
    for p in node.procs:
        for c in range(2):
            nxt = (p.rank + 1) % 4
            p.info(p.pid, "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s", c, p.rank, p.gpu, nxt, nxt, "direct", "direct")
    failing = {}
    for p in node.procs:
        if p.rank in ok_ranks:
            p.info(p.pid, "Connected all rings, use ring PXN %d GDR %d", 0, 0)
            p.info(p.pid, "Connected all trees")
            continue
        tid = p.pid + 57
        seg = "/dev/shm/" + segs[p.rank]
        p.warn(tid, "misc/shmutils.cc:87", t, "Error: failed to extend %s to %ld bytes, error: %s (%d)", seg, 9637892,
               "No space left on device", 28)
        last = p.warn(tid, "misc/shmutils.cc:129", t, "Error while %s shared memory segment %s (size %ld), error: %s (%d)",
                      "creating", seg, 9637888, "No space left on device", 28)
        for loc in ("transport/shm.cc:601", "transport/shm.cc:532"):
            p.bt(tid, loc, 2)
        p.bt(tid, "proxy.cc:1556", 2)
        p.bt(tid, "proxy.cc:1648", 2)
        last = p.warn(tid, "proxy.cc:1754", t, "[Proxy Service %d] Failed to execute operation %s from rank %d, retcode %d",
                      p.rank, "Setup", p.rank, 2)
        for loc in ("proxy.cc:1215", "transport/shm.cc:225", "transport.cc:163", "transport.cc:283", "enqueue.cc:1612",
                    "group.cc:164", "group.cc:501", "group.cc:674", "enqueue.cc:2320"):
            p.bt(p.pid, loc, 2)
        failing[p.rank] = last
    frames = [("/workspace/train.py", 212, "<module>", "main()"),
              ("/workspace/train.py", 171, "main", "model = DDP(model, device_ids=[local_rank])"),
              (f"{SITE}/torch/nn/parallel/distributed.py", 835, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
              (f"{SITE}/torch/distributed/utils.py", 282, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")]
    for r in (2, 3):
        exc = nccl_sync_text(2, "2.26.2", failing[r], f"{SRC27}/ProcessGroupNCCL.cpp", 3356)
        node.log += py_tb(r, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    t2 = D(2026, 11, 20, 14, 2, 39, 207000)
    node.log.append(pylog("W", t2, 188, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                          "Sending process 201 closing signal SIGTERM"))
    node.log.append(pylog("W", t2, 188, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                          "Sending process 202 closing signal SIGTERM"))
    node.log.append(pylog("W", t2, 188, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                          "Sending process 204 closing signal SIGTERM"))
    torchrun_end27(node.log, 188, D(2026, 11, 20, 14, 2, 39, 541000), host, [(2, 2, 203, 1)],
                   [(0, 0, 201, -15), (1, 1, 202, -15), (3, 3, 204, -15)])
    y = yaml_text(
        "Docker container with the default 64 MB /dev/shm: NCCL SHM transport cannot create its segments (No space left on device)",
        "One node, 4 RTX 6000 Ada GPUs (no P2P between them, so NCCL uses the SHM transport for every intra-node "
        "connection) in a Docker container started without --ipc=host or --shm-size, i.e. /dev/shm is 64 MB. "
        "NCCL 2.26.2 with a 535 driver (cudaDriverVersion 12020, so no cuMem host allocations: SHM buffers live "
        "in /dev/shm). The communicator initialises; the first collective (DDP's parameter verification) opens "
        "the SHM connections. The first segments fit, then the proxy threads of ranks 2 and 3 fail to fallocate "
        "their 9.6 MB segments: 'Error: failed to extend /dev/shm/nccl-... to 9637892 bytes, error: No space "
        "left on device (28)' then 'Error while creating shared memory segment ... (size 9637888), error: No "
        "space left on device (28)'. Their collective raises DistBackendError (unhandled system error); torchrun "
        "stops the others.",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv, 2.22+ shm error formats) and PyTorch 2.7 formats; WARN locations "
        "misc/shmutils.cc:87/:129 as seen in public 2.26-era logs; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "shm_exhausted", "[2, 3]",
        "The root cause is /dev/shm being too small in the container (Docker's 64 MB default) for NCCL's SHM "
        "transport: ranks 2 and 3 (same host a7f3c2d91b04, pids 203/204) print the failed-to-extend WARN with "
        "'No space left on device (28)' and the 'Error while creating shared memory segment /dev/shm/nccl-XXXXXX "
        "(size 9637888)' WARN, then '[Proxy Service N] Failed to execute operation Setup ... retcode 2' and the "
        "'-> 2' back-trace; PyTorch reports 'NCCL error in: ...ProcessGroupNCCL.cpp:3356, unhandled system error "
        "... NCCL version 2.26.2' with 'Last error:' showing the process's most recent WARN, the proxy's '[Proxy Service N] Failed to execute operation Setup', so the cause has to be read from the WARNs just before it. origin_ranks "
        "are the ranks whose segment creation failed; the node-wide fix is --shm-size (or --ipc=host), or "
        "NCCL_SHM_DISABLE=1. Ranks 0 and 1 are victims (SIGTERM by torchrun, exitcode -15). Not a network or "
        "NCCL bug. Back-trace file:line values and torch line numbers are estimates.")
    write_sample("nccl-shm-exhausted-container", {"console.log": node.log}, y)



def async27(r, t, ns, w, code, ver, last, seq, enq, comp, addr, pgdesc="(default_pg)", pgid=0):
    pg = f"[PG ID {pgid} PG GUID {pgid}{pgdesc} Rank {r}]"
    exc = nccl_async_text(code, ver, last)
    frames = [
        ("c10::Error::Error(c10::SourceLocation, std::string)", "0x98", "libc10.so"),
        ("c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal(std::shared_ptr<c10d::NCCLComm>&)", "0x2d1", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException()", "0x7c", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::watchdogHandler()", "0x213", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::ncclCommWatchdog()", "0x14d", "libtorch_cuda.so"),
        ("<unknown function>", "0x145c0", f"{SITE}/torch/lib/libtorch.so"),
        ("<unknown function>", "0x94ac3", "/lib/x86_64-linux-gnu/libc.so.6"),
        ("<unknown function>", "0x126850", "/lib/x86_64-linux-gnu/libc.so.6"),
    ]
    fr = cxx_frames(f"checkForNCCLErrorsInternal at {SRC27}/ProcessGroupNCCL.cpp:2415", frames, f"{SITE}/torch/lib", addr)
    out = [c10(r, "E", t, ns, "ProcessGroupNCCL.cpp", 642,
               f"[Rank {r}] Collective {w} raised the following async exception: {exc[0]}")]
    out += exc[1:] + fr + [""]
    out.append(c10(r, "E", t, ns + 2183004, "ProcessGroupNCCL.cpp", 2271,
                   f"{pg}  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {enq}, last completed work: {comp}"))
    out.append(c10(r, "E", t, ns + 2198350, "ProcessGroupNCCL.cpp", 670,
                   "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. "
                   "You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."))
    out.append(c10(r, "E", t, ns + 2241937, "ProcessGroupNCCL.cpp", 2106, f"{pg} First PG on this rank to signal dumping."))
    out.append(c10(r, "E", t, ns + 2407715, "ProcessGroupNCCL.cpp", 684,
                   f"[Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
                   "kernels, subsequent GPU operations might run on corrupted/incomplete data."))
    out.append(c10(r, "E", t, ns + 2411208, "ProcessGroupNCCL.cpp", 690,
                   f"[Rank {r}] To avoid data inconsistency, we are taking the entire process down."))
    out.append(c10(r, "E", t, ns + 3018822, "ProcessGroupNCCL.cpp", 1899,
                   f"{pg} Process group watchdog thread terminated with exception: {exc[0]}"))
    out += exc[1:] + fr + ["", "terminate called after throwing an instance of 'c10::DistBackendError'",
                           f"  what():  {pg} Process group watchdog thread terminated with exception: {exc[0]}"]
    out += exc[1:] + fr + [""]
    return out


# ------------------------------------------------------------------------------------------------
def ib_completion_error():
    H100 = [0x18000, 0x2A000, 0x3A000, 0x5D000]
    nodes = [("hgx-b07", "10.50.0.11", [77310 + i for i in range(4)]),
             ("hgx-b08", "10.50.0.12", [51288 + i for i in range(4)])]
    cl = Cluster(4, nodes, "2.26.2", "12.2", net="IB", nch=4, bus=H100, ib_devs=IB4, socket_if="bond0", driver=12040,
                 aff=["ffffffff,00000000,ffffffff"] * 2 + ["00000000,ffffffff,00000000,ffffffff"] * 2,
                 env=[("NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME set by environment to %s", "bond0"),
                      ("NCCL_IB_TIMEOUT", None, 20)])
    comms = comm_ptrs(8, 9)
    cl.full_init(comms, 0x4C0D9E7A2B165F38, timing=timing_fn(9))
    n0, n1 = cl.nodes
    p6 = n1.procs[2]
    t = D(2026, 11, 26, 7, 18, 44)
    tid = p6.pid + 64
    last = p6.warn(tid, "transport/net_ib.cc:2331", t,
                   "NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s hca %s",
                   "10.50.0.11<53817>", 12, 0, 0, 129, "Send", "", "", "", "", "mlx5_2")
    p6.bt(tid, "transport/net.cc:1292", 6)
    p6.bt(tid, "proxy.cc:694", 6)
    p6.bt(tid, "proxy.cc:879", 6, " [Progress Thread]")
    w = work(4711, "ALLREDUCE", 25165824, 25165824, 600000)
    n1.log += async27(6, t, 301877420, w, 6, "2.26.2", last, 4711, 4711, 4710, 0x7F91C0000000)
    t1 = D(2026, 11, 26, 7, 18, 46, 902000)
    for pid in (51288, 51289, 51291):
        n1.log.append(pylog("W", t1, 51270, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                            f"Sending process {pid} closing signal SIGTERM"))
    torchrun_end27(n1.log, 51270, D(2026, 11, 26, 7, 18, 47, 310000), "hgx-b08", [(6, 2, 51290, -6)],
                   [(4, 0, 51288, -15), (5, 1, 51289, -15), (7, 3, 51291, -15)])
    t2 = D(2026, 11, 26, 7, 28, 44)
    for p in n0.procs:
        n0.log += timeout27(p.rank, t2, 611028310 + 5133017 * p.rank, w, 600052 + 3 * p.rank, 4711, 4711, 4710,
                            0x7F4410000000 + 0x1000000 * p.rank)
    torchrun_end27(n0.log, 77290, D(2026, 11, 26, 7, 28, 47, 118000), "hgx-b07",
                   [(0, 0, 77310, -6), (1, 1, 77311, -6), (2, 2, 77312, -6), (3, 3, 77313, -6)], [])
    y = yaml_text(
        "InfiniBand completion error status=12 (retry exceeded) on one HCA of node hgx-b08; the other node times out 10 minutes later",
        "Two HGX nodes x 4 H100, one ConnectX-7 NDR HCA per GPU (mlx5_0..mlx5_3), NCCL 2.26.2 over IB with GPUDirect "
        "RDMA, PyTorch 2.7.1 under torchrun. After about 4700 all-reduces the link of mlx5_2 on hgx-b08 stops "
        "acknowledging; rank 6 (hgx-b08, GPU 2, pid 51290) gets a work completion with status=12 "
        "(IBV_WC_RETRY_EXC_ERR) for a send to 10.50.0.11 and its watchdog aborts with ncclRemoteError. torchrun on "
        "hgx-b08 stops ranks 4, 5 and 7. The ranks on hgx-b07 never hear back and each hits the 600 s watchdog "
        "timeout on the same all-reduce (SeqNum=4711). One file per node (console).",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv: 'NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u "
        "vendor err %u (%s)%s%s%s%s hca %s', valid 2.24.3-2.28.3) and PyTorch 2.7 formats; generator: "
        "samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "ib_transport_error", "[6]",
        "First failure: rank 6 on hgx-b08 at 07:18:44, 'transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion "
        "from peer 10.50.0.11<53817> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_2' from its "
        "proxy progress thread, then '-> 6' back-traces and PyTorch's async exception 'NCCL error: remote process "
        "exited or there was a network error' with that WARN as Last error. status=12 is IBV_WC_RETRY_EXC_ERR (the "
        "remote side did not acknowledge: link down / fabric problem on the mlx5_2 rail of hgx-b08), so the "
        "category is ib_transport_error and the origin is rank 6 (the only rank on that node whose HCA failed). "
        "Consequences, not causes: ranks 4, 5, 7 killed by torchrun (SIGTERM, -15), and ranks 0-3 on hgx-b07 "
        "timing out 600 s later on SeqNum=4711 ('last enqueued work: 4711, last completed work: 4710') with "
        "exitcode -6; hgx-b07's torchrun names rank 0 as root cause, which is wrong. Nothing on hgx-b07 is "
        "faulty. The net_ib.cc line and torch line numbers other than :632/:2271/:670 are estimates.")
    write_sample("nccl-ib-completion-error-12", {"node0.log": n0.log, "node1.log": n1.log}, y)


# ------------------------------------------------------------------------------------------------
def srun_label(task, lines):
    return [f"{task}: {l}" for l in lines]


def version_mismatch():
    nodes = [("gpu-a23", "10.12.4.23", [118820, 118821]), ("gpu-a24", "10.12.4.24", [64411, 64412])]
    cl = Cluster(2, nodes, ["2.21.5", "2.18.3"], ["12.4", "12.2"], net="IB", nch=2, ib_devs=[("mlx5_0", "IB"), ("mlx5_1", "IB")], legacy_ipc=True,
                 socket_if="ib0", driver=12040, env=[("NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME set by environment to %s", "ib0")])
    comms = comm_ptrs(4, 10)
    cid = 0x7B19E04C2D8A3F65
    for node in cl.nodes:
        for p in node.procs:
            p.log = []
    per_rank = {}
    for node in cl.nodes:
        for p in node.procs:
            p.log = per_rank.setdefault(p.rank, [])
            cl.pre(node, p)
            cl.init_start(node, p, p.pid, comms[p.rank], cid, func="ncclCommInitRankConfig")
    t = D(2026, 11, 18, 9, 5, 31)
    lasts = {}
    for p in cl.nodes[1].procs:
        lasts[p.rank] = p.warn(p.pid, "bootstrap.cc:78", t, "Message truncated : received %d bytes instead of %d", 112, 64)
        for loc in ("bootstrap.cc:429", "bootstrap.cc:515", "init.cc:845", "init.cc:1364", "init.cc:1615"):
            p.bt(p.pid, loc, 3)
    t0 = D(2026, 11, 18, 9, 5, 32)
    for p in cl.nodes[0].procs:
        lasts[p.rank] = p.warn(p.pid, "misc/socket.cc:50", t0, "socketProgress: Connection closed by remote peer %s",
                               f"gpu-a24<{41730 + p.rank}>")
        for loc in ("misc/socket.cc:752", "misc/socket.cc:785", "bootstrap.cc:94", "bootstrap.cc:552", "bootstrap.cc:773",
                    "init.cc:908", "init.cc:1395", "init.cc:1682"):
            p.bt(p.pid, loc, 6)
    frames = [("/home/mlops/jobs/resnet_ddp/train.py", 88, "<module>", "main()"),
              ("/home/mlops/jobs/resnet_ddp/train.py", 51, "main", "dist.barrier()"),
              ("/opt/conda/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
              ("/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 4166, "barrier", "work = group.barrier(opts=opts)")]
    for r in range(4):
        ver = "2.18.3" if r >= 2 else "2.21.5"
        code = 3 if r >= 2 else 6
        exc = nccl_sync_text(code, ver, lasts[r], f"{SRC25}/NCCLUtils.hpp", 317)
        per_rank[r] += py_tb(r, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    n0 = srun_label(0, per_rank[0]) + srun_label(1, per_rank[1]) + [
        "srun: error: gpu-a23: tasks 0-1: Exited with exit code 1"]
    n1 = srun_label(2, per_rank[2]) + srun_label(3, per_rank[3]) + [
        "srun: error: gpu-a24: tasks 2-3: Exited with exit code 1"]
    y = yaml_text(
        "NCCL version mismatch between nodes: 2.21.5 on gpu-a23, 2.18.3 on gpu-a24 -> bootstrap 'Message truncated : received 112 bytes instead of 64'",
        "A Slurm job (srun --label, 2 tasks per node, one per GPU) runs a DDP script with PyTorch 2.5.1 on two "
        "nodes. On gpu-a23 the job uses the wheel's NCCL 2.21.5 (its rank-0 process prints the bare 'NCCL version "
        "2.21.5+cuda12.4' banner, the 2.21 line formats: 'NET/Plugin: No plugin found', 'Using non-device net "
        "plugin version 0', 'ncclCommInitRank comm ... - Init START'). On gpu-a24 a module load puts an older "
        "system NCCL 2.18.3 first on LD_LIBRARY_PATH, so its ranks write the 2.18 formats ('NET/Plugin : Plugin "
        "load (libnccl-net.so) returned 2', 'comm 0x... rank 2 nranks 4 ... - Init START' without the function "
        "name, no 'Using non-device net plugin' line, no nRanks/nNodes line) and print no banner (<= 2.21 only "
        "rank 0's process does). In the first bootstrap all-gather of peer information the 2.18.3 ranks receive "
        "112-byte records where their own struct is 64 bytes and fail with ncclInternalError; the 2.21.5 ranks "
        "then lose their bootstrap connections (ncclRemoteError). All four ranks exit 1.",
        "reconstructed line for line from NCCL 2.21.5 (node gpu-a23) and NCCL 2.18.3 (node gpu-a24) formats in the "
        "shared message catalog (nccl-messages-by-version.tsv) and PyTorch 2.5 formats; generator: "
        "samples/_reconstruct/build_misc.py",
        "2.5.1", "2.21.5 (node0.log), 2.18.3 (node1.log)", False, "nccl_version_mismatch", "[2, 3]",
        "Two NCCL versions in one job. The first WARNs are on gpu-a24 (ranks 2 and 3, NCCL 2.18.3): 'bootstrap.cc:78 "
        "NCCL WARN Message truncated : received 112 bytes instead of 64' with '-> 3' back-traces and "
        "'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
        "internal error - please report this issue to the NCCL developers, NCCL version 2.18.3'. Ranks 0 and 1 "
        "(gpu-a23, 2.21.5) fail one second later with 'socketProgress: Connection closed by remote peer gpu-a24<...>' "
        "and 'remote process exited or there was a network error, NCCL version 2.21.5': consequences. A correct "
        "diagnosis must notice the two versions: the error texts name 'NCCL version 2.18.3' on gpu-a24 and 'NCCL "
        "version 2.21.5' on gpu-a23, and the line formats differ between the node files (only node0 has a banner). "
        "origin_ranks are the ranks running the unintended older library (2.18.3 on gpu-a24); the fix is one NCCL "
        "for all nodes. This is not a network fault and not a real NCCL internal bug even though the message asks "
        "to report it. The byte counts (112 vs 64) and the file:line values are estimates.")
    write_sample("nccl-version-mismatch", {"node0.log": n0, "node1.log": n1}, y)


def version_mismatch_explicit():
    H = [0x18000, 0x2A000]
    nodes = [("ml-gpu-031", "10.41.0.31", [20911, 20912]), ("ml-gpu-032", "10.41.0.32", [31877, 31878])]
    cl = Cluster(2, nodes, ["2.26.2", "2.26.5"], ["12.2", "12.9"], net="IB", nch=2, bus=H,
                 ib_devs=[("mlx5_0", "IB"), ("mlx5_1", "IB")], socket_if="ens3f0", driver=12080,
                 aff=["ffffffff,00000000,ffffffff", "00000000,ffffffff,00000000,ffffffff"])
    comms = comm_ptrs(4, 11)
    cid = 0x2F61A93D07E4C58B
    tf = timing_fn(11)
    for node in cl.nodes:
        for p in node.procs:
            cl.pre(node, p)
        for p in node.procs:
            cl.init_start(node, p, p.pid, comms[p.rank], cid)
            p.info(p.pid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *tf(p, "boot"))
    t = D(2026, 11, 22, 16, 40, 3)
    last = {}
    for node in cl.nodes:
        for p in node.procs:
            mine = 22602 if node.n == 0 else 22605
            other_rank, other = (2, 22605) if node.n == 0 else (0, 22602)
            last[p.rank] = p.warn(p.pid, "init.cc:966", t, "Mismatched NCCL version detected : rank %d version %d rank %d version %d",
                                  p.rank, mine, other_rank, other)
            for loc in ("init.cc:1508", "init.cc:1777", "init.cc:2057"):
                p.bt(p.pid, loc, 5)
    frames = [("/workspace/sft/train.py", 140, "<module>", "main()"),
              ("/workspace/sft/train.py", 97, "main", "model = DDP(model, device_ids=[local_rank])"),
              (f"{SITE}/torch/nn/parallel/distributed.py", 835, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
              (f"{SITE}/torch/distributed/utils.py", 282, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")]
    for node in cl.nodes:
        for p in node.procs:
            ver = "2.26.2" if node.n == 0 else "2.26.5"
            exc = nccl_sync_text(5, ver, last[p.rank], f"{SRC27}/NCCLUtils.cpp", 77)
            node.log += py_tb(p.rank, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
        te = D(2026, 11, 22, 16, 40, 5, 247000 + 40000 * node.n)
        torchrun_end27(node.log, 20890 if node.n == 0 else 31860, te, node.host,
                       [(node.n * 2, 0, node.procs[0].pid, 1), (node.n * 2 + 1, 1, node.procs[1].pid, 1)], [])
    y = yaml_text(
        "Explicit NCCL version check: 'Mismatched NCCL version detected' between NCCL 2.26.2 (node 0) and 2.26.5 (node 1)",
        "Two nodes x 2 GPUs, torchrun, PyTorch 2.7.1. Node ml-gpu-031 uses the NCCL pinned by the torch wheel "
        "(2.26.2+cuda12.2); on ml-gpu-032 another package upgraded nvidia-nccl-cu12 in the virtualenv to "
        "2.26.5+cuda12.9. Since 2.22 every rank prints its own 'NCCL version' banner at INFO, so each node file shows "
        "its version. NCCL >= 2.23.4 compares the versions exchanged in the first all-gather: every rank prints "
        "'Mismatched NCCL version detected : rank R version V rank R2 version V2' (22602 vs 22605) and "
        "ncclCommInitRankConfig returns ncclInvalidUsage; DDP's first collective raises DistBackendError on all four "
        "ranks.",
        "reconstructed line for line from NCCL 2.26.2 and 2.26.5 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv; the version check exists from 2.23.4) and PyTorch 2.7 formats; generator: "
        "samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2 (node0.log), 2.26.5 (node1.log)", False, "nccl_version_mismatch", "[2, 3]",
        "The evidence is explicit on every rank: 'init.cc:966 NCCL WARN Mismatched NCCL version detected : rank 0 "
        "version 22602 rank 2 version 22605' (and the mirror on ml-gpu-032), '-> 5' back-traces, and 'invalid usage "
        "(run with NCCL_DEBUG=WARN for details), NCCL version 2.26.2' on node 0 vs '..., NCCL version 2.26.5' on node "
        "1; the banners differ too (2.26.2+cuda12.2 vs 2.26.5+cuda12.9). origin_ranks are ranks 2 and 3 on "
        "ml-gpu-032, whose NCCL differs from the one the PyTorch 2.7.1 wheel pins (2.26.2); a diagnosis may also "
        "just say 'nodes run different NCCL versions' and list both hosts. ncclInvalidUsage here is not a duplicate "
        "GPU or an application bug. init.cc line numbers and the torch NCCLUtils.cpp:77 line are estimates.")
    write_sample("nccl-version-mismatch-explicit", {"node0.log": cl.nodes[0].log, "node1.log": cl.nodes[1].log}, y)


# ------------------------------------------------------------------------------------------------
def duplicate_gpu():
    host = "ws-train-02"
    pids = [48211, 48212, 48213, 48214]
    cl = Cluster(4, [(host, "192.168.10.42", pids)], "2.26.2", "12.2", net="Socket", nch=2,
                 bus=[0x1B000] * 4, socket_if="enp65s0f0", driver=12040, aff=["ffffffff,ffffffff"] * 4)
    node = cl.nodes[0]
    for p in node.procs:
        p.gpu = 0
        p.dev = 0
    comms = comm_ptrs(4, 12)
    cid = 0x6D3A0F91B2C847E5
    tf = timing_fn(12)
    for p in node.procs:
        cl.pre(node, p)
    for p in node.procs:
        cl.net_lines(node, p, p.pid, True)
        p.info(p.pid, "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START",
               "ncclCommInitRankConfig", comms[p.rank], p.rank, 4, 0, 0, 0x1B000, cid)
        p.info(p.pid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *tf(p, "boot"))
    t = D(2026, 11, 21, 11, 12, 58)
    last = {}
    for p in node.procs:
        other = 1 if p.rank == 0 else 0
        last[p.rank] = p.warn(p.pid, "init.cc:1012", t, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx",
                              p.rank, other, 0x1B000)
        for loc in ("init.cc:1492", "init.cc:1777", "init.cc:2057"):
            p.bt(p.pid, loc, 5)
    frames = [("/home/ana/proj/train_ddp.py", 64, "<module>", "main()"),
              ("/home/ana/proj/train_ddp.py", 39, "main", "dist.barrier()"),
              (f"{SITE}/torch/distributed/c10d_logger.py", 81, "wrapper", "return func(*args, **kwargs)"),
              (f"{SITE}/torch/distributed/distributed_c10d.py", 4635, "barrier", "work = group.barrier(opts=opts)")]
    for p in node.procs:
        exc = nccl_sync_text(5, "2.26.2", last[p.rank], f"{SRC27}/NCCLUtils.cpp", 77)
        node.log += py_tb(p.rank, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    torchrun_end27(node.log, 48190, D(2026, 11, 21, 11, 13, 0, 412000), host,
                   [(1, 1, 48212, 1), (0, 0, 48211, 1), (2, 2, 48213, 1), (3, 3, 48214, 1)], [], script="train_ddp.py")
    y = yaml_text(
        "Duplicate GPU: all 4 local ranks on CUDA device 1b000 (CUDA_VISIBLE_DEVICES=0 exported for every rank)",
        "torchrun --nproc-per-node 4 on a 4-GPU workstation; a wrapper script exports CUDA_VISIBLE_DEVICES=0 before "
        "starting Python, so every local rank sees only the first GPU and uses cudaDev 0 (busId 1b000). NCCL 2.26.2 "
        "starts the communicator on all four ranks ('cudaDev 0 nvmlDev 0 busId 1b000' in every Init START line) and "
        "after the first all-gather of peer information each rank finds another rank of the same host on the same "
        "GPU: 'Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000', ncclInvalidUsage, and the first "
        "collective (dist.barrier) raises DistBackendError 'invalid usage' on every rank.",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv: 'Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx', "
        "2.8.4-2.29.7) and PyTorch 2.7 formats; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "duplicate_gpu", "[0, 1, 2, 3]",
        "Every rank prints the WARN 'Duplicate GPU detected : rank R and rank R2 both on CUDA device 1b000' and every "
        "Init START line shows the same device (cudaDev 0, busId 1b000) for four different ranks and pids on one host; "
        "PyTorch then reports 'NCCL error in: ...NCCLUtils.cpp:77, invalid usage (run with NCCL_DEBUG=WARN for details), "
        "NCCL version 2.26.2' with the duplicate-GPU WARN as Last error. Root cause: the rank-to-GPU mapping "
        "(CUDA_VISIBLE_DEVICES identical for all local ranks / torch.cuda.set_device not called with LOCAL_RANK); "
        "all four ranks are affected, none is a victim of another. 'invalid usage' here is not a collective "
        "mismatch. init.cc line numbers and torch line numbers are estimates.")
    write_sample("nccl-duplicate-gpu", {"console.log": node.log}, y)



# ------------------------------------------------------------------------------------------------
def watchdog_cascade():
    H = [0x18000, 0x2A000, 0x3A000, 0x5D000]
    nodes = [("trn-h100-05", "10.70.3.5", [66120 + i for i in range(4)]),
             ("trn-h100-06", "10.70.3.6", [59804 + i for i in range(4)])]
    cl = Cluster(4, nodes, "2.26.2", "12.2", net="IB", nch=4, bus=H, ib_devs=IB4, socket_if="bond0", driver=12040,
                 aff=["ffffffff,00000000,ffffffff"] * 2 + ["00000000,ffffffff,00000000,ffffffff"] * 2)
    comms = comm_ptrs(8, 13)
    cl.full_init(comms, 0x0E5B7A13C9D2F468, timing=timing_fn(13))
    n0, n1 = cl.nodes
    t = D(2026, 11, 27, 2, 13, 7)
    w = work(183, "ALLREDUCE", 262144000, 262144000, 600000)
    order = [0, 2, 1, 4, 6, 5, 7]
    for k, r in enumerate(order):
        node = cl.nodes[r // 4]
        node.log += timeout27(r, t, 204117560 + 3321077 * k, w, 600012 + 4 * k, 183, 183, 182, 0x7F2200000000 + 0x1000000 * r)
    # rank 3: its watchdog has nothing pending (it never enqueued 183); PG 0's monitor gets the dump signal
    pg3 = PG0.format(r=3)
    t3 = D(2026, 11, 27, 2, 13, 8)
    n0.log.append(c10(3, "E", t3, 517833204, "ProcessGroupNCCL.cpp", 1679, f"{pg3} Observed flight recorder dump signal from another rank via TCPStore."))
    n0.log.append(c10(3, "E", t3, 517961882, "ProcessGroupNCCL.cpp", 1746,
                      f"{pg3} Received a dump signal due to a collective timeout from  rank 0 and we will try our best to dump "
                      f"the debug info. Last enqueued NCCL work: 182, last completed NCCL work: 182.{DUMP_TAIL}"))
    ta = D(2026, 11, 27, 2, 13, 8, 402000)
    n0.log.append(pylog("W", ta, 66101, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                        "Sending process 66123 closing signal SIGTERM"))
    torchrun_end27(n0.log, 66101, D(2026, 11, 27, 2, 13, 9, 77000), "trn-h100-05",
                   [(0, 0, 66120, -6), (1, 1, 66121, -6), (2, 2, 66122, -6)], [(3, 3, 66123, -15)])
    torchrun_end27(n1.log, 59785, ta, "trn-h100-06", [(4, 0, 59804, -6), (5, 1, 59805, -6), (6, 2, 59806, -6),
                                                      (7, 3, 59807, -6)], [])
    y = yaml_text(
        "Watchdog cascade: 7 of 8 ranks time out in ALLREDUCE SeqNum=183; rank 3 never enqueued it (hung on the host side)",
        "Two nodes x 4 H100 over InfiniBand, NCCL 2.26.2, PyTorch 2.7.1 under torchrun (one console per node, "
        "local ranks interleaved). Training runs normally for 182 collectives. Then rank 3 (trn-h100-05, local rank "
        "3, pid 66123) stops issuing work (stuck in host-side Python code before the next gradient all-reduce); the "
        "other seven ranks enqueue ALLREDUCE SeqNum=183 and wait for it. After 600 s each of them logs 'Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=183, OpType=ALLREDUCE, ...) ran for 6000xx "
        "milliseconds' and 'failure detected by watchdog at work sequence id: 183 PG status: last enqueued work: 183, "
        "last completed work: 182', signals the flight-recorder dump and aborts. Rank 3 has no pending work, so its "
        "watchdog never fires; its heartbeat monitor receives the dump signal 'from  rank 0' with 'Last enqueued NCCL "
        "work: 182, last completed NCCL work: 182', and torchrun then stops it with SIGTERM (-15). Both torchrun agents "
        "report exitcode -6 for all their workers, and trn-h100-05's 'Root Cause (first observed failure)' is rank 0.",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and PyTorch 2.7 formats (torch-messages.tsv, torch-failure-messages.md A1/A2/A7, "
        "G1); generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "collective_timeout_hung_rank", "[3]",
        "The origin is rank 3 and the proof is the sequence numbers: ranks 0-2 and 4-7 time out on SeqNum=183 with 'last "
        "enqueued work: 183, last completed work: 182' (they entered 183 and it never completed), while rank 3 reports "
        "'Last enqueued NCCL work: 182, last completed NCCL work: 182' in its dump-signal line (in PyTorch 2.7 this is "
        "how a rank whose watchdog has nothing pending shows its PG status): it finished 182 and never enqueued 183. "
        "Rank 3 has no watchdog timeout of its own; it only receives the dump signal from rank 0 and is then SIGTERMed by torchrun (exitcode -15, the only worker not ending in SIGABRT). Everything "
        "else is consequence: seven identical timeouts, the dump signals, 'Some NCCL operations have failed or timed "
        "out', SIGABRT (-6) on all workers. torchrun's 'Root Cause (first observed failure)' on trn-h100-05 names "
        "rank 0 (exitcode -6) and trn-h100-06's names rank 4: both are victims, a correct diagnosis must not follow "
        "them. There is no NCCL WARN: the network is fine. The brief's 'last enqueued work: 182, last completed work: "
        "182' for rank 3 appears in the real 2.7 dump-signal wording ('Last enqueued NCCL work: 182, last completed "
        "NCCL work: 182'). Torch line numbers other than :632/:2271/:670/:1746 are estimates.")
    write_sample("nccl-watchdog-cascade-lagging-rank", {"node0.log": n0.log, "node1.log": n1.log}, y)


# ------------------------------------------------------------------------------------------------
def timeout_1ms():
    H = [0x18000, 0x2A000, 0x3A000, 0x5D000]
    cl = Cluster(4, [("dev-h100-2", "10.1.0.52", [7751, 7752, 7753, 7754])], "2.26.2", "12.2", net="IB", nch=2, bus=H,
                 ib_devs=IB4, socket_if="eth0", driver=12040,
                 aff=["ffffffff,00000000,ffffffff"] * 2 + ["00000000,ffffffff,00000000,ffffffff"] * 2)
    node = cl.nodes[0]
    comms = comm_ptrs(4, 14)
    cid = 0x38AF09C17D2E6B54
    tf = timing_fn(14)
    for p in node.procs:
        cl.pre(node, p)
    for p in node.procs:
        cl.init_start(node, p, p.pid, comms[p.rank], cid)
    for p in node.procs:
        cl.init_topo(node, p, p.pid, comms[p.rank], tf(p, "boot"), (p.pid + 59, p.pid + 60, 4 + 16 * p.gpu))
    for p in node.procs:
        cl.init_tail(node, p, p.pid, comms[p.rank], cid, tf(p, "init"))
    for p in node.procs:
        for c in range(2):
            nxt = (p.rank + 1) % 4
            p.info(p.pid, "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s", c, 0, p.rank, p.gpu, nxt, nxt, "CUMEM", "", "")
    for p in node.procs:
        cl.connected(p, p.pid, gdr=1)
    t = D(2026, 11, 23, 18, 30, 51)
    w = work(1, "ALLREDUCE", 1, 1, 1)
    for k, r in enumerate([3, 0, 2, 1]):
        node.log += timeout27(r, t, 412090118 + 1000271 * k, w, 88 + 2 * k, 1, 1, -1, 0x7F83A0000000 + 0x1000000 * r)
    torchrun_end27(node.log, 7733, D(2026, 11, 23, 18, 30, 53, 605000), "dev-h100-2",
                   [(3, 3, 7754, -6), (0, 0, 7751, -6), (1, 1, 7752, -6), (2, 2, 7753, -6)], [], script="train.py")
    y = yaml_text(
        "Misconfigured process-group timeout: Timeout(ms)=1, the very first 1-element all-reduce 'times out' after ~90 ms on every rank",
        "Single node, 4 H100, torchrun, PyTorch 2.7.1, NCCL 2.26.2. The training config passes the process-group "
        "timeout in the wrong unit (timedelta(milliseconds=1) where seconds were meant), so init_process_group runs "
        "with a 1 ms timeout. NCCL initialises normally (Init COMPLETE on all 4 ranks, P2P/CUMEM connections); the "
        "first collective, a one-element all-reduce, has not completed within 1 ms and the watchdog of every rank "
        "reports 'WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 88..94 "
        "milliseconds before timing out' and aborts the process.",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and PyTorch 2.7 formats (torch-messages.tsv); modelled on public 2.7 logs of a "
        "1 ms watchdog timeout; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "timeout_misconfigured", "[0, 1, 2, 3]",
        "The tell is the timeout value itself: 'Timeout(ms)=1' in every WorkNCCL record, with 'ran for 88..94 "
        "milliseconds' on SeqNum=1, NumelIn=1, and 'last completed work: -1' on all four ranks at the same time. No "
        "rank lags, there is no NCCL WARN, init and connections are healthy: the job's timeout is misconfigured (a "
        "unit error), not a hung rank or a network problem. All ranks are equally affected (origin = all ranks, a "
        "configuration error); torchrun's root cause (rank 3, the first to exit) is arbitrary. The fix is a sane "
        "timeout (default 10 min). Torch line numbers other than :632/:2271/:670/:1746 are estimates.")
    write_sample("nccl-timeout-1ms", {"console.log": node.log}, y)


# ------------------------------------------------------------------------------------------------
def socket_ifname_absent():
    """torch 2.10.0 + NCCL 2.27.5: NCCL_SOCKET_IFNAME=eth1 names no interface; rank 0 cannot create the unique id."""
    SITE10 = "/opt/venv/lib/python3.12/site-packages"
    SRC10 = "/pytorch/torch/csrc/distributed/c10d"
    logs = {0: [], 1: []}
    host = {0: "a100-node-14", 1: "a100-node-15"}
    pids = {0: [30411, 30412, 30413, 30414], 1: [27180, 27181, 27182, 27183]}
    p0 = Proc(logs[0], host[0], pids[0][0], "2.27.5", "12.9", dev=0)
    t = D(2026, 11, 25, 8, 2, 14)
    p0.info(p0.pid, "NCCL_SOCKET_IFNAME set by environment to %s", "eth1")
    last = p0.warn(p0.pid, "bootstrap.cc:130", t, "Bootstrap : no socket interface found")
    for loc in ("init.cc:103", "init.cc:134", "init.cc:145"):
        p0.bt(p0.pid, loc, 5)
    frames = [("/srv/jobs/bert/pretrain.py", 301, "<module>", "main()"),
              ("/srv/jobs/bert/pretrain.py", 244, "main", "dist.all_reduce(warmup, group=None)"),
              (f"{SITE10}/torch/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
              (f"{SITE10}/torch/distributed/distributed_c10d.py", 3003, "all_reduce", "work = group.allreduce([tensor], opts)")]
    exc = nccl_sync_text(5, "2.27.5", last, f"{SRC10}/ProcessGroupNCCL.cpp", 3526)
    logs[0] += py_tb(0, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    ta = D(2026, 11, 25, 8, 2, 16, 118000)
    for pid in pids[0][1:]:
        logs[0].append(pylog("W", ta, 30395, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 908,
                             f"Sending process {pid} closing signal SIGTERM"))
    b = []
    torchrun_end27(b, 30395, D(2026, 11, 25, 8, 2, 16, 532000), host[0], [(0, 0, pids[0][0], 1)],
                   [(1, 1, pids[0][1], -15), (2, 2, pids[0][2], -15), (3, 3, pids[0][3], -15)], script="pretrain.py")
    logs[0] += [l.replace("/opt/venv/lib/python3.11/", "/opt/venv/lib/python3.12/") for l in b]
    # node 1: its ranks wait for rank 0's ncclUniqueId in the agent's TCPStore, which goes away with node 0's agent
    t1 = D(2026, 11, 25, 8, 2, 16, 540000)
    for i in range(4):
        r = 4 + i
        msg = (f"[{r}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key "
               f"'0', but store->get('0') got error: Failed to recv, got 0 bytes. Connection was likely closed. Did the "
               f"remote server shutdown or crash?. This may indicate a possible application crash on rank 0 or a network "
               f"set up issue.")
        logs[1] += py_tb(r, frames, ["torch.distributed.DistBackendError: " + msg])
    b = []
    torchrun_end27(b, 27161, D(2026, 11, 25, 8, 2, 18, 14000), host[1], [(4, 0, 27180, 1), (5, 1, 27181, 1),
                                                                         (6, 2, 27182, 1), (7, 3, 27183, 1)], [],
                   script="pretrain.py")
    logs[1] += [l.replace("/opt/venv/lib/python3.11/", "/opt/venv/lib/python3.12/") for l in b]
    y = yaml_text(
        "NCCL_SOCKET_IFNAME=eth1 on hosts that only have ens* interfaces: 'Bootstrap : no socket interface found' on rank 0",
        "Two nodes x 4 A100, torchrun (c10d rendezvous, agent-hosted store), PyTorch 2.10.0 with NCCL 2.27.5. The job "
        "script exports NCCL_SOCKET_IFNAME=eth1, copied from an older cluster; these hosts name their NICs ens1f0/ens1f1 "
        "and have no eth1. The NCCL communicator is created lazily by the first collective: rank 0 has to create the "
        "ncclUniqueId, NCCL's bootstrap network init finds no interface matching 'eth1' and fails with 'Bootstrap : no "
        "socket interface found' (ncclInvalidUsage). Rank 0 raises DistBackendError and exits; torchrun on node 0 "
        "stops ranks 1-3 and exits, taking the rendezvous store with it, so the ranks on node 1, which were waiting "
        "in store->get('0') for the unique id, fail with 'Failed to recv, got 0 bytes'.",
        "reconstructed line for line from NCCL 2.27.5 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and PyTorch 2.10 formats (torch-messages.tsv, A9/F5 in "
        "torch-failure-messages.md); generator: samples/_reconstruct/build_misc.py",
        "2.10.0", "2.27.5", False, "wrong_network_interface", "[0]",
        "Root cause on rank 0 (a100-node-14, pid 30411): 'NCCL_SOCKET_IFNAME set by environment to eth1' immediately "
        "followed by 'bootstrap.cc:130 NCCL WARN Bootstrap : no socket interface found', '-> 5' back-traces and "
        "'NCCL error in: ...ProcessGroupNCCL.cpp:3526, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version "
        "2.27.5 ... Last error: Bootstrap : no socket interface found'. The interface named in NCCL_SOCKET_IFNAME does "
        "not exist (wrong_network_interface; the same variable is set on all ranks, but only rank 0 gets far enough to "
        "show it because only rank 0 creates the unique id). Consequences: ranks 1-3 SIGTERMed by torchrun (-15), "
        "ranks 4-7 failing with '[R] is setting up NCCL communicator and retrieving ncclUniqueId from [0] ... got error: "
        "Failed to recv, got 0 bytes' (they blame rank 0 / the store, correctly pointing at rank 0, not at the store "
        "itself). No version banner is printed because the failure happens before any communicator starts. "
        "bootstrap.cc/init.cc line numbers and torch line numbers are estimates.")
    write_sample("nccl-socket-ifname-absent", {"node0.log": logs[0], "node1.log": logs[1]}, y)



# ------------------------------------------------------------------------------------------------
def gloo_64node():
    """Seed 000: Megatron-LM on 64 nodes x 8 GPUs, GLOO_SOCKET_IFNAME=bond4; gloo full mesh exhausts ulimit -n."""
    GLOO = "/pytorch/third_party/gloo/"
    MEG = "/workspace/Megatron-LM"
    SP = "/usr/local/lib/python3.12/dist-packages"
    emfile = (f"[enforce fail at {GLOO}gloo/transport/tcp/socket.cc:24] rv != -1. -1 vs -1. socket: Too many open files")
    frames = [
        (f"{MEG}/pretrain_gpt.py", 338, "<module>", "pretrain("),
        (f"{MEG}/megatron/training/training.py", 397, "pretrain", "initialize_megatron("),
        (f"{MEG}/megatron/training/initialize.py", 98, "initialize_megatron", "finish_mpu_init()"),
        (f"{MEG}/megatron/training/initialize.py", 78, "finish_mpu_init", "_initialize_distributed(get_embedding_ranks, get_position_embedding_ranks)"),
        (f"{MEG}/megatron/training/initialize.py", 369, "_initialize_distributed", "mpu.initialize_model_parallel("),
        (f"{MEG}/megatron/core/parallel_state.py", 740, "initialize_model_parallel", "group_gloo = create_group("),
        (f"{MEG}/megatron/core/parallel_state.py", 204, "create_group", "group = torch.distributed.new_group(**kwargs)"),
        (f"{SP}/torch/distributed/c10d_logger.py", 95, "wrapper", "func_return = func(*args, **kwargs)"),
        (f"{SP}/torch/distributed/distributed_c10d.py", 5092, "new_group", "return _new_group_with_tag("),
        (f"{SP}/torch/distributed/distributed_c10d.py", 5182, "_new_group_with_tag", "pg, pg_store = _new_process_group_helper("),
        (f"{SP}/torch/distributed/distributed_c10d.py", 1902, "_new_process_group_helper", "backend_class = ProcessGroupGloo("),
    ]
    files = {}
    t0 = D(2026, 11, 27, 9, 14, 1)
    plan = {0: ("pod4-gpu001", [0, 3, 6], 144301), 17: ("pod4-gpu018", [1, 2, 4, 5, 7], 97640), 63: ("pod5-gpu064", [2, 6], 201177)}
    for node, (host, fail_local, apid) in plan.items():
        lab = f"{node}: "
        out = []
        tb = D(2026, 11, 27, 9, 12, 40, 118000)
        for l in ["", "*****************************************",
                  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
                  "being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                  "*****************************************"]:
            out.append(pylog("W", tb, apid, "site-packages/torch/distributed/run.py", 766, l))
        if node == 0:
            out += ["using world size: 512, data-parallel size: 512, context-parallel size: 1, tensor-model-parallel size: 1, "
                    "pipeline-model-parallel size: 1 ",
                    "> initializing torch distributed ...",
                    "> initialized tensor model parallel with size 1",
                    "> initialized pipeline model parallel with size 1"]
        for k, g in enumerate(fail_local):
            r = node * 8 + g
            t = D(2026, 11, 27, 9, 14, 1 + k // 3)
            out.append(c10(r, "E", t, 118264951 + 4171337 * k + 913 * r, "ProcessGroupGloo.cpp", 143,
                           f"Gloo connectFullMesh failed with {emfile}"))
        for g in fail_local:
            r = node * 8 + g
            out += py_tb(r, frames, [f"RuntimeError: Gloo connectFullMesh failed with {emfile}"])
        ok_local = [g for g in range(8) if g not in fail_local]
        ta = D(2026, 11, 27, 9, 14, 4, 317000)
        pids = {g: apid + 19 + g for g in range(8)}
        for g in ok_local:
            out.append(pylog("W", ta, apid, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                             f"Sending process {pids[g]} closing signal SIGTERM"))
        b = []
        first = fail_local[0]
        torchrun_end27(b, apid, D(2026, 11, 27, 9, 14, 5, 902000), host,
                       [(node * 8 + first, first, pids[first], 1)] + [(node * 8 + g, g, pids[g], 1) for g in fail_local[1:]],
                       [(node * 8 + g, g, pids[g], -15) for g in ok_local], script="pretrain_gpt.py")
        b = [l.replace("/opt/venv/lib/python3.11/site-packages", SP).replace("/opt/venv/bin/torchrun", "/usr/local/bin/torchrun")
             .replace("/opt/venv/bin/python3", "/usr/bin/python") for l in b]
        out += b
        files[f"node{node:02d}.log"] = [lab + l for l in out]
    y = yaml_text(
        "Megatron-LM on 64 nodes: Gloo connectFullMesh fails with 'socket: Too many open files' (GLOO_SOCKET_IFNAME=bond4)",
        "Seed 000: a Megatron-LM GPT pre-training job on 64 nodes x 8 GPUs (512 ranks, TP=1, PP=1, so the data-parallel "
        "group spans all 512 ranks) with GLOO_SOCKET_IFNAME=bond4, launched as one torchrun per node by srun --label "
        "(the label is the node index). It works up to 60 nodes and fails at 64. While initialize_model_parallel "
        "creates the Gloo data-parallel group, each process must open one TCP socket per peer (511) on top of the "
        "descriptors it already holds (NCCL and TCPStore sockets, CUDA/IPC handles, shared libraries, data-loader "
        "files); at 64 nodes this crosses the per-process open-file limit (ulimit -n 1024), so socket() fails with EMFILE "
        "inside Gloo's full-mesh connect on many ranks: 'Gloo connectFullMesh failed with [enforce fail at "
        ".../gloo/transport/tcp/socket.cc:24] rv != -1. -1 vs -1. socket: Too many open files'. Only three node "
        "consoles are included (nodes 0, 17 and 63 of 64); each shows some ranks failing with that error (exitcode 1) "
        "and torchrun stopping the rest (SIGTERM).",
        "reconstructed from seed story 000 (the story gives only 'RuntimeError: Gloo connectFullMesh failed ...'; the inner "
        "Gloo error is a reconstruction choice, see notes) using the PyTorch 2.7 formats of torch-messages.tsv, the Gloo "
        "socket.cc:24 enforce format of gloo-messages.tsv (torch-failure-messages.md C4/C6) and torch-prefixes.md "
        "(srun --label, c10 envelope); generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "null", False, "fd_limit_exhausted", "[0, 3, 6, 137, 138, 140, 141, 143, 506, 510]",
        "Evidence: every failing rank logs '[rankR]:[E... ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
        "[enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/socket.cc:24] rv != -1. -1 vs -1. socket: Too "
        "many open files' and raises the same RuntimeError from torch.distributed.new_group(backend='gloo') inside "
        "Megatron's initialize_model_parallel/create_group. EMFILE ('Too many open files') means the per-process "
        "file-descriptor limit is exhausted: fd_limit_exhausted, not a network, interface (bond4) or Megatron bug; the "
        "fix is a higher ulimit -n (or fewer/lighter Gloo groups). origin_ranks lists the ranks in the included node "
        "files that hit EMFILE themselves (the other ranks of those nodes are SIGTERMed by torchrun, exitcode -15, "
        "victims); in the full job the same happens on all 64 nodes. The inner Gloo error is a reconstruction choice: "
        "the seed story only quotes 'Gloo connectFullMesh failed ...'; EMFILE at socket.cc:24 is what its explanation "
        "(one socket per peer, ulimit -n) implies. The socket.cc:24 location is from the Gloo catalog (current Gloo); "
        "the ProcessGroupGloo.cpp line, Megatron and torch line numbers are estimates; the Megatron banner lines are "
        "context only. produced.nccl is null: no NCCL line is involved.")
    y = y.replace('nccl: "null"', "nccl: null")
    write_sample("nccl-gloo-64node-connectfullmesh", files, y)



# ------------------------------------------------------------------------------------------------
def _ddp_frames(script):
    return [(script, 131, "<module>", "main()"),
            (script, 88, "main", "model = DDP(model, device_ids=[local_rank])"),
            (f"{SITE}/torch/nn/parallel/distributed.py", 835, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
            (f"{SITE}/torch/distributed/utils.py", 282, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")]


def roce_gid_einval():
    H = [0x18000, 0x2A000, 0x3A000, 0x5D000]
    roce = [(f"mlx5_{i}", "RoCE") for i in range(4)]
    nodes = [("rc-node-21", "10.90.21.1", [40117 + i for i in range(4)]), ("rc-node-22", "10.90.22.1", [38562 + i for i in range(4)])]
    cl = Cluster(4, nodes, "2.26.2", "12.2", net="IB", nch=4, bus=H, ib_devs=roce, socket_if="ens1f0np0", driver=12040,
                 aff=["ffffffff,00000000,ffffffff"] * 2 + ["00000000,ffffffff,00000000,ffffffff"] * 2,
                 env=[("NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME set by environment to %s", "ens1f0np0"),
                      ("NCCL_IB_GID_INDEX", None, 1)])
    comms = comm_ptrs(8, 15)
    cl.full_init(comms, 0x1D4E8A3B96C27F05, phases=("pre", "start", "topo", "tail"), timing=timing_fn(15))
    t = D(2026, 11, 19, 13, 44, 20)
    gids = {0: "fe80::a288:c2ff:fe4b:1d30", 1: "fe80::a288:c2ff:fe4b:2e18"}
    frames = _ddp_frames("/data/exp/llm/train.py")
    for node in cl.nodes:
        peer_node = 1 - node.n
        for p in node.procs:
            # ring edge ranks connect over RoCE at the first collective; the RTR transition is rejected
            tid = p.pid + 61
            info = (f"on dev mlx5_{p.gpu}:1, curr state INIT, next state RTR, local GID index 1, local GID "
                    f"{gids[node.n]}, remote GID {gids[peer_node]}")
            p.warn(tid, "misc/ibvwrap.cc:291", t, "Call to ibv_modify_qp failed with %d %s, %s", 22, "Invalid argument", info)
            for loc in ("transport/net_ib.cc:1020", "transport/net_ib.cc:1378", "transport/net.cc:691", "proxy.cc:1492", "proxy.cc:1641"):
                p.bt(tid, loc, 2)
            last = p.warn(tid, "proxy.cc:1754", t, "[Proxy Service %d] Failed to execute operation %s from rank %d, retcode %d",
                          p.rank, "Connect", p.rank, 2)
            for loc in ("proxy.cc:1215", "transport/net.cc:402", "transport.cc:197", "transport.cc:283", "enqueue.cc:1612",
                        "group.cc:164", "group.cc:501", "group.cc:674", "enqueue.cc:2320"):
                p.bt(p.pid, loc, 2)
            exc = nccl_sync_text(2, "2.26.2", last, f"{SRC27}/ProcessGroupNCCL.cpp", 3356)
            node.log += py_tb(p.rank, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
        torchrun_end27(node.log, node.procs[0].pid - 19, D(2026, 11, 19, 13, 44, 22, 650000), node.host,
                       [(p.rank, p.gpu, p.pid, 1) for p in node.procs], [])
    y = yaml_text(
        "RoCE: NCCL_IB_GID_INDEX=1 forces a link-local GID, ibv_modify_qp to RTR fails with EINVAL on every connection",
        "Two nodes x 4 H100 with ConnectX-7 in Ethernet mode (RoCE), NCCL 2.26.2, PyTorch 2.7.1, torchrun. The job "
        "environment forces NCCL_IB_GID_INDEX=1, copied from another cluster; on these hosts GID index 1 is the "
        "link-local (fe80::) RoCE v2 GID, not the routable IPv4-mapped one, and the two nodes are in different "
        "subnets. NCCL lists the RoCE devices and initialises the communicator; at the first collective every ring "
        "connection's QP transition INIT->RTR is rejected: 'Call to ibv_modify_qp failed with 22 Invalid argument, on "
        "dev mlx5_N:1, curr state INIT, next state RTR, local GID index 1, local GID fe80::..., remote GID fe80::...', "
        "the proxy reports the failed Connect and every rank raises DistBackendError (unhandled system error).",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv: 'Call to ibv_modify_qp failed with %d %s, %s', 2.24.3+; "
        "nccl-failure-messages.md section 5) and PyTorch 2.7 formats; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "bad_nccl_env_config", "[0, 1, 2, 3, 4, 5, 6, 7]",
        "Every rank shows 'NCCL_IB_GID_INDEX set by environment to 1.' and then, on the RTR transition, 'Call to "
        "ibv_modify_qp failed with 22 Invalid argument, ... local GID index 1, local GID fe80::...' (EINVAL with a "
        "forced GID index: NCCL's own hint for this case is to use NCCL_IB_GID_INDEX=-1 / unset it), followed by "
        "'[Proxy Service N] Failed to execute operation Connect ..., retcode 2' and 'unhandled system error' from "
        "PyTorch. The fault is the forced environment setting (bad_nccl_env_config), identical on all ranks, not a "
        "broken link or a dead peer (no completion errors, no closed connections). The link-local fe80:: GIDs on "
        "both sides are the tell. Back-trace and torch line numbers are estimates.")
    write_sample("nccl-roce-gid-index-einval", {"node0.log": cl.nodes[0].log, "node1.log": cl.nodes[1].log}, y)


def cuda_oom_init():
    H = [0x18000, 0x2A000, 0x3A000, 0x5D000, 0x9A000, 0xAB000, 0xBA000, 0xDB000]
    cl = Cluster(8, [("hgx-c03", "10.20.3.3", [91402 + i for i in range(8)])], "2.26.2", "12.2", net="IB", nch=2, bus=H,
                 ib_devs=IB8, socket_if="eno1", driver=12040, aff=["ffffffff,00000000,ffffffff"] * 4 + ["00000000,ffffffff,00000000,ffffffff"] * 4)
    node = cl.nodes[0]
    comms = comm_ptrs(8, 16)
    cid = 0x47C2E90A1B3D6F58
    tf = timing_fn(16)
    for p in node.procs:
        cl.pre(node, p)
    for p in node.procs:
        cl.init_start(node, p, p.pid, comms[p.rank], cid)
    p5 = node.procs[5]
    t = D(2026, 11, 28, 6, 51, 12)
    p5.info(p5.pid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *tf(p5, "boot"))
    p5.warn(p5.pid, "include/alloc.h:339", t, "Cuda failure '%s'", "out of memory")
    last = p5.warn(p5.pid, "include/alloc.h:345", t, "Failed to CUDA calloc %ld bytes", 16777216)
    for loc in ("init.cc:497", "init.cc:1474", "init.cc:1777", "init.cc:2057"):
        p5.bt(p5.pid, loc, 1)
    frames = _ddp_frames("/home/svc/jobs/vit/train.py")
    exc = nccl_sync_text(1, "2.26.2", last, f"{SRC27}/NCCLUtils.cpp", 77)
    node.log += py_tb(5, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    ta = D(2026, 11, 28, 6, 51, 13, 840000)
    for p in node.procs:
        if p.rank != 5:
            node.log.append(pylog("W", ta, 91383, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900,
                                  f"Sending process {p.pid} closing signal SIGTERM"))
    torchrun_end27(node.log, 91383, D(2026, 11, 28, 6, 51, 14, 251000), "hgx-c03", [(5, 5, p5.pid, 1)],
                   [(p.rank, p.gpu, p.pid, -15) for p in node.procs if p.rank != 5])
    y = yaml_text(
        "CUDA out of memory inside NCCL init on GPU 5 (a stale process still holds its memory)",
        "One HGX node, 8 H100, torchrun --nproc-per-node 8, NCCL 2.26.2, PyTorch 2.7.1. A previous job's process is "
        "still alive on GPU 5 and holds almost all of its memory. All ranks start the communicator at DDP's first "
        "collective; rank 5 cannot allocate NCCL's device buffers: 'Cuda failure 'out of memory'' then 'Failed to CUDA "
        "calloc 16777216 bytes', ncclUnhandledCudaError, and its DDP constructor raises DistBackendError 'unhandled "
        "cuda error'. torchrun stops the other seven ranks, which were waiting in the init bootstrap.",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv: \"Cuda failure '%s'\", 'Failed to CUDA calloc %ld bytes') and PyTorch 2.7 "
        "formats; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "cuda_oom", "[5]",
        "Origin rank 5 (hgx-c03, GPU 5, busId ab000, pid 91407): \"include/alloc.h:339 NCCL WARN Cuda failure 'out of "
        "memory'\" and 'Failed to CUDA calloc 16777216 bytes' with '-> 1' back-traces, then 'NCCL error in: "
        "...NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2' "
        "(ncclUnhandledCudaError). Only 16 MB could not be allocated: the GPU was already full before training "
        "started (another process on GPU 5), so the diagnosis is cuda_oom on rank 5, not an NCCL or network fault. "
        "The other ranks are SIGTERMed by torchrun (-15) and show no error of their own. alloc.h/init.cc line numbers "
        "and torch line numbers are estimates.")
    write_sample("nccl-cuda-oom-during-init", {"console.log": node.log}, y)


def nvls_fabric_manager():
    H = [0x18000, 0x2A000, 0x3A000, 0x5D000, 0x9A000, 0xAB000, 0xBA000, 0xDB000]
    cl = Cluster(8, [("dgxh100-11", "10.8.0.111", [120330 + i for i in range(8)])], "2.27.5", "12.9", net="IB", nch=2,
                 bus=H, ib_devs=IB8, socket_if="enp170s0f0", driver=12080,
                 aff=["ffffffff,00000000,ffffffff"] * 4 + ["00000000,ffffffff,00000000,ffffffff"] * 4,
                 env=[("NCCL_NVLS_ENABLE", None, 1)])
    node = cl.nodes[0]
    comms = comm_ptrs(8, 17)
    cid = 0x5B80D2E6A9C41F37
    tf = timing_fn(17)
    for p in node.procs:
        cl.pre(node, p)
    for p in node.procs:
        cl.init_start(node, p, p.pid, comms[p.rank], cid)
        p.info(p.pid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *tf(p, "boot"))
        p.info(p.pid, "Setting affinity for GPU %d to %s", p.gpu, cl.aff[p.gpu])
        p.info(p.pid, "NVLS multicast support is %savailable on dev %d (NVLS_NCHANNELS %d)", "", p.gpu, 16)
    t = D(2026, 11, 26, 22, 7, 45)
    frames = _ddp_frames("/lustre/proj/gpt/train.py")
    for p in node.procs:
        msg = p.warn(p.pid, "transport/nvls.cc:285", t,
                     "Failed to bind NVLink SHARP (NVLS) Multicast memory of size %ld : CUDA error %d '%s'.\nThis is usually "
                     "caused by a system or configuration error in the Fabric Manager or NVSwitches.\nDo not force-enable "
                     "NVLS (NCCL_NVLS_ENABLE=1) if you wish to avoid this error in the future.", 1610612736, 802,
                     "system not yet initialized")
        for loc in ("transport/nvls.cc:440", "transport/nvls.cc:611", "init.cc:1336", "init.cc:1762", "init.cc:2057"):
            p.bt(p.pid, loc, 1)
        exc = nccl_sync_text(1, "2.27.5", msg, f"{SRC27}/NCCLUtils.cpp", 77)
        node.log += py_tb(p.rank, frames, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    torchrun_end27(node.log, 120311, D(2026, 11, 26, 22, 7, 47, 380000), "dgxh100-11",
                   [(p.rank, p.gpu, p.pid, 1) for p in node.procs], [])
    y = yaml_text(
        "NVLS multicast bind fails with CUDA error 802 'system not yet initialized': Fabric Manager not running on an HGX H100",
        "One DGX H100 (8 GPUs, NVSwitch), NCCL 2.27.5, PyTorch 2.7.1 with the nvidia-nccl-cu12 2.27.5 wheel, torchrun. "
        "After a driver update nvidia-fabricmanager was not restarted. The job forces NCCL_NVLS_ENABLE=1. NCCL reports "
        "'NVLS multicast support is available on dev N (NVLS_NCHANNELS 16)', but binding the multicast memory fails on "
        "every rank with CUDA error 802 'system not yet initialized' (cudaErrorSystemNotReady: the NVSwitch fabric is "
        "not initialised); the three-line WARN says so and points at Fabric Manager / NVSwitches. All 8 ranks raise "
        "DistBackendError (unhandled cuda error).",
        "reconstructed line for line from NCCL 2.27.5 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv: the multi-line 'Failed to bind NVLink SHARP (NVLS) Multicast memory ...' WARN, "
        "2.27.3-2.28.9 form for forced NVLS) and PyTorch 2.7 formats; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.27.5", False, "fabric_manager_or_driver", "[0, 1, 2, 3, 4, 5, 6, 7]",
        "Every rank prints the same multi-line WARN: 'Failed to bind NVLink SHARP (NVLS) Multicast memory of size "
        "1610612736 : CUDA error 802 'system not yet initialized'. / This is usually caused by a system or "
        "configuration error in the Fabric Manager or NVSwitches. / Do not force-enable NVLS (NCCL_NVLS_ENABLE=1) ...'. "
        "CUDA error 802 (cudaErrorSystemNotReady) on an NVSwitch system means the fabric (Fabric Manager / NVSwitch "
        "driver) is not up: fabric_manager_or_driver, node-wide, all ranks equal. NCCL_NVLS_ENABLE=1 turned what would "
        "otherwise be an INFO ('Proceeding without NVLS support') into a fatal error, so the diagnosis should mention "
        "both the fabric problem and the forced setting. nvls.cc/init.cc back-trace lines and torch line numbers are "
        "estimates; the error code propagated (1) is an assumption.")
    write_sample("nccl-nvls-fabric-manager-down", {"console.log": node.log}, y)


def peer_oom_killed():
    L = [0x1B000, 0x2C000, 0x9D000, 0xAE000]
    nodes = [("cloud-g6-01", "10.0.1.11", [5411 + i for i in range(4)]), ("cloud-g6-02", "10.0.1.12", [5377 + i for i in range(4)])]
    cl = Cluster(4, nodes, "2.26.2", "12.2", net="Socket", nch=2, bus=L, socket_if="ens5", driver=12040,
                 aff=["ffffffff,ffffffff"] * 4,
                 env=[("NCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME set by environment to %s", "ens5"), ("NCCL_IB_DISABLE", None, 1)])
    comms = comm_ptrs(8, 18)
    cl.full_init(comms, 0x6E0B3A5C7D9F1824, timing=timing_fn(18))
    n0, n1 = cl.nodes
    # rank 5 (node 1, local 1) is killed by the kernel OOM killer: its log simply ends
    t = D(2026, 11, 28, 15, 2, 9)
    w = work(9342, "ALLREDUCE", 25165824, 25165824, 600000)
    victims = [(1, n0), (2, n0), (4, n1), (6, n1)]
    for k, (r, node) in enumerate(victims):
        p = node.procs[r % 4]
        tid = p.pid + 64
        peer = {1: "10.0.1.12<48211>", 2: "10.0.1.12<48233>", 4: "10.0.1.12<39907>", 6: "10.0.1.12<39925>"}[r]
        last = p.warn(tid, "misc/socket.cc:66", t, "socketProgress: Connection closed by remote peer %s", peer)
        for loc in ("misc/socket.cc:844", "transport/net_socket.cc:546", "transport/net.cc:1292", "proxy.cc:694"):
            p.bt(tid, loc, 6)
        p.bt(tid, "proxy.cc:879", 6, " [Progress Thread]")
        node.log += async27(r, t, 212087335 + 7022119 * k, w, 6, "2.26.2", last, 9342, 9342, 9341, 0x7F5500000000 + 0x1000000 * r)
    # the agent on node 1 notices the SIGKILLed worker first
    ta = D(2026, 11, 28, 15, 2, 9, 611000)
    n1.log.append(pylog("W", ta, 5360, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900, "Sending process 5377 closing signal SIGTERM"))
    n1.log.append(pylog("W", ta, 5360, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900, "Sending process 5379 closing signal SIGTERM"))
    n1.log.append(pylog("W", ta, 5360, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900, "Sending process 5380 closing signal SIGTERM"))
    torchrun_end27(n1.log, 5360, D(2026, 11, 28, 15, 2, 10, 48000), "cloud-g6-02", [(5, 1, 5378, -9)],
                   [(4, 0, 5377, -15), (6, 2, 5379, -6), (7, 3, 5380, -15)])
    t0 = D(2026, 11, 28, 15, 2, 10, 300000)
    n0.log.append(pylog("W", t0, 5394, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900, "Sending process 5411 closing signal SIGTERM"))
    n0.log.append(pylog("W", t0, 5394, "site-packages/torch/distributed/elastic/multiprocessing/api.py", 900, "Sending process 5414 closing signal SIGTERM"))
    torchrun_end27(n0.log, 5394, D(2026, 11, 28, 15, 2, 10, 724000), "cloud-g6-01", [(1, 1, 5412, -6)],
                   [(0, 0, 5411, -15), (2, 2, 5413, -6), (3, 3, 5414, -15)])
    y = yaml_text(
        "Peer killed by the OOM killer: rank 5's log just stops, its peers see 'socketProgress: Connection closed by remote peer'",
        "Two cloud nodes x 4 L4 GPUs, NCCL 2.26.2 over TCP sockets (NCCL_IB_DISABLE=1, NCCL_SOCKET_IFNAME=ens5), "
        "PyTorch 2.7.1 under torchrun. During step ~9340 the data loader of rank 5 (cloud-g6-02, local rank 1, pid "
        "5378) exhausts host memory and the kernel OOM killer sends it SIGKILL: it prints nothing. The ranks whose "
        "socket connections lead to rank 5's host see the TCP connections close in the middle of the all-reduce "
        "SeqNum=9342 ('socketProgress: Connection closed by remote peer 10.0.1.12<port>', ncclRemoteError) and abort. "
        "torchrun on cloud-g6-02 reports rank 5 with exitcode -9 (SIGKILL) as root cause; cloud-g6-01's agent names "
        "rank 1 (a victim).",
        "reconstructed line for line from NCCL 2.26.2 formats in the shared message catalog "
        "(nccl-messages-by-version.tsv) and PyTorch 2.7 formats; generator: samples/_reconstruct/build_misc.py",
        "2.7.1", "2.26.2", False, "peer_process_died", "[5]",
        "Origin rank 5: it has no error line at all (SIGKILL leaves no trace in the process's own output) and the "
        "torchrun summary of cloud-g6-02 shows 'exitcode  : -9 (pid: 5378)  (SIGKILL)' / 'Signal 9 (SIGKILL) received by "
        "PID 5378' (the OOM killer; dmesg would confirm). All NCCL WARNs are consequences: ranks 1, 2, 4 and 6 report "
        "'socketProgress: Connection closed by remote peer 10.0.1.12<...>' (10.0.1.12 = cloud-g6-02, where rank 5 "
        "lived), '-> 6' back-traces and the async exception 'remote process exited or there was a network error'. A "
        "diagnosis must not blame the network or the ranks that print the errors, nor rank 1 named as root cause by "
        "cloud-g6-01's agent. Back-trace and torch line numbers are estimates.")
    write_sample("nccl-peer-oom-killed", {"node0.log": n0.log, "node1.log": n1.log}, y)


SAMPLES = {"nccl-healthy-2node-16gpu-ib-gdr": healthy_2node_16gpu,
           "nccl-roce-gid-index-einval": roce_gid_einval,
           "nccl-cuda-oom-during-init": cuda_oom_init,
           "nccl-nvls-fabric-manager-down": nvls_fabric_manager,
           "nccl-peer-oom-killed": peer_oom_killed,

           "nccl-gloo-64node-connectfullmesh": gloo_64node,

           "nccl-watchdog-cascade-lagging-rank": watchdog_cascade,
           "nccl-timeout-1ms": timeout_1ms,
           "nccl-socket-ifname-absent": socket_ifname_absent,

           "nccl-ib-completion-error-12": ib_completion_error,
           "nccl-version-mismatch": version_mismatch,
           "nccl-version-mismatch-explicit": version_mismatch_explicit,
           "nccl-duplicate-gpu": duplicate_gpu,

           "nccl-socket-fallback": socket_fallback,
           "nccl-shm-exhausted-container": shm_exhausted}


if __name__ == "__main__":
    names = sys.argv[1:] or list(SAMPLES)
    for n in names:
        SAMPLES[n]()
