"""The static build and the server, without a browser."""
from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest

from logdoc.web import build
from web_harness import REPO, Server, pyodide_runtime_or_skip

STATIC = REPO / "logdoc" / "web" / "static"


def test_pyodide_pin_matches_the_npm_lock():
    pkg = json.loads((REPO / "tools/web/package.json").read_text())
    lock = json.loads((REPO / "tools/web/package-lock.json").read_text())
    assert pkg["dependencies"]["pyodide"] == build.PYODIDE_VERSION
    assert lock["packages"]["node_modules/pyodide"]["version"] == build.PYODIDE_VERSION
    for entry in lock["packages"].values():
        assert "resolved" not in entry or entry["resolved"].startswith("https://registry.npmjs.org/")


def test_static_files_never_build_html_from_strings():
    for name in ("app.js", "worker.js"):
        text = (STATIC / name).read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                     "new Function", "setAttribute(\"on", "srcdoc"):
            assert sink not in text, f"{name} uses {sink}"


def test_static_files_reference_no_other_origin():
    for path in STATIC.iterdir():
        # the SVG namespace is a name, never fetched (favicon.svg's xmlns, app.js's createElementNS)
        text = path.read_text().replace("http://www.w3.org/2000/svg", "")
        assert not re.search(r"(?<![\w.])(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path.name


@pytest.fixture(scope="module")
def fake_site(tmp_path_factory):
    from fake_core import make_fake_logdoc_wheel

    pyodide_runtime_or_skip()
    tmp = tmp_path_factory.mktemp("fake")
    wheel = make_fake_logdoc_wheel(tmp / "wheel")
    out = tmp / "site"
    sizes = build.build_site(out, logdoc_wheel=wheel, kb_json={"schema": "x", "rules": []})
    return out, sizes


def test_build_writes_a_complete_site(fake_site):
    out, sizes = fake_site
    names = set(sizes["files"])
    for f in ("index.html", "app.js", "worker.js", "style.css", "favicon.svg", "kb.json", "site.json",
              "_headers"):
        assert f in names
    site = json.loads((out / "site.json").read_text())
    for f in build.PYODIDE_FILES:
        if f == "python_stdlib.zip":
            f = site["stdlib"]  # python_stdlib-<sha>.zip when the page's modules are bytecode
        assert f"pyodide/{build.PYODIDE_VERSION}/{f}" in names
    wheels = [n for n in names if n.endswith(".whl")]
    assert any("/lark-1.3.1-py3-none-any.whl" in w for w in wheels)
    assert any("/logdoc-" in w for w in wheels)
    assert sizes["total_bytes"] == sum(f["bytes"] for f in sizes["files"].values())
    assert 0 < sizes["total_gzip"] < sizes["total_bytes"]


def test_build_fills_every_placeholder_and_links_what_exists(fake_site):
    out, _ = fake_site
    html = (out / "index.html").read_text()
    assert "{{" not in html
    assert f'content="{build.CSP}"' in html
    worker = (out / "worker.js").read_text()
    assert "{{" not in worker
    config = json.loads(re.search(r"const CONFIG = (\{.*\});", worker).group(1))
    for rel in config["wheels"]:
        assert (out / rel).is_file()
    assert (out / config["pyodide"] / "pyodide.mjs").is_file()
    assert (out / config["stdlib"]).is_file()
    assert (out / config["kb"].split("?")[0]).is_file()
    for ref in re.findall(r'(?:href|src)="([^"]+)"', html):
        assert (out / ref.split("?")[0]).is_file(), ref


def test_the_modules_the_page_imports_are_bytecode(fake_site):
    import zipfile

    out, sizes = fake_site
    site = json.loads((out / "site.json").read_text())
    if "skipped" in site["bytecode"]:
        pytest.skip(f"no bytecode: {site['bytecode']['skipped']}")
    stdlib = out / "pyodide" / build.PYODIDE_VERSION / site["stdlib"]
    assert stdlib.name != "python_stdlib.zip"  # content-addressed: that folder is immutable
    with zipfile.ZipFile(stdlib) as zf:
        names = set(zf.namelist())
        # what Pyodide's start imports is sourceless bytecode; what the page never imports is
        # still source
        assert "encodings/__init__.pyc" in names and "encodings/__init__.py" not in names
        assert "json/decoder.pyc" in names
        assert "xmlrpc/client.py" in names and "xmlrpc/client.pyc" not in names
        assert zf.read("json/decoder.pyc")[4:8] == (1).to_bytes(4, "little")  # unchecked hash
    config = json.loads(re.search(r"const CONFIG = (\{.*\});", (out / "worker.js").read_text()).group(1))
    logdoc_wheel = next(out / rel for rel in config["wheels"] if "/logdoc-" in rel)
    with zipfile.ZipFile(logdoc_wheel) as zf:
        names = set(zf.namelist())
        assert "logdoc/web/entry.pyc" in names and "logdoc/web/entry.py" not in names
        record = zf.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        assert "logdoc/web/entry.pyc,sha256=" in record and "logdoc/web/entry.py," not in record
    assert site["bytecode"]["wheel_modules"][logdoc_wheel.name] >= 1


def test_build_refuses_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(build.BuildError):
        build.build_site(tmp_path, logdoc_wheel=tmp_path / "x.whl", kb_json={})
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_build_rebuilds_its_own_folder(fake_site, tmp_path):  # fake_site: runtime is there
    from fake_core import make_fake_logdoc_wheel

    out = tmp_path / "site"
    wheel = make_fake_logdoc_wheel(tmp_path / "w")
    build.build_site(out, logdoc_wheel=wheel, kb_json={})
    (out / "stale.txt").write_text("old")
    build.build_site(out, logdoc_wheel=wheel, kb_json={})
    assert not (out / "stale.txt").exists()


def test_tampered_runtime_is_refused(tmp_path):
    cache = tmp_path / "cache"
    runtime = pyodide_runtime_or_skip()
    bad = cache / f"pyodide-{build.PYODIDE_VERSION}"
    bad.mkdir(parents=True)
    for name in build.PYODIDE_FILES:
        (bad / name).write_bytes((runtime / name).read_bytes())
    with open(bad / "pyodide.mjs", "a") as f:
        f.write("\n// tampered\n")
    with pytest.raises(build.BuildError):
        build.pyodide_files(cache)


def test_kb_json_is_the_validated_knowledge_base():
    from logdoc import kb

    compiled = build.compile_kb()
    assert compiled["rules"], "the knowledge base is empty"
    assert len(list(kb.load_compiled(compiled))) == len(list(kb.load_rules()))


def test_server_is_local_with_wasm_type_and_csp(fake_site):
    out, _ = fake_site
    with Server(out) as server:
        assert server.url.startswith("http://127.0.0.1:")
        wasm = f"{server.url}pyodide/{build.PYODIDE_VERSION}/pyodide.asm.wasm"
        with urllib.request.urlopen(wasm) as r:
            assert r.headers["Content-Type"] == "application/wasm"
            assert "immutable" in r.headers["Cache-Control"]
        with urllib.request.urlopen(server.url) as r:
            assert r.headers["Content-Security-Policy"].startswith(build.CSP)
            assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            assert r.headers["Cache-Control"] == "no-cache"
            assert b"<textarea" in r.read()
        for name, ctype in (("worker.js", "text/javascript"), ("style.css", "text/css"),
                            ("kb.json", "application/json")):
            with urllib.request.urlopen(server.url + name) as r:
                assert r.headers["Content-Type"].startswith(ctype)


def test_entry_on_cpython_gives_the_api_report():
    from logdoc import api, kb
    from logdoc.report import markdown
    from logdoc.web import entry

    info = json.loads(entry.init(json.dumps(build.compile_kb())))
    assert info["problems"] == [] and info["rules"] > 0
    folder = REPO / "samples" / "nccl-ib-completion-error-12"
    sources = [(p.name, p.read_text(encoding="utf-8", errors="replace"))
               for p in sorted(folder.iterdir()) if p.name != "sample.yaml"]
    out = json.loads(entry.explain(json.dumps(sources)))
    native = api.explain_sources(sources, rules=kb.load_compiled(build.compile_kb()))
    assert out["report"] == json.loads(json.dumps(native))
    assert out["markdown"] == markdown.render(native)
    red = json.loads(entry.markdown_again(True))
    assert red["markdown"] == markdown.render(api.explain_sources(
        sources, rules=kb.load_compiled(build.compile_kb()), redact=True))
    assert json.loads(entry.warm_up())["ok"]
