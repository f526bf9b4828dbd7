"""Loading the knowledge base: YAML files with the line of every key, user rule folders, the
compiled JSON copy the browser uses (:func:`compile_rules` / :func:`load_compiled`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from .patterns import MATCH_TIMEOUT
from .ruleset import RuleSet
from .schema import FILE_KEYS, SCHEMA, Problem
from .validate import build_rule
from .yamlfile import _load_yaml_file, yaml_module


def _rules_from_document(data: Any, lines: Mapping[str, int], file: str) -> tuple[list[tuple[Any, int, dict[str, int]]], list[Problem]]:
    """Split a rule file into (rule data, line, per-rule line map)."""
    problems: list[Problem] = []
    if data is None:
        return [], problems
    if isinstance(data, list):
        items, prefix = data, ""
    elif isinstance(data, Mapping):
        for key in data:
            if key not in FILE_KEYS and key not in ("schema", "sources"):
                problems.append(Problem(file, lines.get(str(key), 1), None, f"unknown top-level key {key!r}"))
        items = data.get("rules") or []
        prefix = "rules."
        if not isinstance(items, list):
            problems.append(Problem(file, lines.get("rules", 1), None, "rules must be a list"))
            return [], problems
    else:
        problems.append(Problem(file, 1, None, "a rule file is a mapping with a rules list"))
        return [], problems
    out = []
    for i, item in enumerate(items):
        base = f"{prefix}{i}"
        sub = {k[len(base) + 1:]: v for k, v in lines.items() if k.startswith(base + ".")}
        out.append((item, lines.get(base, 1), sub))
    return out, problems


def _add_rules(rs: RuleSet, entries, file: str, origin: str, seen_here: dict[str, tuple[str, int]]) -> None:
    timeout = None if origin == "builtin" else MATCH_TIMEOUT  # built-in patterns are proven bounded
    for data, line, sub in entries:
        rule, problems = build_rule(data, file=file, line=line, lines=sub,
                                    origin="builtin" if origin == "builtin" else "user", timeout=timeout)
        rs.problems.extend(problems)
        if rule is None:
            continue
        if rule.id in seen_here:
            f, l = seen_here[rule.id]
            rs.problems.append(Problem(file, line, rule.id, f"duplicate id (first defined at {f}:{l})"))
            continue
        seen_here[rule.id] = (file, line)
        old = rs.rules.get(rule.id)
        if old is not None and old.origin == "builtin" and rule.origin == "user":
            if old.retired:
                rs.problems.append(Problem(file, line, rule.id,
                                           f"reuses the id of a retired rule ({old.retired})", "warning"))
        rs.add(rule)


def _rule_files(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
                  and not p.name.startswith("."))


def _load_dir(rs: RuleSet, d: Path, origin: str) -> None:
    seen_here: dict[str, tuple[str, int]] = {}
    if not d.is_dir():
        rs.problems.append(Problem(str(d), 0, None, "rule folder not found"))
        return
    files = _rule_files(d)
    _yaml = yaml_module()
    if _yaml is None and not any(p.suffix == ".json" for p in files):
        rs.problems.append(Problem(str(d), 0, None, "PyYAML is not installed and there is no compiled JSON"))
    for path in files:
        if path.suffix == ".json":
            if _yaml is not None and any(p.suffix in (".yaml", ".yml") for p in files):
                continue  # a compiled copy next to its sources: the sources win
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested thousands deep
                rs.problems.append(Problem(str(path), 1, None, f"JSON error: {exc}"))
                continue
            if isinstance(data, Mapping) and data.get("schema") == SCHEMA:
                _add_compiled(rs, data, origin, seen_here)
                if origin == "builtin":
                    from ..knowledge import load_compiled_knowledge

                    load_compiled_knowledge(rs, data)
                continue
            entries, problems = _rules_from_document(data, {}, str(path))
        else:
            if _yaml is None:
                continue
            data, lines, problems0 = _load_yaml_file(path)
            rs.problems.extend(problems0)
            entries, problems = _rules_from_document(data, lines, str(path))
        rs.problems.extend(problems)
        _add_rules(rs, entries, str(path), origin, seen_here)


def _builtin_dir() -> Path:
    from ..resources import data_dir

    return data_dir("knowledge")


def load_rules(dirs: Sequence[str | Path] | None = None, *, extra_dirs: Sequence[str | Path] = ()) -> RuleSet:
    """Load and validate the built-in rules (or ``dirs``), then the user's ``extra_dirs``.

    A rule in ``extra_dirs`` replaces the built-in rule with the same id. Problems are collected
    in ``RuleSet.problems`` as ``file:line: rule ID: message``; a bad rule is left out, the others load.
    """
    rs = RuleSet()
    builtin = [_builtin_dir()] if dirs is None else [Path(x) for x in dirs]
    for d in builtin:
        _load_dir(rs, Path(d), "builtin")
    for d in extra_dirs:
        _load_dir(rs, Path(d), "user")
    from ..knowledge import attach_knowledge

    attach_knowledge(rs, [Path(d) for d in builtin])
    return rs


def compile_rules(rules: RuleSet | Sequence[str | Path] | None = None) -> dict[str, Any]:
    """A JSON-ready copy of the knowledge base (for the browser build, which has no PyYAML)."""
    rs = rules if isinstance(rules, RuleSet) else load_rules(rules)
    out = {
        "schema": SCHEMA,
        "rules": [
            {**r.to_dict(), "source": {"file": Path(r.file).name, "line": r.line, "origin": r.origin}}
            for r in rs
        ],
    }
    from ..knowledge import compile_knowledge

    out.update(compile_knowledge(rs))
    return out


def _add_compiled(rs: RuleSet, data: Mapping[str, Any], origin: str, seen_here: dict) -> None:
    for item in data.get("rules") or []:
        src: Mapping[str, Any] = {}
        if isinstance(item, Mapping):
            item = dict(item)
            src = item.pop("source", None) or {}
        rule_origin = "user" if src.get("origin") == "user" or origin == "user" else "builtin"
        _add_rules(rs, [(item, int(src.get("line", 0) or 0), {})], str(src.get("file") or "<compiled>"),
                   rule_origin, seen_here)


def load_compiled(data: Mapping[str, Any] | str) -> RuleSet:
    """Load a knowledge base produced by :func:`compile_rules` (a dict or its JSON text)."""
    if isinstance(data, str):
        data = json.loads(data)
    rs = RuleSet()
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        rs.problems.append(Problem("<compiled>", 0, None, f"not a compiled knowledge base ({SCHEMA})"))
        return rs
    _add_compiled(rs, data, "builtin", {})
    from ..knowledge import load_compiled_knowledge

    load_compiled_knowledge(rs, data)
    return rs
