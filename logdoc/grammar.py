"""Stage 4: load the Lark grammars of ``grammars/`` and hold what a classifier returns.

Grammars are LALR with the contextual lexer and are built lazily, once per process, the first
time a line needs them: a clean log never pays for building a parser.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .resources import grammar_text


@dataclass(slots=True)
class Parsed:
    """What a classifier understood of one message (or multi-line record)."""

    kind: str
    level: str
    template: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=None)
def parser(name: str, start: str = "start"):
    """The Lark LALR parser for ``grammars/<name>.lark``."""
    from lark import Lark

    return Lark(
        grammar_text(f"{name}.lark"),
        parser="lalr",
        lexer="contextual",
        start=start,
        maybe_placeholders=False,
        propagate_positions=False,
    )
