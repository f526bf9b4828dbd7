"""Helpers for the web tests: build the real site once, serve it on 127.0.0.1, drive Chromium."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools" / "web"
CHROMIUM = os.environ.get("LOGDOC_CHROMIUM", "/usr/bin/chromium")


def pyodide_runtime_or_skip() -> Path:
    """The verified Pyodide runtime (cached, or fetched with npm); skip if npm is missing."""
    import pytest

    from logdoc.web import build

    try:
        return build.pyodide_files(build.default_cache_dir())
    except build.BuildError:
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed and the Pyodide runtime is not cached "
                        "(.ci/run installs nodejs/npm; see docs/web.md)")
        raise


def missing_browser_tools() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (.ci/run installs nodejs/npm; see docs/web.md)"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt-get install chromium; see docs/web.md)"
    if not (TOOLS / "node_modules" / "playwright-core").is_dir():
        return "playwright-core is not installed (cd tools/web && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci)"
    return None


class Server:
    """logdoc.web.build's own server for a folder, on 127.0.0.1 and a free port, in a thread."""

    def __init__(self, directory: Path):
        from logdoc.web.build import make_server

        self.httpd = make_server(directory, 0, quiet=True)
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def run_e2e(url: str, out_dir: Path, *, paste: Path | None = None, files: list[Path] = (),
            timeout: float = 600) -> dict:
    cmd = ["node", str(TOOLS / "e2e.mjs"), "--url", url, "--out", str(out_dir)]
    if paste:
        cmd += ["--paste", str(paste)]
    if files:
        cmd += ["--files", ",".join(map(str, files))]
    proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"e2e.mjs printed no JSON (exit {proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}") from None
