"""The live parser: one stream of bytes fed in pieces, parsed by the file reader's rules."""

import copy
import zlib
from typing import Any, Sequence

from ..events import Event
from ..paste import REPAIR_MAX, prepare_bytes
from ..pipeline import Feeder, prepared_events, region_reader
from ..read.gunzip import TRUNCATED, decoder_for, trailing_message, unreadable
from ..read.lines import LineSplitter
from ..results import ParseResult, Stats, Unread, settle_unread
from ..read.source import HOLE_MIN, SNIFF, ReadStats, Utf16, binary_reason, hole_warning, looks_binary, utf16_encoding

ALARM_LEVELS = frozenset({"WARN", "ERROR", "FATAL"})


# ---------------------------------------------------------------------------------------------
# incremental parsing

class LiveParser:
    """Parse one stream of bytes fed in pieces, by the rules of reading a file or stdin.

    ``feed(data)`` any number of times, then ``close()``; ``result()`` gives the
    :class:`~logdoc.results.ParseResult`. Lines are split and cut as :func:`logdoc.read.source.read_blocks`
    does and handed to the parse layer's :class:`~logdoc.pipeline.Feeder`, so the result equals the
    parse of the same bytes read from a pipe. Only events are kept, never lines. ``peek()`` gives
    the events as if the input ended now, without disturbing the parse.

    The file reader repairs a pasted log and reads every line of a short one (:mod:`logdoc.paste`),
    which needs the whole source. So the parser keeps the stream's bytes while they are at most
    :data:`logdoc.paste.REPAIR_MAX`, and when the stream ends asks :func:`logdoc.paste.prepare_bytes`
    of them: where the paste layer has something to do, the result is that of the file reader on
    those bytes; a longer stream was never a paste to the file reader either.
    """

    def __init__(self, name: str = "<stdin>") -> None:
        self.name = name
        self.stats = Stats()
        self.unrecognized = Unread()
        self.events: list[Event] = []
        self.feeder = Feeder(name, self.stats, self.unrecognized, self.events)
        self.rstats = ReadStats()
        self._region = region_reader()
        self._head = b""           # sniff: the first bytes, until the kind of stream is known
        self._mode = "sniff"       # sniff | tentative | text | packed | utf16 | binary | dead
        self._seen = b""           # tentative: the first SNIFF bytes, for the binary rule
        self._nuls = 0             # sniff: the NULs the stream starts with (a hole: read.source.after_hole); -1: done
        self._gz: Any = None       # packed: the decoder of its format (logdoc.read.gunzip)
        self._utf16: Any = None    # UTF-16 text: its decoder (read.source.Utf16; after _gz's, if any)
        self._lines = LineSplitter(self.rstats)   # the line rules of the file reader
        self._lineno = 0
        self._alarm_scan = 0
        self._alarms = 0
        self._closed = False
        self._raw: bytearray | None = bytearray()  # the stream so far, while a paste could be repaired
        self._final: ParseResult | None = None      # the file reader's result on _raw (see close)

    # --- bytes in
    def feed(self, data: bytes) -> None:
        if not data or self._closed:
            return
        if self._raw is not None:
            self._raw += data
            if len(self._raw) > REPAIR_MAX:
                self._raw = None
        if self._mode == "sniff":
            if not self._head and self._nuls >= 0:  # the stream's first bytes: NULs that may be a hole
                rest = data.lstrip(b"\x00")
                self._nuls += len(data) - len(rest)
                if not rest:
                    return
                data = self._end_hole(rest)
            self._head += data
            if len(self._head) >= SNIFF:
                self._start(final=False)
            elif len(self._head) >= 2 and decoder_for(self._head) is None and b"\n" in self._head \
                    and b"\x00" not in self._head:
                # A pipe gives its first bytes slowly: read them as text now (the line end is LF
                # already) and apply the binary rule once the first SNIFF bytes are known (a NUL waits
                # for them: UTF-16 text or a binary file, which _start tells apart).
                head, self._head = self._head, b""
                self._seen = head
                self._mode = "tentative"
                self.rstats.files += 1
                self._text(head)
            return
        if self._mode == "tentative":
            self._seen += data[: SNIFF - len(self._seen)]
            self._text(data)
            if len(self._seen) >= SNIFF:
                self._settle_tentative()
            return
        self._route(data)

    def _end_hole(self, rest: bytes) -> bytes:
        """``rest``, after the NULs the stream started with: dropped (and said) when they are a hole, as
        the file reader drops them (read.source.after_hole), else put back before it (NULs alone are
        no hole: the binary rule says)."""
        n, self._nuls = self._nuls, -1
        if n >= HOLE_MIN and rest:
            self.rstats.warnings.append(hole_warning(self.name, n))
            return rest
        return bytes(min(n, SNIFF) if not rest else n) + rest

    def _settle_tentative(self) -> None:
        seen, self._seen = self._seen, b""
        if looks_binary(seen[:SNIFF]):
            # what the file reader does: skip it all (very rare: NULs in a job's output)
            name = self.name
            self.__init__(name)  # type: ignore[misc]
            self._mode = "binary"
            self.rstats.skipped_files.append((name, binary_reason(seen[:SNIFF])))
        else:
            self._mode = "text"

    def close(self) -> None:
        if self._closed:
            return
        if self._mode == "sniff":
            if self._nuls > 0:
                self._head = self._end_hole(b"")
            self._start(final=True)
        if self._mode == "tentative":
            self._settle_tentative()
        if self._mode == "packed" and self._gz is not None and not self._gz.complete:
            if self._gz.produced == 0:  # no text at all: a corrupt file, as the file reader says
                self.rstats.files -= 1
                self.rstats.skipped_files.append((self.name, f"corrupt {self._gz.name} ({TRUNCATED})"))
            else:
                self.rstats.warnings.append(f"{self.name}: stopped reading at line {self._lineno + 1}: {TRUNCATED}")
        elif self._mode == "packed" and self._gz is not None and self._gz.trailing:
            self.rstats.warnings.append(f"{self.name}: stopped reading at line {self._lineno + 1}: "
                                        f"{trailing_message(self._gz.trailing, self._gz.name)}")
        if self._mode in ("packed", "utf16") and self._utf16 is not None:
            self._text(self._utf16.feed(b"", final=True))
        if self._mode in ("text", "packed", "utf16", "dead"):
            for region in self._lines.close():
                self._region_of(region)
            self.feeder.finish()
        self._closed = True
        if self._raw is not None:
            self._final = self._as_file(bytes(self._raw))

    def _as_file(self, data: bytes) -> ParseResult | None:
        """The file reader's result on the whole stream, where its paste layer has work to do."""
        source, paste = prepare_bytes(self.name, data)
        if paste is None:
            return None  # read as it is: the parse so far is the file reader's
        stats, unrecognized = Stats(), Unread()
        events = prepared_events(source, paste, stats, unrecognized, fast=False)
        return ParseResult(events, stats, settle_unread(unrecognized, [self.name]), [self.name])

    def _start(self, final: bool) -> None:
        head, self._head = self._head, b""
        if not head:
            self._mode = "text"                   # empty input: an empty text (as open_text)
            self.rstats.files += 1
            return
        # the file reader's order (read.source.open_text): undo a compression, refuse what is not read,
        # read UTF-16 as its text, skip what is binary
        self._gz = decoder_for(head)
        text = head
        if self._gz is not None:
            try:
                text = self._gz.feed(head)
            except (OSError, zlib.error) as exc:
                self.rstats.skipped_files.append((self.name, f"corrupt {self._gz.name} ({exc})"))
                self._mode = "binary"
                return
        why = unreadable(text[:SNIFF])
        if why is not None:
            self.rstats.skipped_files.append((self.name, why))
            self._mode = "binary"
            return
        encoding = utf16_encoding(text[:SNIFF])
        if encoding is not None:
            self._utf16 = Utf16(encoding)
            text = self._utf16.feed(text)
        if looks_binary(text[:SNIFF]):
            self.rstats.skipped_files.append((self.name, binary_reason(text[:SNIFF])))
            self._mode = "binary"
            return
        self._mode = "packed" if self._gz is not None else "utf16" if self._utf16 is not None else "text"
        self.rstats.files += 1
        self._text(text)

    def _route(self, data: bytes) -> None:
        if self._mode in ("text", "tentative"):
            self._text(data)
        elif self._mode == "packed":
            try:
                data = self._gz.feed(data)
            except (OSError, zlib.error) as exc:
                self.rstats.warnings.append(f"{self.name}: stopped reading at line {self._lineno + 1}: {exc}")
                self._mode = "dead"
                return
            self._text(self._utf16.feed(data) if self._utf16 is not None else data)
        elif self._mode == "utf16":
            self._text(self._utf16.feed(data))
        # binary, dead: nothing to parse

    # --- text in: the line rules, shared with the file reader
    def _text(self, data: bytes) -> None:
        for region in self._lines.feed(data):
            self._region_of(region)

    def _region_of(self, region) -> None:
        buf, start, end, sep, _ = region
        self._lineno = self._region(self.feeder, buf, start, end, sep, self._lineno)

    # --- events out
    @property
    def alarms(self) -> int:
        """Events so far at WARN level or above."""
        ev = self.events
        for i in range(self._alarm_scan, len(ev)):
            if ev[i].level in ALARM_LEVELS:
                self._alarms += 1
        self._alarm_scan = len(ev)
        return self._alarms

    @property
    def record_open(self) -> bool:
        return self.feeder.asm.has_open_block

    @property
    def record_progress(self) -> int:
        """Changes whenever an open record takes a line."""
        return self.feeder.until

    def _all_stats(self) -> Stats:
        stats = Stats()
        stats.merge(self.stats)
        stats.files += self.rstats.files
        stats.lines_read += self.rstats.lines
        stats.cut_lines += self.rstats.cut_lines
        stats.skipped_files.extend(self.rstats.skipped_files)
        stats.warnings.extend(self.rstats.warnings)
        return stats

    def sorted_events(self) -> list[Event]:
        # records of interleaved streams settle out of order: file order, as parse_sources gives
        return sorted(self.events, key=lambda e: e.line)

    def peek(self) -> list[Event]:
        """The events as if the input ended now (a partial last line, records still open, bytes
        still sniffed), in file order; the parse itself goes on undisturbed."""
        return self.snapshot().events

    def snapshot(self) -> ParseResult:
        """The parse as if the input ended now, without disturbing it."""
        if self._closed:
            return self.result()
        c = LiveParser.__new__(LiveParser)
        c.__dict__.update(self.__dict__)
        c.stats, c.unrecognized, c.events, c.rstats = Stats(), Unread(), [], ReadStats()
        c.feeder = self.feeder.fork(c.stats, c.unrecognized, c.events)
        c._lines = copy.copy(self._lines)
        c._lines.stats = c.rstats
        c._lines._held, c._lines._pending = list(self._lines._held), list(self._lines._pending)
        c._gz = self._gz.copy() if self._gz is not None else None
        c._utf16 = self._utf16.copy() if self._utf16 is not None else None  # (closing it flushes a half-read unit)
        c.close()  # (reads self._raw, never changes it)
        if c._final is not None:
            return c._final
        return ParseResult(sorted(self.events + c.events, key=lambda e: e.line), self._all_stats(),
                           settle_unread(self.unrecognized, [self.name]), [self.name])

    def result(self) -> ParseResult:
        if self._final is not None:
            return self._final
        return ParseResult(self.sorted_events(), self._all_stats(), settle_unread(self.unrecognized, [self.name]),
                           [self.name])


def merge_results(results: Sequence[ParseResult]) -> ParseResult:
    stats = Stats()
    events: list[Event] = []
    unrecognized = Unread()
    files: list[str] = []
    for r in results:
        stats.merge(r.stats)
        events.extend(r.events)
        for u in r.unrecognized:
            if u.loose:
                unrecognized.append(u)
            else:
                unrecognized.add_marked(u)
        files.extend(r.files)
    return ParseResult(events, stats, settle_unread(unrecognized, files), files)
