"""Compiled regular expressions kept in the user's cache folder (:func:`logdoc.cache.cache_dir`).

An ``explain`` compiles 200 to 500 patterns: the module patterns it uses (:mod:`logdoc.lazyre`), the
catalogs' formats, the shapes learned from the log's lines (:mod:`logdoc.fast.readings`, the grammar's),
Lark's lexers. ``re``'s parser and code generator are pure Python: 5 to 10% of a run. ``re.compile`` turns
a pattern and its flags into the arguments of ``_sre.compile`` (the flags, the code, the groups and their
names), always the same ones for the same pattern, flags and Python. :func:`install` makes ``re`` take them
from a file that earlier runs wrote (:func:`save`: the patterns this run used first, then earlier ones, up to
:data:`MAX_PATTERNS` and :data:`MAX_BYTES` of code: 2 to 10 ms to load), keyed by Python's version and the
regex engine's; a pattern not in it is compiled as ``re`` compiles it and added. The pattern objects are
those ``re`` builds (``Pattern.__eq__`` compares the code; ``tests/test_regex_cache.py`` holds every pattern
of a run to ``re``'s own compile, its plain twin).

The command line installs it for one run (``logdoc.cli.main``); ``LOGDOC_NO_CACHE=1`` or no cache folder:
not. Any failure (a damaged file, a Python whose ``re`` is built otherwise) leaves ``re`` as it is.
"""
from __future__ import annotations

import os
import pickle
import re
import sys
from array import array

SCHEMA = "logdoc.regexcache/1"
MAX_PATTERNS = 2048  # kept in the file (the readings' shapes of many logs would grow it without end)
MAX_BYTES = 3 << 19  # and their code's bytes (Lark's lexers are 8 to 12 kB each): about one large run's

_CODES: dict[tuple, tuple] = {}  # (pattern, flags) -> _sre.compile's arguments after the pattern, the code as bytes
_USED: dict[tuple, None] = {}  # the keys this run compiled, in order
_STATE: dict = {"orig": None, "path": None, "pid": None, "new": False}


def _arguments(pattern, flags: int) -> tuple:
    """What ``re._compiler.compile(pattern, flags)`` hands ``_sre.compile`` after the pattern (its own steps)."""
    from re import _compiler, _parser

    p = _parser.parse(pattern, flags)
    code = _compiler._code(p, flags)
    groupindex = p.state.groupdict
    indexgroup = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    return flags | p.state.flags, array("I", code).tobytes(), p.state.groups - 1, dict(groupindex), tuple(indexgroup)


def _build(pattern, args: tuple):
    import _sre

    flags, code, groups, groupindex, indexgroup = args
    return _sre.compile(pattern, flags, array("I", code).tolist(), groups, dict(groupindex), indexgroup)


def _compile(pattern, flags=0):
    """``re._compiler.compile`` with the arguments of ``_sre.compile`` remembered by pattern and flags."""
    if type(pattern) not in (str, bytes) or flags & re.DEBUG:
        return _STATE["orig"](pattern, flags)
    key = (pattern, flags)
    args = _CODES.get(key)
    if args is None:
        args = _CODES[key] = _arguments(pattern, flags)
        _STATE["new"] = True
    if key not in _USED:
        _USED[key] = None
    return _build(pattern, args)


def _works() -> bool:
    """Whether this Python's ``re`` compiles as :func:`_arguments` reads it (the same pattern objects)."""
    from re import _compiler

    for p, f in ((r"(?P<a>x+)(y)?\d{2,5}[a-f]|^\s*$", re.I | re.M), (rb"(?<![0-9])[0-9]++\b(?:0x)?", 0)):
        want = _compiler.compile(p, f)
        got = _build(p, _arguments(p, f))
        if got != want or got.groupindex != want.groupindex or got.groups != want.groups:
            return False
    return True


def install() -> bool:
    """Make ``re`` take compiled patterns from the cache file (and add the new ones); False when it stays as it
    is (no cache folder, ``LOGDOC_NO_CACHE``, a ``re`` of another make). Once per process."""
    if _STATE["orig"] is not None:
        return True
    from .cache import cache_dir

    try:
        from re import _compiler

        import _sre

        folder = cache_dir()
        if folder is None or not _works():
            return False
        v = sys.version_info
        tag = f"{sys.implementation.name}-{v[0]}.{v[1]}.{v[2]}-{_sre.MAGIC}-{_sre.CODESIZE}"
        path = folder / f"regex-{tag}.pickle"
        try:
            with open(path, "rb") as fh:
                if fh.readline() == (SCHEMA + "\n").encode():
                    got = pickle.load(fh)
                    if type(got) is dict:
                        _CODES.update(got)
        except Exception:  # noqa: BLE001 - missing or damaged: compiled as usual, written again
            _CODES.clear()
        _STATE.update(orig=_compiler.compile, path=path, pid=os.getpid(), new=False)
        _compiler.compile = _compile
        return True
    except Exception:  # noqa: BLE001 - re as it is
        return False


def save() -> None:
    """Write the cache file when this run compiled a pattern it did not hold (in the process that installed it):
    this run's patterns first, then earlier ones, up to :data:`MAX_PATTERNS` and :data:`MAX_BYTES` of code."""
    path = _STATE["path"]
    if path is None or not _STATE["new"] or _STATE["pid"] != os.getpid():
        return
    from .cache import write_atomic

    keep: dict[tuple, tuple] = {}
    size = 0
    for k in [*_USED, *_CODES]:
        v = _CODES.get(k)
        if v is None or k in keep:
            continue
        size += len(v[1])
        if len(keep) >= MAX_PATTERNS or size > MAX_BYTES:
            break
        keep[k] = v
    try:
        write_atomic(path, (SCHEMA + "\n").encode() + pickle.dumps(keep, protocol=pickle.HIGHEST_PROTOCOL))
        _STATE["new"] = False
    except Exception:  # noqa: BLE001 - no cache rather than no result
        pass


def uninstall() -> None:
    """``re`` as it was (the tests)."""
    orig = _STATE["orig"]
    if orig is not None:
        from re import _compiler

        _compiler.compile = orig
    _STATE.update(orig=None, path=None, pid=None, new=False)
    _CODES.clear()
    _USED.clear()
