"""The versions a log shows, from every line that names one (logdoc/analysis/disagreements.py: versions):
NCCL's banner, and the NCCL version PyTorch prints in its errors, also where another message quotes
that error; PyTorch up to 1.10 misprinted NCCL 2.9+ (21.0.3 for 2.10.3), which is read as the release."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources

_QUOTED = [
    "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: NCCL error: "
    "unhandled system error, NCCL version {v}",
    "[rank1]:[E ProcessGroupNCCL.cpp:1182] [Rank 1] NCCL watchdog thread terminated with exception: NCCL error: "
    "remote process exited or there was a network error, NCCL version {v}",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system "
    "error, NCCL version {v}",
]


def _report(files: dict[str, str]) -> dict:
    return build_report(parse_sources(list(files.items())), kb.load_rules())


@pytest.mark.parametrize("line", _QUOTED)
@pytest.mark.parametrize("printed, release", [("21.0.3", "2.10.3"), ("21.2.10", "2.12.10"), ("2.14.3", "2.14.3")])
def test_the_nccl_version_a_torch_error_names_is_the_release(line, printed, release):
    r = _report({"rank1.log": line.format(v=printed) + "\n"})
    assert list(r["job"]["versions"]["nccl"]) == [release]


@pytest.mark.parametrize("line", _QUOTED)
def test_a_misprinted_version_is_no_disagreement_with_the_banner_of_its_release(line):
    files = {"rank1.log": line.format(v="21.0.3") + "\n",
             "rank0.log": "node2:99:99 [0] NCCL INFO NCCL version 2.10.3+cuda11.3\n"}
    r = _report(files)
    assert "LD402" not in [d["id"] for d in r["diagnoses"]]
    files["rank0.log"] = "node2:99:99 [0] NCCL INFO NCCL version 2.12.12+cuda11.3\n"
    r = _report(files)
    assert [d["id"] for d in r["diagnoses"]][:1] == ["LD402"], [d["id"] for d in r["diagnoses"]]
