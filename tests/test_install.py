"""A non-editable install into a fresh virtual environment, run from another folder, works:
grammars/ and knowledge/ ship inside the wheel."""
from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

NCCL_LINE = ("[2026-01-01 21:57:19] dgx1:1007:1165 [0] transport/net_socket.cc:565 NCCL WARN NET/Socket : "
             "peer 192.168.100.11<56630> message truncated : receiving 8 bytes instead of 4.\n")


def fresh_venv(env_dir: Path) -> Path:
    """A new venv that sees logdoc's dependencies wherever this test runs: a nested venv with
    ``system_site_packages`` sees the *base* interpreter's packages, not those of a venv the suite
    runs in, so the running interpreter's site folders are added at the end of its path (a path
    line in a .pth: their own .pth files, an editable logdoc among them, are not run)."""
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    outer = [p for p in dict.fromkeys([*site.getsitepackages(), site.getusersitepackages(),
                                       sysconfig.get_paths()["purelib"]]) if os.path.isdir(p)]
    Path(purelib, "_outer_site.pth").write_text("".join(p + "\n" for p in outer))
    return py


def test_wheel_install_in_fresh_venv(tmp_path):
    env_dir = tmp_path / "venv"
    py = fresh_venv(env_dir)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT)], check=True,
                   env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "rank0.log").write_text(NCCL_LINE)
    out = subprocess.run([str(py), "-m", "logdoc", "parse", "rank0.log"], cwd=work, capture_output=True,
                         text=True, check=True)
    ev = json.loads(out.stdout.splitlines()[0])
    assert ev["kind"] == "nccl.warn" and ev["fields"]["code_location"] == "transport/net_socket.cc:565"
    where = subprocess.run([str(py), "-c", "import logdoc.resources as r; print(r.data_dir('grammars')); "
                            "print(r.data_dir('knowledge'))"], cwd=work, capture_output=True, text=True, check=True)
    for line in where.stdout.split():
        assert str(env_dir) in line and "_data" in line
