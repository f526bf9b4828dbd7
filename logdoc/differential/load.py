"""The differentials of ``knowledge/differentials/*.yaml`` loaded and checked: per category the
candidate cause, per message family its match, texts and candidates (:class:`Cause`, :class:`Family`,
:class:`Differentials`), every mistake a ``Problem`` at its file and line; the compiled JSON form
read back (:meth:`Differentials.from_json`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .conditions import _Condition

SCHEMA = "logdoc.differentials/1"
FILE_KEYS = ("description", "generic", "categories", "families")
CAUSE_KEYS = ("category", "cause", "check", "for", "against")
COND_KEYS = ("kind", "template", "pattern", "fields", "hosts", "ranks", "absent", "says")
FAMILY_KEYS = ("id", "match", "role", "severity", "title", "explanation", "fix", "docs", "causes", "generic_causes",
               "undecided")
FAMILY_MATCH_KEYS = ("kind", "template", "pattern", "fields", "level", "nccl_result")
GENERIC_KEYS = ("title", "explanation", "note_title", "candidate_title", "candidate_explanation")


def _problem(file: str, line: int, message: str, level: str = "error"):
    from ..kb.schema import Problem

    return Problem(file, line, None, message, level)


@dataclass
class Cause:
    category: str
    cause: str
    check: str
    for_: list[_Condition] = field(default_factory=list)
    against: list[_Condition] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Family:
    id: str
    match: dict[str, Any]
    data: dict[str, Any]
    causes: list[Cause]
    _clause: Any = None
    _templates: frozenset[str] = frozenset()


@dataclass
class Differentials:
    categories: dict[str, Cause] = field(default_factory=dict)
    families: list[Family] = field(default_factory=list)
    generic: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=lambda: {"categories": {}, "families": [], "generic": {}})
    problems: list = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **self.raw}

    @classmethod
    def from_json(cls, data: Any) -> "Differentials":
        out = cls()
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            out.problems.append(_problem("<compiled>", 0, f"not compiled differentials ({SCHEMA})"))
            return out
        _add_document(out, {k: data.get(k) for k in ("categories", "families", "generic") if data.get(k)},
                      {}, "<compiled>")
        return out


def load_differentials(d: str | Path, base: Differentials | None = None) -> Differentials:
    from ..annotations import annotation_files
    from ..kb.yamlfile import _load_yaml_file

    out = base or Differentials()
    for path in annotation_files(Path(d)):
        data, lines, problems = _load_yaml_file(path, fast=True)
        out.problems.extend(problems)
        if data is not None:
            _add_document(out, data, lines, str(path))
    return out


def _add_document(out: Differentials, data: Any, lines: Mapping[str, int], file: str) -> None:
    from ..kb.schema import CATEGORIES

    if not isinstance(data, Mapping):
        out.problems.append(_problem(file, 1, "a differentials file is a mapping (categories, families)"))
        return
    for key in data:
        if key not in FILE_KEYS:
            out.problems.append(_problem(file, lines.get(str(key), 1), f"unknown top-level key {key!r}"))
    generic = data.get("generic") or {}
    if generic:
        if not isinstance(generic, Mapping) or any(k not in GENERIC_KEYS or not isinstance(v, str)
                                                    for k, v in generic.items()):
            out.problems.append(_problem(file, lines.get("generic", 1), f"generic maps {', '.join(GENERIC_KEYS)} to text"))
        else:
            out.generic.update(generic)
            out.raw["generic"].update(generic)
    cats = data.get("categories") or {}
    if not isinstance(cats, Mapping):
        out.problems.append(_problem(file, lines.get("categories", 1), "categories maps a category to its cause"))
        cats = {}
    for cat, spec in cats.items():
        where = f"categories.{cat}"
        if cat not in CATEGORIES:
            out.problems.append(_problem(file, lines.get(where, 1), f"unknown category {cat!r}"))
            continue
        cause = _cause(out, {"category": cat, **spec} if isinstance(spec, Mapping) else spec, lines, where, file)
        if cause is not None:
            if cat in out.categories:
                out.problems.append(_problem(file, lines.get(where, 1), f"category {cat} given twice"))
                continue
            out.categories[cat] = cause
            out.raw["categories"][cat] = dict(spec)
    fams = data.get("families") or []
    if not isinstance(fams, list):
        out.problems.append(_problem(file, lines.get("families", 1), "families must be a list"))
        fams = []
    known = {f.id for f in out.families}
    for i, spec in enumerate(fams):
        where = f"families.{i}"
        fam = _family(out, spec, lines, where, file)
        if fam is None:
            continue
        if fam.id in known:
            out.problems.append(_problem(file, lines.get(where, 1), f"family {fam.id} given twice"))
            continue
        known.add(fam.id)
        out.families.append(fam)
        out.raw["families"].append(dict(spec))


def _check_cond_spec(out: Differentials, spec: Any, lines, where: str, file: str) -> _Condition | None:
    from ..kb.validate import _check_fields, _check_regex, _Checker, _kinds

    if not isinstance(spec, Mapping) or not spec.get("says"):
        out.problems.append(_problem(file, lines.get(where, 1), "a condition is a mapping with says and "
                                     "kind / template / pattern / fields / hosts / ranks"))
        return None
    ck = _Checker(file, {k[len(where) + 1:]: v for k, v in lines.items() if k.startswith(where + ".")},
                  lines.get(where, 1), None, "builtin")
    for key in spec:
        if key not in COND_KEYS:
            ck.err(key, f"unknown condition key {key!r}")
    if "kind" in spec:
        _kinds(ck, "kind", spec["kind"])
    if "pattern" in spec:
        _check_regex(ck, "pattern", spec["pattern"])
    if "fields" in spec:
        _check_fields(ck, "fields", spec["fields"], set())
    for key in ("hosts", "ranks"):
        if key in spec:
            _check_fields(ck, key, {"n": spec[key]} if isinstance(spec[key], Mapping) else {"n": {"eq": spec[key]}}, set())
    if "absent" in spec and not isinstance(spec["absent"], bool):
        ck.err("absent", "absent must be true or false")
    out.problems.extend(p for p in ck.problems)
    if ck.failed:
        return None
    return _Condition(spec)


def _cause(out: Differentials, spec: Any, lines, where: str, file: str) -> Cause | None:
    from ..kb.schema import CATEGORIES

    line = lines.get(where, 1)
    if not isinstance(spec, Mapping):
        out.problems.append(_problem(file, line, "a cause is a mapping with category, cause, check, for, against"))
        return None
    bad = False
    for key in spec:
        if key not in CAUSE_KEYS:
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"unknown key {key!r}"))
            bad = True
    if spec.get("category") not in CATEGORIES:
        out.problems.append(_problem(file, line, f"unknown category {spec.get('category')!r}"))
        bad = True
    for key in ("cause", "check"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"missing {key} (one line of text)"))
            bad = True
    conds: dict[str, list[_Condition]] = {"for": [], "against": []}
    for key in ("for", "against"):
        items = spec.get(key) or []
        if not isinstance(items, list):
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"{key} must be a list of conditions"))
            bad = True
            continue
        for j, item in enumerate(items):
            c = _check_cond_spec(out, item, lines, f"{where}.{key}.{j}", file)
            if c is None:
                bad = True
            else:
                conds[key].append(c)
    if bad:
        return None
    return Cause(category=spec["category"], cause=spec["cause"].strip(), check=spec["check"].strip(),
                 for_=conds["for"], against=conds["against"], raw=dict(spec))


def _family(out: Differentials, spec: Any, lines, where: str, file: str) -> Family | None:
    from ..kb.schema import ROLES

    line = lines.get(where, 1)
    if not isinstance(spec, Mapping) or not isinstance(spec.get("id"), str):
        out.problems.append(_problem(file, line, "a family is a mapping with id, match, title, causes"))
        return None
    bad = False
    for key in spec:
        if key not in FAMILY_KEYS:
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"unknown key {key!r}"))
            bad = True
    match = spec.get("match")
    if not isinstance(match, Mapping) or not match or any(k not in FAMILY_MATCH_KEYS for k in match):
        out.problems.append(_problem(file, lines.get(f"{where}.match", line),
                                     f"match is a mapping of {', '.join(FAMILY_MATCH_KEYS)}"))
        return None
    result = match.get("nccl_result")
    if result is not None and not (isinstance(result, str) or isinstance(result, list)
                                   and all(isinstance(r, str) for r in result)):
        out.problems.append(_problem(file, lines.get(f"{where}.match", line), "nccl_result is a result name or a list of them"))
        return None
    cond = _check_cond_spec(out, {**{k: v for k, v in match.items() if k not in ("level", "nccl_result")},
                                  "says": spec["id"]},
                            lines, f"{where}.match", file)
    if cond is None:
        bad = True
    if "role" in spec and spec["role"] not in ROLES:
        out.problems.append(_problem(file, lines.get(f"{where}.role", line), f"role must be one of {', '.join(ROLES)}"))
        bad = True
    if not isinstance(spec.get("title"), str):
        out.problems.append(_problem(file, line, "missing title"))
        bad = True
    if not isinstance(spec.get("undecided", False), bool):
        out.problems.append(_problem(file, lines.get(f"{where}.undecided", line), "undecided must be true or false"))
        bad = True
    causes = []
    for j, c in enumerate(spec.get("causes") or []):
        cause = _cause(out, c, lines, f"{where}.causes.{j}", file)
        if cause is None:
            bad = True
        else:
            causes.append(cause)
    docs = spec.get("docs") or []
    if not (isinstance(docs, list) and all(isinstance(d, Mapping) and set(d) == {"title", "url"} for d in docs)):
        out.problems.append(_problem(file, lines.get(f"{where}.docs", line), "docs is a list of {title, url}"))
        bad = True
    if bad or cond is None:
        return None
    return Family(id=spec["id"], match=dict(match), data=dict(spec), causes=causes, _clause=cond,
                  _templates=cond.templates)
