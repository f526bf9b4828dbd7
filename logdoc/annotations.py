"""What every catalog message means: the annotations of ``knowledge/annotations/*.yaml``.

Each NCCL WARN format (``grammars/nccl_messages.tsv``) and each PyTorch / Gloo failure message
(``grammars/torch_templates.tsv``) is annotated by its template id: category (or ``benign``), role,
a one-line meaning, optionally the condition in the source that prints it and other categories it
can mean. One entry lists every id that is the same message (the same call site worded by several
releases), so a rule or a diagnosis keyed by one id holds for every release's wording.

This module loads and validates those files (problems as ``file:line: message``, like the rule
loader), indexes them by template id, checks them against the catalogs (ids that do not exist,
messages left unannotated) and resolves the catalog id of a parsed event. Standard library only,
plus PyYAML when reading the YAML sources; the browser gets the compiled copy
(:meth:`Annotations.to_json` / :meth:`Annotations.from_json`, carried in ``kb.json``).

One module, over 500 lines: the annotation files, the catalog ids they must cover (``catalog_ids``,
``check_ids``, ``completeness``) and the ``Resolver`` that gives an event its id are one contract keyed
by template id, and a change to how ids are formed changes all three together.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

SCHEMA = "logdoc.annotations/1"
SOURCES = ("nccl", "torch", "gloo")
ROLES = ("root_cause", "symptom", "context", "benign")
FILE_KEYS = ("source", "description", "annotations")
ENTRY_REQUIRED = ("ids", "category", "role", "meaning")
ENTRY_OPTIONAL = ("condition", "differential")
# The levels of a catalog message that must be annotated (everything an NCCL WARN or a PyTorch /
# Gloo error or warning can print).
NCCL_LEVELS = ("WARN",)
TORCH_LEVELS = ("ERROR", "FATAL", "WARN")


def _problem(file: str, line: int, message: str, level: str = "error"):
    from .kb.schema import Problem

    return Problem(file, line, None, message, level)


@dataclass(frozen=True)
class Annotation:
    ids: tuple[str, ...]
    category: str
    role: str
    meaning: str
    condition: str | None = None
    differential: tuple[str, ...] = ()
    source: str = ""
    file: str = "<memory>"
    line: int = 0

    @property
    def benign(self) -> bool:
        return self.role == "benign"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ids": list(self.ids), "category": self.category, "role": self.role,
                               "meaning": self.meaning}
        if self.condition:
            out["condition"] = self.condition
        if self.differential:
            out["differential"] = list(self.differential)
        out["source"] = {"kind": self.source, "file": Path(self.file).name, "line": self.line}
        return out


@dataclass
class Annotations:
    """Every annotation, by template id."""

    entries: list[Annotation] = field(default_factory=list)
    by_id: dict[str, Annotation] = field(default_factory=dict)
    problems: list = field(default_factory=list)  # kb.Problem

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, tid: object) -> bool:
        return tid in self.by_id

    def get(self, tid: str | None) -> Annotation | None:
        return self.by_id.get(tid) if tid else None

    def group(self, tid: str) -> tuple[str, ...]:
        """Every id of ``tid``'s entry (the same message in every release's words), else ``(tid,)``."""
        a = self.by_id.get(tid)
        return a.ids if a is not None else (tid,)

    def add(self, a: Annotation) -> None:
        self.entries.append(a)
        for tid in a.ids:
            self.by_id.setdefault(tid, a)

    # --- the compiled copy (kb.json)
    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "annotations": [a.to_dict() for a in self.entries]}

    @classmethod
    def from_json(cls, data: Any) -> "Annotations":
        out = cls()
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            out.problems.append(_problem("<compiled>", 0, f"not compiled annotations ({SCHEMA})"))
            return out
        for item in data.get("annotations") or ():
            src = item.get("source") or {}
            out.add(Annotation(ids=tuple(item["ids"]), category=item["category"], role=item["role"],
                               meaning=item["meaning"], condition=item.get("condition"),
                               differential=tuple(item.get("differential") or ()),
                               source=str(src.get("kind", "")), file=str(src.get("file", "<compiled>")),
                               line=int(src.get("line", 0) or 0)))
        return out


# --------------------------------------------------------------------------------------------
# loading and the schema

def annotation_files(d: Path) -> list[Path]:
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml")
                  and not p.name.startswith("."))


def load_annotations(d: str | Path) -> Annotations:
    """Load and validate every ``*.yaml`` of folder ``d`` (a missing folder: no annotations)."""
    from .kb.yamlfile import _yaml

    out = Annotations()
    seen: dict[str, tuple[str, int]] = {}
    if _yaml is None:
        return out
    for path in annotation_files(Path(d)):
        entries, problems = _read_file(path)
        out.problems.extend(problems)
        for a in entries:
            fresh = []
            for tid in a.ids:
                if tid in seen:
                    f, ln = seen[tid]
                    out.problems.append(_problem(a.file, a.line, f"id {tid} annotated twice (first at {f}:{ln})"))
                else:
                    seen[tid] = (a.file, a.line)
                    fresh.append(tid)
            if fresh:
                out.add(a if len(fresh) == len(a.ids) else Annotation(**{**a.__dict__, "ids": tuple(fresh)}))
    return out


_FILE_MEMO: dict[str, tuple[tuple, list, list]] = {}


def _read_file(path: Path) -> tuple[list[Annotation], list]:
    """The valid entries of one file and its problems; kept for the process while the file is
    unchanged (a process that loads the knowledge base again does not parse 1,500 entries again)."""
    from .kb.yamlfile import _load_yaml_file

    try:
        st = path.stat()
        key = (st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    hit = _FILE_MEMO.get(str(path))
    if key is not None and hit is not None and hit[0] == key:
        return list(hit[1]), list(hit[2])
    data, lines, problems = _load_yaml_file(path, fast=True)
    entries = _entries(data, lines, str(path), problems)
    if key is not None:
        _FILE_MEMO[str(path)] = (key, entries, problems)
    return list(entries), list(problems)


def _entries(data: Any, lines: Mapping[str, int], file: str, problems: list) -> list[Annotation]:
    from .kb.schema import CATEGORIES

    if data is None:
        return []
    if not isinstance(data, Mapping):
        problems.append(_problem(file, 1, "an annotation file is a mapping with source, description and annotations"))
        return []
    for key in data:
        if key not in FILE_KEYS:
            problems.append(_problem(file, lines.get(str(key), 1), f"unknown top-level key {key!r}"))
    source = data.get("source")
    if source not in SOURCES:
        problems.append(_problem(file, lines.get("source", 1), f"source must be one of {', '.join(SOURCES)}"))
    items = data.get("annotations")
    if not isinstance(items, list):
        problems.append(_problem(file, lines.get("annotations", 1), "annotations must be a list"))
        return []
    out = []
    for i, e in enumerate(items):
        base = f"annotations.{i}"
        line0 = lines.get(base, 1)

        def at(key: str) -> int:
            return lines.get(f"{base}.{key}", line0)

        bad = False

        def err(key: str, msg: str) -> None:
            nonlocal bad
            bad = True
            problems.append(_problem(file, at(key), msg))

        if not isinstance(e, Mapping):
            err("", "an annotation is a mapping with ids, category, role, meaning")
            continue
        for key in e:
            if key not in ENTRY_REQUIRED + ENTRY_OPTIONAL:
                err(str(key), f"unknown key {key!r}")
        for key in ENTRY_REQUIRED:
            if e.get(key) in (None, "", []):
                err(key, f"missing {key}")
        ids = e.get("ids")
        if ids is not None and not (isinstance(ids, list) and ids and all(isinstance(x, str) and x for x in ids)):
            err("ids", "ids must be a non-empty list of template ids")
        elif isinstance(ids, list) and len(set(ids)) != len(ids):
            err("ids", "an id is listed twice in the same entry")
        cat, role = e.get("category"), e.get("role")
        if cat is not None and cat not in CATEGORIES + ("benign",):
            err("category", f"unknown category {cat!r} (one of the 26 categories, or benign)")
        if role is not None and role not in ROLES:
            err("role", f"role must be one of {', '.join(ROLES)}")
        if cat is not None and role is not None and (cat == "benign") != (role == "benign"):
            err("role", "category benign goes with role benign, and only with it")
        meaning = e.get("meaning")
        if meaning is not None and not (isinstance(meaning, str) and "\n" not in meaning.strip()):
            err("meaning", "meaning must be one line of text")
        cond = e.get("condition")
        if cond is not None and not isinstance(cond, str):
            err("condition", "condition must be text")
        diff = e.get("differential")
        if diff is not None:
            if not (isinstance(diff, list) and all(isinstance(c, str) for c in diff)):
                err("differential", "differential must be a list of categories")
            else:
                for c in diff:
                    if c not in CATEGORIES:
                        err("differential", f"unknown category {c!r} in differential")
                    elif c == cat:
                        err("differential", f"differential repeats the category {c!r}")
        if bad:
            continue
        out.append(Annotation(ids=tuple(ids), category=cat, role=role, meaning=meaning.strip(),
                              condition=cond.strip() if isinstance(cond, str) else None,
                              differential=tuple(diff or ()), source=str(source or ""), file=file, line=line0))
    return out


# --------------------------------------------------------------------------------------------
# the catalogs

@dataclass(frozen=True)
class CatalogIds:
    """Every template id of the two message catalogs, and those that must be annotated."""

    known: dict[str, str]  # id -> source (nccl, torch, gloo, logdoc)
    required: dict[str, tuple[str, ...]]  # group name -> ids that must be annotated


def _tsv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("".join(l for l in text.splitlines(True) if not l.startswith("#"))),
                               delimiter="\t"))


_CATALOG_MEMO: dict[tuple, CatalogIds] = {}


def catalog_ids() -> CatalogIds:
    from .resources import data_dir

    g = data_dir("grammars")
    key = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in (g / "nccl_messages.tsv", g / "torch_templates.tsv"))
    got = _CATALOG_MEMO.get(key)
    if got is None:
        got = _CATALOG_MEMO[key] = _catalog_ids()
    return got


def _catalog_ids() -> CatalogIds:
    from .resources import grammar_text

    known: dict[str, str] = {}
    nccl_req: list[str] = []
    torch_req: list[str] = []
    for row in _tsv(grammar_text("nccl_messages.tsv")):
        known[row["id"]] = "nccl"
        if any(lv in row["levels"].split(",") for lv in NCCL_LEVELS):
            nccl_req.append(row["id"])
    for row in _tsv(grammar_text("torch_templates.tsv")):
        known[row["id"]] = row["id"].split(":", 1)[0]
        if row["level"] in TORCH_LEVELS:
            torch_req.append(row["id"])
    return CatalogIds(known, {"nccl WARN": tuple(nccl_req), "torch/gloo ERROR/FATAL/WARN": tuple(torch_req)})


def check_ids(ann: Annotations, catalog: CatalogIds | None = None) -> list:
    """Problems: ids the catalogs do not know, or an entry whose ids belong to another source."""
    catalog = catalog or catalog_ids()
    problems = []
    for a in ann.entries:
        for tid in a.ids:
            src = catalog.known.get(tid)
            if src is None:
                problems.append(_problem(a.file, a.line, f"id {tid} is not in the message catalogs "
                                         "(grammars/nccl_messages.tsv, grammars/torch_templates.tsv)"))
            elif a.source == "nccl" and src != "nccl" or a.source in ("torch", "gloo") and src == "nccl":
                problems.append(_problem(a.file, a.line, f"id {tid} is a {src} message in a {a.source} file"))
    return problems


def completeness(ann: Annotations, catalog: CatalogIds | None = None) -> dict[str, tuple[int, int]]:
    """Per required group: (annotated, total)."""
    catalog = catalog or catalog_ids()
    return {name: (sum(1 for t in ids if t in ann.by_id), len(ids)) for name, ids in catalog.required.items()}


def missing(ann: Annotations, catalog: CatalogIds | None = None) -> list[str]:
    catalog = catalog or catalog_ids()
    return [t for ids in catalog.required.values() for t in ids if t not in ann.by_id]


# --------------------------------------------------------------------------------------------
# the catalog id of an event

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
        return got


def _torch_lookup(text: str) -> str | None:
    from .classify.torch.catalog import match_templates

    text = text.strip()
    body = text.split("\n", 1)[0] if "\n" in text and len(text) > 2000 else text
    for cand in (body, _strip_exception_type(body)):
        hit = match_templates(cand, ("body", "line", "gloo"))
        if hit is not None:
            return hit[0].id
    return _prefix_lookup(_strip_exception_type(body))


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
