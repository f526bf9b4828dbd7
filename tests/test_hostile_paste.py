"""Logs damaged the way pastes damage them: markdown around the lines (quotes, fences, bullets),
hard-wrapped records, ``...`` elisions, several ranks' lines run together. Recover what can be
recovered; never invent (a damaged record is at worst not understood, never misread)."""
from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path

import pytest

from logdoc.envelope import unwrap
from logdoc.parse import parse_sources, parse_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))


@lru_cache(maxsize=1)
def rules():
    from logdoc.kb import load_rules

    return load_rules()


def files_of(sample: Path) -> list[tuple[str, str]]:
    return [(str(p.relative_to(sample)), p.read_text(encoding="utf-8", errors="replace"))
            for p in sorted(sample.rglob("*"))
            if p.is_file() and p.name != "sample.yaml" and not p.name.endswith(".json")]


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
