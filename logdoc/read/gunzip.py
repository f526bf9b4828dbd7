"""Compressed input undone the same way for files and for live streams: a push decoder per format
(:class:`Gunzip`, and :class:`Unpack` for bzip2 and xz: compressed bytes in any pieces, text out) and
:class:`GunzipReader` (the pull wrapper the file reader opens over any of them); :func:`decoder_for`
tells the format by its magic bytes, :func:`unreadable` names the packed formats that are not read.

One decoder means one set of outcomes, whoever reads:

* a stream that is not of its format after its magic bytes fails with the decompressor's own message
  (``Error -3 while decompressing data: unknown compression method``): ``zlib.error`` for gzip,
  ``OSError`` for the others;
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
BZIP2 = b"BZh"
XZ = b"\xfd7zXZ\x00"
TRUNCATED = "Compressed file ended before the end-of-stream marker was reached"


class Gunzip:
    """Incremental gzip decoding (multi-member)."""

    __slots__ = ("_z", "produced", "trailing")
    name = "gzip"
    magic = MAGIC

    def __init__(self) -> None:
        self._z = self._new()
        self.produced = 0  # bytes of text given out so far
        self.trailing = 0  # bytes after the last member that are not another member

    def _new(self):
        return zlib.decompressobj(wbits=31)

    @property
    def complete(self) -> bool:
        """The last member read so far ended with its end-of-stream marker."""
        return self._z.eof

    def copy(self) -> "Gunzip":
        c = Gunzip.__new__(Gunzip)
        c._z, c.produced, c.trailing = self._z.copy(), self.produced, self.trailing
        return c

    def feed(self, data: bytes) -> bytes:
        """The text of ``data``; raises ``zlib.error`` (gzip) or ``OSError`` on bytes not of the format."""
        out = []
        magic = self.magic
        while data:
            if self.trailing:
                self.trailing += len(data)
                break
            if self._z.eof:  # a multi-member stream: the next member, else trailing bytes
                if not (data.startswith(magic) or (len(data) < len(magic) and magic.startswith(data))):
                    self.trailing += len(data)
                    break
                self._z = self._new()
            out.append(self._decompress(data))
            data = self._z.unused_data if self._z.eof else b""
        text = b"".join(out)
        self.produced += len(text)
        return text

    def _decompress(self, data: bytes) -> bytes:
        return self._z.decompress(data)


class Unpack(Gunzip):
    """Incremental bzip2 or xz decoding (several streams one after the other, as ``cat`` or
    ``pbzip2`` make them), with the standard library's decompressors. ``copy`` gives a snapshot
    (their state cannot be copied): its outcomes (complete, produced, trailing), no more decoding."""

    __slots__ = ("name", "magic", "_make")

    def __init__(self, name: str) -> None:
        import bz2
        import lzma

        self.name = name
        self.magic, self._make = (BZIP2, bz2.BZ2Decompressor) if name == "bzip2" else (XZ, lzma.LZMADecompressor)
        super().__init__()

    def _new(self):
        return self._make()

    def _decompress(self, data: bytes) -> bytes:
        try:
            return self._z.decompress(data)
        except OSError:
            raise
        except Exception as exc:  # lzma.LZMAError: one kind of error for every format (OSError)
            raise OSError(str(exc)) from None

    def copy(self) -> "Unpack":
        c = Unpack.__new__(Unpack)
        c.name, c.magic, c._make = self.name, self.magic, self._make
        c._z, c.produced, c.trailing = _Snapshot(self._z.eof), self.produced, self.trailing
        return c


class _Snapshot:
    """A decompressor's outcome, for a copy that only closes (LiveParser.peek)."""

    __slots__ = ("eof",)
    unused_data = b""

    def __init__(self, eof: bool) -> None:
        self.eof = eof

    def decompress(self, data: bytes) -> bytes:
        raise OSError("a snapshot decodes nothing")


def decoder_for(head: bytes) -> Gunzip | None:
    """A fresh decoder for the compressed stream that starts with ``head``, else None."""
    if head[:2] == MAGIC:
        return Gunzip()
    if head[:3] == BZIP2 and head[3:4] in b"123456789" and head[3:4]:
        return Unpack("bzip2")
    if head[:6] == XZ:
        return Unpack("xz")
    return None


# Packed formats that are not read (the standard library has no decoder, or it is an archive of
# files), and what to do instead: said as the reason the input is skipped, never read as text.
_UNREAD = ((b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first (zstd -d)"),
           (b"PK\x03\x04", "a zip archive: extract it first (unzip)"),
           (b"7z\xbc\xaf\x27\x1c", "a 7z archive: extract it first (7z x)"),
           (b"\x04\x22\x4d\x18", "lz4-compressed: decompress it first (lz4 -d)"))


def unreadable(head: bytes) -> str | None:
    """Why a stream that starts with ``head`` (after any decompression) is not read, else None."""
    for magic, why in _UNREAD:
        if head.startswith(magic):
            return why
    if head[257:262] == b"ustar":
        return "a tar archive: extract it first (tar xf)"
    return None


def trailing_message(n: int, name: str = "gzip") -> str:
    return f"{n:,} byte{'' if n == 1 else 's'} after the end of the {name} stream are not {name}"


class GunzipReader(io.RawIOBase):
    """A readable stream of the text of the compressed stream ``raw`` (for ``io.BufferedReader``):
    gzip, or the format of ``decoder``."""

    def __init__(self, raw: BinaryIO, chunk: int = 1 << 16, decoder: Gunzip | None = None):
        self._raw = raw
        self._gz = decoder if decoder is not None else Gunzip()
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
                    raise OSError(trailing_message(self._gz.trailing, self._gz.name))
                break
            self._pending = self._gz.feed(data)
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n
