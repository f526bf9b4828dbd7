"""NCCL, CUDA and launcher failures as other frameworks wrap them are read as the event they carry.

Each case is a wrapper's wording from its sources (JAX/XLA's ToStatus, PaddlePaddle's enforce,
Horovod's NCCL_CHECK, MPICH Hydra's HYDU_error_printf, Slurm, Kubernetes, DeepSpeed's launcher,
Ray, vLLM's pynccl, CuPy, TensorFlow) and the diagnosis the carried message gets.
"""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.envelope import unwrap
from logdoc.pipeline import parse_sources


def _top(text: str) -> dict:
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    assert got, text
    return got[0]


def _events(text: str):
    return [e for e in parse_sources([("x.log", text)]).events if not e.kind.startswith("analysis.")]


WRAPPED = [
    # JAX / XLA: "%s:%d: NCCL operation %s failed: %s. Last NCCL warning(error) log entry (may be unrelated) '%s'."
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:305: NCCL operation "
     "ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error. Last NCCL warning(error) log entry "
     "(may be unrelated) 'Error while creating shared memory segment /dev/shm/nccl-abc123 (size 9637888)'.",
     "shm_exhausted"),
    ("jax.errors.JaxRuntimeError: INTERNAL: external/xla/xla/backends/gpu/collectives/nccl_communicator.cc:212: NCCL "
     "operation ncclAlltoAll(send_buffer, recv_buffer, count, dtype, comm, stream) failed: unhandled cuda error (run "
     "with NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be unrelated) 'Cuda failure 2 'out of "
     "memory''.", "cuda_oom"),
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation "
     "ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error", "fabric_manager_or_driver"),
    ("jax.errors.JaxRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
     "'xla.gpu.all_reduce' failed: external/xla/xla/service/gpu/runtime/nccl_api.cc:580: NCCL operation ncclGroupEnd() "
     "failed: unhandled system error (run with NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be "
     "unrelated) 'socketStartConnect: Connect to 10.0.0.2<43211> failed : Software caused connection abort'.; current "
     "tracing scope: all-reduce-start.1", "firewall_or_unreachable_peer"),
    # XLA's status in its own C++ log line (tsl's `time: E file:line] ` head)
    ("2024-05-01 10:00:00.123456: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2985] Execution of replica 0 "
     "failed: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, "
     "id, rank) failed: unhandled system error", "shm_exhausted"),
    # TensorFlow's NCCL_RETURN_IF_ERROR status in its C++ log lines
    ("2021-01-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at "
     "nccl_ops.cc:104 : Internal: NCCL: unhandled cuda error. Set NCCL_DEBUG=WARN for detail.", "fabric_manager_or_driver"),
    ("2021-01-01 10:00:00.000000: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
     "BaseCollectiveExecutor::StartAbort Internal: NCCL: unhandled system error. Set NCCL_DEBUG=WARN for detail.",
     "shm_exhausted"),
    # PaddlePaddle's enforce: the NCCL result, then its hint
    ("OSError: (External) NCCL error(2), unhandled system error. \n  [Hint: 'ncclSystemError'. There are some system "
     "errors, please check the network and the NCCL_DEBUG=INFO log. ] (at /paddle/paddle/fluid/platform/"
     "collective_helper.cc:113)", "shm_exhausted"),
    # CuPy's NcclError: the result's name, then its string
    ("cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error",
     "fabric_manager_or_driver"),
    # TensorFlow's collective ops
    ("tensorflow.python.framework.errors_impl.InternalError: NCCL: unhandled system error\n\t [[{{node "
     "CollectiveReduceV2}}]] [Op:__inference_train_function_1234]", "shm_exhausted"),
    # vLLM's pynccl in its worker's log line
    ("(VllmWorkerProcess pid=1234) ERROR 05-01 10:00:00 multiproc_worker_utils.py:226] RuntimeError: NCCL error: "
     "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "fabric_manager_or_driver"),
    # Ray's RayTaskError wrapping PyTorch's DistBackendError and NCCL's last WARN
    ("ray.exceptions.RayTaskError(DistBackendError): ray::RayTrainWorker._RayTrainWorker__execute() (pid=12345, "
     "ip=10.0.0.5)\ntorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
     "Last error:\nsocketStartConnect: Connect to 10.0.0.6<54321> failed : Software caused connection abort",
     "firewall_or_unreachable_peer"),
    # Slurm and Kubernetes: the kernel's OOM killer
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=123456.0. Some of the step tasks have been OOM Killed.",
     "peer_process_died"),
    ("    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137", "peer_process_died"),
    # MPICH's Hydra launcher
    ("[proxy:0:1@node2] HYDU_sock_connect (utils/sock/sock.c:145): unable to connect from \"node2\" to \"node1\" "
     "(No route to host)", "firewall_or_unreachable_peer"),
    ("[proxy:0:0@server1] main (proxy/pmip.c:105): unable to connect to server server2 at port 39647 "
     "(check for firewalls!)", "firewall_or_unreachable_peer"),
    ("[proxy:0:0@server1] HYDU_sock_connect (lib/utils/sock.c:110): unable to get host address for node7",
     "hostname_resolution"),
]


@pytest.mark.parametrize("text,category", WRAPPED, ids=[t[:40] for t, _ in WRAPPED])
def test_a_wrapped_failure_gets_the_diagnosis_of_what_it_carries(text, category):
    assert _top(text)["category"] == category


def test_hydra_head_is_peeled_with_its_host_process_and_source():
    env, msg = unwrap("[proxy:0:1@node2] HYDU_sock_connect (utils/sock/sock.c:145): unable to connect from "
                      "\"node2\" to \"node1\" (No route to host)")
    assert (env.host, env.process, env.source, env.level) == ("node2", "proxy:0:1", "utils/sock/sock.c:145", "ERROR")
    assert msg.startswith("unable to connect from")
    env, msg = unwrap("[mpiexec@node1] Press Ctrl-C again to force abort")
    assert (env.host, env.process, env.level, msg) == ("node1", "mpiexec", None, "Press Ctrl-C again to force abort")


def test_hydra_connect_failures_are_events_with_the_peer():
    evs = _events("[proxy:0:0@server1] main (proxy/pmip.c:105): unable to connect to server server2 at port 39647 "
                  "(check for firewalls!)\n")
    assert [(e.kind, e.host, e.fields.get("peer"), e.fields.get("port")) for e in evs] == [
        ("net.connect_failed", "server1", "server2", 39647)]
    top = _top("[proxy:0:1@node2] HYDU_sock_connect (utils/sock/sock.c:145): unable to connect from \"node2\" to "
               "\"node1\" (No route to host)")
    assert top["id"] == "LD151" and "node1" in top["title"] and "No route to host" in top["title"]


def test_hydra_launch_proxy_failed_is_a_launch_failure():
    # mpiexec's ui_cmd_cb (src/pm/hydra/mpiexec/pmiserv_pmci.c): the proxy exited before it connected back
    text = ("Host key verification failed.\n"
            "[mpiexec@server2] ui_cmd_cb (mpiexec/pmiserv_pmci.c:51): Launch proxy failed.\n"
            "[mpiexec@server2] HYDT_dmxu_poll_wait_for_event (lib/tools/demux/demux_poll.c:76): callback returned error "
            "status\n"
            "[mpiexec@server2] HYD_pmci_wait_for_completion (mpiexec/pmiserv_pmci.c:173): error waiting for event\n")
    evs = [e for e in _events(text) if e.kind == "launcher.failed"]
    assert [(e.host, e.process, e.line) for e in evs] == [("server2", "mpiexec", 2)]
    assert _top(text)["id"] == "LD152"
    assert not [e for e in _events("[mpiexec@server2] Launching proxy on node3\n") if e.kind == "launcher.failed"]


def test_a_bracketed_word_and_host_is_not_hydra():
    env, _ = unwrap("[worker@node1] main (train.py:12): loss 0.5")
    assert "hydra" not in env.layers


def test_tsl_log_head_is_peeled_with_time_level_and_source():
    env, msg = unwrap("2024-05-01 10:00:00.123456: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1008] "
                      "failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert (env.time, env.level, env.source) == ("2024-05-01T10:00:00.123456", "ERROR",
                                                  "external/xla/xla/stream_executor/cuda/cuda_driver.cc:1008")
    assert msg.startswith("failed to alloc")
    env, _ = unwrap("2024-05-01 10:00:00,123 - INFO - step 3")
    assert "tsl" not in env.layers


@pytest.mark.parametrize("warn, after", [
    ("Cuda failure 'out of memory'", "."),                      # NCCL's CUDACHECK quotes the CUDA error itself
    ("Cuda failure 2 'out of memory'", "."),
    ("Cuda failure 'peer access is not supported between these two devices'", ".; current tracing scope: all-reduce-start"),
    ("Error while creating shared memory segment /dev/shm/nccl-abc123 (size 9637888)", ""),
])
def test_xla_last_warning_with_quotes_of_its_own_is_read_whole(warn, after):
    evs = _events("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL "
                  "operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error. Last NCCL "
                  f"warning(error) log entry (may be unrelated) '{warn}'{after}\n")
    assert [e.fields.get("message") for e in evs if e.kind == "nccl.warn"] == [warn]


def test_xla_status_keeps_the_last_nccl_warning_as_its_own_event():
    evs = _events("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:305: NCCL "
                  "operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error. Last NCCL "
                  "warning(error) log entry (may be unrelated) 'Error while creating shared memory segment "
                  "/dev/shm/nccl-abc123 (size 9637888)'.\n")
    assert [e.kind for e in evs] == ["torch.nccl_error", "nccl.warn"]
    assert evs[0].fields["error_string"] == "unhandled system error"
    assert evs[1].fields["nested_kind"] == "torch.nccl_error"
    # without a warning quoted, the tail is no message of its own
    evs = _events("2024-05-01 10:00:00.123456: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2985] Execution "
                  "of replica 0 failed: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation "
                  "ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error (run with NCCL_DEBUG=INFO for "
                  "details)\n")
    assert [e.kind for e in evs] == ["torch.nccl_error"]


@pytest.mark.parametrize("line,signal,rule", [
    ("srun: error: gpu-node-03: task 2: Bus error", "SIGBUS", "LD392"),
    ("srun: error: gpu-node-03: tasks 0-3: Segmentation fault", "SIGSEGV", "LD716"),
    ("srun: error: gpu-node-03: task 1: Illegal instruction", "SIGILL", "LD716"),
])
def test_srun_names_a_fatal_signal_of_native_code(line, signal, rule):
    (ev,) = _events(line + "\n")
    assert (ev.kind, ev.fields["reason"], ev.fields["signal"], ev.fields["node"]) == ("job.stopped", "crashed", signal,
                                                                                      "gpu-node-03")
    assert _top(line)["id"] == rule


def test_srun_killed_task_is_no_crash():
    (ev,) = _events("srun: error: gpu-node-04: task 3: Killed\n")
    assert ev.fields["reason"] == "killed" and "signal" not in ev.fields


def test_ray_actor_death_by_a_closed_worker_connection():
    text = ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n\tclass_name: "
            "RayTrainWorker\n\tactor_id: 9a8b\n\tpid: 12345\n\tip: 10.0.0.5\nThe actor is dead because its worker process "
            "has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error "
            "code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer "
            "due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to "
            "SIGSEGV or other unexpected errors.\n")
    assert _top(text)["id"] == "LD742"


@pytest.mark.parametrize("text, host", [
    ("mlx5: gpu-node-7: got completion with error:\n00000000 00000000 00000000 00000000\n", "gpu-node-7"),
    ("(RayWorkerWrapper pid=48213, ip=10.0.0.7) mlx5: host_unknown: got completion with error:\n", "host_unknown"),
])
def test_rdma_cores_dump_of_an_error_completion_is_read(text, host):
    # rdma-core providers/mlx5/cq.c: `mlx5: <hostname>: got completion with error:` before the CQE's hex words
    evs = [e for e in parse_sources([("x.log", text)]).events if e.kind == "verbs.cqe_error"]
    assert len(evs) == 1 and evs[0].fields["nic_host"] == host and evs[0].fields["provider"] == "mlx5"


# PaddlePaddle with FLAGS_call_stack_level=2 (paddle/phi/core/enforce.cc): the Python exception's message starts
# with a line break, so its line says `OSError: ` alone; the C++ traceback and the error summary follow, and the
# error line after `Error Message Summary:` (with its `[Hint: ...]`) is the message.
PADDLE_SUMMARY = """Traceback (most recent call last):
  File "train.py", line 42, in <module>
    dist.init_parallel_env()
  File "/usr/local/lib/python3.8/dist-packages/paddle/distributed/parallel.py", line 1076, in init_parallel_env
    paddle.distributed.barrier(group=group)
OSError: 

--------------------------------------
C++ Traceback (most recent call last):
--------------------------------------
0   paddle::distributed::ProcessGroupNCCL::Barrier(paddle::distributed::BarrierOptions const&)
1   phi::enforce::EnforceNotMet::EnforceNotMet(phi::ErrorSummary const&, char const*, int)

----------------------
Error Message Summary:
----------------------
{error}
  [Hint: '{result}'. {hint}] (at /paddle/paddle/fluid/distributed/collective/ProcessGroupNCCL.cc:154)
"""


@pytest.mark.parametrize("error, result, hint, expected", [  # the result's family card, or the rule on its words
    ("ExternalError: NCCL error(2), unhandled system error. ", "ncclSystemError",
     "There are some errors occurred when NCCL calling system function, please check Last error for more information.",
     "family:nccl_system_error"),
    ("ExternalError: NCCL error(3), internal error. ", "ncclInternalError",
     "There are some errors occurred when NCCL, please check the NCCL_DEBUG=INFO log.", "LD133"),
])
def test_paddle_error_summary_is_the_message_of_the_exception_before_it(error, result, hint, expected):
    text = PADDLE_SUMMARY.format(error=error, result=result, hint=hint)
    top = _top(text)
    assert top["id"] == expected, (top["id"], top["title"])  # (before: LD710, "OSError (a Python exception)")
    summary = [e for e in _events(text) if e.fields.get("exc_type") == "ExternalError"]
    # the hint is part of the error's record
    assert len(summary) == 1 and "[Hint: " in summary[0].text and summary[0].end_line == summary[0].line + 1


def test_an_exception_without_message_that_says_all_carries_nothing():
    # a bare `assert` of the program: its own cause, not the carrier of the next error in the file
    from logdoc.nested import carrier_links, key
    text = PADDLE_SUMMARY.replace("OSError: ", "AssertionError").format(
        error="ExternalError: NCCL error(2), unhandled system error. ", result="ncclSystemError", hint="x")
    evs = parse_sources([("x.log", text)]).events
    tb = [e for e in evs if e.fields.get("exc_type") == "AssertionError"]
    assert len(tb) == 1 and key(tb[0]) not in carrier_links(evs)
    evs = parse_sources([("x.log", PADDLE_SUMMARY.format(error="ExternalError: NCCL error(2), unhandled system error. ",
                                                         result="ncclSystemError", hint="x"))]).events
    tb = [e for e in evs if e.fields.get("exc_type") == "OSError"]
    assert len(tb) == 1 and key(tb[0]) in carrier_links(evs)


def test_open_mpi_tcp_connect_failure_is_a_connect_failure():
    # open-mpi/ompi#4963, jbornschein/mpi4py-examples#11: the TCP BTL's help block ([client connect fail])
    text = ("--------------------------------------------------------------------------\n"
            "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\n"
            "should not happen.\n"
            "\n"
            "Your Open MPI job may now hang or fail.\n"
            "\n"
            "  Local host: rhc001\n"
            "  PID:        13325\n"
            "  Message:    connect() to 10.10.10.2:1024 failed\n"
            "  Error:      Operation now in progress (115)\n"
            "--------------------------------------------------------------------------\n")
    # the block's `Message:` line is read with it (btl_tcp_endpoint.c's `connect() to %s:%d failed`): the address tried
    assert [e.kind for e in _events(text)] == ["net.connect_failed", "net.connect_failed"]
    top = _top(text)
    assert top["id"] == "LD1031" and "10.10.10.2:1024" in top["title"] and len(top["evidence"]) == 2
    assert _top("[1,0]<stderr>:WARNING: Open MPI failed to TCP connect to a peer MPI process via\n")["id"] == "LD1031"
    assert not [e for e in _events("WARNING: Open MPI failed to handshake with a connecting peer MPI\n")
                if e.kind == "net.connect_failed"]


def test_open_mpi_daemon_launch_failures_are_read():
    # open-mpi/ompi#12103, horovod/horovod#760, radical-cybertools/radical.pilot#2417: ORTE's banners
    # (help-errmgr-base.txt [failed-daemon-launch], [failed-daemon]) and its OOB TCP connect failure were silent
    oob = ("------------------------------------------------------------\n"
           "A process or daemon was unable to complete a TCP connection\n"
           "to another process:\n"
           "  Local host:    3eed81735a60\n"
           "  Remote host:   0cdbe1810ec3\n"
           "This is usually caused by a firewall on the remote host. Please\n"
           "check that any firewall (e.g., iptables) has been disabled and\n"
           "try again.\n"
           "------------------------------------------------------------\n")
    banner = ("--------------------------------------------------------------------------\n"
              "ORTE was unable to reliably start one or more daemons.\n"
              "This usually is caused by:\n"
              "\n"
              "* not finding the required libraries and/or binaries on\n"
              "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH\n"
              "  settings, or configure OMPI with --enable-orterun-prefix-by-default\n")
    assert [e.kind for e in _events(banner)] == ["launcher.failed"]
    assert _top(banner)["id"] == "LD1055"
    # the node's shell saying why (the daemon not on its PATH) leads, the banner is its consequence (LD1066)
    assert _top("bash: orted: command not found\n" + banner)["id"] == "LD1066"
    assert _top(oob + banner)["id"] == "LD1057"  # the connect failure before the banner leads
    assert _top("PRTE was unable to reliably start one or more daemons.\n")["id"] == "LD1055"
    after = ("An ORTE daemon has unexpectedly failed after launch and before\n"
             "communicating back to mpirun. This could be caused by a number\n")
    assert _top(after)["id"] == "LD1056"
    # a hostname ssh could not resolve before the banner is the cause (volcano-sh/volcano#2226)
    assert _top("ssh: Could not resolve hostname w-5.job: Name or service not known\n" + banner)["id"] == "LD641"
