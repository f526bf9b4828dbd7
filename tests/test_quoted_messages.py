"""PyTorch messages that a program prints after words of its own (`print("failed, e=", e)`), and the
NCCL result texts as a hand-retyped or damaged paste gives them."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.torch.transformers import nccl_result_of
from logdoc.pipeline import parse_sources

NCCL_ERROR_IN = "NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error"


def _first(text: str) -> dict | None:
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return got[0] if got else None


@pytest.mark.parametrize("before", ["training failed, e= ", "step 12: ", "ERROR in epoch 3 -> "])
def test_a_message_after_the_programs_own_words_is_read(before):
    d = _first(before + NCCL_ERROR_IN + "\n")
    assert d is not None and d["id"] == "LD132"


def test_words_alone_are_not_a_message():
    assert _first("training failed, e= see above\n") is None


@pytest.mark.parametrize("text, result", [
    ("unhandled system error (run with NCCL_DEBUG=INFO for details)", "ncclSystemError"),
    ("unhanled system error", "ncclSystemError"),        # a letter lost
    ("unhandled cuda eror", "ncclUnhandledCudaError"),
    ("internal eror", "ncclInternalError"),
    ("internal state", None),                             # a word changed, not a letter
    ("unhandled error", None),                            # as close to two texts: none
    ("the system is fine", None),
])
def test_nccl_result_texts_one_or_two_letters_off(text, result):
    assert nccl_result_of(text) == result


def test_a_retyped_result_text_gets_the_results_rule():
    d = _first("RuntimeError: " + NCCL_ERROR_IN.replace("unhandled", "unhanled") + "\n")
    assert d is not None and d["id"] == "LD132"
