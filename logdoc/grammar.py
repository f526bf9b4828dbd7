"""Stage 4: load the Lark grammars of ``grammars/`` and hold what a classifier returns.

Grammars are LALR with the contextual lexer and are built lazily, once per process, the first
time a line needs them: a clean log never pays for building a parser.

Lark costs about 100 µs a line, and a job log repeats a few hundred message shapes millions of
times. :class:`CachedParser` therefore remembers, per *shape* (the text without hex digits),
the token sequence Lark produced and the tree built from it. A later text of the same shape is
cut into tokens by one compiled regular expression made of the terminals' own patterns, and the
remembered tree is rebuilt with the new token values: the same tree Lark would build, because an
LALR parse is determined by its token types. If the expression does not match, Lark parses the
text as usual. ``LOGDOC_NO_FASTPATH=1`` turns the cache off (the differential tests compare both).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .resources import grammar_text

_DIGITS = str.maketrans("", "", "0123456789abcdef")
MAX_SHAPES = 4096  # per parser and start symbol


@dataclass(slots=True)
class Parsed:
    """What a classifier understood of one message (or multi-line record)."""

    kind: str
    level: str
    template: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def shape(text: str) -> str:
    """The cache key of a text: the text without its hex digits (numbers and pointers vary; a
    collision of two different words only costs a fallback to Lark, never a wrong tree)."""
    return text.translate(_DIGITS)


def fastpath_enabled() -> bool:
    return not os.environ.get("LOGDOC_NO_FASTPATH")


class _Shape:
    __slots__ = ("rx", "rebuild")

    def __init__(self, rx: re.Pattern | None, rebuild):
        self.rx = rx
        self.rebuild = rebuild


class CachedParser:
    """``parse(text)`` gives the tree ``lark.Lark.parse`` gives, using the shape cache."""

    def __init__(self, lark, start: str):
        self.lark = lark
        self.start = start
        self.shapes: dict[str, _Shape] = {}
        self.use_cache = fastpath_enabled()
        self._patterns = {t.name: t.pattern.to_regexp() for t in lark.terminals}
        self.hits = self.misses = 0

    def parse(self, text: str):
        if not self.use_cache:
            return self.lark.parse(text, start=self.start)
        key = shape(text)
        entry = self.shapes.get(key)
        if entry is not None and entry.rx is not None:
            m = entry.rx.fullmatch(text)
            if m is not None:
                self.hits += 1
                return entry.rebuild(m.groups())
        self.misses += 1
        tree = self.lark.parse(text, start=self.start)  # raises on text it cannot read: not cached
        if entry is None and len(self.shapes) < MAX_SHAPES:
            self.shapes[key] = self._learn(text, tree)
        return tree

    def _learn(self, text: str, tree) -> _Shape:
        from lark import Token, Tree

        tokens: list[Token] = []

        def collect(node):
            for child in node.children:
                if isinstance(child, Tree):
                    collect(child)
                else:
                    tokens.append(child)

        collect(tree)
        if any(t.start_pos is None for t in tokens):
            return _Shape(None, None)
        ordered = sorted(tokens, key=lambda t: t.start_pos)
        parts, pos = [], 0
        for tok in ordered:
            parts.append(_gap(text[pos:tok.start_pos]))  # whitespace, and keywords Lark kept out of the tree
            pat = self._patterns.get(tok.type)
            if pat is None:
                return _Shape(None, None)
            parts.append(f"((?:{pat}))")
            pos = tok.end_pos
        parts.append(_gap(text[pos:]))
        try:
            rx = re.compile("".join(parts))
        except re.error:
            return _Shape(None, None)
        # Only keep the shape if the expression cuts this very text into the very same tokens.
        m = rx.fullmatch(text)
        if m is None or list(m.groups()) != [str(t) for t in ordered]:
            return _Shape(None, None)
        slot = {id(t): i for i, t in enumerate(ordered)}
        types = [t.type for t in ordered]

        def rebuild(values, _tree=tree):
            def copy(node):
                kids = []
                for child in node.children:
                    if isinstance(child, Tree):
                        kids.append(copy(child))
                    else:
                        i = slot[id(child)]
                        kids.append(Token(types[i], values[i]))
                return Tree(node.data, kids)

            return copy(_tree)

        return _Shape(rx, rebuild)


_WS = re.compile(r"[ \t]+")


def _gap(text: str) -> str:
    """The text between two tokens as a pattern: its words literally, its blanks as blanks."""
    return r"[ \t]+".join(re.escape(p) for p in _WS.split(text))


@lru_cache(maxsize=None)
def _lark(name: str, start: str):
    from lark import Lark

    return Lark(
        grammar_text(f"{name}.lark"),
        parser="lalr",
        lexer="contextual",
        start=start,
        maybe_placeholders=False,
        propagate_positions=False,
    )


@lru_cache(maxsize=None)
def parser(name: str, start: str = "start") -> CachedParser:
    """The (shape-cached) Lark LALR parser for ``grammars/<name>.lark`` and one start symbol."""
    return CachedParser(_lark(name, start), start)
