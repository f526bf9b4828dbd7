"""Paste damage: what happens to a log between the terminal and an issue thread, repaired per source.

:func:`logdoc.envelope.unwrap` peels the envelopes it knows from one line. A paste also carries
damage that only shows across lines, and this module repairs it for one source before its lines
are parsed (:func:`prepare`), from what the source itself shows:

* **markdown residue** from issue trackers: code fences, ``<details>`` / ``<summary>`` / ``<pre>``
  tags, ``>`` quote markers and list bullets on most lines, the common indentation of a code block,
  bold markers around a message (over the lines a wrap made of it too); a traceback whose indentation
  a text box dropped is indented again (:func:`_reindent_frames`);
* **a repeated prefix that no envelope knows** (``opt-1_3b.0 [stderr]``, ``[SGLang LOG]``,
  ``INFO 01-17 00:55:01 [x.py:12]``, ``10.10.23.10:``, a grep file name): the run of header-like
  tokens (bracketed, numbered, a level word) that starts a large share of the lines, learned from
  the source, is peeled; where it names a process (a pid, a rank, or only a label that differs
  between lines) that becomes the line's stream, so records of different processes stay apart.
  Ray's ``[N similar log lines]`` note is peeled wherever it stands;
* **hard-wrapped lines**: a source cut at a fixed width (several lines of exactly that length)
  has each cut line joined with the lines that continue it (every rank's copy of one message cut at
  the same column too: its rests repeat, and a number that starts each is no prefix); a line that
  lost the source's prefix and continues a sentence (lower case or a digit first) between two
  prefixed lines is joined to the line before it;
* **character-interleaved output** of two processes (``TTrraacceebbaacckk``): detected, reported as
  a warning, and de-interleaved when the two pieces are one text printed twice; so are two writes of
  one line that alternate in chunks (a line that is its text twice, an exception line whose type two
  writes split: :func:`interleaved_writes`);
* **unprefixed lines of a multi-process paste** (a bare ``NCCL version`` line) take the process of
  the lines around them when those agree.

The repair keeps the line count: a joined line keeps its number and the lines it absorbed become
empty, so line numbers in evidence stay those of the paste. What the repair learned for each line
(its stream, time and level from a peeled prefix) is applied after :func:`~logdoc.envelope.unwrap`
through :meth:`Paste.apply`. A source with none of this damage is left exactly as it is.

Only sources up to :data:`REPAIR_MAX` bytes are repaired (pastes are small; a repaired source is
read twice), and a longer source only when its first :data:`HEAD_LINES` lines show damage.

A short source (at most :data:`EVERY_LINE_MAX` lines: a paste, an excerpt) has **every line read**,
not only those with a prefilter keyword (:attr:`Paste.every_line`): a pasted message often lost what
carries the keyword (NCCL's header, the exception type before it, the rest of a wrapped line) and
stands bare (``Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000``, ``No interface
found in the same subnet as remote address``). Logs long enough for the keyword pass to matter
keep their headers. So do the short files of a large input (a job folder of many rank logs, more than
:data:`EVERY_LINE_INPUT_MAX` bytes in all: :func:`short_sources`), which are logs as written, not pastes;
the every-line read there would cost its time on thousands of files.

The repairs are one ordered pass over one source (:func:`.repair.repair_lines`): the learned prefix
decides the streams, which the hard-wrap joins and the bare-line assignment read. Each kind of damage
is a module of this package:

* :mod:`.common`: the bounds and line shapes the repairs share;
* :mod:`.markdown`: markdown and text-box residue, tracebacks whose frames a text box cut or dedented;
* :mod:`.prefix`: a repeated prefix learned from the source, and residue before a known start;
* :mod:`.escaped`: log lines inside JSON records, messages inside escaped strings;
* :mod:`.interleave`: character-interleaved output of two processes;
* :mod:`.wrap`: hard-wrapped lines and messages cut inside a word;
* :mod:`.repair`: the pass itself (:class:`Paste`, :func:`repair_lines`), glued records split,
  bare lines given the process around them;
* :mod:`.screen`: :func:`as_written`, the cheap screen that spares a large input's parts the pass;
* this module: which sources are read how (:func:`prepare`, :func:`prepare_bytes`, :func:`short_sources`).
"""
from __future__ import annotations

import io
import os
from dataclasses import replace

from ..read.source import _Peek, read_lines, ReadStats, Source
from .common import EVERY_LINE_MAX, HEAD_LINES, LEARN_LINES, Paste
from .interleave import deinterleave, interleaved_writes, is_interleaved
from .gutter import _strip_gutter
from .markdown import _strip_markdown
from .repair import repair_lines, split_glued, split_glued_torch
from .screen import _NO_PREFIX, as_written

REPAIR_MAX = 4 << 20
EVERY_LINE_INPUT_MAX = 1 << 20  # ... when all the sources together are at most this many bytes

__all__ = ["Paste", "prepare", "prepare_bytes", "short_sources", "repair_lines", "deinterleave", "is_interleaved",
           "interleaved_writes", "split_glued", "split_glued_torch", "as_written", "LEARN_LINES", "_NO_PREFIX", "_strip_gutter", "_strip_markdown"]


# ------------------------------------------------------------------------------------------------
# sources

def short_sources(sources: list[Source]) -> list[Source]:
    """``sources``, each marked as a large input's part (no every-line read) when all of them together
    are more than :data:`EVERY_LINE_INPUT_MAX` bytes; standard input counts as nothing (one stream)."""
    if len(sources) < 2:
        return sources
    total = 0
    for s in sources:
        if s.text is not None:
            total += len(s.text)
        elif s.path is not None and not s.skip:
            try:
                total += os.path.getsize(s.path)
            except OSError:
                pass
        if total > EVERY_LINE_INPUT_MAX:
            return [replace(s, every_line=False) for s in sources]
    return sources


def _replay(name: str, data: bytes) -> Source:
    """Bytes already read from a stream, as a source that reads them as the stream did."""
    return Source(name, stream=io.BufferedReader(_Peek(data, io.BytesIO(b"")), 1 << 20))  # type: ignore[arg-type]


def prepare(source: Source) -> tuple[Source, Paste | None]:
    """The source to read in place of ``source`` and what its repair learned (None: nothing to
    repair; the source is then read as it is). Standard input is read ahead up to
    :data:`REPAIR_MAX` bytes and handed back whole.

    The live reader (:class:`logdoc.live.LiveParser`) keeps the first :data:`REPAIR_MAX` bytes of
    its stream and asks this same function of them when the stream ends
    (:func:`prepare_bytes`), so a stream read live and read from a pipe give the same events."""
    if source.skip:
        return source, None
    if source.stream is not None:
        try:
            data = source.stream.read(REPAIR_MAX + 1)
        except (OSError, ValueError):
            return source, None
        if data is None:
            data = b""
        if len(data) > REPAIR_MAX:
            rest = Source(source.name, stream=io.BufferedReader(_Peek(data, source.stream), 1 << 20))
            return rest, None
        return prepare_bytes(source.name, data, source.every_line)
    if source.text is None:
        if source.path is None:
            return source, None
        try:
            if not os.path.isfile(source.path) or os.path.getsize(source.path) > REPAIR_MAX:
                return source, None
        except OSError:
            return source, None
    elif len(source.text) > REPAIR_MAX:
        return source, None
    return _prepare_read(source, source, source.every_line)


def prepare_bytes(name: str, data: bytes, every_line: bool = True) -> tuple[Source, Paste | None]:
    """:func:`prepare` for the whole of a stream (at most :data:`REPAIR_MAX` bytes), already read:
    the source to read and what its repair learned."""
    return _prepare_read(_replay(name, data), _replay(name, data), every_line)


def _prepare_read(source: Source, again: Source, every_line: bool) -> tuple[Source, Paste | None]:
    """Read ``source``'s lines and decide; ``again`` is the same source to be read afresh."""
    rs = ReadStats()
    lines: list[str] = []
    size = 0
    gen = read_lines(source, rs)
    try:
        for _n, text in gen:
            lines.append(text)
            size += len(text) + 1
            if size > REPAIR_MAX:
                return again, None
            if len(lines) == HEAD_LINES and repair_lines(lines, source.name) is None:
                return again, None  # no sign of paste damage in the head: read as it is
    finally:
        gen.close()
    if rs.skipped_files or rs.warnings or rs.cut_lines or not lines:
        return again, None
    # a large input's part (a job folder's rank log) is a log as written: cheap facts may spare the repair
    got = None if not every_line and as_written(lines) else repair_lines(lines, source.name)
    short = every_line and len(lines) <= EVERY_LINE_MAX
    longest = max(map(len, lines))
    at_width = sum(len(t) == longest for t in lines)
    if got is None:  # read as it is (a short source: every line of it)
        return again, (Paste(every_line=True, lines=len(lines), longest=longest, at_width=at_width) if short else None)
    fixed, paste = got
    paste.every_line = short
    paste.lines = len(lines)
    paste.longest = longest
    paste.at_width = at_width
    paste.peeled = {i: len(a) - len(b) for i, (a, b) in enumerate(zip(lines, fixed), 1) if b and len(a) > len(b)}
    return Source(source.name, text="\n".join(fixed) + "\n"), paste
