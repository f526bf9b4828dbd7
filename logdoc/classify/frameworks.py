"""Other frameworks' and launchers' own words for a process of the job that is gone, read where no NCCL or
PyTorch header reads them.

The same NCCL failures reach users through JAX, Horovod and MPI launchers as well as PyTorch; their NCCL and
Python exception lines are read by the usual readers, but the lines that say *a peer is gone* are their own. JAX's
coordination service ends every surviving task with ``Terminating process because the JAX distributed service
detected fatal errors. This most likely indicates that another task died; ...`` (xla/pjrt/distributed/client.cc,
glog level F), often with ``The following tasks are unhealthy (stopped sending heartbeats):`` and the tasks'
names (``/job:jax_worker/replica:0/task:1``). Open MPI's launcher (ORTE before 5.0, PRRTE from 5.0) says ``ORTE has
lost communication with a remote daemon.`` (``PRTE has lost ...``) in its help text when the daemon of another node
stops answering: the node died, or the network to it failed; and ``MPI_ABORT was invoked on rank 3 in communicator
MPI_COMM_WORLD with errorcode 1.`` when a rank aborted the whole job (``aborted_rank``, ``errorcode``). When a
process returns a non-zero exit code, the launcher (orte/mca/errmgr/default_hnp/errmgr_default_hnp.c and its help
text; PRRTE's the same) ends the job with ``Primary job terminated normally, but 1 process returned`` / ``a non-zero
exit code. Per user-direction, the job has been aborted.`` (``Child job 2 ...`` for a spawned job) and ``mpirun
detected that one or more processes exited with non-zero status, thus causing`` / ``the job to be terminated. The
first process to do so was:`` / ``Process name: [[17468,1],3]`` / ``Exit code: 1`` (``mpiexec``, ``prterun`` by the
name it was run as): the first two lines become ``nonzero_exit`` with ``tool`` (who printed it) or ``count`` (how
many processes), the process's name ``exited_rank`` (the last number of ``[[jobid,step],rank]``: its rank in
MPI_COMM_WORLD) with ``mpi_job``.

A task that cannot reach the coordination service at all says so in gRPC's words, through the coordination
agent's log (``Coordination agent is set to be in error state: UNAVAILABLE: DNS resolution failed for
node-0:8476: ...``, TensorFlow's and XLA's coordination_service_agent.cc) or the exception JAX raises: that line
becomes ``framework.coordination_error`` with ``status`` (the gRPC status name) and ``error`` (its text). So does a
status line in the service's own words, wherever it is printed (xla/tsl/distributed_runtime/coordination/
coordination_service.cc): ``DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. ...``,
``UNAVAILABLE: Task /job:jax_worker/replica:0/task:1 heartbeat timeout. ...``, ``UNAVAILABLE: The following tasks are
unhealthy (stopped sending heartbeats):``, ``INTERNAL: Shutdown barrier has failed.``, ``Failed to send RPC to
coordination service. ...`` (coordination_service_error_util.cc: gRPC could not reach the leader); ``task`` is the
first task a heartbeat line names. A status alone on its line in gRPC core's own words (``DEADLINE_EXCEEDED: Deadline
Exceeded``, ``UNAVAILABLE: Socket closed``) names no service: ``framework.grpc_status`` with ``status`` and ``error``, at
the level of a warning (any gRPC client may print one). The service's log of why it stopped (``Stopping coordination
service as cluster registration failed. ...``, ``... as the following tasks are unhealthy (stopped sending heartbeats):``, ``... as
shutdown barrier timed out. ...``) and ``Shutdown barrier in coordination service has failed:`` carry ``stopped``
(what failed) instead of a status; a registration failure also ``timeout`` (``the timeout is currently set to: 1h``).
The call a status came back from is on a line of its own: ``RPC: /tensorflow.CoordinationService/RegisterTask``
after a trimmed status (coordination_service_error_util.cc), ``Additional GRPC error information from remote target
coordination_service while calling /tensorflow.CoordinationService/RegisterTask:`` before this trimming: that line
becomes ``framework.coordination_rpc`` with ``rpc`` (``RegisterTask``, ``Heartbeat``, ``PollForError``, ``Barrier``,
``ShutdownTask``, ``WatchJobState``), context for the status before it.

vLLM's executors watch their worker processes and say when one is gone: the V1 multiprocessing executor ``Worker
proc VllmWorker-0 died unexpectedly, shutting down executor.`` (vllm/v1/executor/multiproc_executor.py), its Ray
executor ``RayWorkerProc rank=[3] died unexpectedly, shutting down executor.``, the V0 multiprocessing workers ``Worker
VllmWorkerProcess pid 4242 died, exit code: -9`` (vllm/executor/multiproc_worker_utils.py): ``framework`` ``vllm``,
``task`` (the process's name or ranks), ``exited_rank`` where it is one number, ``exitcode`` (negative: the signal
that ended it, Python's ``Process.exitcode``) and ``signal`` (its name).

SGLang's launcher process is told by a failed child (a scheduler per GPU, the detokenizer) with SIGQUIT and says
``Received sigquit from a child process. It usually means the child failed.`` (sglang/srt/entrypoints/engine.py)
before it kills the process tree: ``framework`` ``sglang``.

vLLM's shared-memory message queue (vllm/distributed/device_communicators/shm_broadcast.py), which carries each step's
work from the executor to its workers on one node, says when one side waited a whole interval for the other:
``No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are
hanging or doing some time-consuming work (e.g. compilation).`` (earlier releases ``... found in 60 second.``, and a
reader's ``... foundin 60 second.``): ``framework.stalled`` with ``framework`` ``vllm`` and ``seconds``. Horovod's stall
inspector (horovod/common/stall_inspector.cc; operations.cc before 0.19) says the same of a collective that only some
ranks have submitted: ``One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and
are waiting for remainder of ranks for more than 60 seconds. ...``, the missing ranks on the lines after it:
``framework.stalled`` with ``framework`` ``horovod`` and ``seconds``; the report's rank lines (logdoc/blocks.py joins
them to it: ``Missing ranks:`` then ``2: [allreduce.grad_0, ...]``, ``3!: [...]`` past the shutdown time; before 0.16.2
``<tensor> [missing ranks: 2, 3]``) give ``missing_ranks``, the ranks that have not submitted the tensors the others
did, and ``shutdown_ranks``, those marked ``!``.

The frameworks' start-up checks of the machine say what they found: vLLM's ``Custom allreduce is disabled because your
platform lacks GPU P2P capability or P2P test failed.`` (vllm/distributed/device_communicators/custom_all_reduce.py:
a pair of GPUs without working peer access), Accelerate's ``Detected kernel version 5.4.0, which is below the
recommended minimum of 5.5.0; this can cause the process to hang.`` (accelerate/utils/other.py): ``framework.check``
with ``framework``, ``check`` (``p2p``, ``kernel``) and, for the kernel, ``value`` and ``required``.

PaddlePaddle's launcher (``python -m paddle.distributed.launch``; paddle/distributed/launch/controllers/controller.py and
job/container.py) logs ``Container failed !!!`` when a worker process of its pod ends with a non-zero code, then the
worker on its own line: ``Container rank 0 status failed cmd ['/usr/bin/python', '-u', 'train.py'] code -6 log
log/workerlog.0`` (``env {...}`` after it with FLAGS_print_launcher_env): ``framework`` ``paddle``, ``exited_rank``,
``exitcode`` (negative: the signal that ended it, Python's ``Popen.returncode``) and ``signal``.

Text Generation Inference's launcher (launcher/src/main.rs, a Rust ``tracing`` log whose span adds `` rank=N``) says when
a shard process is gone: ``Shard process was signaled to shutdown with signal 9 rank=1`` (after ``Shard complete standard
error output:`` and the shard's stderr), then ``Shard 1 crashed`` (or ``Shard 1 failed to start`` before it was ready):
``framework`` ``tgi``, ``exited_rank`` and, for the first, ``signal`` (its name); the others ``task`` (``crashed`` or
``failed to start``).

Horovod fails every collective enqueued after its background loop stopped with ``Horovod has been shut down. This was
caused by an exception on one of the ranks ...`` (its SHUT_DOWN_ERROR): ``framework`` ``horovod``.

TensorFlow's MultiWorkerMirroredStrategy checks its peers in the background and, after its retries, logs ``Cluster check
alive failed, /job:worker/replica:0/task:1 is down, aborting collectives: Deadline Exceeded``: ``framework``
``tensorflow`` and ``task``.

TensorFlow's collective executor aborts every collective of a worker when one of them failed and logs the status
(tensorflow/core/common_runtime/base_collective_executor.cc): ``BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED:
Deadline Exceeded`` (absl's status names from 2.11; ``Unavailable: Socket closed`` before), after the ring algorithm's own
``Aborting RingReduce with Unavailable: Socket closed`` (ring_alg.cc; RingGather alike): ``framework.collective_abort``
with ``framework`` ``tensorflow``, ``status`` (the gRPC status name, upper case) and ``error``. The abort that ends a
dataset (``Out of range: End of sequence``) or follows another abort (``Cancelled``) is no failure and is not read. The
remote worker a gRPC status came from is named on the next line (``Additional GRPC error information from remote target
/job:worker/replica:0/task:0:``): ``framework.grpc_remote`` with ``task``, context for the status before it.

Each lost peer becomes ``framework.peer_lost`` with ``framework`` (``jax``, ``open-mpi``, ``tensorflow``, ``horovod``) and, where the
line names it, ``task`` (the first task named unhealthy, the worker found down). What it means is the knowledge base's (knowledge/processes.yaml);
this module only finds it.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re
from .cut import strip_mark
from .torch.common import SIGNALS

_JAX = lazy_re(r"JAX distributed service detected fatal errors\.?(?:[^\n]{0,400}?(?:unhealthy|heartbeats?)[^\n]{0,80}?:"
               r"\s{0,4}(?P<task>/job:[\w/:-]{1,100}))?")
_COORDINATION = lazy_re(r"\b(?P<status>UNAVAILABLE|DEADLINE_EXCEEDED|INTERNAL|ABORTED|NOT_FOUND|FAILED_PRECONDITION|UNKNOWN): "
                        r"(?P<text>\S[^\n]{0,400})")
# the coordination service's own texts after a status (xla/tsl/distributed_runtime/coordination/coordination_service.cc,
# coordination_service_error_util.cc), wherever they are printed
_COORD_TEXT = lazy_re(r"\b(?P<status>UNAVAILABLE|DEADLINE_EXCEEDED|INTERNAL|ABORTED|FAILED_PRECONDITION|CANCELLED): "
                      r"(?P<text>(?:Barrier timed out\.|Task (?P<task>/job:[\w/:-]{1,100}) heartbeat timeout\b|"
                      r"The following tasks are unhealthy \(stopped sending heartbeats\)|Shutdown barrier has failed\b|"
                      r"Barrier failed because service is shutting down\b|Cluster registration failed with error\b|"
                      r"Leader incarnation ID mismatch\b|Failed to send RPC to coordination service\b)[^\n]{0,400})")
_COORD_STOPPED = lazy_re(r"\b(?:Stopping coordination service as (?P<why>cluster registration failed|the following tasks are "
                         r"unhealthy|shutdown barrier timed out|there is no service-to-client connection)|"
                         r"(?P<barrier>Shutdown barrier in coordination service has failed))"
                         r"(?:[^\n]{0,400}?the timeout is currently set to: (?P<timeout>[\w.]{1,20}?)\.?(?:\s|$))?")
_COORD_RPC = lazy_re(r"^(?:RPC: |Additional GRPC error information from remote target \S{1,200} while calling )"
                     r"/tensorflow\.CoordinationService/(?P<rpc>\w{1,40})")
_TASK = lazy_re(r"(?m)^\s{0,8}(?P<task>/job:[\w/:-]{1,100})\s*$")
# a gRPC status alone on its line, in gRPC core's own words (absl::Status's `CODE: message`, as the C++ clients of XLA's /
# TensorFlow's coordination service print a failed call): the deadline timer's `Deadline Exceeded`
# (deadline_filter.cc) and the transport's words for a channel that broke or never came up (chttp2)
_GRPC_ALONE = lazy_re(r"^(?P<status>DEADLINE_EXCEEDED): (?P<text>Deadline Exceeded)\.?\s*$|^(?P<status2>UNAVAILABLE): "
                      r"(?P<text2>(?:(?:recvmsg|sendmsg|writev|readv):)?(?:Socket closed|Connection reset by peer|Broken pipe|"
                      r"GOAWAY received|keepalive watchdog timeout|Network closed for unknown reason|Connection refused|"
                      r"failed to connect to all addresses))\.?\s*$")
# (a viewer's cut inside `with errorcode N` loses only the code: `... MPI_COMM_WORLD with errorc`)
_MPI_ABORT = lazy_re(r"MPI_ABORT was invoked on rank (?P<rank>\d{1,7}) in communicator (?P<comm>\S{1,80}?)"
                     r"(?:\s{1,4}with errorcode (?P<code>-?\d{1,10})\.?|\s{1,4}w(?:i(?:t(?:h(?: (?:e[a-z]{0,8})?)?)?)?)?)?\.?\s*$")
_NONZERO = lazy_re(r"^(?:(?P<tool>mpirun|mpiexec|orterun|prterun|prte|prun|shmemrun|oshrun) detected that one or more processes "
                   r"exited with non-zero status(?:,|$)|(?:Primary|Child) job\s+(?:\d{1,6} )?terminated normally, but "
                   r"(?P<count>\d{1,7}) process(?:es)? returned)")
_PROCESS_NAME = lazy_re(r"^Process name: \[\[(?P<job>\d{1,10},\d{1,6})\],(?P<rank>\d{1,7})\]$")
_MPI = lazy_re(r"\b(?P<who>ORTE|PRTE|PRRTE) has lost communication with a remote daemon\b")
# TensorFlow's MultiWorkerMirroredStrategy health check (tensorflow/python/distribute/collective_all_reduce_strategy.py,
# _check_health): after its retries (`<task> seems down, retrying 1/3`) it logs `Cluster check alive failed, <task> is
# down, aborting collectives: <error>` and aborts every collective of this worker
# Horovod's SHUT_DOWN_ERROR (horovod/common/common.h): every collective a rank enqueues after Horovod's background loop
# stopped (another rank's exception, or a rank that finished) fails with `Horovod has been shut down. This was caused by
# ...` (its 2018 releases: `... This has been caused by an exception on one of the rank ...`), after the framework's status
# (`OP_REQUIRES failed at mpi_ops.cc:422 : Aborted: `) or as an exception's message
_HOROVOD_SHUT = lazy_re(r"\bHorovod has been shut down\b")
# TensorFlow's collective executor aborting this worker's collectives (base_collective_executor.cc StartAbort: LOG(ERROR) << s;
# LOG(WARNING) in 1.x): Status::ToString's `Unavailable: ` before 2.11, absl's `UNAVAILABLE: ` after
# The collective's own algorithm logs the status it aborts with first (ring_alg.cc / ring_reducer.cc RingAlg::StartAbort:
# `LOG(ERROR) << "Aborting Ring" << name_ << " with " << s`: `Aborting RingReduce with Unavailable: Socket closed`,
# RingGather's alike), often the only line of the abort a paste keeps
_TF_ABORT = lazy_re(r"\b(?:BaseCollectiveExecutor::StartAbort|Aborting Ring[A-Z][a-z]{1,20} with) "
                    r"(?P<status>[A-Z][A-Za-z_]{1,24}(?: [a-z]{1,12}){0,2}): (?P<text>[^\n]{1,400})")
_TF_ABORT_BENIGN = ("OUT_OF_RANGE", "CANCELLED")  # a dataset's end; an abort after another abort
# gRPC's error detail as TensorFlow's distributed runtime appends it (grpc_util.h FromGrpcStatus): the remote target
_GRPC_REMOTE = lazy_re(r"^Additional GRPC error information from remote target (?P<task>/job:[\w/:-]{1,100}?):?\s*$")
_TF_DOWN = lazy_re(r"\bCluster check alive failed, (?P<task>/job:[\w/:-]{1,100}) is down, aborting collectives\b")
_VLLM = lazy_re(r"\bWorker proc (?P<proc>[\w.-]{1,64}) died unexpectedly, shutting down executor\b"
                r"|\bRayWorkerProc rank=\[?(?P<ranks>\d{1,7}(?:, ?\d{1,7}){0,63})\]? died unexpectedly, shutting down executor\b"
                r"|\bWorker (?P<proc0>[\w.-]{1,64}) pid (?P<pid>\d{1,10}) died, exit code: (?P<code>-?\d{1,4})\b")
_PADDLE = lazy_re(r"^Container rank (?P<rank>\d{1,7}) status failed cmd \[[^\n]{0,4000}?\] code (?P<code>-?\d{1,4}) log ")
_TGI = lazy_re(r"\bShard process was signaled to shutdown with signal (?P<sig>\d{1,3})\b(?:[^\n]{0,40}?\brank=(?P<rank>\d{1,7}))?"
               r"|\bShard (?P<rank2>\d{1,7}) (?P<what>crashed|failed to start)\b")
_VLLM_SHM = lazy_re(r"\bNo available shared memory broadcast block found ?in (?P<s>\d{1,6}) seconds?\b")
_HOROVOD_STALL = lazy_re(r"\bsubmitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
                         r"ranks for more than (?P<s>\d{1,7}) seconds\b")
_MISSING_RANK = lazy_re(r"(?m)^(?P<rank>\d{1,7})(?P<bang>!?): \[")
_MISSING_RANKS_OLD = lazy_re(r"\[missing ranks: ?(?P<ranks>\d{1,7}(?:, ?\d{1,7}){0,4095})\]")
_VLLM_P2P = lazy_re(r"\bCustom allreduce is disabled because your platform lacks GPU P2P capability\b")
_ACCELERATE_KERNEL = lazy_re(r"\bDetected kernel version (?P<v>\d{1,3}\.\d{1,4}\.\d{1,6}), which is below the recommended minimum of "
                             r"(?P<min>\d{1,3}\.\d{1,4}\.\d{1,6})")


def classify_framework(line: str) -> Parsed | None:
    """``framework.peer_lost`` for JAX's coordination service or Open MPI's launcher reporting a lost peer,
    ``framework.coordination_error`` for a coordination agent's gRPC failure, ``framework.stalled`` for vLLM's
    message queue or Horovod's coordinator waiting on a peer, ``framework.check`` for a start-up check of the machine
    that failed; None otherwise."""
    if "JAX distributed service" in line:
        m = _JAX.search(line, 0, min(len(line), 4096))
        if m is not None:
            f = {"framework": "jax"}
            if m["task"]:
                f["task"] = m["task"]
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if "oordination" in line or ": " in line:
        parsed = classify_coordination(line)
        if parsed is not None:
            return parsed
    if "MPI_ABORT was invoked" in line:
        m = _MPI_ABORT.search(line, 0, min(len(line), 1024))
        if m is None:
            cut, marked = strip_mark(line[:1024])
            m = _MPI_ABORT.search(cut) if marked else None
        if m is not None:
            f = {"framework": "open-mpi", "aborted_rank": int(m["rank"])}
            if m["code"]:
                f["errorcode"] = int(m["code"])
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if "non-zero" in line or "terminated normally, but" in line:
        m = _NONZERO.match(line)
        if m is not None:
            f = {"framework": "open-mpi", "nonzero_exit": True}
            f.update({"tool": m["tool"]} if m["tool"] else {"count": int(m["count"])})
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if line.startswith("Process name: [["):
        m = _PROCESS_NAME.match(line)
        if m is not None:
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost",
                          {"framework": "open-mpi", "exited_rank": int(m["rank"]), "mpi_job": m["job"]})
    if "sigquit from a child process" in line:
        return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", {"framework": "sglang"})
    if " died" in line:
        m = _VLLM.search(line, 0, min(len(line), 1024))
        if m is not None:
            f = {"framework": "vllm", "task": m["proc"] or m["proc0"] or f"rank {m['ranks']}"}
            if m["ranks"] and m["ranks"].isdigit():
                f["exited_rank"] = int(m["ranks"])
            if m["pid"]:
                f["pid"] = int(m["pid"])
            if m["code"]:
                code = int(m["code"])
                f["exitcode"] = code
                if code < 0 and -code in SIGNALS:
                    f["signal"] = SIGNALS[-code]
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if line.startswith("Container rank "):
        m = _PADDLE.match(line)
        if m is not None:
            code = int(m["code"])
            f = {"framework": "paddle", "exited_rank": int(m["rank"]), "exitcode": code}
            if code < 0 and -code in SIGNALS:
                f["signal"] = SIGNALS[-code]
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if "Shard " in line:
        m = _TGI.search(line, 0, min(len(line), 1024))
        if m is not None:
            f = {"framework": "tgi"}
            rank = m["rank"] or m["rank2"]
            if rank:
                f["exited_rank"] = int(rank)
            if m["sig"]:
                f["signal"] = SIGNALS.get(int(m["sig"]), f"signal {m['sig']}")
            else:
                f["task"] = m["what"]
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", f)
    if "broadcast block" in line:
        m = _VLLM_SHM.search(line, 0, min(len(line), 1024))
        if m is not None:
            return Parsed("framework.stalled", "WARN", "framework.stalled", {"framework": "vllm", "seconds": int(m["s"])})
    if "remainder of ranks" in line:
        m = _HOROVOD_STALL.search(line, 0, min(len(line), 2048))
        if m is not None:
            f = {"framework": "horovod", "seconds": int(m["s"])}
            if "\n" in line:
                f.update(_missing_ranks(line[m.end():]))
            return Parsed("framework.stalled", "WARN", "framework.stalled", f)
    if "Custom allreduce" in line:
        if _VLLM_P2P.search(line, 0, min(len(line), 1024)) is not None:
            return Parsed("framework.check", "WARN", "framework.check", {"framework": "vllm", "check": "p2p"})
    if "recommended minimum" in line:
        m = _ACCELERATE_KERNEL.search(line, 0, min(len(line), 1024))
        if m is not None:
            return Parsed("framework.check", "WARN", "framework.check",
                          {"framework": "accelerate", "check": "kernel", "value": m["v"], "required": m["min"]})
    if "has been shut down" in line:
        if _HOROVOD_SHUT.search(line, 0, min(len(line), 1024)) is not None:
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", {"framework": "horovod"})
    if "StartAbort" in line or "Aborting Ring" in line:
        m = _TF_ABORT.search(line, 0, min(len(line), 1024))
        if m is not None:
            status = m["status"].upper().replace(" ", "_")
            if status in _TF_ABORT_BENIGN:
                return None
            return Parsed("framework.collective_abort", "ERROR", "framework.collective_abort",
                          {"framework": "tensorflow", "status": status, "error": m["text"].strip()})
    if line.startswith("Additional GRPC error information from remote target /job:"):
        m = _GRPC_REMOTE.match(line[:400])
        if m is not None:
            return Parsed("framework.grpc_remote", "INFO", "framework.grpc_remote", {"framework": "tensorflow", "task": m["task"]})
    if "check alive failed" in line:
        m = _TF_DOWN.search(line, 0, min(len(line), 1024))
        if m is not None:
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", {"framework": "tensorflow", "task": m["task"]})
    if "remote daemon" in line:
        m = _MPI.search(line, 0, min(len(line), 1024))
        if m is not None:
            return Parsed("framework.peer_lost", "ERROR", "framework.peer_lost", {"framework": "open-mpi", "launcher": m["who"]})
    return None


def classify_coordination(text: str) -> Parsed | None:
    """``framework.coordination_error`` or ``framework.coordination_rpc`` for a line of JAX's / XLA's coordination
    service or agent (``text`` may go on with the record's further lines: the tasks a heartbeat report names)."""
    line = text.split("\n", 1)[0]
    m = _COORD_TEXT.search(line, 0, min(len(line), 4096))
    if m is not None:
        f = {"framework": "jax", "status": m["status"], "error": m["text"].strip()}
        task = m["task"] or (_TASK.search(text, m.end(), min(len(text), 4096)) if "\n" in text else None)
        if task:
            f["task"] = task if isinstance(task, str) else task["task"]
        return Parsed("framework.coordination_error", "ERROR", "framework.coordination_error", f)
    if line.lstrip().startswith(("DEADLINE_EXCEEDED: ", "UNAVAILABLE: ")):
        m = _GRPC_ALONE.match(line.strip())
        if m is not None:
            return Parsed("framework.grpc_status", "WARN", "framework.grpc_status",
                          {"status": m["status"] or m["status2"], "error": m["text"] or m["text2"]})
    if "oordination" not in line:
        return None
    if "CoordinationService/" in line:
        m = _COORD_RPC.match(line.lstrip())
        if m is not None:
            return Parsed("framework.coordination_rpc", "INFO", "framework.coordination_rpc", {"framework": "jax", "rpc": m["rpc"]})
    m = _COORD_STOPPED.search(line, 0, min(len(line), 4096))
    if m is not None:
        f = {"framework": "jax", "stopped": m["why"] or "shutdown barrier failed", "error": line[m.start():m.start() + 400].strip()}
        if m["timeout"]:
            f["timeout"] = m["timeout"]
        if m["why"] == "the following tasks are unhealthy" and "\n" in text:
            t = _TASK.search(text, 0, min(len(text), 4096))
            if t is not None:
                f["task"] = t["task"]
        return Parsed("framework.coordination_error", "ERROR", "framework.coordination_error", f)
    m = _COORDINATION.search(line, 0, min(len(line), 4096))
    if m is not None:
        return Parsed("framework.coordination_error", "ERROR", "framework.coordination_error",
                      {"framework": "jax", "status": m["status"], "error": m["text"].strip()})
    return None


def _missing_ranks(report: str) -> dict[str, list[int]]:
    """``missing_ranks`` and ``shutdown_ranks`` of a Horovod stall report's lines after its first."""
    missing: set[int] = set()
    shutdown: set[int] = set()
    for m in _MISSING_RANK.finditer(report):
        missing.add(int(m["rank"]))
        if m["bang"]:
            shutdown.add(int(m["rank"]))
    for m in _MISSING_RANKS_OLD.finditer(report):
        missing.update(int(r) for r in m["ranks"].split(","))
    f = {"missing_ranks": sorted(missing)} if missing else {}
    if shutdown:
        f["shutdown_ranks"] = sorted(shutdown)
    return f
