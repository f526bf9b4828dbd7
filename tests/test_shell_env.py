"""NCCL settings as a shell prints them (``env | grep NCCL``, ``printenv``, ``export -p``, a script's ``export``):
``nccl.env`` with ``source: shell`` (logdoc/classify/envinfo.py), read by the rules on a setting and left out of
the comparison of settings across ranks."""
from __future__ import annotations

import pytest

from logdoc.analysis import analyze
from logdoc.api import explain
from logdoc.classify.envinfo import classify_envinfo
from logdoc.pipeline import parse_text


@pytest.mark.parametrize("line, name, value", [
    ("NCCL_IB_DISABLE=1", "NCCL_IB_DISABLE", "1"),
    ("NCCL_SOCKET_IFNAME=^docker0,lo", "NCCL_SOCKET_IFNAME", "^docker0,lo"),
    ('declare -x NCCL_P2P_DISABLE="1"', "NCCL_P2P_DISABLE", "1"),
    ("export NCCL_DEBUG=INFO", "NCCL_DEBUG", "INFO"),
    ("export NCCL_IB_HCA='mlx5_0:1,mlx5_1:1'", "NCCL_IB_HCA", "mlx5_0:1,mlx5_1:1"),
])
def test_a_shell_line_is_a_setting(line, name, value):
    p = classify_envinfo(line)
    assert p is not None and p.kind == "nccl.env"
    assert p.fields == {"name": name, "value": value, "from_environment": True, "source": "shell"}


@pytest.mark.parametrize("line", [
    "NCCL_DEBUG=INFO torchrun --nproc_per_node=8 train.py",   # a command run with the setting, not the setting's line
    "# export NCCL_IB_DISABLE=1",                              # commented out
    "NCCL_SOCKET_IFNAME=",                                     # set to nothing
    "NCCL_IB_DISABLE=$IB_OFF",                                 # the script's variable, not its value
    "export NCCL_IB_DISABLE=1 && python train.py",
    "NCCL_IB_DISABLE set by environment to 1.",                # NCCL's own line (logdoc/nccl.py reads it)
    "MY_NCCL_IB_DISABLE=1",
])
def test_other_lines_are_not_shell_settings(line):
    p = classify_envinfo(line)
    assert p is None or p.fields.get("source") != "shell"


@pytest.mark.parametrize("text", [
    "$ env | grep NCCL\nNCCL_SOCKET_IFNAME=eth0\nNCCL_IB_DISABLE=1\n",
    "```\n$ printenv | grep NCCL\nNCCL_SOCKET_IFNAME=eth0\nNCCL_IB_DISABLE=1\n```\n",        # a markdown code block
    "[1,0]<stdout>:NCCL_SOCKET_IFNAME=eth0\n[1,0]<stdout>:NCCL_IB_DISABLE=1\n",            # mpirun --tag-output
])
def test_the_settings_are_read_in_a_paste(text):
    got = [(e.fields["name"], e.fields["value"]) for e in parse_text(text).events if e.kind == "nccl.env"]
    assert got == [("NCCL_SOCKET_IFNAME", "eth0"), ("NCCL_IB_DISABLE", "1")]


def test_the_rules_on_a_setting_read_the_shells_lines():
    report = explain("$ env | grep NCCL\nNCCL_IB_DISABLE=1\nNCCL_P2P_DISABLE=1\n")
    assert not report["diagnoses"]   # settings alone are no failure
    assert {"LD212", "LD404"} <= {n["id"] for n in report["notes"]}


def test_a_shell_printout_is_not_a_rank_that_disagrees():
    # two ranks print NCCL_IB_DISABLE as NCCL reads it; the shell's printout beside them is no third process
    text = ("$ env | grep NCCL\nNCCL_SOCKET_IFNAME=eth0\n"
            "node1:100:100 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
            "node2:200:200 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n")
    res = parse_text(text)
    kinds = [e.kind for e in analyze(res.events, list(res.files)).synthetic]
    assert "analysis.env_disagreement" not in kinds
