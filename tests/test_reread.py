"""logdoc/reread.py: when no rule explains a job, its lines that no grammar understood are read once more as
messages printed without their headers; results.Unread: which of those lines a parse keeps."""
from __future__ import annotations

from logdoc import kb
from logdoc.api import build_report
from logdoc.reread import READ_AS
from logdoc.pipeline import parse_sources
from logdoc.results import MAX_LOOSE, MAX_UNRECOGNIZED, Unread, Unrecognized, settle_unread

# a message a program printed after words of its own: a keyword (`ailed`), and no reader knows the line; LD640 names
# strerror's text in it (Horovod's shut-down message, the example before session 41, is read by LD725 on its own line)
BARE = "the server failed: Address already in use"


def _report(text: str, jobs: int = 1) -> dict:
    return build_report(parse_sources([("x.log", text)], jobs=jobs), kb.load_rules())


def test_a_message_without_its_exception_line_is_named_by_its_rule():
    # (strerror's text alone, as a program printed it)
    msg = BARE
    with_head = _report("RuntimeError: " + msg + "\n")
    assert [d["id"] for d in with_head["diagnoses"]][:1] == ["LD640"] and "read_as" not in with_head["diagnoses"][0]
    bare = _report(msg + "\n")
    d = bare["diagnoses"][0]
    assert d["id"] == "LD640" and d["read_as"] == "bare message" and d["finding"].startswith(READ_AS)
    assert d["confidence"] < with_head["diagnoses"][0]["confidence"]
    assert d["evidence"][0]["line"] == 1 and d["evidence"][0]["text"] == msg  # the line as read
    # the line is still counted as it was read, and never listed as not understood
    assert bare["stats"]["irrelevant"] == 1 and bare["unrecognized"] == []


def test_words_no_rule_names_stay_silent():
    """A line that says error (and would give only the program's own exception or a cut traceback) explains nothing."""
    for text in ("step 10 failed: loss error 0.3\n", "Exception in thread ignored\n", "retrying after error 3 (timeout)\n"):
        assert _report(text)["diagnoses"] == [], text


def test_a_line_printed_under_a_warning_level_is_not_read_again():
    """A line whose own header says warning (a `[WARN]` tag, or a logger's level) still has its header: the program
    went on, so it is not re-read as an exception whose type line was lost (TensorRT-LLM's fallback from CUDA IPC)."""
    msg = ("CUDA IPC is not usable on this system: cudaErrorInvalidDevice: 101. Custom all-reduce kernels are "
           "disabled, falling back to NCCL.")
    bare = _report(msg + "\n")["diagnoses"]
    assert bare and bare[0]["read_as"] == "bare message"  # the words alone are still read as the message
    for head in ("[WARN] ", "[TensorRT-LLM][WARNING] ", "WARNING: ",
                 "WARNING 06-01 12:00:00 custom_all_reduce.py:12] "):
        assert _report(head + msg + "\n")["diagnoses"] == [], head
    # a tag that is not a level leaves the line to the second reading
    assert _report("[TensorRT-LLM] " + msg + "\n")["diagnoses"][0]["read_as"] == "bare message"
    # and a warning tag does not hide a line that is not one
    assert _report("[ERROR] " + BARE + "\n")["diagnoses"][0]["id"] == "LD640"


def test_the_second_reading_only_when_nothing_else_explains_the_job():
    warn = "node1:1:2 [0] transport/net_socket.cc:565 NCCL WARN NET/Socket : peer 10.0.0.2<5> message truncated : receiving 8 bytes instead of 4\n"
    ids = [d["id"] for d in _report(warn + BARE + "\n")["diagnoses"]]
    assert ids and "LD640" not in ids and all(not d.get("read_as") for d in _report(warn)["diagnoses"])


def test_a_tiny_paste_has_every_line_read_again_keyword_or_not():
    """A paste of a few lines is the message the user saw: its lines are read again even without a prefilter
    keyword (strerror's `Address already in use` after a program's own words); a longer paste keeps only the
    keyword lines for that reading, and its other lines stay ordinary output."""
    line = "bind to 0.0.0.0:29500 gave: Address already in use\n"
    for text in (line, "starting the server\n" + line, "step 1\n" * (MAX_LOOSE - 1) + line):
        d = _report(text)["diagnoses"]
        assert d and d[0]["id"] == "LD640" and d[0]["read_as"] == "bare message", text[:40]
    assert _report("step 1\n" * MAX_LOOSE + line)["diagnoses"] == []
    # words no rule names stay silent in a tiny paste too
    assert _report("all ranks finished the epoch\nsaving the checkpoint\n")["diagnoses"] == []


def test_a_progress_line_of_a_tiny_paste_is_not_read_as_cut():
    """A line read again is not also taken for one a viewer cut at a word's end: a program's progress line ends with
    dots of its own (cuda-samples simpleP2P's `Disabling peer access...` is no cut of `peer access is not supported
    between these two devices`). A cut inside a word still is one."""
    assert _report("Enabling peer access between GPU0 and GPU1...\nDisabling peer access...\nTest passed\n")["diagnoses"] == []
    d = _report("bind to 0.0.0.0:29500 gave: Address already in u...\n")["diagnoses"]
    assert d and d[0]["id"] == "LD640" and d[0]["read_as"] == "bare message"


def test_an_nccl_result_after_words_of_the_program_is_read_as_that_result():
    """NCCL's own words for a result (ncclGetErrorString) after a program's words - Horovod's `<call> failed: <result>`
    under a title or a framework's wrapper no reader knows - give that result's family card on the second reading;
    other families, that name no NCCL result, do not."""
    got = _report("Encountering ncclCommInitRank failed: unhandled system error. #011 [[{{node HorovodAllreduce_0}}]]\n")
    d = got["diagnoses"]
    assert d and d[0]["id"] == "family:nccl_system_error" and d[0]["read_as"] == "bare message"
    assert _report("the worker said: No route to host\n")["diagnoses"] == []  # (a socket family, no NCCL result)


def test_the_same_reading_from_several_files_and_processes():
    texts = [("a.log", "step 1\n" + BARE + "\n"), ("b.log", "step 2\n" + BARE + "\n")] + \
            [(f"r{i}.log", "step\n" * 3) for i in range(6)]
    one = build_report(parse_sources(texts, jobs=1), kb.load_rules())
    two = build_report(parse_sources(texts, jobs=2), kb.load_rules())
    assert [d["id"] for d in one["diagnoses"]] == [d["id"] for d in two["diagnoses"]] == ["LD640"]
    assert one["diagnoses"][0]["evidence"][0]["file"] == "a.log"


def test_unread_keeps_the_first_not_understood_and_the_first_line_of_each_loose_text():
    u = Unread()
    for i in range(MAX_UNRECOGNIZED + 5):
        u.add_marked(Unrecognized("f", i, f"NCCL x {i}"))
    assert len(u) == u.marked == MAX_UNRECOGNIZED
    u += [Unrecognized("g", 1000 + i, f"failed {i % (MAX_LOOSE + 3)}", True) for i in range(2 * MAX_LOOSE)]
    u.append(Unrecognized("a", 5000, "failed 7", True))  # an earlier file, a text kept later too
    got = settle_unread(u, ["a", "f", "g"])
    loose = [x for x in got if x.loose]
    assert len(loose) == MAX_LOOSE and len({x.text for x in loose}) == MAX_LOOSE
    assert loose[0].file == "a" and loose[1].line == 1000 and "failed 7" not in [x.text for x in loose[1:]]
    assert sum(not x.loose for x in got) == MAX_UNRECOGNIZED
    u.truncate(3)
    assert len(u) == 3 and u.marked == 3


def test_a_digest_keeps_the_loose_lines(tmp_path):
    from logdoc import digest
    from logdoc.pipeline import parse_paths

    text = "step 1\n" + BARE + "\n"
    raw = build_report(parse_sources([("node1.log", text)]), kb.load_rules())
    d = tmp_path / "node1.digest.json.gz"
    digest.write(parse_sources([("node1.log", text)], reduce=True), str(d))

    got = build_report(parse_paths([str(d)]), kb.load_rules())
    assert [x["id"] for x in got["diagnoses"]] == [x["id"] for x in raw["diagnoses"]] == ["LD640"]


def test_the_line_read_again_keeps_who_printed_it(tmp_path):
    """The envelope peeled as the line was read (a rank prefix, a pdsh host) still names the rank and host of the
    diagnosis read from it, in one process, in several and through a digest."""
    from logdoc import digest
    from logdoc.pipeline import parse_paths

    filler = [(f"r{i}.log", "step\n" * 3) for i in range(6)]
    for prefix, who in (("[rank3]: ", ("ranks", [3])), ("node7: ", ("hosts", ["node7"]))):
        texts = [("a.log", "step 1\n" + prefix + BARE + "\n")]
        for jobs in (1, 2):
            d = build_report(parse_sources(texts + filler, jobs=jobs), kb.load_rules())["diagnoses"][0]
            assert d["id"] == "LD640" and d[who[0]] == who[1], (prefix, jobs)
        path = tmp_path / "n.digest.json.gz"
        digest.write(parse_sources(texts, reduce=True), str(path))
        d = build_report(parse_paths([str(path)]), kb.load_rules())["diagnoses"][0]
        assert d["id"] == "LD640" and d[who[0]] == who[1], prefix


def test_a_digest_with_a_bad_who_is_read_without_it():
    from logdoc.digest import _envelope

    assert _envelope({"rank": "3", "host": 7, "pid": True}) is None
    assert _envelope({"rank": 3, "host": "n1", "x": 1}).rank == 3 and _envelope(None) is None
