"""Start-up: the plain `explain` command line skips typer's command building, the knowledge base
and the grammars come from the user cache; all of it gives exactly what the slow way gives."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from logdoc import cache, cli, kb, rulecache

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def _run(args, extra_env=None, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="100")
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "logdoc", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT, input=stdin)


@pytest.mark.parametrize("args", [
    ["explain", "samples/nccl-socket-fallback", "--format", "json"],
    ["explain", "--format=markdown", "samples/gloo-master-port-in-use", "--no-color"],
    ["explain", "samples/torchrun-worker-sigkill", "--redact", "-f", "json", "--no-progress"],
    ["explain", "samples/nccl-duplicate-gpu"],
    ["explain", "-", "--format", "json"],
    ["explain", "samples/nccl-socket-fallback", "--rules", "samples", "--format", "json"],
    ["explain", "no/such/file"],
], ids=["json", "markdown", "redact", "terminal", "stdin", "rules-dir", "missing"])
def test_fast_command_line_same_as_typer(args, tmp_path):
    stdin = (SAMPLES / "nccl-socket-fallback" / "node0.log").read_text() if "-" in args else None
    env = {"LOGDOC_CACHE_DIR": str(tmp_path)}
    fast = _run(args, env, stdin)
    slow = _run(args, dict(env, LOGDOC_NO_FAST_CLI="1"), stdin)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)


def test_what_the_fast_command_line_takes():
    assert cli._fast_explain(["explain", "a.log", "-f", "json"])["format"] == "json"
    assert cli._fast_explain(["explain", "a.log", "--rules", "d", "--rules=e"])["rules_dirs"] == ["d", "e"]
    assert cli._fast_explain(["explain", "--", "-odd-name.log"])["paths"] == ["-odd-name.log"]
    for other in (["explain"], ["explain", "--help"], ["explain", "-", "--follow"], ["explain", "a", "--bogus"],
                  ["parse", "a.log"], ["explain", "a", "--format"]):
        assert cli._fast_explain(other) is None, other


def _summary(rs):
    return [(r.id, r.file, r.line, r.origin, r.retired is not None) for r in rs], [str(p) for p in rs.problems]


def test_kb_cache_is_the_same_rule_set_and_follows_the_files(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("LOGDOC_NO_CACHE", raising=False)
    want = _summary(kb.load_rules())
    first = rulecache.load_rules()
    assert _summary(first) == want
    (entry,) = list((tmp_path / "c").glob("kb-*.pickle"))
    second = rulecache.load_rules()
    assert _summary(second) == want
    # user rules: another key; editing them changes the key again
    user = tmp_path / "rules"
    user.mkdir()
    src = sorted((ROOT / "knowledge").glob("*.yaml"))[0]
    (user / "mine.yaml").write_text(src.read_text())
    with_user = rulecache.load_rules([str(user)])
    assert _summary(with_user) == _summary(kb.load_rules(extra_dirs=[str(user)]))
    n = len(list((tmp_path / "c").glob("kb-*.pickle")))
    (user / "mine.yaml").write_text(src.read_text() + "\n# edited\n")
    os.utime(user / "mine.yaml", ns=(1, 1))
    rulecache.load_rules([str(user)])
    assert len(list((tmp_path / "c").glob("kb-*.pickle"))) == n + 1
    # a damaged entry is rebuilt, never trusted
    entry.write_bytes(b"garbage")
    assert _summary(rulecache.load_rules()) == want
    assert pickle.loads(entry.read_bytes().split(b"\n", 1)[1]) is not None


def test_kb_cache_loads_each_rule_as_written_when_read(tmp_path, monkeypatch):
    """The cached copy keeps each rule as written (``Rule.data``) pickled apart, loaded when read, and its priority
    beside it (every run sorts by it): the same rule set as the loaded one, rule by rule, the priorities and the
    order of the rules for each kind read without loading any rule as written."""
    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("LOGDOC_NO_CACHE", raising=False)
    want = kb.load_rules()
    rulecache.load_rules()
    got = rulecache.load_rules()  # from the cache folder
    assert all("data" not in r.__dict__ for r in got.rules.values())
    kinds = sorted({k for r in want for k in r.kinds if not k.endswith("*")})
    assert [r.priority for r in got] == [r.priority for r in want]
    assert [[r.id for r in got.rules_for(k)] for k in kinds] == [[r.id for r in want.rules_for(k)] for k in kinds]
    assert all("data" not in r.__dict__ for r in got.rules.values())
    again = pickle.loads(pickle.dumps(got))  # a copy of a copy: the rules as written not read yet are kept as they are
    for a, b, c in zip(got, want, again):
        assert (a.id, a.data, a.title, a.role, a.confidence) == (b.id, b.data, b.title, b.role, b.confidence)
        assert c.data == b.data and c.priority == b.priority


def test_cache_off_and_unsafe_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGDOC_NO_CACHE", "1")
    assert cache.cache_dir() is None
    monkeypatch.delenv("LOGDOC_NO_CACHE")
    d = tmp_path / "open"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(d))
    assert cache.cache_dir() is None          # writable by others: not used
    d.chmod(0o700)
    assert cache.cache_dir() == d


def test_cached_grammars_parse_the_same(tmp_path):
    args = ["parse", "samples/nccl-ib-completion-error-12", "samples/torchrun-worker-python-exception"]
    cold = _run(args, {"LOGDOC_CACHE_DIR": str(tmp_path)})
    assert list(tmp_path.glob("lark-*.pickle"))
    warm = _run(args, {"LOGDOC_CACHE_DIR": str(tmp_path)})
    off = _run(args, {"LOGDOC_NO_CACHE": "1"})
    assert cold.stdout == warm.stdout == off.stdout and cold.stdout


def test_fast_path_defaults_are_typers():
    """The plain explain command line runs without typer (logdoc.cli); its defaults must be the
    ones the typer command declares."""
    import inspect

    from logdoc.cli import commands
    from logdoc.cli import common as cli_common

    declared = {name: getattr(p.default, "default", p.default)
                for name, p in inspect.signature(commands.explain).parameters.items() if name != "paths"}
    assert declared == cli_common.EXPLAIN_DEFAULTS


def test_plain_explain_imports_neither_typer_nor_rich(tmp_path):
    # the fast path ends the process itself (logdoc.cli._leave): look at the modules right then
    code = ("import sys, runpy\nimport logdoc.cli as c\n"
            "def leave(code):\n"
            "    print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click')))\n"
            "    raise SystemExit(code)\n"
            "c._leave = leave\nsys.argv = ['logdoc', 'explain', sys.argv[1], '--format', 'json']\n"
            "try:\n    runpy.run_module('logdoc', run_name='__main__')\nexcept SystemExit:\n    pass\n")
    res = subprocess.run([sys.executable, "-c", code, str(SAMPLES / "nccl-socket-fallback")], capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert "LOADED []" in res.stdout, res.stdout[-500:] + res.stderr[-500:]


def test_table_cache_follows_its_sources_and_survives_damage(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("LOGDOC_NO_CACHE", raising=False)
    src = tmp_path / "table.tsv"
    src.write_text("a\n")
    built = []

    def build():
        built.append(1)
        return {"rows": src.read_text()}

    assert cache.load_table("t", [src], build) == {"rows": "a\n"}
    assert cache.load_table("t", [src], build) == {"rows": "a\n"} and len(built) == 1  # from the cache
    src.write_text("b\nb\n")  # another size: another key
    assert cache.load_table("t", [src], build) == {"rows": "b\nb\n"} and len(built) == 2
    for p in (tmp_path / "c").glob("table-t-*"):
        p.write_bytes(b"garbage")
    assert cache.load_table("t", [src], build) == {"rows": "b\nb\n"} and len(built) == 3
    monkeypatch.setenv("LOGDOC_NO_CACHE", "1")
    assert cache.load_table("t", [src], build) == {"rows": "b\nb\n"} and len(built) == 4


def test_catalogs_from_the_cache_match_the_built_ones(tmp_path, monkeypatch):
    from logdoc import templates
    from logdoc.classify.torch import catalog as torch_catalog

    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("LOGDOC_NO_CACHE", raising=False)
    built = torch_catalog.build_templates()
    for _ in range(2):  # written, then read
        torch_catalog.templates.cache_clear()
        got = torch_catalog.templates()
        assert {w: [(t.id, t.format, t.rx.pattern, t.anchor) for t in v] for w, v in got.items()} == \
            {w: [(t.id, t.format, t.rx.pattern, t.anchor) for t in v] for w, v in built.items()}
    rows = templates._read_rows(templates.data_dir("grammars") / "nccl_messages.tsv")
    for _ in range(2):
        templates.nccl_catalog.cache_clear()
        cat = templates.nccl_catalog()
        assert [(t.id, t.format, t.anchor, t.specificity) for t in cat.templates.values()] == \
            [(t.id, t.format, t.anchor, t.specificity) for t in rows]
        templates.nccl_formats.cache_clear()  # (a digest's table: the catalog's levels and formats, without it)
        assert templates.nccl_formats() == {t.id: (t.levels, t.format) for t in cat.templates.values()}
    torch_catalog.templates.cache_clear()
    templates.nccl_catalog.cache_clear()
    templates.nccl_formats.cache_clear()


def test_warm_start_imports_no_yaml(tmp_path):
    """With the knowledge base in the user cache, `explain` reads no YAML: neither the loader nor
    anything else imports PyYAML (about 15 ms); regex is imported by lark itself, not asked here."""
    code = ("import sys, io, contextlib\nimport logdoc.cli as c, logdoc.cli.common as cc\n"
            "kw = c._fast_explain(['explain', sys.argv[1], '--format', 'json'])\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        cc.explain_command(**kw)\n    except SystemExit:\n        pass\n"
            "print('YAML', 'yaml' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), LOGDOC_CACHE_DIR=str(tmp_path), LOGDOC_JOBS="1")
    env.pop("LOGDOC_NO_CACHE", None)
    sample = str(SAMPLES / "nccl-socket-fallback")
    cold, warm = (subprocess.run([sys.executable, "-c", code, sample], capture_output=True, text=True, env=env,
                                 timeout=300) for _ in range(2))
    assert "YAML True" in cold.stdout, cold.stdout[-300:] + cold.stderr[-500:]  # the cache is filled from YAML
    assert "YAML False" in warm.stdout, warm.stdout[-300:] + warm.stderr[-500:]


def test_digest_explained_without_lark(tmp_path):
    """A digest holds events, not lines: explaining one reads no grammar, so lark (about 5 MB resident)
    is never imported (the classifiers' Transformers are made on first use,
    ``logdoc.grammar.LazyTransformer``); the rank files the digest was made of are read with it."""
    from logdoc import digest
    from logdoc.pipeline import parse_paths

    sample = SAMPLES / "nccl-watchdog-cascade-lagging-rank"
    out = tmp_path / "node.json"
    digest.write(parse_paths([str(sample)], reduce=True), str(out), inputs=[str(sample)])
    code = ("import sys, io, contextlib\nimport logdoc.cli as c, logdoc.cli.common as cc\n"
            "kw = c._fast_explain(['explain', sys.argv[1], '--format', 'json'])\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        cc.explain_command(**kw)\n    except SystemExit:\n        pass\n"
            "print('LARK', any(m == 'lark' or m.startswith('lark.') for m in sys.modules))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), LOGDOC_CACHE_DIR=str(tmp_path / "cache"), LOGDOC_JOBS="1")
    for path, want in ((out, "LARK False"), (sample, "LARK True")):
        got = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                             timeout=300)
        assert want in got.stdout, got.stdout[-300:] + got.stderr[-500:]


def test_lazy_pattern_is_the_compiled_pattern():
    import copy
    import re

    from logdoc.lazyre import Pattern, lazy_re

    src, flags = r"(?P<host>[\w-]+):(?P<pid>\d+) NCCL (INFO|WARN)", re.I
    text = "gpu-1:42 nccl warn x gpu-2:7 NCCL INFO y"
    for first in ("search", "pattern", "groupindex", "compiled"):
        lazy, std = lazy_re(src, flags), re.compile(src, flags)
        assert isinstance(lazy, Pattern) and "compiled" not in repr(lazy)
        getattr(lazy, first)  # any first attribute compiles it
        assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == \
            (std.pattern, std.flags, std.groups, dict(std.groupindex))
        assert lazy.search(text).groupdict() == std.search(text).groupdict()
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in std.finditer(text)]
        assert lazy.sub("-", text) == std.sub("-", text) and lazy.split(text) == std.split(text)
        assert lazy.match(text, 21).span() == std.match(text, 21).span()
        assert lazy.compiled is re.compile(src, flags) and isinstance(lazy, Pattern)
    for other in (pickle.loads(pickle.dumps(lazy_re(src, flags))), copy.deepcopy(lazy)):
        assert other.findall(text) == std.findall(text)
    bad = lazy_re("(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    with pytest.raises(AttributeError):
        lazy_re("x").no_such_attribute


def test_no_pattern_compiled_at_import():
    """Module-level patterns are lazy_re (compiled on first use), not re.compile: importing logdoc
    compiles none (the idiom is logdoc/lazyre.py's; a pattern built inside a function is not concerned)."""
    import ast

    found = []
    for path in sorted((ROOT / "logdoc").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node, in_function=False):
            for child in ast.iter_child_nodes(node):
                inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if (not inside and isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                        and child.func.attr == "compile" and isinstance(child.func.value, ast.Name)
                        and child.func.value.id in ("re", "_re", "regex")):
                    found.append(f"{path.relative_to(ROOT)}:{child.lineno}")
                visit(child, inside)

        visit(tree)
    assert found == []


def test_every_lazy_pattern_compiles():
    """What compiling at import guaranteed (a broken pattern fails at once, not on the first line
    that reaches it): every module-level lazy_re of logdoc compiles."""
    import gc
    import importlib
    import pkgutil

    import logdoc
    from logdoc.lazyre import Pattern

    for m in pkgutil.walk_packages(logdoc.__path__, "logdoc."):
        if not m.name.startswith(("logdoc.__main__", "logdoc.web", "logdoc.cli.commands", "logdoc.report.terminal")):
            importlib.import_module(m.name)
    patterns = [o for o in gc.get_objects() if isinstance(o, Pattern)]
    assert len(patterns) > 200
    for p in patterns:
        assert p.compiled.pattern == p.pattern
