"""Gzip undone the same way for files and for live streams: :class:`Gunzip` (push: compressed
bytes in any pieces, text out) and :class:`GunzipReader` (the pull wrapper the file reader opens).

One decoder means one set of outcomes, whoever reads:

* a stream that is not gzip after its magic bytes fails with zlib's own message
  (``Error -3 while decompressing data: unknown compression method``);
* a stream that ends before its end-of-stream marker fails with :data:`TRUNCATED`, before any text
  (the file is skipped as corrupt) or after some (reading stops there, with a warning);
* several members (``cat a.gz b.gz``) are read one after the other; bytes after the last member
  that do not start another are not text: reading stops there with :func:`trailing_message`.
"""
from __future__ import annotations

import io
import zlib
from typing import BinaryIO

MAGIC = b"\x1f\x8b"
TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"


class Gunzip:
    """Incremental gzip decoding (multi-member)."""

    __slots__ = ("_z", "produced", "trailing")

    def __init__(self) -> None:
        self._z = zlib.decompressobj(wbits=31)
        self.produced = 0  # bytes of text given out so far
        self.trailing = 0  # bytes after the last member that are not another member

    @property
    def complete(self) -> bool:
        """The last member read so far ended with its end-of-stream marker."""
        return self._z.eof

    def copy(self) -> "Gunzip":
        c = Gunzip.__new__(Gunzip)
        c._z, c.produced, c.trailing = self._z.copy(), self.produced, self.trailing
        return c

    def feed(self, data: bytes) -> bytes:
        """The text of ``data``; raises ``zlib.error`` on bytes that are not gzip."""
        out = []
        while data:
            if self.trailing:
                self.trailing += len(data)
                break
            if self._z.eof:  # a multi-member .gz: the next member, else trailing bytes
                if not (data.startswith(MAGIC) or (len(data) == 1 and data == MAGIC[:1])):
                    self.trailing += len(data)
                    break
                self._z = zlib.decompressobj(wbits=31)
            out.append(self._z.decompress(data))
            data = self._z.unused_data if self._z.eof else b""
        text = b"".join(out)
        self.produced += len(text)
        return text


def trailing_message(n: int) -> str:
    return f"{n:,} byte{'' if n == 1 else 's'} after the end of the gzip stream are not gzip"


class GunzipReader(io.RawIOBase):
    """A readable stream of the text of the gzip stream ``raw`` (for ``io.BufferedReader``)."""

    def __init__(self, raw: BinaryIO, chunk: int = 1 << 16):
        self._raw = raw
        self._gz = Gunzip()
        self._chunk = chunk
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._pending and not self._done:
            data = self._raw.read(self._chunk)
            if not data:
                self._done = True
                if not self._gz.complete:
                    raise EOFError(TRUNCATED)
                if self._gz.trailing:
                    raise OSError(trailing_message(self._gz.trailing))
                break
            self._pending = self._gz.feed(data)
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n
