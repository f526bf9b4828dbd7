"""Lines cut at their end by a paste or a viewer (a fixed width, `...`, `[truncated]`) are still read as
the catalog message whose head they are (logdoc/classify/cut.py), when enough of the head is left to
say which; a head too short or shared by messages of other kinds is not guessed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logdoc.api import build_report
from logdoc.classify.cut import CutIndex, brace_tokens, printf_tokens, strip_mark
from logdoc.kb import load_rules
from logdoc.pipeline import parse_sources

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

C10 = "[rank0]:[W1201 10:11:12.000000000 socket.cpp:752] "
RESOLVE = C10 + "[c10d] The IPv6 network addresses of (node-17, 29500) cannot be retrieved (gai error: -2 - Name or service not known)."
NCCL = "gpu-node-07:2345:2400 [1] transport/net_ib.cc:1403 NCCL WARN "
IB = NCCL + "NET/IB : Got completion from peer 10.1.2.3<49577> with error 12, opcode 1, len 0, vendor err 129 (Recv)"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _report(text: str, rules) -> dict:
    return build_report(parse_sources([("rank0.log", text + "\n")]), rules)


def _categories(text: str, rules) -> list[str]:
    rep = _report(text, rules)
    return [d["category"] for d in rep.get("diagnoses") or []]


@pytest.mark.parametrize("text, bare, marked", [
    ("connection refused...", "connection refused", True),
    ("connection refused\u2026 [truncated]", "connection refused", True),
    ("connection refused (truncated)", "connection refused", True),
    ("connection refused [... 312 more characters]", "connection refused", True),
    ("connection refused", "connection refused", False),
    ("see (details)", "see (details)", False),
])
def test_a_viewers_cut_mark_is_taken_off(text, bare, marked):
    assert strip_mark(text) == (bare, marked)


@pytest.mark.parametrize("width, mark", [(100, ""), (112, "..."), (110, "\u2026 [truncated]")])
def test_a_cut_c10d_message_keeps_its_reading(rules, width, mark):
    assert _categories(RESOLVE, rules)[:1] == ["hostname_resolution"]
    events = parse_sources([("rank0.log", RESOLVE[:width] + mark + "\n")]).events
    assert [e.kind for e in events] == ["store.resolve_failed"] and events[0].fields.get("cut") is True
    assert events[0].fields["host"] == "node-17"
    assert _categories(RESOLVE[:width] + mark, rules)[:1] == ["hostname_resolution"]


@pytest.mark.parametrize("width", [120, 135, 150])
def test_a_cut_nccl_warn_keeps_its_reading(rules, width):
    whole = _categories(IB, rules)
    assert whole and whole[0] == "ib_transport_error"
    events = parse_sources([("rank0.log", IB[:width] + "\n")]).events
    assert events and events[0].template and events[0].fields.get("cut") is True
    assert _categories(IB[:width], rules)[:1] == whole[:1]
    # the same, without the header (a message copied alone, then cut)
    bare = IB[len(NCCL):width]
    assert _categories(bare, rules)[:1] == whole[:1]


def test_a_short_or_shared_head_is_not_guessed():
    idx = CutIndex([("a", brace_tokens("The server socket has failed to listen on {addr:word}."), "store.listen"),
                    ("b", brace_tokens("The server socket has failed to accept a connection from {peer}."), "store.accept"),
                    ("c", printf_tokens("Call to ibv_modify_qp failed with error %s"), "nccl")])
    assert idx.match("The server socket has failed to") is None          # two kinds share this head
    assert idx.match("The server socket has failed to lis")[0] == "a"    # a word cut inside
    assert idx.match("The server socket has failed to accept a conn")[0] == "b"
    assert idx.match("The server socket") is None                        # too little literal text
    assert idx.match("The server socket has failed to bind") is None     # not a head of either
    assert idx.match("Call to ibv_modify_qp failed with err")[0] == "c"
    assert idx.match("Call to ibv_modify_qp failed with error Connection timed out")[0] == "c"


def test_a_short_head_is_read_among_the_formats_of_the_file_its_header_names(rules):
    # `init.cc:904 NCCL WARN Duplicate` (9 literal characters): the one message of init.cc that starts so
    head = "pool0-00008:1391870:1393239 [7] init.cc:904 NCCL WARN "
    events = parse_sources([("rank0.log", head + "Duplicate\u2026 [truncated]\n")]).events
    assert events and events[0].fields.get("cut") is True
    assert events[0].fields["format"].startswith("Duplicate GPU detected : rank %d")
    assert _categories(head + "Duplicate\u2026 [truncated]", rules)[:1] == ["duplicate_gpu"]
    # not without the file, nor under another file, nor a head two messages of the file share
    for text in ("Duplicate\u2026 [truncated]", head.replace("init.cc", "proxy.cc") + "Duplicate\u2026",
                 head + "Invalid\u2026 [truncated]", head + "Cuda failure\u2026"):
        evs = parse_sources([("rank0.log", text + "\n")]).events
        assert not any(e.fields and e.fields.get("cut") for e in evs), text
    idx = CutIndex([("a", printf_tokens("Duplicate GPU detected : rank %d and rank %d"), "nccl"),
                    ("b", printf_tokens("Duplicate GPU detected : rank %d and rank %d"), "nccl"),
                    ("c", printf_tokens("Invalid config blocking attribute value %d"), "nccl"),
                    ("d", printf_tokens("Invalid comm %p"), "nccl")])
    assert idx.match("Duplicate") is None and idx.match("Duplicate", lambda t: True)[0] in "ab"  # one format twice
    assert idx.match("Invalid co", lambda t: True) is None  # the head of two messages
    assert idx.match("Invalid config", lambda t: True)[0] == "c" and idx.match("Invalid config", lambda t: t != "c") is None
    assert idx.match("Dup", lambda t: True) is None  # fewer letters than CUT_MIN_WORDY


def test_a_word_cut_inside_the_releases_wordings_of_one_message_is_that_message(rules):
    """NCCL printed one ibv_modify_qp failure in three wordings over its releases (`failed with error %s`,
    `... error %s errno %d`, `... with %d %s, %s`): a WARN of ibvwrap.cc cut inside `ibv_modify_qp` (a
    long pod-name header at a viewer's width) heads all three alike, so it is that message, and the rules
    written for its words read the line with them written out up to the first placeholder."""
    head = "72bf7b08-26f3-4ebc-8b9d-85df3e4414c0:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN "
    for cut in ("Call to ibv_modif", "Call to ibv_mod… [truncated]"):
        ev = parse_sources([("rank0.log", head + cut + "\n")]).events[0]
        assert ev.fields.get("cut") is True and ev.fields["format"].startswith("Call to ibv_modify_qp failed with")
        top = _report(head + cut, rules)["diagnoses"][0]
        assert (top["id"], top["category"]) == ("LD205", "ib_transport_error"), (cut, top["id"])  # the rule, not the catalog's card
    # a head that several calls' messages share (`Call to ibv_` of ibv_reg_mr, ibv_alloc_pd, ...) is not guessed
    ev = parse_sources([("rank0.log", head + "Call to ibv_\n")]).events[0]
    assert not ev.fields.get("cut")


@pytest.mark.parametrize("cut", ["Call to ibv_reg_mr f", "Call to ibv_reg_mr fai", "Call to ibv_reg_mr failed\u2026"])
def test_a_cut_where_one_release_ended_the_message_and_another_went_on_is_that_message(rules, cut):
    """ibvwrap.cc printed `Call to ibv_reg_mr failed` up to 2.12 and `Call to ibv_reg_mr failed with error
    %s` from 2.13: a head cut inside or at the end of `failed` is that message in both wordings (one release
    ended the message where the other goes on with one more word); LD287 reads it, not the catalog's card."""
    head = "gpu-node-3:2154:2390 [0] misc/ibvwrap.cc:194 NCCL WARN "
    ev = parse_sources([("rank0.log", head + cut + "\n")]).events[0]
    assert ev.fields.get("cut") is True and ev.fields["format"].startswith("Call to ibv_reg_mr failed")
    assert _report(head + cut, rules)["diagnoses"][0]["id"] == "LD287"


def test_a_head_where_the_formats_go_on_with_other_words_is_not_guessed():
    from types import SimpleNamespace

    fmts = {"a": "Call to ibv_reg_mr failed", "b": "Call to ibv_reg_mr failed with error %s",
            "c": "Call to ibv_reg_mr_iova2 failed with error %s",
            "d": "NET/IB: Unrecognized request type. request->type=%d",
            "e": "NET/IB: Unrecognized request. It might be a CTS message"}
    idx = CutIndex([(SimpleNamespace(id=k, format=f), printf_tokens(f), "nccl") for k, f in fmts.items()])
    only = lambda t: True  # noqa: E731  (the formats of the header's file)
    assert idx.match("Call to ibv_reg_mr fa", only)[0].id in "ab"
    assert idx.match("Call to ibv_reg_mr", only) is None           # ibv_reg_mr or ibv_reg_mr_iova2
    assert idx.match("NET/IB: Unrecognized req", only) is None     # `request type.` or `request. It ...`


def test_ordinary_cut_lines_stay_unread():
    for line in ("The training loss went up after the learning rate warmup ended at step 400 and the",
                 "Call to the data loader took 12 seconds for the first batch, much longer than exp..."):
        assert parse_sources([("rank0.log", line + "\n")]).events == []


def test_catalog_messages_cut_at_100_columns_keep_their_category(rules):
    """The PyTorch/Gloo catalog's rendered lines (tools/catalog_coverage.py), each cut at 100 columns:
    most keep the category of the whole line (what is lost is what the cut took: a strerror, a Gloo
    check's operands). 318 of 354 at the change that added the prefix reading (239 before)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("catalog_coverage", ROOT / "tools" / "catalog_coverage.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    n = kept = 0
    for _, line, _ in tool.torch_lines():
        if len(line) <= 110:
            continue
        want = _categories(line, rules)
        if not want:
            continue
        n += 1
        kept += want[0] in _categories(line[:100], rules)[:3]
    assert n > 300 and kept >= 0.88 * n, (kept, n)


@pytest.mark.parametrize("lead", ["NET/IBP:", "NET/IBext : ", "NET/IB: "])
def test_a_cut_message_under_another_net_name_keeps_its_reading(rules, lead):
    # a plugin's name or the other spelling of the colon (logdoc.templates.match_net_variant), then cut
    line = lead + "Got completion from peer 10.1.2.3<36315> with status=12 opcode=32698 len=32696 vendor err 1"
    assert _categories(line, rules)[:1] == ["ib_transport_error"]
    assert _categories(NCCL + line, rules)[:1] == ["ib_transport_error"]


def test_the_cut_mark_is_found_from_the_end_as_a_search_of_the_whole_text_finds_it():
    # strip_mark searches only the end of a long text; a mark whose blanks or dots run further back is
    # still taken whole. Held to the plain search over texts of every length around the window.
    import random
    from logdoc.classify.cut import CUT_MARK

    def plain(text):
        m = CUT_MARK.search(text)
        if m is None or m.start() == m.end() or not text[m.start():].strip():
            return text, False
        return text[:m.start()].rstrip(), True

    pieces = ["word", " ", "  ", ".", "...", "\u2026", "[truncated]", " (3 more characters)", "<trimmed>", "x" * 37,
              "\t", "[", "]", "a.b", "....................................................................."]
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 60)))
        assert strip_mark(text) == plain(text), repr(text)
    for n in range(100, 260):
        for tail in ("...", " [truncated]", "." * 200, " " * 200 + "...", "\u2026 (12 more characters)  "):
            text = ("w" * n + tail)
            assert strip_mark(text) == plain(text), (n, tail)


RAY_STORE = ("[2026-03-25 05:44:29,435 W 39 39] (raylet) store_runner.cc:83: System memory request exceeds memory available "
             "in /dev/shm. The request is for 10200547328 bytes, and the amount available is 9663676416 bytes.")


@pytest.mark.parametrize("cut, fields", [
    (RAY_STORE[:100], {}),  # `... exceeds memory ` (a terminal's 100 columns)
    (RAY_STORE[:96] + "...", {}),
    (RAY_STORE[:119] + "\u2026 [truncated]", {}),  # `... available in /dev/sh`: the directory cut
    (RAY_STORE[:162] + " [truncated]", {"dir": "/dev/shm", "requested": 10200547328}),
])
def test_a_cut_ray_object_store_warning_keeps_its_reading(rules, cut, fields):
    # the raylet's /dev/shm warning from its head (classify/neighbours.py, cut.cut_search): the fields the head
    # holds whole, none that the cut ended; the same events on the fast and the plain path
    from logdoc import fast

    before, out = fast.enabled(), []
    try:
        for on in (False, True):
            fast.set_enabled(on)
            r = parse_sources([("rank0.log", cut + "\n")])
            out.append(([e.to_dict() for e in r.events], r.stats.to_dict()))
    finally:
        fast.set_enabled(before)
    assert out[0] == out[1]
    events = parse_sources([("rank0.log", cut + "\n")]).events
    assert [e.kind for e in events] == ["ray.store_shm"]
    assert events[0].fields == {"cut": True, **fields}
    first = _report(cut, rules)["diagnoses"][0]
    assert first["category"] == "shm_exhausted"
    # LD371's texts say what the cut left out (its examples are whole lines: the browser build, without the regex
    # module, reads no cut head, and a large log's lines are whole)
    from logdoc.textlint import check_match, default_to_events
    matches = [m for m in rules.match(default_to_events([("rank0.log", cut + "\n")])) if m.rule.id == "LD371"]
    assert matches and all(check_match(m) == [] for m in matches)


def test_a_ray_object_store_head_too_short_or_gone_on_is_not_read():
    for line in ("(raylet) store_runner.cc:83: System memory requ...",  # fewer than CUT_MIN_LITERAL characters
                 "System memory request exceeds the limit of the container",
                 RAY_STORE.replace("available in", "used in")[:130] + "..."):
        assert parse_sources([("rank0.log", line + "\n")]).events == [], line


XLA = ["jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: "
       "custom call 'xla.gpu.all_reduce' failed:",
       "external/xla/xla/service/gpu/nccl_utils.cc:133: NCCL operation ncclGetUniqueId(&id) failed: Unable to load NCCL "
       "library. Multi-GPU collectives will not work.;",
       "current tracing scope: all-reduce-start; current profiling annotation:"]


@pytest.mark.parametrize("mark", ["\u2026 [truncated]", "\u2026", " [... 120 more characters]"])
def test_a_line_a_viewer_cut_with_a_mark_is_not_joined_to_the_next(mark):
    # every line cut at one width looks hard-wrapped; the mark says its rest was dropped, not moved to the next line
    from logdoc import fast

    text = "".join(line[:120] + mark + "\n" if len(line) > 120 else line + "\n" for line in XLA)
    before, out = fast.enabled(), []
    try:
        for on in (False, True):
            fast.set_enabled(on)
            r = parse_sources([("rank0.log", text)])
            out.append(([e.to_dict() for e in r.events], r.stats.to_dict()))
    finally:
        fast.set_enabled(before)
    assert out[0] == out[1]
    exc = [e for e in parse_sources([("rank0.log", text)]).events if e.kind == "torch.exception"]
    assert exc and exc[0].end_line == 1 and "external/xla" not in exc[0].fields["exc_message"]


@pytest.mark.parametrize("tail", [", NCC", ",", ", NCCL version", ", NCCL ver"])
def test_torch_nccl_error_cut_inside_its_version_keeps_its_result(tail):
    # C10D_NCCL_CHECK's 'NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version <v>' cut by a
    # viewer's width inside the version's words (LianjiaTech/BELLE#136 at 100 columns): the result string is whole
    head = "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system error"
    for text in (head + tail, "RuntimeError: " + head + tail + "\nncclSystemError: System call (socket, malloc, munmap, etc) failed."):
        ev = [e for e in parse_sources([("rank0.log", text + "\n")]).events if e.kind == "torch.nccl_error"]
        assert ev and ev[0].fields["nccl_result"] == "ncclSystemError", text
        assert ev[0].fields["error_string"] == "unhandled system error"


@pytest.mark.parametrize("text, result", [
    ("RuntimeError: NCCL error: unhandled sys", "ncclSystemError"),  # llm-d's vLLM worker line cut at 100 columns
    ("NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, internal err", "ncclInternalError"),
    ("RuntimeError: NCCL error: unhandled", None),  # the head of two results: cuda or system
    ("RuntimeError: NCCL error: invalid ", None),  # argument or usage
])
def test_an_nccl_result_string_cut_at_the_end_of_its_message_is_the_one_it_heads(text, result):
    ev = [e for e in parse_sources([("rank0.log", text + "\n")]).events if e.kind == "torch.nccl_error"]
    assert ev and ev[0].fields.get("nccl_result") == result
