"""The cause above its symptoms, whatever the order of the lines (issue 13, knowledge/README.md's
"Order of diagnoses"). Each principle is tested on a small log in both orders of appearance.

* A launcher's summary that a worker exited (torchrun's "exited with code 1", with SIGABRT or SIGTERM,
  Open MPI's "a process exited with a non-zero status"; a rule with
  ``explained_by``: logdoc/kb/specificity.py's ``explained``) ranks after the worker's own report,
  even when that report is itself a symptom (a watchdog timeout, a peer's exit) and even when the
  summary comes first in the paste.
* A traceback cut before its exception line (LD772) beside a named error of the same process (an NCCL
  WARN, a CUDA error) is that error's traceback: it is no cause of its own and comes after it. A cut
  traceback of another rank is still a cause (that rank's exception may be what the others waited for).
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.kb.specificity import explained
from logdoc.pipeline import parse_sources

TORCHRUN_EXIT_1 = """\
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_17:06:38
  host      : node3
  rank      : 5 (local_rank: 1)
  exitcode  : 1 (pid: 21812)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
WORKER_REPORTS = {
    # a symptom of the worker's own: the collective it waited in timed out
    "watchdog": ("[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=67, OpType=ALLREDUCE, "
                 "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.\n",
                 "collective_timeout_hung_rank"),
    # a symptom of the worker's own: NCCL saw a peer leave
    "remote": ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
               "remote process exited or there was a network error, NCCL version 2.18.6\n", "peer_process_died"),
    # a symptom of the worker's own: the socket to a peer closed
    "closed": ("node3:21812:21900 [1] misc/socket.cc:50 NCCL WARN Net : Connection closed by remote peer node1<33123>\n",
               "peer_process_died"),
}


@pytest.fixture(scope="module")
def rules():
    return kb.load_rules()


def _report(sources, rules) -> list[dict]:
    return build_report(parse_sources(list(sources)), rules)["diagnoses"]


@pytest.mark.parametrize("report", sorted(WORKER_REPORTS))
@pytest.mark.parametrize("summary_first", [True, False])
def test_torchruns_exit_summary_ranks_after_the_workers_own_report_in_one_paste(rules, report, summary_first):
    text, category = WORKER_REPORTS[report]
    log = TORCHRUN_EXIT_1 + text if summary_first else text + TORCHRUN_EXIT_1
    ds = _report([("job.log", log)], rules)
    assert ds[0]["category"] == category, [d["id"] for d in ds]
    assert "LD707" in [d["id"] for d in ds[1:]] + [s["id"] for d in ds for s in d.get("symptoms") or ()]


@pytest.mark.parametrize("agent_file", ["a_agent.log", "z_agent.log"])
def test_torchruns_exit_summary_ranks_after_the_workers_own_report_in_another_file(rules, agent_file):
    text, category = WORKER_REPORTS["watchdog"]
    ds = _report([(agent_file, TORCHRUN_EXIT_1), ("m_rank5.log", text)], rules)
    assert ds[0]["category"] == category, [d["id"] for d in ds]


def test_the_summary_alone_still_leads(rules):
    assert _report([("job.log", TORCHRUN_EXIT_1)], rules)[0]["id"] == "LD707"


ABORTED_ITSELF = ("[rank5]:[E1129 17:06:31.000000000 ProcessGroupNCCL.cpp:627] [Rank 5] To avoid data inconsistency, "
                  "we are taking the entire process down.\n")


@pytest.mark.parametrize("signal, rule", [("-6", "LD704"), ("-15", "LD703")])
@pytest.mark.parametrize("summary_first", [True, False])
def test_a_signal_exit_summary_ranks_after_the_workers_report_of_why(rules, signal, rule, summary_first):
    # c10d's watchdog took the process down (SIGABRT), or torchrun stopped it (SIGTERM): the worker's
    # own line says why; torchrun's table only that it exited
    name = {"-6": "SIGABRT", "-15": "SIGTERM"}[signal]
    summary = (TORCHRUN_EXIT_1.replace("exitcode  : 1 ", f"exitcode  : {signal} ")
               .replace("traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                        f"traceback : Signal {signal[1:]} ({name}) received by PID 21812"))
    ds = _report([("job.log", summary + ABORTED_ITSELF if summary_first else ABORTED_ITSELF + summary)], rules)
    ids = [d["id"] for d in ds]
    assert ids[0] == "LD513" and rule in ids, ids


CUT_TRACEBACK = """\
Traceback (most recent call last):
  File "/workspace/train.py", line 41, in main
    trainer.fit(model)
  File "/workspace/trainer.py", line 120, in fit
    self.step(batch)
"""
SAME_PROCESS = {
    # a symptom-level NCCL WARN (its proxy failed to connect), no root cause in the log
    "proxy": ("node1:1234:1300 [0] proxy.cc:1513 NCCL WARN [Proxy Service 0] Failed to execute operation Connect "
              "from rank 0, retcode 3\n", "peer_process_died"),
    # a named CUDA failure
    "cuda": ("node1:1234:1300 [0] transport/p2p.cc:275 NCCL WARN Cuda failure 'invalid argument'\n", "cuda_error_other"),
}


@pytest.mark.parametrize("error", sorted(SAME_PROCESS))
@pytest.mark.parametrize("cut_first", [True, False])
def test_a_cut_traceback_beside_a_named_error_of_its_process_comes_after_it(rules, error, cut_first):
    text, category = SAME_PROCESS[error]
    ds = _report([("job.log", CUT_TRACEBACK + text if cut_first else text + CUT_TRACEBACK)], rules)
    assert ds[0]["category"] == category, [d["id"] for d in ds]
    assert all(d["id"] != "LD772" or d["role"] == "symptom" for d in ds)


def test_a_cut_traceback_of_another_rank_is_still_a_cause(rules):
    cut = "".join(f"[rank0]:{line}\n" for line in CUT_TRACEBACK.splitlines())
    watchdog = WORKER_REPORTS["watchdog"][0].replace("[Rank 5]", "[Rank 1]")
    ds = _report([("rank0.log", cut), ("rank1.log", watchdog)], rules)
    assert ds[0]["id"] == "LD772", [d["id"] for d in ds]


# the launcher's own traceback cut before the ChildFailedError it raises (hiyouga/LlamaFactory#163, under `accelerate test`'s
# `stderr: ` prefix): the worker that exited is the finding, not an error of the program's code
LAUNCHER_CUT = """\
stderr: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 7 (pid: 153932) of binary: /usr/bin/python
stderr: Traceback (most recent call last):
stderr:   File "/home/u/miniconda3/tools/bin/accelerate-launch", line 8, in <module>
stderr:     sys.exit(main())
stderr:   File "/home/u/miniconda3/tools/lib/python3.9/site-packages/accelerate/commands/launch.py", line 646, in multi_gpu_launcher
stderr:     distrib_run.run(args)
stderr:   File "/home/u/miniconda3/tools/lib/python3.9/site-packages/torch/distributed/run.py", line 785, in run
stderr:     elastic_launch(
"""


@pytest.mark.parametrize("prefix", ["stderr: ", ""])
def test_a_launchers_own_cut_traceback_is_no_program_error(rules, prefix):
    ds = _report([("job.log", LAUNCHER_CUT.replace("stderr: ", prefix))], rules)
    assert ds and ds[0]["id"] == "LD730" and "LD772" not in [d["id"] for d in ds], [d["id"] for d in ds]


def _diag(rule_id, kind, severity="error", role="symptom", explained_by=None):
    rule = SimpleNamespace(data={"explained_by": explained_by} if explained_by else {})
    return SimpleNamespace(rule_id=rule_id, role=role, severity=severity,
                           matches=[SimpleNamespace(rule=rule, event=SimpleNamespace(kind=kind, rank=None, file="a.log"))])


def test_explained_needs_a_failure_report_of_a_named_kind():
    summary = _diag("S", "torchrun.child_failed", explained_by=["torch.*"])
    assert explained([summary, _diag("W", "torch.watchdog_timeout")]) == {"S"}
    # a note, an info finding, a kind not named: no explanation
    assert explained([summary, _diag("W", "torch.watchdog_timeout", role="context")]) == set()
    assert explained([summary, _diag("W", "torch.watchdog_timeout", severity="info")]) == set()
    assert explained([summary, _diag("W", "nccl.warn")]) == set()
    # two summaries do not explain each other
    other = _diag("T", "torch.exception", explained_by=["torchrun.*"])
    assert explained([summary, other]) == set()


def test_explained_in_the_same_process_only_when_its_scope_is_rank():
    def at(d, rank, file="a.log"):
        d.matches[0].event.rank, d.matches[0].event.file = rank, file
        return d

    cut = at(_diag("C", "torch.exception", role="root_cause", explained_by={"kind": ["nccl.*"], "scope": "rank"}), 0)
    assert explained([cut, at(_diag("N", "nccl.warn"), 0)]) == {"C"}
    assert explained([cut, at(_diag("N", "nccl.warn"), 1)]) == set()
    # ranks unknown: the same file is the same process
    cut = at(cut, None)
    assert explained([cut, at(_diag("N", "nccl.warn"), None)]) == {"C"}
    assert explained([cut, at(_diag("N", "nccl.warn"), None, "b.log")]) == set()


def test_explained_by_must_be_a_list_of_kinds():
    from logdoc.kb.validate import build_rule

    base = {"id": "LD999", "category": "user_code_exception", "severity": "error", "role": "symptom",
            "title": "t", "match": {"kind": "torchrun.child_failed"}, "explanation": "e", "fix": ["f"],
            "confirm": ["c"]}
    _, problems = build_rule(dict(base, explained_by=["torch.*"]))
    assert not any("explained_by" in str(p) for p in problems)
    _, problems = build_rule(dict(base, explained_by={"kind": ["nccl.*"], "scope": "rank"}))
    assert not any("explained_by" in str(p) for p in problems)
    for bad in ("torch.*", [], [3], {"kind": ["nccl.*"], "scope": "host"}, {"kinds": ["nccl.*"]}):
        _, problems = build_rule(dict(base, explained_by=bad))
        assert any("explained_by" in str(p) for p in problems), bad


def test_an_error_a_message_reports_leads_a_rules_warning_about_the_abort_after_it(rules):
    # facebookarchive/caffe2#360: Gloo's connect refused (before 2018: the enforce on getsockopt's SO_ERROR, read as
    # the catalog's connect error) under mpirun, then the SIGABRT mpirun reported; only symptoms, and the abort
    # (LD761, a warning) led the error it is the end of
    log = ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
           "  what():  [enforce fail at /home/u/gloo/gloo/transport/tcp/pair.cc:498] optval == 0. 111 vs 0. "
           "SO_ERROR: Connection refused\n"
           "--------------------------------------------------------------------------\n"
           "mpirun noticed that process rank 1 with PID 29013 on node 172.17.27.12 exited on signal 6 (Aborted).\n")
    ds = _report([("job.log", log)], rules)
    assert ds[0]["id"] == "catalog:logdoc:gloo:connect-error", [d["id"] for d in ds]
    assert "LD761" in [d["id"] for d in ds]
