# Runs inside Pyodide (see run.mjs): the core test suite (CORE below) with pytest, from /repo/tests.
#
# What is not run, and why, is decided here and reported by name:
#   - tests/web and tests/pyodide (they drive Node and Chromium from the outside);
#   - a test module or test that needs something the browser build does not have: rich or typer
#     (the CLI and the terminal report), venv, starting processes or a terminal (no subprocess,
#     fork or pty in WebAssembly: an OSError raised inside subprocess.py, pty.py or
#     multiprocessing). Those are turned into skips whose reason starts with "not in the
#     browser build:", reported by name and counted apart from ordinary skips.
# Anything else that fails is a real failure.
import json
import os
import sys

sys.dont_write_bytecode = True  # never write __pycache__ into the mounted repository
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", "/tmp/hypothesis")

import pytest  # noqa: E402

NATIVE_ONLY_MODULES = {
    "rich": "rich (terminal report)",
    "typer": "typer (CLI)",
    "click": "click (CLI)",
    "yaml": "PyYAML (the page reads kb.json)",
    "_posixsubprocess": "subprocesses",
    "venv": "venv and subprocesses (installing packages)",
    "ensurepip": "ensurepip and subprocesses (installing packages)",
    "resource": "resource limits (the resource module)",
    "termios": "a terminal (termios)",
    "fcntl": "fcntl",
}
PREFIX = "not in the browser build: "
# Tests that exercise a feature the browser build does not have, deselected by name.
DESELECT = {
    "tests/test_hostile_regex.py::test_nccl_catalog_formats_are_bounded":
        "calls the catalog matchers directly and relies on the regex module's per-match timeout; "
        "the browser has only re (the end-to-end hostile-parse tests do run)",
    "tests/test_hostile_regex.py::test_torch_catalog_formats_are_bounded":
        "calls the catalog matchers directly and relies on the regex module's per-match timeout; "
        "the browser has only re (the end-to-end hostile-parse tests do run)",
}
# An OSError (or the like) raised inside one of these: WebAssembly has no processes or terminals.
PROCESS_MODULES = {
    "/subprocess.py": "subprocesses",
    "/pty.py": "a pseudo-terminal",
    "/multiprocessing/context.py": "processes (multiprocessing)",
    "/multiprocessing/popen_fork.py": "processes (multiprocessing)",
    "/asyncio/subprocess.py": "subprocesses",
}


def _native_only_reason(excinfo):
    """The reason a test cannot run here, or None when the failure is a real one."""
    if excinfo is None:
        return None
    exc = excinfo.value
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError):
            top = (exc.name or "").split(".")[0]
            if top in NATIVE_ONLY_MODULES:
                return f"needs {NATIVE_ONLY_MODULES[top]}"
        if isinstance(exc, (OSError, NotImplementedError, AttributeError)):
            files = [tb.tb_frame.f_code.co_filename for tb in _walk_tb(exc.__traceback__)]
            for f in reversed(files):
                for mod, what in PROCESS_MODULES.items():
                    if f.endswith(mod):
                        return f"needs {what}"
        exc = exc.__cause__ or exc.__context__
    return None


def _walk_tb(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


class BrowserBuildPlugin:
    def __init__(self):
        self.native_only = []  # (nodeid, reason)
        self.outcomes = {"passed": 0, "failed": 0, "skipped": 0, "error": 0, "xfailed": 0, "xpassed": 0}
        self.failures = []
        self.collected = 0
        self.per_file = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        outcome = yield
        report = outcome.get_result()
        if report.failed and getattr(report, "longrepr", None) is not None:
            text = str(report.longrepr)
            reason = None
            for mod, what in NATIVE_ONLY_MODULES.items():
                if f"No module named '{mod}" in text:
                    reason = f"needs {what}"
            if reason:
                report.outcome = "skipped"
                report.longrepr = (str(collector.path), 0, PREFIX + reason)
                self.native_only.append((collector.nodeid, reason))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            reason = _native_only_reason(call.excinfo)
            if reason:
                report.outcome = "skipped"
                report.longrepr = (str(item.path), item.location[1] or 0, PREFIX + reason)
                if report.when == "call" or report.when == "setup":
                    self.native_only.append((item.nodeid, reason))

    def pytest_collection_finish(self, session):
        self.collected = len(session.items)
        self.per_file = {}
        for item in session.items:
            f = item.nodeid.split("::")[0]
            self.per_file[f] = self.per_file.get(f, 0) + 1

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if hasattr(report, "wasxfail"):
                self.outcomes["xfailed" if report.skipped else "xpassed"] += 1
            elif report.passed:
                self.outcomes["passed"] += 1
            elif report.skipped:
                self.outcomes["skipped"] += 1
            else:
                key = "failed" if report.when == "call" else "error"
                self.outcomes[key] += 1
                self.failures.append({"test": report.nodeid, "when": report.when,
                                      "message": _short(report.longreprtext)})

    def pytest_collectreport(self, report):
        if report.failed:
            self.outcomes["error"] += 1
            self.failures.append({"test": report.nodeid, "when": "collect",
                                  "message": _short(report.longreprtext)})


def _short(text, limit=1500):
    text = text or ""
    return text if len(text) <= limit else text[:600] + "\n…\n" + text[-800:]


os.chdir("/repo")
# logdoc must come from the wheel in site-packages, as in the page, never from /repo/logdoc.
sys.path[:] = [p for p in sys.path if p not in ("", ".", "/repo") and not p.startswith("/home/pyodide")]
plugin = BrowserBuildPlugin()
# The core suite: reading, envelopes, the NCCL and torch grammars, blocks, the knowledge base and
# its examples, the analysis. The sample-wide suites (golden, differential fast path, digests,
# hostile inputs, live use) run natively; under Pyodide (about 3x slower) they exceed the time
# budget, and the page path already runs every sample (page_path.py).
CORE = ["tests/test_source.py", "tests/test_envelope.py", "tests/test_nccl_catalog.py",
        "tests/test_torchlines.py", "tests/test_blocks.py", "tests/test_kb.py", "tests/test_analysis.py"]
default_args = [
    *CORE,
    "--ignore=tests/web",
    "--ignore=tests/pyodide",
    "-p", "no:cacheprovider",
    "--rootdir=/repo",
    "-q",
    "-rs",
    "--durations=10",
]
for nodeid, why in DESELECT.items():
    default_args += ["--deselect", nodeid]
    if os.path.exists(nodeid.split("::")[0]):
        plugin.native_only.append((nodeid, why))
exit_code = pytest.main(list(PYTEST_ARGS) or default_args, plugins=[plugin])  # noqa: F821

import logdoc  # noqa: E402

try:
    import regex  # noqa: F401
    regex_engine = "regex"
except ImportError:
    regex_engine = "re"

summary = {
    "exit_code": int(exit_code),
    "collected": plugin.collected,
    "per_file": plugin.per_file,
    "outcomes": plugin.outcomes,
    "native_only": [{"test": t, "reason": r} for t, r in plugin.native_only],
    "failures": plugin.failures,
    "python": sys.version.split()[0],
    "platform": sys.platform,
    "logdoc_from": os.path.dirname(logdoc.__file__),
    "regex_engine": regex_engine,
}
json.dumps(summary)
