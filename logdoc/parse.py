"""Stages 1 to 5 together: sources in, events and honest line counts out.

For every line: the prefilter decides whether it can matter; a candidate is unwrapped, joined into
a multi-line record when it starts or continues a block (a traceback, a torchrun summary, ...),
and classified by the NCCL grammar, then by the PyTorch/Gloo grammars. Every line read is counted
exactly once, as irrelevant, understood, or relevant but not understood.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from . import nccl, prefilter, torchlines
from .blocks import BlockAssembler, Record
from .envelope import unwrap
from .events import Event
from .source import ReadStats, Source, expand, read_lines

MAX_UNRECOGNIZED = 200


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

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "lines_read": self.lines_read,
            "irrelevant": self.irrelevant,
            "relevant": self.relevant,
            "understood": self.understood,
            "not_understood": self.not_understood,
            "events": self.events,
            "cut_lines": self.cut_lines,
            "skipped_files": [{"file": f, "reason": r} for f, r in self.skipped_files],
            "warnings": list(self.warnings),
        }

    def merge(self, other: "Stats") -> None:
        for name in ("files", "lines_read", "irrelevant", "relevant", "understood", "not_understood", "events", "cut_lines"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped_files.extend(other.skipped_files)
        self.warnings.extend(other.warnings)


@dataclass(slots=True)
class Unrecognized:
    file: str
    line: int
    text: str


@dataclass(slots=True)
class ParseResult:
    events: list[Event]
    stats: Stats
    unrecognized: list[Unrecognized]
    files: list[str]


def classify_record(rec: Record, name: str) -> Event | None:
    env = rec.env
    parsed = nccl.classify(rec.text, env)
    if parsed is None:
        parsed = torchlines.classify(rec.text, env)
    if parsed is None:
        return None
    return Event(
        kind=parsed.kind,
        level=parsed.level,
        file=name,
        line=rec.line,
        end_line=rec.end_line,
        text=rec.text,
        rank=env.rank,
        local_rank=env.local_rank,
        node_rank=env.node_rank,
        host=env.host,
        pid=env.pid,
        time=env.time,
        template=parsed.template,
        fields=parsed.fields,
    )


MAX_ERROR_FILE = 4 << 20


def _error_file_event(source: Source, stats: Stats) -> Event | None:
    """torchrun's per-worker ``error.json`` (written by @record): one event, or None if it is not one."""
    import json

    try:
        with source.open() as fh:
            raw = fh.read(MAX_ERROR_FILE + 1)
        if len(raw) > MAX_ERROR_FILE:
            return None
        data = json.loads(raw.decode("utf-8", "replace"))
        msg = data["message"]
        info = msg.get("extraInfo", {}) if isinstance(msg, dict) else {}
        text = msg.get("message", "") if isinstance(msg, dict) else str(msg)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    stats.files += 1
    stats.lines_read += 1
    stats.relevant += 1
    stats.understood += 1
    stats.events += 1
    exc_type, _, exc_message = text.partition(": ")
    fields = {"exc_type": exc_type if exc_message else None, "exc_message": exc_message or text,
              "traceback": info.get("py_callstack"), "timestamp": info.get("timestamp")}
    time = None
    try:
        import datetime as _dt

        time = _dt.datetime.fromtimestamp(int(info["timestamp"]), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (KeyError, ValueError, TypeError, OverflowError, OSError):
        pass
    return Event(kind="torchrun.error_file", level="ERROR", file=source.name, line=1, text=text, time=time,
                 template="torchrun.error_file", fields=fields)


def iter_source_events(source: Source, stats: Stats, unrecognized: list[Unrecognized]) -> Iterator[Event]:
    """Events of one source, in file order; ``stats`` and ``unrecognized`` are filled as it goes."""
    if source.name.endswith("error.json"):
        ev = _error_file_event(source, stats)
        if ev is not None:
            yield ev
            return
    rstats = ReadStats()
    asm = BlockAssembler()
    name = source.name
    candidate = prefilter.candidate

    def settle(records: list[Record]) -> Iterator[Event]:
        for rec in records:
            n = rec.nlines
            ev = classify_record(rec, name)
            if ev is not None:
                stats.relevant += n
                stats.understood += n
                stats.events += 1
                yield ev
            elif prefilter.marked(rec.text):
                stats.relevant += n
                stats.not_understood += n
                if len(unrecognized) < MAX_UNRECOGNIZED:
                    unrecognized.append(Unrecognized(name, rec.line, rec.text))
            else:
                stats.irrelevant += n

    for lineno, text in read_lines(source, rstats):
        if asm.has_open_block or candidate(text):
            env, msg = unwrap(text)
            yield from settle(asm.feed(lineno, env, msg))
        else:
            stats.irrelevant += 1
    yield from settle(asm.flush())
    stats.files += rstats.files
    stats.lines_read += rstats.lines
    stats.cut_lines += rstats.cut_lines
    stats.skipped_files.extend(rstats.skipped_files)
    stats.warnings.extend(rstats.warnings)


def parse_sources(sources: Iterable[Source | tuple[str, str]]) -> ParseResult:
    """Parse every source (a :class:`Source`, or ``(name, text)`` for in-memory text)."""
    stats = Stats()
    unrecognized: list[Unrecognized] = []
    events: list[Event] = []
    names: list[str] = []
    for src in sources:
        if not isinstance(src, Source):
            src = Source(src[0], text=src[1])
        names.append(src.name)
        # Records of interleaved streams settle out of order: restore file order.
        events.extend(sorted(iter_source_events(src, stats, unrecognized), key=lambda e: e.line))
    return ParseResult(events, stats, unrecognized, names)


def parse_text(text: str, name: str = "<text>") -> ParseResult:
    return parse_sources([Source(name, text=text)])


def parse_paths(paths: Iterable[str], stdin=None) -> ParseResult:
    """Parse command-line paths (files, folders, globs, ``-``). Raises ``InputError`` for bad paths."""
    return parse_sources(expand(paths, stdin=stdin))
