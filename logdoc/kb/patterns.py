"""Rule patterns: compiled with ``regex`` and a match timeout when it is present (user rules), else
with ``re`` (built-in rules, proved bounded; the browser).
"""
from __future__ import annotations

import re as _re
import sys
from importlib.util import find_spec

from ..lazyre import regex_module  # (built-in rules search with re: a run from the cache does not import regex)

MATCH_TIMEOUT = 0.05  # seconds per search, when the `regex` module is available


def __getattr__(name: str):
    if name == "_regex":  # the module or None, as this name always gave; imported when asked
        return regex_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class RuleTimeout(Exception):
    """A rule's pattern exceeded :data:`MATCH_TIMEOUT` on some text."""


def regex_engine() -> str:
    """``"regex"`` when the regex module is available, else ``"re"`` (without importing it)."""
    if "regex" in sys.modules:
        return "regex" if sys.modules["regex"] is not None else "re"
    return "regex" if find_spec("regex") is not None else "re"


def compile_pattern(pattern: str, engine: str | None = None):
    """Compile ``pattern`` with ``engine`` (``"re"`` or ``"regex"``; default: the best available)."""
    engine = engine or regex_engine()
    if engine == "regex":
        if regex_module() is None:
            raise RuntimeError("the regex module is not installed")
        return regex_module().compile(pattern)
    return _re.compile(pattern)


def required_literals(source: str) -> tuple[str, ...] | None:
    """Literal texts one of which every match of ``source`` holds (as ``re`` reads it), or None
    when no such text is known: a text without any of them cannot match, and a substring test
    is far cheaper than a search (most events are tried against rules that cannot match them)."""
    try:
        from re import _constants as sre_c, _parser as sre_p  # the stdlib's own reading of the pattern
    except ImportError:  # pragma: no cover - Python < 3.11
        return None
    try:
        tree = sre_p.parse(source)
    except Exception:  # noqa: BLE001 - no literal known; the pattern is compiled (and checked) elsewhere
        return None
    fold = bool(tree.state.flags & sre_c.SRE_FLAG_IGNORECASE)
    got = _literals(tree.data, sre_c, fold)
    if not got:
        return None
    if fold:  # ASCII texts only, compared in lower case (see _Pattern.search)
        if not all(lit.isascii() for lit in got):
            return None
        got = tuple(lit.lower() for lit in got)
    return tuple(sorted(set(got)))


def _literals(items, c, fold: bool = False) -> tuple[str, ...] | None:
    """For a sequence of parsed items: the best required set among its literal runs and its
    required parts (a group, a repeat of at least one, an alternation whose every branch has one)."""
    cands: list[tuple[str, ...] | None] = []
    run: list[str] = []
    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            cands.append(("".join(run),))
            run = []
        if op is c.SUBPATTERN:
            if fold or not av[1] & c.SRE_FLAG_IGNORECASE:  # (a group's own case folding: nothing known)
                cands.append(_literals(av[3].data, c, fold))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) or op is getattr(c, "POSSESSIVE_REPEAT", None):
            if av[0] >= 1:
                cands.append(_literals(av[2].data, c, fold))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            cands.append(_literals(av.data, c, fold))
        elif op is c.BRANCH:
            alts: list[str] = []
            for branch in av[1]:
                one = _literals(branch.data, c, fold)
                if not one:
                    alts = []
                    break
                alts.extend(one)
            if alts:
                cands.append(tuple(alts))
    if run:
        cands.append(("".join(run),))
    best = None
    for cand in cands:  # the set whose shortest text is longest: the rarest to be found by chance
        if cand and (best is None or min(map(len, cand)) > min(map(len, best))):
            best = cand
    return best


# A line longer than this is searched as its head and tail, this long each, joined by a cut mark.
# A pattern that starts with a literal and then runs to a later text (``A.*?B``) is tried from every
# place the literal occurs: on one line that repeats it (lines glued together, a message printed again
# and again without a line end) the search costs the line's length squared over the literal's, which
# on the 1 MiB line the reader lets through is minutes. What a rule reads of a message is at its start
# or its end; a match that spans the cut was one in the whole line too (the head comes before the tail).
LINE_SEARCHED = 8192
_CUT = " \u2026 "
_LONG = 2 * LINE_SEARCHED + len(_CUT)  # a line cut when longer than this
_VIEW: list = [None, None]  # the last long text seen and what is searched of it (many patterns in turn)


def searched(text: str) -> str:
    """What a rule pattern searches of ``text``: ``text`` itself, or, when a line of it is longer than
    twice :data:`LINE_SEARCHED`, the text with each such line cut to its head and its tail."""
    if len(text) <= _LONG:
        return text
    if text is _VIEW[0]:
        return _VIEW[1]
    out = []
    for line in text.split("\n"):
        if len(line) > _LONG:
            line = line[:LINE_SEARCHED] + _CUT + line[-LINE_SEARCHED:]
        out.append(line)
    view = "\n".join(out)
    _VIEW[0], _VIEW[1] = text, (text if len(view) == len(text) else view)
    return _VIEW[1]


class _Pattern:
    """A compiled pattern that searches with a timeout when the regex module is used (user rules);
    without a timeout (built-in rules, whose patterns ``tests/test_hostile_regex.py`` proves bounded
    under ``re``), or without the regex module, plain ``re``."""

    __slots__ = ("source", "compiled", "groups", "timeout", "needs", "fold")

    def __init__(self, source: str, timeout: float | None) -> None:
        self.source = source
        std = _re.compile(source)  # the browser has only `re`: every pattern must compile there
        self.groups = tuple(std.groupindex)
        if timeout is not None and regex_module() is not None:
            self.compiled = regex_module().compile(source)
            self.timeout = timeout
        else:
            self.compiled = std
            self.timeout = None
        # (only for patterns `re` runs: the `regex` module may read some syntax otherwise)
        self.needs = required_literals(source) if self.compiled is std else None
        self.fold = bool(std.flags & _re.IGNORECASE)  # its literals are in lower case, for ASCII texts

    def __getstate__(self):
        # the knowledge base's cached copy (logdoc.rulecache): the source, compiled again on first use,
        # so that loading the cache compiles only the patterns a run searches with
        return self.source, self.groups, self.timeout, self.needs, self.fold

    def __setstate__(self, state) -> None:
        self.source, self.groups, self.timeout, self.needs, self.fold = state
        self.compiled = None

    def search(self, text: str):
        if len(text) > _LONG:
            text = searched(text)
        needs = self.needs
        if needs is not None:
            if self.fold:
                hay = text.lower() if text.isascii() else None  # (case folding beyond ASCII: search)
            else:
                hay = text
            if hay is not None:
                for lit in needs:
                    if lit in hay:
                        break
                else:
                    return None  # none of the texts every match holds
        if self.compiled is None:  # loaded from the cache: compiled on the first text that may match
            self.compiled = regex_module().compile(self.source) if self.timeout is not None else _re.compile(self.source)
        if self.timeout is not None:
            try:
                return self.compiled.search(text, timeout=self.timeout)
            except TimeoutError as exc:
                raise RuleTimeout(self.source) from exc
        return self.compiled.search(text)
