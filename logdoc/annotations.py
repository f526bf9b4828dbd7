"""What every catalog message means: the annotations of ``knowledge/annotations/*.yaml``.

Each NCCL WARN format (``grammars/nccl_messages.tsv``) and each PyTorch / Gloo failure message
(``grammars/torch_templates.tsv``) is annotated by its template id: category (or ``benign``), role,
a one-line meaning, optionally the condition in the source that prints it and other categories it
can mean. One entry lists every id that is the same message (the same call site worded by several
releases), so a rule or a diagnosis keyed by one id holds for every release's wording.

This module loads and validates those files (problems as ``file:line: message``, like the rule
loader), indexes them by template id and checks them against the catalogs (ids that do not exist,
messages left unannotated); :mod:`logdoc.resolve` gives the catalog id of a parsed event.
Standard library only, plus PyYAML when reading the YAML sources; the browser gets the compiled copy
(:meth:`Annotations.to_json` / :meth:`Annotations.from_json`, carried in ``kb.json``).
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
ENTRY_OPTIONAL = ("condition", "differential", "by_result")
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
    by_result: bool = False   # the NCCL result the message quotes decides: its family's card, not this one
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
        if self.by_result:
            out["by_result"] = True
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
                               by_result=bool(item.get("by_result")), source=str(src.get("kind", "")), file=str(src.get("file", "<compiled>")),
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
        by_result = e.get("by_result")
        if by_result is not None and not isinstance(by_result, bool):
            err("by_result", "by_result must be true or false")
        if bad:
            continue
        out.append(Annotation(ids=tuple(ids), category=cat, role=role, meaning=meaning.strip(),
                              condition=cond.strip() if isinstance(cond, str) else None,
                              differential=tuple(diff or ()), by_result=bool(by_result), source=str(source or ""), file=file, line=line0))
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
    from .cache import load_table
    from .resources import data_dir

    g = data_dir("grammars")
    paths = (g / "nccl_messages.tsv", g / "torch_templates.tsv")
    key = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in paths)
    got = _CATALOG_MEMO.get(key)
    if got is None:  # (from the user cache when the tables have not changed: reading them is 10 ms a run)
        got = _CATALOG_MEMO[key] = load_table("catalog-ids", [__file__, *paths], _catalog_ids)
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
