"""grep beside the parse; plain twin: :func:`logdoc.fast.scan.scan` finding the keyword lines itself.

``grep -a -n -b -F`` runs on the other core and numbers the lines of a plain file that hold a
prefilter keyword or an ESC byte: the block scan then neither looks for the keywords nor counts
the lines between them. A file where grep fails is read again without it (:class:`GrepFailed`).
"""
from __future__ import annotations

import os
import re
from bisect import bisect_left
from operator import itemgetter

from ..lazyre import lazy_re
from ..read import prefilter
from ..read.source import Source

_ESC = b"\x1b"


GREP_MEMORY_KB = 128 << 10  # address space for the grep helper (lines are at most MAX_LINE for logdoc)


class GrepFailed(Exception):
    """grep did not read the whole file: the source is read again without it."""


def grep_path() -> str | None:
    if os.environ.get("LOGDOC_NO_GREP"):
        return None
    import shutil

    return shutil.which("grep")


# The head of each line of ``grep -n -b`` output: ``NUMBER:OFFSET:``.
_GREP_HEAD = lazy_re(rb"^(\d+):(\d+):", re.M)
# Every line of a chunk of that output, from its start to its newline: its head, or (the second
# branch) a line without one, whose empty number fails int() (GrepFailed). Each match ends a line, so
# the next one starts the next line: one match per line, the line's text passed over by one loop in C
# (``^`` in multiline mode was tried at every byte of the output: 6.6% of an explain of a 20 MB job log).
_GREP_LINES = lazy_re(rb"(\d+):(\d+):[^\n]*\n|[^\n]*\n")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
# A block whose first PROBE hits come less than DENSE_BYTES apart on average is read line by line
# (an NCCL_DEBUG=INFO storm) without reading the rest of its hits.
PROBE = 2048
DENSE_BYTES = 256


class GrepHits:
    """The start offsets of the lines of a file that hold a prefilter keyword or an ESC byte, from
    ``grep -a -n -b -F`` running beside the parse (on the other core), with their line numbers:
    the block scan then neither looks for the keywords itself nor counts the lines between them.
    Only for plain files (not gzip, not stdin), LF line ends.
    The lines it reports are a superset of the candidates (each is checked on its clean text),
    and a file where grep fails is read again the plain way (:class:`GrepFailed`)."""

    MIN_SIZE = 1 << 20  # smaller files: the find passes are cheaper than starting grep

    def __init__(self, proc):
        self.proc = proc
        self.out = proc.stdout
        self.offsets: list[int] = []  # the hits' offsets read from grep, from index ``at`` (increasing)
        self.numbers: list[int] = []  # and their line numbers
        self.at = 0
        self.tail = b""  # the start of an output line not complete yet
        self.alive = True

    @classmethod
    def start(cls, source: Source, stream) -> "GrepHits | None":
        if source.path is None or source.text is not None or source.stream is not None:
            return None
        if getattr(stream, "name", None) != source.path:  # gzip (or anything not the file itself)
            return None
        try:
            if os.path.getsize(source.path) < cls.MIN_SIZE:
                return None
        except OSError:
            return None
        grep = grep_path()
        if grep is None:
            return None
        import shutil
        import subprocess

        args = [grep, "-a", "-n", "-b", "-F"]
        for kw in prefilter.KEYWORDS_BYTES + (_ESC,):
            args += ["-e", kw.decode("latin-1")]
        args += ["--", source.path]
        # grep holds a whole line in memory: under an address-space limit it gives up on a huge line
        # ("memory exhausted", status 2) and the file is read again without it (GrepFailed).
        sh = shutil.which("sh")
        if sh is not None:
            args = [sh, "-c", f'ulimit -v {GREP_MEMORY_KB} 2>/dev/null; exec "$@"', "sh"] + args
        env = dict(os.environ, LC_ALL="C")
        try:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                    env=env, bufsize=1 << 16)
        except OSError:
            return None
        return cls(proc)

    def take(self, lo: int, hi: int, base: int, limit: int | None = None) -> tuple[list[int], list[int]] | None:
        """Hits with ``lo <= offset < hi`` as positions ``offset - lo + base`` and their line
        numbers (hits below ``lo`` fell in cut lines and are dropped). More than ``limit`` of them,
        or a first :data:`PROBE` of them less than :data:`DENSE_BYTES` apart: None, and the rest of
        the block's hits are passed over unread (a dense block is read line by line anyway)."""
        out: list[int] = []
        numbers: list[int] = []
        shift = (base - lo).__add__
        while True:
            offsets, i = self.offsets, self.at
            if i >= len(offsets):
                if not self._read():
                    break
                continue
            j = bisect_left(offsets, hi, i)  # the hits of this chunk below hi, and of those the ones from lo on
            k = bisect_left(offsets, lo, i, j)
            out += map(shift, offsets[k:j])
            numbers += self.numbers[k:j]
            self.at = j
            if limit is not None and (len(out) > limit
                                      or len(out) >= PROBE and out[PROBE - 1] - base < PROBE * DENSE_BYTES):
                self._pass(hi)  # (the limit's or the probe's test: true since the hit that made it true)
                return None
            if j < len(offsets):
                break
        return out, numbers

    def _chunk(self) -> bytes | None:
        """The next whole output lines from grep (at least one), or None at its end."""
        parts = [self.tail] if self.tail else []
        while True:
            data = self.out.read1(1 << 20)
            if not data:
                if parts:
                    raise GrepFailed("grep output ends inside a line")
                return None
            last = data.rfind(b"\n")
            if last < 0:
                parts.append(data)  # a long line: keep reading
                continue
            parts.append(data[:last + 1])
            self.tail = data[last + 1:]
            return b"".join(parts) if len(parts) > 1 else parts[0]

    def _read(self) -> bool:
        """Parse the heads of the next chunk of grep output into ``offsets`` and ``numbers``; False at the end."""
        chunk = self._chunk()
        if chunk is None:
            return False
        self.offsets, self.numbers = self._heads(chunk)
        self.at = 0
        return True

    def _heads(self, chunk: bytes) -> tuple[list[int], list[int]]:
        """The offsets and the line numbers of the lines of a chunk of whole output lines."""
        found = _GREP_LINES.findall(chunk)
        if len(found) != chunk.count(b"\n"):
            raise GrepFailed("unexpected grep output")
        try:
            return list(map(int, map(_SECOND, found))), list(map(int, map(_FIRST, found)))
        except ValueError:
            raise GrepFailed("unexpected grep output") from None

    def _pass(self, hi: int) -> None:
        """Pass over the hits below ``hi``: chunks of output whose last line is below it are
        dropped without being parsed."""
        offsets = self.offsets
        self.at = i = bisect_left(offsets, hi, self.at)
        if i < len(offsets):
            return
        while True:
            chunk = self._chunk()
            if chunk is None:
                self.offsets, self.numbers, self.at = [], [], 0
                return
            last = chunk.rfind(b"\n", 0, len(chunk) - 1) + 1
            m = _GREP_HEAD.match(chunk, last)
            if m is None:
                raise GrepFailed("unexpected grep output")
            if int(m.group(2)) < hi:
                continue
            self.offsets, self.numbers = self._heads(chunk)
            self.at = bisect_left(self.offsets, hi)
            return

    def finish(self) -> None:
        rest = self.at < len(self.offsets) or self.tail or self.out.read()
        code = self.proc.wait()
        if code not in (0, 1) or rest:
            raise GrepFailed(f"grep exit status {code}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.out.close()
        except OSError:
            pass
        self.proc.wait()
        self.alive = False
