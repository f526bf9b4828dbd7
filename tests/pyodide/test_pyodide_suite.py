"""The browser runtime, without a browser: Pyodide in Node, offline, from the pinned package.

1. The page path: with exactly the page's wheels (lark, logdoc; no PyYAML, no regex), every
   bundled sample explained through ``logdoc.web.entry`` gives the same report as CPython.
2. The core test suite under Pyodide (tests that need rich, typer, PyYAML-free loading of
   sample.yaml aside: PyYAML's pure-Python package is added for the suite only; tests that need
   subprocesses or venv are reported as "not in the browser build").
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

node = shutil.which("node")
pytestmark = pytest.mark.skipif(
    node is None, reason="node is not installed; .ci/run installs it (see docs/web.md)")

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def pyodide_run(tmp_path_factory):
    import pyodide_harness

    tmp = tmp_path_factory.mktemp("pyodide")
    result, reports, output = pyodide_harness.run(tmp)
    print(output[-3000:])
    print("PYODIDE-RESULT", json.dumps({k: v for k, v in result.items() if k != "suite"}))
    if "suite" in result:
        print("suite outcomes:", result["suite"].get("outcomes"),
              "native-only:", len(result["suite"].get("native_only", [])))
    return result, reports


def _part(result: dict, name: str) -> dict:
    if name not in result:
        pytest.fail(f"the Pyodide run stopped before its {name} part:\n{result.get('error', result)}")
    return result[name]


def test_page_runtime_has_only_the_page_wheels(pyodide_run):
    result, _ = pyodide_run
    page = _part(result, "page")
    assert page["absent"] == {"yaml": True, "regex": True, "rich": True, "typer": True}
    assert page["regex_engine"] == "re"
    assert page["problems"] == []
    assert page["rules"] and page["rules"] > 0


def _sources(folder: Path):
    return [
        (p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8", errors="replace"))
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "sample.yaml"
    ]


def test_page_path_reports_equal_cpython(pyodide_run):
    from logdoc import api, kb
    from logdoc.web.build import compile_kb

    result, page = pyodide_run
    _part(result, "page")
    rules = kb.load_compiled(compile_kb())
    assert len(page["reports"]) >= 1
    differ = []
    for name in sorted(page["reports"]):
        folder = SAMPLES / name
        native = json.loads(json.dumps(api.explain_sources(_sources(folder), rules=rules)))
        if native != page["reports"][folder.name]:
            differ.append(folder.name)
    assert differ == [], f"Pyodide and CPython disagree on: {differ}"


def test_core_suite_passes_under_pyodide(pyodide_run):
    result, _ = pyodide_run
    suite = _part(result, "suite")
    assert "error" not in suite, suite.get("error")
    failures = (f"{len(suite['failures'])} test(s) failed under Pyodide:\n"
                + "\n".join(f"  {f['test']} ({f['when']})" for f in suite["failures"]) + "\n\n"
                + "\n\n".join(f"{f['test']} ({f['when']}):\n{f['message']}" for f in suite["failures"][:5]))
    assert suite["outcomes"]["failed"] == 0 and suite["outcomes"]["error"] == 0, failures
    assert suite["exit_code"] in (0, 5), failures
    assert suite["outcomes"]["passed"] > 0
    assert suite["logdoc_from"].endswith("site-packages/logdoc"), suite["logdoc_from"]
    assert suite["regex_engine"] == "re"
