#!/usr/bin/env python3
"""Produce the real-run samples under samples/ by actually running failing (and healthy) jobs.

    python samples/generate.py                 # every scenario
    python samples/generate.py NAME [NAME ...] # only these
    python samples/generate.py --list          # list the scenarios
    python samples/generate.py --readme        # only rewrite samples/README.md

Every scenario starts real processes (torch CPU wheel, Gloo backend, 127.0.0.1 only, ports
picked free at run time), records their output exactly as printed into samples/<name>/
(`rankN.log` = stdout+stderr of rank N as `2>&1` would merge them, `console.log` = the
torchrun launcher's console, `logs/` = a torchrun --log-dir tree), writes samples/<name>/sample.yaml
and checks that the expected signature lines are really there. Nothing is edited afterwards.

The workers run from a fixed directory (RUN_DIR, a fresh copy of samples/_workers) so that the
script paths Python and torchrun print are the same on every machine, whatever the checkout path.
Every run is bounded in time; every process started (and its descendants, even ones that were
reparented) is killed at the end, also on errors.
"""
import argparse
import ctypes
import datetime
import fcntl
import glob
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))  # samples/
RUN_DIR = "/tmp/logdoc-samples"  # stable working directory for the runs
WORKERS = "_workers"
TORCH_VERSION = "2.13.0"
SCENARIOS = {}

# --------------------------------------------------------------------------------------------
# process handling


def _become_subreaper():
    """Orphaned grandchildren (e.g. torchrun workers whose agent died) are reparented to us,
    so that cleanup can still find them by parent pid."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass


def _die_with_parent():
    """In a child, before exec: get SIGKILL if the generator dies (safety net for hard kills)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def _children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def _descendants(pid):
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _reap_zombies():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(**extra):
    """The environment of every run: the caller's, minus anything that steers torch/NCCL/Gloo."""
    drop = ("TORCH", "NCCL", "GLOO", "MASTER_", "OMP_", "CUDA", "PYTHONPATH", "TORCHELASTIC")
    keep_exact = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK"}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(drop) and k not in keep_exact}
    env.update({
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "LC_ALL": "C.UTF-8",
        "MASTER_ADDR": "127.0.0.1",
        "GLOO_SOCKET_IFNAME": "lo",
    })
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


class Run:
    """One scenario run: starts processes, bounds them in time, kills them all at the end."""

    def __init__(self, name, out_dir):
        self.name = name
        self.out = out_dir
        self.procs = []
        self.files = []
        self.commands = []
        self.held_sockets = []

    # -- starting
    def spawn(self, argv, log_name, env, preexec_fn=None, show=None):
        path = os.path.join(self.out, log_name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "wb")
        self.files.append(f)
        def preexec():
            _die_with_parent()
            if preexec_fn:
                preexec_fn()
        p = subprocess.Popen(argv, cwd=RUN_DIR, env=env, stdin=subprocess.DEVNULL, stdout=f,
                             stderr=subprocess.STDOUT, start_new_session=True,
                             preexec_fn=preexec)
        self.procs.append(p)
        if show:
            self.commands.append(show)
        return p

    # -- waiting
    def wait(self, procs, timeout):
        """Wait until every proc in `procs` has exited; False if the time ran out."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(p.poll() is not None for p in procs):
                return True
            time.sleep(0.1)
        return all(p.poll() is not None for p in procs)

    # -- ending
    def terminate(self, procs, grace=3.0):
        """SIGTERM (what a scheduler sends first), then SIGKILL after `grace` seconds."""
        live = [p for p in procs if p.poll() is None]
        for p in live:
            self._signal_tree(p.pid, signal.SIGTERM)
        self.wait(live, grace)

    def _signal_tree(self, pid, sig):
        for q in [pid] + _descendants(pid):
            try:
                os.kill(q, sig)
            except ProcessLookupError:
                pass
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def cleanup(self):
        for p in self.procs:
            pids = [p.pid] + _descendants(p.pid)
            for q in pids:
                try:
                    os.killpg(q, signal.SIGKILL)  # every process here leads its own session
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    os.kill(q, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        # anything reparented to us (we are a subreaper) that still lives
        for q in _descendants(os.getpid()):
            try:
                os.kill(q, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap_zombies()
        for f in self.files:
            f.close()
        for s in self.held_sockets:
            s.close()

    # -- helpers for the scenarios
    def ranks(self, world, worker_args, ranks=None, port=None, env=None, rank_env=None,
              preexec_fn=None, must_exit=None, limit=60, grace=3.0, stagger=0.0,
              script="train.py"):
        """Start one process per rank (env:// rendezvous), one log file per rank.

        Waits until the ranks in `must_exit` (default: all started ranks) have exited or `limit`
        seconds passed, gives the others `grace` seconds, then terminates what is left."""
        port = port or free_port()
        ranks = list(range(world)) if ranks is None else list(ranks)
        procs = {}
        for r in ranks:
            e = base_env(RANK=r, WORLD_SIZE=world, LOCAL_RANK=r, LOCAL_WORLD_SIZE=world,
                         MASTER_PORT=port, **(env or {}))
            e.update({k: str(v) for k, v in ((rank_env or {}).get(r) or {}).items()})
            argv = [sys.executable, f"{WORKERS}/{script}", *worker_args]
            show = None
            if r == ranks[0]:
                envs = " ".join(f"{k}={v}" for k, v in sorted((env or {}).items()))
                show = (f"{envs + ' ' if envs else ''}RANK=<r> WORLD_SIZE={world} MASTER_ADDR=127.0.0.1 "
                        f"MASTER_PORT=<free port> GLOO_SOCKET_IFNAME={e.get('GLOO_SOCKET_IFNAME', '')} "
                        f"python {WORKERS}/{script} {' '.join(worker_args)}  (ranks {','.join(map(str, ranks))})")
            pre = preexec_fn.get(r) if isinstance(preexec_fn, dict) else preexec_fn
            procs[r] = self.spawn(argv, f"rank{r}.log", e, preexec_fn=pre, show=show)
            if stagger:
                time.sleep(stagger)
        waited = [procs[r] for r in (ranks if must_exit is None else must_exit)]
        self.wait(waited, limit)
        others = [p for p in procs.values() if p not in waited]
        self.wait(others, grace)
        self.terminate(list(procs.values()))
        return {r: p.returncode for r, p in procs.items()}

    def single(self, worker_args, script, limit=60, env=None, log_name="console.log"):
        """One launcher process (e.g. torch.multiprocessing.spawn) writing to one console log."""
        port = free_port()
        e = base_env(MASTER_PORT=port, **(env or {}))
        show = (f"MASTER_ADDR=127.0.0.1 MASTER_PORT=<free port> GLOO_SOCKET_IFNAME=lo "
                f"python {WORKERS}/{script} {' '.join(worker_args)}")
        p = self.spawn([sys.executable, f"{WORKERS}/{script}", *worker_args], log_name, e,
                       show=show)
        self.wait([p], limit)
        self.terminate([p], grace=5.0)
        return p.returncode

    def torchrun(self, nproc, torchrun_args, worker_args, limit=90, port=None,
                 script="train.py", env=None):
        port = port or free_port()
        exe = os.path.join(os.path.dirname(sys.executable), "torchrun")
        launcher = [exe] if os.path.exists(exe) else [sys.executable, "-m", "torch.distributed.run"]
        targs = ["--nnodes=1", f"--nproc-per-node={nproc}"]
        if not any(a.startswith("--rdzv-backend") for a in torchrun_args):  # static rendezvous
            targs += ["--master-addr=127.0.0.1", f"--master-port={port}"]
        targs += torchrun_args
        argv = launcher + targs + [f"{WORKERS}/{script}", *worker_args]
        envs = " ".join(f"{k}={v}" for k, v in sorted((env or {}).items()))
        show = (f"{envs + ' ' if envs else ''}torchrun "
                + " ".join(a.replace(str(port), "<free port>") for a in targs)
                + f" {WORKERS}/{script} " + " ".join(worker_args))
        p = self.spawn(argv, "console.log", base_env(**(env or {})), show=show)
        self.wait([p], limit)
        self.terminate([p], grace=5.0)
        return p.returncode


# --------------------------------------------------------------------------------------------
# scenarios


def scenario(name, title, category, origin_ranks, description, notes, signatures,
             healthy=False):
    """Register a scenario. `signatures` is a list of (glob relative to the sample folder,
    regex) that must each match at least one line of at least one matching file."""
    def deco(fn):
        SCENARIOS[name] = dict(name=name, title=title, category=category,
                               origin_ranks=origin_ranks, description=description,
                               notes=notes, signatures=signatures, healthy=healthy, run=fn)
        return fn
    return deco


CLOSED = r"Connection closed by peer \[127\.0\.0\.1\]:\d+"
RECV_TIMEOUT = r"Timed out waiting \d+ms for recv operation to complete"
CHILD_FAILED = r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError"


@scenario(
    "gloo-peer-sigkill-mid-allreduce",
    "Rank 1 of 4 is killed with SIGKILL while an all_reduce is in flight",
    "peer_process_died", [1],
    "Four Gloo ranks run an all_reduce loop. At step 2 rank 1 starts the all_reduce and sends "
    "itself SIGKILL (the way the kernel OOM killer ends a process). Its log stops without any "
    "error; the survivors fail inside the collective.",
    "Root cause is rank 1: it died abruptly (SIGKILL, no traceback, its log simply ends after "
    "'killing myself with SIGKILL'). Ranks 0, 2 and 3 report 'Connection closed by peer' or "
    "'Read error ... Connection reset by peer' from the all_reduce; those are consequences, "
    "not causes. "
    "The Gloo port printed is byte-swapped and is an ephemeral port, not MASTER_PORT.",
    [("rank1.log", r"killing myself with SIGKILL"),
     ("rank[023].log", CLOSED)],
)
def _(run):
    run.ranks(4, ["--steps", "5", "--numel", "262144", "--fault", "sigkill", "--fault-ranks", "1",
                  "--fault-step", "2", "--timeout", "20"], must_exit=[0, 2, 3], limit=60)


@scenario(
    "gloo-peer-exit-before-collective",
    "Rank 2 of 4 leaves the training loop with sys.exit(0) before the next all_reduce",
    "peer_process_died", [2],
    "Four Gloo ranks run an all_reduce loop. At step 2 rank 2 calls sys.exit(0) instead of the "
    "collective (a premature early-stop). It exits 'successfully'; the other ranks fail in the "
    "all_reduce that rank 2 never joined.",
    "Root cause is rank 2, which exited (exit code 0, no traceback) before the all_reduce of "
    "step 2. Ranks 0, 1 and 3 report 'Connection closed by peer' and/or a recv timeout as a "
    "consequence. A correct diagnosis must point at rank 2's early exit, not at the network.",
    [("rank2.log", r"sys\.exit\(0\)"),
     ("rank[013].log", CLOSED + "|" + RECV_TIMEOUT)],
)
def _(run):
    run.ranks(4, ["--steps", "4", "--fault", "exit", "--fault-ranks", "2", "--fault-step", "2",
                  "--timeout", "15"], limit=60)


@scenario(
    "torchrun-worker-python-exception",
    "torchrun, 4 workers: rank 2 raises KeyError in user code",
    "user_code_exception", [2],
    "torchrun --nproc-per-node 4 (static rendezvous) runs the Gloo loop; at step 2 rank 2 raises "
    "KeyError('labels') from the training code. torchrun stops the other workers with SIGTERM and "
    "prints the ChildFailedError summary.",
    "Root cause is rank 2: an uncaught Python exception (KeyError: 'labels', prefixed '[rank2]: ') "
    "and exitcode 1 in the ChildFailedError summary. The other workers are SIGTERMed by torchrun "
    "(exitcode -15) or fail in the collective afterwards; they are victims. If the 'Root Cause' "
    "entry names another rank, the diagnosis must still name rank 2 from the traceback.",
    [("console.log", r"\[rank2\]: KeyError: 'labels'"),
     ("console.log", CHILD_FAILED),
     ("console.log", r"exitcode\s+: 1 ")],
)
def _(run):
    run.torchrun(4, [], ["--steps", "4", "--fault", "raise", "--fault-ranks", "2",
                         "--fault-step", "2", "--timeout", "15"], limit=90)


@scenario(
    "gloo-recv-timeout-rank-skips-collective",
    "Rank 3 of 4 never calls the all_reduce; the others time out after 10 s",
    "collective_timeout_hung_rank", [3],
    "Four Gloo ranks with a 10 s process-group timeout. At step 1 rank 3 waits forever for a data "
    "loader instead of calling all_reduce. The other ranks give up with Gloo recv timeouts. Rank 3 "
    "prints nothing after its last step; it was terminated (SIGTERM) by the generator afterwards, "
    "as a scheduler would.",
    "Root cause is rank 3: it stopped issuing collectives (hung before the all_reduce of step 1). "
    "Ranks 0, 1 and 2 show 'Timed out waiting 10000ms for recv operation to complete' (or the "
    "send-side twin, or a connection closed by the timeout on another rank). Gloo does not name "
    "the late peer; the diagnosis must find the rank whose log stops without an error.",
    [("rank3.log", r"waiting for the data loader"),
     ("rank[012].log", RECV_TIMEOUT)],
)
def _(run):
    run.ranks(4, ["--steps", "3", "--fault", "hang", "--fault-ranks", "3", "--fault-step", "1",
                  "--timeout", "10"], must_exit=[0, 1, 2], limit=60, grace=2)



@scenario(
    "gloo-monitored-barrier-rank-missing",
    "monitored_barrier: rank 1 of 4 never arrives, rank 0 names it after 5 s",
    "collective_timeout_hung_rank", [1],
    "Four Gloo ranks call dist.monitored_barrier(timeout=5s). Rank 1 is busy (simulated long "
    "checkpoint write) and never enters the barrier. Rank 0 reports which rank failed to pass; "
    "the other ranks time out waiting for rank 0's release. Rank 1 was terminated by the "
    "generator afterwards.",
    "Root cause is rank 1: rank 0's error 'Rank 1 failed to pass monitoredBarrier in 5000 ms' "
    "names it directly. Ranks 2 and 3 fail with a recv timeout / 'successfully reached "
    "monitoredBarrier, but received errors while waiting for send/recv from rank 0' because "
    "rank 0 gave up; they are not the cause, and neither is rank 0.",
    [("rank0.log", r"Rank 1 failed to pass monitoredBarrier in 5000 ms"),
     ("rank1.log", r"writing a checkpoint")],
)
def _(run):
    run.ranks(4, ["--missing-rank", "1", "--barrier-timeout", "5"], must_exit=[0, 2, 3],
              limit=45, grace=2, script="monitored_barrier.py")


@scenario(
    "gloo-detail-shape-mismatch",
    "TORCH_DISTRIBUTED_DEBUG=DETAIL: rank 1 of 4 all_reduces a tensor of a different shape",
    "collective_mismatch", [1],
    "Four Gloo ranks with TORCH_DISTRIBUTED_DEBUG=DETAIL. In the second collective ranks 0, 2 "
    "and 3 all_reduce 1024 elements, rank 1 all_reduces 2048. The DETAIL wrapper compares the "
    "collective fingerprints before running it and every rank raises a 'Detected mismatch "
    "between collectives on ranks' error.",
    "Root cause is a collective shape mismatch introduced by rank 1 (the odd one out: [2048] "
    "against [1024] on ranks 0, 2 and 3). The mismatch report must be read as 'Tensor Tensor "
    "shapes: 1024vs 2048' (DETAIL formatting quirks). This is a program bug, not a network or "
    "timeout problem.",
    [("rank*.log", r"Detected mismatch between collectives on ranks"),
     ("rank*.log", r"Tensor Tensor shapes")],
)
def _(run):
    run.ranks(4, ["--kind", "shape", "--odd-rank", "1", "--timeout", "10"],
              env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}, limit=45, grace=2, script="mismatch.py")


@scenario(
    "gloo-detail-op-mismatch",
    "TORCH_DISTRIBUTED_DEBUG=DETAIL: rank 3 of 4 calls broadcast while the others call all_reduce",
    "collective_mismatch", [3],
    "Four Gloo ranks with TORCH_DISTRIBUTED_DEBUG=DETAIL. In the second collective ranks 0, 1 "
    "and 2 call all_reduce while rank 3 calls broadcast (a diverging code path). The DETAIL "
    "fingerprint check reports the op type mismatch.",
    "Root cause is rank 3 calling a different collective (BROADCAST instead of ALLREDUCE): "
    "'Op type: ALLREDUCEvs BROADCAST'. A program bug (ranks took different code paths), not a "
    "network problem.",
    [("rank*.log", r"Detected mismatch between collectives on ranks"),
     ("rank*.log", r"Op type: ALLREDUCEvs BROADCAST|Op type: BROADCASTvs ALLREDUCE")],
)
def _(run):
    run.ranks(4, ["--kind", "op", "--odd-rank", "3", "--timeout", "10"],
              env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}, limit=45, grace=2, script="mismatch.py")


@scenario(
    "gloo-allreduce-size-mismatch",
    "Without DETAIL: rank 1 of 4 all_reduces 2048 elements, the others 1024",
    "collective_mismatch", [1],
    "Same program as gloo-detail-shape-mismatch but without TORCH_DISTRIBUTED_DEBUG. Gloo's "
    "ring all_reduce receives more bytes than a peer posted; in the recording the rank that "
    "notices aborts from a Gloo thread ('terminate called after throwing an instance of "
    "gloo::EnforceNotMet ... Received data size doesn't match expected size'), and the others "
    "then lose their connections.",
    "Root cause is the shape mismatch introduced by rank 1 ([2048] against [1024] on the "
    "others: its own log shows the odd shape). The rank that aborts with 'Received data size "
    "doesn't match expected size. Is there a distributed collective mismatch in your code?' "
    "is the one that received the oversized message, not necessarily the culprit; the "
    "'Connection closed by peer' / 'Connection reset by peer' errors are consequences of that "
    "abort. Without DETAIL there is no fingerprint report naming the ranks.",
    [("rank*.log", r"Received data size doesn't match expected size"),
     ("rank1.log", r"all_reduce of shape \[2048\]")],
)
def _(run):
    run.ranks(4, ["--kind", "shape", "--odd-rank", "1", "--timeout", "10"],
              limit=45, grace=2, script="mismatch.py")


@scenario(
    "gloo-socket-ifname-nonexistent",
    "GLOO_SOCKET_IFNAME=eth9 names an interface that does not exist",
    "wrong_network_interface", [0, 1],
    "Two ranks are started with GLOO_SOCKET_IFNAME=eth9 on a machine that has no eth9. The "
    "TCPStore rendezvous works (it does not use the variable), then creating the Gloo device "
    "fails on every rank.",
    "Root cause is configuration: GLOO_SOCKET_IFNAME names an absent interface ('Unable to find "
    "address for: eth9'). Every rank fails the same way during init_process_group, before any "
    "collective; no rank is at fault more than another.",
    [("rank0.log", r"Unable to find address for: eth9"),
     ("rank1.log", r"Unable to find address for: eth9")],
)
def _(run):
    run.ranks(2, ["--steps", "2", "--timeout", "10"], env={"GLOO_SOCKET_IFNAME": "eth9"},
              limit=45, grace=2)


@scenario(
    "gloo-world-size-larger-than-started",
    "WORLD_SIZE=4 but only ranks 0-2 are started",
    "rendezvous_store_failure", [3],
    "Ranks 0, 1 and 2 are started with WORLD_SIZE=4; rank 3 is never started (a node that did "
    "not come up, or a wrong WORLD_SIZE). Rank 0's TCPStore server waits for 4 clients and "
    "gives up; the other ranks time out waiting for rank 3's keys.",
    "Root cause: rank 3 never joined (there is no log for it). Rank 0 reports 'Timed out after "
    "N seconds waiting for clients. 3/4 clients joined.'; ranks 1 and 2 report store wait "
    "timeouts or a lost store connection. The diagnosis must say that fewer processes than "
    "WORLD_SIZE started (or that WORLD_SIZE is wrong), not blame rank 0.",
    [("rank0.log", r"3/4 clients joined")],
)
def _(run):
    run.ranks(4, ["--steps", "2", "--timeout", "10"], ranks=[0, 1, 2], limit=45, grace=2)


@scenario(
    "gloo-master-not-started",
    "No process listens at MASTER_ADDR:MASTER_PORT: ranks 1-3 time out connecting to the store",
    "rendezvous_store_failure", [0],
    "Ranks 1, 2 and 3 of a 4-rank job are started, rank 0 (which hosts the TCPStore) is not. "
    "The clients retry the connection silently and fail after the 10 s timeout.",
    "Root cause: nothing listens at MASTER_ADDR:MASTER_PORT, because rank 0 (the store host) "
    "never started (no log for it). Every client reports 'The client socket has timed out "
    "after 10000ms while trying to connect to (127.0.0.1, PORT)'. Connection refused is not "
    "printed at the default log level. Check that rank 0 runs and MASTER_ADDR/PORT are right.",
    [("rank[123].log", r"The client socket has timed out after \d+ms while trying to connect to")],
)
def _(run):
    run.ranks(4, ["--steps", "2", "--timeout", "10"], ranks=[1, 2, 3], limit=45, grace=2)


@scenario(
    "gloo-master-port-in-use",
    "MASTER_PORT is already taken by another process: rank 0 cannot start the TCPStore",
    "port_in_use", [0],
    "Before the job starts, another program (here a plain Python socket) listens on "
    "127.0.0.1:MASTER_PORT. Rank 0 fails to bind the TCPStore server; ranks 1-3 connect to the "
    "foreign listener, which never answers.",
    "Root cause: MASTER_PORT is in use (EADDRINUSE on rank 0: 'The server socket has failed to "
    "listen on any local network address ... EADDRINUSE'). What ranks 1-3 print (timeouts, or "
    "nothing until they are killed) is a consequence; they talked to the wrong listener.",
    [("rank0.log", r"EADDRINUSE|Address already in use")],
)
def _(run):
    port = free_port()
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", port))
    holder.listen(16)
    run.held_sockets.append(holder)
    # ranks 1-3 hang silently on the foreign listener: give them a while, then end them
    run.ranks(4, ["--steps", "2", "--timeout", "10"], port=port, must_exit=[0], limit=30, grace=12)



def _ranks_matching(sample_dir, rx):
    """Ranks whose rankN.log has a line matching rx (for facts that vary between runs)."""
    out = []
    for path in glob.glob(os.path.join(sample_dir, "rank*.log")):
        m = re.search(r"rank(\d+)\.log$", path)
        with open(path, encoding="utf-8", errors="replace") as f:
            if m and re.search(rx, f.read()):
                out.append(int(m.group(1)))
    return sorted(out)


def _nofile(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return preexec


FD_LIMIT = 32


@scenario(
    "gloo-fd-exhaustion-store-host-ws16",
    f"16 Gloo ranks with 'ulimit -n {FD_LIMIT}': the store host runs out of file descriptors",
    "fd_limit_exhausted", [0],
    f"Sixteen ranks on one machine, each started with RLIMIT_NOFILE={FD_LIMIT} (as 'ulimit -n "
    f"{FD_LIMIT}' would). Gloo needs one socket per peer per process group, rank 0 also holds one "
    "TCPStore socket per client: the small version of a 64-node job failing in "
    "'Gloo connectFullMesh failed'.",
    "Root cause is the open-file limit (EMFILE, 'Too many open files') on rank 0, the TCPStore "
    "host; raise 'ulimit -n'. The other ranks only report that the store connection was lost "
    "('Failed to recv, got 0 bytes ...') or connect/timeout errors: consequences of rank 0's "
    "failure, not separate problems.",
    [("rank*.log", r"Too many open files")],
)
def _(run):
    run.ranks(16, ["--steps", "2", "--timeout", "15"], preexec_fn=_nofile(FD_LIMIT), limit=75,
              grace=3)



FD_LIMIT_MESH = 20


@scenario(
    "gloo-fd-exhaustion-connectfullmesh-ws16",
    f"16 Gloo ranks, ranks 1-15 with 'ulimit -n {FD_LIMIT_MESH}': Gloo connectFullMesh failed",
    "fd_limit_exhausted", lambda d: _ranks_matching(d, r"Too many open files"),
    f"Sixteen ranks on one machine. Rank 0 (the TCPStore host) has the usual open-file limit, "
    f"ranks 1-15 are started with RLIMIT_NOFILE={FD_LIMIT_MESH} (as if their nodes had a low "
    "'ulimit -n'). Connecting the Gloo full mesh needs one socket per peer, so the limited "
    "ranks fail while building the default process group.",
    "Root cause is the open-file limit on ranks 1-15: 'Gloo connectFullMesh failed with "
    "[...] socket: Too many open files' (EMFILE). Rank 0 is healthy and only fails because its "
    "peers never connect. Fix: raise 'ulimit -n' (LimitNOFILE, container nofile) on every node. "
    "Which of ranks 1-15 run out first varies from run to run: origin_ranks lists the ranks "
    "whose log shows EMFILE (socket: or accept: Too many open files) in this recording; the "
    "others report 'Gloo connectFullMesh failed with ... Connect timeout' or 'timed out "
    "connecting ... Connection refused' because those peers died.",
    [("rank*.log", r"Gloo connectFullMesh failed"),
     ("rank*.log", r"Too many open files")],
)
def _(run):
    limits = {r: _nofile(FD_LIMIT_MESH) for r in range(1, 16)}
    # with the 5 s timeout the ranks that did not hit EMFILE give up connecting after ~30 s
    run.ranks(16, ["--steps", "2", "--timeout", "5"], preexec_fn=limits, limit=90, grace=3)



@scenario(
    "torchrun-tee-prefix-exception",
    "torchrun --tee 3, 4 workers: rank 1 raises KeyError; every console line carries [defaultN]:",
    "user_code_exception", [1],
    "torchrun --nproc-per-node 4 --tee 3: the agent copies each worker's stdout/stderr to the "
    "console with a '[default<local_rank>]:' prefix. Rank 1 raises KeyError('labels') at step 1; "
    "the other workers then fail in the collective or are stopped by torchrun.",
    "Root cause is rank 1 (local rank 1): KeyError: 'labels' in user code, shown as "
    "'[default1]:[rank1]: KeyError: ...', exitcode 1 in the ChildFailedError summary. The "
    "'Connection closed by peer' errors and SIGTERM (-15) exits of the other ranks are "
    "consequences.",
    [("console.log", r"^\[default1\]:\[rank1\]: KeyError: 'labels'"),
     ("console.log", CHILD_FAILED)],
)
def _(run):
    run.torchrun(4, ["--tee=3"], ["--steps", "3", "--fault", "raise", "--fault-ranks", "1",
                                  "--fault-step", "1", "--timeout", "15"], limit=90)


@scenario(
    "torchrun-redirects-logdir-record",
    "torchrun --redirects 3 --log-dir, @record: rank 3 raises; tracebacks only in the log files",
    "user_code_exception", [3],
    "torchrun --nproc-per-node 4 --redirects 3 --log-dir logs, with the worker's main() wrapped "
    "in @record. Rank 3 raises KeyError('labels') at step 1. The console has only the agent's "
    "lines and the ChildFailedError summary (with the error file and the traceback thanks to "
    "@record); each worker's output is in logs/<run_id>/attempt_0/<local_rank>/{stdout,stderr}.log.",
    "Root cause is rank 3: KeyError: 'labels' (logs/.../attempt_0/3/stderr.log, and the summary's "
    "traceback/error_file). Other workers' 'Connection closed by peer' or SIGTERM (-15) are "
    "consequences. A correct diagnosis reads the console and the log-dir tree together.",
    [("console.log", CHILD_FAILED),
     ("logs/**/attempt_0/3/stderr.log", r"KeyError: 'labels'")],
)
def _(run):
    run.torchrun(4, ["--redirects=3", "--log-dir=logs"],
                 ["--steps", "3", "--fault", "raise", "--fault-ranks", "3", "--fault-step", "1",
                  "--timeout", "15", "--record"], limit=90)
    src = os.path.join(RUN_DIR, "logs")
    if os.path.isdir(src):  # the tree torchrun wrote, moved as is into the sample folder
        shutil.move(src, os.path.join(run.out, "logs"))


@scenario(
    "torchrun-max-restarts-always-failing",
    "torchrun --max-restarts 2: rank 1 fails in every attempt, the group is restarted twice",
    "user_code_exception", [1],
    "LOGLEVEL=INFO torchrun --nproc-per-node 2 --max-restarts 2 --redirects 3 --log-dir logs "
    "(LOGLEVEL=INFO makes the agent print its INFO lines, restarts included). Rank 1 raises "
    "the same KeyError at step 1 in every attempt; the agent restarts the worker group twice "
    "('Worker group FAILED. N/2 attempts left; will restart worker group') and then gives up. "
    "logs/ has one attempt_<n> folder per attempt.",
    "Root cause is rank 1's KeyError: 'labels', repeated in attempt_0, attempt_1 and attempt_2 "
    "(a deterministic bug: restarting cannot help). The restart lines are the agent's reaction, "
    "not a separate failure. If a later attempt fails differently (e.g. Gloo connect errors "
    "from a stale address in the store), the first attempt's error is still the root cause.",
    [("console.log", r"attempts left; will restart worker group"),
     ("console.log", CHILD_FAILED),
     ("logs/**/attempt_0/1/stderr.log", r"KeyError: 'labels'"),
     ("logs/**/attempt_2/1/stderr.log", r"KeyError: 'labels'|Error")],
)
def _(run):
    port = free_port()
    run.torchrun(2, ["--max-restarts=2", "--redirects=3", "--log-dir=logs", "--rdzv-backend=c10d",
                     f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=job42"],
                 ["--steps", "3", "--fault", "raise", "--fault-ranks", "1", "--fault-step", "1",
                  "--timeout", "5"], limit=110, port=port, env={"LOGLEVEL": "INFO"})
    src = os.path.join(RUN_DIR, "logs")
    if os.path.isdir(src):
        shutil.move(src, os.path.join(run.out, "logs"))


@scenario(
    "torchrun-worker-sigkill",
    "torchrun, 4 workers: rank 2 is killed with SIGKILL (exitcode -9, like the OOM killer)",
    "peer_process_died", [2],
    "torchrun --nproc-per-node 4 without --tee: worker output goes to the console unprefixed. "
    "At step 2 rank 2 starts an all_reduce and sends itself SIGKILL, as the kernel OOM killer "
    "would. The agent reports exitcode -9 and stops the others.",
    "Root cause is rank 2 killed by SIGKILL ('exitcode : -9', 'Signal 9 (SIGKILL) received by "
    "PID ...'): typically the host OOM killer or the scheduler; check dmesg / cgroup memory "
    "events. The other ranks' 'Connection closed by peer' and SIGTERM (-15) are consequences.",
    [("console.log", r"exitcode\s+: -9"),
     ("console.log", r"Signal 9 \(SIGKILL\) received by PID")],
)
def _(run):
    run.torchrun(4, [], ["--steps", "4", "--numel", "262144", "--fault", "sigkill",
                         "--fault-ranks", "2", "--fault-step", "2", "--timeout", "15"], limit=90)


@scenario(
    "torchrun-hung-rank-misleading-root-cause",
    "torchrun, 4 workers: rank 1 hangs outside the collective; torchrun blames a rank that timed out",
    "collective_timeout_hung_rank", [1],
    "torchrun --nproc-per-node 4 --tee 3, Gloo timeout 10 s. At step 1 rank 1 waits forever "
    "(simulated stuck data loader) instead of calling all_reduce. The other ranks time out "
    "after 10 s and exit with code 1; torchrun then SIGTERMs rank 1. The ChildFailedError "
    "'Root Cause (first observed failure)' names one of the ranks that timed out, not rank 1.",
    "Root cause is rank 1, which stopped participating (its output ends with 'waiting for the "
    "data loader' and it is only ended by torchrun's SIGTERM, exitcode -15). The ranks with "
    "'Timed out waiting 10000ms for recv/send operation' and exitcode 1 are victims even though "
    "torchrun lists one of them as 'Root Cause'. A correct diagnosis must not repeat torchrun's "
    "root cause here.",
    [("console.log", r"\[default1\]:worker rank=1 .*waiting for the data loader"),
     ("console.log", r"Timed out waiting 10000ms for (recv|send) operation"),
     ("console.log", r"Root Cause \(first observed failure\)")],
)
def _(run):
    run.torchrun(4, ["--tee=3"], ["--steps", "3", "--fault", "hang", "--fault-ranks", "1",
                                  "--fault-step", "1", "--timeout", "10"], limit=90)


@scenario(
    "torchrun-frozen-rank-sigkill-escalation",
    "torchrun, 4 workers: rank 2 freezes inside all_reduce and ignores SIGTERM; the agent SIGKILLs it",
    "collective_timeout_hung_rank", [2],
    "torchrun --nproc-per-node 4 --tee 3, Gloo timeout 10 s. At step 1 "
    "rank 2 enters all_reduce and then freezes (SIGSTOP, like a process stuck in the kernel or "
    "a driver call). The others time out; torchrun's SIGTERM cannot stop the frozen process, "
    "so after its 30 s shutdown timeout the agent escalates to SIGKILL ('Unable to shutdown "
    "process P via 15, forcefully exiting via 9': torch 2.13 prints the signal numbers).",
    "Root cause is rank 2, frozen inside the collective: its output ends after 'freezing "
    "myself', the agent's 'Unable to shutdown process P via 15, forcefully exiting via 9' names "
    "its pid, and the summary shows it with exitcode -9 (SIGKILL) although nobody OOM-killed "
    "it. The other ranks' recv/send timeouts (exitcode 1) are consequences, even though the "
    "summary's Root Cause names one of them.",
    [("console.log", r"Unable to shutdown process \d+ via \S+, forcefully exiting via"),
     ("console.log", r"Timed out waiting 10000ms for (recv|send) operation")],
)
def _(run):
    run.torchrun(4, ["--tee=3"],
                 ["--steps", "3", "--fault", "freeze", "--fault-ranks", "2", "--fault-step", "1",
                  "--timeout", "10"], limit=90)


@scenario(
    "gloo-mp-spawn-raised-exception",
    "torch.multiprocessing.spawn, 4 workers: worker 1 raises ValueError (ProcessRaisedException)",
    "user_code_exception", [1],
    "A script starts 4 Gloo workers with torch.multiprocessing.spawn. At step 1 worker 1 raises "
    "ValueError('loss is NaN ...'). spawn() re-raises it in the parent as "
    "torch.multiprocessing.spawn.ProcessRaisedException ('-- Process 1 terminated with the "
    "following error:'). Everything is in one console log.",
    "Root cause is worker (rank) 1: ValueError: loss is NaN at step 1, reported by the parent "
    "as ProcessRaisedException for process 1. Other workers' collective errors (connection "
    "closed / reset, or SIGTERM from spawn) are consequences.",
    [("console.log", r"ProcessRaisedException"),
     ("console.log", r"Process 1 terminated with the following error"),
     ("console.log", r"ValueError: loss is NaN")],
)
def _(run):
    run.single(["--nprocs", "4", "--fault", "raise", "--fault-rank", "1", "--timeout", "15"],
               script="spawn.py", limit=60)


@scenario(
    "gloo-mp-spawn-sigkill",
    "torch.multiprocessing.spawn, 4 workers: worker 3 is SIGKILLed (ProcessExitedException)",
    "peer_process_died", [3],
    "A script starts 4 Gloo workers with torch.multiprocessing.spawn. At step 1 worker 3 kills "
    "itself with SIGKILL (simulated OOM kill). spawn() raises ProcessExitedException "
    "('process 3 terminated with signal SIGKILL') in the parent.",
    "Root cause is worker (rank) 3 killed by SIGKILL (OOM killer or scheduler: check dmesg). "
    "Collective errors of the other workers, if printed, are consequences.",
    [("console.log", r"process 3 terminated with signal SIGKILL")],
)
def _(run):
    run.single(["--nprocs", "4", "--fault", "sigkill", "--fault-rank", "3", "--timeout", "15"],
               script="spawn.py", limit=60)


@scenario(
    "gloo-healthy-2ranks",
    "Healthy: 2 Gloo ranks run all_reduce, broadcast, all_gather and barrier, then exit cleanly",
    None, [],
    "Two ranks (env:// rendezvous on 127.0.0.1) run three steps of all_reduce, broadcast, "
    "all_gather and barrier, call destroy_process_group() and exit with code 0.",
    "Nothing failed: logdoc must report no error-severity diagnosis.",
    [("rank0.log", r"finished cleanly"), ("rank1.log", r"finished cleanly")],
    healthy=True,
)
def _(run):
    run.ranks(2, ["--steps", "3", "--healthy-mix", "--timeout", "20"], limit=60)


@scenario(
    "torchrun-healthy-8ranks",
    "Healthy: torchrun --tee 3 with 8 Gloo workers, a few collectives, clean exit",
    None, [],
    "torchrun --nproc-per-node 8 --tee 3 runs three steps of all_reduce, broadcast, all_gather "
    "and barrier on 8 Gloo workers; all exit with code 0 and the agent finishes normally.",
    "Nothing failed: logdoc must report no error-severity diagnosis (the OMP_NUM_THREADS "
    "banner is a warning, not a problem).",
    [("console.log", r"\[default7\]:worker rank=7 .*finished cleanly")],
    healthy=True,
)
def _(run):
    run.torchrun(8, ["--tee=3"], ["--steps", "3", "--healthy-mix", "--timeout", "30"], limit=100)



@scenario(
    "gloo-straggler-rank-slows-down",
    "Rank 2 of 4 gets slower every step (2 s, 6 s, 12 s) until the 10 s timeout is exceeded",
    "straggler_slow_rank", [2],
    "Four Gloo ranks with a 10 s process-group timeout. Rank 2's data loading slows down step "
    "after step (simulated slow disk: 2 s, 6 s, then 12 s). Steps 0 and 1 still complete, the "
    "other ranks just wait for it; at step 2 they give up after 10 s. Rank 2 is not hung: it "
    "reaches the all_reduce late and then fails because its peers are gone.",
    "Root cause is rank 2, a straggler: its own log shows the growing data-loading times and "
    "its collective error comes ~2 s after the others' 'Timed out waiting 10000ms for recv/send "
    "operation to complete'. It is a slow rank, not a dead or hung one (it kept making "
    "progress); the fix is on rank 2's input pipeline/host, or a longer timeout.",
    [("rank2.log", r"data loading took 12 s"),
     ("rank[013].log", r"Timed out waiting 10000ms for (recv|send) operation")],
)
def _(run):
    run.ranks(4, ["--steps", "3", "--fault", "slow", "--fault-ranks", "2",
                  "--slow-seconds", "2,6,12", "--timeout", "10"], limit=75, grace=3)


@scenario(
    "gloo-timeout-misconfigured-50ms",
    "A process group created with timeout=timedelta(milliseconds=50): ordinary jitter fails it",
    "timeout_misconfigured", [0, 1, 2, 3],
    "Four Gloo ranks; init_process_group uses a sane timeout, but the data-parallel group is "
    "created with dist.new_group(timeout=timedelta(milliseconds=50)) (a unit mistake: 50 s was "
    "meant). Ranks differ by 50 ms per rank in batch preparation, normal jitter, so the first "
    "all_reduce on that group already times out.",
    "Root cause is the misconfigured timeout: 'Timed out waiting 50ms for recv operation to "
    "complete' in the very first collective of the group, with no dead, hung or slow rank "
    "(a 50-150 ms skew is normal). The 'Connection closed by peer' errors are the pair "
    "closures that the timeout causes. Fix: a realistic timeout (Gloo default 30 min). All "
    "ranks share the configuration, so origin_ranks lists all of them.",
    [("rank*.log", r"Timed out waiting 50ms for (recv|send) operation to complete")],
)
def _(run):
    run.ranks(4, ["--steps", "3", "--group-timeout-ms", "50", "--jitter", "0.05",
                  "--numel", "65536", "--timeout", "20"], limit=45, grace=3)



@scenario(
    "torchrun-worker-segfault",
    "torchrun, 4 workers: rank 3 crashes with SIGSEGV in native code (exitcode -11)",
    "peer_process_died", [3],
    "torchrun --nproc-per-node 4 --tee 3. At step 1 rank 3 calls into native code that "
    "dereferences a NULL pointer (simulated with ctypes). Without faulthandler nothing is "
    "printed by the crashing process; torchrun reports exitcode -11 (SIGSEGV) and stops the "
    "others.",
    "Root cause is rank 3, killed by SIGSEGV (exitcode -11, 'Signal 11 (SIGSEGV) received by "
    "PID ...'): a crash in native code (an extension, a driver library). Its output simply "
    "ends. The other ranks' 'Connection closed by peer' and SIGTERM (-15) are consequences. "
    "Rerun with PYTHONFAULTHANDLER=1 or under gdb to see where it crashed.",
    [("console.log", r"exitcode\s+: -11"),
     ("console.log", r"\[default3\]:worker rank=3 .*dereferences NULL")],
)
def _(run):
    run.torchrun(4, ["--tee=3"], ["--steps", "3", "--fault", "segfault", "--fault-ranks", "3",
                                  "--fault-step", "1", "--timeout", "15"], limit=90)


# --------------------------------------------------------------------------------------------
# sample.yaml, README


def yq(s):
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(s, ensure_ascii=False)


def write_sample_yaml(sc, run, date):
    origin = sc["origin_ranks"]
    if callable(origin):
        origin = origin(os.path.join(HERE, sc["name"]))
    lines = [
        f"title: {yq(sc['title'])}",
        "description: >-",
    ]
    desc = sc["description"]
    if run.commands:
        desc += " Command(s): " + " ; ".join(run.commands)
    lines += ["  " + l for l in _wrap(desc)]
    lines += [
        "origin: real-run",
        "produced:",
        f"  how: {yq('python samples/generate.py ' + sc['name'])}",
        f"  torch: {yq(TORCH_VERSION)}",
        "  nccl: null",
        f"  date: {yq(date)}",
        "expect:",
        f"  healthy: {'true' if sc['healthy'] else 'false'}",
        f"  category: {sc['category'] if sc['category'] else 'null'}",
        "  rule: null",
        f"  origin_ranks: [{', '.join(str(r) for r in origin)}]",
        "notes: >-",
    ]
    lines += ["  " + l for l in _wrap(sc["notes"])]
    with open(os.path.join(HERE, sc["name"], "sample.yaml"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _wrap(text, width=96):
    out, cur = [], ""
    for w in text.split():
        if cur and len(cur) + 1 + len(w) > width:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        out.append(cur)
    return out


def _load_yaml(path):
    try:
        import yaml
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f) or {}
    except ImportError:  # minimal fallback: top-level 'title:' and 'origin:' only
        data = {}
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^(title|origin):\s*(.*)$", line)
                if m:
                    v = m.group(2).strip()
                    data[m.group(1)] = json.loads(v) if v.startswith('"') else v
        return data


def write_readme():
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "*", "sample.yaml"))):
        name = os.path.basename(os.path.dirname(path))
        d = _load_yaml(path)
        exp = d.get("expect") or {}
        what = str(d.get("title", "")).replace("|", "\\|")
        cat = exp.get("category") or ("healthy" if exp.get("healthy") else "")
        rows.append(f"| `{name}` | {d.get('origin', '')} | {cat} | {what} |")
    text = [
        "# Samples",
        "",
        "Each folder holds the logs of one job exactly as they were produced, and `sample.yaml`",
        "(schema in `docs/architecture.md`, section Samples). `real-run` samples come from",
        "`python samples/generate.py NAME` (torch CPU wheel, Gloo on 127.0.0.1); the helper",
        "scripts it runs are in `_workers/`. This file is rewritten by `generate.py` from the",
        "`sample.yaml` files; do not edit it by hand.",
        "",
        "| folder | origin | expected category | what happens |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    with open(os.path.join(HERE, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(text))


# --------------------------------------------------------------------------------------------
# driver


def check_signatures(sc):
    problems = []
    base = os.path.join(HERE, sc["name"])
    for pattern, rx in sc["signatures"]:
        files = sorted(glob.glob(os.path.join(base, pattern), recursive=True))
        files = [f for f in files if os.path.isfile(f)]
        if not files:
            problems.append(f"no file matches {pattern}")
            continue
        r = re.compile(rx)
        hit = False
        for fpath in files:
            with open(fpath, encoding="utf-8", errors="replace") as f:
                if any(r.search(line) for line in f):
                    hit = True
                    break
        if not hit:
            problems.append(f"{pattern}: no line matches /{rx}/")
    return problems


def prepare_run_dir():
    if os.path.isdir(RUN_DIR):
        shutil.rmtree(RUN_DIR)
    os.makedirs(RUN_DIR)
    shutil.copytree(os.path.join(HERE, WORKERS), os.path.join(RUN_DIR, WORKERS),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def run_scenario(sc, date):
    out = os.path.join(HERE, sc["name"])
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    prepare_run_dir()
    run = Run(sc["name"], out)
    t0 = time.monotonic()
    try:
        sc["run"](run)
    finally:
        run.cleanup()
    took = time.monotonic() - t0
    write_sample_yaml(sc, run, date)
    problems = check_signatures(sc)
    return took, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--readme", action="store_true", help="only rewrite samples/README.md")
    args = ap.parse_args(argv)
    if args.list:
        for name, sc in SCENARIOS.items():
            print(f"{name:45s} {sc['title']}")
        return 0
    if args.readme:
        write_readme()
        return 0
    unknown = [n for n in args.scenarios if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)} (see --list)")
    names = args.scenarios or list(SCENARIOS)
    try:
        import torch
        if not torch.__version__.startswith(TORCH_VERSION):
            print(f"warning: torch {torch.__version__} is installed, the samples are recorded as "
                  f"{TORCH_VERSION}", file=sys.stderr)
    except ImportError:
        print("error: torch is not installed (pip install torch==2.13.0)", file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(RUN_DIR), exist_ok=True)
    lock = open(RUN_DIR + ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    _become_subreaper()

    def _on_signal(signum, _frame):  # make `finally` blocks (process cleanup) run
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    date = datetime.date.today().isoformat()
    failed = []
    t_all = time.monotonic()
    try:
        for name in names:
            print(f"== {name}", flush=True)
            took, problems = run_scenario(SCENARIOS[name], date)
            status = "ok" if not problems else "SIGNATURE MISSING"
            print(f"   {status} ({took:.1f}s)", flush=True)
            for p in problems:
                print(f"   - {p}", flush=True)
            if problems:
                failed.append(name)
    finally:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
        write_readme()
    print(f"== {len(names)} scenario(s) in {time.monotonic() - t_all:.0f}s; "
          f"{len(failed)} without their signature{': ' + ', '.join(failed) if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
