""":func:`as_written`: the cheap screen that spares a large input's parts the repair, from facts read
mostly in the whole text at once (no markdown, no learned prefix possible, no wrap width, no
interleaved line, no bare keyword line between NCCL lines).
"""
from __future__ import annotations

import re

from ..lazyre import lazy_re
from ..nccl import HEADER as _NCCL_HEADER
from ..read.prefilter import _CANDIDATE, candidate
from .common import _PROCESS_HEADER, LEARN_LINES, LONG, MAX_INTERLEAVED, Paste, PREFIX_MIN, PREFIX_SHARE, WRAP_MIN_WIDTH
from .escaped import _escaped_text, _json_record, logfmt_record, may_hold_escaped, syslog_escaped
from .ipython import _HEAD as _IPY_HEAD
from .interleave import interleaved_writes, is_interleaved
from .markdown import _AUTOLINK, OPEN_AUTOLINK, _fold_stamp_lines, STAMP_LINE_NL, _block_indent, _BOLD_OPEN_EXC, _fold_console_rows, _HTML_ENTITY, _strip_scroll_position, _ITALIC_WORD, _OPEN_FRAME, _SGR_RESET, TYPESET_QUOTES
from .gutter import _strip_gutter
from .prefix import _anchor_residue, _ANCHOR_WORDS
from .repair import _assign_between, glued_bar, split_glued, split_glued_torch
from .wrap import _midword_joins, _wrap_width, padded_rows

# What as_written() reads in the whole text at once. Markdown residue at a line's start (a fence,
# a tag, a quote) and bullets; a nonblank line indented by at most one blank (then the lines are no
# indented code block); a line that no envelope can start and whose first token is a word without a
# digit or a colon (so neither header-like nor a pdsh host): _learn_prefix takes nothing from it; two
# doubled letters at most 8 characters apart (is_interleaved() needs doubled letters in at least 30%
# of a line of 16 or more: some two of them are that close). The line-start patterns begin with the
# line's newline and are searched in "\n" + text: a pattern that starts with `^` (re.M) is tried at
# every character, one that starts with a literal only where that character is (ten times faster).
_MARKDOWN_START = lazy_re(r"\n(?:[ \t>]*[`~<]|[ \t]*>)")
_BULLETS = lazy_re(r"\n[-*+][ \t]")
_BOLD_END = lazy_re(r"(?:\*\*|__)[ \t]?(?:\n|$)")  # a line that may end in markdown bold (_BOLD_TAIL)
_FLUSH = lazy_re(r"\n ?\S")
_NO_PREFIX = lazy_re(r"\n(?![^\n]*\]:\[)(?:[ \t](?=[^\n]*\S)|[a-z][^\s\[(\d:]*(?![^\s\[(])"
                        r"|[{'\"=#@!$%&.,;/?_\\][^\s\[(\d]*(?![^\s\[(])|(?=[a-z])(?:" + _NCCL_HEADER.pattern + "))",
                        re.M | _NCCL_HEADER.flags)
_NEAR_DOUBLED = lazy_re(r"([A-Za-z])\1[^\n]{0,8}?([A-Za-z])\2")


_LETTERS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NOT_LETTER = bytes(0 if b in _LETTERS else 255 for b in range(256))


def _dense_doubled(lines: list[str], text: str) -> list[str]:
    """The lines in which the pairs of one ASCII letter twice in a row (``aa``, overlapping ones
    counted) are at least 15% of the characters: is_interleaved() holds of no other line (it
    needs twice its non-overlapping pairs to be 30% of them). Read in the whole text at once:
    ``b[i] ^ b[i + 1]`` for every i in one big-integer XOR, a non-letter's byte set to 255."""
    raw = text.encode("utf-8", "surrogatepass")
    n = len(raw) - 1
    if n < 1:
        return []
    eq = (int.from_bytes(raw[:-1], "big") ^ int.from_bytes(raw[1:], "big")) | \
        int.from_bytes(raw[:-1].translate(_NOT_LETTER), "big")
    zero = eq.to_bytes(n, "big")  # a 0 byte at i: raw[i] and raw[i + 1] are one letter twice
    out = []
    pos = 0
    count = zero.count
    for t in lines:
        k = len(t.encode("utf-8", "surrogatepass")) if not t.isascii() else len(t)
        if k >= 16 and count(0, pos, pos + k) * 20 >= 3 * len(t):
            out.append(t)
        pos += k + 1
    return out


def _lines_holding(text: str, words: list[str]) -> list[str]:
    """The lines of ``text`` that hold one of ``words``, each once, in no set order (found with
    ``str.find`` in the whole text, not by testing every line for every word)."""
    starts: set[int] = set()
    for w in words:
        i = text.find(w)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            i = text.find(w, i + 1)
    out = []
    for s in starts:
        e = text.find("\n", s)
        out.append(text[s:] if e < 0 else text[s:e])
    return out


def as_written(lines: list[str]) -> bool:
    """True when :func:`repair_lines` is certain to find nothing to repair in ``lines``, decided from
    cheap facts, mostly read in the whole text at once: no markdown residue, no Ray note, too few
    lines that could carry a learned prefix, no fixed wrap width, no interleaved line, no bare
    keyword line between NCCL lines. False means only that the repair must look. The files of a
    job folder are logs as written: this spares each of them the repair's per-line work
    (``tests/test_paste_screen.py`` holds it to :func:`repair_lines` on every sample and paste case)."""
    if len(lines) > LEARN_LINES:
        return False  # (a long source: the prefix is learned from its head; read by repair_lines)
    text = "\n".join(lines)
    nl = "\n" + text  # (the line-start patterns begin with a line's newline)
    if "&" in text and _HTML_ENTITY.search(text) is not None or _strip_gutter(list(lines)) \
            or text.startswith("E  ") or "\nE  " in text:
        return False  # HTML's entities, a viewer's line numbers, pytest's failure lines
    if _SGR_RESET in text:
        return False  # colour codes that lost their escape byte
    if ("](" in text or "://" in text) and (_AUTOLINK.search(text.replace("\n", "")) is not None
                                            or any(OPEN_AUTOLINK.search(t, max(0, len(t) - 1280)) is not None for t in lines if "](" in t)):
        return False  # an editor's links around file names and addresses (one a wrap cut: across the line end; one a cut left open)
    if STAMP_LINE_NL.search(nl) is not None and _fold_stamp_lines(list(lines), {}, set()):
        return False  # a log console's events copied as text, each one's time on a line of its own
    if "   " in text and any(padded_rows(t) is not None for t in lines if len(t) >= 2 * WRAP_MIN_WIDTH and "   " in t):
        return False  # a terminal's rows, each padded to its width, copied as one line
    if "/" in text and _strip_scroll_position(lines[:4]):
        return False  # tmux's scroll position at the end of the first line
    if "|" in text and _fold_console_rows([t for t in lines if "|" in t[:4]]):
        return False  # a log console's rows, each message twice
    if not text.isascii() and any(q in text for q in TYPESET_QUOTES):
        return False  # a page's typeset quotes
    if "similar log lines]" in text or _MARKDOWN_START.search(nl) is not None \
            or len(_BULLETS.findall(nl)) >= 2 or ("**" in text or "__" in text) and _BOLD_END.search(text) is not None \
            or _ITALIC_WORD.search(text) is not None or ("**" in text or "__" in text) and any(
                _BOLD_OPEN_EXC.search(t) is not None for t in lines if "**" in t or "__" in t):
        return False
    if text.strip() and _FLUSH.search(nl) is None or ("  " in text and _block_indent(lines)):
        return False  # every line indented (maybe a code block), or every one but the rests of wrapped ones
    if 'File "' in text and ('\nFile "' in nl or any(_OPEN_FRAME.match(t) is not None for t in lines if 'File "' in t)):
        return False  # a traceback's frame line dedented, or cut inside its file name
    if "call last)" in text and any(_IPY_HEAD.match(t) is not None for t in lines if "call last)" in t):
        return False  # a traceback as IPython prints it
    if "%|" in text and any(glued_bar(t) for t in lines if "%|" in t):
        return False  # a line a progress bar's last update stood in front of
    if '\n{"' in nl and any(t.startswith('{"') and _json_record(t) is not None for t in lines):
        return False  # log lines inside JSON records
    if "msg=" in text and any(logfmt_record(t) is not None for t in lines if "msg=" in t):
        return False  # log lines inside logfmt records
    if "#01" in text and any(syslog_escaped(t) for t in lines if "#01" in t):
        return False  # control characters a syslog daemon wrote out as text
    if may_hold_escaped(text) and any(
            may_hold_escaped(t) and candidate(t) and _escaped_text(t) is not None for t in lines):
        return False  # a message inside an escaped string
    present = [w for w in _ANCHOR_WORDS if w in text]
    if present:
        residue = 0  # a prefix of the source's own before the known starts of two lines
        for t in _lines_holding(text, present):
            if _anchor_residue(t) is not None:
                residue += 1
                if residue >= 2:
                    return False
    eligible = 0
    for t in lines:
        if t and not t.isspace():
            eligible += 1
    possible = eligible - len(_NO_PREFIX.findall(nl))
    if possible and possible >= max(PREFIX_MIN, PREFIX_SHARE * eligible):
        return False
    if _wrap_width(lines):
        return False
    if _midword_joins(list(lines), [len(t) for t in lines], set()):
        return False  # a message cut inside a word at the source's width
    if "NCCL " in text:
        for t in lines:
            if t.count("NCCL ") > 1 and len(t) <= LONG and split_glued(t) is not None:
                return False  # several NCCL records glued on one line
    if "terminate called" in text or ".cpp:" in text:
        for t in lines:
            if ("terminate called" in t or ".cpp:" in t) and len(t) <= LONG and split_glued_torch(t) is not None:
                return False  # PyTorch's records glued on one line
    for t in _dense_doubled(lines, text):
        if 16 <= len(t) <= MAX_INTERLEAVED and _NEAR_DOUBLED.search(t) is not None and is_interleaved(t):
            return False
    for t in lines:
        if 16 <= len(t) <= MAX_INTERLEAVED:
            u = t.strip()
            h = len(u) // 2
            if (u[:h] == u[h:] or u[:1].isalpha() and u.find(u[:12], 8) >= 0) and interleaved_writes(t) is not None:
                return False
    # a bare keyword line takes a process only from NCCL lines on both sides (their header holds
    # `NCCL `): only a line with such lines within 3 on both sides is looked at, in order
    before: set[int] = set()  # lines with an NCCL line within 3 before them
    after: set[int] = set()   # ... within 3 after them
    for j, t in enumerate(lines):
        if "NCCL " in t:
            before.update(range(j + 1, j + 4))
            after.update(range(max(0, j - 3), j))
    near = before & after
    for i in sorted(near):
        if i >= len(lines):
            continue
        t = lines[i]  # (the cheap tests first: most lines near NCCL lines are NCCL lines, with their header)
        if t[:1] in " \t" or len(t) > LONG or ":" in t[:40] and _PROCESS_HEADER.search(t[:120]):
            continue
        if _CANDIDATE.search(t) is None:
            continue
        return not _assign_between(lines, Paste())
    return True
