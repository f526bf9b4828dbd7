"""Stage 5: the typed event that every later stage works on.

An :class:`Event` is one recognised record of a log: one line, or a multi-line block such as a
Python traceback or a torchrun failure summary. ``docs/architecture.md`` lists the kinds and their
fields.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")


@dataclass(slots=True)
class Envelope:
    """What the launcher and logger wrappers around a line said about it."""

    rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: str | None = None
    level: str | None = None
    source: str | None = None  # c10 `file.cpp:line` or Python logger path, when printed
    layers: tuple[str, ...] = ()  # names of the envelopes peeled, outermost first

    def stream_key(self) -> tuple:
        """Lines with the same key come from the same process stream."""
        return (self.node_rank, self.host, self.rank, self.local_rank, self.pid)


@dataclass(slots=True)
class Event:
    kind: str
    level: str
    file: str
    line: int
    text: str
    end_line: int = 0
    rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: str | None = None
    template: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    # Filled by analysis: how the rank was attributed ("envelope", "prefix", "nccl-init", "filename").
    rank_source: str | None = None
    attempt: int | None = None

    def __post_init__(self) -> None:
        if not self.end_line:
            self.end_line = self.line

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "level": self.level,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "rank": self.rank,
            "local_rank": self.local_rank,
            "node_rank": self.node_rank,
            "host": self.host,
            "pid": self.pid,
            "time": self.time,
            "template": self.template,
            "fields": self.fields,
            "text": self.text,
        }
        if self.rank_source is not None:
            out["rank_source"] = self.rank_source
        if self.attempt is not None:
            out["attempt"] = self.attempt
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Event":
        known = {k: data[k] for k in cls.__slots__ if k in data}  # type: ignore[attr-defined]
        return cls(**known)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


# --- the aggregate store: events alike across ranks, held once -----------------------------------

# What makes two events of different processes differ while they say the same thing: where and when
# they were printed (the Event attributes below) and the per-process values of a header (NCCL's
# ``dev`` and ``tid``). Everything else (kind, level, template, text, the other fields) is the content.
PROCESS_ATTRS = ("file", "line", "end_line", "rank", "local_rank", "node_rank", "host", "pid", "time",
                 "rank_source", "attempt")
PROCESS_FIELDS = frozenset({"dev", "tid"})
PROCESS_NAMES = frozenset(PROCESS_ATTRS) | PROCESS_FIELDS
# What a rule's ``fields`` condition must not read for its verdict to follow the content key: the names
# above, and the whole text (which holds the NCCL header).
NOT_CONTENT = PROCESS_NAMES | {"text"}


def content_key(ev: Event) -> tuple:
    """What the event says, without who and where printed it: two events with the same key differ only
    in :data:`PROCESS_NAMES` and in the NCCL header their text starts with (``host:pid:tid [dev] ``,
    made of those same values; a rule pattern reads the message, not the header). The fields are
    compared by their ``repr``, in their order: equal reprs are equal values of the JSON types events
    carry; a different order only keeps two alike events apart."""
    f = ev.fields
    text = ev.text
    if f:
        tid = f.get("tid")
        if tid is not None and ev.host is not None and text:
            head = f"{ev.host}:{ev.pid}:{tid} [{f.get('dev')}] "
            i = text.find(head, 0, 64 + len(head))
            if i >= 0:
                text = (text[:i], text[i + len(head):])
        f = repr([(k, v) for k, v in f.items() if k not in PROCESS_FIELDS])
    return (ev.kind, ev.level, ev.template, text, f or None)


class Aggregate:
    """The events of one content key: the first one stands for all (``first``), ``members`` in input
    order, their ranks as sorted ``(lo, hi)`` ranges (:meth:`ranges`)."""

    __slots__ = ("key", "members")

    def __init__(self, key: tuple, first: Event) -> None:
        self.key = key
        self.members: list[Event] = [first]

    @property
    def first(self) -> Event:
        return self.members[0]

    @property
    def last(self) -> Event:
        return self.members[-1]

    @property
    def count(self) -> int:
        return len(self.members)

    def ranges(self) -> list[tuple[int, int]]:
        """The ranks of the members as inclusive ranges (``[(0, 719), (721, 4999)]``)."""
        out: list[list[int]] = []
        for r in sorted({e.rank for e in self.members if e.rank is not None}):
            if out and r == out[-1][1] + 1:
                out[-1][1] = r
            else:
                out.append([r, r])
        return [(a, b) for a, b in out]


class Aggregates:
    """A job's events grouped by :func:`content_key`, in the order each key first appears: the work
    that depends only on what an event says (rule patterns and conditions, catalog ids) is done once
    per group, so it grows with the distinct events, not with ranks x events."""

    def __init__(self, events) -> None:
        self.groups: dict[tuple, Aggregate] = {}
        self.of: dict[int, Aggregate] = {}  # id(event) -> its group
        groups, of = self.groups, self.of
        for ev in events:
            key = content_key(ev)
            g = groups.get(key)
            if g is None:
                g = groups[key] = Aggregate(key, ev)
            else:
                g.members.append(ev)
            of[id(ev)] = g

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self):
        return iter(self.groups.values())
