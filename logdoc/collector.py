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
