"""The CUDA build against the driver as a paste shows both (collect_env's ``CUDA used to build PyTorch``, nvcc's
release, nvidia-smi's ``CUDA Version``: analysis.context ``cuda_driver``, LD865 / LD866), collect_env's ``Is CUDA
available: False`` (LD867), and nvidia-smi's table pasted whole (its header and an ERR! row)."""
from __future__ import annotations

import pytest

from logdoc.analysis import analyze
from logdoc.api import explain
from logdoc.classify.envinfo import classify_envinfo
from logdoc.pipeline import parse_text

SMI = """\
Thu Dec  4 10:00:00 2026
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |
| N/A   33C    P0    61W / 400W |      0MiB / 81920MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


@pytest.mark.parametrize("line, fact, value", [
    ("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |", "driver_cuda", "12.2"),
    ("| NVIDIA-SMI 570.86.15              Driver Version: 570.86.15      CUDA Version: 12.8     |", "driver_cuda", "12.8"),
    ("Cuda compilation tools, release 12.4, V12.4.131", "nvcc_cuda", "12.4"),
    ("Is CUDA available: False", "cuda_available", "False"),
])
def test_the_facts_are_read(line, fact, value):
    p = classify_envinfo(line)
    assert p is not None and p.kind == "env.fact" and (p.fields["fact"], p.fields["value"]) == (fact, value)


@pytest.mark.parametrize("line", [
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    "CUDA Version: 12.2",                       # the header's field alone says nothing of what it belongs to
    "Cuda compilation tools are not installed",
])
def test_other_lines_are_not_facts(line):
    p = classify_envinfo(line)
    assert p is None or p.fields.get("fact") not in ("driver_cuda", "nvcc_cuda")


def _cuda_driver(text: str) -> list[dict]:
    res = parse_text(text)
    return [e.fields for e in analyze(res.events, list(res.files)).synthetic
            if e.kind == "analysis.context" and e.fields.get("aspect") == "cuda_driver"]


@pytest.mark.parametrize("built, driver, major", [("12.4", "12.2", False), ("12.1", "11.4", True), ("11.8", "11.7", False)])
def test_a_build_newer_than_the_driver(built, driver, major):
    text = f"CUDA used to build PyTorch: {built}\n\n" + SMI.replace("CUDA Version: 12.2", f"CUDA Version: {driver}")
    got = _cuda_driver(text)
    assert [(f["built"], f["driver"], f["major"], f["built_by"]) for f in got] == [(built, driver, major, "PyTorch")]
    ids = [d["id"] for d in explain(text)["diagnoses"]]
    assert ids[0] == ("LD865" if major else "LD866")


@pytest.mark.parametrize("text", [
    "CUDA used to build PyTorch: 12.1\n\n" + SMI,                       # older build: supported
    "CUDA used to build PyTorch: 12.2\n\n" + SMI,                       # the same release
    "CUDA used to build PyTorch: 12.4\n",                               # only one side in the paste
    SMI,
])
def test_no_finding_without_both_sides_or_with_an_older_build(text):
    assert _cuda_driver(text) == []


def test_nvcc_stands_for_the_build_when_collect_env_is_not_there():
    text = "```\n$ nvcc --version\nCuda compilation tools, release 12.4, V12.4.131\n```\n```\n" + SMI + "```\n"
    assert [(f["built"], f["built_by"]) for f in _cuda_driver(text)] == [("12.4", "nvcc")]


def test_cuda_not_available_is_a_warning():
    text = "PyTorch version: 2.3.0+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\nIs CUDA available: False\n"
    d = explain(text)["diagnoses"]
    assert [(x["id"], x["severity"]) for x in d] == [("LD867", "warning")] and "2.3.0+cpu" in d[0]["title"]
    assert not explain(text.replace("available: False", "available: True"))["diagnoses"]


@pytest.mark.parametrize("wrap", [lambda t: t, lambda t: "```\n" + t + "```\n", lambda t: "".join("> " + ln + "\n" for ln in t.splitlines())])
def test_an_err_row_in_a_pasted_table_is_read(wrap):
    text = wrap(SMI.replace("|                    0 |\n", "|                 ERR! |\n"))
    d = explain(text)["diagnoses"]
    assert d and d[0]["id"] == "LD893"
