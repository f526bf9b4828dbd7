"""The NCCL version a PyTorch error quotes (``..., NCCL version 2.25.1``) is an ``nccl.version`` event of
its own, nested in the error: the rules gated on a version and the comparison of versions see it as they
see NCCL's banner."""
from __future__ import annotations

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources

WARN = "node1:1234:1290 [0] include/alloc.h:56 NCCL WARN Cuda failure 2 'out of memory'\n"
ERROR = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
         "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version {v}\n")


def _events(text: str):
    return parse_sources([("rank0.log", text)]).events


def _first(text: str) -> str:
    return build_report(parse_sources([("rank0.log", text)]), kb.load_rules())["diagnoses"][0]["id"]


def test_the_quoted_version_is_an_event_nested_in_the_error():
    evs = _events(ERROR.format(v="2.25.1"))
    (ver,) = [e for e in evs if e.kind == "nccl.version"]
    assert ver.fields["version"] == "2.25.1" and ver.fields["nested_kind"] == "torch.nccl_error"
    assert ver.rank == 0 and ver.line == 1


def test_pytorch_up_to_1_10_misprinted_release_is_the_real_one():
    # PyTorch <= 1.10 printed NCCL 2.10.3 as 21.0.3 (its version code split wrongly)
    evs = _events("RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, "
                  "unhandled system error, NCCL version 21.0.3\n")
    assert [e.fields["version"] for e in evs if e.kind == "nccl.version"] == ["2.10.3"]


def test_no_version_no_event():
    evs = _events("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error\n")
    assert not [e for e in evs if e.kind == "nccl.version"]



def test_a_version_gated_rule_reads_the_quoted_version():
    # LD415: the cuMem host allocation of NCCL 2.24-2.26.2 (no fallback before 2.26.3) holds with the version
    # a PyTorch error quotes, as with NCCL's banner, and not with a fixed release
    rules = kb.load_rules()

    def ids(v: str) -> set[str]:
        return {m.rule.id for m in rules.match(parse_sources([("rank0.log", WARN + ERROR.format(v=v))]).events)}

    assert "LD415" in ids("2.25.1")
    assert "LD415" not in ids("2.27.3")
