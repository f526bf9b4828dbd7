"""Fetch (once, into the web build cache) and verify what the Pyodide runs need, then run them.

Everything third-party is pinned by sha256: the Pyodide runtime and the lark wheel by
``logdoc.web.build``, the pytest stack by ``requirements.txt`` (pip ``--require-hashes``), and
PyPI's PyYAML sdist below, from which a pure-Python wheel is made for the test suite only (the
page itself has no PyYAML and reads kb.json).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from logdoc.web import build

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUN_MJS = HERE / "run.mjs"
PYYAML_SDIST = ("pyyaml==6.0.3", "pyyaml-6.0.3.tar.gz",
                "d76623373421df22fb4cf8817020cbb7ef15c725b9d5e45f17e189bfc384190f")


def cache_dir() -> Path:
    d = build.default_cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    return d


def runtime_dir() -> Path:
    return build.pyodide_files(cache_dir())


def page_wheels(tmp: Path) -> list[Path]:
    """lark (pinned) and logdoc built from this tree: what the page loads."""
    return [*build.pypi_wheels(cache_dir()), build.build_logdoc_wheel(tmp)]


def test_wheels() -> list[Path]:
    folder = cache_dir() / "pyodide-test-wheels"
    folder.mkdir(parents=True, exist_ok=True)
    reqs = HERE / "requirements.txt"
    wanted = [line.split("==")[0].strip().lower() for line in reqs.read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    have = {p.name.split("-")[0].lower(): p for p in folder.glob("*.whl")}
    if not all(w in have for w in wanted):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary=:all:", "--require-hashes", "-r", str(reqs), "-d", str(folder)],
                       check=True)
        have = {p.name.split("-")[0].lower(): p for p in folder.glob("*.whl")}
    pinned = {}
    for line in reqs.read_text().splitlines():
        if "--hash=sha256:" in line:
            pinned[line.split("==")[0].strip().lower()] = line.split("--hash=sha256:")[1].split()[0]
    out = []
    for name in wanted:
        path = have[name]
        if hashlib.sha256(path.read_bytes()).hexdigest() != pinned[name]:
            raise RuntimeError(f"{path} does not match its pinned sha256")
        out.append(path)
    return [*out, pyyaml_pure_wheel()]


def pyyaml_pure_wheel() -> Path:
    """A py3-none-any wheel of PyYAML's pure-Python package, made from the pinned sdist."""
    req, filename, digest = PYYAML_SDIST
    folder = cache_dir() / "pyodide-test-wheels"
    wheel = folder / "PyYAML-6.0.3-py3-none-any.whl"
    if wheel.is_file():
        return wheel
    sdist = folder / filename
    if not sdist.is_file():
        reqfile = folder / "pyyaml-sdist.txt"
        reqfile.write_text(f"{req} --hash=sha256:{digest}\n")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        # only PyYAML as an sdist: with :all: its build requirements (Cython)
                        # were compiled from source too, about four minutes, to read its metadata
                        "--no-binary=pyyaml", "--require-hashes", "-r", str(reqfile), "-d", str(folder)],
                       check=True)
    if hashlib.sha256(sdist.read_bytes()).hexdigest() != digest:
        raise RuntimeError(f"{sdist} does not match its pinned sha256")
    files = {}
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if len(parts) == 4 and parts[1:3] == ["lib", "yaml"] and parts[3].endswith(".py"):
                files[f"yaml/{parts[3]}"] = tar.extractfile(m).read()
    dist = "PyYAML-6.0.3.dist-info"
    files[f"{dist}/METADATA"] = b"Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.3\n"
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: logdoc-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
              for n, d in files.items()]
    files[f"{dist}/RECORD"] = ("\n".join(record + [f"{dist}/RECORD,,"]) + "\n").encode()
    tmp = wheel.with_suffix(".partial")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in sorted(files.items()):
            zf.writestr(n, d)
    os.replace(tmp, wheel)
    return wheel


def run(tmp: Path, *, suite: bool = True, page: bool = True, pytest_args: list[str] = (),
        timeout: float = 900) -> tuple[dict, dict | None, str]:
    """Run run.mjs; returns (result, page reports or None, combined output)."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed")
    wheels = page_wheels(tmp / "wheel")
    cmd = [node, str(RUN_MJS), "--pyodide", str(runtime_dir()), "--repo", str(REPO),
           "--wheels", ",".join(map(str, wheels))]
    page_out = tmp / "page.json"
    if page:
        kb_file = tmp / "kb.json"
        kb_file.write_text(json.dumps(build.compile_kb()), encoding="utf-8")
        cmd += ["--kb", str(kb_file), "--page-out", str(page_out)]
    if suite:
        cmd += ["--test-wheels", ",".join(map(str, test_wheels()))]
    if pytest_args:
        cmd += ["--", *pytest_args]
    proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("PYODIDE-RESULT "):
            result = json.loads(line[len("PYODIDE-RESULT "):])
    if result is None:
        raise RuntimeError(f"run.mjs gave no result (exit {proc.returncode}):\n{proc.stdout[-5000:]}")
    result["node_exit"] = proc.returncode
    reports = json.loads(page_out.read_text()) if page and page_out.is_file() else None
    return result, reports, proc.stdout
