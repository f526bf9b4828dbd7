"""Other frameworks' and launchers' words for a process of the job that is gone (logdoc/classify/frameworks.py reads
them; knowledge/processes.yaml LD723-LD725 explain them)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.frameworks import classify_framework
from logdoc.pipeline import parse_sources

_JAX = ("F0926 17:26:32.075587  157988 client.h:77] Terminating process because the JAX distributed service detected"
        " fatal errors. This most likely indicates that another task died; see the other task logs for more details."
        " Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status:"
        " UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n/job:jax_worker/replica:0/task:3\n")
_ORTE = ("--------------------------------------------------------------------------\n"
         "ORTE has lost communication with a remote daemon.\n\n"
         "  HNP daemon   : [[16919,0],0] on node anode031\n  Remote daemon: [[16919,0],3] on node anode127\n\n"
         "This is usually due to either a failure of the TCP network\nconnection to the node, or possibly an internal"
         " failure of\nthe daemon itself. We cannot recover from this failure, and\ntherefore will terminate the job.\n")


def _ids(text: str) -> list[str]:
    return [d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]]


def test_framework_lines_are_read():
    p = classify_framework("Terminating process because the JAX distributed service detected fatal errors.")
    assert p is not None and p.kind == "framework.peer_lost" and p.fields == {"framework": "jax"}
    p = classify_framework("PRTE has lost communication with a remote daemon.")
    assert p is not None and p.fields == {"framework": "open-mpi", "launcher": "PRTE"}
    assert classify_framework("ORTE was unable to reliably start one or more daemons.") is None


@pytest.mark.parametrize("text, rule", [
    (_JAX, "LD723"),
    (_ORTE, "LD724"),
    ("[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an"
     " attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.\n", "LD725"),
])
def test_frameworks_name_a_lost_peer(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_the_exception_before_horovods_shutdown_leads():
    ids = _ids("[1,0]<stderr>:ValueError: shapes (3,) and (4,) not aligned\n"
               "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the"
               " ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished"
               " execution.\n")
    assert ids[0] == "LD710"


@pytest.mark.parametrize("text, rule", [
    ("E1204 10:00:00.000000 123 coordination_service_agent.cc:140] Coordination agent is set to be in error state:"
     " UNAVAILABLE: DNS resolution failed for node-0.svc:8476: C-ares status is not ARES_SUCCESS qtype=A name=node-0.svc"
     " is_balancer=0: Domain name not found\n", "LD623"),
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN:"
     " ipv4:10.0.0.1:1234: Failed to connect to remote host: Connection refused\n", "LD624"),
])
def test_coordination_service_failures(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule


def test_coordination_line_is_read():
    p = classify_framework("Coordination agent is set to be in error state: UNAVAILABLE: DNS resolution failed for a:1")
    assert p is not None and p.kind == "framework.coordination_error" and p.fields["status"] == "UNAVAILABLE"
    assert classify_framework("coordination service started on port 8476") is None


def test_mpi_abort_names_the_aborting_rank():
    text = ("--------------------------------------------------------------------------\n"
            "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n\n"
            "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n")
    d = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    assert d and d[0]["id"] == "LD726"
    p = classify_framework("MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1.")
    assert p is not None and p.fields == {"framework": "open-mpi", "aborted_rank": 3, "errorcode": 1}


def test_a_coordination_deadline_is_not_called_the_programs_error():
    ids = _ids("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n\nAdditional GRPC error"
               " information from remote target unknown_target_for_coordination_leader while calling"
               " /tensorflow.CoordinationService/RegisterTask:\n")
    assert ids and ids[0] == "LD625" and "LD710" not in ids


# JAX's / XLA's coordination service in its own words (xla/tsl/distributed_runtime/coordination/coordination_service.cc,
# coordination_service_agent.cc, coordination_service_error_util.cc)
_REGISTRATION = ("E0220 10:00:00.000000 1234 coordination_service.cc:1133] Stopping coordination service as cluster registration"
                 " failed. This may be due to 1) some tasks crashed earlier before connecting, 2) some tasks were never scheduled,"
                 " or 3) scheduling delays. Consider setting a longer initialization timeout if such delays are expected, the"
                 " timeout is currently set to: 1h.\n\nOriginal error: DEADLINE_EXCEEDED: Barrier timed out. Id:"
                 " [Init]Wait_for_all_tasks_to_register::0. This usually happens because a task triggered the barrier too early"
                 " or too slowly. Please look at the task logs (both timed out and first task) to debug further.\n")


@pytest.mark.parametrize("text, rule", [
    (_REGISTRATION, "LD685"),
    ("E0929 17:42:48.594192 1044529 coordination_service.cc:432] Stopping coordination service as the following tasks are"
     " unhealthy (stopped sending heartbeats):\n/job:jax_worker/replica:0/task:3\n", "LD686"),
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. This"
     " indicates that the remote task has failed, got preempted, or crashed unexpectedly.\n", "LD686"),
    ("E0101 00:00:00.000000 1 coordination_service.cc:1200] Shutdown barrier in coordination service has failed:\n"
     "DEADLINE_EXCEEDED: Barrier timed out. Id: Shutdown::0. This usually happens because a task triggered the barrier"
     " too early or too slowly.\n", "LD687"),
    ("2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination service agent in error"
     " status: DEADLINE_EXCEEDED: Deadline Exceeded\nAdditional GRPC error information from remote target"
     " unknown_target_for_coordination_leader while calling /tensorflow.CoordinationService/RegisterTask:\n", "LD625"),
    ("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n"
     "RPC: /tensorflow.CoordinationService/RegisterTask\n", "LD625"),
])
def test_coordination_service_in_its_own_words(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule


def test_registration_failure_is_one_card():
    # the service's line and the barrier error it carries are one failure: LD622 stands back for LD685
    ids = _ids(_REGISTRATION)
    assert ids == ["LD685"]


def test_coordination_status_lines_are_read():
    p = classify_framework("DEADLINE_EXCEEDED: Barrier timed out. Id: Shutdown::0. This usually happens because ...")
    assert p is not None and p.kind == "framework.coordination_error" and p.fields["status"] == "DEADLINE_EXCEEDED"
    p = classify_framework("UNAVAILABLE: Task /job:jax_worker/replica:0/task:1 heartbeat timeout. This indicates ...")
    assert p is not None and p.fields["task"] == "/job:jax_worker/replica:0/task:1"
    p = classify_framework("RPC: /tensorflow.CoordinationService/PollForError [type.googleapis.com/tensorflow.CoordinationServiceError='']")
    assert p is not None and p.kind == "framework.coordination_rpc" and p.fields == {"framework": "jax", "rpc": "PollForError"}
    p = classify_framework(_REGISTRATION.split("\n")[0])
    assert p is not None and p.fields["stopped"] == "cluster registration failed" and p.fields["timeout"] == "1h"
    p = classify_framework("DEADLINE_EXCEEDED: Deadline Exceeded")  # gRPC's own words: any service's, no coordination_error
    assert p is not None and p.kind == "framework.grpc_status" and p.level == "WARN"


def test_a_clean_shutdown_of_the_coordination_client_is_no_failure():
    # JAX's client cancels its WatchJobState call when it shuts down normally (pjrt_client.cc logs it at WARNING)
    text = ("W0826 01:39:27.598081 2064395 pjrt_client.cc:1604] WatchJobStateAsync failed for task 0: CANCELLED: CANCELLED\n"
            "Additional GRPC error information from remote target coordination_service while calling"
            " /tensorflow.CoordinationService/WatchJobState:\n"
            ":UNKNOWN:Error received from peer  {grpc_status:1, grpc_message:\"CANCELLED\"}\n")
    assert _ids(text) == []


def test_an_unreachable_coordinator_is_read_and_the_clients_retrying_watch_is_not():
    # gRPC found no address that answered, neither refused nor unresolved: LD689
    assert _ids("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses\n")[:1] == ["LD689"]
    # JAX's client warns and retries its job-state watch when process 0's service goes away at the end of a run
    # (xla/python/pjrt_ifrt/pjrt_client.cc: LOG(WARNING) << "WatchJobStateAsync failed for task ..."; continue)
    for reason in ("Connection refused", "No route to host"):
        text = ("W0826 01:43:18.920461 2065781 pjrt_client.cc:1604] WatchJobStateAsync failed for task 0: UNAVAILABLE: failed"
                f" to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.1:2200: Failed to connect to remote host: {reason}\n")
        assert _ids(text) == []


def test_a_failed_registration_named_only_by_its_rpc_line():
    # a paste that starts at the trimmed status: the RPC line is only ever appended to a failed call
    assert _ids("DEADLINE_EXCEEDED: Deadline Exceeded\nRPC: /tensorflow.CoordinationService/RegisterTask\n")[:1] == ["LD694"]
    assert _ids("RPC: /tensorflow.CoordinationService/PollForError [type.googleapis.com/tensorflow.CoordinationServiceError='']\n") == []


@pytest.mark.parametrize("line", ["DEADLINE_EXCEEDED: Deadline Exceeded", "UNAVAILABLE: Socket closed",
                                  "UNAVAILABLE: recvmsg:Connection reset by peer", "UNAVAILABLE: GOAWAY received"])
def test_a_grpc_status_alone_is_read_as_a_hedged_warning(line):
    # a status pasted alone: gRPC's words, no service named; a warning card that says what to look for
    rep = build_report(parse_sources([("x.log", line + "\n")]), kb.load_rules())
    assert [(d["id"], d["severity"]) for d in rep["diagnoses"]] == [
        ("LD6000" if line.startswith("DEADLINE") else "LD6001", "warning")]


@pytest.mark.parametrize("line", ["version 470.82.01 was detected and compatibility mode is UNAVAILABLE.",
                                  "UNAVAILABLE: The service is temporarily unavailable, try again later",
                                  "Status: UNAVAILABLE: Socket closed", "rpc error: code = Unavailable desc = closing",
                                  "DEADLINE_EXCEEDED: Deadline Exceeded while waiting for the model server"])
def test_a_status_in_other_words_is_no_grpc_status(line):
    assert classify_framework(line) is None or classify_framework(line).kind != "framework.grpc_status"
    evs = parse_sources([("x.log", line + "\n")]).events
    assert not [e for e in evs if e.kind == "framework.grpc_status"]


def test_a_status_an_exception_carries_is_the_exceptions():
    # JAX's exception quoting the status is read whole (LD689); the status is no event of its own
    text = "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses\n"
    evs = parse_sources([("x.log", text)]).events
    assert not [e for e in evs if e.kind == "framework.grpc_status"]
    assert _ids(text)[0] == "LD689"


# PaddlePaddle's launcher (paddle/distributed/launch/job/container.py: Container.__str__ after controller.py's
# `Container failed !!!`)
_PADDLE_POD = ("LAUNCH INFO 2024-05-14 10:11:20,104 Pod failed\n"
               "LAUNCH ERROR 2024-05-14 10:11:20,105 Container failed !!!\n"
               "Container rank {rank} status failed cmd ['/usr/bin/python3', '-u', 'train.py'] code {code} log log/workerlog.{rank}\n"
               "LAUNCH INFO 2024-05-14 10:11:20,105 ------------------------- ERROR LOG DETAIL -------------------------\n")


def test_paddles_launcher_line_is_read():
    p = classify_framework("Container rank 2 status failed cmd ['/usr/bin/python3', '-u', 'train.py'] code -6 log log/workerlog.2")
    assert p is not None and p.kind == "framework.peer_lost"
    assert p.fields == {"framework": "paddle", "exited_rank": 2, "exitcode": -6, "signal": "SIGABRT"}
    assert classify_framework("Container rank 2 status running cmd ['/usr/bin/python3', 'train.py'] code 0 log x") is None


@pytest.mark.parametrize("code, rule", [(1, "LD7051"), (-9, "LD7052")])
def test_paddles_launcher_names_the_failed_worker(code, rule):
    assert _ids(_PADDLE_POD.format(rank=3, code=code))[:1] == [rule]


def test_the_workers_own_error_leads_paddles_launcher_line():
    ids = _ids("ValueError: shapes (3,) and (4,) not aligned\n" + _PADDLE_POD.format(rank=0, code=1))
    assert ids[0] == "LD710"


def test_an_uncaught_cxx_exception_carrying_nccls_cuda_error_string_is_that_error():
    # Paddle 1.x's PADDLE_ENFORCE of an NCCL call: the exception's what() is ncclGetErrorString's text and a location
    text = ("terminate called after throwing an instance of 'paddle::platform::EnforceNotMet'\n"
            "  what():  unhandled cuda error at [/paddle/paddle/fluid/platform/nccl_helper.h:70]\n"
            "PaddlePaddle Call Stacks:\n")
    assert _ids(text)[0] == "LD815"


# Text Generation Inference's launcher (launcher/src/main.rs: shard_manager's tracing lines, the span's ` rank=N`)
def test_tgis_launcher_lines_are_read():
    p = classify_framework("Shard process was signaled to shutdown with signal 9 rank=3")
    assert p is not None and p.fields == {"framework": "tgi", "exited_rank": 3, "signal": "SIGKILL"}
    p = classify_framework("Shard 2 failed to start")
    assert p is not None and p.fields == {"framework": "tgi", "exited_rank": 2, "task": "failed to start"}
    assert classify_framework("Shard 2 ready in 12.5s") is None


@pytest.mark.parametrize("text, rule", [
    ("2024-10-01T07:43:22.342900Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown"
     " with signal 6 rank=0\n2024-10-01T07:43:22.392453Z ERROR text_generation_launcher: Shard 0 crashed\n", "LD7053"),
    ("2024-08-11T09:36:32.029976Z ERROR text_generation_launcher: Shard 1 failed to start\n"
     "2024-08-11T09:36:32.030017Z  INFO text_generation_launcher: Shutting down shards\n", "LD7054"),
])
def test_tgis_launcher_names_the_lost_shard(text, rule):
    ids = _ids(text)
    other = "LD7054" if rule == "LD7053" else "LD7053"
    assert ids[:1] == [rule] and other not in ids  # (a shard killed by a signal is one card, not also a crash)


def test_tensorflow_health_check_names_the_worker_it_found_down():
    # tensorflow/recommenders#274: MultiWorkerMirroredStrategy's _check_health (collective_all_reduce_strategy.py)
    # after its retries; the retry warning itself is not a failure
    p = classify_framework("Cluster check alive failed, /job:worker/replica:0/task:1 is down, aborting collectives: "
                           "Deadline Exceeded")
    assert p is not None and p.kind == "framework.peer_lost"
    assert p.fields == {"framework": "tensorflow", "task": "/job:worker/replica:0/task:1"}
    assert classify_framework("/job:worker/replica:0/task:1 seems down, retrying 1/3") is None


def test_horovods_shutdown_outside_an_exception_is_read():
    # horovod/horovod#410 (TensorFlow's status line for Horovod's SHUT_DOWN_ERROR), horovod/horovod#243 (2018:
    # `This has been caused ...`): the exception form was LD725's already; these lines were silent
    line = ("2018-07-30 06:41:52.525932: W tensorflow/core/framework/op_kernel.cc:1318] OP_REQUIRES failed at "
            "mpi_ops.cc:422 : Aborted: Horovod has been shut down. This was caused by an exception on one of the ranks "
            "or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.")
    p = classify_framework("OP_REQUIRES failed at mpi_ops.cc:422 : Aborted: Horovod has been shut down. This was caused")
    assert p is not None and p.fields == {"framework": "horovod"}
    rules = kb.load_rules()
    for text in (line, "AbortedError (see above for traceback): Horovod has been shut down. This has been ca"):
        ds = build_report(parse_sources([("r.log", text + "\n")]), rules)["diagnoses"]
        assert ds and ds[0]["id"] == "LD725", [d["id"] for d in ds]
    assert classify_framework("Horovod has not been initialized; use hvd.init().") is None


# TensorFlow's collective executor aborting a worker's collectives (base_collective_executor.cc StartAbort), the status
# in absl's words (2.11+: tensorflow/tensorflow#60706, at MultiWorkerMirroredStrategy's start-up) and in Status::ToString's
# before (mlcommons/training#272, TF 1.13); the remote target gRPC names on the next line
_TF_ABORT_DEADLINE = (
    "2023-05-25 11:10:57.934361: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
    "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded\n"
    "Additional GRPC error information from remote target /job:worker/replica:0/task:0:\n"
    ':{"created":"@1685013057.934031384","description":"Deadline Exceeded","file":"external/com_github_grpc_grpc/src/core/'
    'ext/filters/deadline/deadline_filter.cc","file_line":69,"grpc_status":4}\n'
    "2023-05-25 11:10:57.934547: F tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:103] Non-OK-status: Stop() "
    "status: UNIMPLEMENTED: Clean shutdown is not currently implemented\n"
    "Fatal Python error: Aborted\n")
_TF_ABORT_CLOSED = (
    "2019-05-19 15:08:13.128241: E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce with "
    "Unavailable: Socket closed\n"
    "2019-05-19 15:08:13.128323: W tensorflow/core/common_runtime/base_collective_executor.cc:203] "
    "BaseCollectiveExecutor::StartAbort Unavailable: Socket closed\n")


def test_tensorflows_collective_abort_is_read_with_its_status():
    p = classify_framework("BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded")
    assert p is not None and p.kind == "framework.collective_abort"
    assert p.fields == {"framework": "tensorflow", "status": "DEADLINE_EXCEEDED", "error": "Deadline Exceeded"}
    p = classify_framework("BaseCollectiveExecutor::StartAbort Unavailable: Socket closed")
    assert p is not None and p.fields["status"] == "UNAVAILABLE" and p.fields["error"] == "Socket closed"
    p = classify_framework("Additional GRPC error information from remote target /job:worker/replica:0/task:0:")
    assert p is not None and p.kind == "framework.grpc_remote" and p.fields["task"] == "/job:worker/replica:0/task:0"
    # the abort that ends a dataset, and one after another abort, are no failure
    assert classify_framework("BaseCollectiveExecutor::StartAbort Out of range: End of sequence") is None
    assert classify_framework("BaseCollectiveExecutor::StartAbort OUT_OF_RANGE: End of sequence") is None
    assert classify_framework("BaseCollectiveExecutor::StartAbort CANCELLED: Cancelled") is None
    # the ring algorithm's own line before the executor's (ring_alg.cc RingAlg::StartAbort; ring_reducer.cc in 1.x)
    p = classify_framework("Aborting RingReduce with Unavailable: Socket closed")
    assert p is not None and p.kind == "framework.collective_abort"
    assert p.fields == {"framework": "tensorflow", "status": "UNAVAILABLE", "error": "Socket closed"}
    p = classify_framework("Aborting RingGather with DEADLINE_EXCEEDED: Deadline Exceeded")
    assert p is not None and p.fields["status"] == "DEADLINE_EXCEEDED"
    assert classify_framework("Aborting RingReduce with Cancelled: Cancelled") is None


# the status every later collective of the worker fails with (StartAbort's derived status), as TensorFlow raises it
# (yahoo/TensorFlowOnSpark#607)
_TF_ABORTED_OP = (
    "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Socket closed\n"
    "Additional GRPC error information from remote target /job:worker/replica:0/task:1:\n"
    "The error could be from a previous operation. Restart your program to reset. [Op:CollectiveReduceV2]\n")


@pytest.mark.parametrize("text, rule", [(_TF_ABORT_DEADLINE, "LD7061"), (_TF_ABORT_CLOSED, "LD7060"), (_TF_ABORTED_OP, "LD7060"),
                                        ("tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective ops is"
                                         " aborted by: Deadline Exceeded\n", "LD7061"),
                                        # the ring algorithm's line alone (tensorflow/tensorflow#28891's workers): was silent
                                        (_TF_ABORT_CLOSED.split("\n")[0] + "\n", "LD7060"),
                                        ("2021-02-03 11:20:41.551207: E tensorflow/core/common_runtime/ring_alg.cc:280] "
                                         "Aborting RingGather with DEADLINE_EXCEEDED: Deadline Exceeded\n", "LD7061")])
def test_tensorflows_collective_abort_is_diagnosed(text, rule):
    # before: the start-up abort read as the SIGABRT after it (LD761), the 1.x lines as nothing, the exception as an
    # exception of the training code (LD710)
    ids = _ids(text)
    assert ids and ids[0] == rule, ids


# Open MPI's runtime unpacking another daemon's message past its end (OPAL_ERR_UNPACK_READ_PAST_END_OF_BUFFER): the nodes'
# Open MPI builds differ (horovod/horovod#368, #133; open-mpi/ompi#4437), in ORTE_ERROR_LOG's and ORTE_FORCED_TERMINATE's
# words; the daemon-launch banner after it is its consequence; show_help.c's is no sign of its own
_ORTE_UNPACK = (
    "[CPSG-AI-GPU-2:46613] [[17593,0],1] ORTE_ERROR_LOG: Data unpack would read past end of buffer in file grpcomm_direct.c"
    " at line 355\n"
    "--------------------------------------------------------------------------\n"
    "An internal error has occurred in ORTE:\n\n"
    "[[17593,0],1] FORCE-TERMINATE AT Data unpack would read past end of buffer:-26 - error grpcomm_direct.c(359)\n\n"
    "This is something that should be reported to the developers.\n"
    "--------------------------------------------------------------------------\n")
_ORTE_UNPACK_LAUNCH = (
    "ORTE_ERROR_LOG: Data unpack would read past end of buffer in file base/plm_base_launch_support.c at line 1230\n"
    "--------------------------------------------------------------------------\n"
    "ORTE was unable to reliably start one or more daemons.\n"
    "This usually is caused by:\n"
    "* not finding the required libraries and/or binaries on one or more nodes. Please check your PATH and LD_LIBRARY_PATH"
    " settings, or configure OMPI with --enable-orterun-prefix-by-default\n")


@pytest.mark.parametrize("text", [_ORTE_UNPACK, _ORTE_UNPACK_LAUNCH])
def test_open_mpi_daemons_that_cannot_read_each_other_are_a_version_mismatch(text):
    # before: silent (the first), the daemon-launch banner LD1055 (the second)
    ids = _ids(text)
    assert ids and ids[0] == "LD4061" and "LD1055" not in ids[:1], ids


def test_open_mpi_show_help_unpack_is_no_version_mismatch():
    ids = _ids("[griffin:02621] [[54251,0],0] ORTE_ERROR_LOG: Data unpack would read past end of buffer in file "
               "util/show_help.c at line 507\n")
    assert "LD4061" not in ids


# the line before Open MPI's daemon-launch banner that says why the daemon did not start: OpenSSH's refused session
# (openpmix/prrte#1493: thousands of launches, 36 daemons a node at once) and a node's shell without orted on its PATH
_SSH_REFUSED = (
    "ssh_exchange_identification: Connection closed by remote host\n"
    "--------------------------------------------------------------------------\n"
    "prterun was unable to reliably start one or more daemons.\n"
    "This usually is caused by:\n\n"
    "* the inability to resolve specified hostnames - please check\n"
    "  above for any output regarding this possibility\n")
_ORTED_MISSING = (
    "bash: orted: command not found\n"
    "--------------------------------------------------------------------------\n"
    "ORTE was unable to reliably start one or more daemons.\n"
    "This usually is caused by:\n")


@pytest.mark.parametrize("text, rule", [(_SSH_REFUSED, "LD1065"), (_ORTED_MISSING, "LD1066"),
                                        ("kex_exchange_identification: read: Connection reset by peer\n", "LD1065"),
                                        ("bash: line 1: prted: command not found\n", "LD1066")])
def test_the_line_before_open_mpis_launch_banner_names_the_cause(text, rule):
    # before: the banner's generic reading (LD1055) or nothing; the lines passed no prefilter keyword
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD1055" not in ids[:1], ids


def test_another_programs_command_not_found_is_not_open_mpis_daemon():
    assert "LD1066" not in _ids("bash: python3: command not found\n")


# Slurm's step daemon when execve() of the task's program failed (src/slurmd/slurmstepd/task.c exec_task), in the task's
# stderr before srun's exit report: a command missing from the module's container (CSCfi/pytorch-ddp-examples#1), a
# script not executable (elyall/wandb_on_slurm#5)
_SLURM_EXECVE = (
    "slurmstepd: error: execve(): torchrun: No such file or directory\n"
    "srun: error: g1301: task 0: Exited with exit code 2\n"
    "srun: launch/slurm: _step_signal: Terminating StepId=3022331.0\n")


@pytest.mark.parametrize("text", [_SLURM_EXECVE, "running script\nslurmstepd: error: execve(): start-agent.sh: Permission denied\n"
                                  "srun: error: my-node01: task 0: Exited with exit code 13\n",
                                  "slurmstepd: error: execve(): bad interpreter(/opt/conda/bin/python): No such file or directory\n"])
def test_slurm_that_could_not_execute_the_tasks_program_is_the_cause(text):
    # before: silent ("No known failure signature matched")
    ids = _ids(text)
    assert ids and ids[0] == "LD7070", ids


# horovodrun's check that the installed Horovod has the controller it is to launch with (horovod/runner/launch.py
# run_controller), as its traceback ends (horovod/horovod#1329, #465): an installation problem, not a Gloo failure
_HOROVOD_NOT_BUILT = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/bin/horovodrun", line 21, in <module>\n'
    "    run.run()\n"
    '  File "/usr/local/lib64/python3.6/site-packages/horovod/run/run.py", line 503, in run\n'
    "    raise ValueError('Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that '\n"
    "ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that either MPI is installed"
    " (MPI) or CMake is installed (Gloo).\n")


@pytest.mark.parametrize("text", [_HOROVOD_NOT_BUILT,
                                  "ValueError: Gloo support has not been built.  If this is not expected, ensure CMake is "
                                  "installed and reinstall Horovod with HOROVOD_WITH_GLOO=1 to debug the build error.\n"])
def test_horovod_built_without_its_controller_is_the_cause(text):
    # before: a generic card, "A Gloo check failed" (family gloo_enforce)
    ids = _ids(text)
    assert ids and ids[0] == "LD7071", ids


# Slurm refusing a step or an allocation for what it asked (srun's `Unable to create step for job %u: %m`, `Unable to
# allocate resources: %m`; src/common/slurm_errno.c's texts): an srun asking more CPUs than its job holds, a GPU request
# the nodes cannot meet (radical-cybertools/radical.pilot#2109)
@pytest.mark.parametrize("text", [
    "+ srun -n 12 -c 1 --cpus-per-gpu=1 gpu_check -l\n"
    "srun: error: Unable to create step for job 4359715: More processors requested than permitted\n",
    "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    "srun: error: Unable to create step for job 1234: Invalid generic resource (gres) specification\n",
    "srun: error: Unable to allocate resources: Requested node configuration is not available\n"])
def test_slurm_refusing_the_resources_asked_for_is_the_cause(text):
    # before: silent
    ids = _ids(text)
    assert ids and ids[0] == "LD7072", ids


def test_slurm_refusing_a_step_for_another_reason_is_a_card_not_this_rule():
    ids = _ids("srun: error: Unable to create step for job 63094233: Job/step already completing or completed\n")
    assert "LD7072" not in ids and ids, ids


# Slurm's launch of a step refused by a node's slurmd (src/api/step_launch.c `Task launch for %ps failed on node %s: %m`,
# srun's `Application launch failed: %m`): a credential the node rejects (NVIDIA/deepops#1179, c3nl_cluster#18: clocks)
_SLURM_CREDENTIAL = (
    "srun: error: Task launch for StepId=13.0 failed on node dgx-1: Invalid job credential\n"
    "srun: error: Task launch for StepId=13.0 failed on node dgx-2: Invalid job credential\n"
    "srun: error: Application launch failed: Invalid job credential\n"
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n")


@pytest.mark.parametrize("text", [_SLURM_CREDENTIAL,
                                  "srun: error: Task launch for 36.0 failed on node cn131: Job credential expired\n",
                                  "srun: error: Application launch failed: Job credential expired\n"])
def test_slurm_launch_refused_for_its_credential_is_the_cause(text):
    # before: silent
    ids = _ids(text)
    assert ids and ids[0] == "LD7080", ids


def test_slurm_launch_failed_for_another_reason_is_a_card_not_the_credential_rule():
    ids = _ids("srun: error: Task launch for StepId=2215.0 failed on node gpu07: Communication connection failure\n")
    assert ids and "LD7080" not in ids, ids
    # near miss: the controller's own failure to make a credential is another message
    assert "LD7080" not in _ids("srun: error: Unable to create step for job 10: Error generating job credential\n")


# A shell that did not find the job's launcher or interpreter: bash, bash 5.1's `line N`, zsh, dash (/bin/sh on Debian)
@pytest.mark.parametrize("text", ["bash: torchrun: command not found\n", "bash: line 1: deepspeed: command not found\n",
                                  "zsh: command not found: torchrun\n", "/bin/sh: 1: deepspeed: not found\n",
                                  "+ python3 -m torch.distributed.run --nproc_per_node 8 train.py\nsh: 1: python3: not found\n"])
def test_a_shell_that_did_not_find_the_jobs_command_is_the_cause(text):
    # before: silent ("No known failure signature matched"; bash's line was listed as not understood)
    ids = _ids(text)
    assert ids and ids[0] == "LD7081", ids


@pytest.mark.parametrize("text", ["bash: module: command not found\n", "/bin/sh: 1: nvcc: not found\n",
                                  "zsh: command not found: ll\n", "Warning: checkpoint not found, starting from scratch\n"])
def test_another_missing_command_is_no_error_of_its_own(text):
    report = build_report(parse_sources([("x.log", text)]), kb.load_rules())
    assert [d for d in report["diagnoses"] if d["severity"] == "error"] == [], report["diagnoses"]


def test_open_mpis_daemon_not_found_stays_its_own_rule():
    ids = _ids("bash: orted: command not found\n")
    assert ids and ids[0] == "LD1066" and "LD7081" not in ids, ids


# Python's own message for a script it cannot open (Modules/main.c), the interpreter named by path or by a versioned name
# (StarsfieldAI/R1-V#42: before torchrun's `failed (exitcode: 2)`)
@pytest.mark.parametrize("text", [
    "/root/miniconda3/bin/python: can't open file '/root/work/src/train.py': [Errno 2] No such file or directory\n"
    "E0208 21:12:26.795000 1460 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 2)"
    " local_rank: 0 (pid: 1464) of binary: /root/miniconda3/bin/python\n",
    "python3: can't open file 'train.py': [Errno 2] No such file or directory\n",
    "python3.10: can't open file '/w/train.py': [Errno 13] Permission denied\n"])
def test_python_that_could_not_open_the_script_is_the_cause(text):
    # before: silent, or only torchrun's exit code 2
    ids = _ids(text)
    assert ids and ids[0] == "LD7082", ids


def test_a_file_the_program_could_not_open_is_not_the_script():
    assert "LD7082" not in _ids("FileNotFoundError: [Errno 2] No such file or directory: 'config.json'\n")


# pdsh's ssh module (src/modules/sshcmd.c `%p: %s: ssh exited with exit code %d`), as DeepSpeed's multi-node runner
# shows it: 255 is ssh's own failure (deepspeedai/DeepSpeed#5709), another status the remote command's
_PDSH_LOGIN = ("localhost: Permission denied, please try again.\n"
               "localhost: user@localhost: Permission denied (publickey,password).\n"
               "pdsh@ws-7960: localhost: ssh exited with exit code 255\n")


def test_pdsh_whose_ssh_failed_is_the_cause():
    # before: silent
    ids = _ids(_PDSH_LOGIN)
    assert ids and ids[0] == "LD7083", ids


def test_pdsh_relaying_the_remote_commands_status_folds_under_that_nodes_error():
    ids = _ids("worker-2: bash: deepspeed: command not found\npdsh@worker-1: worker-2: ssh exited with exit code 127\n")
    assert ids and ids[0] == "LD7081" and "LD7083" not in ids, ids
    alone = _ids("pdsh@worker-1: worker-2: ssh exited with exit code 1\n")
    assert alone and alone[0] == "LD7084", alone


# DeepSpeed's launcher line cut by a viewer's width before its return code, with its logger head or with it cut
@pytest.mark.parametrize("text", [
    "[2023-05-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
    "'--local_rank=0'] exits with ret\u2026\n",
    "[launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with ret...\n",
    "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code =\n"])
def test_deepspeed_launcher_line_cut_before_its_return_code_is_read(text):
    # before: silent
    ids = _ids(text)
    assert ids and ids[0] == "LD7085", ids


@pytest.mark.parametrize("text", ["[2023-05-01 10:00:00,000] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 1234\n",
                                  "['/usr/bin/python', '-u', 'train.py'] exits\n",
                                  "['a', 'b'] exits with returned values\n",
                                  "[launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exitsx\n"])
def test_near_misses_of_the_cut_launcher_line_are_not_read(text):
    assert "LD7085" not in _ids(text)


# Open MPI's mapper refusing -np (help-orte-rmaps-base.txt alloc-error), its first line wrapped after the count (4.x, PRRTE)
# or after `slots` (1.x-3.x), or not at all (open-mpi/ompi#6020, #7719)
@pytest.mark.parametrize("text", [
    "--------------------------------------------------------------------------\n"
    "There are not enough slots available in the system to satisfy the 4\nslots that were requested by the application:\n\n"
    "  python\n\nEither request fewer slots for your application, or make more slots\navailable for use.\n",
    "There are not enough slots available in the system to satisfy the 32 slots\nthat were requested by the application:\n"
    "  ABYSS-P\n",
    "There are not enough slots available in the system to satisfy the 16 slots that were requested by the application:\n"])
def test_open_mpi_without_enough_slots_is_the_cause(text):
    # before: silent
    ids = _ids(text)
    assert ids and ids[0] == "LD7086", ids


def test_other_not_enough_lines_are_not_open_mpis_slots():
    assert "LD7086" not in _ids("There are not enough GPUs available in the system\n")
    assert "LD7086" not in _ids("Either request fewer slots for your application, or make more slots available for use.\n")


# bash for a command given by its path that does not exist on the node (Megatron-DeepSpeed#125: pdsh's remote command with
# the launching node's conda path), before pdsh's relay of the status
def test_a_shell_that_could_not_run_the_jobs_interpreter_by_its_path_is_the_cause():
    # before: only pdsh's exit status 127 (LD7084)
    ids = _ids("10.0.0.18: bash: line 0: cd: /data/work/src: No such file or directory\n"
               "10.0.0.18: bash: /home/u/anaconda3/envs/py37/bin/python: No such file or directory\n"
               "pdsh@worker1: 10.0.0.18: ssh exited with exit code 127\n")
    assert ids and ids[0] == "LD7081", ids


@pytest.mark.parametrize("text", ["bash: line 0: cd: /data/work/src: No such file or directory\n",
                                  "bash: ./prepare.sh: Permission denied\n",
                                  "bash: /etc/profile.d/modules.sh: No such file or directory\n"])
def test_other_paths_a_shell_could_not_run_are_no_error_of_their_own(text):
    report = build_report(parse_sources([("x.log", text)]), kb.load_rules())
    assert [d for d in report["diagnoses"] if d["severity"] == "error"] == [], report["diagnoses"]


# Open MPI's launcher that could not start the program on a node (its help text's first line; the `Node:` and
# `Executable:` lines follow): not found, or found and not executable
@pytest.mark.parametrize("text", [
    "--------------------------------------------------------------------------\n"
    "mpiexec was unable to find the specified executable file, and therefore\ndid not launch the job.  This error was first"
    " reported for process\nrank 0; it may have occurred for other processes as well.\n\nNode:       node1\nExecutable: amdahl\n",
    "mpirun was unable to launch the specified application as it could not access\nor execute an executable:\n\n"
    "Executable: python\nNode: node01\n\nwhile attempting to start process rank 0.\n"])
def test_open_mpi_that_could_not_start_the_program_is_the_cause(text):
    # before: silent
    ids = _ids(text)
    assert ids and ids[0] == "LD7087", ids


def test_open_mpis_daemons_not_started_stay_their_own_rule():
    ids = _ids("ORTE was unable to reliably start one or more daemons.\n")
    assert ids and "LD7087" not in ids, ids
    assert "LD7087" not in _ids("The server was unable to find the specified file\n")
