"""The versions a paste states outside NCCL's banner (logdoc/classify/envinfo.py): collect_env's facts,
its pip/conda NCCL packages, vLLM's line, a labelled torch.cuda.nccl.version() tuple."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.analysis import analyze
from logdoc.api import build_report
from logdoc.classify.envinfo import classify_envinfo
from logdoc.pipeline import parse_sources

# torch/utils/collect_env.py's env_info_fmt, as `python -m torch.utils.collect_env` prints it
COLLECT_ENV = """Collecting environment information...
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.3 LTS (x86_64)
Python version: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB
Nvidia driver version: 535.104.05
cuDNN version: Could not collect

Versions of relevant libraries:
[pip3] numpy==1.24.1
[pip3] nvidia-nccl-cu12==2.19.3
[pip3] torch==2.1.0+cu121
[conda] pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch
"""


def _events(text: str):
    return parse_sources([("x.log", text)]).events


def test_collect_env_lines_are_facts():
    evs = _events(COLLECT_ENV)
    facts = {e.fields["fact"]: e.fields["value"] for e in evs if e.kind == "env.fact"}
    assert facts == {"torch_version": "2.1.0+cu121", "torch_cuda": "12.1",
                     "gpu": "GPU 0: NVIDIA A100-SXM4-80GB", "driver_version": "535.104.05", "cuda_available": "True"}
    nv = [e for e in evs if e.kind == "nccl.version"]
    assert [(e.fields["version"], e.fields["source"]) for e in nv] == [("2.19.3", "pip nvidia-nccl-cu12")]


@pytest.mark.parametrize("line, version, source", [
    ("[pip3] nvidia-nccl-cu12==2.18.1", "2.18.1", "pip nvidia-nccl-cu12"),
    ("[pip] nvidia-nccl-cu11==2.14.3", "2.14.3", "pip nvidia-nccl-cu11"),
    ("[conda] nccl                      2.18.3.1             h12f7317_0    conda-forge", "2.18.3", "conda nccl"),
    ("[conda] nvidia-nccl-cu12          2.20.5                   pypi_0    pypi", "2.20.5", "conda nvidia-nccl-cu12"),
    ("INFO 05-10 12:00:00 pynccl.py:63] vLLM is using nccl==2.21.5", "2.21.5", "vllm"),
    ("(VllmWorkerProcess pid=123) INFO 05-10 12:00:00 pynccl.py:63] vLLM is using nccl==2.20.5", "2.20.5", "vllm"),
    ("torch.cuda.nccl.version(): (2, 18, 1)", "2.18.1", "torch.cuda.nccl.version()"),
    ("2.1.0+cu121 12.1 torch.cuda.nccl.version() (2, 18, 1)", "2.18.1", "torch.cuda.nccl.version()"),
    ("NCCL version: (2, 21, 5)", "2.21.5", "torch.cuda.nccl.version()"),
])
def test_a_stated_nccl_release(line, version, source):
    p = classify_envinfo(line)
    assert p is not None and p.kind == "nccl.version"
    assert (p.fields["version"], p.fields["source"]) == (version, source)


@pytest.mark.parametrize("line", [
    "(2, 18, 1)",                                  # a tuple with no label is anything
    "shape: (2, 18, 1)",
    "[pip3] torch==2.1.0+cu121",
    "[pip3] nvidia-cudnn-cu12==8.9.2.26",
    "[conda] nccl-tests 2.13.8 h1234 conda-forge",
    "PyTorch version: N/A",
    "Nvidia driver version: Could not collect",
    "GPU models and configuration: ",
    "Python version: 3.10.12",
    "vLLM is using nccl==",
])
def test_not_a_stated_version(line):
    assert classify_envinfo(line) is None


def test_a_stated_release_is_no_rank_that_disagrees():
    # the ranks' banners say 2.18.1; the package list (perhaps of another machine) says 2.19.3
    files = {"env.txt": COLLECT_ENV,
             "rank0.log": "node1:100:100 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n",
             "rank1.log": "node2:200:200 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"}
    res = parse_sources(list(files.items()))
    a = analyze(res.events, list(res.files))
    assert not [e for e in a.synthetic if e.kind == "analysis.version_mismatch"]
    # the same two banners disagreeing are still reported
    files["rank1.log"] = files["rank1.log"].replace("2.18.1", "2.19.3")
    res = parse_sources(list(files.items()))
    a = analyze(res.events, list(res.files))
    assert [e.fields["versions"] for e in a.synthetic
            if e.kind == "analysis.version_mismatch" and e.fields["component"] == "nccl"] == [["2.18.1", "2.19.3"]]


def _ids(text: str) -> set:
    return {d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]}


def test_a_version_gated_rule_reads_the_stated_release():
    warn = "compute-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4\n"
    assert "LD122" not in _ids(warn)
    assert "LD122" in _ids(COLLECT_ENV + warn)
    assert "LD122" not in _ids(COLLECT_ENV.replace("2.19.3", "2.18.1") + warn)
