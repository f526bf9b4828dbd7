"""A fatal signal as each printer reports it: the shell's job status, Python's faulthandler, Abseil's
and glog's failure-signal banners, UCX's handler. Each is one ``process.signal`` event with the signal's
number, so one rule per signal reads them all (SIGBUS: /dev/shm; SIGSEGV: a native crash; SIGABRT: the
end of an earlier error)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _events(text: str):
    return [e for e in parse_sources([("x.log", text)]).events if e.kind == "process.signal"]


def _top(text: str) -> str | None:
    d = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return d[0]["id"] if d else None


@pytest.mark.parametrize("line, signal, printer", [
    ("Bus error (core dumped)", 7, "the shell"),
    ("Segmentation fault", 11, "the shell"),
    ("Aborted (core dumped)", 6, "the shell"),
    ("/var/spool/slurmd/job00042/slurm_script: line 9:  4100 Segmentation fault      (core dumped) python train.py",
     11, "the shell"),
    ("bash: line 1:  4100 Bus error               (core dumped) torchrun --nproc_per_node 8 train.py", 7, "the shell"),
    ("zsh: floating point exception (core dumped)  python train.py", 8, "the shell"),
    ("Fatal Python error: Illegal instruction", 4, "Python's faulthandler"),
    ("*** SIGBUS received at time=1764600000 on cpu 7 ***", 7, "Abseil's failure signal handler"),
    ("*** SIGSEGV (@0x0) received by PID 4100 (TID 0x7f3a2c1ff700) from PID 0; stack trace: ***", 11,
     "glog's signal handler"),
    ("[node1:4100:0:4120] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)",
     11, "UCX's signal handler"),
    # Open MPI's launcher (prterun from 5.0) on a task a signal ended (srun's reports are logdoc.stops')
    ("mpirun noticed that process rank 1 with PID 4321 on node gpu02 exited on signal 7 (Bus error).", 7, "mpirun"),
    ("prterun noticed that process rank 0 with PID 0 on node gpu01 exited on signal 11 (Segmentation fault).", 11,
     "prterun"),
])
def test_each_printer_gives_the_signal_number(line, signal, printer):
    (e,) = _events(line + "\n")
    assert e.fields["signal"] == signal and e.fields["printer"] == printer


def test_the_shell_names_the_pid_and_the_command():
    (e,) = _events("run.sh: line 3:  4100 Segmentation fault      (core dumped) python train.py --bs 8\n")
    assert e.fields["signal_pid"] == 4100 and e.fields["command"] == "python train.py --bs 8"


@pytest.mark.parametrize("line", [
    "Aborted by the user",                       # a sentence that starts with a signal's text
    "A Segmentation fault happened in the test",
    "segmentation fault",                        # lower case is zsh's, and only after `zsh: `
    "Bus error detected by the self test, retrying",
    "*** SIGTERM received at time=1764600000 on cpu 3 ***",   # not a crash: the job was stopped
    # SIGKILL and SIGTERM from a launcher are the job stopped from outside (logdoc.stops), not a crash
    "mpirun noticed that process rank 3 with PID 0 on node node2 exited on signal 9 (Killed).",
    "srun: error: node3: task 5: Killed",
    "srun: error: node3: task 5: Exited with exit code 1",
])
def test_near_misses_are_not_signal_reports(line):
    assert _events(line + "\n") == []


@pytest.mark.parametrize("line, rule", [
    ("Bus error (core dumped)", "LD370"),
    ("Segmentation fault (core dumped)", "LD760"),
    ("Illegal instruction (core dumped)", "LD762"),
    ("mpirun noticed that process rank 1 with PID 4321 on node gpu02 exited on signal 7 (Bus error).", "LD370"),
])
def test_one_rule_per_signal_whoever_printed_it(line, rule):
    assert _top(line + "\n") == rule


def test_an_abort_after_a_watchdog_timeout_is_its_symptom():
    log = ("[rank1]:[E1201 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
           "ran for 600010 milliseconds before timing out.\n"
           "Aborted (core dumped)\n")
    d = build_report(parse_sources([("x.log", log)]), kb.load_rules())["diagnoses"]
    assert d[0]["id"] != "LD761" and d[0]["category"] == "collective_timeout_hung_rank"
    assert all(x["role"] == "symptom" for x in d if x["id"] == "LD761")
