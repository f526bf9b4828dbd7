"""`logdoc summary`: the terminal view of the job's anatomy, and --format json kept."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from logdoc.analysis import analyze
from logdoc.pipeline import parse_paths
from logdoc.report.summary import render_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_dir() and not p.name.startswith("_"))


def anatomy(*names: str) -> dict:
    result = parse_paths([str(ROOT / "samples" / n) for n in names])
    return analyze(result.events, files=result.files).anatomy


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_renders_clean(sample):
    text = render_text(anatomy(sample.name), width=100)
    assert text.startswith("Job: ")
    for bad in ("None", "{", "[", "?"):
        assert bad not in text, (bad, text)
    assert all(len(line) <= 100 for line in text.splitlines())


def test_version_mismatch_shows_the_disagreement_first():
    text = render_text(anatomy("nccl-version-mismatch"))
    head, _, rest = text.partition("The ranks disagree on")
    assert rest and "Hosts" not in head
    section = rest.split("\n\n")[0]
    assert "NCCL version" in section and "2.18.3  2 and 3" in section and "2.21.5  0 and 1" in section
    assert "Job: 4 ranks on 2 hosts (2 x 2)" in head


def test_anatomy_of_a_failed_collective():
    text = render_text(anatomy("nccl-ib-completion-error-12"), width=120)
    assert "Job: 8 ranks on 2 hosts (2 x 4)" in text
    assert "failed at SeqNum 4711 ALLREDUCE" in text
    assert re.search(r"\n\S.*?\s6\s+failed in SeqNum 4711 ALLREDUCE", text)  # the rank that failed, in its own row
    assert "hgx-b07  0-3" in text and "hgx-b08  4-7" in text
    assert "NET/IB x8" in text


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "logdoc", "summary", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_terminal_by_default_and_json_kept():
    text = _cli("samples/nccl-version-mismatch")
    assert text.returncode == 0 and text.stdout.startswith("Job: ")
    js = _cli("samples/nccl-version-mismatch", "--format", "json")
    assert js.returncode == 0
    data = json.loads(js.stdout)
    assert data["world_size"] == 4 and any(not a["agree"] for a in data["agreement"])
    bad = _cli("samples/nccl-version-mismatch", "--format", "yaml")
    assert bad.returncode == 2 and "terminal or json" in bad.stderr
