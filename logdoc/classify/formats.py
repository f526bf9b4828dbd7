"""The two dialects of message catalog, each to a bounded, anchored regular expression.

- printf (``grammars/nccl_messages.tsv``, NCCL's own ``WARN``/``INFO`` formats): :func:`printf_to_regex`,
  :func:`printf_literals`, :func:`printf_lead_word`;
- brace (``grammars/torch_templates.tsv``, PyTorch and Gloo formats rewritten with named fields:
  ``{name}``, ``{name:int|word|line|rest}``, ``{a|b}`` and ``{name=a|b}`` alternatives):
  :func:`brace_to_regex`.

:class:`BoundedPattern` is what both compile to: a pattern whose match gives up after a time limit,
so a hostile message cannot make the lazy runs backtrack for minutes.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ..lazyre import lazy_re, regex_module  # (regex: a time limit on each match; the browser has only re)

MATCH_TIMEOUT = 0.02  # seconds for one format against one message; longer counts as no match
# Text up to this long is matched with plain `re` (faster; the worst adversarial case measured on every
# format is about 1 ms at this length, tests/test_hostile_regex.py); longer text gets the time limit.
SHORT_TEXT = 256


class BoundedPattern:
    """A compiled catalog pattern whose ``match`` gives up after :data:`MATCH_TIMEOUT` (no match).

    Formats are lazy runs (``%s``, ``{name}``) between literal pieces; on a hostile message (the
    pieces repeated many times, a near miss at the end) a backtracking engine tries every split,
    which is polynomial in the length with the number of runs as the exponent. Real messages match
    or fail in microseconds. With the ``regex`` module (a dependency; the browser build lacks it)
    each match has a time limit; without it the plain ``re`` pattern is used. ``timeouts`` counts
    the matches cut short in this process.
    """

    __slots__ = ("pattern", "flags", "_std", "_bounded")
    timeouts = 0

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._std: re.Pattern | None = None
        self._bounded = None  # compiled on first use: most formats are never tried

    def __getstate__(self):
        return self.pattern, self.flags  # compiled again on first use: a pickled table stays small

    def __setstate__(self, state) -> None:
        self.pattern, self.flags = state
        self._std = self._bounded = None

    @property
    def std(self) -> re.Pattern:
        if self._std is None:
            self._std = re.compile(self.pattern, self.flags)
        return self._std

    @property
    def groupindex(self):
        return self.std.groupindex

    def match(self, text: str, pos: int = 0):
        if len(text) - pos <= SHORT_TEXT or regex_module() is None:
            return self.std.match(text, pos)
        b = self._bounded
        if b is None:
            _regex = regex_module()
            b = self._bounded = _regex.compile(self.pattern, _regex.DOTALL if self.flags & re.DOTALL else 0)
        try:
            return b.match(text, pos, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            BoundedPattern.timeouts += 1
            return None


# --- printf

PRINTF_CONV = lazy_re(r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                         r"(?P<len>hh|h|ll|l|z|j|t|L|q)?(?P<conv>[diouxXeEfFgGaAcspnm%])|\{#?[A-Za-z_]\w*\}")


def _conv_regex(m: re.Match) -> str:
    if m.group(0).startswith("{"):
        return "(.*?)"
    conv = m["conv"]
    pad = r"\s*" if m["width"] else ""
    if conv == "%":
        return "%"
    if conv in "di":
        return pad + r"([-+]?\d+)"
    if conv == "u":
        return pad + r"(\d+)"
    if conv in "xX":
        return pad + r"((?:0x)?[0-9a-fA-F]+)"
    if conv == "o":
        return pad + r"([0-7]+)"
    if conv in "eEfFgGaA":
        return pad + r"([-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|nan|-nan|inf|-inf))"
    if conv == "c":
        return "(.)"
    if conv == "p":
        return r"(0x[0-9a-fA-F]+|\(nil\)|0)"
    return pad + "(.*?)"  # %s and anything exotic


def _unescape(lit: str) -> str:
    return lit.replace("\\t", "\t").replace("\\r", "\r").replace("\\\\", "\\")


def printf_to_regex(fmt: str, partial: bool) -> str:
    """The anchored pattern of one printf format (its first line when ``partial``): ``%s`` a lazy run,
    ``%d`` a number, ``%p`` a pointer, ``{name}`` a lazy run; blanks as blanks."""
    parts = []
    pos = 0
    for m in PRINTF_CONV.finditer(fmt):
        lit = _literal(fmt[pos : m.start()])
        conv = _conv_regex(m)
        if not lit and conv == "(.*?)" and parts and parts[-1] == "(.*?)":
            # `%s%s`: of adjacent lazy runs only the last ever takes text (the first split tried
            # that can succeed); an empty group keeps the group numbers without the extra
            # dimension of backtracking.
            parts[-1] = "()"
        if conv == "(.*?)" and lit.endswith(" ") and not lit.endswith("\\ ") and _blank_after(fmt, m.end()):
            # ` %s ` printed with an empty string leaves two spaces, which a paste collapses into
            # one (`connecting to address with family 0`; ` %s%s%s%s ` of optional parts, all empty):
            # the space before the run may be gone.
            lit = lit[:-1] + " ?"
        parts.append(lit)
        parts.append(conv)
        pos = m.end()
    parts.append(_literal(fmt[pos:]))
    body = "".join(parts)
    return "^" + body + (r"" if partial else r"\s*$")


def _blank_after(fmt: str, i: int) -> bool:
    """Whether a blank follows position ``i`` of ``fmt`` after any further ``%s`` conversions."""
    while fmt.startswith("%s", i):
        i += 2
    return fmt.startswith(" ", i)


def _literal(text: str) -> str:
    # Runs of spaces in a format may be printed as is, but pastes collapse them: accept any run.
    out = []
    for chunk in re.split(r"( +)", _unescape(text)):
        if chunk.startswith(" "):
            out.append(r"\s+" if len(chunk) > 1 else " ")
        elif chunk:
            out.append(re.escape(chunk))
    return "".join(out)


def printf_literals(fmt: str) -> list[str]:
    """The literal pieces of a printf format, between its conversions."""
    return [_unescape(p) for p in PRINTF_CONV.split(fmt) if p]


def printf_has_text(fmt: str) -> bool:
    """Whether a printf format has any literal text besides its conversions and blanks (``%s`` has none)."""
    return PRINTF_CONV.sub("", fmt).strip() != ""


def printf_lead_word(fmt: str) -> str:
    """The first word of a format's literal head (the key of its catalog's first-word index); "" when
    the format starts with a conversion or a blank, or its head is one word cut by a conversion."""
    m = PRINTF_CONV.search(fmt)
    lead = fmt[: m.start()] if m else fmt
    if not lead or lead[0].isspace():
        return ""
    first, sep, _ = lead.partition(" ")
    return first if sep else ("" if m else first)


# --- brace


class BraceRegex(NamedTuple):
    body: str            # the pattern of the format (not anchored)
    literal: str         # the format's literal text, each placeholder a blank
    ints: frozenset      # the names of its `{name:int}` fields


def brace_to_regex(fmt: str) -> BraceRegex:
    """The pattern of one brace format: literal words as words, blanks as ``\\s+``, each
    placeholder a named group (``int`` a number, ``word`` no blank, ``line`` to the end of the line,
    ``rest`` to the end, plain a lazy run), alternatives as a group of their own patterns."""
    ints: set[str] = set()
    body, literal = _brace(fmt, ints)
    return BraceRegex(body, literal, frozenset(ints))


def _brace(fmt: str, ints: set[str]) -> tuple[str, str]:
    out: list[str] = []
    lit: list[str] = []
    i, n = 0, len(fmt)
    after_int = False
    while i < n:
        c = fmt[i]
        if c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            inner = fmt[i + 1:j - 1]
            if after_int and re.fullmatch(r"[a-z_][a-z0-9_]*", inner):
                # `Rank {rank:int}{desync_report}`: a message composed elsewhere is glued to the
                # number; the catalog's pieces of it start on a new line (`\n\t - To our best
                # knowledge`, `\n\t     [1, 2] finished`), so `Rank 0: RuntimeError: ...` (a
                # program's own print) or `Rank 3 has no transport ...` (NCCL's) is not one.
                out.append(r"(?=[ \t]*\n|\s+[-\[])")
            out.append(_placeholder(inner, ints))
            after_int = inner.endswith(":int")
            lit.append(" ")
            i = j
            continue
        after_int = False
        j = i
        while j < n and fmt[j] != "{":
            j += 1
        chunk = fmt[i:j]
        lit.append(chunk)
        pieces = re.split(r"(\s+)", chunk)
        for p in pieces:
            if not p:
                continue
            out.append(r"\s+" if p.isspace() else re.escape(p))
        i = j
    return "".join(out), "".join(lit)

def _placeholder(inner: str, ints: set[str]) -> str:
    m = re.fullmatch(r"([a-z_][a-z0-9_]*)(?::(int|word|line|rest))?", inner)
    if m:
        name, typ = m.group(1), m.group(2)
        if typ == "int":
            ints.add(name)
            return rf"(?P<{name}>-?\d+)"
        if typ == "word":
            return rf"(?P<{name}>\S+)"
        if typ == "line":
            return rf"(?P<{name}>[^\n]*)"
        if typ == "rest":
            return rf"(?P<{name}>.*)"
        return rf"(?P<{name}>.*?)"
    name = None
    m = re.match(r"([a-z_][a-z0-9_]*)=", inner)
    if m:
        name, inner = m.group(1), inner[m.end():]
    alts = split_alts(inner)
    compiled = "|".join(_brace(a, ints)[0] if a else "" for a in alts)
    return rf"(?P<{name}>{compiled})" if name else rf"(?:{compiled})"


def split_alts(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for c in s:
        if c == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        cur.append(c)
    out.append("".join(cur))
    return out
