"""A message cut inside a closed-list phrase is completed for the rules (logdoc/cuttail.py): what it
completes, what it refuses, and a cut line that a rule recognises through it."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.cuttail import MIN_PREFIX, complete
from logdoc.pipeline import parse_sources


@pytest.mark.parametrize("text, whole", [
    ("Socket creation failed : Address family not sup",
     "Socket creation failed : Address family not supported by protocol"),
    ("bind failed: Cannot assign requeste", "bind failed: Cannot assign requested address"),
    # the quote and the brackets the format opened before the phrase are closed
    ("Cuda failure 'CUDA driver version is insufficien",
     "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'"),
    ("failed to connect to [node1]:29500 (errno: 110 - Connection t",
     "failed to connect to [node1]:29500 (errno: 110 - Connection timed out)"),
    ("CUDA error: API call is not suppor", "CUDA error: API call is not supported in the installed CUDA driver"),
    ("connect returned No route", "connect returned No route to host"),
    # a viewer's cut mark goes with the cut
    ("bind failed: Cannot assign requeste\u2026 [truncated]", "bind failed: Cannot assign requested address"),
    ("bind failed: Cannot assign req...", "bind failed: Cannot assign requested address"),
    ("bind failed: Cannot assign req [... 120 more characters]", "bind failed: Cannot assign requested address"),
    # the head of a phrase that a longer one begins with is the shorter phrase
    ("accept: Too many open fil", "accept: Too many open files"),
    ("CUDA error: invalid argum", "CUDA error: invalid argument"),
    ("ncclCommInitRank failed: unhandled system err",
     "ncclCommInitRank failed: unhandled system error (run with NCCL_DEBUG=INFO for details)"),
])
def test_a_cut_phrase_is_written_out(text, whole):
    assert complete(text) == whole


@pytest.mark.parametrize("text", [
    "",
    "connect returned Connection re",        # refused or reset: two phrases
    "returned Connect",                      # too short, and many phrases
    "bind failed: Cannot a",                 # shorter than MIN_PREFIX
    "returned Too many open files",          # a whole phrase: not cut
    "returned Connection timed out",
    "xCannot assign requeste",               # inside a word
    "NET/OFI Request 0x7fbb944701b8 comple...",  # no listed phrase
    "Training step 100 done",
    "Init COMPLETE comm 0x55d0c0a1b2c0 rank 0 nranks 8 - Init COMPLETE.",  # a sentence's full stop is no mark
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read [1]",
])
def test_no_completion_when_it_is_not_certain(text):
    assert complete(text) is None


def test_min_prefix_is_a_floor():
    assert complete("x: Cannot a") is None  # 8 characters, and the heads of two phrases
    assert complete("x: Cannot as") == "x: Cannot assign requested address"
    assert complete("x: Permiss") is None  # 7 characters
    assert complete("x: Permissi") == "x: Permission denied"
    assert MIN_PREFIX >= 8


def test_the_errno_number_before_a_cut_text_names_it():
    # `Connection` heads refused, reset and timed out: the number c10d prints before it says which
    head = "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node1]:29500 "
    assert complete(head + "(errno: 110 - Connection\u2026 [truncated]") == head + "(errno: 110 - Connection timed out)"
    assert complete(head + "(errno: 111 - Connection") == head + "(errno: 111 - Connection refused)"
    assert complete("connect failed errno 104: Connection re") == "connect failed errno 104: Connection reset by peer"
    # a number that names none of them, or none at all: no completion
    assert complete(head + "(errno: 113 - Connection") is None
    assert complete("the socket failed (Connection") is None


def test_the_errno_number_names_a_text_cut_shorter_than_min_prefix():
    # a viewer's width that left fewer letters of the text than MIN_PREFIX, or none (llamafactory#3715 at 80-120
    # columns with '...': `(errno: 110 - Connect...`): the number alone names it
    head = "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
    assert complete(head + "(errno: 110 - Connect...") == head + "(errno: 110 - Connection timed out)"
    assert complete(head + "(errno: 111 -") == head + "(errno: 111 - Connection refused)"
    assert complete("connect failed errno 113: No r") == "connect failed errno 113: No route to host"
    # letters that do not begin the number's text, or a number of no listed text: no completion
    assert complete(head + "(errno: 110 - Resourc") is None
    assert complete(head + "(errno: 7 - Ar") is None


def test_a_cut_store_connect_error_is_read_by_its_errno(rules):
    line = "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 110 - Connection"
    assert _top(line + "\u2026 [truncated]", rules) == "rendezvous_store_failure"


@pytest.fixture(scope="module")
def rules():
    return kb.load_rules()


def _top(text: str, rules) -> str | None:
    got = build_report(parse_sources([("x.log", text + "\n")]), rules)
    return got["diagnoses"][0]["category"] if got["diagnoses"] else None


def test_a_cut_line_is_recognised_through_its_completed_tail(rules):
    line = "0a1b2c3d4e5f:210:210 [0] misc/socket.cc:311 NCCL WARN Socket creation failed : Address family not sup"
    assert _top(line, rules) == "container_network_isolation"


def test_the_evidence_is_the_line_as_pasted(rules):
    line = "0a1b2c3d4e5f:210:210 [0] misc/socket.cc:311 NCCL WARN Socket creation failed : Address family not sup"
    got = build_report(parse_sources([("x.log", line + "\n")]), rules)
    texts = [e.get("text", "") for d in got["diagnoses"][:1] for e in d.get("evidence", [])]
    assert any(t.endswith("Address family not sup") for t in texts), texts


def test_a_field_that_holds_the_cut_end_is_read_completed(rules):
    # LD261 reads the parsed errno text (a field), not the message: `Cannot al` is `Cannot allocate memory`
    head = "[1700000000.123456] [node1:1234:0]        ib_iface.c:695  UCX  ERROR ibv_create_cq(cqe=4096) failed: "
    assert _top(head + "Cannot al", rules) == "container_missing_devices"
    assert _top(head + "Cannot a", rules) != "container_missing_devices"  # allocate or assign


@pytest.mark.parametrize("left, right, one", [
    ("was build without libuv suppor", "t", True),     # a word of the catalogs cut inside
    ("NCCL WARN Socket creation fai", "led : ...", True),
    ("go in", "to it", False),                          # two words of the catalogs stay two
    ("abc", "def", False),                              # not a word of the catalogs
    ("ends with 12", "ab", False),                      # letters on one side only
])
def test_letters_a_cut_put_apart_read_as_one_word_of_the_catalogs(left, right, one):
    from logdoc.cuttail import one_word
    assert one_word(left, right) is one


@pytest.mark.parametrize("left, right, two", [
    ("the remote process", "exited or there was", True),  # two words of the catalogs, the blank lost with the line's end
    ("the net", "work is down", False),                 # one word of the catalogs cut inside
    ("go in", "to it", False),                          # together a word as well: undecided, no blank
    ("System memory req", "uest exceeds", False),       # not words apart
])
def test_letters_a_cut_put_apart_read_as_two_words_of_the_catalogs(left, right, two):
    from logdoc.cuttail import two_words
    assert two_words(left, right) is two


def test_a_line_cut_at_a_column_where_the_blank_fell_keeps_its_words_apart():
    """The pieces of a message no catalog reads, cut at a fixed width where a blank fell (it ended the row and the
    copy dropped it): the words either side are put back apart where the catalogs' vocabulary says they are two."""
    from logdoc.paste.wrap import _joined

    assert _joined(["WARNING worker.py:2037 -- the worker process", "exited with a connection error code 2"], 0)[0] == \
        "WARNING worker.py:2037 -- the worker process exited with a connection error code 2"
    assert _joined(["WARNING worker.py:2037 -- To tro", "ubleshoot the problem"], 0)[0] == \
        "WARNING worker.py:2037 -- To troubleshoot the problem"


def test_a_message_cut_inside_a_word_at_the_width_reads_whole(rules):
    # a terminal 80 columns wide cut `support` after `suppor`; read with a blank it is no message
    text = "RuntimeError: use_libuv was requested but PyTorch was build without libuv suppor\nt"
    assert len(text.split("\n")[0]) == 80
    got = build_report(parse_sources([("x.log", text + "\n")]), rules)
    assert got["diagnoses"] and "suppor t" not in got["diagnoses"][0]["title"]
    assert got["diagnoses"][0]["id"] == "LD675", got["diagnoses"][0]["title"]  # (no libuv in this build)


def test_a_cut_head_of_a_catalog_format_is_written_out_to_its_first_placeholder():
    from logdoc.cuttail import complete_format

    fmt = "Call to ibv_modify_qp failed with error %s"
    line = "h:1:2 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modif"
    assert complete_format(line, "Call to ibv_modif", fmt) == line[:-len("ibv_modif")] + "ibv_modify_qp failed with error "
    assert complete_format(line + "\u2026 [truncated]", "Call to ibv_modif\u2026 [truncated]", fmt) == \
        complete_format(line, "Call to ibv_modif", fmt)
    # not a head of the format's words, or already past them: nothing to write out
    assert complete_format(line, "Call to ibv_reg", fmt) is None
    assert complete_format(line + "y_qp failed with error Invalid", "Call to ibv_modify_qp failed with error Invalid", fmt) is None


def test_in_word_takes_only_a_cut_inside_a_word():
    """The second reading's completion (logdoc/reread.py): a line that ends at a word's end and dots may be a
    program's progress line, so only a cut inside a word of the phrase is taken."""
    assert complete("Disabling peer access...") == "Disabling peer access is not supported between these two devices"
    assert complete("Disabling peer access...", in_word=True) is None
    assert complete("bind gave: Address already in u...", in_word=True) == "bind gave: Address already in use"
