"""`logdoc digest` and explain on digests, through the command line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def _run(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", LOGDOC_CACHE_DIR=kw.pop("cache", ""))
    if not env["LOGDOC_CACHE_DIR"]:
        env["LOGDOC_NO_CACHE"] = "1"
    return subprocess.run([sys.executable, "-m", "logdoc", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT, **kw)


def _diag(stdout: str):
    return [(d["id"], d["category"], d["ranks"]) for d in json.loads(stdout)["diagnoses"]]


def test_digest_then_explain_gives_the_same_diagnoses(tmp_path):
    sample = SAMPLES / "nccl-roce-gid-index-einval"
    out = tmp_path / "node.json.gz"
    r = _run(["digest", str(sample), "-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert "digest:" in r.stderr and out.exists()
    a = _run(["explain", str(sample), "--format", "json"])
    b = _run(["explain", str(out), "--format", "json"])
    assert a.returncode == b.returncode == 1
    assert _diag(a.stdout) == _diag(b.stdout)
    assert json.loads(b.stdout)["stats"]["lines_read"] == json.loads(a.stdout)["stats"]["lines_read"]


def test_digest_to_stdout_and_bad_output(tmp_path):
    r = _run(["digest", str(SAMPLES / "gloo-master-port-in-use"), "-o", "-"])
    assert r.returncode == 0
    assert json.loads(r.stdout)["schema"] == "logdoc.digest/2"
    r = _run(["digest", str(SAMPLES / "gloo-master-port-in-use"), "-o", str(tmp_path / "no" / "such" / "d.json")])
    assert r.returncode == 2 and "cannot write" in r.stderr


def test_no_progress_bar_on_a_pipe(tmp_path):
    r = _run(["explain", str(SAMPLES / "nccl-socket-fallback"), "--progress", "--format", "json"])
    assert all(line.startswith("logdoc:") for line in r.stderr.splitlines()), r.stderr
