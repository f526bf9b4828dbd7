"""What a prefix that no envelope knows says: whether a text reads as a prefix, and what it names.

:func:`logdoc.envelope.unwrap` peels unknown residue that stands before a known start of a line (a
logger header, a Python exception line), and :mod:`logdoc.paste` peels the prefixes it learns from a
source; both ask this module whether the text is a prefix at all (:func:`prefix_like`: not the
start of a sentence) and what it says about its line (:func:`prefix_identity`: time, level, pid,
rank, and the words that name the process).
"""
from __future__ import annotations

import re

from .lazyre import lazy_re

LEVEL_WORDS = {"INFO": "INFO", "ERROR": "ERROR", "WARNING": "WARN", "WARN": "WARN", "DEBUG": "DEBUG",
               "CRITICAL": "FATAL", "FATAL": "FATAL", "TRACE": "TRACE", "NOTICE": "INFO"}

MAX_RESIDUE = 160
_MONTHS = frozenset("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun".split())
_PROSE = lazy_re(r"[A-Za-z][a-z]+[,.;!?]?")
_MARKED = lazy_re(r"[\d|$>+#]")


def prefix_like(text: str) -> bool:
    """Whether ``text`` (what stands before a known start on a line) reads as a prefix, not as the
    start of a sentence: short, no word of prose in it (a word of letters other than a level, a
    month or a day) nor an exception's name, and something a prefix has (a digit, a level word, ``|``, ``$``, ``>``, ``+``,
    ``#``); never NCCL's own text (its lines quote nothing and are read where they stand)."""
    if not text.strip() or len(text) > MAX_RESIDUE or "NCCL" in text or text.lstrip().startswith(_PROTECTED):
        return False
    marked = _MARKED.search(text) is not None
    for tok in text.split():
        if tok in LEVEL_WORDS or tok.rstrip(":") in LEVEL_WORDS:
            marked = True
        elif _PROSE.fullmatch(tok) and tok not in _MONTHS or _EXC_NAME.search(tok):
            return False  # (a word of prose; an exception's name: a message, not a prefix)
    return marked


# A token of a line's head that a prefix may hold: a bracketed or parenthesised group, a level word, or
# a run without blanks that holds a digit (`opt-1_3b.0`, `12:01:02`, `node-3:`) and is no source
# location (`a.cpp:106`: part of a message).
_HEAD_TOKEN = lazy_re(r"(?:\[[^\[\]\n]{1,120}\]|\([^()\n]{1,120}\)|[^\s\[(]+)[ \t]+")
SOURCE_LOCATION = lazy_re(r"[\w./+-]+\.\w{1,4}:\d+:?")  # `a.cpp:106`: part of a message, never a prefix
MAX_HEAD_TOKENS = 6


def leading_prefix(text: str) -> int:
    """The end of a prefix that no envelope knows at the start of a one-line ``text`` (a job's label,
    a stream tag: ``opt-1_3b.0 [stderr] ``), or 0: up to :data:`MAX_HEAD_TOKENS` tokens that each read
    as a prefix's (bracketed, a level word, or holding a digit), the run as a whole :func:`prefix_like`,
    and a message after it."""
    cuts = leading_prefixes(text)
    return cuts[0] if cuts else 0


def leading_prefixes(text: str) -> list[int]:
    """Every place :func:`leading_prefix` could end, the longest first: a message may itself start
    with a token a prefix can hold (Gloo's ``[.../pair.cc:761] ``, a level word ``ERROR: ``), so a
    reader that finds no message after the longest run tries the shorter ones."""
    pos = 0
    ends: list[int] = []
    word_end = 0
    for _ in range(MAX_HEAD_TOKENS):
        m = _HEAD_TOKEN.match(text, pos)
        if m is None:
            break
        tok = m.group(0).rstrip()
        word = tok.rstrip(":")
        if not (tok[0] in "[(" and not tok.startswith(_PROTECTED) or word in LEVEL_WORDS
                or (any(ch.isdigit() for ch in tok) and SOURCE_LOCATION.fullmatch(tok) is None
                    and _EXC_NAME.search(tok) is None and not tok.startswith(("0x", "#")))):
            if ends and _PLAIN_WORD.fullmatch(tok) is not None:
                word_end = m.end()  # (a plain word after the prefix's tokens: stern's `<pod> <container> `)
            break
        pos = m.end()
        ends.append(pos)
    cuts = [end for end in reversed(ends) if end < len(text) and prefix_like(text[:end])]
    if word_end and cuts and cuts[0] == ends[-1] and word_end < len(text):
        cuts.insert(0, word_end)
    return cuts


# the word a prefix may end with though it reads as prose (a container's name after its pod's, as stern prints
# `<pod> <container> message`): lower case, no colon after it, tried only after the prefix's own tokens
_PLAIN_WORD = lazy_re(r"[a-z][a-z0-9_.-]{0,62}")


_EXC_NAME = lazy_re(r"[a-z](?:Error|Exception|Interrupt|Exit|Failure)\b|^(?:Error|Exception):")


_PROTECTED = ("[Rank", "[PG", "[c10d", "[Gloo", "[gloo", "[enforce")


# What a peeled prefix says about its line: time, level, and the words that name its process.
_TOKEN = lazy_re(r"\[[^\[\]\n]{1,120}\]:?|\([^()\n]{1,120}\):?|[^\s\[(]+")
_ISO = lazy_re(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)")
_MDHMS = lazy_re(r"(?<![\d/-])(\d\d)[-/](\d\d)[ T](\d\d:\d\d:\d\d)")
_PID = lazy_re(r"\bpid[=: ]\s*(\d{1,7})\b", re.I)
_RANK = lazy_re(r"\brank[_ =:]?\s?(\d{1,6})\b", re.I)
_TIME_TOKEN = lazy_re(r"[\[(]?[\d:.,TZ/+-]*\d[\d:.,TZ/+-]*[\])]?:?$")
_SEPARATOR = lazy_re(r"[^\w\[(]+")
_SYSLOG_PID = lazy_re(r"[A-Za-z]\[(\d{1,7})\]:[ \t]*$")
_LOCATION_TOKEN = lazy_re(r"[\w./+-]+\.\w{1,4}:\d+\]?:?|[\w.]+:[\w<>.]+:\d+")


def prefix_identity(prefix: str) -> dict:
    """What a peeled prefix says about its line: ``time``, ``level``, ``pid``, ``rank`` and ``label``
    (its words that name a process: not times, levels, streams, separators or source locations,
    which change from line to line of one process)."""
    out: dict = {}
    m = _ISO.search(prefix)
    if m is not None:
        out["time"] = f"{m.group(1)}T{m.group(2)}"
    else:
        m = _MDHMS.search(prefix)
        if m is not None and 1 <= int(m.group(1)) <= 12 and 1 <= int(m.group(2)) <= 31:
            out["time"] = f"--{m.group(1)}-{m.group(2)}T{m.group(3)}"
    label = []
    syslog = _SYSLOG_PID.search(prefix)
    for tok in _TOKEN.findall(prefix):
        word = tok.strip("[]():|")
        if tok in LEVEL_WORDS or word in LEVEL_WORDS:
            out.setdefault("level", LEVEL_WORDS[tok if tok in LEVEL_WORDS else word])
            continue
        if _TIME_TOKEN.fullmatch(tok) or _ISO.search(tok) or tok.lower() in ("[stderr]", "[stdout]", "(stderr)",
                                                                              "(stdout)", "stderr", "stdout"):
            continue
        if tok[0] == "[" and "." in tok and ":" in tok and tok.rstrip(":]").rsplit(":", 1)[-1].isdigit():
            continue  # a logger's [file.py:123] (or [LEVEL|file.py:123])
        if tok[0] in "[(" and all(_TIME_TOKEN.fullmatch(x) for x in tok.strip("[]():").split()):
            continue  # a bracketed date and time (`[12/02/26 09:00:00]`)
        if _LOCATION_TOKEN.fullmatch(tok) or _SEPARATOR.fullmatch(tok) or tok in _MONTHS:
            continue  # a source location (`x.py:12`, loguru's `module:function:12`), a separator, a month
        label.append(tok)
    text = " ".join(label)
    m = _PID.search(text)
    if m is not None:
        out["pid"] = int(m.group(1))
    elif syslog is not None:
        out["pid"] = int(syslog.group(1))  # syslog's `ident[pid]:`
    m = _RANK.search(text) or re.fullmatch(r"\[(\d{1,6})\]:?", text)
    if m is not None:
        out["rank"] = int(m.group(1))
    out["label"] = text
    return out
