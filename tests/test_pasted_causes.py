"""What people paste beside (or instead of) the framework's own error, read as the cause it shows:
an exit status of 128 + N from Docker, Kubernetes or a shell, Open MPI's signal handler's report, a `df` row
of /dev/shm, Python's CalledProcessError from a launcher."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _report(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())


def _diags(text: str) -> list[dict]:
    return _report(text)["diagnoses"]


def _events(text: str):
    return [e for e in parse_sources([("x.log", text)]).events if not e.kind.startswith("analysis.")]


@pytest.mark.parametrize("line,reason,signal,rule", [
    ("    Exit Code:    135", "crashed", "SIGBUS", "LD392"),
    ('Error: container "trainer" terminated with exit code 135', "crashed", "SIGBUS", "LD392"),
    ("command terminated with exit code 139", "crashed", "SIGSEGV", "LD716"),
    ("Exit Code: 137", "killed", "SIGKILL", "LD523"),
    # Kubeflow training-operator's event of a failed replica (pkg/controller.v1/common/pod.go recordContainerStatus)
    ("Error pod pytorch-simple-worker-0 container pytorch exitCode: 137 terminated message: ", "killed", "SIGKILL", "LD523"),
    ("Error pod pytorch-simple-worker-1 container pytorch exitCode: 139 terminated message: ", "crashed", "SIGSEGV", "LD716"),
])
def test_exit_status_of_a_signal_names_it(line, reason, signal, rule):
    (ev,) = _events(line + "\n")
    assert (ev.kind, ev.fields["reason"], ev.fields["signal"]) == ("job.stopped", reason, signal)
    assert _diags(line + "\n")[0]["id"] == rule


@pytest.mark.parametrize("line", ["Exit Code: 1", "exit code 1355", "Exit Code: 138", "exit code 13",
                                  "Error pod pytorch-simple-worker-0 container pytorch exitCode: 1 terminated message: "])
def test_other_exit_statuses_are_no_stop(line):
    assert [e.kind for e in _events(line + "\n")] != ["job.stopped"]


def test_kubernetes_pod_status_with_exit_code_135_is_a_bus_error():
    text = ("Containers:\n  pytorch:\n    State:          Terminated\n      Reason:       Error\n"
            "      Exit Code:    135\n    Restart Count:  0\n")
    top = _diags(text)[0]
    assert (top["id"], top["category"]) == ("LD392", "shm_exhausted")


def test_open_mpi_signal_handler_block_names_the_signal():
    text = ("[node1:04242] *** Process received signal ***\n[node1:04242] Signal: Bus error (7)\n"
            "[node1:04242] Signal code: Non-existant physical address (2)\n[node1:04242] Failing at address: 0x7f3a2c000000\n")
    sig = [e for e in _events(text) if e.kind == "process.signal"]
    assert [e.fields["signal"] for e in sig] == [7]
    (ev,) = _events("[node1:04242] Signal: Bus error (7)\n")
    assert (ev.fields["signal_host"], ev.fields["signal_pid"]) == ("node1", 4242)
    assert _diags(text)[0]["id"] == "LD370"
    (ev,) = _events("Signal: Segmentation fault (11)\n")
    assert (ev.kind, ev.fields["signal"]) == ("process.signal", 11)


@pytest.mark.parametrize("line", ["Signal: Bus error (7) seen by the self test", "Signal: strength (3) dBm",
                                  "[node1:04242] Signal code: Non-existant physical address (2)"])
def test_other_signal_lines_are_no_signal(line):
    assert "process.signal" not in [e.kind for e in _events(line + "\n")]


def test_df_row_of_a_full_dev_shm_is_the_cause():
    text = "$ df -h /dev/shm\nFilesystem      Size  Used Avail Use% Mounted on\nshm              64M   64M     0 100% /dev/shm\n"
    top = _diags(text)[0]
    assert (top["id"], top["category"], top["severity"]) == ("LD354", "shm_exhausted", "error")
    assert "100% of 64M" in top["title"]


def test_df_row_of_a_small_dev_shm_is_context_only():
    text = "Filesystem Size Used Avail Use% Mounted on\ntmpfs 64M 0 64M 0% /dev/shm\n"
    report = _report(text)
    assert not report["diagnoses"] and [n["id"] for n in report["notes"]] == ["LD355"]
    # a large /dev/shm, or a full disk elsewhere, says nothing about shared memory
    assert not [e for e in _events("none 32G 0 32G 0% /dev/shm\n/dev/sda1 200G 200G 0 100% /data\n")
                if e.kind == "container.check"]


def test_calledprocesserror_with_sigbus_is_dev_shm():
    top = _diags("subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' died with <Signals.SIGBUS: 7>.\n")[0]
    assert (top["id"], top["category"]) == ("LD356", "shm_exhausted")


@pytest.mark.parametrize("line,host", [
    ("ping: trainer-worker-1.trainer: Name or service not known", "trainer-worker-1.trainer"),
    ("ping: unknown host trainer-worker-1", "trainer-worker-1"),
    ("curl: (6) Could not resolve host: trainer-master-0", "trainer-master-0"),
    ("** server can't find trainer-worker-1.trainer.default.svc.cluster.local: NXDOMAIN",
     "trainer-worker-1.trainer.default.svc.cluster.local"),
    ("Host trainer-worker-1 not found: 3(NXDOMAIN)", "trainer-worker-1"),
    ('nc: getaddrinfo for host "trainer-master-0" port 29500: Temporary failure in name resolution', "trainer-master-0"),
])
def test_lookup_tools_that_cannot_resolve_a_name(line, host):
    (ev,) = _events(line + "\n")
    assert (ev.kind, ev.fields["host"]) == ("net.resolve_failed", host)
    top = _diags(line + "\n")[0]
    assert (top["id"], top["category"]) == ("LD641", "hostname_resolution")


@pytest.mark.parametrize("line", ["ping: socket: Operation not permitted", "Host trainer-worker-1 has address 10.0.0.7",
                                  "** server can't find the file you asked for"])
def test_lookup_tools_that_resolved_or_failed_otherwise(line):
    assert "net.resolve_failed" not in [e.kind for e in _events(line + "\n")]


@pytest.mark.parametrize("line,path", [
    ("ls: cannot access '/dev/infiniband': No such file or directory", "/dev/infiniband"),
    ("ls: cannot access '/dev/infiniband/uverbs0': No such file or directory", "/dev/infiniband/uverbs0"),
    ("No IB devices found", None),
])
def test_missing_rdma_devices_as_pasted(line, path):
    (ev,) = _events(line + "\n")
    assert (ev.kind, ev.fields["check"], ev.fields.get("path")) == ("container.check", "no_rdma_devices", path)
    assert _diags(line + "\n")[0]["id"] == "LD233"


def test_missing_rdma_devices_come_before_the_timeout_they_cause():
    text = ("ls: cannot access '/dev/infiniband': No such file or directory\n"
            "node1:100:100 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0\nnode1:100:100 [0] NCCL INFO NET/IB : No device found.\n"
            "node1:100:100 [0] NCCL INFO NET/Socket : Using [0]eth0:10.244.1.5<0>\n")
    assert _diags(text)[0]["category"] == "container_missing_devices"
    for other in ("ls: cannot access '/data/x': No such file or directory", "ls: cannot access '/dev/infiniband': Permission denied",
                  "No IB devices found here, using TCP"):
        assert "container.check" not in [e.kind for e in _events(other + "\n")]


@pytest.mark.parametrize("line,rule", [
    ("nvidia-container-cli: device error: 2: unknown device: unknown", "LD855"),
    ("stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: device error: false: unknown device: unknown.", "LD855"),
    ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.", "LD809"),
])
def test_container_toolkit_refusing_gpus(line, rule):
    top = _diags(line + "\n")[0]
    assert (top["id"], top["category"]) == (rule, "container_missing_devices")


@pytest.mark.parametrize("line,pid,process", [
    ("[ 1234.567890] Killed process 4242 (python3) total-vm:98765432kB, anon-rss:87654321kB, file-rss:0kB", 4242, "python3"),
    ("[   99.100000] Out of memory: Kill process 1234 (python) score 950 or sacrifice child", 1234, "python"),
    ("Dec 01 10:00:00 node2 kernel: python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0", None, "python3"),
])
def test_the_oom_killer_in_each_kernels_words(line, pid, process):
    (ev,) = _events(line + "\n")
    assert (ev.kind, ev.fields["reason"], ev.fields.get("pid"), ev.fields["process"]) == ("job.stopped", "oom", pid, process)
    assert _diags(line + "\n")[0]["id"] == "LD522"


@pytest.mark.parametrize("line", ["Killed process 12 (bash) and its children", "the watchdog invoked oom-killer tests"])
def test_other_killed_process_lines_are_no_oom(line):
    assert [e.fields.get("reason") for e in _events(line + "\n") if e.kind == "job.stopped"] != ["oom"]


@pytest.mark.parametrize("line", [
    "subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' died with <Signals.SIGKILL: 9>.",
    "subprocess.CalledProcessError: Command '['torchrun', 'train.py']' returned non-zero exit status 137.",
])
def test_calledprocesserror_of_a_killed_child_is_no_user_exception(line):
    top = _diags(line + "\n")[0]
    assert (top["id"], top["category"]) == ("LD736", "peer_process_died")
    assert _diags("subprocess.CalledProcessError: Command 'x' returned non-zero exit status 2.\n")[0]["id"] == "LD710"


def test_an_error_line_of_another_program_is_no_gloo_store_error():
    # Gloo's redis_store.cc prints `Error: <reply>`: without that location, any program's `Error: ...` would read as it
    top = _diags('Error: container "trainer" terminated with exit code 137\n')[0]
    assert (top["id"], top["category"]) == ("LD523", "peer_process_died")
    from logdoc.resolve import _torch_lookup
    assert _torch_lookup("Error: Connection refused") is None
    assert _torch_lookup("listen: Address already in use") == "logdoc:gloo:listen-in-use"


def test_dataloader_workers_dead_without_an_error():
    top = _diags("RuntimeError: DataLoader worker (pid(s) 4242, 4243) exited unexpectedly\n")[0]
    assert (top["id"], top["category"]) == ("LD357", "shm_exhausted")
    # the bus error printed beside it names the cause; an exit code means the worker raised
    text = ("RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly\n"
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n")
    assert _diags(text)[0]["id"] == "LD305"
    assert _diags("RuntimeError: DataLoader worker (pid 4242) exited unexpectedly with exit code 1. Details are lost "
                  "due to multiprocessing.\n")[0]["id"] == "LD710"


# a C++/CUDA extension compiled just in time (torch.utils.cpp_extension, DeepSpeed's ops) whose build failed:
# `Error building extension '<name>'` from _run_ninja_build, and the CalledProcessError of ninja before it when a paste
# stops there (deepspeedai/DeepSpeedExamples#103: nvcc too old for the GPU's compute_86)
_JIT_BUILD = (
    "nvcc fatal   : Unsupported gpu architecture 'compute_86'\n"
    "ninja: build stopped: subcommand failed.\n"
    "Traceback (most recent call last):\n"
    '  File "/home/u/envs/graph/lib/python3.8/site-packages/torch/utils/cpp_extension.py", line 1533, in _run_ninja_build\n'
    "    subprocess.run(\n"
    '  File "/home/u/envs/graph/lib/python3.8/subprocess.py", line 516, in run\n'
    "    raise CalledProcessError(retcode, process.args,\n"
    "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")


@pytest.mark.parametrize("text", [_JIT_BUILD, "192.168.3.101: RuntimeError: Error building extension 'fused_adam'\n"])
def test_an_extension_that_did_not_compile_is_the_cause(text):
    # before: the exception as a generic Python exception (LD710)
    ds = _diags(text)
    assert ds and ds[0]["id"] == "LD7073", [d["id"] for d in ds]


def test_another_command_that_failed_is_not_an_extension_build():
    ds = _diags("subprocess.CalledProcessError: Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.\n")
    assert "LD7073" not in [d["id"] for d in ds]


# srun's report of tasks that exited with a status of their own (`srun: error: <node>: task(s) <t>: Exited with exit code
# N`): a symptom whose cause the task printed before; folded under that cause when it is in the log (CSCfi/pytorch-ddp-
# examples#1: execve() of a missing torchrun, LD7070)
def test_srun_task_exit_code_is_read_and_folds_under_the_tasks_own_error():
    ev = _events("srun: error: bear-pg0104u25b: tasks 15-19: Exited with exit code 2\n")
    assert [(e.kind, e.fields.get("launcher"), e.fields.get("exitcode"), e.fields.get("node"), e.fields.get("tasks"))
            for e in ev] == [("torchrun.worker_failed", "srun", 2, "bear-pg0104u25b", "15-19")]
    ds = _diags("srun: error: node001: task 3: Exited with exit code 1\n")
    assert ds and ds[0]["id"] == "LD7074" and ds[0]["role"] == "symptom", [d["id"] for d in ds]
    ds = _diags("slurmstepd: error: execve(): torchrun: No such file or directory\n"
                "srun: error: g1301: task 0: Exited with exit code 2\n")
    assert ds[0]["id"] == "LD7070", [d["id"] for d in ds]
    # a signal's status is the stops' reading, not this one
    assert not [e for e in _events("srun: error: node001: tasks 0-3: Exited with exit code 137\n")
                if e.kind == "torchrun.worker_failed"]
