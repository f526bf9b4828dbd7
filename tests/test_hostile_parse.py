"""Hostile and damaged input at the parse level: regressions found by fuzzing, and properties that
hold for any text (no exception escapes, every line is counted once)."""
from __future__ import annotations

import time

import pytest

from logdoc.classify import torch as torchlines
from logdoc.pipeline import parse_text


def _accounted(stats) -> None:
    assert stats.lines_read == stats.irrelevant + stats.relevant, stats
    assert stats.relevant == stats.understood + stats.not_understood, stats


# --- regressions found by tools/fuzz.py -------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Traceback (most recent call last)\t:",            # no real head: used to recurse without end
    "Traceback (most recent call last)",
    "RuntimeError: " * 2000 + "x",                      # exception messages quoting exceptions
    "ValueError: RuntimeError: " * 500 + "NCCL error in: x.cpp:1, unhandled system error",
], ids=["tb-no-colon", "tb-bare", "exc-x2000", "exc-nccl-x500"])
def test_nested_messages_do_not_recurse_without_end(text):
    t0 = time.process_time()
    torchlines.classify(text)                          # must not raise RecursionError
    res = parse_text(text)
    _accounted(res.stats)
    assert time.process_time() - t0 < 2


def test_traceback_without_head_is_not_invented():
    assert torchlines.classify("Traceback (most recent call last)\t:") is None
    p = torchlines.classify("RuntimeError: RuntimeError: x")
    assert p is not None and p.fields["exc_type"] == "RuntimeError"


def test_long_line_before_an_nccl_header_is_linear():
    """HEADER.search used to rescan a run of host characters from every position: 100 KB took 100 s."""
    from logdoc import nccl
    from logdoc.events import Envelope

    for text in ("a" * 200_000 + " NCCL INFO x", "a" * 200_000 + ":1:2 NCCL INFO x", "[x]" * 60_000 + " NCCL WARN y"):
        t0 = time.process_time()
        nccl.classify(text, Envelope())
        assert time.process_time() - t0 < 0.5
    env = Envelope()
    p = nccl.classify("junk]node-1:12:34 [0] NCCL INFO Using network IB", env)
    assert p is not None and env.host == "node-1" and env.pid == 12
    env = Envelope()
    assert nccl.classify("prefix text dgx1:7:8 [3] NCCL INFO Using network Socket", env).kind == "nccl.using_network"
    assert env.host == "dgx1"


HUGE = "1" * 5000


@pytest.mark.parametrize("line", [
    "[rank" + HUGE + "]: Traceback x",
    "[rank" + HUGE + "]:[E1129 17:01:53.685814139 ProcessGroupGloo.cpp:67] NCCL error",
    HUGE + ": NCCL WARN x",
    "host:" + HUGE + ":1 [0] NCCL INFO x",
    "host:1:1 [" + HUGE + "] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + HUGE
    + ", OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
    "[1," + HUGE + "]<stdout>: NCCL WARN x",
    "(Worker pid=" + HUGE + ") NCCL WARN",
    "E1129 17:01:53.685814 " + HUGE + " x.py:1] NCCL",
    "[/x/gloo/transport/tcp/pair.cc:538] Connection closed by peer [127.0.0.1]:" + HUGE,
], ids=["tee", "c10", "srun", "nccl-pid", "nccl-dev", "worknccl", "openmpi", "ray", "glog", "gloo-port"])
def test_numbers_too_long_for_int_are_not_parsed(line):
    """int() refuses more than 4300 digits (ValueError): such text is left unparsed, not fatal."""
    res = parse_text(line + "\n" + line)
    _accounted(res.stats)
    assert res.events == []


def test_long_records_are_not_learned_as_shapes():
    """The grammar cache compiles one group per token: a 50,000-token record took 5 s to compile.
    A record of more than MAX_LEARN_TOKENS tokens is parsed, never compiled into a shape."""
    from logdoc import grammar

    text = "[1]:\n  time      : " + "\n" * 50_000
    torchlines.classify(text)
    torchlines.classify(text)
    groups = [s.rx.groups for p in grammar._PARSERS.values() for s in p.shapes.values() if s.rx is not None]
    assert max(groups, default=0) <= grammar.MAX_LEARN_TOKENS   # without the bound: one of 50,008 groups
