"""Catalog messages a paste cut at their end: the prefix reading of a format.

Log viewers, CI pages and terminals without wrap cut long lines at a fixed width and drop the rest,
often with a mark of their own (``...``, ``…``, ``[truncated]``). What is left of a message is a
prefix of its format: ``The IPv6 network addresses of (node-1, 29500) cannot be retrieved (gai`` is
the head of c10d's ``The {family}network addresses of ({host}, {port}) cannot be retrieved (gai error:
{code} - {gai_strerror}).`` A text is read as a format's prefix when it holds the format's literal
text from the start up to the cut (the last word may be cut inside), with at least
:data:`CUT_MIN_LITERAL` literal characters, and no format of another kind reads it as well (a head
two messages share says neither).

Both catalog dialects: :class:`CutIndex` is built over a table's templates (``rows``: template and
its format's first line, in the dialect's regular expressions of :mod:`logdoc.classify.formats`),
filed by the format's first word; a text asks with its own first word. Each prefix pattern is
compiled on first use; matches are bounded like the catalog's own (:class:`BoundedPattern`).
"""
from __future__ import annotations

import os
import re
from typing import Callable, Generic, Iterable, Iterator, TypeVar, Union

from ..lazyre import lazy_re, regex_module
from .formats import PRINTF_CONV, BoundedPattern, _conv_regex, _literal, _placeholder

CUT_MIN_LITERAL = 24  # literal characters of the format a cut text must hold before the cut
CUT_MIN_WORDY = 8      # letters a cut text must hold
MAX_CUT_TEXT = 1024   # longer texts were not cut by a viewer's width

# the mark a viewer leaves where it cut a line: `...`, `…`, `[truncated]`, `(truncated)`, `<truncated>`,
# `[... 120 more characters]`, alone or together
CUT_MARK = lazy_re(r"(?:\s*(?:\.{3,}|\u2026))?(?:\s*[\[(<][^\[\]()<>]{0,40}?\b(?:truncated|trimmed|more (?:chars|characters|bytes))"
                   r"\b[^\[\]()<>]{0,20}[\])>])?\s*\Z", re.I)


_MARK_SPAN = 160  # past the longest mark's part that is neither blanks nor dots (about 80 characters)


def strip_mark(text: str) -> tuple[str, bool]:
    """``text`` without a viewer's cut mark at its end, and whether it had one."""
    # The mark is at the end: searched from where it can begin, not tried at every position of a long
    # text. A mark that began before that position would run through it with blanks or dots only.
    pos = len(text.rstrip()) - _MARK_SPAN
    if pos <= 0 or text[pos] in _RUN:
        pos = 0
    m = CUT_MARK.search(text, pos)
    if m is None or m.start() == m.end() or not text[m.start():].strip():
        return text, False
    return text[:m.start()].rstrip(), True


_RUN = frozenset(".\u2026 \t\r\n\x0b\x0c")
_MARK_ENDS = frozenset(".\u2026])>")  # the last character of every cut mark (:data:`CUT_MARK`)


def ends_with_mark(text: str) -> bool:
    """Whether a viewer's cut mark ends ``text`` (the last character looked at first: most lines end otherwise)."""
    return text.rstrip()[-1:] in _MARK_ENDS and strip_mark(text)[1]


def _wordy(text: str) -> bool:
    """At least :data:`CUT_MIN_WORDY` letters (counted up to there only)."""
    n = 0
    for c in text:
        if c.isalpha():
            n += 1
            if n >= CUT_MIN_WORDY:
                return True
    return False


def _word_prefixes(word: str) -> str | None:
    """The pattern of a proper, non-empty prefix of a literal word (None for one character)."""
    if len(word) < 2:
        return None
    return "(?:" + "|".join(re.escape(word[:k]) for k in range(len(word) - 1, 0, -1)) + ")"


Token = tuple  # (full pattern, None, the literal word or None): the pattern of a cut inside a word is made
# from the word when a prefix pattern is (:func:`_merged`), not for every format an index files


def _literal_tokens(chunk: str, escape: Callable[[str], str]) -> Iterator[Token]:
    for p in re.split(r"(\s+)", chunk):
        if not p:
            continue
        if p.isspace():
            yield (r"\s+", None, None)
        else:
            yield (escape(p), None, p)


def brace_tokens(fmt: str) -> list[Token]:
    """The tokens of a brace format's first line: literal words, blanks, placeholders."""
    return list(iter_brace_tokens(fmt))


def iter_brace_tokens(fmt: str) -> Iterator[Token]:
    """:func:`brace_tokens` one by one (an index asks only for the first)."""
    fmt = fmt.split("\n", 1)[0]
    i, n = 0, len(fmt)
    while i < n:
        if fmt[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            yield (_placeholder(fmt[i + 1:j - 1], set()), None, None)
            i = j
            continue
        j = fmt.find("{", i)
        j = n if j < 0 else j
        yield from _literal_tokens(fmt[i:j], re.escape)
        i = j


def printf_tokens(fmt: str) -> list[Token]:
    """The tokens of a printf format's first line: literal words, blanks, conversions."""
    return list(iter_printf_tokens(fmt))


def iter_printf_tokens(fmt: str) -> Iterator[Token]:
    """:func:`printf_tokens` one by one (an index asks only for the first)."""
    fmt = fmt.split("\\n", 1)[0]
    pos = 0
    for m in PRINTF_CONV.finditer(fmt):
        yield from _literal_tokens(fmt[pos:m.start()], _literal)
        yield (_conv_regex(m), None, None)
        pos = m.end()
    yield from _literal_tokens(fmt[pos:], _literal)


MAX_TOKENS = 24  # tokens of a format modelled one by one; after them, any text (a cut line is short)


def _merged(tokens: list[Token]) -> list[Token]:
    """The tokens with each blank joined to the token after it (half the nesting depth), each literal
    word with the pattern of a cut inside it."""
    out: list[Token] = []
    blank = False
    for full, part, word in tokens:
        if full == r"\s+" and word is None:
            blank = True
            continue
        if word is not None:
            part = _word_prefixes(word)
        if blank and out:
            full, part = r"\s+" + full, (r"\s+" + part if part else None)
        blank = False
        out.append((full, part, word))
    return out


def prefix_pattern(tokens: list[Token]) -> str:
    """A pattern that matches a text which is a proper prefix of the tokens' text (whole tokens, then
    possibly the start of a literal word), nested from the last token back; past :data:`MAX_TOKENS`
    tokens, any rest of the line."""
    tokens = _merged(tokens)
    nest = r"[^\n]*" if len(tokens) > MAX_TOKENS else ""
    for full, part, _ in reversed(tokens[:MAX_TOKENS]):
        body = f"{full}(?:{nest})?" if nest else full
        nest = f"(?:{body}|{part})" if part else f"(?:{body})"
    return r"\s*" + nest + r"\s*\Z"


T = TypeVar("T")


Tokens = Union[list, Callable[[], Iterable[Token]]]


class CutIndex(Generic[T]):
    """The templates of one table by their format's first word, with their prefix patterns.

    ``rows``: ``(template, tokens of its format's first line, kind)``; the kind decides ambiguity
    (two readings of one kind are one message). The tokens may be a function that gives them one by
    one (``functools.partial(iter_printf_tokens, fmt)``): the index takes the first token of each
    format and the others only for the formats a text's first word selects (tokenizing the 1,100
    NCCL WARN formats whole cost about 0.15 s of a 10-line file's run)."""

    def __init__(self, rows: Iterable[tuple[T, Tokens, str]]) -> None:
        self.by_word: dict[str, list[list]] = {}
        for t, tokens, kind in rows:
            if callable(tokens):
                first = next(iter(tokens()), None)
            else:
                first = tokens[0] if tokens else None
            word = first[2] if first else None
            if word:  # (a format that starts with a placeholder has no head a cut text keeps)
                self.by_word.setdefault(word, []).append([t, tokens, kind, None])

    def match(self, text: str, only: Callable[[T], bool] | None = None) -> tuple[T, re.Match] | None:
        """The template whose format ``text`` is a cut head of (see the module docstring), or None.
        ``only``: the templates a fact outside the text already narrowed the reading to (the source file an
        NCCL WARN's header names): among them a head of :data:`CUT_MIN_WORDY` letters is enough."""
        text = text.strip()
        least = CUT_MIN_WORDY if only is not None else CUT_MIN_LITERAL
        if len(text) < least or len(text) > MAX_CUT_TEXT or "\n" in text:
            return None
        if not _wordy(text):  # a rule of `****` or `====` is no message's head
            return None
        rows = self.by_word.get(text.split(None, 1)[0])
        if not rows:
            return None
        best: list = []
        best_lit = least - 1
        formats: set[str] = set()  # (under ``only``: the formats whose head it is, any literal count)
        for row in rows:
            if only is not None and not only(row[0]):
                continue
            if row[3] is None:
                tokens = row[1]
                row[3] = BoundedPattern(prefix_pattern(list(tokens() if callable(tokens) else tokens)))
            try:
                m = row[3].match(text)
            except RecursionError:  # (compiled deep in a nested reading: taken as no reading)
                row[3] = None
                continue
            if m is None:
                continue
            if only is not None:
                formats.add(row[3].pattern)
            lit = _literal_count(m)
            if lit > best_lit:
                best, best_lit = [(row, m)], lit
            elif lit == best_lit:
                best.append((row, m))
        if not best or len({row[2] for row, _ in best}) > 1:
            return None
        if len(formats) > 1 and not _one_message(text, _first_lines(row[0] for row, _ in best)):
            # a short head of two messages of the file; one message's releases share one format, or
            # their formats read alike past the cut word (`Call to ibv_modif` of `Call to ibv_modify_qp
            # failed with error %s` / `... failed with %d %s, %s`: the releases' wordings of one WARN)
            return None
        row, m = best[0]
        return row[0], m


def _one_message(text: str, lines: list[str] | None) -> bool:
    """Whether formats whose first lines are ``lines`` read ``text`` as one message. Their words up to
    the first placeholder (:func:`format_head`) are their heads. One message when the text lies inside the
    text the heads share and that text goes on past the end of the word the text ends in (``Call to
    ibv_modif`` of three releases' ibv_modify_qp wordings), or ends where that word ends in every format
    and at most one word or placeholder goes on after it (``Call to ibv_reg_mr f`` of ``Call to
    ibv_reg_mr failed`` and ``... failed with error %s``: a release added words to the message); or when
    the text holds the whole of every head, all alike (the readings part only in their placeholders).
    ``Call to ibv_`` of ``Call to ibv_alloc_pd ...`` and ``Call to ibv_reg_mr ...`` is two messages'
    head, as is ``Call to ibv_reg_mr`` of ``ibv_reg_mr failed`` and ``ibv_reg_mr_iova2 failed``, and
    ``NET/IB: Unrecognized req`` of ``request type.`` and ``request. It might``."""
    if not lines:
        return False
    heads = [format_head(line) for line in lines]
    shared = os.path.commonprefix(heads)
    if not shared.strip():
        return False
    if not shared.startswith(text):
        # past the words they share: the cut is inside the placeholder every format has there
        return text.startswith(shared) and all(h == shared for h in heads)
    rest = shared[len(text):]
    if any(c.isspace() for c in rest):
        return True
    end = len(shared)
    if not all(line[end:end + 1] in _WORD_END for line in lines):
        return False
    return len({_NEXT_WORD.match(line, end).group(1) for line in lines} - {""}) <= 1


_WORD_END = frozenset(("", " ", "\t", ",", ".", ";", ":", "(", ")", "[", "]"))
_NEXT_WORD = lazy_re(r"[\s,.;:()\[\]]*(%|\{|\w*)")  # the word, or the placeholder, that goes on after a word


def format_head(fmt: str) -> str:
    """A catalog format's words up to its first placeholder (``%d`` of NCCL's formats, ``{x}`` of the
    others): what every reading of it prints first."""
    return _PLACEHOLDER_START.split(fmt, maxsplit=1)[0]


_PLACEHOLDER_START = lazy_re(r"%|\{")


def _first_lines(templates) -> list[str] | None:
    """The first line of each of ``templates``' formats (NCCL's printf formats write a newline as
    ``\\n``), None when one has no format."""
    lines = []
    for t in templates:
        fmt = getattr(t, "format", None)
        if not isinstance(fmt, str):
            return None
        lines.append(fmt.split("\\n", 1)[0].split("\n", 1)[0])
    return lines


def _literal_count(m: re.Match) -> int:
    """The literal characters of a match: its text without blanks and without what its groups took."""
    spans = sorted(m.span(g) for g in range(1, (m.re.groups or 0) + 1) if m.span(g)[0] >= 0)
    taken, end = 0, -1
    for a, b in spans:  # (nested groups counted once)
        if a >= end:
            taken += len(m.string[a:b].replace(" ", "").replace("\t", ""))
            end = b
        elif b > end:
            taken += len(m.string[end:b].replace(" ", ""))
            end = b
    whole = m.string[m.start():m.end()]
    return len("".join(whole.split())) - taken


def cut_search(rx: re.Pattern, text: str):
    """A match of a reader's pattern ``rx`` that a cut ended: ``text`` (without a viewer's cut mark) ends
    inside a match of ``rx`` that starts at least :data:`CUT_MIN_LITERAL` characters before the end
    (``A worker died or was killed while executing a ta``), or None. For the readers of one message by a
    pattern (not a catalog format): the head a cut left, read as the message when it is that long. The
    ``regex`` module's partial matching decides it (None without the module: the browser build)."""
    if len(text) > MAX_CUT_TEXT or "\n" in text:
        return None
    msg, _ = strip_mark(text)
    if len(msg) < CUT_MIN_LITERAL or not _wordy(msg):
        return None
    pat = _partial(rx.pattern, rx.flags & (re.I | re.M | re.S | re.X))
    if pat is None:
        return None
    m = pat.search(msg, partial=True)
    if m is None or not m.partial or len(msg) - m.start() < CUT_MIN_LITERAL:
        return None
    return m


_PARTIAL: dict[tuple[str, int], object] = {}


def _partial(pattern: str, flags: int):
    """``pattern`` compiled by the ``regex`` module (once), or None without it."""
    key = (pattern, flags)
    if key not in _PARTIAL:
        mod = regex_module()
        _PARTIAL[key] = mod.compile(pattern, flags) if mod is not None else None
    return _PARTIAL[key]
