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

One module, over 500 lines: the repairs are one ordered pass over one source (:func:`prepare`): the
learned prefix decides the streams, the hard-wrap joins and the bare-line assignment read those
streams, and interleaving is detected on the same token shapes (``_shape``, ``_tokens``).
"""
from __future__ import annotations

import html
import io
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace

from .cuttail import across, one_word
from .envelope import has_huge_number, leading_end, unwrap
from .events import Envelope
from .lazyre import lazy_re
from .nccl import HEADER as _NCCL_HEADER
from .read.prefilter import _CANDIDATE, candidate
from .read.source import ReadStats, Source, _Peek, read_lines
from .residue import LEVEL_WORDS, SOURCE_LOCATION, prefix_identity, prefix_like

REPAIR_MAX = 4 << 20
HEAD_LINES = 2000
LEARN_LINES = 1000  # lines a prefix is learned from
PREFIX_SHARE = 0.4     # a learned prefix starts at least this share of the lines that could carry one
PREFIX_MIN = 3         # ... and at least this many lines
MAX_PREFIX_TOKENS = 6
MAX_PREFIX_CHARS = 160
WRAP_MIN_WIDTH = 60
WRAP_MIN_LINES = 3
WRAP_WIDE = 80        # from this width on, two lines cut at it (and no other line at it) are enough
MAX_WRAP_JOIN = 12     # lines joined into one at most
MAX_INTERLEAVED = 4096  # longer lines are not looked at for interleaving (terminal output is shorter)
LONG = 8192            # longer lines are left as they are (no prefix, no wrap, no process of their own)
EVERY_LINE_MAX = 1000  # a source of at most this many lines has every line read (not only keyword lines)
EVERY_LINE_INPUT_MAX = 1 << 20  # ... when all the sources together are at most this many bytes

__all__ = ["Paste", "prepare", "prepare_bytes", "short_sources", "repair_lines", "deinterleave", "is_interleaved"]


# ------------------------------------------------------------------------------------------------
# markdown residue

_FENCE = lazy_re(r"[ \t]*(?:>[ \t]?)*[ \t]*(?:`{3,}|~{3,})[\w+.#-]*[ \t]*$")
_SUMMARY = lazy_re(r"<summary\b[^>]*>.*?(?:</summary>|$)", re.I)
_TAG = lazy_re(r"</?(?:details|summary|pre|code|br|p|div|span)\b[^>]*>", re.I)
_TAG_START = lazy_re(r"[ \t]*(?:>[ \t]?)*[ \t]*</?(?:details|summary|pre|code|br|p|div|span)\b", re.I)
_QUOTE = lazy_re(r"[ \t]*(?:>[ \t]?)+")
_BULLET = lazy_re(r"[-*+][ \t]")
# Markdown bold around a whole message, as an issue tracker keeps it when a line was emphasised:
# `[rank0]: **RuntimeError: ...**` (the markers open after a blank or at the start and close the line;
# no `*` inside, so `f(*args, **kwargs)` is never touched)
_BOLD_TAIL = lazy_re(r"(^|[ \t])(\*\*|__)(?=\S)([^*\n]*?[ \t][^*\n]*?\S)\2[ \t]*$")
# Markdown emphasis on single words, as an issue tracker's editor leaves it when `*`/`_` in a pasted line
# were read as markup: `_Check_ failed: ... unhandled cuda _error_`. A word of letters only between two
# underscores that no word character touches (`_ALLGATHER_BASE`, `NCCL_P2P_LEVEL`, `__init__` are never one).
_ITALIC_WORD = lazy_re(r"(?<![\w*/.-])_([A-Za-z]{3,})_(?![\w/.-])")


# the two ends of a bold span over several lines of one paragraph (a message the paste hard-wrapped
# inside its markers): an opening marker after a blank or at the start, a closing one that ends its line
_BOLD_OPEN = lazy_re(r"(^|[ \t])(\*\*|__)(?=\S)")
_BOLD_CLOSE = lazy_re(r"(?<=\S)(\*\*|__)[ \t]*$")


def _bold_over_lines(out: list[str], end: int) -> bool:
    """Markdown bold that opens on a line before ``end`` and closes at the end of ``end`` (at most
    :data:`MAX_WRAP_JOIN` lines, no blank line and no other marker between them: one paragraph): both
    markers removed, in place; whether there were."""
    close = _BOLD_CLOSE.search(out[end])
    if close is None or close.group(1) in out[end][:close.start()]:
        return False
    mark = close.group(1)
    for k in range(end - 1, max(-1, end - MAX_WRAP_JOIN), -1):
        t = out[k]
        if not t.strip():
            return False
        opened = _BOLD_OPEN.search(t)
        if opened is not None and opened.group(2) == mark and mark not in t[opened.end():]:
            out[k] = t[:opened.start()] + opened.group(1) + t[opened.end():]
            out[end] = out[end][:close.start()]
            return True
        if mark in t:
            return False
    return False


_HTML_ENTITY = lazy_re(r"&(?:lt|gt|amp|quot|apos|nbsp|#39|#x27|#34|#x2F);")


def _unescape_html(out: list[str]) -> bool:
    """A page scraped as text keeps HTML's entities (``&lt;module&gt;``, ``&#39;``): the lines that
    hold one read as they were printed."""
    changed = False
    for i, t in enumerate(out):
        if "&" in t and _HTML_ENTITY.search(t) is not None:
            out[i] = html.unescape(t).replace("\u00a0", " ")
            changed = True
    return changed


_PYTEST_E = lazy_re(r"E( {2,})(?=\S)")


def _strip_pytest(out: list[str]) -> bool:
    """pytest's report of a failed test shows the exception's lines after ``E`` and the indent of the
    failing statement (``E       RuntimeError: ...``, ``E       Last error:``): they read without them,
    their own indentation kept."""
    hits = [(i, m) for i, t in enumerate(out) if t[:1] == "E" and (m := _PYTEST_E.match(t)) is not None]
    if not hits:
        return False
    base = min(len(m.group(1)) for _, m in hits)
    for i, _m in hits:
        out[i] = out[i][1 + base:]
    return True


_GUTTER = lazy_re(r" *(\d{1,7})(?: ?\|(?: |$)|\t)")


def _strip_gutter(out: list[str]) -> bool:
    """A log viewer's line numbers copied with the lines (``  12 | text``, ``cat -n``'s ``    12<TAB>text``):
    a number and a bar or a tab before most lines, counting the lines up. They are removed."""
    nums = []
    for i, t in enumerate(out[:HEAD_LINES]):
        if t[:1] in " 0123456789":
            m = _GUTTER.match(t)
            if m is not None:
                nums.append((i, int(m.group(1))))
    filled = sum(1 for t in out[:HEAD_LINES] if t.strip())
    if not nums or len(nums) < min(PREFIX_MIN, filled) or len(nums) < 0.8 * filled:
        return False
    counted = sum(1 for (i, n), (j, k) in zip(nums, nums[1:]) if k - n == j - i)
    if counted < 0.8 * (len(nums) - 1):
        return False
    for i, t in enumerate(out):
        m = _GUTTER.match(t) if t[:1] in " 0123456789" else None
        if m is not None:
            out[i] = t[m.end():]
    return True


# a Python traceback's frame line, its code line and the marks under it, as a page that drops leading
# blanks leaves them (at the line's start)
_FLUSH_FRAME = lazy_re(r"File \"[^\"\n]{1,1024}\", line \d{1,9}, in ")
_MARKS = lazy_re(r"[ \t]*[\^~]+[ \t\^~]*$")
_TB_HEAD = "Traceback (most recent call last):"


# a frame line whose file name a wrap or a narrow page cut: its quote not closed on the line
_OPEN_FRAME = lazy_re(r"[ \t]*File \"[^\"\n]{1,1024}$")
_FRAME_REST = lazy_re(r"[^\"\s]{0,1024}\", line \d{1,9}(?:, in \S|$)")
MAX_FRAME_JOIN = 4  # lines a frame line's file name spans at most


def _join_cut_frames(out: list[str], joined: set[int]) -> bool:
    """A Python frame line cut inside its file name (``File "/home/u/env/lib/python3.8/site-packages/tor`` /
    ``ch/distributed/rendezvous.py", line 166, in _env_rendezvous_handler``) is joined with the lines that
    finish it, whatever width cut it: Python closes the name's quote on the line it prints, so an open one
    can only be a cut, and the rest is the name's tail (no blank) up to ``", line N``. A page that also dropped
    the indentation leaves the same pieces. The numbers of the lines joined away are added to ``joined``;
    in place; whether any line changed."""
    changed = False
    n = len(out)
    for i in range(n):
        t = out[i]
        if '"' not in t or _OPEN_FRAME.match(t) is None:
            continue
        parts = [t]
        k = i + 1
        while k < n and k - i < MAX_FRAME_JOIN and out[k] and out[k][0] not in " \t":
            parts.append(out[k])
            k += 1
            if _FRAME_REST.match(parts[-1]) is not None:
                break
            if '"' in parts[-1] or " " in parts[-1]:
                parts = []
                break
        else:
            continue  # (no line finished the name)
        if len(parts) < 2:
            continue
        out[i] = "".join(parts)
        for j in range(i + 1, k):
            out[j] = ""
            joined.add(j + 1)
        changed = True
    return changed


def _reindent_frames(out: list[str], joined: set[int] = frozenset()) -> bool:
    """A Python traceback whose indentation the paste dropped (a forum's editor, a text box that strips
    leading blanks): after its ``Traceback (most recent call last):`` line, a frame line at the start of its
    line gets the two blanks Python prints before it, and the code line after it (and the ``^^^`` marks
    under that) the four, so the traceback reads as one record again. In place; whether any line changed."""
    changed = False
    i = 0
    n = len(out)
    while i < n:
        if not out[i].rstrip().endswith(_TB_HEAD) or i + 1 >= n or _FLUSH_FRAME.match(out[i + 1]) is None:
            i += 1
            continue
        i += 1
        while i < n and _FLUSH_FRAME.match(out[i]) is not None:
            out[i] = "  " + out[i]
            i += 1
            while i < n and not out[i] and i + 1 in joined:  # (the lines a cut frame line was joined from)
                i += 1
            # its code line: anything but another frame, an exception's line or the end of the traceback
            if (i < n and out[i].strip() and _FLUSH_FRAME.match(out[i]) is None
                    and _EXC_START.match(out[i]) is None and not out[i].startswith(_TB_HEAD[:9])):
                out[i] = "    " + out[i]
                i += 1
                if i < n and _MARKS.match(out[i]) is not None:
                    out[i] = "    " + out[i].lstrip()
                    i += 1
        changed = True
    return changed


def _strip_markdown(lines: list[str]) -> tuple[list[str], bool]:
    """Fences and HTML tags become empty lines (or their text); quote markers, bullets and the
    common indentation of a code block are removed where most lines show them."""
    out = list(lines)
    changed = False
    for i, t in enumerate(out):
        if not t:
            continue
        c = t.lstrip(" \t>")[:1]
        if c in "`~" and _FENCE.match(t):
            out[i] = ""
            changed = True
        elif c == "<" and _TAG_START.match(t):
            q = _QUOTE.match(t)
            lead = t[:q.end()] if q else ""
            rest = _TAG.sub("", _SUMMARY.sub("", t[len(lead):]))
            out[i] = (lead + rest) if rest.strip() else ""
            changed = True
        if "_" in t and _ITALIC_WORD.search(out[i]) is not None:
            out[i] = _ITALIC_WORD.sub(r"\1", out[i])
            changed = True
        if t.endswith(("**", "__", "** ", "__ ")):
            m = _BOLD_TAIL.search(out[i])
            if m is not None:
                out[i] = out[i][:m.start()] + m.group(1) + m.group(3)
                changed = True
            elif _bold_over_lines(out, i):
                changed = True
    nonblank = [t for t in out if t.strip()]
    if not nonblank:
        return out, changed
    quoted = sum(1 for t in nonblank if t.lstrip(" \t")[:1] == ">")
    if quoted >= 2 and quoted >= 0.3 * len(nonblank):
        for i, t in enumerate(out):
            m = _QUOTE.match(t)
            if m is not None:
                out[i] = t[m.end():]
                changed = True
        nonblank = [t for t in out if t.strip()]
    bullets = sum(1 for t in nonblank if _BULLET.match(t))
    if bullets >= 2 and bullets >= 0.5 * len(nonblank):
        for i, t in enumerate(out):
            if _BULLET.match(t):
                out[i] = t[2:]
                changed = True
        nonblank = [t for t in out if t.strip()]
    if nonblank and all(t[:1] == "\t" for t in nonblank):
        out = [t[1:] if t.strip() else "" for t in out]  # a code block indented with a tab
        nonblank = [t for t in out if t.strip()]
        changed = True
    indent = _block_indent(out)
    if indent:
        out = [(t[indent:] if t[:indent].isspace() else t) if t.strip() else "" for t in out]
        changed = True
    return out, changed


def _block_indent(lines: list[str]) -> int:
    """The indentation of a code block that holds the lines (0: none): at least 2 blanks before every line
    that is not empty and not the rest of a wrapped one (flush left right after a line of the greatest
    width: the page or the mail wrapped them after the block was indented); not a paste of traceback
    frames, which are indented themselves."""
    nonblank = [(i, t) for i, t in enumerate(lines) if t.strip()]
    if not nonblank:
        return 0
    w = max(len(t) for _, t in nonblank)
    block = [t for i, t in nonblank
             if not (i and w >= WRAP_MIN_WIDTH and len(lines[i - 1]) == w and t[:1] not in " \t")]
    if not block:
        return 0
    indent = min(len(t) - len(t.lstrip(" ")) for t in block)
    if indent < 2 or all(t[indent:].startswith(('File "', "frame #")) or t[indent] == " "
                         for t in block if len(t) - len(t.lstrip(" ")) == indent):
        return 0
    return indent


# ------------------------------------------------------------------------------------------------
# learned prefixes

# A token of a line's head: a bracketed or parenthesised group, or a run without blanks or brackets.
_TOKEN = lazy_re(r"\[[^\[\]\n]{1,120}\]:?|\([^()\n]{1,120}\):?|[^\s\[(]+")
_LEVELS = LEVEL_WORDS
_EXC_WORD = lazy_re(r"(?:\w+\.)*\w*(?:Error|Exception|Warning|Interrupt|Exit|Failure)\b")
_PROTECTED_BRACKET = ("[Rank", "[PG", "[rank", "[c10d", "[Gloo", "[gloo", "[enforce")
_SIMILAR = lazy_re(r"\[\d+ similar log lines\][ \t]*")   # Ray's log deduplication note
_PROCESS_HEADER = lazy_re(r"[^\s:\[\]]*:\d+:\d+ \[-?\d+\]")  # NCCL's host:pid:tid, also before NCCL printed "NCCL"


def _shape(tok: str) -> str:
    """A token's class: brackets keep only whether they hold digits; words keep their punctuation."""
    c = tok[0]
    if c in "[(":
        close = "]" if c == "[" else ")"
        return c + ("9" if any(ch.isdigit() for ch in tok) else "a") + close + (":" if tok.endswith(":") else "")
    if tok in _LEVELS:
        return "L"
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", tok))


# A source location not in brackets (`transport/nvls.cc:251`, `src/core.cu:225`): part of a message
# (NCCL's, glog's), never a prefix; a logger's `x.py:56]` ends with its bracket.
_SOURCE_LOCATION = SOURCE_LOCATION


def _header_like(tok: str) -> bool:
    c = tok[0]
    if c in "[(":
        return len(tok) >= 3 and not tok.startswith(_PROTECTED_BRACKET)
    if tok in _LEVELS:
        return True
    if len(tok) > 64 or not any(ch.isdigit() for ch in tok) or _SOURCE_LOCATION.fullmatch(tok):
        return False
    return _EXC_WORD.match(tok) is None and not tok.startswith(("0x", "#"))


def _known_at(msg: str, pos: int) -> bool:
    """Whether a format that something else reads starts at ``pos``: an NCCL header or an envelope."""
    if _NCCL_HEADER.match(msg, pos) is not None:
        return True
    env, _rest = unwrap(msg[pos:])
    return bool(env.layers) and env.layers != ("paste",)


def _head(line: str) -> tuple[int, str, Envelope] | None:
    """Where the message starts after the envelopes unwrap() knows, the message and the envelope;
    None when a logger header was peeled (what follows is a message, not a prefix)."""
    if not line or line[0] in " \t" or len(line) > LONG:
        return None
    env, msg = unwrap(line)
    if env.level is not None or env.source is not None:
        return None
    if not msg or msg[0] in " \t" or not line.endswith(msg):
        return None
    return len(line) - len(msg), msg, env


def _tokens(msg: str) -> list[tuple[str, int, int]]:
    """The header-like tokens that start ``msg``: (token, start, end), stopping before anything
    that is not header-like or that another reader knows."""
    out: list[tuple[str, int, int]] = []
    pos = 0
    for m in _TOKEN.finditer(msg):
        if m.start() != pos and msg[pos:m.start()].strip():
            break
        if len(out) >= MAX_PREFIX_TOKENS or m.end() > MAX_PREFIX_CHARS:
            break
        tok = m.group(0)
        if not _header_like(tok):
            break
        if tok in _LEVELS and _SOURCE_LOCATION.match(msg, m.end() + 1):
            break  # `WARN src/core.cu:225 ...`: NCCL's own header
        if out and _known_at(msg, m.start()):
            break
        if _NCCL_HEADER.match(msg, m.start()) is not None or _PROCESS_HEADER.match(msg, m.start()) is not None:
            break
        out.append((tok, m.start(), m.end()))
        pos = m.end()
    # the prefix ends at a blank, a colon or a bracket: never inside a word
    while out:
        tok, _s, e = out[-1]
        nxt = msg[e:e + 1]
        if nxt in (" ", "\t") or (nxt and tok[-1] in ":])|") or (nxt and nxt in "[("):
            break
        out.pop()
    return out


_PROTECT_RX = "(?!" + "|".join(re.escape(b[1:]) for b in _PROTECTED_BRACKET) + ")"


def _shape_rx(shape: str) -> str:
    """A regular expression for the tokens of one class (:func:`_shape`)."""
    if shape == "L":
        return "(?:" + "|".join(sorted(_LEVELS, key=len, reverse=True)) + r")(?![^\s\[(])"
    if shape[0] in "[(":
        o, c = ("\\[", "\\]") if shape[0] == "[" else ("\\(", "\\)")
        inner = "[^\\[\\]\\n]" if shape[0] == "[" else "[^()\\n]"
        body = (f"{inner}{{0,119}}?\\d{inner}{{0,119}}?" if shape[1] == "9"
                else f"(?:(?!\\d){inner}){{1,120}}")
        return o + (_PROTECT_RX if shape[0] == "[" else "") + body + c + (":" if shape.endswith(":") else "")
    out = []
    for part in re.findall(r"a|9|[^a9]", shape):
        out.append("[A-Za-z]+" if part == "a" else r"\d+" if part == "9" else re.escape(part))
    return "".join(out) + r"(?![^\s\[(])"


@dataclass
class _Prefix:
    shapes: tuple[str, ...]
    rx: re.Pattern = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rx = re.compile(r"[ \t]*".join(_shape_rx(sh) for sh in self.shapes) + r"(?:[ \t]|(?=[\[(]))?")

    def match(self, msg: str, pos: int = 0) -> int:
        """The end of this prefix (and one blank after it) at ``pos`` of ``msg``, or 0 (nothing
        may be left: a prefix alone on its line is no prefix)."""
        m = self.rx.match(msg, pos)
        if m is None or m.end() >= len(msg):
            return 0
        return m.end()


_NAME = lazy_re(r"[ \t]*[\w.-]{1,253}[ \t]*$")


def _a_name(rest: str) -> bool:
    """What follows the tokens is one name and no message (``127.0.1.1   node1`` of /etc/hosts or
    ``getent hosts``, a table's two columns): the tokens before it are data, not a prefix."""
    return _NAME.match(rest) is not None


def _learn_prefix(lines: list[str]) -> _Prefix | None:
    """The run of token classes that starts the largest share of the lines (at least
    :data:`PREFIX_SHARE` of the lines that could carry a prefix), as long as it can be."""
    seqs: list[tuple[str, ...]] = []
    eligible = 0
    for t in lines:
        if eligible >= LEARN_LINES:
            break
        h = _head(t)
        if h is None:
            if t.strip():
                eligible += 1
            continue
        eligible += 1
        toks = _tokens(h[1])
        if toks and toks[-1][2] < len(h[1]) and not _a_name(h[1][toks[-1][2]:]):
            seqs.append(tuple(_shape(tok) for tok, _, _ in toks))
    if not seqs:
        return None
    need = max(PREFIX_MIN, PREFIX_SHARE * eligible)
    best: tuple[str, ...] | None = None
    for k in range(1, MAX_PREFIX_TOKENS + 1):
        counts = Counter(s[:k] for s in seqs if len(s) >= k)
        if not counts:
            break
        seq, n = counts.most_common(1)[0]
        if n < need:
            break
        best = seq
    return _Prefix(best) if best else None


_identity = prefix_identity  # what a peeled prefix says about its line (logdoc/envelope.py)


def _rests_only(lines: list[str], prefix: _Prefix) -> bool:
    """Whether every line that starts with what was learned as a prefix comes right after a line of the
    source's greatest width (at least :data:`WRAP_MIN_WIDTH`): the rests of lines a hard wrap cut, not a
    prefix (every rank's ``... for HCA `` / ``0 'mlx5_0'``: the number that starts each rest)."""
    width = max((len(t) for t in lines), default=0)
    if width < WRAP_MIN_WIDTH:
        return False
    starts = [i for i, t in enumerate(lines) if t and t[0] not in " \t" and prefix.match(t)]
    return bool(starts) and all(i > 0 and len(lines[i - 1]) == width for i in starts)


# ------------------------------------------------------------------------------------------------
# residue before a known start, learned from the source

# What certainly starts a line of a record (a traceback's first line, its frames and chain
# separators, a C++ backtrace's frames, a C++ exception's first line). Text before it that
# unwrap() does not know and that reads as a prefix (envelope.prefix_like) is a prefix of the
# source's own: where it stands before at least two such starts (by its shape: digits, blanks and
# level words may change from line to line), it is peeled from every line it starts, so the lines
# between (a traceback's source lines) lose it too.
_ANCHOR = lazy_re(
    r"Traceback \(most recent call last\):[ \t]*$|  File \"[^\"\n]*\", line \d+|frame #\d+: "
    r"|During handling of the above exception|The above exception was the direct cause"
    r"|terminate called after throwing an instance of|Exception raised from ")
_ANCHOR_WORDS = ("Traceback (most", "  File \"", "frame #", "During handling", "The above exception",
                 "terminate called", "Exception raised from")
MAX_RESIDUE_SHAPES = 16
_RESIDUE_PART = lazy_re(r"(\d+)|([ \t]+)|([A-Za-z]+)|(.)", re.S)
_LEVEL_RX = "(?:" + "|".join(sorted(LEVEL_WORDS, key=len, reverse=True)) + ")"


def _anchor_residue(t: str) -> tuple[int, int] | None:
    """(start, end) of the unknown prefix before a known start on line ``t``; None when there is none."""
    if not t or len(t) > LONG or not any(w in t for w in _ANCHOR_WORDS):
        return None
    m = _ANCHOR.search(t)
    if m is None or m.start() == 0:
        return None
    k = leading_end(t)
    if m.start() <= k or not prefix_like(t[k:m.start()]):
        return None
    return k, m.start()


def _residue_shape(res: str) -> str:
    """A regular expression for prefixes of the shape of ``res``: its digits, inner blanks and
    level words may vary; the blanks that end it may not (they are not the message's indentation)."""
    out = []
    parts = list(_RESIDUE_PART.finditer(res))
    for j, p in enumerate(parts):
        if p.group(1):
            out.append(r"\d+")
        elif p.group(2):
            out.append(r"[ \t]+" if j < len(parts) - 1 else re.escape(p.group(2)))
        elif p.group(3):
            out.append(_LEVEL_RX if p.group(3) in LEVEL_WORDS else re.escape(p.group(3)))
        else:
            out.append(re.escape(p.group(4)))
    return "".join(out)


def _learn_residue(lines: list[str], skip: dict) -> list[re.Pattern]:
    """The residue shapes that stand before a known start on at least two lines."""
    counts: Counter = Counter()
    for i, t in enumerate(lines[:LEARN_LINES]):
        if i in skip:
            continue
        got = _anchor_residue(t)
        if got is not None and len(counts) < MAX_RESIDUE_SHAPES:
            counts[_residue_shape(t[got[0]:got[1]])] += 1
    return [re.compile(k) for k, n in sorted(counts.items(), key=lambda kv: -len(kv[0])) if n >= 2]


# ------------------------------------------------------------------------------------------------
# log lines inside JSON records

# A log shipper's or a collector's file, or a structured logger's: one JSON object per line that holds
# the line (docker's json-file driver `{"log": "...\\n", "stream": "stderr", "time": "..."}`, journald's
# `journalctl -o json` `{"MESSAGE": ..., "_HOSTNAME": ..., "_PID": ...}`, a JSON logger's `message` /
# `msg` with its traceback under `exc_info`, torchrun's error file `{"message": {"message": ...,
# "extraInfo": {"py_callstack": ...}}}`). The line is read from the object; a docker record without
# its newline is a part of a line longer than the driver's buffer, joined to the parts that follow it.
# A text of several lines (a traceback) is read as that many lines, each with the record's number
# (Paste.pieces).
_JSON_KEYS = ("log", "MESSAGE", "message", "msg", "error", "exception", "textPayload")
_JSON_TRACE_KEYS = ("exc_info", "exception", "traceback", "stack_trace", "stack")
# where a structured logger (structlog, zap, logrus, bunyan, a service's own JSON) keeps the failure apart from
# its one-line message: `{"msg": "worker failed", "error": "Traceback ...\nRuntimeError: ..."}`
_JSON_FAILURE_KEYS = ("error", "err", "exception", "exc_info", "traceback", "stack_trace", "stack", "error_message",
                      "reason", "stderr")


def _json_failure(d: dict, key: str, v: str) -> str | None:
    """The failure text that a record keeps under another key than its message ``v`` (a traceback, an
    exception line, a text of several lines), or None."""
    for tk in _JSON_FAILURE_KEYS:
        tv = d.get(tk)
        if tk == key or not isinstance(tv, str) or not tv.strip() or tv in v:
            continue
        if tv.startswith("Traceback") or "\n" in tv.strip() or _EXC_START.match(tv) is not None:
            return tv
    return None


def _json_text(d: dict) -> str | None:
    """The log text a JSON record holds (with its traceback or error when it keeps one apart), or None."""
    for key in _JSON_KEYS:
        v = d.get(key)
        if isinstance(v, dict) and isinstance(v.get("message"), str):
            extra = v.get("extraInfo")  # torchrun's error file: the traceback ends in the message
            stack = extra.get("py_callstack") if isinstance(extra, dict) else None
            return stack if isinstance(stack, str) and "Traceback" in stack else v["message"]
        if isinstance(v, str):
            failure = _json_failure(d, key, v)
            return v if failure is None else v.rstrip("\n") + "\n" + failure
    return None


def _json_record(t: str) -> dict | None:
    if len(t) > 4 * LONG or not t.startswith('{"') or not t.rstrip().endswith("}"):
        return None
    try:
        d = json.loads(t)
    except ValueError:
        return None
    if not isinstance(d, dict) or _json_text(d) is None:
        return None
    return d


def _set_text(out: list[str], paste: "Paste", i: int, text: str) -> None:
    """Line ``i`` holds ``text``; a text of several lines is read as its lines (Paste.pieces)."""
    parts = [p.rstrip("\r") for p in text.rstrip("\r\n").split("\n")][:MAX_PIECES]
    out[i] = " ".join(parts) if len(parts) > 1 else parts[0]
    if len(parts) > 1:
        paste.pieces[i + 1] = [p for p in parts if p.strip()] or [""]


MAX_PIECES = 256


def _decode_json_lines(out: list[str], paste: "Paste") -> bool:
    changed = False
    i = 0
    while i < len(out):
        d = _json_record(out[i])
        if d is None:
            i += 1
            continue
        text = _json_text(d) or ""
        j = i + 1
        while isinstance(d.get("log"), str) and not text.endswith("\n") and j < len(out) and j - i < MAX_WRAP_JOIN:
            nxt = _json_record(out[j])
            if nxt is None or not isinstance(nxt.get("log"), str):
                break
            text += nxt["log"]
            out[j] = ""
            paste.joined.add(j + 1)
            j += 1
        _set_text(out, paste, i, text)
        ident: dict = {}
        if isinstance(d.get("time"), str):
            ident["time"] = d["time"]
        if isinstance(d.get("_HOSTNAME"), str):
            ident["host"] = d["_HOSTNAME"]
        if isinstance(d.get("_PID"), str) and d["_PID"].isdigit():
            ident["pid"] = int(d["_PID"])
        if ident:
            paste.ids[i + 1] = ident
        changed = True
        i = j
    return changed


# ------------------------------------------------------------------------------------------------
# a message inside an escaped string

# A message quoted with its line ends escaped: an exception's repr (`RuntimeError('NCCL error in:
# ...\\nLast error:\\n...')`), a bytes repr of a child's output (`b'...\\n...'`, as a
# CalledProcessError's output is logged), a JSON string inside a line (`"error": "...\\n..."`). The
# string is decoded and read as the lines it holds, each with the line's number (Paste.pieces); what
# stands before it stays a line of its own, and an exception's repr reads `Type: message`.
_QUOTED = lazy_re(r"""(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt)\()?"""
                     r"""(?P<b>b?)(?P<q>['"])(?P<body>(?:[^\\'"\n]|\\.|(?!(?P=q))['"]){0,8192}?)(?P=q)""")


# the next of adjacent string literals (`"... NCCL " "built in"`), after the one `_QUOTED` read
_NEXT_LITERAL = lazy_re(r"""[ \t]*(?P<lit>(?P<q>['"])(?:[^\\'"\n]|\\.|(?!(?P=q))['"]){0,8192}?(?P=q))""")

# what a line holding a message in an escaped string shows (cheap, before the quoted strings are read)
_ESCAPED_GATE = lazy_re(r"""\\n|\(['"]|['"](?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit): """)


def _escaped_text(t: str) -> tuple[str, str, str] | None:
    """(what stands before, the decoded text, what follows) of the first quoted string in ``t`` that
    holds a line end, an exception line, or is an exception's repr; None when there is none or it
    does not decode."""
    if len(t) > 4 * LONG or _ESCAPED_GATE.search(t) is None:
        return None
    for m in _QUOTED.finditer(t):
        if m.start() > 0 and (m["type"] or "\\n" in m["body"] or _EXC_START.match(m["body"]) is not None):
            break  # (a line that is one quoted string is a value, not a message in one)
    else:
        return None
    lit = m["b"] + m["q"] + m["body"] + m["q"]
    try:
        if m["q"] == '"' and not m["b"]:
            text = json.loads(lit)
        else:
            import ast

            text = ast.literal_eval(lit)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or ("\n" not in text and not m["type"] and _EXC_START.match(text) is None):
        return None
    after = t[m.end():]
    if m["type"]:
        # a message that a raise line splits into adjacent literals (`RuntimeError("... NCCL " "built in")`):
        # Python joins them, so are they here
        while True:
            nxt = _NEXT_LITERAL.match(after)
            if nxt is None:
                break
            try:
                import ast

                more = json.loads(nxt["lit"]) if nxt["lit"][0] == '"' else ast.literal_eval(nxt["lit"])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                break
            if not isinstance(more, str):
                break
            text += more
            after = after[nxt.end():]
        text = m["type"][:-1] + ": " + text
        after = after[1:] if after.startswith(")") else after
    return t[:m.start()], text, after


def _decode_escaped(out: list[str], paste: "Paste") -> bool:
    changed = False
    for i, t in enumerate(out):
        if (i + 1) in paste.pieces or _ESCAPED_GATE.search(t) is None or not candidate(t):
            continue
        got = _escaped_text(t)
        if got is None:
            continue
        before, text, after = got
        lines = text.split("\n")
        if len(lines) == 1 and before.strip() and _EXC_START.match(unwrap(before)[1]) is not None:
            lines[0] = before + lines[0]  # the carrier is an exception: its message holds the quoted one
        elif before.strip():
            lines.insert(0, before.rstrip())
        if after.strip(" \t)\"',}"):
            lines.append(after.strip())
        _set_text(out, paste, i, "\n".join(lines))
        changed = True
    return changed


# ------------------------------------------------------------------------------------------------
# character interleaving

_DOUBLED = lazy_re(r"([A-Za-z])\1")


def is_interleaved(line: str) -> bool:
    """A line in which two copies of one text alternate character by character (``TTrraaccee``):
    most of its letters come in doubled pairs, far more than any language doubles them."""
    n = len(line)
    if n < 16 or n > MAX_INTERLEAVED:
        return False
    pairs = len(_DOUBLED.findall(line))
    if 2 * pairs < 0.3 * n:
        return False
    letters = sum(1 for c in line if c.isalpha())
    if letters < 8:
        return False
    if 2 * pairs < 0.6 * letters:
        return False
    # the text taken apart reads as text: varied letters, few doubled ones (not `xxxxxxxx`, `aabbcc`)
    lead, _lag = deinterleave(line)
    lead_letters = sum(1 for c in lead if c.isalpha())
    return (len({c.lower() for c in lead if c.isalpha()}) >= 6
            and 2 * len(_DOUBLED.findall(lead)) < 0.3 * max(lead_letters, 1))


def deinterleave(line: str) -> tuple[str, str]:
    """Split a line where two copies of one text alternate: each character goes to the copy that
    lags when it is the character that copy expects next (or, while the copies alternate one to
    one, a variant of it: a digit for a digit, a letter for a letter, where the two texts differ,
    as rank numbers and names do), else to the leading copy. Returns the leading copy and the lagging one."""
    lead: list[str] = []
    lag: list[str] = []
    for c in line:
        j = len(lag)
        if j < len(lead):
            x = lead[j]
            if x == c or (j == len(lead) - 1 and (x.isdigit() and c.isdigit() or x.isalpha() and c.isalpha())):
                lag.append(c)
                continue
        lead.append(c)
    return "".join(lead), "".join(lag)


# an exception raised without a message: its dotted name alone on its line (`...api.RendezvousTimeoutError`)
_EXC_NAME = lazy_re(r"(?:[A-Za-z_]\w*\.)+[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)")
_EXC_START = lazy_re(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure):")


def interleaved_writes(line: str) -> str | None:
    """One process's copy of a line in which two processes' writes of the same text alternate in
    chunks (not character by character): a line that is its own text twice (``f()f()``), or an
    exception line whose type two writes split (``torch.distributedtorch.distributed.DistBackendError.:
    DistBackendErrorNCCL error in: ...``, read apart by :func:`deinterleave` into an exception line
    and a copy of its start). None when the line is not one of these."""
    t = line.strip()
    n = len(t)
    if n < 16 or n > MAX_INTERLEAVED:
        return None
    half = t[: n // 2]
    if n % 2 == 0 and half == t[n // 2:]:
        # a text twice, not a text that repeats anyway (a line of ``^`` or ``=``, ``abab``): the half
        # has no shorter period, and words
        if (half + half).find(half, 1) == len(half) and sum(c.isalpha() for c in half) >= 4:
            return line[: len(line) - len(line.lstrip())] + half
        return None
    if _EXC_START.match(t) is not None or not t[:1].isalpha():
        return None
    k = t.find(t[:12], 8)  # where the second copy starts
    if k < 0:
        return None
    lead: list[str] = list(t[:k])
    lag: list[str] = []
    idle = 0
    for c in t[k:]:  # deinterleave() without its one-to-one variants: chunks are copied exactly
        if idle < 24 and len(lag) < len(lead) and lead[len(lag)] == c:
            lag.append(c)
            idle = 0
        else:
            lead.append(c)  # (a copy that took nothing for 24 characters has ended: the rest is the lead's)
            idle += 1
    lead_s, lag_s = "".join(lead), "".join(lag)
    if len(lag_s) >= 12 and lead_s.startswith(lag_s) and _EXC_START.match(lead_s) is not None:
        return line[: len(line) - len(line.lstrip())] + lead_s
    return None


# ------------------------------------------------------------------------------------------------
# the repair

@dataclass
class Paste:
    """What the repair learned for the lines of one source: line number -> envelope fields."""

    ids: dict[int, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # line number -> the records one line holds (several NCCL lines glued when the paste lost its
    # line ends): each is read as a line of its own, with that line's number
    pieces: dict[int, list[str]] = field(default_factory=dict)
    every_line: bool = False  # a short source: every line is read, not only the prefilter's candidates
    # line numbers whose text was joined to a line before them (a hard wrap, a cut word, a JSON
    # record's parts): not read again, so the empty line left in their place does not end a record
    joined: set[int] = field(default_factory=set)
    # the longest line of the source as it was read: a hard wrap (logdoc.blocks) cut no line that had room
    longest: int = 0
    # line number -> how many characters the repair took off the line's front or end (a quote mark, a code
    # block's indent, a learned prefix): part of the width a hard wrap measured (logdoc.blocks)
    peeled: dict[int, int] = field(default_factory=dict)
    at_width: int = 0  # how many lines are :attr:`longest` characters long

    def apply(self, n: int, env: Envelope) -> None:
        got = self.ids.get(n)
        if not got:
            return
        for attr in _IDENTITY_ATTRS:  # what the envelope left unknown, the learned prefix supplies
            if getattr(env, attr) is None and got.get(attr) is not None:
                setattr(env, attr, got[attr])
        if env.process is None and got.get("label"):
            env.process = got["label"]  # the words that name the process stay with the line
        env.layers = ("prefix",) + env.layers


_IDENTITY_ATTRS = ("pid", "rank", "local_rank", "node_rank", "host", "time", "level")
_CONTINUES_SENTENCE = lazy_re(r"[a-z0-9(]")
_ENDS_SENTENCE = lazy_re(r"[.!?:;]\s*$")


def _stream(text: str) -> tuple | None:
    """The process a line names by itself: the NCCL ``host:pid`` or its envelope's stream key."""
    if len(text) > LONG or has_huge_number(text):
        return None
    env, msg = unwrap(text)
    m = _NCCL_HEADER.match(msg)
    if m is not None:
        pid = m.group("pid")
        # a masked pid (a run of X letters, `<pid>`) names no process: the host alone does
        return ("nccl", m["host"] or env.host, int(pid) if pid and pid.isdigit() else None)
    key = env.stream_key()
    if any(v is not None for v in key):
        return ("env",) + key
    return None


def repair_lines(lines: list[str], name: str = "") -> tuple[list[str], Paste] | None:
    """The repaired lines (as many as given) and what was learned for them, or None when the
    lines show no paste damage."""
    out = list(lines)
    paste = Paste()
    changed = _strip_gutter(out)
    changed = _unescape_html(out) or changed
    changed = _strip_pytest(out) or changed
    changed = (_decode_json_lines(out, paste) if '{"' in "".join(t[:2] for t in out[:HEAD_LINES]) else False) or changed
    marked = [len(t) for t in out]  # (the widths with the quote marks and the indentation of a code block)
    out, md = _strip_markdown(out)
    changed = changed or md
    cut = out[:HEAD_LINES]  # (the lines as cut: a wrap's width is measured on them)
    changed = _join_cut_frames(out, paste.joined) or changed
    changed = _reindent_frames(out, paste.joined) or changed
    head = out[:HEAD_LINES]

    # Ray's deduplication note, wherever it stands in a line
    for i, t in enumerate(out):
        if "similar log lines]" in t:
            nt = _SIMILAR.sub("", t, count=1)
            if nt != t:
                out[i] = nt
                changed = True

    # as the terminal or the page cut them: before any prefix, quote mark or code block's indentation is
    # peeled, and a frame line before its join
    widths = marked

    # a repeated prefix that no envelope knows
    prefix = _learn_prefix(head)
    if prefix is not None and _rests_only(head, prefix):
        prefix = None
    labels: dict[int, dict] = {}
    if prefix is not None:
        idents: dict[str, dict] = {}
        for i, t in enumerate(out):
            start = 0
            end = prefix.match(t) if t and t[0] not in " \t" else 0
            if not end:
                h = _head(t)
                if h is None:
                    continue
                start = h[0]
                end = prefix.match(t, start)
                if not end:
                    continue
            pre = t[start:end]
            got = idents.get(pre)
            if got is None:
                if len(idents) > 4096:
                    idents.clear()
                got = idents[pre] = _identity(pre)
            labels[i] = got
            out[i] = t[:start] + t[end:]
            changed = True

    # residue that stands before the known starts of the source's lines
    shapes = _learn_residue(head, labels)
    if shapes:
        for i, t in enumerate(out):
            if i in labels or not t or len(t) > LONG:
                continue
            k = leading_end(t)
            for rx in shapes:
                m = rx.match(t, k)
                if m is not None and k < m.end() < len(t):
                    labels[i] = _identity(m.group(0))
                    out[i] = t[:k] + t[m.end():]
                    changed = True
                    break

    if labels:
        distinct = {d.get("label") for d in labels.values()}
        for i, d in labels.items():
            ident = {k: d[k] for k in ("time", "level", "pid", "rank") if k in d}
            if len(distinct) > 1 and "pid" not in d and "rank" not in d and d.get("label"):
                ident["host"] = d["label"].strip("[]():")
            if ident:
                paste.ids.setdefault(i + 1, {}).update(ident)

    # hard wraps at a fixed width
    # (measured again with the lengths the lines had with their quote marks or a code block's indentation:
    # marks added before a mail or a page wrapped the lines, whose rests carry none)
    width = _wrap_width(cut) or (_wrap_width(cut, marked[:HEAD_LINES]) if md else 0)
    if width:
        readings = MIDWORD_TRIES
        i = 0
        while i < len(out):
            if len(out[i]) != width and marked[i] != width or _starts_record(out[i]):
                i += 1
                continue
            j = i + 1
            parts = [out[i]]
            while j < len(out) and len(parts) < MAX_WRAP_JOIN and _cut(parts[-1], out[j]):
                parts.append(out[j])
                if len(out[j]) != width and marked[j] != width:
                    j += 1
                    break
                j += 1
            if len(parts) > 1:
                out[i], readings = _joined(parts, readings)
                for k in range(i + 1, j):
                    out[k] = ""
                    paste.joined.add(k + 1)
                changed = True
            i = j

    # a line cut inside a word at the source's width, too few of them for a width of their own
    if _midword_joins(out, widths, paste.joined):
        changed = True

    # a line that lost the prefix between two prefixed lines and continues a sentence
    if labels:
        for i in sorted(labels):
            k = i + 1
            if k >= len(out) or k in labels or not out[k] or not out[i]:
                continue
            nxt = out[k]
            if len(lines[i]) < WRAP_MIN_WIDTH + 20 or not _CONTINUES_SENTENCE.match(nxt) \
                    or _ENDS_SENTENCE.search(out[i]) or _new_line(nxt):
                continue  # (a line is wrapped where it is long: at 80 columns and more)
            if k + 1 < len(out) and out[k + 1].strip() and (k + 1) not in labels:
                continue
            out[i] = out[i].rstrip() + " " + nxt.strip()
            out[k] = ""
            paste.joined.add(k + 1)
            changed = True

    # character interleaving
    spans: list[int] = []
    differ = 0
    for i, t in enumerate(out):
        if is_interleaved(t):
            a, b = deinterleave(t)
            spans.append(i + 1)
            differ += a != b
            out[i] = a  # one process's copy; where the two differ (rank numbers), the leading one's
        elif t and len(t) >= 16 and len(t) <= MAX_INTERLEAVED:
            one = interleaved_writes(t)
            if one is not None:
                spans.append(i + 1)
                out[i] = one
    if spans:
        _close_up(out, spans)
        where = f"line {spans[0]}" if len(spans) == 1 else f"{len(spans)} lines from {spans[0]} to {spans[-1]}"
        paste.notes.append(f"{name}: {where}: the output of two processes is interleaved character by character;"
                           + (" read de-interleaved" if not differ else
                              f" read de-interleaved as one process's copy ({differ} of them differ between the two)"))
        changed = True

    # unprefixed lines between lines of one process
    if _assign_between(out, paste):
        changed = True

    # messages inside escaped strings (an exception's repr, a bytes repr, a JSON string)
    if _decode_escaped(out, paste):
        changed = True

    # several NCCL records glued on one line
    for i, t in enumerate(out):
        if t.count("NCCL ") > 1 and len(t) <= LONG and (i + 1) not in paste.pieces:
            parts = split_glued(t)
            if parts is not None:
                paste.pieces[i + 1] = parts
                changed = True

    return (out, paste) if changed else None


# NCCL's line header, at the start of a record glued after another one: ``host:pid:tid [dev]``
# (pid and tid may be masked), or ``[dev]`` alone when the paste or a logger dropped the host part,
# then an optional source location (``file.cc:NN`` of a WARN) and ``NCCL <level>``.
_GLUED_HEADER = lazy_re(
    r"(?:(?<=\s)|^)(?:[^\s:\[\]]*:(?:\d+|[Xx*#?]+|<[\w-]+>):(?:\d+|[Xx*#?]+|<[\w-]+>) )?"
    r"\[-?\d+\] (?:[\w./+-]+:\d+ )?NCCL (?:INFO|WARN|TRACE|CALL)\b")


def split_glued(line: str) -> list[str] | None:
    """The NCCL records of a line that holds several of them one after another (a paste that lost
    its line ends: ``[0] NCCL INFO a. [0] NCCL INFO b``), each with its header; None when the line
    holds at most one. What stands before the first header stays with it."""
    starts = [m.start() for m in _GLUED_HEADER.finditer(line)]
    if len(starts) < 2:
        return None
    cuts = [0] + starts[1:] + [len(line)]
    return [line[a:b].rstrip() for a, b in zip(cuts, cuts[1:]) if line[a:b].strip()]


def _close_up(out: list[str], spans: list[int]) -> None:
    """Where the line ends of the two processes alternate too, each de-interleaved line is followed
    by an empty one (the other copy's line end): the lines of such a run are moved together and the
    empty lines after them, so a record is not cut by blank lines (line numbers inside the run
    become approximate)."""
    marked = set(spans)
    i = 0
    n = len(out)
    while i < n:
        if i + 1 not in marked:
            i += 1
            continue
        j = i
        texts: list[str] = []
        blanks = 0
        while j < n and (j + 1 in marked or (out[j] == "" and j > i and (j in marked))):
            if out[j]:
                texts.append(out[j])
            else:
                blanks += 1
            j += 1
        if blanks:
            out[i:j] = texts + [""] * blanks
        i = j


# the rest of a line cut inside a word or a sentence: lower case or a mark first, and no label of its own (`host: `)
_RESTLIKE = lazy_re(r"(?![\w.-]+: )[a-z.,;:)\]>-]")


def _restlike(text: str) -> bool:
    """A line that reads as the rest of a line cut inside a word or a sentence (:data:`_RESTLIKE`), after
    the one blank a cut beside it leaves first."""
    return _RESTLIKE.match(text, 1 if text[:1] == " " else 0) is not None


def _wrap_width(lines: list[str], lengths: list[int] | None = None) -> int:
    """A width at which the lines were cut: no line is longer, and at least :data:`WRAP_MIN_LINES`
    lines of exactly that length are cut (:func:`_cut`), most of the lines of that length; from
    :data:`WRAP_WIDE` columns on, two lines are enough when both are cut and each rest reads as one
    (:data:`_RESTLIKE`: a paste of a few lines wrapped by a terminal, ``... in /dev/sh`` / ``m. The ...``).
    ``lengths``: the lines' lengths as cut, where they differ from the lines' own."""
    at = lengths if lengths is not None else [len(t) for t in lines]
    lens = Counter(n for n in at if n >= WRAP_MIN_WIDTH)
    if not lens:
        return 0
    w = max(lens)
    # (two lines cut at one wide width and nothing longer, each before a rest of its own, say it as well)
    least = WRAP_MIN_LINES if w < WRAP_WIDE or lens[w] > 2 else 2
    if lens[w] < least:
        return 0
    pairs = [(t, lines[i + 1]) for i, t in enumerate(lines[:-1])
             if at[i] == w and _cut(t, lines[i + 1]) and (least > 2 or _restlike(lines[i + 1]))]
    rests = Counter(rest for _, rest in pairs)
    # a line printed again after each is a line of its own, unless the cut fell beside a blank that one
    # of the pieces kept (``... for HCA `` / ``0 'mlx5_0'``, ``... 'unknown result`` / `` code'``: every
    # rank's copy of one message cut at the same column)
    cuts = sum(1 for t, rest in pairs if rests[rest] == 1 or t[-1:] == " " or rest[:1] == " ")
    return w if cuts >= least and (2 * cuts > lens[w] if least > 2 else cuts == lens[w]) else 0


def _joined(parts: list[str], readings: int) -> tuple[str, int]:
    """The pieces of a line cut at a fixed width, joined; and how many catalog readings are left of the
    source's ``readings``. A cut between two letters is inside a word, unless the piece after it lost the
    blank it began with (a page that drops every line's leading blanks): there the catalog decides, and the
    blank goes back in when the text then reads more of a known message (``... mismatch between
    collectives`` / ``on ranks. Rank 2 is running ...``)."""
    text = parts[0]
    for p in parts[1:]:
        if readings > 0 and text[-1:].isalnum() and p[:1].isalpha():
            readings -= 2
            if _reading(text + " " + p)[1] > _reading(text + p)[1]:
                text += " "
        text += p
    return text, readings


def _cut(line: str, nxt: str) -> bool:
    """Whether ``nxt`` can be the rest of ``line`` cut at a fixed width: it is not empty, not
    indented (a wrap adds no indentation; a table row or a traceback frame has it) unless the cut fell
    inside a run of blanks (``line`` ends with one: a progress bar's padding), does not start the way
    ``line`` starts (the same message printed again) and starts nothing of its own."""
    if len(nxt) > LONG or _rule(line) or _rule(nxt):
        return False  # a separator line (==== or ----, as torchrun's summary draws) is whole
    if nxt[:1] == " " and (nxt[1:2] not in ("", " ", "\t") or line[-1:] == " "):
        nxt = nxt.lstrip(" ")
        if nxt.startswith(("File ", "frame #", "at ")):
            return False
    if not nxt or nxt[0] == "\t" or nxt[:2] == "  " or not nxt.strip() or line[:8] == nxt[:8]:
        return False  # (one blank first: the cut fell on a word boundary)
    return not _new_line(nxt)


# ------------------------------------------------------------------------------------------------
# a message cut inside a word

MIDWORD_TRIES = 64   # pairs of lines read, per source
MAX_PENDING = 4      # readings of a join kept while its pieces do not read whole (a blank at each cut or none)
_WORD_END = lazy_re(r"[A-Za-z0-9_]$")
_WORD_START = lazy_re(r"[A-Za-z0-9_/]|[.:,;)\]>'\"-]")  # (a path cut before its next part: `.../tcp` / `/device.cc:276]`; a number, an address or a name cut before a mark: `10.0` / `.0.2<443>`, `...NCCL.cpp` / `:1269, `)


def _reading(text: str) -> tuple[str | None, int]:
    """(the catalog template a line reads as whole, how many literal characters of its format it
    matched); (None, 0) when it reads as none, or only as an exception of no known message or an NCCL
    format made of ``%s`` alone."""
    from . import nccl
    from .classify.bare import classify_bare
    from .classify.torch import classify as classify_torch

    env, msg = unwrap(text)
    p = nccl.classify(msg, env)
    if p is None:
        p = classify_torch(msg, env)
    if p is None:
        p = classify_bare(msg)  # an NCCL message pasted without its header
    if p is None or not p.template or p.kind == "torch.exception" and not (p.fields or {}).get("cause"):
        return None, 0
    fields = p.fields or {}
    if fields.get("cut") or fields.get("abridged"):
        return None, 0
    fmt = fields.get("format")
    if isinstance(fmt, str):
        literal = len(re.sub(r"%[-+ #0-9.]*[a-zA-Z]+", "", fmt).replace(" ", "").replace(":", ""))
        if literal < 4:
            return None, 0
        return p.template, literal
    return p.template, (1 << 20) + sum(v not in (None, "") for v in fields.values())  # (the fields it names)


def _midword_joins(out: list[str], widths: list[int], gone: set[int]) -> bool:
    """A message that a terminal, a pager or a page cut at its width inside a word (``... clients joi`` /
    ``ned.``; an NCCL WARN ``... with status=12 opc`` / ``ode=0 len=0 vendor err 129 ...``), where the
    source has too few cut lines for :func:`_wrap_width`: a line of the source's greatest width (at least
    :data:`WRAP_MIN_WIDTH`) that ends with a word, followed by a line that starts with one, is joined with
    it when the joined text reads as a catalog message whole and more of its format than the first line
    alone reads, and the second line alone is not that message: with a blank (the cut fell on one, which
    the paste dropped with the line's end) when that reads so, else without (the cut fell inside a word).
    A middle piece that reads nothing yet (a message cut more than once) waits for the next one. Two real
    lines are never joined: the first must end at the width, and only the join reads the message (more of
    its format, or more of its fields), or a text of a closed list (a ``strerror`` text, a CUDA error
    string: :func:`logdoc.cuttail.across`) runs over the cut, for the releases older than the catalog
    (NCCL 2.2's ``include/socket.h:311 WARN Socket creation failed : Ad`` / ``dress family not supported
    by protocol``). A piece that starts with a mark (``.0.2<443>``, ``:1269, ...``) is tried without a
    blank first. The numbers of the lines joined away are added to ``gone``."""
    width = max(widths, default=0)
    if width < WRAP_MIN_WIDTH:
        return False
    tries = 0
    changed = False
    i = 0
    while i < len(out) - 1 and tries < MIDWORD_TRIES:
        t = out[i]
        if (widths[i] < width - 1 or not t.strip() or not candidate(t) or len(t) > LONG
                or _starts_record(t)):
            i += 1  # (a ProcessGroupNCCL record's wrap the block assembler reassembles itself)
            continue
        j = i + 1
        last = i  # the last line joined into line i
        first = first_literal = None  # line i's own reading, read once a next line may continue it
        texts = [t]  # the join so far, read with a blank or without at each cut not yet read whole
        while j < len(out) and j - i < MAX_WRAP_JOIN and tries < MIDWORD_TRIES:
            nxt = out[j]
            if (not nxt or len(nxt) > LONG or _rule(nxt) or nxt[:8] == t[:8]
                    or _WORD_START.match(nxt, 1 if nxt[0] == " " else 0) is None
                    or _new_line(nxt) and not one_word(texts[-1], nxt)):
                break  # (what reads as a line of its own may be the rest of a word: ``... ncc`` / ``lSystemError: ...``)
            if first_literal is None:
                first, first_literal = _reading(t)
            tries += 1
            # the cut fell on a blank that the paste dropped (the line's end is stripped), or inside a
            # word (a blank the cut left first on the line stays)
            seps = (("",) if nxt[0] == " " or texts[0][-1:] == " "
                    else ("", " ") if nxt[0] in ".:,;)]>" or one_word(texts[0], nxt)
                    else (" ", ""))  # (no blank before a mark, or inside a word of the catalogs: first)
            texts = [x + sep + nxt for x in texts for sep in seps][:MAX_PENDING]
            whole, literal, text = None, first_literal, ""
            for cand in texts:  # the reading that reads most of its format (the first on a tie)
                got, n = _reading(cand)
                if got is not None and n > literal and (got != first or n > first_literal):
                    whole, literal, text = got, n, cand
            if whole is None:
                # no catalog format reads more of it (a release older than the catalog; a format ending in
                # %s), but a closed list's text (a strerror, a CUDA error string) runs over the cut
                text = next((c for c in texts if across(c, len(c) - len(nxt))), "")
                if text:
                    whole, literal = _reading(text)
                    whole = whole or ""
            if whole is None or _reading(nxt)[0] == whole:
                if widths[j] < width - 1:
                    break  # a line that ends before the width ends the message: no join reads it
                j += 1
                continue  # a middle piece of a message cut more than once: read with the next one
            for k in range(last + 1, j + 1):
                out[k] = ""
                gone.add(k + 1)
            out[i] = text
            changed = True
            last = j
            first, first_literal, texts = whole, literal, [text]
            j += 1
            if widths[j - 1] < width - 1 or _WORD_END.search(nxt) is None:
                break  # the rest ended before the width: the message is whole
        i = last + 1
    return changed


def _rule(text: str) -> bool:
    """A line drawn with one repeated character (``=====``, ``-----``, ``*****``)."""
    t = text.strip()
    return len(t) >= 8 and t.count(t[0]) == len(t) and not t[0].isalnum()


def _new_line(text: str) -> bool:
    """A line that starts something of its own (an envelope, an NCCL header, a traceback ...)."""
    if not text or text[0] in " \t":
        return text[:1] in (" ", "\t") and text.lstrip().startswith(("File ", "frame #"))
    if len(text) > LONG or text.startswith(("Exception raised from ", "frame #")):
        return True  # (c10's backtrace starts on a line of its own after an exception's text)
    env, msg = unwrap(text)
    if any(layer != "paste" and not layer.startswith("ray-repeat-") for layer in env.layers):
        return True  # (a note at the line's end, Ray's ``[repeated 15x across cluster]``, starts nothing)
    return (_NCCL_HEADER.match(msg) is not None or msg.startswith(("Traceback", "During handling", "The above"))
            or _EXC_WORD.match(msg) is not None and (":" in msg[:80] or _EXC_NAME.fullmatch(msg.rstrip()) is not None))


def _starts_record(text: str) -> bool:
    """A line whose wrap the block assembler reassembles itself (a ProcessGroupNCCL record)."""
    from .blocks import BlockAssembler

    if len(text) > LONG:
        return True
    _env, msg = unwrap(text)
    return BlockAssembler._wrapped(msg)


def _assign_between(out: list[str], paste: Paste) -> bool:
    """A line without a process of its own that holds a keyword, between NCCL lines of one process
    (within 3 lines either side), takes that process (a bare ``NCCL version`` banner)."""
    cache: dict[int, tuple | None] = {}

    def stream(k: int) -> tuple | None:
        if k not in cache:
            t = out[k]
            cache[k] = _stream(t) if t.strip() else None
        return cache[k]

    changed = False
    for i, t in enumerate(out):
        if not t or t[0] in " \t" or len(t) > LONG or not candidate(t) or ":" in t[:40] and _PROCESS_HEADER.search(t[:120]):
            continue
        if stream(i) is not None:
            continue
        before = next((s for s in (stream(k) for k in range(i - 1, max(-1, i - 4), -1)) if s is not None), None)
        if before is None or before[0] != "nccl":
            continue  # (lines of other envelopes join their records in the block assembler)
        after = next((s for s in (stream(k) for k in range(i + 1, min(len(out), i + 4))) if s is not None), None)
        if after != before:
            continue
        if before[1] is None and before[2] is None:
            continue
        d = paste.ids.setdefault(i + 1, {})
        for k, v in (("host", before[1]), ("pid", before[2])):
            if v is not None:
                d.setdefault(k, v)
        changed = True
    return changed


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
    if "similar log lines]" in text or _MARKDOWN_START.search(nl) is not None \
            or len(_BULLETS.findall(nl)) >= 2 or _BOLD_END.search(text) is not None \
            or _ITALIC_WORD.search(text) is not None:
        return False
    if text.strip() and _FLUSH.search(nl) is None or ("  " in text and _block_indent(lines)):
        return False  # every line indented (maybe a code block), or every one but the rests of wrapped ones
    if 'File "' in text and any(_OPEN_FRAME.match(t) is not None for t in lines if 'File "' in t):
        return False  # a frame line cut inside its file name
    if '\n{"' in nl and any(t.startswith('{"') and _json_record(t) is not None for t in lines):
        return False  # log lines inside JSON records
    if _ESCAPED_GATE.search(text) is not None and any(
            _ESCAPED_GATE.search(t) is not None and candidate(t) and _escaped_text(t) is not None for t in lines):
        return False  # a message inside an escaped string
    if any(w in text for w in _ANCHOR_WORDS):
        residue = 0  # a prefix of the source's own before the known starts of two lines
        for t in lines:
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
        t = lines[i]
        if _CANDIDATE.search(t) is None:
            continue
        if t[:1] in " \t" or len(t) > LONG or ":" in t[:40] and _PROCESS_HEADER.search(t[:120]):
            continue
        return not _assign_between(lines, Paste())
    return True


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
        return again, (Paste(every_line=True, longest=longest, at_width=at_width) if short else None)
    fixed, paste = got
    paste.every_line = short
    paste.longest = longest
    paste.at_width = at_width
    paste.peeled = {i: len(a) - len(b) for i, (a, b) in enumerate(zip(lines, fixed), 1) if b and len(a) > len(b)}
    return Source(source.name, text="\n".join(fixed) + "\n"), paste
