"""The picture of the failure: the report's timeline section and its text form in Markdown."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoc.api import explain
from logdoc.report.markdown import render
from logdoc.report.picture import text_timeline

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_dir() and not p.name.startswith("_"))


def test_lagging_rank_cascade():
    report = explain([str(ROOT / "samples/nccl-watchdog-cascade-lagging-rank")])
    tl = report["timeline"]
    assert tl["axis"] == "time" and tl["start"].startswith("2026-11-27T02:13")
    by_label = {r["label"]: r for r in tl["rows"]}
    assert [by_label[f"rank {r}"]["behind"] for r in range(8)] == [r == 3 for r in range(8)]
    assert "never enqueued 183" in by_label["rank 3"]["state"]
    first = tl["first"]
    assert tl["rows"][first["row"]]["label"] == "rank 0" and first["line"] == 114
    assert sum(m["first"] for r in tl["rows"] for m in r["marks"]) == 1
    md = render(report)
    block = md.split("## The failure, rank by rank", 1)[1].split("```")[1]
    assert "BEHIND: completed 182 and never enqueued 183" in block
    rank0 = next(line for line in block.splitlines() if line.startswith("rank 0 "))
    assert "|@" in rank0  # the first failure, at the start of the axis


def test_first_failure_is_the_peer_that_failed_not_the_waiters():
    report = explain([str(ROOT / "samples/nccl-ib-completion-error-12")])
    tl = report["timeline"]
    assert tl["rows"][tl["first"]["row"]]["label"] == "rank 6"
    waiters = [r for r in tl["rows"] if r["ranks"] and r["ranks"][0] in (0, 1, 2, 3)]
    assert all(m["nature"] == "symptom" and m["x"] > tl["first"]["x"] for r in waiters for m in r["marks"])


def test_without_times_the_axis_is_the_order_and_attempts_come_in_order():
    report = explain([str(ROOT / "samples/torchrun-max-restarts-always-failing")])
    tl = report["timeline"]
    assert tl["axis"] == "order" and tl["start"] is None
    first = tl["first"]
    assert "attempt_0" in first["file"] and first["text"] == "KeyError: 'labels'"
    assert "no usable time" in text_timeline(tl)[0]
    rank1 = next(r for r in tl["rows"] if r["label"] == "rank 1")
    assert rank1["marks"][0]["first"] and rank1["marks"][0]["x"] == 0


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_gives_a_consistent_section(sample):
    report = explain([str(sample)])
    tl = report["timeline"]
    if tl is None:  # no failure-like line (a diagnosis from INFO lines only, or a healthy job)
        assert "## The failure, rank by rank" not in render(report)
        return
    json.dumps(tl)
    span = tl["span"] or 0
    for row in tl["rows"]:
        for m in row["marks"]:
            assert m["x"] is None or 0 <= m["x"] <= span
            assert m["nature"] in ("root", "neutral", "symptom")
    lines = text_timeline(tl)
    assert all(len(line) <= 200 for line in lines if not line.startswith("first failure: "))
    if len(tl["rows"]) > 1:
        assert "## The failure, rank by rank" in render(report)


def test_redacted_report_hides_hosts_in_the_picture():
    report = explain([str(ROOT / "samples/nccl-watchdog-cascade-lagging-rank")], redact=True)
    assert "trn-h100-05" not in json.dumps(report["timeline"])
