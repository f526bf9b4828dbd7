"""Logs damaged the way pastes damage them: markdown around the lines (quotes, fences, bullets),
hard-wrapped records, ``...`` elisions, several ranks' lines run together. Recover what can be
recovered; never invent (a damaged record is at worst not understood, never misread)."""
from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path

import pytest

from logdoc.envelope import unwrap
from logdoc.pipeline import parse_sources, parse_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))


@lru_cache(maxsize=1)
def rules():
    from logdoc.kb import load_rules

    return load_rules()


def files_of(sample: Path) -> list[tuple[str, str]]:
    """The sample's log files as text: flight-recorder dumps (pickle or JSON) are data, not lines
    anyone pastes into a thread, and stay out."""
    from logdoc.flight_recorder import sniff

    return [(str(p.relative_to(sample)), p.read_text(encoding="utf-8", errors="replace"))
            for p in sorted(sample.rglob("*"))
            if p.is_file() and p.name != "sample.yaml" and not p.name.endswith(".json")
            and sniff(p.read_bytes()[:4096]) is None]


def diagnoses(files) -> list[tuple]:
    from logdoc.api import build_report

    report = build_report(parse_sources(files), rules())
    return [(d["id"], d["category"], d["ranks"]) for d in report["diagnoses"]]


def lines_of(text: str) -> list[str]:
    return text.split("\n")


PASTES = {
    "quoted": lambda t: "\n".join("> " + line for line in lines_of(t)),
    "quoted-twice": lambda t: "\n".join("> > " + line for line in lines_of(t)),
    "fenced": lambda t: "```text\n" + t + "\n```\n",
    "bulleted": lambda t: "\n".join("- " + line if line.strip() else line for line in lines_of(t)),
    "quoted-fenced": lambda t: "> ```\n" + "\n".join("> " + line for line in lines_of(t)) + "\n> ```",
    "crlf": lambda t: t.replace("\n", "\r\n"),
}


@pytest.mark.parametrize("how", sorted(PASTES))
@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_markdown_around_the_lines_changes_nothing(sample, how):
    files = files_of(sample)
    pasted = [(name, PASTES[how](text)) for name, text in files]
    assert diagnoses(pasted) == diagnoses(files)


@pytest.mark.parametrize("line,layers,msg", [
    ("> [rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] boom", ("paste", "c10"), "boom"),
    (">> > - [rank1]: RuntimeError: x", ("paste", "rank"), "RuntimeError: x"),
    ("- dgx1:1:2 [0] NCCL INFO x", ("paste",), "dgx1:1:2 [0] NCCL INFO x"),
    ("-   File \"x.py\", line 1, in f", ("paste",), "  File \"x.py\", line 1, in f"),
    ("    [rank0]: y", ("paste", "rank"), "y"),
    ("1. [rank0]: z", ("paste", "rank"), "z"),
    ("> 3: [default1]:boom", ("paste", "srun", "tee"), "boom"),
])
def test_paste_envelope(line, layers, msg):
    env, got = unwrap(line)
    assert env.layers == layers and got == msg


@pytest.mark.parametrize("line", [
    "  File \"x.py\", line 1, in f",                       # traceback lines keep their indentation
    "    RuntimeError: x",
    "-- Process 1 terminated with the following error:",     # torch.multiprocessing.spawn
    "*** Error in `python': double free or corruption",
    "2. something in a numbered list",
    "  time      : 2026-11-29_17:00:00",                    # torchrun's failure table
    "10: [rank0]: srun label",                              # srun --label, not a list
])
def test_lines_that_are_not_paste_decoration(line):
    env, _ = unwrap(line)
    assert "paste" not in env.layers


def test_fence_lines_are_counted_and_irrelevant():
    res = parse_text("```\nh:1:2 [0] NCCL WARN Call to connect returned Connection refused, retrying\n```\n")
    assert res.stats.lines_read == 3 and res.stats.irrelevant == 2 and len(res.events) == 1


# ------------------------------------------------------------------------------------------------
# hard-wrapped records

WATCHDOG = ("[rank3]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=8030261248, NumelOut=8030261248, "
            "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.")
NEXT = "\n[rank3]:[E1129 17:01:54.000000000 ProcessGroupNCCL.cpp:1899] [Rank 3] another message\nplain text after\n"


def hard_wrap(line: str, width: int) -> str:
    return "\n".join(line[i:i + width] for i in range(0, len(line), width))


def soft_wrap(line: str, width: int) -> str:
    return "\n".join(textwrap.wrap(line, width, break_on_hyphens=False))


@pytest.mark.parametrize("width", [70, 80, 90, 100, 120, 150, 200])
@pytest.mark.parametrize("wrap", [hard_wrap, soft_wrap], ids=["hard", "soft"])
def test_a_wrapped_watchdog_record_is_read_whole(wrap, width):
    res = parse_text(wrap(WATCHDOG, width) + NEXT)
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant and s.relevant == s.understood + s.not_understood
    ev = res.events[0]
    assert ev.kind == "torch.watchdog_timeout" and ev.rank == 3 and ev.line == 1
    assert (ev.fields["seq"], ev.fields["op_type"], ev.fields["timeout_ms"], ev.fields["elapsed_ms"]) == \
        (3, "ALLREDUCE", 600000, 600021)
    wrapped = wrap(WATCHDOG, width).split("\n")
    assert ev.end_line == len(wrapped)
    assert ev.text.split("\n")[1:] == wrapped[1:]  # the text as printed, breaks included
    assert [e.kind for e in res.events[1:]] == ["torch.message"]  # the next record stays its own


def test_a_wrap_inside_the_envelope_loses_the_rank_not_the_record():
    res = parse_text(hard_wrap(WATCHDOG, 60) + NEXT)
    ev = res.events[0]
    assert ev.kind == "torch.watchdog_timeout" and ev.fields["seq"] == 3 and ev.rank is None


def test_a_wrapped_record_that_does_not_read_whole_is_read_as_cut():
    """The watchdog's own wording stands, so the record is a watchdog timeout, marked ``cut``, with
    the values that are legible and none made up (the broken ``OpTy`` gives no op type)."""
    broken = WATCHDOG.replace("SeqNum=3, OpType=ALLREDUCE", "SeqNum=3, OpTy")
    res = parse_text(hard_wrap(broken, 80) + NEXT)
    ev = res.events[0]
    assert ev.kind == "torch.watchdog_timeout" and ev.fields.get("cut") is True and ev.rank == 3
    assert (ev.fields["seq"], ev.fields["timeout_ms"], ev.fields["elapsed_ms"]) == (3, 600000, 600021)
    assert "op_type" not in ev.fields
    assert [e.kind for e in res.events[1:]] == ["torch.message"]


def test_a_watchdog_line_cut_at_its_end_keeps_its_numel():
    """A viewer's cut after the WorkNCCL record (``ran fo``) loses nothing the record said: its
    NumelIn and NumelOut are read, so the ranks that printed the whole line and the one whose line
    was cut are the same collective, not a mismatch of sizes."""
    other = WATCHDOG.replace("rank3", "rank0").replace("Rank 3", "Rank 0")
    cut = WATCHDOG[:WATCHDOG.index(" ran for") + 7]
    ev = parse_text(cut + "\n").events[0]
    assert ev.kind == "torch.watchdog_timeout" and ev.fields.get("cut") is True
    assert (ev.fields["numel_in"], ev.fields["numel_out"]) == (8030261248, 8030261248)
    found = diagnoses([("a.log", other + "\n" + cut + "\n")])
    assert found and found[0][1] == "collective_timeout_hung_rank"
    assert all(cat != "collective_mismatch" for rid, cat, _ in found if not rid.startswith("candidate:"))


def test_a_watchdog_line_cut_between_its_sizes_is_not_a_size_mismatch():
    """Cut after ``NumelIn=...,`` the record says nothing of NumelOut: a size that was not read does
    not differ from the other rank's. A NumelIn that was read and differs still does."""
    other = WATCHDOG.replace("rank3", "rank0").replace("Rank 3", "Rank 0")
    cut = WATCHDOG[:WATCHDOG.index(" NumelOut")]
    ev = parse_text(cut + "\n").events[0]
    assert ev.fields.get("numel_in") == 8030261248 and ev.fields.get("numel_out") is None
    found = diagnoses([("a.log", other + "\n" + cut + "\n")])
    assert found and all(cat != "collective_mismatch" for rid, cat, _ in found if not rid.startswith("candidate:"))
    for end, key in (("SeqNum=3", "seq"), ("OpType=ALLRED", "op_type"), ("NumelIn=80302", "numel_in")):
        inside = WATCHDOG[:WATCHDOG.index(end) + len(end)]   # cut inside the value: not read
        ev = parse_text(inside + "\n").events[0]
        assert ev.fields.get("cut") is True and key not in ev.fields
    # a record the poster abridged (``...``) keeps the values written whole before it
    abridged = WATCHDOG[:WATCHDOG.index(", NumelIn")] + " ...)"
    assert parse_text(abridged + "\n").events[0].fields.get("op_type") == "ALLREDUCE"
    odd = cut.replace("NumelIn=8030261248", "NumelIn=4015130624")
    found = diagnoses([("a.log", other + "\n" + odd + "\n")])
    assert any(cat == "collective_mismatch" for rid, cat, _ in found if not rid.startswith("candidate:"))


# ------------------------------------------------------------------------------------------------
# elisions

TRACEBACK = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/w/train.py", line 125, in <module>
[rank1]:     main(ARGS)
[rank1]:   File "/w/train.py", line 104, in main
[rank1]:     dist.all_reduce(t, group=group)
[rank1]:   File "/t/distributed_c10d.py", line 2501, in all_reduce
[rank1]:     work.wait()
[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:51618"""


@pytest.mark.parametrize("marker", ["...", "[rank1]: ...", "[...]", "…", "(20 lines omitted)", "[rank1]:   ...",
                                    "<snip>", "... (truncated)", "> ..."])
def test_an_elision_inside_a_traceback_is_not_an_exception(marker):
    lines = TRACEBACK.split("\n")
    res = parse_text("\n".join(lines[:3] + [marker] + lines[5:]))
    assert [(e.kind, e.line, e.end_line) for e in res.events] == [("gloo.error", 1, 7)]
    ev = res.events[0]
    assert ev.fields["exc_type"] == "RuntimeError" and ev.fields["frames"] == 2 and ev.rank == 1
    assert marker.split()[-1] in ev.text  # kept as printed
    assert res.stats.not_understood == 0


def test_elisions_between_lines_are_irrelevant():
    text = "h:1:2 [0] NCCL WARN Call to connect returned Connection refused, retrying\n...\n[...]\n" \
           "(3000 lines omitted)\nh:1:2 [0] NCCL WARN Call to connect returned Connection refused, retrying\n"
    res = parse_text(text)
    assert len(res.events) == 2 and res.stats.irrelevant == 3


# ------------------------------------------------------------------------------------------------
# ranks interleaved mid-line

_C10_HEAD = "[rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] "  # rank 0's c10 header in the test below
OTHER = ("[rank1]:[E1129 17:01:53.700000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
         "operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=2, NumelOut=2, Timeout(ms)=600000) ran "
         "for 600555 milliseconds before timing out.")
NCCL_LINE = "h:77:77 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via P2P/IPC"
RUNTIME = ("[rank1]: RuntimeError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled "
           "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2")


@pytest.mark.parametrize("cut", [20, 40, 90, 120, 200])
@pytest.mark.parametrize("inner", [OTHER, RUNTIME], ids=["c10", "runtime"])
def test_interleaved_ranks_are_never_mixed_up(cut, inner):
    """Rank 1's text spliced into rank 0's line: whatever is read is attributed to the rank whose
    text it is, and nothing of one rank's record is read as the other's."""
    mine = WATCHDOG.replace("rank3", "rank0").replace("Rank 3", "Rank 0")
    res = parse_text(mine[:cut] + inner + "\n" + mine[cut:] + "\n")
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant and s.relevant == s.understood + s.not_understood
    for ev in res.events:
        if ev.fields.get("seq") == 4 or ev.fields.get("nccl_result"):
            assert ev.rank == 1, ev
        if ev.fields.get("seq") == 3:
            # (a cut inside rank 0's c10 header leaves its second half without `[rank0]:`: read, its rank unknown)
            assert ev.rank == 0 or (ev.rank is None and cut < len(_C10_HEAD)), ev


@pytest.mark.parametrize("cut", [10, 30, 50])
def test_a_record_inside_a_cut_nccl_line_is_recovered(cut):
    mine = WATCHDOG.replace("rank3", "rank0").replace("Rank 3", "Rank 0")
    res = parse_text(NCCL_LINE[:cut] + mine + "\n" + NCCL_LINE[cut:] + "\n")
    timeouts = [e for e in res.events if e.kind == "torch.watchdog_timeout"]
    assert len(timeouts) == 1 and timeouts[0].rank == 0 and timeouts[0].fields["seq"] == 3


ASYNC = ("[rank1]:[E415 21:17:08.996319560 ProcessGroupNCCL.cpp:552] [Rank 1] Collective WorkNCCL(SeqNum=335, "
         "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) raised the following async exception: "
         "NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
         "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
         "Last error:\n"
         "socketProgress: Connection closed by remote peer node2<32926>\n"
         "Exception raised from checkForNCCLErrorsInternal at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2363 "
         "(most recent call first):\n"
         "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x754ee7c6c1b6 in /usr/lib/libc10.so)\n")


@pytest.mark.parametrize("at", ["NumelIn", "melIn", "Timeout(m", "Type=ALLREDUCE"])
def test_a_record_wrapped_inside_its_worknccl_keeps_its_reading(at):
    # a paste cut the record's first line inside WorkNCCL(...), which torch prints on one line; the record
    # goes on over lines of its own (the result code, `Last error:`, c10's frames)
    first, rest = ASYNC.split("\n", 1)
    k = first.index(at)
    for glue in ("", " "):  # a cut inside a word, or a wrap at a blank that the paste dropped
        res = parse_text(first[:k].rstrip() + "\n" + first[k:] + "\n" + rest if glue else
                         first[:k] + "\n" + first[k:] + "\n" + rest)
        ev = res.events[0]
        assert ev.kind == "torch.async_exception" and ev.fields["seq"] == 335 and ev.fields["timeout_ms"] == 600000
        assert ev.fields["numel_in"] == 1 and ev.text.count("\n") >= 5  # the text as printed, breaks included
        assert any(e.kind == "nccl.warn" for e in res.events)  # the socket WARN under `Last error:`



CHAINED_CUT = """Traceback (most recent call last):
  File "/env/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 155, in _create_tcp_store
    store = TCPStore(
RuntimeError: connect() timed out. Original timeout was 60000 ms.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/env/lib/python3.9/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 345, in wrapper
    return f(*args, **kwargs)
  File "/env/lib/python3.9/site-packages/torch/distributed/run.py", line 719, in main
    run(args)
"""


def test_a_chain_whose_last_traceback_a_paste_cut_keeps_the_exceptions_before_it():
    """The last traceback of a chain stops before its exception line (the paste ends there): the
    exception above it is whole and is read, not the whole chain left unread."""
    evs = [e for e in parse_text(CHAINED_CUT).events if e.kind == "torch.exception"]
    assert [(e.fields["exc_type"], e.fields["exc_message"]) for e in evs] == \
        [("RuntimeError", "connect() timed out. Original timeout was 60000 ms.")]
    assert diagnoses([("a.log", CHAINED_CUT)])[0][0] == "LD676"
