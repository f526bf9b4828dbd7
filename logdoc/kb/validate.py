"""Building a rule from its YAML data: :func:`build_rule` checks every key (ids, texts, the match,
``with``/``without`` clauses, examples, placeholders that can be filled) and reports each problem
with its line.
"""
from __future__ import annotations

import re as _re
from functools import lru_cache
from typing import Any, Mapping

from .conditions import _Cond
from .patterns import MATCH_TIMEOUT, _Pattern, regex_module
from .render import TemplateError, parse_template, template_names
from .rule import Rule, _Clause
from .schema import (EXAMPLE_ROLES, APPLIES_TO_KEYS, BUILTIN_ID, CATEGORIES, CLAUSE_KEYS, EVENT_ATTRS, KIND_FIELDS, MATCH_KEYS,
                     OPERATORS, ROLES, RULE_KEYS_OPTIONAL, RULE_KEYS_REQUIRED, SCOPES, SEVERITIES, TOMBSTONE_KEYS,
                     USER_ID, Problem)
from .versions import _VERSION_CLAUSE
from ..lazyre import lazy_re

_IDENT = lazy_re(r"^[A-Za-z_][A-Za-z0-9_]*$")

class _Checker:
    """Validates one rule dict, collecting problems with line numbers."""

    def __init__(self, file: str, lines: Mapping[str, int], base_line: int, rule_id: str | None,
                 origin: str) -> None:
        self.file = file
        self.lines = lines
        self.base = base_line
        self.rule_id = rule_id
        self.origin = origin
        self.problems: list[Problem] = []

    def line_of(self, path: str) -> int:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path.rpartition(".")[0]
        return self.base

    def err(self, path: str, msg: str) -> None:
        self.problems.append(Problem(self.file, self.line_of(path), self.rule_id, msg))

    def warn(self, path: str, msg: str) -> None:
        self.problems.append(Problem(self.file, self.line_of(path), self.rule_id, msg, "warning"))

    @property
    def failed(self) -> bool:
        return any(p.level == "error" for p in self.problems)


def _check_regex(ck: _Checker, path: str, pattern: Any) -> tuple[str, ...] | None:
    if not isinstance(pattern, str) or not pattern:
        ck.err(path, "pattern must be a non-empty string")
        return None
    try:
        std = _re.compile(pattern)
    except _re.error as exc:
        ck.err(path, f"pattern does not compile under re: {exc}")
        return None
    _regex = regex_module()
    if _regex is not None:
        try:
            alt = _regex.compile(pattern)
        except Exception as exc:  # regex.error
            ck.err(path, f"pattern does not compile under regex: {exc}")
            return None
        if tuple(alt.groupindex) != tuple(std.groupindex) and set(alt.groupindex) != set(std.groupindex):
            ck.err(path, "pattern has different named groups under re and regex")
    for bad in ("(?>", "*+", "++", "?+", "\\p{", "\\P{", "(?|"):
        if bad in pattern:
            ck.warn(path, f"pattern uses {bad!r}, outside the subset shared by re (Python 3.10) and regex")
    return tuple(std.groupindex)


def _check_fields(ck: _Checker, path: str, spec: Any, captures: set[str], prefix: str = "") -> None:
    if not isinstance(spec, Mapping) or not spec:
        ck.err(path, "fields must be a non-empty mapping of field name to condition")
        return
    for name, cond in spec.items():
        if not isinstance(name, str) or not _re.fullmatch(r"[A-Za-z_][\w.]*", name):
            ck.err(path, f"bad field name {name!r}")
            continue
        _check_cond(ck, f"{path}.{name}", cond, captures, prefix + name)


def _check_cond(ck: _Checker, path: str, cond: Any, captures: set[str], name: str) -> None:
    if not isinstance(cond, Mapping):
        if isinstance(cond, (list, dict)):
            ck.err(path, "a list is not a condition; use {in: [...]}")
        return
    if not cond:
        ck.err(path, "empty condition")
    for op, arg in cond.items():
        p = f"{path}.{op}"
        if op not in OPERATORS:
            ck.err(p, f"unknown operator {op!r} (known: {', '.join(OPERATORS)})")
        elif op in ("in", "not_in"):
            if not isinstance(arg, list) or not arg:
                ck.err(p, f"{op} needs a non-empty list")
        elif op == "exists":
            if not isinstance(arg, bool):
                ck.err(p, "exists needs true or false")
        elif op in ("lt", "le", "gt", "ge"):
            if not isinstance(arg, (int, float)) or isinstance(arg, bool):
                ck.err(p, f"{op} needs a number")
        elif op in ("matches", "not_matches"):
            _check_regex(ck, p, arg)
        elif op == "len":
            if isinstance(arg, Mapping):
                _check_cond(ck, p, arg, captures, name + ".len")
            elif not isinstance(arg, int):
                ck.err(p, "len needs a number or a condition")
        elif op == "any":
            if isinstance(arg, Mapping) and arg and all(k not in OPERATORS for k in arg):
                sub: set[str] = set()
                _check_fields(ck, p, arg, sub)
                for k in arg:
                    captures.add(f"{name}.{k}")
                captures.add(f"{name}.*")  # any key of the matched element
            else:
                _check_cond(ck, p, arg if isinstance(arg, Mapping) else {"eq": arg}, captures, name)
                captures.add(f"{name}.item")


def _check_version_spec(ck: _Checker, path: str, spec: Any) -> None:
    if not isinstance(spec, str) or not spec.strip():
        ck.err(path, "version range must be a string such as '>=2.12.10,<2.27'")
        return
    for clause in spec.split(","):
        if not _VERSION_CLAUSE.match(clause):
            ck.err(path, f"bad version clause {clause.strip()!r}")


def _check_examples(ck: _Checker, path: str, ex: Any) -> dict[str, list]:
    out: dict[str, list] = {"match": [], "no_match": []}
    if ex is None:
        ck.warn(path, "no examples")
        return out
    if not isinstance(ex, Mapping):
        ck.err(path, "examples must be a mapping with match and no_match lists")
        return out
    for key in ex:
        if key not in ("match", "no_match"):
            ck.err(f"{path}.{key}", f"unknown examples key {key!r}")
    for key in ("match", "no_match"):
        items = ex.get(key) or []
        if not isinstance(items, list):
            ck.err(f"{path}.{key}", f"examples.{key} must be a list")
            continue
        for i, item in enumerate(items):
            p = f"{path}.{key}.{i}"
            if isinstance(item, str):
                if key == "match" and len([ln for ln in item.splitlines() if ln.strip()]) > 1:
                    ck.warn(p, "a match example of several lines says where: {log: ..., where: <text of the "
                               "evidence line>}")
            elif isinstance(item, Mapping) and set(item) <= {"log", "files", "events", "note", "where", "role"} and (
                    sum(k in item for k in ("log", "files", "events")) == 1):
                if "log" in item and not (isinstance(item["log"], str) and item["log"].strip()):
                    ck.err(p, "log must be log text")
                if "files" in item and not (isinstance(item["files"], Mapping) and item["files"] and all(
                        isinstance(k, str) and isinstance(v, str) for k, v in item["files"].items())):
                    ck.err(p, "files must map file names to log text")
                if "events" in item and not (isinstance(item["events"], list) and all(
                        isinstance(e, Mapping) and "kind" in e for e in item["events"])):
                    ck.err(p, "events must be a list of event mappings with a kind")
                where = item.get("where")
                if where is not None and not (
                        (isinstance(where, str) and where.strip())
                        or (isinstance(where, list) and where and all(isinstance(w, str) and w.strip() for w in where))):
                    ck.err(f"{p}.where", "where is a piece of the evidence line's text, or a list of them")
                if ("where" in item or "role" in item) and (key != "match" or "events" in item):
                    ck.err(p, "where and role belong to match examples of log text")
                if "role" in item and item["role"] not in EXAMPLE_ROLES:
                    ck.err(f"{p}.role", f"role must be one of {', '.join(EXAMPLE_ROLES)}")
                if key == "match" and "events" not in item and "where" not in item and not (
                        "log" in item and len([ln for ln in str(item["log"]).splitlines() if ln.strip()]) == 1):
                    ck.warn(p, "a match example of several lines says where: add where: <text of the evidence line>")
            else:
                ck.err(p, "an example is log text, {log: text, where: ..., role: ...}, {files: {name: text}} "
                          "or {events: [...]}")
                continue
            out[key].append(item)
    if not out["match"]:
        ck.warn(f"{path}.match", "no match example")
    return out


def _placeholders(text: str) -> list[str]:
    return template_names(text)


def build_rule(data: Any, *, file: str = "<memory>", line: int = 0, lines: Mapping[str, int] | None = None,
               origin: str = "builtin", timeout: float | None = MATCH_TIMEOUT) -> tuple[Rule | None, list[Problem]]:
    """Validate one rule mapping and build it. Returns (rule or None, problems)."""
    lines = lines or {}
    rid = data.get("id") if isinstance(data, Mapping) else None
    ck = _Checker(file, lines, line, rid if isinstance(rid, str) else None, origin)
    if not isinstance(data, Mapping):
        ck.err("", "a rule must be a mapping")
        return None, ck.problems
    if not isinstance(rid, str) or not rid:
        ck.err("id", "missing id")
        return None, ck.problems
    idre = BUILTIN_ID if origin == "builtin" else USER_ID
    if not (idre.match(rid) or BUILTIN_ID.match(rid)):
        ck.err("id", f"bad id {rid!r}: LD + 3 digits (1xx-9xx by family) or 4 digits (1xxx-9xxx)"
               + ("" if origin == "builtin" else ", or your own PREFIX + digits"))
    # tombstone
    if "retired" in data:
        for key in data:
            if key not in TOMBSTONE_KEYS:
                ck.err(key, f"retired rule must not have {key!r} (a tombstone has: {', '.join(TOMBSTONE_KEYS)})")
        if not isinstance(data["retired"], str) or not data["retired"].strip():
            ck.err("retired", "retired needs the reason as text")
        if ck.failed:
            return None, ck.problems
        return Rule(id=rid, data=dict(data), file=file, line=line, origin=origin,
                    retired=data["retired"]), ck.problems

    for key in data:
        if key not in RULE_KEYS_REQUIRED + RULE_KEYS_OPTIONAL:
            ck.err(key, f"unknown key {key!r}")
    for key in RULE_KEYS_REQUIRED:
        if key not in data or data[key] in (None, "", []):
            ck.err(key, f"missing {key}")
    if data.get("category") is not None and data.get("category") not in CATEGORIES:
        ck.err("category", f"unknown category {data.get('category')!r}")
    if data.get("severity") is not None and data.get("severity") not in SEVERITIES:
        ck.err("severity", f"severity must be one of {', '.join(SEVERITIES)}")
    if data.get("role") is not None and data.get("role") not in ROLES:
        ck.err("role", f"role must be one of {', '.join(ROLES)}")
    for key in ("title", "explanation"):
        if key in data and not isinstance(data[key], str):
            ck.err(key, f"{key} must be text")
    for key in ("fix", "confirm", "not_when"):
        if key in data and not (isinstance(data[key], list) and all(isinstance(s, str) and s.strip()
                                                                      for s in data[key])):
            ck.err(key, f"{key} must be a list of non-empty strings")
    if "origin" in data:
        o = data["origin"]
        if not (isinstance(o, str) or isinstance(o, list) and o and all(isinstance(x, str) for x in o)):
            ck.err("origin", "origin must be a value name or a list of them (fields holding the origin rank(s))")
    if "explained_by" in data:
        eb = data["explained_by"]
        kinds = eb.get("kind") if isinstance(eb, dict) else eb
        kinds = [kinds] if isinstance(kinds, str) and isinstance(eb, dict) else kinds
        if not (isinstance(kinds, list) and kinds and all(isinstance(k, str) and k.strip() for k in kinds)
                and (not isinstance(eb, dict) or set(eb) <= {"kind", "scope"} and eb.get("scope", "job") in ("job", "rank"))):
            ck.err("explained_by", "explained_by must be a list of event kinds (fnmatch patterns such as 'torch.*'), "
                   "or {kind: [...], scope: job|rank}")
    if "priority" in data and (not isinstance(data["priority"], int) or isinstance(data["priority"], bool)):
        ck.err("priority", "priority must be an integer")
    if "confidence" in data and not (isinstance(data["confidence"], (int, float))
                                     and 0 <= data["confidence"] <= 1):
        ck.err("confidence", "confidence must be a number between 0 and 1")
    docs = data.get("docs")
    if docs is not None:
        if not isinstance(docs, list):
            ck.err("docs", "docs must be a list of {title, url}")
        else:
            for i, d in enumerate(docs):
                if not (isinstance(d, Mapping) and set(d) == {"title", "url"} and isinstance(d["url"], str)
                        and d["url"].startswith(("https://", "http://"))):
                    ck.err(f"docs.{i}", "each doc is {title, url} with an http(s) url")
    at = data.get("applies_to")
    if at is not None:
        if not isinstance(at, Mapping):
            ck.err("applies_to", "applies_to must map nccl/torch/cuda/gloo to a version range")
        else:
            for k, v in at.items():
                if k not in APPLIES_TO_KEYS:
                    ck.err(f"applies_to.{k}", f"unknown component {k!r}")
                else:
                    _check_version_spec(ck, f"applies_to.{k}", v)
    examples = _check_examples(ck, "examples", data.get("examples"))

    # match
    allowed: set[str] = set(EVENT_ATTRS)
    allowed.add("log.*")  # the event's attributes, whatever its fields are called
    open_fields = by_template = False
    pending: set[str] = set()  # placeholders only the templates' messages can fill (knowledge.attach_knowledge)
    kinds: tuple[str, ...] = ()
    templates: frozenset[str] = frozenset()
    pattern = None
    cond = None
    clauses: dict[str, list[_Clause]] = {"with": [], "without": []}
    match = data.get("match")
    if match is not None and not isinstance(match, Mapping):
        ck.err("match", "match must be a mapping")
    elif isinstance(match, Mapping):
        for key in match:
            if key not in MATCH_KEYS:
                ck.err(f"match.{key}", f"unknown match key {key!r}")
        tpl_spec = match.get("template")
        if tpl_spec is not None:
            titems = [tpl_spec] if isinstance(tpl_spec, str) else tpl_spec
            if not (isinstance(titems, list) and titems and all(isinstance(t, str) and t.strip() for t in titems)):
                ck.err("match.template", "template must be a catalog template id or a non-empty list of them")
            else:
                templates = frozenset(t.strip() for t in titems)
        if "kind" in match or tpl_spec is None:
            kinds = _kinds(ck, "match.kind", match.get("kind"))
        else:
            open_fields = True  # any kind the template's message is read as
            by_template = True  # (its placeholders are checked against what its messages capture)
        for k in kinds:
            known = KIND_FIELDS.get(k)
            if k.endswith("*") or known is None:
                open_fields = True
            else:
                allowed.update(known)
        if "pattern" in match:
            groups = _check_regex(ck, "match.pattern", match["pattern"])
            allowed.update(groups or ())
        caps: set[str] = set()
        if "fields" in match:
            _check_fields(ck, "match.fields", match["fields"], caps)
            allowed.update(caps)
        for ckey in ("with", "without"):
            if ckey not in match:
                continue
            spec = match[ckey]
            items = spec if isinstance(spec, list) else [spec]
            aliases = set()
            for i, cl in enumerate(items):
                p = f"match.{ckey}" + (f".{i}" if isinstance(spec, list) else "")
                if not isinstance(cl, Mapping):
                    ck.err(p, f"{ckey} must be a mapping (or a list of mappings) with kind, pattern, fields, scope, as")
                    continue
                for key in cl:
                    if key not in CLAUSE_KEYS:
                        ck.err(f"{p}.{key}", f"unknown {ckey} key {key!r}")
                ckinds = _kinds(ck, f"{p}.kind", cl.get("kind"))
                scope = cl.get("scope", "rank")
                if scope not in SCOPES:
                    ck.err(f"{p}.scope", f"scope must be one of {', '.join(SCOPES)}")
                optional = cl.get("optional", False)
                if not isinstance(optional, bool):
                    ck.err(f"{p}.optional", "optional must be true or false")
                elif optional and ckey == "without":
                    ck.err(f"{p}.optional", "optional only makes sense in a with clause")
                alias = cl.get("as")
                if alias is not None:
                    if ckey == "without":
                        ck.err(f"{p}.as", "a without clause has no event to name")
                    elif not (isinstance(alias, str) and _IDENT.match(alias)) or alias in allowed:
                        ck.err(f"{p}.as", f"bad alias {alias!r}")
                    aliases.add(alias)
                cgroups: tuple[str, ...] = ()
                if "pattern" in cl:
                    cgroups = _check_regex(ck, f"{p}.pattern", cl["pattern"]) or ()
                ccaps: set[str] = set()
                if "fields" in cl:
                    _check_fields(ck, f"{p}.fields", cl["fields"], ccaps)
                if ckey == "with":
                    name = alias or f"with{i}"
                    allowed.update(cgroups)
                    allowed.update(ccaps)
                    allowed.update(f"{name}.{g}" for g in cgroups)
                    allowed.add(f"{name}.*")
                if not ck.failed:
                    try:
                        clauses[ckey].append(_Clause(
                            kinds=ckinds,
                            pattern=_Pattern(cl["pattern"], timeout) if "pattern" in cl else None,
                            fields=_Cond(cl["fields"], timeout) if "fields" in cl else None,
                            scope=scope, alias=alias if ckey == "with" else None,
                            optional=bool(optional) and ckey == "with"))
                    except Exception as exc:  # pragma: no cover - validated above
                        ck.err(p, str(exc))
        if not ck.failed:
            try:
                pattern = _Pattern(match["pattern"], timeout) if "pattern" in match else None
                cond = _Cond(match["fields"], timeout) if "fields" in match else None
            except Exception as exc:  # pragma: no cover - validated above
                ck.err("match", str(exc))

    # placeholders that can never be filled
    for key in ("title", "explanation", "fix", "confirm", "not_when"):
        val = data.get(key)
        texts = [val] if isinstance(val, str) else (val if isinstance(val, list) else [])
        for t in texts:
            if not isinstance(t, str):
                continue
            try:
                parse_template(t)
            except TemplateError as exc:
                ck.err(key, f"bad template: {exc}")
                continue
            for name in _placeholders(t):
                if not _fillable(name, allowed, open_fields):
                    ck.warn(key, f"placeholder {{{name}}} can never be filled (not a field of "
                            f"{', '.join(kinds) or 'the matched kinds'}, a named group or an event attribute)")
                elif by_template and not _fillable(name, allowed, False):
                    pending.add(name)
    if ck.failed:
        return None, ck.problems
    norm = dict(data)
    norm["match"] = dict(match)  # type: ignore[arg-type]
    if kinds or not templates:
        norm["match"]["kind"] = list(kinds)
    if templates:
        norm["match"]["template"] = sorted(templates)
    norm["examples"] = examples
    rule = Rule(id=rid, data=norm, file=file, line=line, origin=origin, _kinds=kinds, _pattern=pattern,
                _fields=cond, _with=tuple(clauses["with"]), _without=tuple(clauses["without"]),
                _templates=templates, _template_placeholders=frozenset(pending))
    return rule, ck.problems


def _kinds(ck: _Checker, path: str, spec: Any) -> tuple[str, ...]:
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list) or not items or not all(isinstance(k, str) and k for k in items):
        ck.err(path, "kind must be an event kind or a non-empty list of kinds")
        return ()
    for k in items:
        if not _re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?|[a-z0-9_]+\*", k):
            ck.err(path, f"bad event kind {k!r}")
        elif not k.endswith("*") and k not in KIND_FIELDS:
            ck.err(path, f"unknown event kind {k!r}: nothing emits it (the kinds are listed in logdoc/kinds.py)")
        elif k.endswith(".*") and k not in KIND_FIELDS:
            ck.err(path, f"{k!r} names no event kind (the kinds are listed in logdoc/kinds.py)")
    return tuple(items)


def _fillable(name: str, allowed: set[str], open_fields: bool) -> bool:
    if name in allowed:
        return True
    head = name.split(".")[0]
    if f"{head}.*" in allowed:
        return True
    for a in allowed:  # `{failures.*}` style captures
        if a.endswith(".*") and name.startswith(a[:-1]):
            return True
    if open_fields and "." not in name:
        return True
    # dotted access into a known field (e.g. {values.2.21.5} is not useful, but {interfaces.0.name} is)
    return head in allowed and head not in EVENT_ATTRS


@lru_cache(maxsize=1)
def _catalog_rows() -> tuple[dict[str, tuple[str, frozenset[str]]], dict[str, frozenset[str]]]:
    """PyTorch/Gloo rows: id -> (kind, the format's placeholders); NCCL rows: id -> its levels."""
    from ..resources import grammar_text

    torch: dict[str, tuple[str, frozenset[str]]] = {}
    for raw in grammar_text("torch_templates.tsv").splitlines():
        parts = raw.split("\t")
        if len(parts) >= 6 and not raw.startswith(("#", "id\t")):
            torch[parts[0]] = (parts[1], frozenset(_FORMAT_NAME.findall(parts[5])))
    nccl: dict[str, frozenset[str]] = {}
    for raw in grammar_text("nccl_messages.tsv").splitlines():
        parts = raw.split("\t", 2)
        if len(parts) >= 2 and not raw.startswith(("#", "id\t")):
            nccl[parts[0]] = frozenset(parts[1].split(","))
    return torch, nccl


_FORMAT_NAME = lazy_re(r"\{([a-z_][a-z0-9_]*)(?=[:=}])")


def template_fields(ids) -> frozenset[str] | None:
    """The fields an event whose message is one of the catalog templates ``ids`` can carry: a
    PyTorch/Gloo row's own placeholders and the fields of the kind it is read as; an NCCL format's
    kinds (an NCCL WARN line, or the kinds of NCCL's other lines). None when an id is unknown."""
    from .. import kinds as registry

    torch, nccl = _catalog_rows()
    out: set[str] = set()
    for tid in ids:
        if tid in torch:
            kind, names = torch[tid]
            out |= names
            out |= registry.fields(kind, catalog=False) or frozenset()
        elif tid in nccl:
            read_as = {"nccl.warn"} if nccl[tid] <= {"WARN"} else {
                k for k, spec in registry.KINDS.items() if spec.producer == "logdoc/nccl.py"}
            for k in read_as:
                out |= registry.fields(k, catalog=False) or frozenset()
        else:
            return None
    return frozenset(out)
