"""Open MPI's launcher ending the job after a process's non-zero exit (logdoc/classify/frameworks.py): the
``Primary job  terminated normally, but 1 process returned`` and ``mpirun detected that one or more processes exited
with non-zero status`` banners and the ``Process name: [[job,step],rank]`` line, and LD743 on them."""
from __future__ import annotations

import pytest

from logdoc.api import explain
from logdoc.classify.frameworks import classify_framework
from logdoc.pipeline import parse_text

# orte/mca/errmgr/default_hnp/errmgr_default_hnp.c and mpirun's help text, as Open MPI 4.x prints them
BANNER = """\
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[56171,1],6]
  Exit code:    3
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize("line, fields", [
    ("mpirun detected that one or more processes exited with non-zero status, thus causing",
     {"framework": "open-mpi", "nonzero_exit": True, "tool": "mpirun"}),
    ("mpiexec detected that one or more processes exited with non-zero status,",    # a mail client's wrap
     {"framework": "open-mpi", "nonzero_exit": True, "tool": "mpiexec"}),
    ("Primary job  terminated normally, but 1 process returned", {"framework": "open-mpi", "nonzero_exit": True, "count": 1}),
    ("Child job 2 terminated normally, but 2 processes returned", {"framework": "open-mpi", "nonzero_exit": True, "count": 2}),
    ("Process name: [[41364,1],4]", {"framework": "open-mpi", "exited_rank": 4, "mpi_job": "41364,1"}),
])
def test_each_line_of_the_banner(line, fields):
    p = classify_framework(line)
    assert p is not None and p.kind == "framework.peer_lost" and p.fields == fields


@pytest.mark.parametrize("line", [
    "the job completed normally and no process returned a non-zero exit code",
    "mpirun noticed that process rank 0 with PID 18900 on node n1 exited on signal 9 (Killed).",
    "Process name: worker-3",
    "Some processes exited with non-zero status, thus causing a retry",
])
def test_other_lines_are_not_the_banner(line):
    p = classify_framework(line)
    assert p is None or not p.fields.get("nonzero_exit") and "exited_rank" not in p.fields


@pytest.mark.parametrize("text", [
    BANNER,
    "```\n" + BANNER + "```\n",                                            # a markdown code block
    "".join("> " + ln + "\n" for ln in BANNER.splitlines()),               # quoted in a reply
    "".join("[login01] " + ln + "\n" for ln in BANNER.splitlines()),      # under a repeated prefix
])
def test_the_banner_names_the_first_process_to_exit(text):
    d = explain(text)["diagnoses"]
    assert d and d[0]["id"] == "LD743" and d[0]["category"] == "peer_process_died"
    assert "rank 6" in d[0]["title"]


def test_the_process_own_error_comes_before_the_banner():
    text = ("[1,6]<stderr>:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
            "(GPU 6; 79.15 GiB total capacity)\n" + BANNER)
    cats = [d["category"] for d in explain(text)["diagnoses"]]
    assert cats[0] == "cuda_oom"
