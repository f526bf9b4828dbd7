"""The command line follows typer's and click's conventions: --version, clean usage lines, a table
that fits the terminal, times that say when the year is unknown, text cut at a word boundary."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from logdoc import __version__
from logdoc.kb import human_times, render_template
from logdoc.shorten import shorten

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1"}


def run(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "logdoc", *args], capture_output=True, text=True, timeout=120,
                          env={**ENV, "COLUMNS": str(columns)}, cwd=ROOT)


def test_version():
    res = run("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"logdoc {__version__}"


@pytest.mark.parametrize("command", [["explain"], ["parse"], ["run"], ["digest"], ["redact"], ["summary"],
                                     ["rules", "show"], ["rules", "lint"], ["web", "build"], ["web", "serve"]])
def test_help_has_clean_usage_and_arguments(command):
    res = run(*command, "--help")
    assert res.returncode == 0, res.stderr
    usage = res.stdout.splitlines()[0]
    assert usage.startswith("Usage: ") and "{" not in usage, usage
    assert "<list[" not in res.stdout and "<bool>" not in res.stdout and "<str>" not in res.stdout, res.stdout


def test_parse_table_fits_80_columns_or_falls_back_to_blocks():
    sample = str(ROOT / "samples" / "nccl-peer-oom-killed" / "node0.log")
    narrow = run("parse", sample, "--format", "table", columns=80)
    assert narrow.returncode == 0
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines())
    wide = run("parse", sample, "--format", "table", columns=220)
    lines = wide.stdout.splitlines()
    assert "where" in lines[1] and "text" in lines[1] and all(len(line) <= 220 for line in lines)


def test_shorten_cuts_at_a_word_boundary_with_an_ellipsis():
    text = "there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO) between ranks"
    out = shorten(text, 72)
    assert out.endswith("…") and len(out) <= 72 and not out.endswith("(e.…")
    assert text.startswith(out[:-1]) and text[len(out) - 1] == " "
    assert shorten("short", 72) == "short"
    assert shorten("x" * 50, 10) == "x" * 9 + "…"


def test_times_without_a_year_say_so():
    assert human_times("after --01-01T21:57:20") == "after 01-01 21:57:20 (year unknown)"
    assert human_times("at 2026-01-01T21:57:20") == "at 2026-01-01T21:57:20"
    assert render_template("printed nothing after {t}", {"t": "--11-29T23:10:42.5"}) == \
        "printed nothing after 11-29 23:10:42.5 (year unknown)"


def test_no_yearless_times_in_terminal_reports():
    for name in ("gloo-fd-exhaustion-store-host-ws16", "nccl-dgx-spark-mesh-pp-truncated"):
        res = run("explain", str(ROOT / "samples" / name), columns=120)
        assert "--01-" not in res.stdout and "--11-" not in res.stdout
