"""`logdoc web build` from an installed wheel (no source checkout anywhere near it), and the
one-line errors of `logdoc web serve`."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from web_harness import REPO, pyodide_runtime_or_skip

sys.path.insert(0, str(REPO / "tests"))
from test_install import fresh_venv  # noqa: E402


def test_web_build_from_an_installed_wheel(tmp_path):
    runtime = pyodide_runtime_or_skip()  # the checkout's cache: this test must not download Pyodide
    py = fresh_venv(tmp_path / "venv")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LOGDOC_WEB_CACHE": str(runtime.parent)}
    env.pop("PYTHONPATH", None)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(REPO)], check=True, env=env)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import logdoc; print(logdoc.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(tmp_path / "venv") in where  # the installed copy, not the checkout
    proc = subprocess.run([str(py), "-m", "logdoc", "web", "build", "--out", "site"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    site = work / "site"
    info = json.loads((site / "site.json").read_text())
    wheel_name = next(w for w in info["wheels"] if w.startswith("logdoc-"))
    wheel = next(site.glob(f"wheels/*/{wheel_name}"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    assert "logdoc/web/entry.py" in names or "logdoc/web/entry.pyc" in names
    assert any(n.startswith("logdoc/_data/knowledge/") and n.endswith(".yaml") for n in names)
    assert any(n.startswith("logdoc/_data/grammars/") and n.endswith(".lark") for n in names)
    assert any(n.endswith(".dist-info/RECORD") for n in names)
    assert not any("__pycache__" in n for n in names)
    kb = json.loads((site / "kb.json").read_text())
    assert len(kb["rules"]) > 50
    for f in ("index.html", "app.js", "worker.js", "style.css"):
        assert (site / f).is_file()


def _logdoc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "logdoc", *args], cwd=cwd or REPO, capture_output=True,
                          text=True, timeout=60)


def test_serve_a_missing_folder_is_one_line_exit_2(tmp_path):
    proc = _logdoc("web", "serve", str(tmp_path / "nope"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a folder" in lines[0] and "internal error" not in lines[0]


def test_serve_on_a_busy_port_is_one_line_exit_2(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html>")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        proc = _logdoc("web", "serve", str(tmp_path), "--port", str(port))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"port {port}" in lines[0] and "in use" in lines[0], proc.stderr
