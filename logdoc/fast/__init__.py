"""Speed only. Every module here has a plain twin in :mod:`logdoc.pipeline` (or the classifiers)
that gives the same events and counts, and a differential test that holds it to that
(``tests/test_fastpath.py``, ``tests/test_digest.py``, ``tests/test_parallel.py``,
``tests/test_read_lines.py``); ``LOGDOC_NO_FASTPATH=1`` (or :func:`set_enabled`) turns all of it
off.

This package owns the switch: :func:`enabled`, :func:`set_enabled`, and :func:`subscribe` for the
caches that live beside their owners (the grammar's shape cache, the catalogs' shape memo), which
follow the switch when it turns; and :func:`shape`, the cache key they share. It imports nothing
of logdoc, so every module may import it.

- ``memo.py``: PyTorch classifications remembered per (message, level);
- ``lane.py``: the NCCL lane (a ``host:pid:tid [dev] NCCL INFO`` line that needs no unwrapping and
  no assembling goes straight to the classifier, memoised on its text) and the bulk lane (a line
  of a known bulk shape is counted into its folded group without an event);
- ``scan.py``: a block of lines read with ``bytes.find`` per prefilter keyword instead of line by line;
- ``grep.py``: grep beside the parse, numbering the lines that hold a keyword.

Their preconditions are asked of the modules that own them (:mod:`logdoc.envelope`,
:mod:`logdoc.blocks`), never copied here as literals.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator

_HEX = b"0123456789abcdef"
_ON = [not os.environ.get("LOGDOC_NO_FASTPATH")]
_SUBSCRIBERS: list[Callable[[bool], None]] = []


def enabled() -> bool:
    """Whether the fast paths are on (``LOGDOC_NO_FASTPATH`` unset, :func:`set_enabled`)."""
    return _ON[0]


def set_enabled(on: bool) -> None:
    """Turn every cache and fast path on or off in this process (the differential tests compare
    both); the caches already built follow, through their subscribers."""
    _ON[0] = bool(on)
    for fn in list(_SUBSCRIBERS):
        fn(_ON[0])


@contextmanager
def switched(on: bool) -> Iterator[None]:
    """The fast paths on or off for the ``with`` block, then as they were (the differential tests)."""
    before = enabled()
    set_enabled(on)
    try:
        yield
    finally:
        set_enabled(before)


def subscribe(fn: Callable[[bool], None]) -> None:
    """Call ``fn(on)`` whenever :func:`set_enabled` turns the switch (a cache's owner registers once,
    at import)."""
    _SUBSCRIBERS.append(fn)


def shape(text: str) -> bytes:
    """The cache key of a text: the text without its hex digits (numbers and pointers vary; a
    collision of two different words only costs a fallback to the plain way, never a wrong result)."""
    return text.encode("utf-8", "surrogatepass").translate(None, _HEX)


def shape_bytes(raw: bytes) -> bytes:
    """:func:`shape` of ``raw.decode()``, from the bytes."""
    return raw.translate(None, _HEX)
