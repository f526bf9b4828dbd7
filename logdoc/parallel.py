"""Several files in parallel: worker processes, a run of consecutive files per task, results merged in input order.

The result is the one a single process gives: every file is parsed by itself anyway (a file's
events never depend on another file), the events of each file come back in file order and are
concatenated in the order of the inputs, the counts are added up, and the first
``MAX_UNRECOGNIZED`` not-understood records are kept, as the single process keeps them
(``tests/test_parallel.py``).

Workers are forked when the platform allows it (they inherit the grammars already built); a pool
that cannot start or breaks makes the parse fall back to one process.
"""
from __future__ import annotations

import os
from typing import Callable, Sequence

from .read.source import Source

MIN_FILES = 4              # fewer files: one process
MIN_BYTES = 16 << 20       # less input in total: one process (starting workers costs more)


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _size(src: Source) -> int:
    if src.path is None:
        return -1
    try:
        return os.path.getsize(src.path)
    except OSError:
        return 0


def worth_it(srcs: Sequence[Source], jobs: int | None) -> bool:
    """Whether worker processes pay: several files on disk, enough bytes, more than one core."""
    n = jobs if jobs is not None else cores()
    if n <= 1 or len(srcs) < MIN_FILES:
        return False
    sizes = [_size(s) for s in srcs]
    if any(x < 0 for x in sizes):  # standard input or in-memory text: one process
        return False
    return jobs is not None or sum(sizes) >= MIN_BYTES


CHUNK_MAX = 64   # files parsed by one task at most (many small files: fewer tasks and results to pass)


def _one(args: tuple[Callable, Sequence[Source], bool]):
    import gc

    from .digest import compact

    parse, srcs, reduce = args
    # A task's objects are its result, passed back whole: the collector is off while it runs and on
    # between tasks (the worker was forked while the parent's was off, so it is turned on here).
    gc.disable()
    try:
        result = parse(list(srcs), jobs=1, reduce=reduce)
        # what the events repeat (hosts, times, field names and short values) is one object each,
        # which pickling passes once: the parent gets it shared, without a pass over every event
        compact(result.events)
        return result
    finally:
        gc.enable()


def chunks(srcs: Sequence[Source], n: int) -> list[Sequence[Source]]:
    """Consecutive runs of files, one task each: about eight tasks per worker (a slow file does not
    hold the others back), at most :data:`CHUNK_MAX` files each."""
    size = max(1, min(CHUNK_MAX, len(srcs) // (8 * max(1, n))))
    return [srcs[i:i + size] for i in range(0, len(srcs), size)]


def _context():
    import multiprocessing as mp

    try:
        return mp.get_context("fork")
    except ValueError:
        return mp.get_context()


def parse_parallel(parse_sources: Callable, srcs: Sequence[Source], jobs: int | None, progress=None,
                   reduce: bool = False):
    """``parse_sources(srcs)`` (:func:`logdoc.pipeline.parse_sources`, passed in: the worker runs it
    on one file, and the parse falls back to it in one process) with ``jobs`` worker processes
    (None: cores)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from .results import ParseResult, Stats, Unread, settle_unread

    import gc

    from .collector import collector_off

    n = min(jobs if jobs is not None else cores(), len(srcs))
    tasks = chunks(srcs, n)
    results: list = [None] * len(tasks)
    # What the parent holds (grammars, the knowledge base) is frozen: the workers' collector neither
    # goes through it nor writes to its pages (forked workers would copy them); the parent's is off
    # while the results come in (they are events, which hold no cycles).
    gc.freeze()
    try:
        with collector_off(), ProcessPoolExecutor(max_workers=n, mp_context=_context()) as pool:
            futures = {pool.submit(_one, (parse_sources, task, reduce)): i for i, task in enumerate(tasks)}
            from concurrent.futures import as_completed

            for fut in as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                if progress is not None:
                    for src in tasks[i]:
                        progress.add_bytes(max(0, _size(src)))
                        progress.file_done(src.name)
    except (BrokenProcessPool, OSError, ImportError, PermissionError):
        results = []
    finally:
        gc.unfreeze()
    if not results:
        return parse_sources(srcs, jobs=1, progress=progress, reduce=reduce)
    stats = Stats()
    events = []
    unrecognized = Unread()
    names = []
    folded = []
    from .digest import share_numbers

    for r in results:
        share_numbers(r.events)  # compact: the worker shared the strings they repeat (_one), not numbers
        events.extend(r.events)
        stats.merge(r.stats)
        for u in r.unrecognized:
            if u.loose:
                unrecognized.append(u)
            else:
                unrecognized.add_marked(u)
        names.extend(r.files)
        folded.extend(r.folded)
    return ParseResult(events, stats, settle_unread(unrecognized, names), names, folded)
