"""A repeated prefix that no envelope knows, learned from the source (the run of header-like tokens
that starts a large share of its lines; where it names a process that becomes the line's stream), and
residue before a known start (text before a traceback's lines that reads as a prefix of the source's
own).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..envelope import leading_end, unwrap
from ..events import Envelope
from ..lazyre import lazy_re
from ..nccl import HEADER as _NCCL_HEADER
from ..residue import LEVEL_WORDS, prefix_identity, prefix_like, SOURCE_LOCATION
from .common import _EXC_WORD, _PROCESS_HEADER, LEARN_LINES, LONG, MAX_PREFIX_CHARS, MAX_PREFIX_TOKENS, PREFIX_MIN, PREFIX_SHARE, WRAP_MIN_WIDTH

# ------------------------------------------------------------------------------------------------
# learned prefixes

# A token of a line's head: a bracketed or parenthesised group, or a run without blanks or brackets.
_TOKEN = lazy_re(r"\[[^\[\]\n]{1,120}\]:?|\([^()\n]{1,120}\):?|[^\s\[(]+")
_LEVELS = LEVEL_WORDS
_PROTECTED_BRACKET = ("[Rank", "[PG", "[rank", "[c10d", "[Gloo", "[gloo", "[enforce")
_SIMILAR = lazy_re(r"\[\d+ similar log lines\][ \t]*")   # Ray's log deduplication note


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
    if shape[0] == "=":
        return re.escape(shape[1:]) + r"(?![^\s\[(])"  # a word the prefix holds as it is (_constant_word)
    if shape == "L":
        # (never `WARN src/core.cu:225 ...`: NCCL 1.x's own header, as in _tokens)
        return ("(?:" + "|".join(sorted(_LEVELS, key=len, reverse=True)) + r")(?![^\s\[(])"
                + r"(?![ \t]" + _SOURCE_LOCATION.pattern + ")")
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


# A word after a learned prefix's tokens that is the same on nearly every line the prefix starts (stern's
# `<pod> <container> message`, a logger's constant name after its stamp): lower case, not followed by a colon
_CONSTANT_WORD = lazy_re(r"[ \t]+([a-z][a-z0-9_.-]{0,62})(?=[ \t]+\S)")
CONSTANT_SHARE = 0.9


def _constant_word(heads: list[tuple[str, int]]) -> str | None:
    """The word that follows the prefix on at least :data:`CONSTANT_SHARE` of ``heads`` (each a message and
    where its prefix's tokens end), when it starts nothing another reader knows; None otherwise."""
    words: Counter = Counter()
    for msg, end in heads:
        m = _CONSTANT_WORD.match(msg, end)
        if m is not None and not _known_at(msg, m.start(1)):
            words[m.group(1)] += 1
    if not words:
        return None
    word, n = words.most_common(1)[0]
    return word if n >= max(PREFIX_MIN, CONSTANT_SHARE * len(heads)) else None


def _learn_prefix(lines: list[str]) -> _Prefix | None:
    """The run of token classes that starts the largest share of the lines (at least
    :data:`PREFIX_SHARE` of the lines that could carry a prefix), as long as it can be, and the word
    that follows it on nearly every line it starts (:func:`_constant_word`)."""
    seqs: list[tuple[str, ...]] = []
    heads: list[tuple[str, tuple[str, ...], int]] = []
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
            heads.append((h[1], seqs[-1], toks[-1][2]))
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
    if not best:
        return None
    word = _constant_word([(msg, end) for msg, shapes, end in heads if shapes == best])
    return _Prefix(best + ("=" + word,) if word else best)


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
