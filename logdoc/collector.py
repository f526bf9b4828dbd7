"""The cyclic garbage collector held off while logdoc makes many objects and few cycles.

A parse, a digest's load and a report's analysis each make hundreds of thousands of objects that
they keep (events, their fields, per-rank state) and a few thousand in cycles (those of first uses:
compiled patterns, parser tables). The collector would go through the kept ones again and again as
they are made (15% of a report's time at 2,000 ranks), so it is off meanwhile and runs after.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_off() -> Iterator[None]:
    """The collector off within the block; on again after it if it was on before."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_HELD = [False]  # the collector turned off by hold_for_explain (and not on again yet)


def hold_for_explain(argv: list[str]) -> None:
    """A plain ``logdoc explain`` runs without the collector from the command line's first import (``logdoc.__main__``,
    the entry point ``logdoc.cli.main``): what it makes besides the blocks above (imports, the knowledge base and
    the grammars loaded, the output) holds few cycles, and the run ends with ``os._exit``; the collector went
    through the knowledge base's objects as they were loaded. Any other command line: :func:`release`."""
    if argv[:1] == ["explain"] and gc.isenabled():
        gc.disable()
        _HELD[0] = True


def release() -> None:
    """The collector on again when :func:`hold_for_explain` turned it off (a command line that is not a plain explain)."""
    if _HELD[0]:
        _HELD[0] = False
        gc.enable()
