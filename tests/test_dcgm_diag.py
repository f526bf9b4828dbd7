"""dcgmi diag's result table pasted into a thread (logdoc/classify/hostcheck.py ``dcgm_fail``) and LD863 / LD864."""
from __future__ import annotations

import pytest

from logdoc.api import explain
from logdoc.classify.hostcheck import classify_hostcheck

# DCGM Diagnostics' table as `dcgmi diag -r 1` prints it (DCGM 2.x-3.2)
DIAG = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Blacklist                 | Pass                                           |
| NVML Library              | Pass                                           |
| CUDA Main Library         | Pass                                           |
| Permissions and OS Blocks | Pass                                           |
| Persistence Mode          | Pass                                           |
| Environment Variables     | Pass                                           |
| Page Retirement/Row Remap | Pass                                           |
| Graphics Processes        | Pass                                           |
| Inforom                   | Pass                                           |
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 0 Error using CUDA API cudaDeviceGetByPCI  |
|                           | BusId Check DCGM and system logs for errors.   |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Skip - All                                     |
+---------------------------+------------------------------------------------+
"""


@pytest.mark.parametrize("line, test, gpus", [
    ("| PCIe                      | Fail - All                                     |", "PCIe", "All"),
    ("| GPU Memory                | Fail - GPU: 3                                  |", "GPU Memory", "GPU: 3"),
    ("| Persistence Mode          | Fail - GPUs: 0, 1                              |", "Persistence Mode", "GPUs: 0, 1"),
    ("| memory                    | Fail                                           |", "memory", "All"),
    ("| targeted_stress           | Fail                                           |", "targeted_stress", "All"),
])
def test_a_failed_row(line, test, gpus):
    p = classify_hostcheck(line)
    assert p is not None and p.fields == {"check": "dcgm_fail", "test": test, "gpus": gpus}


@pytest.mark.parametrize("line", [
    "| PCIe                      | Pass - All                                     |",
    "| GPU Memory                | Skip - All                                     |",
    "| Warning                   | GPU 0 Error using CUDA API cudaDeviceGetByPCI  |",
    "| login.html  | Fail - allauth container too small |",           # a markdown table of something else
    "| Unit tests                | Fail                                           |",
])
def test_other_rows_are_not_failures(line):
    assert classify_hostcheck(line) is None


@pytest.mark.parametrize("text", [
    DIAG,
    "```\n$ dcgmi diag -r 1\n" + DIAG + "```\n",                               # a markdown code block
    "".join("> " + ln + "\n" for ln in DIAG.splitlines()),                   # quoted in a reply
])
def test_the_failed_hardware_test_is_the_diagnosis(text):
    d = explain(text)["diagnoses"]
    assert d and d[0]["id"] == "LD863" and d[0]["severity"] == "error" and "PCIe" in d[0]["title"]


def test_a_failed_deployment_check_is_a_warning():
    text = DIAG.replace("| Persistence Mode          | Pass", "| Persistence Mode          | Fail - All").replace(
        "| PCIe                      | Fail - All", "| PCIe                      | Pass - All")
    d = explain(text)["diagnoses"]
    assert [(x["id"], x["severity"]) for x in d] == [("LD864", "warning")]


def test_a_table_that_passed_says_nothing():
    assert not explain(DIAG.replace("Fail - All", "Pass - All"))["diagnoses"]
