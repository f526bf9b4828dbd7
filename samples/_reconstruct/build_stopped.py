"""Reconstructed samples of jobs that stop without an error (issue 16): a straggler, a hang stopped by
Slurm's time limit, and a clean end. Every NCCL line comes from a catalog format of the process's NCCL
version (ncclfmt.Proc refuses any other); NCCL_DEBUG_TIMESTAMP_LEVELS=ALL (2.26+) puts the default
``[%F %T] `` stamp in front of every line. The Slurm lines are slurmstepd's and srun's own wording.

    python samples/_reconstruct/build_stopped.py
"""
from __future__ import annotations

import datetime as dt

from ncclfmt import Proc, write_sample

COLL_22 = ("%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p "
           "[nranks=%d] stream %p")
COLL_4 = ("%s: opCount %lx sendbuff %p recvbuff %p count %zi datatype %d op %d root %d comm %p "
          "[nranks=%d] stream %p")
START_23 = "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START"
DONE_23 = "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE"
START_21 = "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START"
DONE_21 = "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE"
DESTROY_21 = "comm %p rank %d nranks %d cudaDev %d busId %lx - Destroy COMPLETE"


class Stamped(Proc):
    """A process with NCCL_DEBUG_TIMESTAMP_LEVELS=ALL: every line starts with ``[%F %T] ``."""

    def at(self, when: dt.datetime):
        self.now = when
        return self

    def info(self, tid, fmt, *args, dev=None):
        n = len(self.log)
        super().info(tid, fmt, *args, dev=dev)
        self.log[n] = self.now.strftime("[%Y-%m-%d %H:%M:%S] ") + self.log[n]

    def version_banner(self, tid=None, rank0=True):
        n = len(self.log)
        super().version_banner(tid=tid, rank0=rank0)  # an INFO line from 2.22: stamped too
        for i in range(n, len(self.log)):
            self.log[i] = self.now.strftime("[%Y-%m-%d %H:%M:%S] ") + self.log[i]


# -- 1. straggler ------------------------------------------------------------------------------------

def straggler():
    """2 ranks on one node, NCCL 2.26.2, timestamps on every line. Rank 0 sleeps 5 s before every
    all_reduce (host-side work only it does); rank 1 launches each all_reduce first and waits. Slurm's
    2-minute time limit ends the job with rank 1 in opCount 0x13 and rank 0 still sleeping after 0x12."""
    t0 = dt.datetime(2026, 11, 30, 9, 14, 2)
    logs = {0: [], 1: []}
    comm = {0: "0x55a4c3e1f0a0", 1: "0x5612b7d40c10"}
    stream = {0: "0x55a4c3e2b8c0", 1: "0x5612b7d4a7d0"}
    buf = {0: "0x7f3c4a000000", 1: "0x7f9e16000000"}
    commid = 0x6c1f0e2d9b7a4853
    procs = {}
    for r in (0, 1):
        p = Stamped(logs[r], "gpu-b17", 40311 + r * 2, "2.26.2", "12.4", dev=r)
        procs[r] = p
        p.at(t0)
        p.version_banner(tid=40311 + r * 2)
        p.info(p.pid, "%s set by environment to %s", "NCCL_DEBUG_TIMESTAMP_LEVELS", "ALL")
        p.info(p.pid, START_23, "ncclCommInitRankConfig", comm[r], r, 2, r, r, 0x18000 + r * 0x1000, commid)
        p.at(t0 + dt.timedelta(seconds=2))
        p.info(p.pid, DONE_23, "ncclCommInitRankConfig", comm[r], r, 2, r, r, 0x18000 + r * 0x1000, commid)
    # launches: rank 1 right after the previous all_reduce completed, rank 0 after its 5 s sleep
    t = t0 + dt.timedelta(seconds=3)
    end = t0 + dt.timedelta(minutes=2)
    op = 0
    while True:
        r1 = t
        r0 = t + dt.timedelta(seconds=5)
        if r0 > end:
            if r1 <= end:
                procs[1].at(r1).info(procs[1].pid, COLL_22, "AllReduce", op, buf[1], buf[1], 25557032, 7, 0, 0, comm[1], 2, stream[1])
            break
        procs[1].at(r1).info(procs[1].pid, COLL_22, "AllReduce", op, buf[1], buf[1], 25557032, 7, 0, 0, comm[1], 2, stream[1])
        procs[0].at(r0).info(procs[0].pid, COLL_22, "AllReduce", op, buf[0], buf[0], 25557032, 7, 0, 0, comm[0], 2, stream[0])
        op += 1
        t = r0 + dt.timedelta(seconds=1)  # the all_reduce runs once both are in, then rank 1 goes on
    stamp = end.strftime("%Y-%m-%dT%H:%M:%S")
    slurm = [
        "+ srun --ntasks=2 --output=rank%t.log python train.py",
        f"slurmstepd: error: *** STEP 88412.0 ON gpu-b17 CANCELLED AT {stamp} DUE TO TIME LIMIT ***",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        f"slurmstepd: error: *** JOB 88412 ON gpu-b17 CANCELLED AT {stamp} DUE TO TIME LIMIT ***",
    ]
    last0 = max(i for i, l in enumerate(logs[0]) if "opCount" in l)
    last1 = max(i for i, l in enumerate(logs[1]) if "opCount" in l)
    y = f"""title: "Straggler: rank 0 of 2 launches every all_reduce about 5 s after rank 1; Slurm's time limit ends the job, no error anywhere"
description: >-
  Two ranks on one node (gpu-b17, GPUs 0 and 1), NCCL 2.26.2 with NCCL_DEBUG=INFO,
  NCCL_DEBUG_SUBSYS=INIT,COLL and NCCL_DEBUG_TIMESTAMP_LEVELS=ALL, started by srun with one log per
  rank. Rank 0 does about 5 s of host-side work (a sleep standing for slow data loading) before every
  all_reduce; rank 1 launches each all_reduce about 5 s earlier and waits in it. Nothing fails: the
  job just runs slowly until Slurm's 2-minute time limit cancels the step. At the end rank 1 has
  launched AllReduce opCount {op:x} and waits; rank 0 reached opCount {op - 1:x} and is still in its sleep.
origin: reconstructed
produced:
  how: >-
    reconstructed line for line (no GPU here) from NCCL 2.26.2 formats of the shared catalog
    (nccl-messages-by-version.tsv: '%s: opCount %lx ... [nranks=%d] stream %p', Init START/COMPLETE with
    commId) with the default NCCL_DEBUG_TIMESTAMP_FORMAT '[%F %T] '; Slurm lines in slurmstepd/srun's
    wording; generator: samples/_reconstruct/build_stopped.py
  torch: null
  nccl: "2.26.2"
  date: "2026-12-01"
expect:
  healthy: false
  category: straggler_slow_rank
  rule: LD520
  origin_ranks: [0]
notes: >-
  The culprit is rank 0: it is behind by one collective at the end (rank 1 in opCount {op:x}, rank 0 at
  {op - 1:x}) and, over the whole run, it launched every all_reduce about 5 s after rank 1 while still
  making progress until the end (its last launch is seconds before the time limit), which is a
  straggler, not a hang. The Slurm cancellation is the outside world ending the job, not a failure of
  it; no rank prints an error.
"""
    write_sample("nccl-straggler-opcount-time-limit", {"rank0.log": logs[0], "rank1.log": logs[1],
                                                        "slurm-88412.out": slurm}, y)
    return last0, last1


# -- 2. hang stopped by the time limit --------------------------------------------------------------

def hang():
    """4 ranks on 2 nodes, NCCL 2.27.5, stamped lines, srun --label consoles (one per node). Rank 2 stops
    launching after opCount 0x2a (stuck in host code); ranks 0, 1, 3 launch 0x2b and wait. The process
    group's timeout is 2 h, so no watchdog fires before Slurm's time limit, 30 min later."""
    t0 = dt.datetime(2026, 11, 30, 22, 40, 11)
    hosts = {0: "trn-a04", 1: "trn-a04", 2: "trn-a05", 3: "trn-a05"}
    comm = {0: "0x5583a0c4e2f0", 1: "0x55f1d2a06a20", 2: "0x561e30b2c8e0", 3: "0x55c7f4a13b50"}
    stream = {0: "0x5583a0c4f4d0", 1: "0x55f1d2a07c00", 2: "0x561e30b2dac0", 3: "0x55c7f4a14d30"}
    buf = {0: "0x7f1200000000", 1: "0x7f5600000000", 2: "0x7fa800000000", 3: "0x7f0c00000000"}
    commid = 0xd41b7a93e05c2f18
    per_rank = {r: [] for r in range(4)}
    procs = {}
    for r in range(4):
        p = Stamped(per_rank[r], hosts[r], 71820 + r if r < 2 else 52103 + r, "2.27.5", "12.8", dev=r % 2)
        procs[r] = p
        p.at(t0)
        p.version_banner(tid=p.pid)
        p.info(p.pid, "%s set by environment to %s", "NCCL_DEBUG_TIMESTAMP_LEVELS", "ALL")
        p.info(p.pid, START_23, "ncclCommInitRankConfig", comm[r], r, 4, r % 2, r % 2, 0x1b000 + (r % 2) * 0x2f000, commid)
        p.at(t0 + dt.timedelta(seconds=4))
        p.info(p.pid, DONE_23, "ncclCommInitRankConfig", comm[r], r, 4, r % 2, r % 2, 0x1b000 + (r % 2) * 0x2f000, commid)
    stuck = 0x2a
    t = t0 + dt.timedelta(seconds=6)
    for op in range(stuck + 2):
        for r in range(4):
            if r == 2 and op > stuck:
                continue
            jitter = dt.timedelta(seconds=(r * 7 + op * 3) % 2)
            procs[r].at(t + jitter).info(procs[r].pid, COLL_22, "AllReduce", op, buf[r], buf[r], 4194304, 9, 0, 0,
                                         comm[r], 4, stream[r])
        t += dt.timedelta(seconds=11)
    end = t + dt.timedelta(minutes=30)
    stamp = end.strftime("%Y-%m-%dT%H:%M:%S")
    node = {0: [], 1: []}
    for r in range(4):
        node[r // 2].extend((per_rank[r][i], r, i) for i in range(len(per_rank[r])))
    files = {}
    for n in (0, 1):
        # interleave the two local ranks by time (srun --label: "<task>: ")
        lines = sorted(node[n], key=lambda x: (x[0][1:20], x[1], x[2]))
        files[f"node{n}.log"] = [f"{r}: {l}" for l, r, _ in lines]
    files["node0.log"] += [
        f"slurmstepd: error: *** STEP 90317.0 ON trn-a04 CANCELLED AT {stamp} DUE TO TIME LIMIT ***",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "srun: error: trn-a04: tasks 0-1: Terminated",
        "srun: error: trn-a05: tasks 2-3: Terminated",
        "srun: Terminating StepId=90317.0",
    ]
    files["node1.log"] += [f"slurmstepd: error: *** STEP 90317.0 ON trn-a05 CANCELLED AT {stamp} DUE TO TIME LIMIT ***"]
    y = f"""title: "Hang stopped by Slurm's time limit: rank 2 of 4 never launches AllReduce opCount 2b, the others wait in it for 30 minutes"
description: >-
  Two nodes x 2 GPUs (trn-a04: ranks 0-1, trn-a05: ranks 2-3), NCCL 2.27.5 with NCCL_DEBUG=INFO,
  NCCL_DEBUG_SUBSYS=INIT,COLL and NCCL_DEBUG_TIMESTAMP_LEVELS=ALL, srun --label (one console per
  node). The job runs 43 all_reduces, one every 11 s. Then rank 2 stops launching collectives after
  opCount 2a (stuck in host code); ranks 0, 1 and 3 launch opCount 2b and wait in it. The process
  group timeout is 2 hours, so no watchdog fires: nothing is printed for 30 minutes until Slurm's time
  limit cancels the step and srun terminates every task.
origin: reconstructed
produced:
  how: >-
    reconstructed line for line (no GPU here) from NCCL 2.27.5 formats of the shared catalog
    (nccl-messages-by-version.tsv) with the default NCCL_DEBUG_TIMESTAMP_FORMAT '[%F %T] ', srun --label
    prefixes and slurmstepd/srun wording; generator: samples/_reconstruct/build_stopped.py
  torch: null
  nccl: "2.27.5"
  date: "2026-12-01"
expect:
  healthy: false
  category: collective_timeout_hung_rank
  rule: LD519
  origin_ranks: [2]
notes: >-
  The culprit is rank 2: on communicator 0x{commid:x} ranks 0, 1 and 3 launched AllReduce opCount 2b,
  rank 2's last launch is opCount 2a, half an hour before Slurm's time limit; before that it was never
  late. That is a hang, not a straggler. 'Terminated' for every task and the CANCELLED line are the
  scheduler ending the job, not its cause.
"""
    write_sample("nccl-hang-rank-behind-time-limit", files, y)


# -- 3. clean end --------------------------------------------------------------------------------------

def clean():
    """2 ranks, NCCL 2.21.5 (no timestamps before 2.26): 12 all_reduces and 2 broadcasts each, then
    ncclCommDestroy on both ranks: equal opCounts, no error."""
    logs = {0: [], 1: []}
    comm = {0: "0x562f81c0a5b0", 1: "0x55e0d4b17c60"}
    stream = {0: "0x562f81c0b790", 1: "0x55e0d4b18e40"}
    buf = {0: "0x7f4a10000000", 1: "0x7fd2c8000000"}
    commid = 0x93a4c2e7b10f5d66
    for r in (0, 1):
        p = Proc(logs[r], "node-c03", 28804 + r, "2.21.5", "12.4", dev=r)
        p.version_banner(tid=28804 + r, rank0=(r == 0))
        p.info(p.pid, START_21, comm[r], r, 2, r, r, 0x4f000 + r * 0x1000, commid)
        p.info(p.pid, DONE_21, comm[r], r, 2, r, r, 0x4f000 + r * 0x1000, commid)
        for op in range(14):
            name = "Broadcast" if op in (0, 13) else "AllReduce"
            count = 1024 if name == "Broadcast" else 2097152
            p.info(p.pid, COLL_4, name, op, buf[r], buf[r], count, 7, 0, 0, comm[r], 2, stream[r])
        p.info(p.pid, DESTROY_21, comm[r], r, 2, r, 0x4f000 + r * 0x1000)
    y = """title: "Clean end: 2 ranks launch the same 14 collectives (equal opCounts) and destroy their communicator"
description: >-
  Two ranks on one node, NCCL 2.21.5 with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,COLL (no
  timestamps: NCCL prints none before 2.26). Each rank launches a Broadcast, 12 AllReduces and a final
  Broadcast (opCount 0 to d) on the same communicator and then destroys it. Both ranks stop at the same
  opCount and nothing fails: logdoc must not invent a hang or a straggler.
origin: reconstructed
produced:
  how: >-
    reconstructed line for line (no GPU here) from NCCL 2.21.5 formats of the shared catalog
    (nccl-messages-by-version.tsv); generator: samples/_reconstruct/build_stopped.py
  torch: null
  nccl: "2.21.5"
  date: "2026-12-01"
expect:
  healthy: true
notes: >-
  Equal last opCounts on every rank of the communicator and no error line: no diagnosis.
"""
    write_sample("nccl-clean-end-equal-opcounts", {"rank0.log": logs[0], "rank1.log": logs[1]}, y)


if __name__ == "__main__":
    straggler()
    hang()
    clean()
