"""Stage 1: read. Files, folders, globs, standard input, ``.gz``, ``.bz2`` and ``.xz``, as clean text lines.

Reading is streaming: bytes are read in large blocks and split into lines; no file is held in
memory whole. Every line is counted, and every oddity (a cut line, a binary file, a truncated gz)
is recorded in :class:`ReadStats` rather than raised.

Line rules:

* LF and CRLF end a line. A file that has lone CRs and no LF at all uses CR as its line end.
* Within a line, text before the last lone CR is progress-bar residue and is dropped; CRs that end a
  line (CR CR LF: CRLF text written again in text mode) go.
* UTF-16 text (a byte order mark, or NULs in every other byte) is read as the text it is.
* NULs a file starts with (16 or more: a log truncated while its writer held it open) are skipped and
  counted; bzip2 and xz are undone as gzip is; zstd, lz4 and archives are skipped with what to run.
* Invalid UTF-8 is decoded with U+FFFD; ANSI escape sequences are removed and other C0 controls
  become blanks. Colour sequences whose escape byte was written out as text (``#033[0m`` from
  rsyslog and journald exports, ``^[[31m``, ``\\u001b[0m``) are removed as well.
* A line longer than :data:`MAX_LINE` bytes is cut there, always; the rest of it is skipped and counted.
"""
from __future__ import annotations

import glob
import io
import os
import stat
import sys
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator

from .gunzip import GunzipReader, decoder_for, unreadable
from .lines import after_bars, CHUNK, MAX_LINE, LineSplitter, Region  # noqa: F401  (MAX_LINE: the line rule, re-exported)
from ..lazyre import lazy_re

BLOCK = 1 << 20
SNIFF = 8192

_ANSI = lazy_re(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])?")
# The escape written out as text: rsyslog / journald exports escape the control byte as `#033`, `cat -v`
# and some web log viewers show it as `^[`, JSON-logged output as `\u001b`, `\x1b`, `\033` or `\e`. Only
# the colour and erase sequences (a CSI ending in m or K) that terminals get around every word.
_ANSI_TEXT = lazy_re(r"(?:#033|\^\[|\\(?:u001[bB]|x1[bB]|033|e))\[[0-9;]{0,16}[mK]")
_GLOB_CHARS = set("*?[")


class InputError(Exception):
    """A path that cannot be read at all: the CLI prints it as one line and exits 2."""


@dataclass(slots=True)
class ReadStats:
    files: int = 0
    lines: int = 0
    cut_lines: int = 0
    bytes: int = 0
    skipped_files: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    warnings: list[str] = field(default_factory=list)

    def merge(self, other: "ReadStats") -> None:
        self.files += other.files
        self.lines += other.lines
        self.cut_lines += other.cut_lines
        self.bytes += other.bytes
        self.skipped_files.extend(other.skipped_files)
        self.warnings.extend(other.warnings)


@dataclass(slots=True)
class Source:
    """One input: a file path, standard input, or in-memory text (the browser, tests)."""

    name: str
    path: str | None = None  # None for stdin and in-memory text
    text: str | None = None
    stream: BinaryIO | None = None
    skip: str | None = None  # found in a folder but not read: the reason (a FIFO, a socket, a device)
    every_line: bool = True  # if short, every line is read (logdoc.paste); False: part of a large input

    def open(self) -> BinaryIO:
        if self.text is not None:
            return io.BytesIO(self.text.encode("utf-8", "surrogateescape"))
        if self.stream is not None:
            return self.stream
        assert self.path is not None
        return open(self.path, "rb")


def expand(paths: Iterable[str], stdin: BinaryIO | None = None) -> list[Source]:
    """Turn command-line arguments into sources. Raises :class:`InputError` for a bad path."""
    out: list[Source] = []
    for arg in paths:
        if arg == "-":
            out.append(Source("<stdin>", stream=stdin if stdin is not None else sys.stdin.buffer))
            continue
        if os.path.isdir(arg):
            found = list(_walk(arg))
            if not found:
                raise InputError(f"no files in folder {arg}")
            out.extend(found)
            continue
        if os.path.exists(arg) or os.path.islink(arg):
            if not os.access(arg, os.R_OK) or os.path.islink(arg) and not os.path.exists(arg):
                raise InputError(f"cannot read {arg}: permission denied or broken link")
            out.append(Source(arg, path=arg))
            continue
        if _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                raise InputError(f"no file matches {arg}")
            for m in matches:
                out.extend(_walk(m) if os.path.isdir(m) else [Source(m, path=m, skip=_special(m))])
            continue
        raise InputError(f"no such file or folder: {arg}")
    return out


def _walk(top: str) -> Iterator[Source]:
    """Every regular file below ``top``, in a stable order; links to folders are not followed."""
    for root, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in {".git", "__pycache__"})
        for name in sorted(files):
            p = os.path.join(root, name)
            if name == "sample.yaml":
                continue  # logdoc's own sample metadata, not a log
            yield Source(p, path=p, skip=_special(p))


def _special(path: str) -> str | None:
    """Why a file found in a folder is not read: opening a FIFO blocks until a writer comes, a
    device never ends. (Named on the command line, a FIFO is read: ``logdoc explain <(zcat x)``.)"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # a broken link or a link loop: opening it says why
    if stat.S_ISREG(mode):
        return None
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"not a regular file ({what})"
    return "not a regular file"




def looks_binary(head: bytes) -> bool:
    """The binary rule, for the file and the live reader alike: NULs beyond what text can hold."""
    if not head:
        return False
    if b"\x00" in head:
        # UTF-16 text and core dumps both have NULs; neither is a log we can read.
        return head.count(b"\x00") > max(4, len(head) // 100)
    return False


# UTF-16 text: Windows PowerShell 5's `>` and Out-File write a program's output as UTF-16LE with its byte
# order mark (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_redirection).
# Read as bytes it is half NULs, and the binary rule would skip it: it is read as the text it is.
UTF16_MIN = 64  # bytes of a head without a byte order mark that may tell UTF-16 by its NULs


def utf16_encoding(head: bytes) -> str | None:
    """The codec of ``head`` when it is UTF-16 text, else None: a byte order mark before text whose
    units are at least a quarter ASCII (a log's are: its NCCL and Python lines), or, without a mark, a
    NUL in nearly every other byte and almost none between them (ASCII text written in UTF-16)."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        high = head[3::2] if head[:1] == b"\xff" else head[2::2]  # each unit's high byte
        return "utf-16" if len(head) < 16 or high.count(0) >= 0.25 * len(high) else None
    if len(head) < UTF16_MIN or b"\x00" not in head:
        return None
    n = len(head) // 2 * 2
    even, odd = head[0:n:2].count(0), head[1:n:2].count(0)
    half = n // 2
    if odd >= 0.9 * half and even <= 0.02 * half:
        return "utf-16-le"
    if even >= 0.9 * half and odd <= 0.02 * half:
        return "utf-16-be"
    return None


class Utf16:
    """UTF-16 text in pieces, out as UTF-8 bytes (undecodable units become U+FFFD, the byte order mark
    goes): one decoder for the file reader (:class:`Utf16Reader`) and the live reader."""

    __slots__ = ("_decoder",)

    def __init__(self, encoding: str) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder(encoding)("replace")

    def feed(self, data: bytes, final: bool = False) -> bytes:
        return self._decoder.decode(data, final).encode("utf-8", "surrogatepass")

    def copy(self) -> "Utf16":
        """A decoder in the same state (a half-read unit included), to be closed apart."""
        c = Utf16.__new__(Utf16)
        c._decoder = type(self._decoder)("replace")
        c._decoder.setstate(self._decoder.getstate())
        return c


class Utf16Reader(io.RawIOBase):
    """A binary stream of UTF-16 text read as UTF-8 bytes, so that the line rules and the parse see
    what a UTF-8 file would give them."""

    def __init__(self, raw: BinaryIO, encoding: str) -> None:
        self._raw = raw
        self._utf16 = Utf16(encoding)
        self._out = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._out and not self._eof:
            data = self._raw.read(BLOCK)
            self._eof = not data
            self._out = self._utf16.feed(data or b"", final=self._eof)
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n


HOLE_MIN = 16  # NULs at a file's start from which on they are a hole, not content


def hole_warning(name: str, n: int) -> str:
    return (f"{name}: {n:,} NUL bytes at the start skipped (a log truncated while its writer held it open, "
            "as logrotate's copytruncate leaves it)")


def after_hole(head: bytes, read) -> tuple[bytes, int]:
    """``head`` without the NULs it starts with (at least :data:`HOLE_MIN`), reading on with
    ``read(n)`` while there is nothing else, and the number of NULs dropped: a log truncated while
    its writer held it open starts with its old length as NULs, then the lines written since. A
    stream of NULs alone is no such log: its head is given back, for the binary rule."""
    if head[:HOLE_MIN] != bytes(HOLE_MIN):
        return head, 0
    dropped = 0
    while head:
        rest = head.lstrip(b"\x00")
        dropped += len(head) - len(rest)
        if rest:
            more = read(SNIFF - len(rest)) if len(rest) < SNIFF else b""
            return rest + (more or b""), dropped
        head = read(BLOCK)
    return bytes(min(dropped, SNIFF)), 0  # NULs and nothing else: no hole before a log (the binary rule says)


_HOLE = lazy_re(rb"\x00{16,}")
_TEXT_LINE = lazy_re(rb"[\t\x20-\x7e]{16,}\r?\n")


def binary_reason(head: bytes) -> str:
    """Why a head that :func:`looks_binary` refuses is not read: text between runs of NULs is a log
    that was truncated while its writer held it open (logrotate's ``copytruncate`` leaves the old
    length as NULs before what the writer adds next); anything else is a binary file."""
    if _HOLE.search(head) is not None and _TEXT_LINE.search(_HOLE.sub(b"", head)) is not None:
        return ("binary file: runs of NUL bytes around text, as a log truncated while its writer held it open "
                "leaves them; strip them (tr -d '\\000' < FILE > FILE.txt) and read that")
    return "binary file"


class _Peek(io.RawIOBase):
    """Give back bytes already read from a stream that cannot seek (stdin)."""

    def __init__(self, head: bytes, rest: BinaryIO):
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(b))
        if not data:
            return 0
        b[: len(data)] = data
        return len(data)


def open_text(source: Source, stats: ReadStats) -> tuple[BinaryIO, BinaryIO] | None:
    """Open ``source`` for reading text: ``(stream, raw)`` with gzip undone, or None when it is
    skipped (unreadable, binary, corrupt gzip; the reason goes to ``stats``). Close ``raw`` when
    done unless it is the caller's stream (stdin)."""
    if source.skip:
        stats.skipped_files.append((source.name, source.skip))
        return None
    try:
        raw = source.open()
    except OSError as exc:
        stats.skipped_files.append((source.name, exc.strerror or str(exc)))
        return None
    try:
        head, hole = after_hole(raw.read(SNIFF), raw.read)
        if hole:
            stats.warnings.append(hole_warning(source.name, hole))
        if source.text is None and source.stream is None and raw.seekable() and not hole:  # not a pipe: <(cmd)
            raw.seek(0)
            stream: BinaryIO = raw
        else:
            stream = io.BufferedReader(_Peek(head, raw), BLOCK)  # type: ignore[arg-type]
        decoder = decoder_for(head)
        if decoder is not None:
            stream = io.BufferedReader(GunzipReader(stream, decoder=decoder), BLOCK)  # type: ignore[arg-type]
            try:
                head = stream.peek(SNIFF)[:SNIFF]
            except (OSError, EOFError, zlib.error) as exc:
                stats.skipped_files.append((source.name, f"corrupt {decoder.name} ({exc})"))
                _close(source, raw)
                return None
        why = unreadable(head)
        if why is not None:
            stats.skipped_files.append((source.name, why))
            _close(source, raw)
            return None
        encoding = utf16_encoding(head)
        if encoding is not None:
            stream = io.BufferedReader(Utf16Reader(stream, encoding), BLOCK)  # type: ignore[arg-type]
            head = stream.peek(SNIFF)[:SNIFF]
        if looks_binary(head):
            stats.skipped_files.append((source.name, binary_reason(head)))
            _close(source, raw)
            return None
    except OSError as exc:  # the first read failed (EIO, EISDIR, a vanished network file ...)
        stats.skipped_files.append((source.name, exc.strerror or str(exc)))
        _close(source, raw)
        return None
    except BaseException:
        _close(source, raw)
        raise
    stats.files += 1
    return stream, raw


def _close(source: Source, raw: BinaryIO) -> None:
    if source.stream is None:
        raw.close()


def read_lines(source: Source, stats: ReadStats) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of ``source``; problems go to ``stats``."""
    opened = open_text(source, stats)
    if opened is None:
        return
    stream, raw = opened
    try:
        lineno = 0
        for buf, start, end, sep, _ in read_blocks(stream, source.name, stats):
            pos = start
            while pos < end:
                nl = buf.find(sep, pos, end)
                lineno += 1
                yield lineno, _clean(buf[pos:nl])
                pos = nl + 1
    finally:
        _close(source, raw)


def read_blocks(stream: BinaryIO, name: str, stats: ReadStats, size: int = CHUNK) -> Iterator[Region]:
    """The text of ``stream`` as regions ``(buf, start, end, sep, offset)`` of whole lines: the pull
    wrapper over :class:`logdoc.read.lines.LineSplitter` (the line rules are there, once).
    ``stats.lines`` and ``stats.bytes`` are counted.

    Blocks are read ``size`` bytes at a time and handed out without copying them (the region
    bounds say which part of ``buf`` to look at), so memory stays flat whatever the input size.
    """
    splitter = LineSplitter(stats, first_block=size)
    read = getattr(stream, "read1", stream.read)  # read1 keeps what a truncated .gz gave before failing
    eof = False
    while not eof:
        parts = []
        got = 0
        while got < size:
            try:
                piece = read(size - got)
            except (OSError, EOFError, zlib.error) as exc:
                sep = splitter.sep or b"\n"
                done = splitter.lines + sum(x.count(sep) for x in parts)
                stats.warnings.append(f"{name}: stopped reading at line {done + 1}: {exc}")
                piece = b""
            if not piece:
                eof = True
                break
            parts.append(piece)
            got += len(piece)
        if not parts:
            break
        yield from splitter.feed(parts[0] if len(parts) == 1 else b"".join(parts))
    yield from splitter.close()


def as_read(raw: bytes) -> bool:
    """Whether :func:`_clean` changes nothing of ``raw`` but decode it: no control byte (CR, ESC, DEL,
    ...) and no escape written out as text (``#033[``, ``^[[``, a backslash). The fast path's memos
    keep only such lines (their bytes stand for their text)."""
    return (len(raw.translate(None, _C0)) == len(raw) and raw.find(b"#033[") < 0 and raw.find(b"^[[") < 0
            and raw.find(b"\\") < 0)  # (find: bytes' `in` tries an integer first)


def _clean(raw: bytes) -> str:
    if (raw.isascii() and len(raw.translate(None, _C0)) == len(raw) and raw.find(b"#033[") < 0
            and raw.find(b"^[[") < 0 and raw.find(b"\\") < 0):  # (as_read, written out: once a line)
        return raw.decode("ascii")  # no CR, ESC, control byte or escape written out as text: nothing to clean
    return _clean_full(raw)


def _clean_full(raw: bytes) -> str:
    raw = after_bars(raw)
    text = raw.decode("utf-8", "replace")
    if not text.isascii() and _TYPOGRAPHY_RX.search(text) is not None:
        text = text.translate(_TYPOGRAPHY)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "[" in text and _ANSI_TEXT.search(text) is not None:  # (one search: its first characters are few)
        text = _ANSI_TEXT.sub("", text)
    if _CONTROLS.search(text) is not None:
        # Other control characters become blanks: a keyword is never made of pieces that a
        # control character kept apart in the bytes (the fast path searches the bytes).
        text = _CONTROLS.sub(" ", text)
    return text


_CONTROLS = lazy_re(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What a web page, a forum's typography or a chat client puts in place of what the program printed:
# no-break and other fixed-width spaces, curly quotes, dashes for a hyphen, zero-width characters.
# Programs print none of them in their messages, so they are read as printed (the same length but
# for the zero-width ones, which go).
_TYPOGRAPHY = {**{c: " " for c in (0xA0, 0x2007, 0x202F)},
               **{c: "'" for c in (0x2018, 0x2019, 0x201A, 0x2032)},
               **{c: '"' for c in (0x201C, 0x201D, 0x201E, 0x2033)},
               **{c: "-" for c in (0x2010, 0x2011, 0x2012, 0x2013, 0x2212)},
               **{c: None for c in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)}}
_TYPOGRAPHY_RX = lazy_re("[" + "".join(chr(c) for c in _TYPOGRAPHY) + "]")
_C0 = bytes(range(32)) + b"\x7f"  # every byte _clean may change (CR, ESC, _CONTROLS; the escapes as text start with #, ^, \)
