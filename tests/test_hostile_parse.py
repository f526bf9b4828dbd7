"""Hostile and damaged input at the parse level: regressions found by fuzzing, and properties that
hold for any text (no exception escapes, every line is counted once)."""
from __future__ import annotations

import time

import pytest

from logdoc import torchlines
from logdoc.parse import parse_text


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
    t0 = time.perf_counter()
    torchlines.classify(text)                          # must not raise RecursionError
    res = parse_text(text)
    _accounted(res.stats)
    assert time.perf_counter() - t0 < 2


def test_traceback_without_head_is_not_invented():
    assert torchlines.classify("Traceback (most recent call last)\t:") is None
    p = torchlines.classify("RuntimeError: RuntimeError: x")
    assert p is not None and p.fields["exc_type"] == "RuntimeError"
