"""The one catalog engine: which of a table's templates a message is, by anchor index, specificity
order and bounded match. Both catalogs use it; each dialect's front-end gives it templates:

- NCCL (``grammars/nccl_messages.tsv``, printf dialect, :mod:`logdoc.templates`): a template is
  indexed by its format's first word, and a message asks with its own first word;
- PyTorch / Gloo (``grammars/torch_templates.tsv``, brace dialect,
  :mod:`logdoc.classify.torch.catalog`): a template is indexed by its longest literal word when that
  word stands between blanks in the format, and a message asks with its blank-separated tokens.

A template is anything with an ``anchor`` (literal text every message of it holds; "" for none),
a ``specificity`` (how much literal text it has, in its dialect's measure) and an ``rx``
(:class:`~logdoc.classify.formats.BoundedPattern`, the dialect's regular expression of the
format). :class:`AnchorIndex` tries a message against the templates filed under one of its keys
and those filed under none, most specific first; ties go to the lower ``tier`` (a dialect's own
tie-break: NCCL prefers a format filed under the message's first word to one that starts with a
conversion), then to the table's order. The first template whose anchor the message holds and
whose pattern matches it is the message's.
"""
from __future__ import annotations

import re
from typing import Callable, Collection, Generic, Iterator, Protocol, Sequence, TypeVar

from .formats import BoundedPattern


class Template(Protocol):
    anchor: str
    specificity: int

    @property
    def rx(self) -> BoundedPattern: ...


T = TypeVar("T", bound=Template)


class AnchorIndex(Generic[T]):
    """The templates of one table in specificity order, filed by the key each requires of a message.

    ``key(t)``: the key a message must ask with for ``t`` to be tried (None: tried for every
    message that holds its anchor). ``tier(t)``: the tie-break between templates of equal
    specificity (lower first; the table's order after that)."""

    def __init__(self, templates: Sequence[T], key: Callable[[T], str | None],
                 tier: Callable[[T], int] | None = None) -> None:
        ranked = sorted(range(len(templates)), key=lambda i: (-templates[i].specificity,
                                                              tier(templates[i]) if tier else 0, i))
        self.templates: tuple[T, ...] = tuple(templates[i] for i in ranked)
        by_key: dict[str, list[int]] = {}
        always: list[int] = []
        for pos, t in enumerate(self.templates):
            k = key(t)
            if k:
                by_key.setdefault(k, []).append(pos)
            else:
                always.append(pos)
        self.by_key = {k: tuple(v) for k, v in by_key.items()}
        self.keys = frozenset(self.by_key)
        self.always: tuple[T, ...] = tuple(self.templates[i] for i in always)
        self._always_pos = tuple(always)
        self._one: dict[str, tuple[T, ...]] = {}  # key -> its templates and the unfiled ones, in order

    def candidates(self, keys: Collection[str]) -> Sequence[T]:
        """The templates a message asking with ``keys`` may be, in the order they are tried."""
        hits = {k for k in keys if k in self.by_key} if len(keys) < 8 else self.keys.intersection(keys)
        if not hits:
            return self.always
        if len(hits) == 1:
            k = next(iter(hits))
            got = self._one.get(k)
            if got is None:
                got = self._one[k] = tuple(self.templates[i] for i in sorted(self._always_pos + self.by_key[k]))
            return got
        order = list(self._always_pos)
        for k in hits:
            order.extend(self.by_key[k])
        order.sort()
        return [self.templates[i] for i in order]

    def matches(self, text: str, keys: Collection[str]) -> Iterator[tuple[T, re.Match]]:
        """Every template that reads ``text`` (its anchor held, its pattern matched), in order."""
        for t in self.candidates(keys):
            if t.anchor and t.anchor not in text:
                continue
            m = t.rx.match(text)
            if m is not None:
                yield t, m

    def first(self, text: str, keys: Collection[str]) -> tuple[T, re.Match] | None:
        """The template ``text`` is: the first of :meth:`matches`; None when none reads it."""
        for t in self.candidates(keys):  # matches() written out: this is the hot path
            if t.anchor and t.anchor not in text:
                continue
            m = t.rx.match(text)
            if m is not None:
                return t, m
        return None
