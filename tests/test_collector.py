"""logdoc.collector: the collector held off within a block (and left as it was), and for a plain explain only."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from logdoc import collector

ROOT = Path(__file__).resolve().parents[1]


def _restore(was: bool) -> None:
    collector._HELD[0] = False
    (gc.enable if was else gc.disable)()


def test_collector_off_leaves_it_as_it_was():
    was = gc.isenabled()
    try:
        gc.enable()
        with collector.collector_off():
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with collector.collector_off():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        _restore(was)


def test_held_for_a_plain_explain_only():
    was = gc.isenabled()
    try:
        gc.enable()
        collector.hold_for_explain(["digest", "x.log"])
        assert gc.isenabled()
        collector.hold_for_explain(["explain", "x.log"])
        assert not gc.isenabled()
        collector.release()
        assert gc.isenabled()
        gc.disable()  # off by someone else: neither held nor turned on
        collector.hold_for_explain(["explain", "x.log"])
        collector.release()
        assert not gc.isenabled()
    finally:
        _restore(was)


def test_other_command_lines_run_with_the_collector(tmp_path):
    """An explain the typer application reads (``--follow``, help) and any other command: the collector on again."""
    code = ("import gc, sys\n"
            "sys.argv = ['logdoc', 'explain', '--help']\n"
            "from logdoc.cli import commands, main\n"
            "def app(*a, **k):\n"
            "    print('collector', gc.isenabled())\n"
            "commands.app = app\n"
            "main()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), LOGDOC_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "collector True" in out.stdout, out.stderr
