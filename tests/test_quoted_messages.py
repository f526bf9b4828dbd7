"""PyTorch messages that a program prints after words of its own (`print("failed, e=", e)`), and the
NCCL result texts as a hand-retyped or damaged paste gives them."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify import bare as nccl_bare
from logdoc.classify.torch.transformers import nccl_result_of
from logdoc.pipeline import parse_sources

NCCL_ERROR_IN = "NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error"


def _first(text: str) -> dict | None:
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return got[0] if got else None


@pytest.mark.parametrize("before", ["training failed, e= ", "step 12: ", "ERROR in epoch 3 -> "])
def test_a_message_after_the_programs_own_words_is_read(before):
    d = _first(before + NCCL_ERROR_IN + "\n")
    # read as ncclSystemError: with no WARN and no node count, its card ranks the candidates
    assert d is not None and d["id"] == "family:nccl_system_error"


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


@pytest.mark.parametrize("line, error", [
    ("ggml_cuda_init: failed to initialize CUDA: system not yet initialized", "system not yet initialized"),
    ("cudaSetDevice(3) failed: 'invalid device ordinal'.", "invalid device ordinal"),
    ("GPU check: no CUDA-capable device is detected", "no CUDA-capable device is detected"),
])
def test_a_cuda_error_text_that_ends_a_programs_line(line, error):
    p = nccl_bare.classify_bare(line)
    assert p is not None and p.kind == "cuda.error" and p.fields["error"] == error


@pytest.mark.parametrize("line", [
    "status: system not yet initialized",             # no CUDA, GPU or failure named before it
    "cuInit failed: system not yet initialized, retrying in 5 s",   # more after the text
])
def test_a_cuda_error_text_needs_its_context(line):
    assert nccl_bare.classify_bare(line) is None


def test_the_fabric_manager_card_from_a_programs_own_cuda_check():
    d = _first("ggml_cuda_init: failed to initialize CUDA: system not yet initialized\n")
    assert d is not None and d["category"] == "fabric_manager_or_driver"


@pytest.mark.parametrize("line, card", [
    # torch.cuda.nccl's own wording (NCCL_CHECK in torch/csrc/cuda/nccl.cpp: "NCCL Error <code>: <text>"):
    # the result it quotes decides the card, as it does for ProcessGroupNCCL's wordings
    ("RuntimeError: NCCL Error 2: unhandled system error", "family:nccl_system_error"),
    ("RuntimeError: NCCL Error 3: internal error", "LD133"),
])
def test_torch_cuda_nccl_wording_is_read_by_its_result(line, card):
    d = _first(line + "\n")
    assert d is not None and d["id"] == card


@pytest.mark.parametrize("line", ["gaierror: [Errno -3] Temporary failure in name resolution",
                                  "socket.herror: [Errno 1] Unknown host"])
def test_socket_lookup_errors_printed_bare(line):
    d = _first(line + "\n")
    assert d is not None and d["category"] == "hostname_resolution"


WATCHDOG_DEATH = ("[PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: "
                  "[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, "
                  "NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.")


@pytest.mark.parametrize("head", ["  what():  ", "what(): ", "  what():    what():    what():  "])
def test_a_what_line_without_its_terminate_head_is_read_by_its_message(head):
    """A paste that starts at the ``what():`` of a terminate record (its ``terminate called ...`` head
    cut), or several threads' records run together: the watchdog's record it carries is read, a timeout,
    not the bare death of the watchdog thread."""
    d = _first(head + WATCHDOG_DEATH + "\n")
    assert d is not None and d["id"] == "LD501"


def test_a_what_line_with_nothing_known_after_it_stays_unread():
    assert _first("  what():  something odd happened\n") is None
