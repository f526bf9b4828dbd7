"""Deterministic synthetic logs for ``tests/perf/bench.py`` (no network, no randomness across runs).

    python tests/perf/gen_logs.py mixed  OUT.log  200        # MB, ~2% NCCL/torch lines, one failure tail
    python tests/perf/gen_logs.py nccl   OUT.log  1300000    # lines, every line an NCCL_DEBUG=INFO line
    python tests/perf/gen_logs.py job    OUT_DIR  512 4      # ranks, MB per rank file, one failing rank
    python tests/perf/gen_logs.py small  OUT.log             # 10 lines

The line formats are the real ones (NCCL ``host:pid:tid [dev] NCCL INFO``, c10 ``[rankN]:[E... file:line]``,
torchrun, Python tracebacks); the volume is training output: step prints, tqdm bars, dict lines,
warnings, dataloader, checkpoint and eval lines.
"""
from __future__ import annotations

import os
import random
import sys

GPUS = 8


def _host(node: int) -> str:
    return f"gpu-h100-{node:03d}"


def _addr(node: int) -> str:
    """A routed cluster: 100 nodes per /24 (10.33.0.10-109, 10.33.1.10-109, ...), valid for any node count."""
    return f"10.{33 + node // 25600}.{node // 100 % 256}.{10 + node % 100}"


class _Job:
    """A job of ``nodes`` x 8 GPUs: hosts, pids, comm pointers, the NCCL lines each rank prints."""

    def __init__(self, nodes: int, seed: int = 7):
        self.r = random.Random(seed)
        self.nodes = nodes
        self.world = nodes * GPUS
        self.pids = [40000 + 37 * rank + self.r.randrange(7) for rank in range(self.world)]
        self.comms = [0x55E000000000 + self.r.randrange(1 << 36) for _ in range(self.world)]
        self.comm_id = self.r.randrange(1 << 63)

    def head(self, rank: int, tid: int | None = None) -> str:
        node, dev = divmod(rank, GPUS)
        pid = self.pids[rank]
        return f"{_host(node)}:{pid}:{pid if tid is None else tid} [{dev}]"

    def init_lines(self, rank: int) -> list[str]:
        """What one rank prints at communicator init under NCCL_DEBUG=INFO (IB with GDR)."""
        h = self.head(rank)
        node, dev = divmod(rank, GPUS)
        comm = self.comms[rank]
        out = []
        if dev == 0:
            out.append("NCCL version 2.21.5+cuda12.4")
        out += [
            f"{h} NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp226s0",
            f"{h} NCCL INFO NCCL_IB_HCA set by environment to mlx5",
            f"{h} NCCL INFO Bootstrap : Using enp226s0:{_addr(node)}<0>",
            f"{h} NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
            f"{h} NCCL INFO cudaDriverVersion 12040",
            f"{h} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB enp226s0:{_addr(node)}<0>",
            f"{h} NCCL INFO Using non-device net plugin version 0",
            f"{h} NCCL INFO Using network IB",
            f"{h} NCCL INFO ncclCommInitRank comm 0x{comm:x} rank {rank} nranks {self.world} cudaDev {dev} nvmlDev {dev} "
            f"busId {0x7000 + dev * 0x8000:x} commId 0x{self.comm_id:x} - Init START",
            f"{h} NCCL INFO Setting affinity for GPU {dev} to ffff0000,00000000,00000000,00000000,ffff0000",
            f"{h} NCCL INFO comm 0x{comm:x} rank {rank} nRanks {self.world} nNodes {self.nodes} localRanks 8 localRank {dev} MNNVL 0",
            f"{h} NCCL INFO Trees [0] {(rank + 1) % self.world}/-1/-1->{rank}->{(rank - 1) % self.world} "
            f"[1] {(rank + 1) % self.world}/-1/-1->{rank}->{(rank - 1) % self.world}",
            f"{h} NCCL INFO P2P Chunksize set to 524288",
        ]
        if rank == 0:
            for c in range(4):
                out.append(f"{h} NCCL INFO Channel {c:02d}/04 : " + " ".join(str((i + c) % self.world) for i in range(min(self.world, 16))))
        nxt = (rank + 1) % self.world
        for c in range(4):
            if nxt // GPUS == node:
                out.append(f"{h} NCCL INFO Channel {c:02d}/0 : {rank}[{dev}] -> {nxt}[{nxt % GPUS}] via P2P/CUMEM/read")
            else:
                out.append(f"{h} NCCL INFO Channel {c:02d}/0 : {rank}[{dev}] -> {nxt}[{nxt % GPUS}] [send] via NET/IB/{dev % 4}/GDRDMA")
        out += [
            f"{h} NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
            f"{h} NCCL INFO Connected all trees",
            f"{h} NCCL INFO threadThresholds 8/8/64 | 256/8/64 | 512 | 512",
            f"{h} NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels, 8 p2p channels, 2 p2p channels per peer",
            f"{h} NCCL INFO TUNER/Plugin: Using internal tuner plugin.",
            f"{h} NCCL INFO ncclCommInitRank comm 0x{comm:x} rank {rank} nranks {self.world} cudaDev {dev} nvmlDev {dev} "
            f"busId {0x7000 + dev * 0x8000:x} commId 0x{self.comm_id:x} - Init COMPLETE",
        ]
        return out

    def failure_lines(self, rank: int, origin: int, seq: int = 183) -> list[str]:
        """The end of the log of one rank when ``origin``'s IB link failed during all_reduce ``seq``."""
        out = []
        if rank == origin:
            node, dev = divmod(rank, GPUS)
            pid = self.pids[rank]
            h = self.head(rank, tid=pid + 64)
            peer = ((node + 1) % self.nodes)
            out += [
                f"[2026-11-26 07:18:44] {h} transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion from peer "
                f"{_addr(peer)}<53817> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_{dev % 4}",
                f"{h} NCCL INFO transport/net.cc:1292 -> 6",
                f"{h} NCCL INFO proxy.cc:694 -> 6",
                f"{h} NCCL INFO proxy.cc:879 -> 6 [Progress Thread]",
            ]
        out += [
            f"[rank{rank}]:[E1126 07:28:44.204117560 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, "
            f"Timeout(ms)=600000) ran for {600012 + rank} milliseconds before timing out.",
            f"[rank{rank}]:[E1126 07:28:44.204198897 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank {rank}]  "
            f"failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, last completed work: {seq - 1}",
            f"[rank{rank}]:[E1126 07:28:44.204718750 ProcessGroupNCCL.cpp:684] [Rank {rank}] Some NCCL operations have failed "
            f"or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            f"[rank{rank}]:[E1126 07:28:44.204726431 ProcessGroupNCCL.cpp:690] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: "
            f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, "
            f"NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for {600012 + rank} milliseconds before timing out.",
            "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 (most recent call first):",
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f22001a3c40 in /opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so)",
            "frame #1: c10d::ProcessGroupNCCL::watchdogHandler() + 0x890 (0x7f22004ee4c0 in /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
            "frame #2: <unknown function> + 0x94ac3 (0x7f22009e5980 in /lib/x86_64-linux-gnu/libc.so.6)",
            "",
        ]
        return out


_BLOCKS = " ▏▎▍▌▋▊▉█"


def _training_lines(r: random.Random, step: int, rank: int | None = None) -> list[str]:
    """One training step's worth of ordinary output (no keyword of the prefilter in most of it)."""
    loss = 2.0 + r.random()
    pick = r.random()
    out = []
    if pick < 0.55:
        out.append(f"step {step:7d} | loss {loss:.4f} | lr {3e-4 * (1 - step / 1e7):.3e} | grad_norm {r.random() * 3:.3f} "
                   f"| tokens/s {r.randrange(90000, 130000)} | mem 61.3GB")
    elif pick < 0.75:
        out.append("{'loss': %.4f, 'learning_rate': %.3e, 'epoch': %.2f, 'step': %d}" % (loss, 3e-5, step / 5000, step))
    elif pick < 0.85:
        done = step % 1000
        filled = done * 30 // 1000
        bar = "█" * filled + _BLOCKS[done % 9] + " " * (29 - filled)
        # tqdm in a file: updates separated by CR, the line ends when the epoch's bar is closed
        out.append(f"Epoch {step // 1000}:  {done // 10:3d}%|{bar}| {done}/1000 [05:55<07:14,  1.27it/s]\r"
                   f"Epoch {step // 1000}:  {done // 10:3d}%|{bar}| {done + 1}/1000 [05:56<07:13,  1.27it/s]")
    elif pick < 0.92:
        out.append(f"[dataloader] worker {r.randrange(16)} prefetched batch {step} in {r.random() * 40:.1f} ms (queue {r.randrange(8)})")
    elif pick < 0.96:
        out.append(f"eval at step {step}: ppl {7 + r.random():.3f} acc {0.6 + r.random() / 10:.4f} (1024 samples, 3.2 s)")
    elif pick < 0.985:
        out.append(f"saving checkpoint to /checkpoints/run-42/step_{step:08d}/model.pt (shard {r.randrange(8)} of 8) done in {r.random() * 9:.2f}s")
    else:
        out.append(f"  warnings.warn(  # step {step}: gradient accumulation boundary, {r.randrange(100)} microbatches")
    return out


def _sparse_other(r: random.Random, step: int, rank: int) -> str:
    """Lines with a prefilter keyword that are not failures (torch warnings, c10d barrier notes, eval 'error' ...)."""
    k = r.randrange(5)
    if k == 0:
        return (f"[rank{rank}]:[W1126 06:{step % 60:02d}:11.482611 ProcessGroupNCCL.cpp:4115] Warning: barrier(): using the "
                f"device under current context. You can specify `device_id` in `init_process_group` to mute this warning.")
    if k == 1:
        return ("/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader "
                "will create 16 worker processes in total.")
    if k == 2:
        return f"eval step {step}: mean abs error {r.random():.5f}, relative error {r.random() / 10:.5f}"
    if k == 3:
        return f"[rank{rank}] step {step} throughput 1.3 PFLOP/s, timeout budget ok"
    return f"checkpoint: writing optimizer state failed once, retrying (attempt 1 of 3) step {step}"


def mixed(path: str, size_mb: float, seed: int = 1, nccl_frac: float = 0.02) -> dict:
    """The combined stdout of a 32-rank job: training output, ~``nccl_frac`` NCCL lines, a failure at the end."""
    r = random.Random(seed)
    job = _Job(nodes=4, seed=seed)
    target = int(size_mb * 1e6)
    written = 0
    nlines = 0
    step = 0
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        def put(lines: list[str]) -> None:
            nonlocal written, nlines
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text.encode("utf-8"))
            nlines += len(lines)

        init = [ln for rank in range(job.world) for ln in job.init_lines(rank)]
        put(init)
        tail = [ln for rank in range(job.world) for ln in job.failure_lines(rank, origin=13)]
        tail_bytes = len(("\n".join(tail) + "\n").encode("utf-8"))
        buf: list[str] = []
        nccl_per_block = len(init)
        # one communicator (re)init storm every `every` ordinary lines keeps the NCCL share at nccl_frac
        every = int(nccl_per_block / nccl_frac)
        since = 0
        while written + tail_bytes < target:
            step += 1
            buf.extend(_training_lines(r, step))
            if r.random() < 0.004:
                buf.append(_sparse_other(r, step, r.randrange(job.world)))
            since += 1
            if since >= every:
                since = 0
                buf.extend(init)
            if len(buf) > 4096:
                put(buf)
                buf = []
        if buf:
            put(buf)
        put(tail)
    return {"bytes": written, "lines": nlines}


def nccl_dense(path: str, nlines: int, seed: int = 2) -> dict:
    """A pure NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL log of ``nlines`` lines (every line an NCCL line)."""
    r = random.Random(seed)
    job = _Job(nodes=4, seed=seed)
    written = 0
    n = 0
    ops = ("AllReduce", "AllReduce", "AllReduce", "AllGather", "ReduceScatter", "Broadcast")
    opcount = [0] * job.world
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        buf: list[str] = []
        for rank in range(job.world):
            buf.extend(job.init_lines(rank))
        while n + len(buf) < nlines:
            rank = r.randrange(job.world)
            h = job.head(rank)
            node, dev = divmod(rank, GPUS)
            x = r.random()
            if x < 0.45:
                opcount[rank] += 1
                buf.append(f"{h} NCCL INFO {r.choice(ops)}: opCount {opcount[rank]:x} sendbuff 0x7f{r.randrange(1 << 32):08x}00 "
                           f"recvbuff 0x7f{r.randrange(1 << 32):08x}00 count {r.choice((262144000, 1048576, 4096, 65536))} "
                           f"datatype 7 op 0 root 0 comm 0x{job.comms[rank]:x} [nranks={job.world}] stream 0x{0x55e0000 + rank:x}")
            elif x < 0.75:
                c = r.randrange(32)
                nxt = (rank + 1 + c % 3) % job.world
                if nxt // GPUS == node:
                    buf.append(f"{h} NCCL INFO Channel {c:02d}/1 : {rank}[{dev}] -> {nxt}[{nxt % GPUS}] via P2P/CUMEM/read")
                else:
                    d = "send" if c % 2 else "receive"
                    buf.append(f"{h} NCCL INFO Channel {c:02d}/1 : {rank}[{dev}] -> {nxt}[{nxt % GPUS}] [{d}] via NET/IB/{dev % 4}/GDRDMA")
            elif x < 0.83:
                c = r.randrange(32)
                buf.append(f"{h} NCCL INFO Channel {c:02d}/32 : " + " ".join(str((i * 7 + c) % job.world) for i in range(16)))
            elif x < 0.88:
                buf.append(f"{h} NCCL INFO Trees [0] {(rank + 1) % job.world}/-1/-1->{rank}->{(rank - 1) % job.world} "
                           f"[1] {(rank + 3) % job.world}/-1/-1->{rank}->{(rank - 2) % job.world}")
            elif x < 0.91:
                buf.append(f"{h} NCCL INFO Init timings - ncclCommInitRank: rank {rank} nranks {job.world} total {r.random() * 3:.2f} "
                           f"(kernels 0.21, alloc 0.05, bootstrap {r.random():.2f}, allgathers 0.01, topo 0.31, graphs 0.02, "
                           f"connections 0.44, rest 0.02)")
            elif x < 0.94:
                buf.append(f"{h} NCCL INFO ncclCommInitRank comm 0x{job.comms[rank]:x} rank {rank} nranks {job.world} cudaDev {dev} "
                           f"nvmlDev {dev} busId {0x7000 + dev * 0x8000:x} commId 0x{job.comm_id:x} - Init "
                           f"{r.choice(('START', 'COMPLETE'))}")
            elif x < 0.96:
                buf.append(f"{h} NCCL INFO Bootstrap timings total {r.random():.6f} (create 0.000022, send 0.000107, recv 0.000393, "
                           f"ring {r.random():.6f}, delay 0.000000)")
            elif x < 0.975:
                buf.append(f"{h} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB enp226s0:{_addr(node)}<0>")
            elif x < 0.99:
                buf.append(f"{h} NCCL INFO {r.choice(('proxy.cc:694', 'transport/net.cc:1292', 'init.cc:1310'))} -> {r.choice((2, 3, 6))}")
            else:
                buf.append(f"{job.head(rank, tid=job.pids[rank] + 64)} transport/net_ib.cc:2331 NCCL WARN NET/IB: Got completion from "
                           f"peer {_addr((node + 1) % job.nodes)}<{r.randrange(30000, 60000)}> with status=12 opcode=0 len=0 "
                           f"vendor err 129 (Send) hca mlx5_{dev % 4}")
            if len(buf) >= 8192:
                text = "\n".join(buf) + "\n"
                fh.write(text)
                written += len(text.encode())
                n += len(buf)
                buf = []
        buf = buf[: max(0, nlines - n)]
        if buf:
            text = "\n".join(buf) + "\n"
            fh.write(text)
            written += len(text.encode())
            n += len(buf)
    return {"bytes": written, "lines": n}


def job_folder(out_dir: str, nranks: int = 512, file_mb: float = 4.0, seed: int = 3, origin: int | None = None) -> dict:
    """``nranks`` torchrun per-rank log files (``rank_NNNN.log``): NCCL init, training output, one failure.

    The training body is built once per variant (8 variants) and shared, so generating 2 GB stays fast."""
    os.makedirs(out_dir, exist_ok=True)
    job = _Job(nodes=max(1, (nranks + GPUS - 1) // GPUS), seed=seed)
    origin = nranks // 3 if origin is None else origin
    r = random.Random(seed)
    target = int(file_mb * 1e6)
    bodies = []
    for v in range(8):
        lines: list[str] = []
        size = 0
        step = 0
        while size < target - (20000 if target > 100000 else 4500):
            step += 1
            for ln in _training_lines(r, step):
                lines.append(ln)
                size += len(ln.encode()) + 1
            if r.random() < 0.004:
                ln = _sparse_other(r, step, v)
                lines.append(ln)
                size += len(ln.encode()) + 1
        bodies.append("\n".join(lines) + "\n")
    total = 0
    for rank in range(nranks):
        head = "\n".join(job.init_lines(rank)) + "\n"
        tail = "\n".join(job.failure_lines(rank, origin=origin)) + "\n"
        data = (head + bodies[rank % 8] + tail).encode()
        with open(os.path.join(out_dir, f"rank_{rank:04d}.log"), "wb") as fh:
            fh.write(data)
        total += len(data)
    return {"bytes": total, "files": nranks, "origin": origin}


def small(path: str) -> dict:
    job = _Job(nodes=1, seed=4)
    lines = [
        "step       1 | loss 2.3456 | lr 3.000e-04",
        job.init_lines(0)[0],
        job.init_lines(0)[3],
        "step       2 | loss 2.3311 | lr 3.000e-04",
    ] + job.failure_lines(0, origin=0)[:6]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines[:10]) + "\n")
    return {"lines": 10}


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "mixed":
        print(mixed(sys.argv[2], float(sys.argv[3])))
    elif what == "nccl":
        print(nccl_dense(sys.argv[2], int(sys.argv[3])))
    elif what == "job":
        print(job_folder(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
    elif what == "small":
        print(small(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
