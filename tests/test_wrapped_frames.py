"""A paste hard-wrapped at its width: a traceback's ``File "...", line N, in f`` line and its exception
line cut by the wrap are read whole again (logdoc/blocks.py), with the cut's piece boundaries deciding
the join: a piece that fills the width to its last column was cut at a column, inside a word or a
path, and joins its rest without a blank; a piece that stops short of the width lost a blank."""
from __future__ import annotations

import sys
from pathlib import Path

from logdoc import kb
from logdoc.api import build_report
from logdoc.blocks import BlockAssembler
from logdoc.events import Envelope
from logdoc.pipeline import parse_sources

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import field_damage  # noqa: E402


def _hard_wrap(text: str, width: int) -> str:
    return field_damage._wrap(width)(text)  # the damage tool's own hard wrap


def _records(lines: list[str], width: int, cut: bool = True) -> list[str]:
    ba = BlockAssembler()
    ba.wrap_width, ba.column_cut = width, cut
    recs = []
    for i, t in enumerate(lines, 1):
        recs.extend(ba.feed(i, Envelope(), t))
    recs.extend(ba.flush())
    assert sum(r.nlines for r in recs) == len(lines)
    return [r.text for r in sorted(recs, key=lambda r: r.line)]


_FRAME = '  File "/home/user/.local/lib/python3.10/site-packages/torch/__init__.py", line 237, in <module>'
_TB = ("Traceback (most recent call last):\n" + '  File "<stdin>", line 1, in <module>\n' + _FRAME + "\n"
       "    from torch._C import *  # noqa: F403\n"
       "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
       "ncclCommRegister")


def test_a_frame_line_cut_at_a_column_is_one_frame_line_again():
    lines = _hard_wrap(_TB, 80).split("\n")
    assert lines[2].startswith("  File") and lines[3][:1] not in " "  # (the frame line, cut)
    (rec,) = _records(lines, 80)
    assert rec.split("\n")[2] == _FRAME and rec.split("\n")[-1] == _TB.split("\n")[-1]


def test_a_function_name_cut_at_a_column_joins_its_frame_line():
    frame = '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", line 79, in wrapper'
    width = len(frame) - 3
    lines = ["Traceback (most recent call last):", frame[:width], frame[width:], "    return func(*args, **kwargs)",
             "RuntimeError: boom"]
    (rec,) = _records(lines, width)
    assert rec.split("\n")[1] == frame and rec.endswith("RuntimeError: boom")


def test_a_frame_line_that_stops_short_of_the_width_takes_no_rest():
    # a line under a short frame line is not its rest (the wrap had room for more): the exception line
    lines = ["Traceback (most recent call last):", '  File "/w/train.py", line 10, in <module>',
             "ValueError: bad value"]
    assert _records(lines, 100) == ["\n".join(lines)]


def test_an_exception_line_cut_inside_a_name_joins_without_a_blank():
    lines = _hard_wrap(_TB, 80).split("\n")
    (rec,) = _records(lines, 80)
    assert rec.endswith("torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister")


def test_an_exception_line_cut_at_a_word_boundary_keeps_its_blank():
    head = "RuntimeError: Gloo connectFullMesh failed with a timeout while waiting for the"
    lines = ["Traceback (most recent call last):", '  File "/w/train.py", line 10, in <module>', "    main()",
             head, "peers to connect"]
    (rec,) = _records(lines, len(head) + 1)
    assert rec.endswith("waiting for the peers to connect")


def test_a_quoted_paste_wrapped_at_80_columns_gets_the_unwrapped_diagnosis():
    quoted = "\n".join("> " + line for line in _TB.split("\n"))
    rules = kb.load_rules()
    want = build_report(parse_sources([("x.txt", quoted + "\n")]), rules)["diagnoses"][0]["id"]
    got = build_report(parse_sources([("x.txt", _hard_wrap(quoted, 80) + "\n")]), rules)["diagnoses"][0]["id"]
    assert got == want == "LD440"


def test_a_line_wrapped_at_a_word_that_fills_the_width_keeps_its_blank():
    # a word wrap's longest line is the one line that reached the width: no column cut, the blank stays
    head = "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus"
    lines = ["Traceback (most recent call last):", '  File "/w/train.py", line 10, in <module>', "    main()",
             head, "error. It is possible that dataloader's workers are out of shared memory."]
    (rec,) = _records(lines, len(head), cut=False)
    assert "signal: Bus error. It is possible" in rec
    # letters alone at both sides of the cut may be two words even where lines end at one column
    (rec,) = _records(lines, len(head), cut=True)
    assert "signal: Bus error. It is possible" in rec
