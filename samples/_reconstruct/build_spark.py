"""Seed 003 (DGX Spark, two GB10 nodes): stages 1-4 reconstructed as samples nccl-dgx-spark-*.

Run: python samples/_reconstruct/build_spark.py   (writes samples/nccl-dgx-spark-*/)
"""
from __future__ import annotations

import datetime as dt

from ncclfmt import Proc, c10, pylog, child_failed, write_sample
from torchfmt import nccl_async_text, nccl_sync_text, cxx_frames

PY = "/usr/local/lib/python3.12/dist-packages"
TLIB = PY + "/torch/lib"
SRC = "/opt/pytorch/pytorch/torch/csrc/distributed/c10d"
D = dt.datetime
BUS = 0xF01000  # GB10 at 000f:01:00.0


def net_setup(p, tid, ifname, ip, first, plugin_none=True, ib_found=None):
    """Per-comm network plugin selection in 2.28 (INIT|NET lines shown at NCCL_DEBUG=INFO)."""
    p.info(tid, "Comm config Blocking set to %d", 1)
    if first:
        if plugin_none:
            p.info(tid, "NCCL_NET_PLUGIN set by environment to %s", "none")
        if ib_found is None:
            p.info(tid, "NET/IB : No device found.")
            p.info(tid, "Failed to initialize NET plugin %s", "IB")
        p.info(tid, "NET/Socket : Using%s", f" [0]{ifname}:{ip}<0>")
        p.info(tid, "Initialized NET plugin %s", "Socket")
    p.info(tid, "Assigned NET plugin %s to comm", "Socket")
    p.info(tid, "Using network %s", "Socket")


def comm_init(p, tid, comm, rank, commid, proxy_tids, cores, timings, algo_env=True):
    nr = 2
    p.rank = rank
    p.info(tid, "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START",
           "ncclCommInitRankConfig", comm, rank, nr, 0, 0, BUS, commid)
    p.info(tid, "Bootstrap timings total %f (create %f, send %f, recv %f, ring %f, delay %f)", *timings[0])
    p.info(tid, "NVLS multicast support is %savailable on dev %d", "not ", 0)
    p.info(tid, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d", comm, rank, nr, 2, 1, 0, 0)
    if rank == 0:
        p.ring(tid, 0, 2, [0, 1])
        p.ring(tid, 1, 2, [0, 1])
        p.trees(tid, [(1, -1, -1, -1), (-1, -1, -1, 1)])
    else:
        p.trees(tid, [(-1, -1, -1, 0), (0, -1, -1, -1)])
    p.info(tid, "P2P Chunksize set to %d", 131072)
    p.info(tid, "Check P2P Type isAllDirectP2p %d directMode %d isAllCudaP2p %d", 0, 0, 1)
    p.info(proxy_tids[0], "[Proxy Service] Device %d CPU core %d", 0, cores[0])
    p.info(proxy_tids[1], "[Proxy Service UDS] Device %d CPU core %d", 0, cores[1])
    if algo_env:
        p.info(tid, "NCCL_ALGO set by environment to %s", "Ring")
        p.info(tid, "NCCL_PROTO set by environment to %s", "Simple")
    p.info(tid, "threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld", 8, 8, 64, 16, 8, 64, 512, 512)
    p.info(tid, "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
           2, 2, 0, 2, 2)
    if rank == 0:
        p.info(tid, "CC %s, workFifoBytes %d", "Off", 1048576)
    p.info(tid, "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE",
           "ncclCommInitRankConfig", comm, rank, nr, 0, 0, BUS, commid)
    p.info(tid, "Init timings - %s: rank %d nranks %d total %.2f (kernels %.2f, alloc %.2f, bootstrap %.2f, "
           "allgathers %.2f, topo %.2f, graphs %.2f, connections %.2f, rest %.2f)", "ncclCommInitRankConfig", rank, nr,
           *timings[1])


def ring_connect(p, tid, rank, shared=False, conn=0):
    peer = 1 - rank
    suf = "/Shared" if shared else ""
    for ch in (0, 1):
        p.info(tid, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", ch, conn, peer, 0, rank, 0,
               "Socket", 0, "", "", suf)
    for ch in (0, 1):
        p.info(tid, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", ch, conn, rank, 0, peer, 0,
               "Socket", 0, "", "", suf)
    if conn == 0:
        p.info(tid, "Connected all rings, use ring PXN %d GDR %d", 0, 0)


def pre_init(p, ifname, ip):
    p.info(p.pid, "NCCL_SOCKET_IFNAME set by environment to %s", ifname)
    p.info(p.pid, "Bootstrap: Using%s", f" {ifname}:{ip}<0>")
    p.info(p.pid, "cudaDriverVersion %d", 13000)
    p.version_banner()


TRUNC = ("NET/Socket : peer %s message truncated : receiving %d bytes instead of %d. If you believe your socket "
         "network is in a healthy state, there may be a mismatch in collective sizes or environment settings "
         "(e.g. NCCL_PROTO, NCCL_ALGO) between ranks")

WD_FRAMES = [
    ("c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)", "0xd4", "libc10.so"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException()", "0x8c", "libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::Watchdog::runLoop()", "0x3ac", "libtorch_cuda.so"),
    ("c10d::ProcessGroupNCCL::Watchdog::run()", "0xd8", "libtorch_cuda.so"),
    ("<unknown function>", "0xe1d9c", "/lib/aarch64-linux-gnu/libstdc++.so.6"),
    ("<unknown function>", "0x8595c", "/lib/aarch64-linux-gnu/libc.so.6"),
    ("<unknown function>", "0xeba4c", "/lib/aarch64-linux-gnu/libc.so.6"),
]


def pp_stack(pyver_path=PY):
    return [
        f"#0 batch_isend_irecv from {pyver_path}/torch/distributed/distributed_c10d.py:2863",
        f"#1 _batch_p2p from {pyver_path}/torch/distributed/pipelining/schedules.py:648",
        f"#2 _step_microbatches from {pyver_path}/torch/distributed/pipelining/schedules.py:2163",
        f"#3 step from {pyver_path}/torch/distributed/pipelining/schedules.py:1366",
        f"#4 _run_train_optim_step from {pyver_path}/nemo_automodel/recipes/llm/train_ft.py:1089",
        f"#5 run_train_validation_loop from {pyver_path}/nemo_automodel/recipes/llm/train_ft.py:962",
        "#6 main from /workspace/finetune.py:44",
        "#7 <module> from /workspace/finetune.py:48",
    ]


def watchdog_abort(rank, pg, when, nanos0, exc_lines, ver, addr):
    """Lines a torch 2.10 rank prints when its watchdog rethrows an async NCCL error (ends in SIGABRT)."""
    out = []
    out.append(c10(rank, "E", when, nanos0, "ProcessGroupNCCL.cpp", 761,
                   f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
                   "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."))
    out.append(c10(rank, "E", when, nanos0 + 9113, "ProcessGroupNCCL.cpp", 775,
                   f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down."))
    frames = cxx_frames(f"checkForNCCLErrorsInternal at {SRC}/ProcessGroupNCCL.cpp:2456", WD_FRAMES, TLIB, addr)
    out.append(c10(rank, "E", when, nanos0 + 1093421, "ProcessGroupNCCL.cpp", 2104,
                   f"{pg} Process group watchdog thread terminated with exception: {exc_lines[0]}"))
    out += exc_lines[1:] + frames
    out.append("")
    out.append("terminate called after throwing an instance of 'c10::DistBackendError'")
    out.append(f"  what():  {pg} Process group watchdog thread terminated with exception: {exc_lines[0]}")
    out += exc_lines[1:] + frames
    out.append("")
    return out


def agent_fail(pid_agent, when, host, rank, pid, code, script="finetune.py"):
    ts = when.strftime("%Y-%m-%d_%H:%M:%S")
    out = [pylog("E", when, pid_agent, "dist-packages/torch/distributed/elastic/multiprocessing/api.py", 882,
                 f"failed (exitcode: {code}) local_rank: 0 (pid: {pid}) of binary: /usr/bin/python")]
    out += TORCHRUN_TB
    out += child_failed(script, [], dict(time=ts, host=host, rank=rank, local_rank=0, exitcode=code, pid=pid))
    return out


TORCHRUN_TB = [
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/torchrun", line 33, in <module>',
    "    sys.exit(load_entry_point('torch==2.10.0a0+b558c986e8.nv25.11', 'console_scripts', 'torchrun')())",
    "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    f'  File "{PY}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 362, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    f'  File "{PY}/torch/distributed/run.py", line 946, in main',
    "    run(args)",
    f'  File "{PY}/torch/distributed/run.py", line 937, in run',
    "    elastic_launch(",
    f'  File "{PY}/torch/distributed/launcher/api.py", line 159, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    f'  File "{PY}/torch/distributed/launcher/api.py", line 300, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
]


def torchrun_tb(version_tag):
    return [l.replace("2.10.0a0+b558c986e8.nv25.11", version_tag) for l in TORCHRUN_TB]


# ----------------------------------------------------------------------------------------------
# Stage 1: mesh_pp truncated (NCCL 2.28.8+cuda13.0, torch 2.10.0a0+b558c986e8.nv25.11)
# ----------------------------------------------------------------------------------------------
def stage1():
    ver, cuda = "2.28.8", "13.0"
    hosts = {0: ("dgx1", 1007, "192.168.100.10", 982), 1: ("dgx2", 2751, "192.168.100.11", 2719)}
    comms = {0: ("0x389afbf0", "0x3a6c5e40"), 1: ("0x2f0b7a30", "0x31d94e60")}
    files = {}
    cid0, cid1 = 0x6B1E6F2A9D4C3E81, 0x1C9D0A77E4F25B36
    for r in (0, 1):
        host, pid, ip, apid = hosts[r]
        log = []
        p = Proc(log, host, pid, ver, cuda)
        pre_init(p, "enp1s0f0np0", ip)
        net_setup(p, pid, "enp1s0f0np0", ip, first=True)
        comm_init(p, pid, comms[r][0], r, cid0, (pid + 94, pid + 95), (4, 5),
                  [((0.003412, 0.000041, 0.000187, 0.002873, 0.000158, 0.0) if r == 0 else
                    (0.211873, 0.000038, 0.000162, 0.211381, 0.000141, 0.0)),
                   (0.61, 0.22, 0.01, 0.00, 0.00, 0.14, 0.00, 0.21, 0.03) if r == 0 else
                   (0.83, 0.23, 0.01, 0.21, 0.00, 0.15, 0.00, 0.20, 0.03)])
        ring_connect(p, pid, r)
        # second communicator: PG 1 (mesh_pp), created lazily by its first collective
        net_setup(p, pid, "enp1s0f0np0", ip, first=False)
        comm_init(p, pid, comms[r][1], r, cid1, (pid + 156, pid + 157), (6, 7),
                  [((0.002964, 0.000036, 0.000171, 0.002466, 0.000139, 0.0) if r == 0 else
                    (0.004127, 0.000040, 0.000158, 0.003611, 0.000152, 0.0)),
                   (0.39, 0.01, 0.01, 0.00, 0.00, 0.15, 0.00, 0.20, 0.02) if r == 0 else
                   (0.40, 0.01, 0.01, 0.01, 0.00, 0.15, 0.00, 0.20, 0.02)])
        ring_connect(p, pid, r, shared=True, conn=1)
        files[r] = (log, p)

    # ---- rank 0: receives 8 bytes where it posted 4 -> ncclInvalidUsage in its proxy progress thread
    log0, p0 = files[0]
    t0 = D(2026, 1, 1, 21, 57, 19)
    last = p0.warn(1165, "transport/net_socket.cc:565", t0, TRUNC, "192.168.100.11<56630>", 8, 4)
    p0.bt(1165, "transport/net.cc:1394", 5)
    p0.bt(1165, "proxy.cc:729", 5)
    p0.bt(1165, "proxy.cc:1006", 5, " [Progress Thread]")
    exc = nccl_async_text(5, ver, last)
    frames = cxx_frames(f"checkForNCCLErrorsInternal at {SRC}/ProcessGroupNCCL.cpp:2456", WD_FRAMES, TLIB,
                        0xFFFF8C2A0000)
    log0.append(c10(0, "E", t0, 147805485, "ProcessGroupNCCL.cpp", 617,
                    "[Rank 0] Collective WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, "
                    f"Timeout(ms)=600000) raised the following async exception: {exc[0]}"))
    log0 += exc[1:] + frames
    log0.append("")
    pg1 = "[PG ID 1 PG GUID 1(mesh_pp) Rank 0]"
    log0.append(c10(0, "E", t0, 150803196, "ProcessGroupNCCL.cpp", 2290,
                    f"{pg1}  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, "
                    "last completed work: -1"))
    log0.append(c10(0, "E", t0, 150837561, "ProcessGroupNCCL.cpp", 747, "Stack trace of the failed collective: "))
    log0 += pp_stack()
    log0.append(c10(0, "E", t0, 150912207, "ProcessGroupNCCL.cpp", 2140, f"{pg1} First PG on this rank to signal dumping."))
    log0 += watchdog_abort(0, pg1, t0, 151021834, exc, ver, 0xFFFF8C2A0000)
    log0 += agent_fail(982, D(2026, 1, 1, 21, 57, 21, 402000), "dgx1", 0, 1007, -6)

    # ---- rank 1: its sends completed; rank 0's process aborts and the socket closes under rank 1's recv
    log1, p1 = files[1]
    t1 = D(2026, 1, 1, 21, 57, 20)
    last1 = p1.warn(2914, "misc/socket.cc:66", t1, "socketProgress: Connection closed by remote peer %s",
                    "192.168.100.10<47164>")
    p1.bt(2914, "misc/socket.cc:844", 6)
    p1.bt(2914, "transport/net_socket.cc:546", 6)
    p1.bt(2914, "transport/net.cc:1394", 6)
    p1.bt(2914, "proxy.cc:729", 6)
    p1.bt(2914, "proxy.cc:1006", 6, " [Progress Thread]")
    exc1 = nccl_async_text(6, ver, last1)
    frames1 = cxx_frames(f"checkForNCCLErrorsInternal at {SRC}/ProcessGroupNCCL.cpp:2456", WD_FRAMES, TLIB,
                         0xFFFFA31C0000)
    pg1b = "[PG ID 1 PG GUID 1(mesh_pp) Rank 1]"
    pg0b = "[PG ID 0 PG GUID 0(default_pg) Rank 1]"
    log1.append(c10(1, "E", t1, 613870219, "ProcessGroupNCCL.cpp", 1993,
                    f"{pg0b} Observed flight recorder dump signal from another rank via TCPStore."))
    log1.append(c10(1, "E", t1, 614022675, "ProcessGroupNCCL.cpp", 2061,
                    f"{pg0b} Received a dump signal due to a collective timeout from  rank 0 and we will try our best "
                    "to dump the debug info. Last enqueued NCCL work: 2, last completed NCCL work: 2.This is most likely "
                    "caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of "
                    "collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
                    "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs "
                    "in the communications library (e.g. NCCL), etc. "))
    log1.append(c10(1, "E", t1, 618421930, "ProcessGroupNCCL.cpp", 617,
                    "[Rank 1] Collective WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, "
                    f"Timeout(ms)=600000) raised the following async exception: {exc1[0]}"))
    log1 += exc1[1:] + frames1
    log1.append("")
    log1.append(c10(1, "E", t1, 620118437, "ProcessGroupNCCL.cpp", 2290,
                    f"{pg1b}  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, "
                    "last completed work: -1"))
    log1.append(c10(1, "E", t1, 620140562, "ProcessGroupNCCL.cpp", 747, "Stack trace of the failed collective: "))
    log1 += pp_stack()
    log1 += watchdog_abort(1, pg1b, t1, 620291806, exc1, ver, 0xFFFFA31C0000)
    log1 += agent_fail(2719, D(2026, 1, 1, 21, 57, 22, 117000), "dgx2", 1, 2751, -6)

    yaml = STAGE1_YAML
    write_sample("nccl-dgx-spark-mesh-pp-truncated", {"rank0.log": log0, "rank1.log": log1}, yaml)


STAGE1_YAML = """\
title: "DGX Spark x2, pipeline parallel: 2nd communicator (mesh_pp) fails its first batched P2P with 'message truncated : receiving 8 bytes instead of 4'"
description: >-
  Two DGX Spark nodes (dgx1 192.168.100.10, dgx2 192.168.100.11, direct DAC on enp1s0f0np0), one GB10 GPU
  each, NeMo AutoModel LoRA fine-tune with pp_size=2 (interleaved1f1b) in the nv25.11 PyTorch container.
  NCCL runs over NET/Socket (no /dev/infiniband in the container: NET/IB : No device found) with
  NCCL_ALGO=Ring, NCCL_PROTO=Simple, NCCL_NET_PLUGIN=none and NCCL_SOCKET_IFNAME=enp1s0f0np0 on both ranks.
  The default_pg communicator initialises and connects (Init COMPLETE, Connected all rings, use ring PXN 0
  GDR 0). The second communicator, PG 1 'mesh_pp', also reaches Init COMPLETE and sets up its P2P
  connections (connIndex 1, /Shared), but in its first work item, a batched isend/irecv (OpType=COALESCED,
  SeqNum=1), rank 0's proxy progress thread receives an 8-byte message from rank 1 where it posted a
  4-byte receive. Rank 0 aborts (SIGABRT), after which rank 1's socket is closed under it.
  One file per rank (the node's console: NCCL stdout + PyTorch stderr + torchrun agent).
origin: reconstructed
produced:
  how: >-
    reconstructed line for line from NCCL 2.28.8 formats in the shared message catalog
    (nccl-messages-by-version.tsv, every NCCL line checked against the formats valid for 2.28.8) and
    the PyTorch formats in torch-messages.tsv, following seed story 003 (stage 1, the first post);
    generator: samples/_reconstruct/build_spark.py
  torch: "2.10.0a0+b558c986e8.nv25.11"
  nccl: "2.28.8"
  date: "2026-11-29"
expect:
  healthy: false
  category: collective_mismatch
  rule: null
  origin_ranks: [0, 1]
notes: >-
  The decisive line is rank 0's WARN at 21:57:19 from its proxy progress thread (dgx1:1007:1165):
  'transport/net_socket.cc:565 NCCL WARN NET/Socket : peer 192.168.100.11<56630> message truncated :
  receiving 8 bytes instead of 4 ...' followed by the back-trace '-> 5' (ncclInvalidUsage) and PyTorch's
  '[Rank 0] Collective WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, Timeout(ms)=600000)
  raised the following async exception: NCCL error: invalid usage' and '[PG ID 1 PG GUID 1(mesh_pp) Rank 0]
  failure detected by watchdog at work sequence id: 1'. Category collective_mismatch: the sender (rank 1,
  dgx2, 192.168.100.11) announced 8 bytes for a receive that rank 0 posted with 4 bytes, i.e. the two
  pipeline stages posted send/recv operations of different sizes (or in a different order) in the first
  batched P2P of mesh_pp. The evidence rules out the alternatives the message itself lists: NCCL_ALGO=Ring,
  NCCL_PROTO=Simple, NCCL_SOCKET_IFNAME and NCCL_NET_PLUGIN are printed identically on both ranks for both
  communicators; the same socket network carries default_pg without error (Init COMPLETE, Connected all
  rings); both ranks run the same NCCL 2.28.8. What differs between the ranks is the operations they post:
  stage 0 and stage 1 of a pipeline schedule issue different send/recv lists, so the mismatch is in the
  application's P2P schedule/shapes (the message is not a socket or network fault). origin_ranks lists both
  stage ranks because a size mismatch involves the pair; rank 0 is where it is detected and rank 1 is the
  peer whose message was too large. Consequences, not causes: rank 0's watchdog abort (SIGABRT, exitcode
  -6), and everything on rank 1 (socketProgress: Connection closed by remote peer 192.168.100.10<47164>,
  ncclRemoteError in its watchdog, the flight-recorder dump signal 'from  rank 0', its own exitcode -6).
  A diagnosis must not blame the network, NCCL_PROTO/NCCL_ALGO, or rank 1's remote error. torch line
  numbers other than ProcessGroupNCCL.cpp:617 and :2290 (taken from the seed) and NCCL file:line values
  other than transport/net_socket.cc:565 (seed) are estimates for this build.
"""


def py_tb(rank, frames, exc_lines):
    out = [f"[rank{rank}]: Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        out.append(f'[rank{rank}]:   File "{f}", line {ln}, in {fn}')
        out.append(f"[rank{rank}]:     {code}")
    out += [f"[rank{rank}]: {l}" for e in exc_lines for l in e.split("\n")]
    return out


def default_pg(p, r, ip, ifname, comm, cid, ptids, timings, ib=None, algo_env=True):
    if ib is None:
        net_setup(p, p.pid, ifname, ip, first=True)
    else:
        ib_setup(p, p.pid, ifname, ip)
    comm_init(p, p.pid, comm, r, cid, ptids, (4, 5), timings, algo_env=algo_env)


# ----------------------------------------------------------------------------------------------
# Stage 2: mesh_pp connection setup fails (NCCL 2.28.9+cuda13.1, torch 2.10.0a0+b4e4ee81d3.nv25.12)
# ----------------------------------------------------------------------------------------------
def stage2():
    ver, cuda = "2.28.9", "13.1"
    tv = "2.10.0a0+b4e4ee81d3.nv25.12"
    hosts = {0: ("dgx1", 1311, "192.168.100.10", 1286), 1: ("dgx2", 3187, "192.168.100.11", 3160)}
    comms = {0: ("0x2e7d19c0", "0x30a4b2f0"), 1: ("0x3b1c4d80", "0x3d55e910")}
    cid0, cid1 = 0x52F0C81B6A3D9E14, 0x7A0E3396C1B2D4F8
    logs = {}
    for r in (0, 1):
        host, pid, ip, apid = hosts[r]
        log = []
        p = Proc(log, host, pid, ver, cuda)
        pre_init(p, "enp1s0f0np0", ip)
        default_pg(p, r, ip, "enp1s0f0np0", comms[r][0], cid0, (pid + 91, pid + 92),
                   [(0.004018, 0.000044, 0.000193, 0.003424, 0.000162, 0.0) if r == 0 else
                    (0.187342, 0.000039, 0.000171, 0.186911, 0.000158, 0.0),
                    (0.64, 0.23, 0.01, 0.00, 0.00, 0.15, 0.00, 0.22, 0.03) if r == 0 else
                    (0.85, 0.23, 0.01, 0.19, 0.00, 0.16, 0.00, 0.23, 0.03)])
        ring_connect(p, pid, r)
        net_setup(p, pid, "enp1s0f0np0", ip, first=False)
        comm_init(p, pid, comms[r][1], r, cid1, (pid + 163, pid + 164), (6, 7),
                  [(0.003187, 0.000037, 0.000166, 0.002702, 0.000143, 0.0) if r == 0 else
                   (0.004402, 0.000041, 0.000170, 0.003857, 0.000149, 0.0),
                   (0.41, 0.01, 0.01, 0.00, 0.00, 0.16, 0.00, 0.21, 0.02) if r == 0 else
                   (0.42, 0.01, 0.01, 0.01, 0.00, 0.16, 0.00, 0.21, 0.02)])
        logs[r] = (log, p)

    # rank 1 (dgx2): its proxy cannot open the ring connection to rank 0's socket listener
    log1, p1 = logs[1]
    ptid = 3187 + 163
    p1.info(3187, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", 0, 0, 0, 0, 1, 0, "Socket", 0, "", "", "")
    p1.info(3187, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", 1, 0, 0, 0, 1, 0, "Socket", 0, "", "", "")
    p1.info(3187, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", 0, 0, 1, 0, 0, 0, "Socket", 0, "", "", "")
    p1.info(3187, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", 1, 0, 1, 0, 0, 0, "Socket", 0, "", "", "")
    for k in range(1, 7):
        p1.info(ptid, "%s: connect to %s returned %s, retrying (%d/%ld) after sleep for %u msec", "socketPollConnect",
                "192.168.100.10<40661>", "Connection timed out", k, 34, 100 * k)
    tw = D(2026, 1, 4, 16, 22, 51)
    p1.warn(ptid, "misc/socket.cc:622", tw, "socketPollConnect to %s failed with error %s", "192.168.100.10<40661>",
            "Network is unreachable")
    for loc in ("misc/socket.cc:709", "misc/socket.cc:757", "transport/net_socket.cc:372", "transport/net.cc:704",
                "proxy.cc:1525", "proxy.cc:1627"):
        p1.bt(ptid, loc, 2)
    last1 = p1.warn(ptid, "proxy.cc:1786", tw, "[Proxy Service %d] Failed to execute operation %s from rank %d, retcode %d",
                    1, "Connect", 1, 2)
    for loc in ("proxy.cc:1239", "transport/net.cc:460", "transport.cc:197", "transport.cc:283", "enqueue.cc:1813",
                "group.cc:173", "group.cc:513", "group.cc:734", "enqueue.cc:2451"):
        p1.bt(3187, loc, 2)
    frames_py = [
        ("/workspace/finetune.py", 48, "<module>", "main()"),
        ("/workspace/finetune.py", 44, "main", "recipe.setup()"),
        (f"{PY}/nemo_automodel/recipes/llm/train_ft.py", 812, "setup", "self.model_parts, self.pp = build_model_and_optimizer("),
        (f"{PY}/nemo_automodel/components/distributed/autopipeline.py", 415, "build", "stage_shapes = self._validate_stage_shapes(stages)"),
        (f"{PY}/nemo_automodel/components/distributed/autopipeline.py", 377, "_validate_stage_shapes", "dist.all_gather_object(gathered, local_shapes, group=pp_group)"),
        (f"{PY}/torch/distributed/c10d_logger.py", 81, "wrapper", "return func(*args, **kwargs)"),
        (f"{PY}/torch/distributed/distributed_c10d.py", 3381, "all_gather_object", "all_gather(object_size_list, local_size, group=group)"),
        (f"{PY}/torch/distributed/c10d_logger.py", 81, "wrapper", "return func(*args, **kwargs)"),
        (f"{PY}/torch/distributed/distributed_c10d.py", 4021, "all_gather", "work = group.allgather([tensor_list], [tensor])"),
    ]
    exc = nccl_sync_text(2, ver, last1, f"{SRC}/ProcessGroupNCCL.cpp", 3687)
    log1 += py_tb(1, frames_py, ["torch.distributed.DistBackendError: " + exc[0]] + exc[1:])
    te = D(2026, 1, 4, 16, 22, 53, 284000)
    log1.append(c10(1, "W", te, 718301446, "ProcessGroupNCCL.cpp", 1552,
                    "WARNING: destroy_process_group() was not called before program exit, which can leak resources. "
                    "For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown"))
    ts = te.strftime("%Y-%m-%d_%H:%M:%S")
    log1.append(pylog("E", D(2026, 1, 4, 16, 22, 55, 17000), 3160, "dist-packages/torch/distributed/elastic/multiprocessing/api.py", 882,
                      "failed (exitcode: 1) local_rank: 0 (pid: 3187) of binary: /usr/bin/python"))
    log1 += torchrun_tb(tv)
    log1 += child_failed("finetune.py", [], dict(time=ts, host="dgx2", rank=1, local_rank=0, exitcode=1, pid=3187))

    # rank 0 (dgx1): waits for rank 1's connection; rank 1's process exits and the bootstrap socket closes
    log0, p0 = logs[0]
    p0.info(1311, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", 0, 0, 1, 0, 0, 0, "Socket", 0, "", "", "")
    p0.info(1311, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", 1, 0, 1, 0, 0, 0, "Socket", 0, "", "", "")
    p0.info(1311, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", 0, 0, 0, 0, 1, 0, "Socket", 0, "", "", "")
    p0.info(1311, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", 1, 0, 0, 0, 1, 0, "Socket", 0, "", "", "")
    t0 = D(2026, 1, 4, 16, 22, 53)
    last0 = p0.warn(1311, "misc/socket.cc:66", t0, "socketProgress: Connection closed by remote peer %s", "192.168.100.11<51283>")
    for loc in ("misc/socket.cc:844", "bootstrap.cc:95", "bootstrap.cc:1052", "transport.cc:211", "transport.cc:283",
                "enqueue.cc:1813", "group.cc:173", "group.cc:513", "group.cc:734", "enqueue.cc:2451"):
        p0.bt(1311, loc, 6)
    exc0 = nccl_sync_text(6, ver, last0, f"{SRC}/ProcessGroupNCCL.cpp", 3687)
    log0 += py_tb(0, frames_py, ["torch.distributed.DistBackendError: " + exc0[0]] + exc0[1:])
    te0 = D(2026, 1, 4, 16, 22, 53, 902000)
    log0.append(c10(0, "W", te0, 244978105, "ProcessGroupNCCL.cpp", 1552,
                    "WARNING: destroy_process_group() was not called before program exit, which can leak resources. "
                    "For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown"))
    log0.append(pylog("E", D(2026, 1, 4, 16, 22, 55, 611000), 1286, "dist-packages/torch/distributed/elastic/multiprocessing/api.py", 882,
                      "failed (exitcode: 1) local_rank: 0 (pid: 1311) of binary: /usr/bin/python"))
    log0 += torchrun_tb(tv)
    log0 += child_failed("finetune.py", [], dict(time=te0.strftime("%Y-%m-%d_%H:%M:%S"), host="dgx1", rank=0,
                                                  local_rank=0, exitcode=1, pid=1311))
    write_sample("nccl-dgx-spark-remote-error", {"rank0.log": log0, "rank1.log": log1}, STAGE2_YAML)


STAGE2_YAML = """\
title: "DGX Spark x2 after the NCCL 2.28.9 upgrade: mesh_pp's first collective cannot connect (connect timeouts, proxy Connect fails on dgx2)"
description: >-
  Same two DGX Spark nodes and settings as stage 1 (NET/Socket over enp1s0f0np0, NCCL_ALGO=Ring,
  NCCL_PROTO=Simple, NCCL_NET_PLUGIN=none), now in the nv25.12 container (PyTorch 2.10.0a0+b4e4ee81d3,
  NCCL 2.28.9+cuda13.1). default_pg initialises and connects. The mesh_pp communicator (PG 1) reaches
  Init COMPLETE, but with NCCL's runtime connection its ring connections are only opened by its first
  collective (an all_gather issued by all_gather_object while the pipeline stages are validated). On dgx2
  the proxy thread's connect to rank 0's socket listener 192.168.100.10<40661> times out again and again
  (Connection timed out, retrying 1..6) and then fails with 'Network is unreachable'; the proxy reports
  '[Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 2' and rank 1's all_gather
  raises DistBackendError (unhandled system error). Rank 1 exits; rank 0, still waiting for the
  connection, sees the bootstrap socket to rank 1 close and fails with a remote error. Both nodes still
  carry secondary addresses in 192.168.100.0/24 on their second ConnectX-7 ports (192.168.100.14 /
  .15), so the path between the primary addresses is ambiguous (ARP/route flux) and connects time out.
origin: reconstructed
produced:
  how: >-
    reconstructed line for line from NCCL 2.28.9 formats in the shared message catalog
    (nccl-messages-by-version.tsv) and PyTorch formats (torch-messages.tsv), following seed story 003
    (stage 2, the second post); generator: samples/_reconstruct/build_spark.py
  torch: "2.10.0a0+b4e4ee81d3.nv25.12"
  nccl: "2.28.9"
  date: "2026-11-29"
expect:
  healthy: false
  category: firewall_or_unreachable_peer
  rule: null
  origin_ranks: [1]
notes: >-
  First failure in time is on rank 1 (dgx2, pid 3187): its proxy thread (tid 3350) logs six INFO lines
  'socketPollConnect: connect to 192.168.100.10<40661> returned Connection timed out, retrying (k/34)'
  and then 'misc/socket.cc:622 NCCL WARN socketPollConnect to 192.168.100.10<40661> failed with error
  Network is unreachable' at 16:22:51, followed by '-> 2' back-traces and 'proxy.cc NCCL WARN [Proxy
  Service 1] Failed to execute operation Connect from rank 1, retcode 2'; the all_gather on rank 1 raises
  'torch.distributed.DistBackendError: NCCL error in: ...ProcessGroupNCCL.cpp:3687, unhandled system error
  (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9'. A correct diagnosis names rank 1 / dgx2
  as the side whose connection attempts to 192.168.100.10 never get through although bootstrap and
  default_pg worked on the same addresses: an unreachable-peer / network-path problem between the
  nodes (here: duplicate addresses of the same /24 on the second CX-7 ports), not an NCCL setting.
  Consequences: rank 0's 'socketProgress: Connection closed by remote peer 192.168.100.11<51283>' and its
  'remote process exited or there was a network error' DistBackendError 2 s later, the two exitcode-1
  torchrun summaries and the destroy_process_group() warnings. Formats: the story's '[Proxy Service]
  Error: handler returned remote error (ncclRemoteError/-5), source proxy progress recv thread' is not an
  NCCL format in any release (ncclRemoteError is 6, not -5); the nearest real 2.28 format is '[Proxy
  Service %d] Failed to execute operation %s from rank %d, retcode %d', used here. The story's '[Rank 1]
  Call NCCL collective ncclAllGather_v2 failed: unhandled system error' is not a PyTorch or NCCL format
  either; the nearest real text is c10d's 'NCCL error in: <file>:<line>, unhandled system error (run with
  NCCL_DEBUG=INFO for details), NCCL version 2.28.9' raised from the all_gather, used here; the story's
  'remote error' appears on rank 0 as ncclRemoteError. 'socketPollConnect to %s failed with error %s'
  is taken at its catalog location misc/socket.cc:622 (exact for 2.28.9); the other NCCL file:line values
  and torch line numbers are estimates.
"""


# ----------------------------------------------------------------------------------------------
# Stage 3: container without /dev/infiniband, NCCL falls back to sockets on the secondary addresses
# ----------------------------------------------------------------------------------------------
def stage3():
    ver, cuda = "2.28.9", "13.1"
    hosts = {0: ("dgx1", 1422, "192.168.100.14"), 1: ("dgx2", 3306, "192.168.100.15")}
    comms = {0: ("0x3c0b82f0", "0x3e61a7c0"), 1: ("0x2d95c630", "0x2fe8b4a0")}
    cid0, cid1 = 0x0F4B2C61D83E97A5, 0x64D1A0E97B3C2F58
    files = {}
    for r in (0, 1):
        host, pid, ip = hosts[r]
        log = []
        p = Proc(log, host, pid, ver, cuda)
        ifn = "enp1s0f1np1"
        p.info(pid, "NCCL_SOCKET_IFNAME set by environment to %s", ifn)
        p.info(pid, "Bootstrap: Using%s", f" {ifn}:{ip}<0>")
        p.info(pid, "cudaDriverVersion %d", 13000)
        p.version_banner()
        p.info(pid, "Comm config Blocking set to %d", 1)
        p.info(pid, "%s set by environment to %lld.", "NCCL_IB_DISABLE", 0)
        p.info(pid, "NET/IB : No device found.")
        p.info(pid, "Failed to initialize NET plugin %s", "IB")
        p.info(pid, "NET/Socket : Using%s", f" [0]{ifn}:{ip}<0>")
        p.info(pid, "Initialized NET plugin %s", "Socket")
        p.info(pid, "Assigned NET plugin %s to comm", "Socket")
        p.info(pid, "Using network %s", "Socket")
        comm_init(p, pid, comms[r][0], r, cid0, (pid + 93, pid + 94), (4, 5),
                  [(0.003871, 0.000042, 0.000181, 0.003307, 0.000151, 0.0) if r == 0 else
                   (0.142207, 0.000040, 0.000176, 0.141719, 0.000145, 0.0),
                   (0.60, 0.22, 0.01, 0.00, 0.00, 0.14, 0.00, 0.20, 0.03) if r == 0 else
                   (0.74, 0.22, 0.01, 0.14, 0.00, 0.14, 0.00, 0.20, 0.03)], algo_env=False)
        ring_connect(p, pid, r)
        net_setup(p, pid, ifn, ip, first=False)
        comm_init(p, pid, comms[r][1], r, cid1, (pid + 158, pid + 159), (6, 7),
                  [(0.002931, 0.000035, 0.000169, 0.002448, 0.000134, 0.0) if r == 0 else
                   (0.003982, 0.000039, 0.000161, 0.003473, 0.000147, 0.0),
                   (0.38, 0.01, 0.01, 0.00, 0.00, 0.15, 0.00, 0.19, 0.02) if r == 0 else
                   (0.39, 0.01, 0.01, 0.01, 0.00, 0.15, 0.00, 0.19, 0.02)], algo_env=False)
        ring_connect(p, pid, r, shared=True, conn=1)
        files[f"rank{r}.log"] = log
    write_sample("nccl-dgx-spark-no-infiniband-in-container", files, STAGE3_YAML)


STAGE3_YAML = """\
title: "DGX Spark x2: container started without /dev/infiniband, NCCL silently falls back to TCP sockets on the secondary 192.168.100.14/.15 addresses"
description: >-
  The two DGX Spark nodes after the forum's advice (post 5): NCCL_IB_DISABLE=0, NCCL_IB_HCA=rocep1s0f1,
  roceP2p1s0f1 and NCCL_SOCKET_IFNAME=enp1s0f1np1 are exported, NCCL_ALGO/NCCL_PROTO are no longer set.
  The hosts have ConnectX-7 (RoCE) ports, but the PyTorch container was started without
  --device=/dev/infiniband, so inside the container libibverbs lists no RDMA device: NCCL prints
  'NET/IB : No device found.', 'Failed to initialize NET plugin IB' and uses the Socket transport
  ('Using network Socket'). NCCL_SOCKET_IFNAME=enp1s0f1np1 selects the second ConnectX-7 port, which
  carries the secondary addresses 192.168.100.14 (dgx1) and 192.168.100.15 (dgx2) in the same /24 as
  the primary .10/.11 on enp1s0f0np0, so bootstrap and data traffic run over those addresses. Both
  communicators (default_pg and mesh_pp) initialise and connect; there is no error: the job trains,
  over TCP instead of RDMA, i.e. slowly. One file per rank (NCCL INFO output of each node).
origin: reconstructed
produced:
  how: >-
    reconstructed line for line from NCCL 2.28.9 formats in the shared message catalog
    (nccl-messages-by-version.tsv), following seed story 003 (stage 3, posts 5 and 6);
    generator: samples/_reconstruct/build_spark.py
  torch: "2.10.0a0+b4e4ee81d3.nv25.12"
  nccl: "2.28.9"
  date: "2026-11-29"
expect:
  healthy: false
  category: container_missing_devices
  rule: null
  origin_ranks: [0, 1]
notes: >-
  Nothing fails; the finding is a performance/configuration problem on both nodes (both ranks, both
  containers). Evidence on each rank: 'NCCL_IB_DISABLE set by environment to 0.' (IB is wanted) followed
  by 'NET/IB : No device found.' and 'Failed to initialize NET plugin IB', then 'NET/Socket : Using
  [0]enp1s0f1np1:192.168.100.14<0>' (.15 on dgx2), 'Using network Socket' for both communicators and
  'via NET/Socket/0' on every connection with 'GDR 0'. Category container_missing_devices rather than
  ib_unavailable_fallback_socket: the RDMA netdevs of the same ConnectX-7 ports are present
  (enp1s0f1np1 is used by NET/Socket) and IB was explicitly enabled, yet the verbs device list is empty
  ('No device found', not a device-matching or port-state problem), which is what a container without
  the /dev/infiniband device nodes looks like; the fix is --device=/dev/infiniband (plus the RDMA ulimits),
  after which NET/IB lists rocep1s0f1/roceP2p1s0f1. ib_unavailable_fallback_socket is the symptom a
  diagnosis should also name: the job runs over TCP sockets (slow) instead of RoCE. The diagnosis should
  additionally point out that the socket/bootstrap addresses are the secondary 192.168.100.14/.15 on
  enp1s0f1np1, in the same subnet as the primary .10/.11 on enp1s0f0np0 (the user intended .10/.11; two
  interfaces in one /24 make routing ambiguous). There is no failing rank; origin_ranks lists both ranks
  because both containers lack the devices.
"""


# ----------------------------------------------------------------------------------------------
# Stage 4: communication fine (RoCE), Python KeyError from the FSDP2 parallelizer on both ranks
# ----------------------------------------------------------------------------------------------
def ib_setup(p, tid, ifn, ip):
    p.info(tid, "Comm config Blocking set to %d", 1)
    p.info(tid, "%s set by environment to %lld.", "NCCL_IB_DISABLE", 0)
    p.info(tid, "NCCL_IB_HCA set to %s", "rocep1s0f1,roceP2p1s0f1")
    p.info(tid, "NET/IB : Using%s %s; OOB %s:%s", " [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE", "[RO]", ifn, f"{ip}<0>")
    p.info(tid, "Initialized NET plugin %s", "IB")
    p.info(tid, "Assigned NET plugin %s to comm", "IB")
    p.info(tid, "Using network %s", "IB")


def stage4():
    ver, cuda = "2.28.8", "13.0"
    tv = "2.10.0a0+b558c986e8.nv25.11"
    hosts = {0: ("dgx1", 1518, "192.168.100.10", 1493), 1: ("dgx2", 3402, "192.168.100.11", 3377)}
    comm = {0: "0x2b6f1e40", 1: "0x3a0c97d0"}
    cid = 0x3E8A51C07D2B6F94
    files = {}
    ifn = "enp1s0f1np1"
    for r in (0, 1):
        host, pid, ip, apid = hosts[r]
        log = []
        p = Proc(log, host, pid, ver, cuda)
        p.info(pid, "NCCL_SOCKET_IFNAME set by environment to %s", ifn)
        p.info(pid, "Bootstrap: Using%s", f" {ifn}:{ip}<0>")
        p.info(pid, "cudaDriverVersion %d", 13000)
        p.version_banner()
        ib_setup(p, pid, ifn, ip)
        comm_init(p, pid, comm[r], r, cid, (pid + 88, pid + 89), (4, 5),
                  [(0.003904, 0.000040, 0.000179, 0.003341, 0.000149, 0.0) if r == 0 else
                   (0.098412, 0.000037, 0.000168, 0.097969, 0.000144, 0.0),
                   (0.66, 0.23, 0.01, 0.00, 0.00, 0.17, 0.00, 0.22, 0.03) if r == 0 else
                   (0.76, 0.23, 0.01, 0.10, 0.00, 0.17, 0.00, 0.22, 0.03)], algo_env=False)
        peer = 1 - r
        for ch in (0, 1):
            p.info(pid, "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s", ch, 0, peer, 0, r, 0, "IB", ch, "", "", "")
        for ch in (0, 1):
            p.info(pid, "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s", ch, 0, r, 0, peer, 0, "IB", ch, "", "", "")
        p.info(pid, "Connected all rings, use ring PXN %d GDR %d", 0, 0)
        p.info(pid, "Connected all trees")
        frames = [
            ("/workspace/finetune.py", 48, "<module>", "main()"),
            ("/workspace/finetune.py", 44, "main", "recipe.setup()"),
            (f"{PY}/nemo_automodel/recipes/llm/train_ft.py", 812, "setup", "self.model_parts, self.pp = build_model_and_optimizer("),
            (f"{PY}/nemo_automodel/recipes/llm/train_ft.py", 318, "build_model_and_optimizer", "model = model_wrapper.parallelize(model)"),
            (f"{PY}/nemo_automodel/components/distributed/fsdp2.py", 281, "parallelize", "model = fsdp2_strategy_parallelize("),
            (f"{PY}/nemo_automodel/components/distributed/parallelizer.py", 973, "fsdp2_strategy_parallelize",
             "dp_mesh = device_mesh[dp_mesh_dim_names]"),
            (f"{PY}/torch/distributed/device_mesh.py", 724, "__getitem__",
             "slice_mesh_dims = _mesh_resources._get_slice_mesh_dims("),
            (f"{PY}/torch/distributed/device_mesh.py", 344, "_get_slice_mesh_dims", "raise KeyError("),
        ]
        log += py_tb(r, frames, ["KeyError: \"Invalid mesh_dim_names ('dp_replicate', 'dp_shard_cp', 'tp') specified. "
                                 "Mesh dim indices should be in ascending order.\""])
        te = D(2026, 1, 6, 10, 41, 7, 318000 if r == 0 else 402000)
        log.append(c10(r, "W", te, 552018367 if r == 0 else 83161205, "ProcessGroupNCCL.cpp", 1552,
                       "WARNING: destroy_process_group() was not called before program exit, which can leak resources. "
                       "For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown"))
        log.append(pylog("E", D(2026, 1, 6, 10, 41, 9, 76000 if r == 0 else 151000), apid,
                         "dist-packages/torch/distributed/elastic/multiprocessing/api.py", 882,
                         f"failed (exitcode: 1) local_rank: 0 (pid: {pid}) of binary: /usr/bin/python"))
        log += torchrun_tb(tv)
        log += child_failed("finetune.py", [], dict(time=te.strftime("%Y-%m-%d_%H:%M:%S"), host=host, rank=r,
                                                     local_rank=0, exitcode=1, pid=pid))
        files[f"rank{r}.log"] = log
    write_sample("nccl-dgx-spark-mesh-dim-keyerror", files, STAGE4_YAML)


STAGE4_YAML = """\
title: "DGX Spark x2 over RoCE: NCCL is healthy, both ranks die with KeyError 'Invalid mesh_dim_names ... ascending order' in fsdp2_strategy_parallelize"
description: >-
  After adding --device=/dev/infiniband to the containers and removing the secondary addresses, NCCL
  2.28.8 uses RoCE ('NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB
  enp1s0f1np1:...', 'Using network IB'), the default communicator initialises and connects (Init
  COMPLETE, Connected all rings/trees). Then NeMo AutoModel's FSDP2 parallelizer slices the device mesh
  with device_mesh[('dp_replicate', 'dp_shard_cp', 'tp')] (parallelizer.py:973) and torch's DeviceMesh
  raises KeyError because the requested dims are not in ascending mesh order (the mesh has a pp
  dimension the slice does not account for). Both ranks raise the same exception; torchrun reports
  exitcode 1 on each node. torchrun --nnodes 2 --nproc-per-node 1, one file per rank.
origin: reconstructed
produced:
  how: >-
    reconstructed line for line from NCCL 2.28.8 formats in the shared message catalog
    (nccl-messages-by-version.tsv) and PyTorch formats (torch-messages.tsv, excepthook prefix from
    torch-prefixes.md), following seed story 003 (stage 4, post 6); generator:
    samples/_reconstruct/build_spark.py
  torch: "2.10.0a0+b558c986e8.nv25.11"
  nccl: "2.28.8"
  date: "2026-11-29"
expect:
  healthy: false
  category: user_code_exception
  rule: null
  origin_ranks: [0, 1]
notes: >-
  The only error is the Python exception, raised on both ranks independently (same code, same config):
  '[rankN]: KeyError: "Invalid mesh_dim_names ('dp_replicate', 'dp_shard_cp', 'tp') specified. Mesh dim
  indices should be in ascending order."' with the last application frame
  nemo_automodel/components/distributed/parallelizer.py:973 in fsdp2_strategy_parallelize. A correct
  diagnosis is user_code_exception (a parallelism/device-mesh configuration bug in the training code or its
  config: pp_size=2 with the FSDP2 manager's dp/cp/tp mesh slicing), origin both ranks, and must say that
  communication is healthy: NCCL uses RoCE on both nodes, the communicator reaches Init COMPLETE and
  connects, there is no NCCL WARN, no NCCL error and no timeout. The exitcode-1 torchrun summaries and the
  'destroy_process_group() was not called' warnings are consequences. torch/NeMo line numbers other than
  parallelizer.py:973 (from the seed) are estimates.
"""


if __name__ == "__main__":
    stage1()
    stage2()
    stage3()
    stage4()
