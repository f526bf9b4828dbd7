"""The line rules, once: bytes in, in pieces of any size; regions of whole lines out.

:class:`LineSplitter` is push-based: ``feed(data)`` as bytes arrive, then ``close()``; each yields
regions ``(buf, start, end, sep, offset)``. ``buf[start:end]`` holds whole lines, each ended by
``sep``. The file reader (:func:`logdoc.read.source.read_blocks`) is a pull wrapper over it, and the live
reader (:class:`logdoc.live.LiveParser`) feeds it what a pipe gives, so both read the same lines out
of the same bytes however they are cut.

The rules (see :mod:`logdoc.read.source` for the text-level ones):

* The line end is LF, or lone CR when the first ``first_block`` bytes hold a CR and no LF.
* A line longer than :data:`MAX_LINE` bytes comes cut to :data:`MAX_LINE` bytes (counted in
  ``stats.cut_lines``); the rest of it is dropped.
* A last line without an end is given one.

``offset`` is where ``buf[start]`` stands in the stream when the region is the stream's bytes as
they are, -1 when it is not (a cut line).
"""
from __future__ import annotations

from typing import Iterator

MAX_LINE = 1 << 20  # 1 MiB
CHUNK = 4 << 20     # the first block, on which the line end is decided; the file reader's read size

Region = tuple[bytes, int, int, bytes, int]

_HALF = (MAX_LINE + 1) // 2


def after_bars(raw: bytes) -> bytes:
    """A line's bytes without the CRs that end it (CRLF's, and the CR CR LF of CRLF text written again through
    a text-mode writer, as on Windows) and without what stands before a CR inside it (a progress bar's
    earlier updates)."""
    if raw.endswith(b"\r"):
        raw = raw.rstrip(b"\r")
    cr = raw.rfind(b"\r")
    return raw[cr + 1:] if cr >= 0 else raw


class LineSplitter:
    """Split a byte stream into regions of whole lines by the line rules (see the module)."""

    def __init__(self, stats, first_block: int = CHUNK) -> None:
        self.stats = stats                 # a ReadStats: bytes, lines and cut_lines are counted in it
        self.first_block = first_block
        self.sep: bytes | None = None      # decided on the first ``first_block`` bytes
        self.lines = 0                     # lines handed out so far
        self._held: list[bytes] = []       # bytes before the line end is decided
        self._held_len = 0
        self._pending: list[bytes] = []    # the start of a line whose end has not come yet
        self._pend_len = 0
        self._pend_off = 0                 # stream offset of the pending line's first byte
        self._skipping = False             # inside the rest of an over-long line
        self._consumed = 0                 # stream offset of the next byte fed
        self._closed = False

    @property
    def decided(self) -> bool:
        return self.sep is not None

    def feed(self, data: bytes) -> Iterator[Region]:
        if not data or self._closed:
            return
        if self.sep is None:
            self._held.append(data)
            self._held_len += len(data)
            if self._held_len < self.first_block and b"\n" not in data:
                return
            held = b"".join(self._held)
            self._held, self._held_len = [], 0
            first = held[: self.first_block]
            self.sep = b"\r" if b"\n" not in first and b"\r" in first else b"\n"
            data = held
        yield from self._block(data)

    def close(self) -> Iterator[Region]:
        """The rest: held bytes (the whole input was shorter than the first block) and a last line
        without an end. ``stats.lines`` is complete afterwards."""
        if self._closed:
            return
        self._closed = True
        if self.sep is None:
            held = b"".join(self._held)
            self._held, self._held_len = [], 0
            self.sep = b"\r" if b"\n" not in held and b"\r" in held else b"\n"
            if held:
                yield from self._block(held)
        if self._pending and not self._skipping:
            line = b"".join(self._pending) + self.sep
            self._pending, self._pend_len = [], 0
            self._count(1)
            yield line, 0, len(line), self.sep, self._pend_off
        self._pending, self._pend_len = [], 0

    @property
    def open_line(self) -> bytes:
        """The start of a line whose end has not come yet (for a look at the input as if it ended
        now); empty when there is none or it is being skipped."""
        if self._skipping:
            return b""
        return b"".join(self._held) if self.sep is None else b"".join(self._pending)

    def _count(self, n: int) -> None:
        self.lines += n
        self.stats.lines += n

    def _block(self, block: bytes) -> Iterator[Region]:
        sep = self.sep
        assert sep is not None
        boff = self._consumed
        self._consumed += len(block)
        self.stats.bytes += len(block)
        pos = 0
        if self._skipping:
            nl = block.find(sep)
            if nl < 0:
                return
            self._skipping = False
            pos = nl + 1
        elif self._pending:
            nl = block.find(sep)
            if nl < 0:
                self._pending.append(block)
                self._pend_len += len(block)
                if self._pend_len > MAX_LINE:
                    yield self._cut_pending()
                return
            line = b"".join(self._pending) + block[: nl + 1]
            self._pending, self._pend_len = [], 0
            pos = nl + 1
            off = self._pend_off
            if len(line) > MAX_LINE + 1:
                self.stats.cut_lines += 1
                line = line[:MAX_LINE] + sep
                off = -1
            self._count(1)
            yield line, 0, len(line), sep, off
        last = block.rfind(sep, pos)
        if last < 0:
            rest = block[pos:]
            self._pend_off = boff + pos
        else:
            rest = block[last + 1:]
            self._pend_off = boff + last + 1
            end = last + 1
            if end > pos:
                k = block.count(sep, pos, end)
                if end - pos > k * (MAX_LINE + 1) or _has_long_line(block, pos, end, sep):
                    for piece in _cut_long_lines(block, pos, end, sep, self.stats):
                        yield piece, 0, len(piece), sep, -1
                else:
                    yield block, pos, end, sep, boff + pos
                self._count(k)
        if rest:
            self._pending = [rest]
            self._pend_len = len(rest)
            if self._pend_len > MAX_LINE:
                yield self._cut_pending()

    def _cut_pending(self) -> Region:
        sep = self.sep
        assert sep is not None
        line = b"".join(self._pending)[:MAX_LINE] + sep
        self._pending, self._pend_len = [], 0
        self._skipping = True
        self.stats.cut_lines += 1
        self._count(1)
        return line, 0, MAX_LINE + 1, sep, -1


def _has_long_line(buf: bytes, start: int, end: int, sep: bytes) -> bool:
    """Whether some line in ``buf[start:end]`` is longer than MAX_LINE (cheap: one short find per
    half-MAX_LINE stretch; a line that long has a stretch of that length without a line end)."""
    if end - start <= MAX_LINE:
        return False
    off = start
    while off + _HALF < end:
        if buf.find(sep, off, off + _HALF) < 0:
            return True
        off += _HALF
    return False


def _cut_long_lines(buf: bytes, start: int, end: int, sep: bytes, stats) -> Iterator[bytes]:
    out = []
    size = 0
    pos = start
    while pos < end:
        nl = buf.find(sep, pos, end)
        if nl - pos > MAX_LINE:
            stats.cut_lines += 1
            out.append(buf[pos:pos + MAX_LINE] + sep)
        else:
            out.append(buf[pos:nl + 1])
        size += len(out[-1])
        pos = nl + 1
        if size > CHUNK:
            yield b"".join(out)
            out, size = [], 0
    if out:
        yield b"".join(out)

