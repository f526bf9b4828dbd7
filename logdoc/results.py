"""What a parse gives: :class:`ParseResult` (events, line counts, lines not understood, files).

:class:`Stats` counts every line read exactly once (irrelevant, understood, or relevant but not
understood); its counters are its int fields, and ``to_dict``, ``merge``, ``snapshot`` and
``restore`` are driven by the field list, so a new counter needs no other change. This module
imports nothing of logdoc's but the events, so the parser, the digest and the worker processes all
import it one way.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from .events import Envelope, Event

MAX_UNRECOGNIZED = 200  # lines not understood that a parse lists (all are counted)
# Candidate lines that no grammar understood and that carry no strong marker (counted as irrelevant): the first of each
# text, kept (flagged `loose`) for the reading of a job nothing else explains (logdoc/reread.py), never listed. A paste
# of at most this many lines keeps each of its lines with a word so, keyword or not (logdoc.pipeline.Feeder).
MAX_LOOSE = 64


@dataclass(slots=True)
class Stats:
    files: int = 0
    lines_read: int = 0
    irrelevant: int = 0
    relevant: int = 0
    understood: int = 0
    not_understood: int = 0
    events: int = 0
    cut_lines: int = 0
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def counters(cls) -> tuple[str, ...]:
        """The names of the int fields, in order."""
        return _COUNTERS

    def to_dict(self) -> dict:
        out: dict = {name: getattr(self, name) for name in _COUNTERS}
        out["skipped_files"] = [{"file": f, "reason": r} for f, r in self.skipped_files]
        out["warnings"] = list(self.warnings)
        return out

    def understood_line(self, n: int = 1) -> None:
        """``n`` lines read and understood, each as one event."""
        self.relevant += n
        self.understood += n
        self.events += n

    def merge(self, other: "Stats") -> None:
        for name in _COUNTERS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped_files.extend(other.skipped_files)
        self.warnings.extend(other.warnings)

    def snapshot(self) -> tuple:
        """The state to :meth:`restore` later: the counters and the lengths of the lists."""
        return (tuple(getattr(self, name) for name in _COUNTERS), len(self.skipped_files), len(self.warnings))

    def restore(self, snap: tuple) -> None:
        """Back to a :meth:`snapshot`: the counters as they were, the lists cut to their lengths then."""
        values, n_skipped, n_warnings = snap
        for name, value in zip(_COUNTERS, values):
            setattr(self, name, value)
        del self.skipped_files[n_skipped:], self.warnings[n_warnings:]


_COUNTERS = tuple(f.name for f in fields(Stats) if f.type in ("int", int))


@dataclass(slots=True)
class Unrecognized:
    file: str
    line: int
    text: str
    loose: bool = False  # a candidate without a strong marker (MAX_LOOSE): not "relevant", never listed
    env: Envelope | None = None  # what its envelope said (rank, host ...): the line read again keeps it (logdoc/reread.py)


class Unread(list):
    """The lines of a parse not understood (:class:`Unrecognized`): the first MAX_UNRECOGNIZED that carry a strong
    marker (``marked`` counts them), and the loose lines the feeders of its sources kept (the first line of each of
    MAX_LOOSE texts per source: :func:`settle_unread` keeps the first of each text, MAX_LOOSE of them, in file order)."""

    __slots__ = ("marked",)

    def __init__(self, items=()):
        super().__init__(items)
        self.marked = sum(1 for u in self if not u.loose)

    def add_marked(self, u: Unrecognized) -> None:
        if self.marked < MAX_UNRECOGNIZED:
            self.marked += 1
            self.append(u)

    def truncate(self, n: int) -> None:
        """Back to its first ``n`` lines (a source read again)."""
        del self[n:]
        self.marked = sum(1 for u in self if not u.loose)


def settle_unread(unrecognized: list[Unrecognized], names) -> list[Unrecognized]:
    """The lines not understood in the order of the files and of their lines (interleaved streams settle out of
    order), the loose ones the first line of each text, MAX_LOOSE texts at most: the same whatever the number of
    processes that read the files (each kept the first MAX_LOOSE texts of each of its files)."""
    order = {n: i for i, n in enumerate(names)}
    out: list[Unrecognized] = []
    seen: set[str] = set()
    for u in sorted(unrecognized, key=lambda u: (order.get(u.file, len(order)), u.line)):
        if u.loose:
            if u.text in seen or len(seen) >= MAX_LOOSE:
                continue
            seen.add(u.text)
        out.append(u)
    return out


@dataclass(slots=True)
class ParseResult:
    events: list[Event]
    stats: Stats
    unrecognized: list[Unrecognized]
    files: list[str]
    folded: list[dict] = field(default_factory=list)  # with reduce=True: what was folded (logdoc.digest)
