"""One set of line rules: the file reader and the live reader read the same lines out of the same
bytes, however the bytes are cut (logdoc/read/lines.py)."""
from __future__ import annotations

import gzip
import io
import random

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from logdoc.live import LiveParser
from logdoc.pipeline import parse_sources
from logdoc.read.lines import CHUNK, MAX_LINE, LineSplitter
from logdoc.read.source import ReadStats, Source, read_blocks

WARN = (b"node1:4711:4711 [0] bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found\n"
        b"node1:4711:4711 [0] NCCL INFO init.cc:1650 -> 5\n")


def _file(data: bytes):
    return parse_sources([Source("<stdin>", stream=io.BytesIO(data))])


def _live(data: bytes, sizes: list[int]):
    lp = LiveParser("<stdin>")
    i = k = 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        k += 1
        lp.feed(data[i:i + n])
        i += n
    lp.close()
    return lp.result()


def _same(a, b):
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert a.stats.to_dict() == b.stats.to_dict()
    assert [(u.line, u.text) for u in a.unrecognized] == [(u.line, u.text) for u in b.unrecognized]


def _lines(regions):
    out = []
    for buf, start, end, sep, _ in regions:
        out.extend(buf[start:end - 1].split(sep) if end > start else [])
    return out


# pieces that make the line rules work: line ends of every kind, progress bars, NULs, keywords
_PIECES = st.sampled_from([b"\n", b"\r", b"\r\n", b"x" * 50, b"\x00", b"\x1b[31m", b"\xff\xfe", b"\x1f\x8b",
                           b"Traceback (most recent call last):\n", b"  File \"t.py\", line 1, in <module>\n",
                           b"RuntimeError: boom\n", WARN, b"step 1 loss 0.5\n", b"train: 10%|## | 1/10\r"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.binary(max_size=40)), max_size=60),
       st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=8))
def test_live_reader_reads_what_the_file_reader_reads(pieces, sizes):
    # paste layer included (logdoc/paste/: quote residue, hard wraps, interleaved processes,
    # every line of a short paste read): the live reader applies it to the stream when it ends
    data = b"".join(pieces)
    _same(_live(data, sizes), _file(data))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=3000), st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=6),
       st.integers(min_value=1, max_value=2048))
def test_splitter_gives_the_same_lines_however_the_bytes_are_cut(data, sizes, first_block):
    whole = ReadStats()
    expect = _lines(read_blocks(io.BytesIO(data), "x", whole, size=first_block))
    pushed = ReadStats()
    sp = LineSplitter(pushed, first_block=first_block)
    regions = []
    i = k = 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        k += 1
        regions.extend(sp.feed(data[i:i + n]))
        i += n
    regions.extend(sp.close())
    assert _lines(regions) == expect
    assert (pushed.lines, pushed.bytes, pushed.cut_lines) == (whole.lines, whole.bytes, whole.cut_lines)


def test_a_long_progress_bar_before_the_first_line_end():
    """The job's first 64 KiB and more are a carriage-return progress bar (a model download): the
    live reader decides the line end on the same first block as the file reader, and both find the
    NCCL warning after 100,000 ordinary lines."""
    bar = b"".join(b"train: %3d%%|##### | %d/1000 [00:01<00:10, 90.0it/s]\r" % (i % 100, i) for i in range(1300))
    assert len(bar) > 64 * 1024 and b"\n" not in bar
    data = bar + b"\n" + b"".join(b"step %d loss 0.5\n" % i for i in range(100000)) + WARN
    live = _live(data, [65536])
    _same(live, _file(data))
    assert {e.kind for e in live.events} >= {"nccl.warn", "nccl.trace"}
    assert live.stats.lines_read == 100003


def test_lone_cr_file_longer_than_the_first_block():
    data = b"".join(b"line %d\r" % i for i in range(CHUNK // 6))
    assert len(data) > CHUNK and b"\n" not in data
    rng = random.Random(3)
    _same(_live(data, [rng.randint(1000, 200000) for _ in range(5)]), _file(data))


def test_over_long_line_fed_in_small_pieces():
    data = b"a" * (MAX_LINE + 5000) + b"\n" + WARN
    live = _live(data, [777])
    _same(live, _file(data))
    assert live.stats.cut_lines == 1


def test_peek_keeps_an_unterminated_last_line_of_an_open_record():
    lp = LiveParser("<stdin>")
    lp.feed(b'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\nSystemExit: 1')
    peeked = lp.peek()
    lp.close()
    assert [e.kind for e in peeked] == [e.kind for e in lp.result().events]
    assert peeked and peeked[0].end_line == 4


_GZ = gzip.compress(WARN * 20 + b"RuntimeError: boom\n")


@pytest.mark.parametrize("data", [
    b"\x1f\x8b",                                  # the magic bytes alone
    b"\x1f\x8bhello, not gzip at all\n",           # not gzip after the magic
    _GZ, _GZ + _GZ,                                # one member, two members
    _GZ[:len(_GZ) // 2], _GZ[:12],                 # cut after some text, cut before any
    _GZ + b"trailing bytes\n",                     # bytes after the last member
], ids=["magic-only", "not-gzip", "one", "two-members", "cut-after-text", "cut-before-text", "trailing"])
@pytest.mark.parametrize("size", [1, 7, 5000])
def test_gzip_reads_the_same_live_and_from_a_file(data, size):
    """One decoder (logdoc/read/gunzip.py): the same text, the same skips and warnings."""
    _same(_live(data, [size]), _file(data))


# What a web page, a forum's typography or a chat client puts in a pasted log in place of what the program
# printed: the log reads as printed, in files and live alike.
TYPOGRAPHY = ("Traceback (most recent call last):\n"
              "\u00a0\u00a0File \u201c/opt/conda/lib/python3.11/site-packages/torch/distributed/c10d_logger.py\u201d, line 79, in wrapper\n"
              "\u00a0\u00a0\u00a0\u00a0return func(*args, **kwargs)\n"
              "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275,"
              " unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
              "ncclUnhandledCudaError: Call to CUDA function failed.\n"
              "Last error:\n"
              "\u200bCuda failure \u2018out of memory\u2019\n")


def test_typography_of_a_pasted_log_reads_as_printed():
    plain = (TYPOGRAPHY.replace("\u00a0", " ").replace("\u201c", '"').replace("\u201d", '"')
             .replace("\u2018", "'").replace("\u2019", "'").replace("\u200b", ""))
    a = _file(TYPOGRAPHY.encode("utf-8"))
    b = _file(plain.encode("utf-8"))
    assert [(e.kind, e.template, e.line, e.fields) for e in a.events] == \
        [(e.kind, e.template, e.line, e.fields) for e in b.events]
    assert any(e.kind == "nccl.warn" and "out of memory" in e.text for e in a.events)
    assert "\u201c" not in "".join(e.text for e in a.events)
    _same(a, _live(TYPOGRAPHY.encode("utf-8"), [7, 300]))
