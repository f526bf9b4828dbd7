"""NCCL installed twice as the package tools list it (``pip list`` / ``pip freeze``, ``dpkg -l``, ``ldconfig -p``:
logdoc/classify/envinfo.py), analysis.context ``nccl_installs`` and LD443."""
from __future__ import annotations

import pytest

from logdoc.api import explain
from logdoc.classify.envinfo import classify_envinfo, classify_ldconfig

LDCONFIG = ("$ ldconfig -p | grep nccl\n"
            "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"
            "\tlibnccl.so.2 (libc6,x86-64) => /usr/local/nccl/lib/libnccl.so.2\n")
PACKAGES = ("$ pip list | grep nccl\nnvidia-nccl-cu12          2.20.5\n$ dpkg -l | grep nccl\n"
            "ii  libnccl2                          2.18.3-1+cuda12.2                       amd64        "
            "NVIDIA Collective Communication Library (NCCL) Runtime\n")


@pytest.mark.parametrize("line, version, source", [
    ("nvidia-nccl-cu12          2.20.5", "2.20.5", "pip nvidia-nccl-cu12"),
    ("nvidia-nccl-cu11==2.14.3", "2.14.3", "pip nvidia-nccl-cu11"),
    ("ii  libnccl2   2.18.3-1+cuda12.2   amd64   NVIDIA Collective Communication Library (NCCL) Runtime", "2.18.3",
     "dpkg libnccl2"),
])
def test_package_lines_are_releases(line, version, source):
    p = classify_envinfo(line)
    assert p is not None and p.kind == "nccl.version" and (p.fields["version"], p.fields["source"]) == (version, source)


def test_ldconfig_lines_are_one_fact_per_record():
    p = classify_ldconfig("libnccl.so.2 (libc6,x86-64) => /a/libnccl.so.2\n\tlibnccl.so.2 (libc6,x86-64) => /b/libnccl.so.2")
    assert p is not None and p.fields == {"fact": "nccl_library", "value": "/a/libnccl.so.2; /b/libnccl.so.2", "source": "ldconfig"}
    assert classify_ldconfig("libnccl.so.2 is what torch loads") is None


@pytest.mark.parametrize("line", ["nvidia-nccl-cu12 is installed", "ii  libnccl2  is fine", "nvidia-nccl-cu12==latest"])
def test_other_lines_are_not_packages(line):
    assert classify_envinfo(line) is None


@pytest.mark.parametrize("text", [
    LDCONFIG,
    PACKAGES,
    "```\n" + LDCONFIG + "```\n",                                     # a markdown code block
    "".join("> " + ln + "\n" for ln in PACKAGES.splitlines()),       # quoted in a reply
])
def test_two_installations_are_a_warning(text):
    d = explain(text)["diagnoses"]
    assert [(x["id"], x["severity"]) for x in d] == [("LD443", "warning")]


@pytest.mark.parametrize("text", [
    LDCONFIG.replace("/usr/local/nccl/lib/libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"),   # one path twice
    PACKAGES.replace("2.18.3-1", "2.20.5-1"),                                                           # one release
    "nvidia-nccl-cu12          2.20.5\n",
])
def test_one_installation_says_nothing(text):
    assert not explain(text)["diagnoses"]
