#!/usr/bin/env python3
"""Generate synthetic but realistically shaped distributed-training logs.

usage: python tests/perf/gen_job_logs.py mixed OUT.log [MB] [NCCL_FRACTION] [SEED]
       python tests/perf/gen_job_logs.py nccl  OUT.log [MB] [SEED]

The second generator of ``tests/perf/bench.py`` (the first is ``gen_logs.py``), another realistic mix:
rank tags inside logger lines, tqdm bars, dict prints, warnings, NCCL lines from several threads.
From Python: ``generate("mixed", path, mb)`` (returns the byte and line counts).

mixed: a whole-job stdout/stderr (32 ranks, 4 nodes): training-step prints,
       tqdm bars, Python warnings, c10d warnings, checkpoint/eval lines, with
       NCCL lines (`host:pid:tid [dev] NCCL INFO ...`,
       `host:pid:tid [dev] file.cc:N NCCL WARN ...`) at the given fraction
       (default 0.02), an NCCL init storm at the start and a realistic
       failure tail (NCCL WARN + "-> N" traces + ProcessGroupNCCL watchdog
       timeout + Python traceback) at the end.
nccl:  every line an NCCL line, as with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL
       (collective-launch lines dominate, plus init/channel/proxy lines).

Deterministic (seeded: the same bytes on every machine, and on every call in one process).
"""
import random
import sys

R = random.Random(1234)
NODES = [f"gpu-a100-{n:03d}.cluster.local" for n in (17, 18, 23, 42)]
RANKS = []
for ni, host in enumerate(NODES):
    for d in range(8):
        pid = 40000 + 97 * (ni * 8 + d)
        RANKS.append((ni * 8 + d, host, pid, d))
NRANKS = len(RANKS)


def ip(r):
    return f"10.{12 + r // 8}.{3 + r % 8}.{17 + r}"


def pfx(rank, tid_off=0):
    r, host, pid, dev = RANKS[rank]
    tid = pid if tid_off == 0 else pid + tid_off
    return f"{host}:{pid}:{tid} [{dev}]"


# One communicator per rank, as a real job has (its pointer in the launch, init and destroy lines),
# opCounts that count up per rank, one commId for the job. The random draws stay (the other lines
# stay the same bytes); only their values are not used.
COMMS = ["0x%x" % (0x55D4A0000000 + 0x9E3779 * (r + 1)) for r in range(NRANKS)]
COMM_ID = "0x3f6a2b9c1d7e4058"
OP_COUNT = [0] * NRANKS


def hexp():
    return "0x" + "%x" % R.randrange(0x55D400000000, 0x55DFFFFFFFFF)


def nccl_info(rank):
    """One NCCL INFO/WARN line, drawn from a weighted template mix."""
    r = rank
    k = R.random()
    p = pfx(r, R.choice((0, 0, 51, 52, 77)))
    if k < 0.30:
        op = R.choice(("AllReduce", "AllReduce", "AllReduce", "ReduceScatter", "AllGather", "Broadcast"))
        R.randrange(1, 1 << 20)
        OP_COUNT[r] += 1
        line = (f"{p} NCCL INFO {op}: opCount {OP_COUNT[r]:x} sendbuff {hexp()} recvbuff {hexp()} "
                f"count {R.choice((1, 1024, 1048576, 25165824, 67108864))} datatype {R.choice((0, 7, 9))} op {R.choice((0, 0, 2))} root 0 ")
        hexp()
        return line + f"comm {COMMS[r]} [nranks={NRANKS}] stream {hexp()}"
    if k < 0.52:
        c = R.randrange(0, 32)
        peer = (r + R.choice((1, 8, NRANKS - 1))) % NRANKS
        if peer // 8 == r // 8:
            via = R.choice(("P2P/CUMEM/read", "P2P/IPC/read", "P2P/CUMEM"))
            return f"{p} NCCL INFO Channel {c:02d}/0 : {r}[{r % 8}] -> {peer}[{peer % 8}] via {via}"
        d = R.choice(("send", "recv"))
        return f"{p} NCCL INFO Channel {c:02d}/0 : {r}[{r % 8}] -> {peer}[{peer % 8}] [{d}] via NET/IB/{r % 8}/GDRDMA"
    if k < 0.58:
        c = R.randrange(0, 32)
        ring = " ".join(f"{(r + i) % NRANKS:3d}" for i in range(NRANKS))
        return f"{p} NCCL INFO Channel {c:02d}/{32:02d} : {ring}"
    if k < 0.63:
        hexp()
        return (f"{p} NCCL INFO ncclCommInitRank comm {COMMS[r]} rank {r} nranks {NRANKS} cudaDev {r % 8} nvmlDev {r % 8} "
                f"busId {R.choice(('18000', '2a000', '3a000', '5d000', '9a000', 'ab000', 'ba000', 'db000'))} commId {COMM_ID} "
                f"{R.getrandbits(63) and ''}"
                f"localSize 296 used {R.randrange(200000000, 900000000)} bytes on core {R.randrange(0, 96)} - Init COMPLETE")
    if k < 0.66:
        hexp()
        return f"{p} NCCL INFO comm {COMMS[r]} rank {r} nRanks {NRANKS} nNodes {len(NODES)} localRanks 8 localRank {r % 8} MNNVL 0"
    if k < 0.70:
        return f"{p} NCCL INFO Trees [0] {(r + 1) % NRANKS}/-1/-1->{r}->{(r - 1) % NRANKS} [1] {(r + 1) % NRANKS}/-1/-1->{r}->{(r - 1) % NRANKS}"
    if k < 0.74:
        return f"{p} NCCL INFO Connected all {R.choice(('rings', 'trees'))}"
    if k < 0.77:
        return f"{p} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB eth0:{ip(r)}<0>"
    if k < 0.80:
        return f"{p} NCCL INFO Bootstrap : Using eth0:{ip(r)}<0>"
    if k < 0.82:
        return f"{p} NCCL INFO NCCL version 2.21.5+cuda12.4"
    if k < 0.85:
        name, value = R.choice((('NCCL_SOCKET_IFNAME', 'eth0'), ('NCCL_IB_HCA', 'mlx5_0,mlx5_1,mlx5_2,mlx5_3'),
                                ('NCCL_IB_GID_INDEX', '3'), ('NCCL_P2P_LEVEL', 'NVL')))
        return f"{p} NCCL INFO {name} set by environment to {value}"
    if k < 0.88:
        return f"{p} NCCL INFO Setting affinity for GPU {r % 8} to ffffffff,00000000,ffffffff"
    if k < 0.90:
        return f"{p} NCCL INFO 32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer"
    if k < 0.92:
        return f"{p} NCCL INFO [Proxy Service] Device {r % 8} CPU core {R.randrange(0, 96)}"
    if k < 0.94:
        return (f"{p} NCCL INFO Init timings - ncclCommInitRank: rank {r} nranks {NRANKS} total {R.uniform(0.5, 9):.2f} "
                f"(kernels {R.uniform(0.1, 0.4):.2f}, alloc {R.uniform(0.01, 0.2):.2f}, bootstrap {R.uniform(0.01, 5):.2f}, allgathers 0.01, "
                f"topo {R.uniform(0.05, 0.4):.2f}, graphs 0.01, connections {R.uniform(0.1, 2):.2f}, rest 0.00)")
    if k < 0.96:
        return f"{p} NCCL INFO {R.choice(('misc/socket.cc:484', 'transport/net_ib.cc:1295', 'proxy.cc:1523', 'include/net.h:36', 'transport/net.cc:1034', 'enqueue.cc:1422', 'init.cc:1847'))} -> {R.choice((2, 3, 6))}"
    if k < 0.975:
        return f"{p} NCCL INFO [Service thread] Connection closed by localRank {R.randrange(0, 8)}"
    if k < 0.99:
        hexp()
        return f"{p} NCCL INFO comm {COMMS[r]} rank {r} nranks {NRANKS} cudaDev {r % 8} busId 18000 - Destroy COMPLETE"
    peer = (r + 8) % NRANKS
    w = R.random()
    if w < 0.4:
        return (f"{p} transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer {ip(peer)}<{R.randrange(30000, 60000)}> "
                f"with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:{ip(r)} remoteGids::ffff:{ip(peer)} hca mlx5_{r % 4}")
    if w < 0.7:
        return f"{p} misc/socket.cc:{R.choice((484, 538, 620))} NCCL WARN socketStartConnect: Connect to {ip(peer)}<{R.randrange(30000, 60000)}> failed : Software caused connection abort"
    if w < 0.85:
        return f"{p} include/socket.h:409 NCCL WARN Net : Connection closed by remote peer {NODES[peer // 8]}<{R.randrange(30000, 60000)}>"
    return f"{p} enqueue.cc:1422 NCCL WARN Cuda failure 'out of memory'"


def ts(step):
    s = 36000 + step // 3
    return f"2026-11-{29 + s // 86400 % 2:02d} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d},{R.randrange(1000):03d}"


def glog(kind, step):
    s = 36000 + step // 3
    return f"{kind}11{29 + s // 86400 % 2:02d} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{R.randrange(10 ** 9):09d}"


WARNINGS = [
    "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an exception if use_reentrant is not passed.",
    "/opt/conda/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:600: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly.",
    "  return fn(*args, **kwargs)",
    "/opt/conda/lib/python3.11/site-packages/torch/distributed/fsdp/_state_dict_utils.py:773: FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated.",
    "  warnings.warn(",
]


def app_line(step):
    """One non-NCCL application line."""
    r = R.randrange(NRANKS)
    k = R.random()
    if k < 0.45:
        return (f"[{ts(step)}][train.py:{R.choice((231, 234, 240))}][INFO] [rank{r}] step {step}/500000 | loss {R.uniform(1.8, 3.2):.4f} | "
                f"lr {R.uniform(1e-5, 3e-4):.2e} | grad_norm {R.uniform(0.2, 3):.3f} | tokens/s {R.randrange(90000, 180000)} | "
                f"mfu {R.uniform(30, 55):.1f}% | mem {R.uniform(40, 78):.1f}GiB")
    if k < 0.65:
        n = R.randrange(0, 1000)
        bar = "\u2588" * (n // 100) + " " * (10 - n // 100)
        return f"Epoch {step // 20000}:  {n // 10:3d}%|{bar}| {n}/1000 [{n // 60:02d}:{n % 60:02d}<{(1000 - n) // 60:02d}:{(1000 - n) % 60:02d},  {R.uniform(3, 9):.2f}it/s, loss={R.uniform(1.8, 3.2):.3f}]"
    if k < 0.75:
        return f"[default{r}]:{{'loss': {R.uniform(1.8, 3.2):.4f}, 'grad_norm': {R.uniform(0.2, 3):.4f}, 'learning_rate': {R.uniform(1e-5, 3e-4):.3e}, 'epoch': {step / 20000:.2f}}}"
    if k < 0.85:
        return R.choice(WARNINGS)
    if k < 0.86:
        return (f"[rank{r}]:[{glog('W', step)} ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}]  using GPU {r % 8} to perform barrier "
                f"as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.")
    if k < 0.94:
        return f"[{ts(step)}][dataloader.py:88][INFO] [rank{r}] prefetched shard {R.randrange(0, 4096):05d} from /lustre/datasets/pile/train-{R.randrange(0, 4096):05d}.arrow ({R.uniform(0.1, 2):.2f} GB)"
    if k < 0.97:
        return f"[{ts(step)}][checkpoint.py:142][INFO] [rank{r}] saved shard {r} of checkpoint step_{step - step % 1000} to /lustre/ckpt/run-7/step_{step - step % 1000}/model_{r:05d}.safetensors in {R.uniform(0.5, 30):.2f}s"
    if k < 0.99:
        return f"[{ts(step)}][eval.py:57][INFO] eval at step {step}: val_loss={R.uniform(1.8, 3):.4f} ppl={R.uniform(6, 20):.3f} acc={R.uniform(0.3, 0.6):.4f}"
    return f"[W{glog('', step)} socket.cpp:697] [c10d] The client socket has failed to connect to [{NODES[0]}]:29500 (errno: 111 - Connection refused)."


def failure_tail(step):
    out = []
    for r in (3, 11, 19, 27):
        out.append(nccl_info(r))
        out.append(f"{pfx(r, 77)} transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer {ip((r + 8) % NRANKS)}<45012> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:{ip(r)} remoteGids::ffff:{ip((r + 8) % NRANKS)} hca mlx5_0")
        out.append(f"{pfx(r, 77)} NCCL INFO transport/net.cc:1034 -> 6")
        out.append(f"{pfx(r, 77)} NCCL INFO proxy.cc:1523 -> 6")
    for r in range(NRANKS):
        out.append(f"[rank{r}]:[{glog('E', step)} ProcessGroupNCCL.cpp:617] [Rank {r}] Watchdog caught collective operation timeout: "
                   f"WorkNCCL(SeqNum=88212, OpType=ALLREDUCE, NumelIn=25165824, NumelOut=25165824, Timeout(ms)=600000) ran for 600019 milliseconds before timing out.")
    for r in range(NRANKS):
        out.append(f"[rank{r}]:[{glog('E', step)} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception (either an error or timeout) detected by watchdog at work: 88212, last enqueued NCCL work: 88212, last completed NCCL work: 88211.")
        out.append(f"[rank{r}]:[{glog('E', step)} ProcessGroupNCCL.cpp:630] [Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
        out.append(f"[rank{r}]:[{glog('E', step)} ProcessGroupNCCL.cpp:636] [Rank {r}] To avoid data inconsistency, we are taking the entire process down.")
    out += [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 412, in <module>',
        "    main()",
        '  File "/workspace/train.py", line 380, in main',
        "    loss.backward()",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "Last error:",
        "NET/IB : Got completion from peer 10.14.3.27<45012> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
        "E1129 12:31:07.118000 140231 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 3 (pid: 40291) of binary: /opt/conda/bin/python",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    ]
    return out


SEED = 1234


def generate(kind: str, path: str, mb: float = 200, frac: float = 0.02, seed: int = SEED) -> dict:
    """Write a ``kind`` ("mixed" or "nccl") log of about ``mb`` MB to ``path``; {bytes, lines} (size counted in characters, as the original did)."""
    if kind not in ("mixed", "nccl"):
        raise ValueError(f"unknown kind {kind!r} (mixed or nccl)")
    R.seed(seed)
    OP_COUNT[:] = [0] * NRANKS
    target = int(mb * 1_000_000)
    size = 0
    lines = 0
    buf = []
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        def emit(line):
            nonlocal size, lines
            buf.append(line)
            size += len(line) + 1
            lines += 1
            if len(buf) >= 10000:
                f.write("\n".join(buf) + "\n")
                buf.clear()
        if kind == "nccl":
            while size < target:
                emit(nccl_info(R.randrange(NRANKS)))
        else:
            step = 0
            for r in range(NRANKS):  # init storm
                for _ in range(40):
                    emit(nccl_info(r))
            while size < target - 20000:
                step += 1
                if R.random() < frac:
                    emit(nccl_info(R.randrange(NRANKS)))
                else:
                    emit(app_line(step))
            for line in failure_tail(step):
                emit(line)
        if buf:
            f.write("\n".join(buf) + "\n")
    return {"bytes": size, "lines": lines}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("mixed", "nccl"):
        raise SystemExit(__doc__.split("\n\n")[1])
    kind, path = sys.argv[1], sys.argv[2]
    mb = float(sys.argv[3]) if len(sys.argv) > 3 else 200
    frac = float(sys.argv[4]) if len(sys.argv) > 4 and kind == "mixed" else 0.02
    seed = sys.argv[5 if kind == "mixed" else 4:][:1]
    info = generate(kind, path, mb, frac, int(seed[0]) if seed else SEED)
    print(f"{path}: {info['bytes']:,} characters, {info['lines']:,} lines")


if __name__ == "__main__":
    main()
