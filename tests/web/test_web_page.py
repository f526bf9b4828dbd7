"""The built page in a real browser: Debian's Chromium, headless, driven by playwright-core.

The real site (Pyodide runtime, lark and logdoc wheels, kb.json) is built once into a temp
folder and served on 127.0.0.1 by logdoc's own server. tools/web/e2e.mjs pastes a sample,
adds the files of every rank, copies the Markdown (plain and redacted) and pastes a log full of
HTML/JS payloads; every request is recorded, any leaving the origin is blocked. Screenshots are
kept in the temp folder (printed with -s).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from web_harness import REPO, Server, missing_browser_tools, run_e2e

why = missing_browser_tools()
pytestmark = pytest.mark.skipif(why is not None, reason=why or "")

SAMPLE = REPO / "samples" / "nccl-ib-completion-error-12"


def _sources(files):
    return [(p.name, p.read_text(encoding="utf-8", errors="replace")) for p in files]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from logdoc.web.build import build_site

    out = tmp_path_factory.mktemp("site")
    sizes = build_site(out)
    return out, sizes


@pytest.fixture(scope="module")
def e2e(site, tmp_path_factory):
    out, _ = site
    shots = tmp_path_factory.mktemp("screenshots")
    files = sorted(p for p in SAMPLE.iterdir() if p.is_file() and p.name != "sample.yaml")
    with Server(out) as server:
        result = run_e2e(server.url, shots, paste=files[0], files=files)
    print("screenshots in", shots)
    print(json.dumps({k: v for k, v in result.items() if k not in ("scenarios", "console", "requests")}, indent=1))
    if result.get("failure"):
        pytest.fail(result["failure"])
    return result, files


def _native(sources):
    from logdoc import api, kb
    from logdoc.web.build import compile_kb

    return api.explain_sources(sources, rules=kb.load_compiled(compile_kb()))


def test_nothing_leaves_the_origin(e2e):
    result, _ = e2e
    origin = result["url"].rstrip("/")
    assert result["blocked"] == []
    assert result["requests"], "no request was recorded at all"
    assert all(u.startswith(origin + "/") for u in result["requests"]), result["requests"]


def test_no_csp_violation_no_error(e2e):
    result, _ = e2e
    assert result["cspViolations"] == []
    assert result["pageErrors"] == []
    assert result["dialogs"] == []
    errors = [c for c in result["console"] if c["type"] == "error"]
    assert errors == []
    csp = result["csp"]
    assert "default-src 'self'" in csp and "'wasm-unsafe-eval'" in csp
    assert "'unsafe-eval'" not in csp and "'unsafe-inline'" not in csp


def test_pasted_sample_is_diagnosed_like_the_cli(e2e):
    result, files = e2e
    paste = result["scenarios"]["paste"]
    assert paste["state"] == "done" and paste["error"] is None
    native = _native([("pasted.log", files[0].read_text(encoding="utf-8", errors="replace"))])
    assert paste["diagnoses"] == [d["id"] for d in native["diagnoses"]]
    assert paste["diagnoses"], "the sample should give a diagnosis"
    assert paste["evidenceCount"] == _count_evidence(native)
    assert len(paste["marks"]) == _count_highlights(native), "each highlighted span is marked"
    for d in native["diagnoses"]:
        assert d["title"] in paste["reportText"]
        for e in d["evidence"]:
            assert f"{e['file']}:{e['line']}" in paste["reportText"]
    assert Path(paste["screenshot"]).stat().st_size > 20_000


def _all_evidence(report):
    for d in report["diagnoses"]:
        yield from d.get("evidence") or []
        for s in d.get("symptoms") or []:
            yield from s.get("evidence") or []


def _count_evidence(report):
    return sum(1 for _ in _all_evidence(report))


def _count_highlights(report):
    n = 0
    for e in _all_evidence(report):
        hl = e.get("highlight")
        if isinstance(hl, list) and len(hl) == 2 and all(isinstance(x, int) for x in hl):
            a, b = max(0, hl[0]), min(len(e["text"]), hl[1])
            n += b > a
    return n


def test_every_rank_file_is_diagnosed_like_the_cli(e2e):
    result, files = e2e
    multi = result["scenarios"]["files"]
    assert multi["chips"] == len(files)
    native = _native(_sources(files))
    assert multi["diagnoses"] == [d["id"] for d in native["diagnoses"]]
    for d in native["diagnoses"]:
        assert d["title"] in multi["reportText"]
        for e in d["evidence"]:
            assert f"{e['file']}:{e['line']}" in multi["reportText"]
    for shot in multi["screenshots"]:
        assert Path(shot).stat().st_size > 20_000


# the sample's files dropped as bytes made from each: gzipped; UTF-16LE with its mark (Windows PowerShell 5's `>`:
# half its bytes are NULs, yet it is text); after a hole of NULs (logrotate's copytruncate under a writer that
# keeps its offset): the files' diagnoses every time
@pytest.mark.parametrize("scenario", ["dropGz", "dropUtf16", "dropHole"])
def test_dropped_files_are_read(e2e, scenario):
    result, files = e2e
    dropped = result["scenarios"][scenario]
    assert dropped["chips"] == len(files)
    assert dropped["overlayHidden"]
    assert dropped["error"] is None
    assert dropped["diagnoses"] == result["scenarios"]["files"]["diagnoses"]


def test_a_packed_log_says_what_to_run(e2e):
    result, _ = e2e
    status = result["scenarios"]["zstd"]["status"]
    assert "rank0.log.zst" in status and "zstd -d" in status


def test_copy_as_markdown_plain_and_redacted(e2e):
    result, files = e2e
    copy = result["scenarios"]["copy"]
    from logdoc.report import markdown

    native = _native([("pasted.log", files[0].read_text(encoding="utf-8", errors="replace"))])
    assert copy["plain"] == markdown.render(native)
    hosts = native["job"]["hosts"]
    assert hosts, "the sample names its hosts"
    for host in hosts:
        assert host in copy["plain"]
        assert host not in copy["redacted"], f"{host} left in the redacted copy"
    assert native["diagnoses"][0]["id"] in copy["redacted"]


def test_log_text_never_executes(e2e):
    result, _ = e2e
    x = result["scenarios"]["xss"]
    assert x["state"] == "done", x.get("error")
    assert x["pwned"] is None
    assert x["injected"] == 0
    assert x["requestsToX"] == 0, "an <img src=x> from the log was created"
    assert result["dialogs"] == []
    assert x["shownLiterally"], "the payload should be shown as text"
    assert "onerror" in x["chipText"]


def test_the_picture_of_the_failure_is_drawn(e2e):
    result, files = e2e
    pic = result["scenarios"]["files"]["picture"]
    native = _native(_sources(files))
    rows = native["timeline"]["rows"]
    assert pic["strips"] == len(rows) > 1
    assert [label.split(" ")[0] + " " + label.split(" ")[1] for label in pic["labels"]] == \
        [" ".join(r["label"].split(" ")[:2]) for r in rows]
    assert pic["firstMarks"] == 1
    first = native["timeline"]["first"]
    assert f"{first['file']}:{first['line']}" in pic["firstText"]


def test_evidence_in_line_order_and_a_click_opens_the_log(e2e):
    result, files = e2e
    multi = result["scenarios"]["files"]
    names = [p.name for p in files]
    for locs in multi["evidenceOrder"]:
        keys = [(names.index(loc.rsplit(":", 1)[0]), int(loc.rsplit(":", 1)[1])) for loc in locs]
        assert keys == sorted(keys), locs
    viewer = multi["viewer"]
    file, line = viewer["clicked"].rsplit(":", 1)
    assert viewer["open"] and viewer["title"].startswith(viewer["clicked"])
    assert viewer["line"] == int(line)
    text = (REPO / "samples" / "nccl-ib-completion-error-12" / file).read_text().splitlines()[int(line) - 1]
    assert viewer["text"] == text
    assert viewer["inView"] and viewer["closed"]


def test_a_binary_file_gets_a_clear_message(e2e):
    result, _ = e2e
    binary = result["scenarios"]["binary"]
    assert "core.bin" in binary["status"] and "not text" in binary["status"]
    assert "Paste a log" not in binary["status"]


def test_try_an_example_on_a_phone(e2e):
    result, _ = e2e
    ex = result["scenarios"]["example"]
    from logdoc.web.build import EXAMPLE_SAMPLE

    sample = REPO / "samples" / EXAMPLE_SAMPLE
    native = _native(_sources(sorted(sample.glob("*.log"))))
    assert ex["state"] == "done" and ex["diagnoses"] == [d["id"] for d in native["diagnoses"]]
    assert ex["chips"] == len(list(sample.glob("*.log")))
    assert ex["status"].startswith("Example: ")
    assert -2 <= ex["resultsTop"] < ex["viewport"] / 2 and ex["scrollY"] > 0, "the result is scrolled into view"
    assert ex["strips"] > 1 and any(label.startswith("rank 3") for label in ex["behind"])
    assert "0 hosts" not in ex["header"]
    for shot in ex["screenshots"]:
        assert Path(shot).stat().st_size > 10_000
