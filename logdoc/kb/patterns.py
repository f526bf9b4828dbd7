"""Rule patterns: compiled with ``regex`` and a match timeout when it is present (user rules), else
with ``re`` (built-in rules, proved bounded; the browser).
"""
from __future__ import annotations

import re as _re

try:  # optional: a timeout on each match, used for every rule when available
    import regex as _regex
except ImportError:  # pragma: no cover - exercised by the browser build
    _regex = None

MATCH_TIMEOUT = 0.05  # seconds per search, when the `regex` module is available


class RuleTimeout(Exception):
    """A rule's pattern exceeded :data:`MATCH_TIMEOUT` on some text."""


def regex_engine() -> str:
    """``"regex"`` when the regex module is available, else ``"re"``."""
    return "regex" if _regex is not None else "re"


def compile_pattern(pattern: str, engine: str | None = None):
    """Compile ``pattern`` with ``engine`` (``"re"`` or ``"regex"``; default: the best available)."""
    engine = engine or regex_engine()
    if engine == "regex":
        if _regex is None:
            raise RuntimeError("the regex module is not installed")
        return _regex.compile(pattern)
    return _re.compile(pattern)


class _Pattern:
    """A compiled pattern that searches with a timeout when the regex module is used (user rules);
    without a timeout (built-in rules, whose patterns ``tests/test_hostile_regex.py`` proves bounded
    under ``re``), or without the regex module, plain ``re``."""

    __slots__ = ("source", "compiled", "groups", "timeout")

    def __init__(self, source: str, timeout: float | None) -> None:
        self.source = source
        std = _re.compile(source)  # the browser has only `re`: every pattern must compile there
        self.groups = tuple(std.groupindex)
        if _regex is not None and timeout is not None:
            self.compiled = _regex.compile(source)
            self.timeout = timeout
        else:
            self.compiled = std
            self.timeout = None

    def search(self, text: str):
        if self.timeout is not None:
            try:
                return self.compiled.search(text, timeout=self.timeout)
            except TimeoutError as exc:
                raise RuleTimeout(self.source) from exc
        return self.compiled.search(text)
