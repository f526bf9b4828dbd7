"""The NCCL catalog, the printf front-end of the catalog engine (:mod:`logdoc.classify.catalog`).

``grammars/nccl_messages.tsv`` lists every INFO, WARN and VERSION format NCCL printed from 2.3 to
2.30.7 (built by ``python tools/make_catalog nccl`` from NCCL's sources). Each printf format becomes
an anchored pattern (:func:`logdoc.classify.formats.printf_to_regex`, the printf dialect): ``%s`` a
lazy run, ``%d`` a number, ``%p`` a pointer, and so on. The engine files a format under its first
word (formats that start with a conversion under none), and a message is tried against the formats
of its first word and the unfiled ones, only where the format's longest literal piece occurs in it,
most specific first (at equal specificity a filed format before an unfiled one). Here: the table's
rows, the memo of message shapes (the fast path), the reading of a message cut by a paste
(:func:`match_cut`, :func:`match_head`), and of one a network plugin printed under its own name
(:func:`match_net_variant`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from . import fast
from .fast import shape
from .classify import catalog as engine
from .classify import cut
from .classify import formats
from .classify.formats import PRINTF_CONV as _CONV
from .classify.formats import BoundedPattern
from .lazyre import lazy_re
from .classify.formats import printf_lead_word as _lead_word
from .classify.formats import printf_literals as _literals
from .classify.formats import printf_to_regex as _to_regex
from .resources import data_dir

MAX_MATCH_LEN = 4096  # NCCL cut lines at 1023 bytes before 2.29; longer text is matched on its head


@dataclass(slots=True)
class Template:
    id: str
    levels: tuple[str, ...]
    first: str
    last: str
    where: str
    format: str
    anchor: str
    specificity: int
    _rx: BoundedPattern | None = None
    partial: bool = False  # the format has an embedded newline: only its first line is matched

    @property
    def rx(self) -> BoundedPattern:
        if self._rx is None:
            self._rx = BoundedPattern(_to_regex(self.format.split("\\n")[0].rstrip(" "), self.partial))
        return self._rx

    def __reduce__(self):
        # pickled as its fields (the user cache): a slotted dataclass's own state takes 4 times as long to load
        return (Template, (self.id, self.levels, self.first, self.last, self.where, self.format, self.anchor,
                           self.specificity, self._rx, self.partial))


def _index(rows: list[Template]) -> engine.AnchorIndex:
    # filed under the first word; at equal specificity a filed format before an unfiled one. A format
    # without literal text (`WARN("%s", text)`, the version banner's `%s`) reads every message and says
    # nothing of any: it is not offered, so a message no other format reads stays unread (a newer
    # release's or a plugin's WARN), rather than being taken for the banner.
    rows = [t for t in rows if formats.printf_has_text(t.format)]
    return engine.AnchorIndex(rows, key=lambda t: _lead_word(t.format) or None,
                              tier=lambda t: 0 if _lead_word(t.format) else 1)


class Catalog:
    def __init__(self, rows: list[Template], index: engine.AnchorIndex | None = None):
        """``index``: :func:`_index` of ``rows`` made before (the user cache keeps both: about a third
        of the catalog's start-up cost is filing 2,400 formats by their first word)."""
        self.use_cache = fast.enabled()
        # (shape, first word) -> (template, the templates that would win over it if they matched)
        self._by_shape: dict[tuple[bytes, str], tuple[Template, tuple[Template, ...]]] = {}
        self._misses: dict[str, None] = {}  # exact messages known to match nothing
        self.templates = {t.id: t for t in rows}
        self.index = _index(rows) if index is None else index
        self._cut_index: dict[tuple[str, ...], _CutIndex] = {}
        self._head_index: dict[tuple[str, ...], cut.CutIndex] = {}

    def cut_index(self, levels: tuple[str, ...]) -> "_CutIndex":
        """The formats printed at one of ``levels`` as :func:`match_cut` reads them (built once)."""
        got = self._cut_index.get(levels)
        if got is None:
            got = self._cut_index[levels] = _CutIndex([t for t in self.templates.values()
                                                       if any(lv in t.levels for lv in levels)])
        return got

    def head_index(self, levels: tuple[str, ...]) -> "cut.CutIndex":
        """The formats printed at one of ``levels`` as :func:`match_head` reads them (built once)."""
        got = self._head_index.get(levels)
        if got is None:
            got = self._head_index[levels] = cut.CutIndex(
                (t, partial(cut.iter_printf_tokens, t.format), "nccl") for t in self.templates.values()
                if any(lv in t.levels for lv in levels) and formats.printf_has_text(t.format))
        return got

    def match(self, message: str, level: str | None = None) -> tuple[Template, tuple[str, ...]] | None:
        msg = message[:MAX_MATCH_LEN].rstrip()
        if not self.use_cache:
            return self._search(msg)
        word = msg.split(" ", 1)[0]
        key = (shape(msg), word)
        hit = self._by_shape.get(key)
        if hit is not None:
            t, rivals = hit
            m = t.rx.match(msg)
            if m is not None:
                for other in rivals:
                    if (not other.anchor or other.anchor in msg) and other.rx.match(msg):
                        return self._search(msg)
                return t, m.groups()
        if msg in self._misses:
            return None
        found = self._search(msg)
        if found is None:
            if len(self._misses) < 65536:
                self._misses[msg] = None
        elif hit is None and len(self._by_shape) < 65536:
            self._by_shape[key] = (found[0], self._rivals(found[0], word, key[0]))
        return found

    def _rivals(self, t: Template, word: str, key_shape: bytes) -> tuple[Template, ...]:
        """The templates :meth:`_search` would prefer to ``t`` for a message of this first word
        (tried before it), leaving out those whose longest literal piece cannot occur in a text of
        this shape."""
        out = []
        for other in self.index.candidates((word,)):
            if other is t:
                break
            if not other.anchor or shape(other.anchor) in key_shape:
                out.append(other)
        return tuple(out)

    def _search(self, msg: str) -> tuple[Template, tuple[str, ...]] | None:
        hit = self.index.first(msg, (msg.split(" ", 1)[0],))
        return (hit[0], hit[1].groups()) if hit is not None else None


CUT_MIN_INSIDE = 32   # a fragment cut at both ends inside a format's first literal piece: at least this long
CUT_MIN_LITERAL = 24  # a fragment whose head was cut: at least this much literal text of the format left
_CUT_BOUNDARY = " :/-[(."


class _CutIndex:
    """Each format's first line and its first literal piece, in one text that ``str.find`` searches:
    which formats hold a fragment is a few C-level searches, not a pass over the catalog."""

    def __init__(self, templates: list[Template]) -> None:
        self.rows: list[tuple[Template, str, str]] = []  # (template, first line of the format, its first literal)
        starts, parts, pos = [], [], 0
        for t in templates:
            fmt = t.format.split("\\n")[0].rstrip(" ")
            m = _CONV.search(fmt)
            lit0 = fmt[: m.start()] if m else fmt
            self.rows.append((t, fmt, lit0))
            starts.append(pos)
            parts.append(lit0)
            pos += len(lit0) + 1
        self.starts = starts
        self.text = "\0".join(parts)

    def holding(self, probe: str):
        """``(template, format, first literal, where the probe first stands in it)`` for every
        format whose first literal piece holds ``probe``, in catalog order."""
        from bisect import bisect_right

        text, starts, i = self.text, self.starts, self.text.find(probe)
        while i >= 0:
            k = bisect_right(starts, i) - 1
            t, fmt, lit0 = self.rows[k]
            yield t, fmt, lit0, i - starts[k]
            i = text.find(probe, starts[k + 1]) if k + 1 < len(starts) else -1  # on to the next format


def match_cut(catalog: "Catalog", message: str, levels: tuple[str, ...] = ("WARN",)) -> tuple[Template, tuple[str, ...]] | None:
    """A message of ``catalog`` that a paste cut at its start, its end, or both: its text read
    from a word boundary inside the format's first literal piece to the end of the format
    (``Socket creation failed : %s`` of ``Net : Socket creation failed : %s``), or lying wholly
    inside that literal piece between two word boundaries (``No interface found in the same subnet as
    remote address`` of ``Net : No interface found in the same subnet as remote address %s``). Only
    formats printed at one of ``levels``; the most specific reading wins; None when nothing reads it
    with enough literal text (:data:`CUT_MIN_LITERAL`, :data:`CUT_MIN_INSIDE`)."""
    msg = message[:MAX_MATCH_LEN].strip()
    if len(msg) < CUT_MIN_LITERAL or "\0" in msg:
        return None
    probe = msg[:20]
    best: tuple[int, Template, tuple[str, ...]] | None = None
    for t, fmt, lit0, i in catalog.cut_index(levels).holding(probe):
        if i and lit0[i - 1] not in _CUT_BOUNDARY and msg[0] not in _CUT_BOUNDARY:
            continue
        if lit0.startswith(msg, i):  # wholly inside the first literal piece
            end = i + len(msg)
            if len(msg) < CUT_MIN_INSIDE or (end < len(lit0) and lit0[end] not in _CUT_BOUNDARY + ",;"):
                continue
            score, args = len(msg), ()
        else:
            if i == 0:
                continue  # the whole format from its start: Catalog.match already said no
            rest = fmt[i:]
            lits = sum(len(x) for x in _literals(rest))
            if lits < CUT_MIN_LITERAL:
                continue
            mm = BoundedPattern(_to_regex(rest, False)).match(msg)
            if mm is None:
                continue
            score, args = lits, mm.groups()
        if best is None or score > best[0]:
            best = (score, t, args)
    return (best[1], best[2]) if best else None


def match_head(catalog: "Catalog", message: str, levels: tuple[str, ...] = ("WARN",),
               where: str | None = None) -> tuple[Template, tuple[str, ...]] | None:
    """A message of ``catalog`` whose end a paste or a viewer cut (a fixed width, ``...``,
    ``[truncated]``): the head of a format printed at one of ``levels`` up to the cut, read by
    :mod:`logdoc.classify.cut`; the arguments before the cut; None when no format's head reads it
    with enough literal text. ``where``: the ``file.cc:line`` an NCCL WARN's header names; only the
    formats of that source file are read then (any line: releases move them), from a shorter head
    (``init.cc:904 NCCL WARN Duplicate… [truncated]``: the one message of init.cc that starts so)."""
    msg, _ = cut.strip_mark(message[:MAX_MATCH_LEN])
    only = None
    if where:
        name = where.rsplit(":", 1)[0].lstrip("./")
        if not name:
            return None
        tail = "/" + name

        def only(t: Template) -> bool:
            f = t.where.rsplit(":", 1)[0]
            return f == name or f.endswith(tail)
    got = catalog.head_index(levels).match(msg, only)
    if got is None:
        return None
    return got[0], tuple(g for g in got[1].groups() if g is not None)


def _parse_row(line: str) -> Template | None:
    cols = line.rstrip("\n").split("\t", 5)
    if len(cols) != 6:
        return None
    tid, levels, first, last, where, fmt = cols
    lits = _literals(fmt.split("\\n")[0])
    anchor = max(lits, key=len).strip() if lits else ""
    if "  " in anchor:
        anchor = max(anchor.split("  "), key=len).strip()
    return Template(tid, tuple(levels.split(",")), first, last, where, fmt, anchor,
                    specificity=sum(len(x) for x in lits), partial="\\n" in fmt.rstrip("\\n").rstrip())


def _follow_switch(on: bool) -> None:
    if nccl_catalog.cache_info().currsize:
        nccl_catalog().use_cache = on


def _read_rows(path) -> list[Template]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            t = _parse_row(line)
            if t is not None:
                rows.append(t)
    return rows


@lru_cache(maxsize=None)
def nccl_formats() -> dict[str, tuple[tuple[str, ...], str]]:
    """Each NCCL catalog id's levels and format, as :func:`nccl_catalog`'s templates hold them, without
    the catalog (its rows, literals and index: about 1.8 MB of objects): what a digest's events need to be
    read back and folded (the formats a digest leaves out, the bulk and unread INFO formats)."""
    from .cache import load_table

    path = data_dir("grammars") / "nccl_messages.tsv"

    def build() -> dict[str, tuple[tuple[str, ...], str]]:
        out: dict[str, tuple[tuple[str, ...], str]] = {}
        with open(path, encoding="utf-8") as fh:
            next(fh)
            for line in fh:
                cols = line.rstrip("\n").split("\t", 5)  # as _parse_row reads a row
                if len(cols) == 6:
                    out[cols[0]] = (tuple(cols[1].split(",")), cols[5])
        return out

    return load_table("ncclfmt", [__file__, path], build)


@lru_cache(maxsize=None)
def nccl_catalog() -> Catalog:
    from .cache import load_table

    path = data_dir("grammars") / "nccl_messages.tsv"

    def build() -> tuple[list[Template], engine.AnchorIndex]:
        rows = _read_rows(path)
        return rows, _index(rows)  # pickled together: the index holds the rows themselves

    rows, index = load_table("ncclcat", [__file__, formats.__file__, engine.__file__, path], build)
    return Catalog(rows, index)


fast.subscribe(_follow_switch)


# RCCL (AMD's NCCL) is NCCL's source run through hipify, which renames the CUDA runtime's and driver's calls in its
# message texts too: `hipIpcGetMemHandle failed : %s` (transport/p2p.cc) is NCCL's `cudaIpcGetMemHandle failed : %s`,
# `hipMemCreate` its `cuMemCreate`.
_HIP_NAME = lazy_re(r"\bhip(?=[A-Z][a-z])")


def match_hipified(msg: str):
    """The NCCL catalog's reading of an RCCL message that names HIP calls, by the CUDA names NCCL prints (the runtime's
    ``cuda...`` first, then the driver's ``cu...``); None when it names none or no format reads it."""
    if _HIP_NAME.search(msg) is None:
        return None
    for name in ("cuda", "cu"):
        hit = nccl_catalog().match(_HIP_NAME.sub(name, msg))
        if hit is not None:
            return hit
    return None


# A catalog reading says enough to stand without the header's help when its format's literal text
# (format without conversions) is at least this long: a ``NET/<name> :`` variant is taken only then,
# and a bare message (no header at all, :mod:`logdoc.classify.bare`) only then or when its format
# starts with a literal word (``Duplicate GPU detected : rank %d ...``).
BARE_MIN_LITERAL = 24


# A network plugin prints the IB transport's messages under its own name (``NET/IBext : ...`` of the
# rdma-sharp plugins, ``NET/IBext_v8``, other forks), and pastes lose or add the space before the
# colon (``NET/IB: `` is the 2.22+ wording, ``NET/IB : `` the older one): a ``NET/<name> :`` message
# that no format reads is read again as the built-in transport's, under both spellings.
_NET_NAME = lazy_re(r"NET/(?P<net>[A-Za-z][\w.-]*?)\s*:\s*(?=\S)")
_NET_CANON = ("NET/IB : ", "NET/IB: ", "NET/Socket : ")


def match_net_variant(msg: str, fields: dict[str, Any], cut: bool = False):
    """The catalog reading of ``msg`` with its ``NET/<name> :`` lead put in the built-in spellings
    (``fields['net_name']`` is set to the printed name when it was not the built-in one); None.
    ``cut``: read as the head of a format whose end a paste cut (:func:`logdoc.templates.match_head`)."""
    m = _NET_NAME.match(msg)
    if m is None:
        return None
    rest = msg[m.end():]
    cat = nccl_catalog()
    for lead in _NET_CANON:
        if lead.startswith("NET/Socket") and m["net"] != "Socket":
            continue
        cand = lead + rest
        if cand == msg:
            continue
        hit = match_head(cat, cand) if cut else cat.match(cand)
        if hit is not None and hit[0].specificity >= BARE_MIN_LITERAL:
            if m["net"] not in ("IB", "Socket"):
                fields["net_name"] = m["net"]
            return hit
    return None

