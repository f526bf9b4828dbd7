"""``lazy_re(pattern, flags)``: a module-level regular expression compiled on its first use.

A 10-line ``explain`` imports about 50 modules, whose module-level patterns were all compiled at
import (about 250, most of them for lines the file does not hold): compiling is ``re``'s pure
Python parser and code generator, a tenth of the run. ``NAME = lazy_re(r"...", re.M)`` stands for
``NAME = re.compile(r"...", re.M)``: the first attribute asked of it (``NAME.search``,
``NAME.pattern``, ...) compiles it. The object then becomes an instance of a class made for it
that holds the compiled pattern's methods and attributes, so that every later
``NAME.search(text)`` is as fast as on the pattern itself (an attribute hook or an instance
dictionary would cost 20 to 50 ns a call). Where ``re`` needs the compiled pattern itself
(``re.sub(NAME, ...)``, ``isinstance(x, re.Pattern)``), use ``NAME.compiled``.

:func:`regex_module`: the ``regex`` module (matches with a time limit), likewise imported when a
pattern first needs it (a user rule, a catalog format tried on a long text), not by every run.
"""
from __future__ import annotations

import re
from functools import cache

# what a compiled pattern offers (re.Pattern's public attributes)
_METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "scanner")
_VALUES = ("pattern", "flags", "groups", "groupindex")


class Pattern:
    """A pattern of :func:`lazy_re`, compiled or not yet (``isinstance`` holds for both)."""

    __slots__ = ("_source",)

    def __reduce__(self):
        return (LazyPattern, self._source)

    def __repr__(self) -> str:
        return f"lazy_re({self._source[0]!r}, {self._source[1]!r})"


class LazyPattern(Pattern):
    """Not compiled yet: the first attribute asked compiles it and changes its class."""

    __slots__ = ()

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    @property
    def pattern(self) -> str | bytes:  # the source, as re.Pattern.pattern gives it: no need to compile
        return self._source[0]

    def __getattr__(self, name: str):
        # called only for a name the class does not hold: the first use (or a name no pattern has)
        if name.startswith("__") or name == "_source":
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        ns = {m: staticmethod(getattr(compiled, m)) for m in _METHODS}
        ns.update({v: getattr(compiled, v) for v in _VALUES}, compiled=compiled, __slots__=())
        self.__class__ = type("CompiledPattern", (Pattern,), ns)
        return getattr(self, name)


def lazy_re(pattern: str | bytes, flags: int = 0) -> Pattern:
    """A pattern compiled on its first use: ``lazy_re(p, f)`` for ``re.compile(p, f)``."""
    return LazyPattern(pattern, flags)


@cache
def regex_module():
    """The ``regex`` module, or None without it (the browser build has only ``re``); imported on
    the first call (about 10 ms)."""
    try:
        import regex
    except ImportError:  # pragma: no cover - exercised by the browser build
        return None
    return regex
