"""Framework messages in their own words, the leftovers of session 29: Horovod's interface check and its exception
class whose name ends in neither Error nor Exception (LD776), the ranks Horovod's stall report names (LD745's culprits),
the process prefixes of vLLM's relays, and a SIGTERM that a process or torchrun's agent received, which stands under the
failure that caused it."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.torch import classify
from logdoc.envelope import unwrap
from logdoc.pipeline import parse_sources

_HVD_TB = (
    "Launching horovod task function was not successful:\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/horovod/runner/task_fn.py", line 66, in <module>\n'
    "    _task_fn(index, num_hosts, driver_addresses, settings)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/horovod/runner/common/util/network.py", line 187, in __init__\n'
    "    raise NoValidAddressesFound(\n"
    "horovod.runner.common.util.network.NoValidAddressesFound: Horovod was unable to connect to task service #1 on any of"
    " the following addresses: {'ens192': [('192.168.21.50', 8394)]}.\n")

_STALL = (
    "[0] [2023-06-26 07:23:58.477178: W /tmp/pip-install-6w4n_ndu/horovod/common/stall_inspector.cc:107] One or more"
    " tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of"
    " ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or"
    " that only subset of ranks is submitting tensors, which will cause deadlock. \n"
    "[0] Missing ranks:\n"
    "[0] 2: [broadcast.conv1.bias, broadcast.conv1.weight]\n"
    "[0] 3!: [broadcast.conv1.bias, broadcast.conv1.weight ...]\n"
    '[0] One or more rank (marked by "!") is stalled for longer than 120 seconds. Will shutdown.\n')


def _report(text: str, name: str = "x.log") -> dict:
    return build_report(parse_sources([(name, text)]), kb.load_rules())


def _events(text: str) -> list:
    return parse_sources([("x.log", text)]).events


def test_an_exception_class_named_without_error_is_read_in_a_traceback_and_alone():
    ev = [e for e in _events(_HVD_TB) if e.kind == "torch.exception"]
    assert len(ev) == 1 and ev[0].fields["exc_type"] == "horovod.runner.common.util.network.NoValidAddressesFound"
    assert ev[0].fields["exc_message"].startswith("Horovod was unable to connect to task service #1")
    p = classify("horovod.run.common.util.network.NoValidAddressesFound: Horovodrun was unable to connect to driver service"
                 " on any of the following addresses: {'ens192': [('192.168.21.50', 8394)]}.")
    assert p is not None and p.kind == "torch.exception" and p.fields["exc_type"].endswith(".NoValidAddressesFound")
    # in a traceback, a class of __main__ is printed without its module
    tb = "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    raise Stalled('x')\nStalled: x\n"
    assert [e.fields["exc_type"] for e in _events(tb) if e.kind == "torch.exception"] == ["Stalled"]


@pytest.mark.parametrize("line", [
    "Note: something happened",                          # one word, no module path: not an exception line alone
    "torch.distributed.elastic.agent.server.api: waiting",  # a logger's name, lower case
    "see docs.python.org: the docs",
])
def test_a_dotted_word_before_a_colon_is_no_exception(line):
    p = classify(line)
    assert p is None or p.kind != "torch.exception"


@pytest.mark.parametrize("text, found", [
    (_HVD_TB, {"service": "task service #1"}),
    ("Traceback (most recent call last):\n"
     '  File "/usr/lib/python3/dist-packages/horovod/runner/common/util/network.py", line 159, in _get_local_addresses\n'
     "    raise NoValidAddressesFound(\n"
     "horovod.runner.common.util.network.NoValidAddressesFound: No available network interface found matching user"
     " provided interface: ['eth9']\n", {"nics": "['eth9']"}),
    ("Exception: Unable to find a set of common task-to-task communication interfaces: [(0, {'eth0': [('10.0.0.1', 4110)]}),"
     " (1, {'ens5': [('10.0.0.2', 4110)]})]\n", {}),
])
def test_horovods_interface_check_is_named(text, found):
    d = _report(text)["diagnoses"]
    assert d and d[0]["id"] == "LD776" and d[0]["category"] == "wrong_network_interface"
    assert all(x["id"] != "LD710" for x in d)
    for value in found.values():
        assert value in d[0]["title"]


def test_the_stall_report_is_one_record_with_its_ranks():
    ev = [e for e in _events(_STALL) if e.kind == "framework.stalled"]
    assert len(ev) == 1 and ev[0].end_line == 5 and ev[0].rank == 0
    assert ev[0].fields["missing_ranks"] == [2, 3] and ev[0].fields["shutdown_ranks"] == [3]
    assert ev[0].time == "2023-06-26T07:23:58.477178" and ev[0].level == "WARN"


def test_the_older_stall_report_names_its_ranks_per_tensor():
    text = ("[1,0]<stderr>:[2019-04-13 13:56:31.861697: W horovod/common/operations.cc:588] One or more tensors were submitted"
            " to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than"
            " 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset"
            " of ranks is submitting tensors, which will cause deadlock.\n"
            "[1,0]<stderr>:Stalled ops:HorovodBroadcast_dense_1_bias_0 [missing ranks: 1, 4]\n")
    ev = [e for e in _events(text) if e.kind == "framework.stalled"]
    assert len(ev) == 1 and ev[0].fields["missing_ranks"] == [1, 4]


def test_the_missing_ranks_are_the_stalls_culprits():
    d = _report(_STALL)["diagnoses"]
    assert d[0]["id"] == "LD745" and d[0]["ranks"] == [2, 3] and d[0]["reported_by"] == [0]
    assert "ranks 2, 3" in d[0]["title"]


def test_a_rank_line_of_the_stall_report_is_no_srun_label():
    env, text = unwrap("1: [DistributedGradientTape_Allreduce/cond_163/HorovodAllreduce_AddN_103_0]")
    assert env.node_rank is None and text.startswith("1: [")
    env, text = unwrap("1: [rank1]: RuntimeError: x")
    assert env.node_rank == 1


@pytest.mark.parametrize("line, fields, rest", [
    ("[2020-12-30 16:35:15. 81832: E /tmp/pip/horovod/common/stall_inspector.cc:105] msg",
     {"level": "ERROR", "time": "2020-12-30T16:35:15.081832", "source": "/tmp/pip/horovod/common/stall_inspector.cc:105"}, "msg"),
    ("[W horovod/common/operations.cc:588] msg", {"level": "WARN", "time": None}, "msg"),
    ("[W socket.cpp:558] [c10d] msg", {"level": "WARN", "source": "socket.cpp:558"}, "[c10d] msg"),  # c10's, as before
])
def test_horovods_log_header_is_peeled(line, fields, rest):
    env, text = unwrap(line)
    assert text == rest
    for k, v in fields.items():
        assert getattr(env, k) == v


@pytest.mark.parametrize("line, fields", [
    ("(VllmWorkerProcess pid=2143) ERROR 08-22 06:24:42 multiproc_worker_utils.py:233] msg",
     {"pid": 2143, "process": "VllmWorkerProcess", "level": "ERROR", "source": "multiproc_worker_utils.py:233",
      "time": "--08-22T06:24:42"}),
    ("(EngineCore_0 pid=881) ERROR 09-01 12:00:00 [core.py:700] msg",
     {"pid": 881, "process": "EngineCore_0", "level": "ERROR", "source": "core.py:700"}),
    ("(RayWorkerWrapper pid=5531, ip=10.0.0.2) ERROR 01-02 10:11:40 worker_base.py:464] msg",
     {"pid": 5531, "process": "RayWorkerWrapper", "host": "10.0.0.2", "level": "ERROR", "source": "worker_base.py:464"}),
    ("(APIServer pid=77) ERROR 09-01 12:00:02 [api_server.py:1000] msg",
     {"pid": 77, "process": "APIServer", "level": "ERROR"}),
    ("(VllmWorker rank=3 pid=4242) WARNING 09-01 12:00:02 [shm_broadcast.py:466] msg",
     {"pid": 4242, "process": "VllmWorker", "rank": 3, "level": "WARN"}),
    ("(Worker_TP1 pid=90) INFO 09-01 12:00:02 [gpu_worker.py:1] msg", {"pid": 90, "process": "Worker_TP1", "level": "INFO"}),
])
def test_vllms_relay_prefixes_give_the_process(line, fields):
    env, text = unwrap(line)
    assert text == "msg"
    for k, v in fields.items():
        assert getattr(env, k) == v


def test_a_vllm_workers_error_keeps_its_process():
    ev = _events("(VllmWorkerProcess pid=2143) ERROR 08-22 06:24:42 multiproc_worker_utils.py:233] RuntimeError: NCCL error:"
                 " unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    e = [x for x in ev if x.kind == "torch.nccl_error"]
    assert len(e) == 1 and e[0].pid == 2143 and e[0].process == "VllmWorkerProcess" and e[0].level == "ERROR"


_VALUE_ERROR = ('[rank1]: Traceback (most recent call last):\n[rank1]:   File "/tmp/train.py", line 41, in main\n'
                '[rank1]:     raise ValueError("bad batch")\n[rank1]: ValueError: bad batch\n')
_AGENT_SIGTERM = ("W1201 10:00:05.000000 123 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death"
                  " signal, shutting down workers\n")


def test_lightnings_sigterm_is_read_with_its_rank():
    ev = [e for e in _events("[rank: 1] Received SIGTERM: 15\n") if e.kind == "app.lightning"]
    assert len(ev) == 1 and ev[0].rank == 1 and ev[0].fields == {"signal": "SIGTERM", "signum": 15}
    assert not [e for e in _events("Bypassing SIGTERM: 15\n") if e.kind == "app.lightning"]


@pytest.mark.parametrize("text", [
    _VALUE_ERROR + "[rank: 0] Received SIGTERM: 15\n",
    _VALUE_ERROR + _AGENT_SIGTERM,
    _VALUE_ERROR + "[rank: 0] Received SIGTERM: 15\n" + _AGENT_SIGTERM,
])
def test_a_sigterm_stands_under_the_failure_that_caused_it(text):
    d = _report(text)["diagnoses"]
    assert d[0]["id"] == "LD710" and d[0]["ranks"] == [1]
    under = {s["id"] for s in d[0].get("symptoms", [])}
    assert under & {"LD709", "LD777"} and not {x["id"] for x in d[1:]} & {"LD709", "LD777"}


def test_a_sigterm_alone_still_says_the_job_was_stopped():
    assert _report(_AGENT_SIGTERM)["diagnoses"][0]["id"] == "LD709"
    d = _report("[rank: 0] Received SIGTERM: 15\n[rank: 1] Received SIGTERM: 15\n")["diagnoses"]
    assert d[0]["id"] == "LD777" and d[0]["ranks"] == [0, 1] and d[0]["severity"] == "warning"


@pytest.mark.parametrize("line, fields, rest", [
    # SGLang's logger: the time, then the scheduler process's parallel ranks
    ("[2025-03-11 15:02:50 TP1] Scheduler hit an exception: x", {"time": "2025-03-11T15:02:50", "process": "TP1"},
     "Scheduler hit an exception: x"),
    ("[2025-03-11 15:02:50 DP1 TP3] x", {"process": "DP1 TP3"}, "x"),
    ("[2025-03-11 15:02:53] Received sigquit from a child process.", {"time": "2025-03-11T15:02:53", "process": None},
     "Received sigquit from a child process."),
    # NeMo's logger, and its debug formatter's rank
    ("[NeMo W 2024-01-01 10:00:00 nemo_logging:349] x", {"level": "WARN", "source": "nemo_logging:349", "rank": None}, "x"),
    ("[NeMo E 2024-01-01 10:00:00 exp_manager:396 rank:3] x", {"level": "ERROR", "rank": 3}, "x"),
    # torchtitan's name before Python logging's format
    ("[titan] 2024-05-01 10:11:12,345 - root - ERROR - x", {"level": "ERROR", "time": "2024-05-01T10:11:12.345"}, "x"),
    # not these: DeepSpeed's stamp with milliseconds, a bracketed word
    ("[2024-01-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] x", {"level": "ERROR", "process": None}, "x"),
    ("[titan is a name] x", {"time": None}, "[titan is a name] x"),
])
def test_framework_loggers_are_peeled(line, fields, rest):
    env, text = unwrap(line)
    assert text == rest
    for k, v in fields.items():
        assert getattr(env, k) == v


def test_an_sglang_scheduler_failure_is_read_under_its_prefix():
    text = ("[2025-03-11 15:02:50 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line'
            " 329, in NCCL_CHECK\n"
            '    raise RuntimeError(f"NCCL error: {error_str}")\n'
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n\n"
            "[2025-03-11 15:02:53] Received sigquit from a child process. It usually means the child failed.\n")
    kinds = {e.kind: e for e in _events(text)}
    assert kinds["torch.nccl_error"].fields["nccl_result"] == "ncclSystemError"
    assert kinds["framework.peer_lost"].fields == {"framework": "sglang"} and kinds["framework.peer_lost"].time == "2025-03-11T15:02:53"


def test_a_bracketed_time_before_a_bracketed_level_is_left_to_its_own_envelope():
    env, text = unwrap("[2026-12-02 09:00:00] [ERROR] RuntimeError: x")
    assert "sglang" not in env.layers
