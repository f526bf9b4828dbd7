"""logdoc.regex_cache: compiled patterns taken from the cache folder are the patterns ``re`` compiles (its
plain twin), on every pattern an explain of the samples compiles; a damaged file, no cache folder: ``re``
as it is."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from logdoc import regex_cache

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGDOC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("LOGDOC_NO_CACHE", raising=False)
    regex_cache.uninstall()
    yield tmp_path / "c"
    regex_cache.uninstall()


def _file(folder: Path) -> Path:
    files = list(folder.glob("regex-*.pickle"))
    assert len(files) == 1
    return files[0]


def test_cached_patterns_are_the_compiled_ones(fresh):
    """Every pattern an explain of the samples compiles (Lark's lexers, the catalogs', the learned shapes):
    built from the file a run wrote, it equals ``re``'s own compile (code, flags, groups and their names),
    and matches alike."""
    from re import _compiler

    env = dict(os.environ, PYTHONPATH=str(ROOT), LOGDOC_CACHE_DIR=str(fresh), LOGDOC_JOBS="1")
    folders = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))[:12]
    for d in folders:
        subprocess.run([sys.executable, "-m", "logdoc", "explain", "--format", "json", str(d)], env=env,
                       capture_output=True, timeout=300, check=False)
    assert regex_cache.install()
    codes = dict(regex_cache._CODES)
    assert len(codes) > 150
    orig = regex_cache._STATE["orig"]
    for (pattern, flags), args in codes.items():
        want = orig(pattern, flags)
        got = regex_cache._build(pattern, args)
        assert got == want and got.groupindex == want.groupindex and got.groups == want.groups, pattern
    assert _compiler.compile is regex_cache._compile
    some = next(p for p, f in codes if type(p) is str and "(?P<" in p)
    re.purge()
    assert type(re.compile(some)) is re.Pattern


def test_a_run_adds_its_new_patterns_and_a_warm_run_compiles_none(fresh):
    assert regex_cache.install()
    p = re.compile(r"logdoc-regex-cache-test-(\d+)-(?P<w>[a-z]+)")
    assert p.fullmatch("logdoc-regex-cache-test-12-ab").group("w") == "ab"
    regex_cache.save()
    regex_cache.uninstall()
    re.purge()
    assert regex_cache.install()
    assert (r"logdoc-regex-cache-test-(\d+)-(?P<w>[a-z]+)", 0) in regex_cache._CODES
    assert not regex_cache._STATE["new"]
    re.compile(r"logdoc-regex-cache-test-(\d+)-(?P<w>[a-z]+)")
    assert not regex_cache._STATE["new"]  # taken from the file, not compiled


def test_damaged_file_and_no_cache(fresh, monkeypatch):
    assert regex_cache.install()
    re.purge()
    re.compile(r"logdoc-regex-cache-damage-\d")
    regex_cache.save()
    regex_cache.uninstall()
    _file(fresh).write_bytes(b"logdoc.regexcache/1\nnot a pickle")
    assert regex_cache.install()
    re.purge()
    assert re.compile(r"logdoc-regex-cache-damage-(\d)").match("logdoc-regex-cache-damage-7")[1] == "7"
    regex_cache.uninstall()
    monkeypatch.setenv("LOGDOC_NO_CACHE", "1")
    assert not regex_cache.install()
    from re import _compiler

    assert _compiler.compile is not regex_cache._compile


def test_explain_with_the_cache_is_explain_without(tmp_path):
    """The same JSON cold, warm and with no cache folder at all."""
    sample = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))[0]
    args = [sys.executable, "-m", "logdoc", "explain", "--format", "json", str(sample)]
    base = dict(os.environ, PYTHONPATH=str(ROOT), LOGDOC_JOBS="1", PYTHONHASHSEED="0")
    runs = [subprocess.run(args, env=dict(base, LOGDOC_CACHE_DIR=str(tmp_path / "c")), capture_output=True,
                           timeout=300).stdout for _ in range(2)]
    runs.append(subprocess.run(args, env=dict(base, LOGDOC_NO_CACHE="1"), capture_output=True, timeout=300).stdout)
    assert runs[0] and runs[0] == runs[1] == runs[2]
    assert list((tmp_path / "c").glob("regex-*.pickle"))
