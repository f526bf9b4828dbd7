"""The catalog template id of a parsed event, and the ids of its annotation group (:class:`Resolver`).

Most events carry their catalog id as ``template``; a line a grammar reads carries its kind there
(``torch.async_exception``), and for a warning or an error its message is then looked up in the
catalog it comes from (NCCL's, PyTorch's and Gloo's). A job of many ranks asks this of every event,
and every rank prints the same messages with its own numbers, so the look-ups are memoised by the
message with its digits set to 0 where the catalog reads every digit alike (:func:`digit_blind_key`).
The annotations themselves are loaded and checked by :mod:`logdoc.annotations`. Standard library only.
"""
from __future__ import annotations

from .annotations import Annotations, catalog_ids

_ERRORISH = ("WARN", "ERROR", "FATAL")


_DIGITS = str.maketrans("0123456789", "0000000000")
_digit_pieces: tuple[str, ...] | None = None


def digit_pieces() -> tuple[str, ...]:
    """The literal pieces of the PyTorch catalog's formats that hold a digit (``within 300 ms``,
    ``from [0] via c10d``), blanks collapsed. A message holding none of them can only be read by
    formats whose literal text has no digit, and those read every digit alike (``-?\\d+``, ``\\S+``,
    ``.*``): the message with each digit set to 0 is read as the message itself."""
    global _digit_pieces
    if _digit_pieces is None:
        import re

        from .classify.torch.catalog import templates

        typed = re.compile(r"\{[a-z_][a-z0-9_]*(?::(?:int|word|line|rest))?\}|\{[a-z_][a-z0-9_]*=|[{}|]")
        pieces = set()
        for ts in templates().values():
            for t in ts:
                for piece in typed.split(t.format):
                    piece = " ".join(piece.split())
                    if piece and any(c.isdigit() for c in piece):
                        pieces.add(piece)
        _digit_pieces = tuple(sorted(pieces))
    return _digit_pieces


_BLIND_SAFE: dict[str, bool] = {}


def digit_blind_key(text: str) -> str | None:
    """``text`` with every digit set to 0, when the PyTorch catalog reads both alike; else None.
    They are read alike when the text with its digits set to 0 holds none of :func:`digit_pieces`
    (with their digits set to 0 too, so that this is decided once per key), and the text is not
    quoted cut short (which :func:`_prefix_lookup` reads by its words). Every rank of a job prints
    the same messages with its own numbers in them (``[Rank 7]``, ``ran for 600412
    milliseconds``): they share one key."""
    blind = text.translate(_DIGITS)
    if blind == text:
        return None
    safe = _BLIND_SAFE.get(blind)
    if safe is None:
        flat = " ".join(blind.split())
        safe = not flat.endswith(_ELLIPSIS) and not any(p in flat for p in _blind_pieces())
        if len(_BLIND_SAFE) > 4096:
            _BLIND_SAFE.clear()
        _BLIND_SAFE[blind] = safe
    return blind if safe else None


_blind_pieces_memo: tuple[str, ...] | None = None


def _blind_pieces() -> tuple[str, ...]:
    global _blind_pieces_memo
    if _blind_pieces_memo is None:
        _blind_pieces_memo = tuple(sorted({p.translate(_DIGITS) for p in digit_pieces()}))
    return _blind_pieces_memo


class Resolver:
    """The catalog template id of a parsed event, memoised by message text (a PyTorch message by
    its text with every digit set to 0 where the catalog reads both alike, :func:`digit_blind_key`:
    the ranks of a job print the same messages with their own numbers).

    Most events carry it as ``template``. Lines a grammar reads carry their kind there instead
    (``nccl.bootstrap``, ``torch.async_exception``); for a warning or an error the message is then
    looked up in the catalog it comes from, as the parser would have named it without the grammar.
    """

    def __init__(self, ann: Annotations | None) -> None:
        self.ann = ann or Annotations()
        self._known: set[str] | None = None
        self._memo: dict[tuple[str, str], str | None] = {}
        self._ids: dict[tuple[bool, str | None], frozenset[str]] = {}  # ids() by catalog id (or template)
        self._own: dict[str, frozenset[str]] = {}  # ids() of the templates that are catalog ids
        self._plain: dict[str, frozenset[str]] = {}  # ids() of the others, for events below warnings

    def known(self) -> set[str]:
        if self._known is None:
            try:
                self._known = set(catalog_ids().known)
            except OSError:  # pragma: no cover - grammars always ship with the code
                self._known = set(self.ann.by_id)
        return self._known

    def catalog_id(self, ev) -> str | None:
        t = ev.template
        if t and (t in self.ann.by_id or t in self.known()):
            return t
        if ev.level not in _ERRORISH:
            return None
        fields = ev.fields or {}
        loc = fields.get("code_location")
        if isinstance(loc, str) and loc.startswith("gloo/"):
            cand = "gloo:" + loc[5:]  # Gloo's catalog ids are its source file and line
            if cand in self.ann.by_id or cand in self.known():
                return cand
        if ev.kind.startswith("nccl."):
            msg = fields.get("message")
            return self._lookup("nccl", msg) if isinstance(msg, str) else None
        texts = [fields.get(k) for k in ("exc_message", "what", "message")] + [ev.text]
        for text in texts:
            if isinstance(text, str) and text.strip():
                hit = self._lookup("torch", text)
                if hit:
                    return hit
        return None

    def _lookup(self, where: str, text: str) -> str | None:
        key = (where, text)
        if where == "torch":
            blind = digit_blind_key(text)
            if blind is not None:
                key = ("torch, digits as 0", blind)
        if key in self._memo:
            return self._memo[key]
        tid = None
        try:
            if where == "nccl":
                from .templates import nccl_catalog

                hit = nccl_catalog().match(text)
                tid = hit[0].id if hit else None
            else:
                tid = _torch_lookup(text)
        except Exception:  # noqa: BLE001 - a lookup never breaks a diagnosis
            tid = None
        if len(self._memo) > 4096:
            self._memo.clear()
        self._memo[key] = tid
        return tid

    def ids(self, ev) -> frozenset[str]:
        """The event's catalog id and every id of its annotation group (empty when it has none)."""
        got = self.quick(ev)
        if got is not None:
            return got
        t = ev.template
        tid = self.catalog_id(ev)
        key = (tid is None, tid if tid is not None else ev.template)
        got = self._ids.get(key)
        if got is None:
            if tid is None:
                got = frozenset((ev.template,)) if ev.template else frozenset()
            else:
                got = frozenset(self.ann.group(tid)) | {tid}
            if len(self._ids) > 4096:
                self._ids.clear()
            self._ids[key] = got
        if t is not None and len(self._own) < 4096:
            if tid is not None and tid == t:
                self._own[t] = got
            elif tid is None and ev.level not in _ERRORISH:
                self._plain[t] = got
        return got

    def quick(self, ev) -> frozenset[str] | None:
        """:meth:`ids` when the template alone decides them (a catalog id; or, below warning level, a
        template that is none), else None."""
        t = ev.template
        if t is None:
            return None
        got = self._own.get(t)
        if got is None and ev.level not in _ERRORISH:
            got = self._plain.get(t)
        return got


def _torch_lookup(text: str) -> str | None:
    from .classify.torch.catalog import match_templates

    text = text.strip()
    body = text.split("\n", 1)[0] if "\n" in text and len(text) > 2000 else text
    for cand in (body, _strip_exception_type(body)):
        hit = match_templates(cand, ("body", "line", "gloo"))
        if hit is not None and not _blank_gloo(hit[0]):
            return hit[0].id
    return _prefix_lookup(_strip_exception_type(body))


_PLACEHOLDER = None  # (compiled on first use: this module is standard library only and imports nothing at load)


def _blank_gloo(t) -> bool:
    """A Gloo format with almost no literal text of its own (``Error: {str}`` of redis_store.cc, ``out. `` of an
    enforce): only its source location, which an event of Gloo carries (:meth:`Resolver.catalog_id`), names
    it; read from a message's words alone it would claim any ``Error: ...`` line of any program."""
    global _PLACEHOLDER
    if t.where != "gloo":
        return False
    if _PLACEHOLDER is None:
        import re

        _PLACEHOLDER = re.compile(r"\{[^{}]*\}")
    words = "".join(c for c in _PLACEHOLDER.sub("", t.format) if c.isalpha())
    return len(words) < 4 or words.lower() in ("error", "warning", "fatal")


def _strip_exception_type(text: str) -> str:
    head, sep, rest = text.partition(": ")
    if sep and head.replace(".", "").replace("_", "").isalnum() and head[:1].isalpha() and " " not in head:
        return rest
    return text


_ELLIPSIS = ("...", "\u2026")


def _prefix_lookup(text: str) -> str | None:
    """A message quoted cut short (``Gloo connectFullMesh failed ...``): the one catalog format whose
    literal beginning holds the quoted words."""
    words = text.rstrip()
    cut = False
    for e in _ELLIPSIS:
        if words.endswith(e):
            words, cut = words[: -len(e)].rstrip(), True
    if not cut or len(words) < 12:
        return None
    from .classify.torch.catalog import templates

    hits = []
    for where in ("body", "line", "gloo"):
        for t in templates()[where]:
            lit = t.format.split("{", 1)[0]
            if lit.startswith(words) or (len(lit) >= 12 and words.startswith(lit.rstrip())):
                hits.append(t.id)
    return hits[0] if len(set(hits)) == 1 else None
