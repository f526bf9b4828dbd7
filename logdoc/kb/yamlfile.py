"""YAML with the line of every key: the one reader of knowledge YAML (rules, annotations,
differentials), so that every problem can name its line. ``yaml`` is optional: without it
(the browser) the knowledge base comes from its compiled JSON copy.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

try:  # optional: the YAML sources; the compiled JSON needs only the stdlib
    import yaml as _yaml
except ImportError:  # pragma: no cover
    _yaml = None

from .schema import Problem


def _yaml_lines(node: Any, path: str = "", out: dict[str, int] | None = None,
                dups: list[tuple[str, int]] | None = None, _seen: set[int] | None = None) -> dict[str, int]:
    out = {} if out is None else out
    if _yaml is None:
        return out
    # a node reached again through an alias is not walked again (a "billion laughs" file would
    # take forever): its lines are those of its first place
    _seen = set() if _seen is None else _seen
    if isinstance(node, (_yaml.MappingNode, _yaml.SequenceNode)):
        if id(node) in _seen:
            return out
        _seen.add(id(node))
    if isinstance(node, _yaml.MappingNode):
        seen: set[str] = set()
        for knode, vnode in node.value:
            key = str(knode.value)
            p = f"{path}.{key}" if path else key
            if dups is not None and key in seen:
                dups.append((p, knode.start_mark.line + 1))
            seen.add(key)
            out[p] = knode.start_mark.line + 1
            _yaml_lines(vnode, p, out, dups, _seen)
    elif isinstance(node, _yaml.SequenceNode):
        for i, item in enumerate(node.value):
            p = f"{path}.{i}" if path else str(i)
            out[p] = item.start_mark.line + 1
            _yaml_lines(item, p, out, dups, _seen)
    return out


def _load_yaml_file(path: Path, fast: bool = False) -> tuple[Any, dict[str, int], list[Problem]]:
    """``fast``: libyaml's loader when PyYAML has it (the large annotation files)."""
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:  # unreadable, or not UTF-8: a problem of that file, not fatal
        problems.append(Problem(str(path), 1, None, f"cannot read the file: {exc}"))
        return None, {}, problems
    assert _yaml is not None
    loader = None
    try:
        cls = getattr(_yaml, "CSafeLoader", _yaml.SafeLoader) if fast else _yaml.SafeLoader
        loader = cls(text)  # raises on characters YAML refuses (NUL ...)
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except (_yaml.YAMLError, RecursionError) as exc:  # RecursionError: nested thousands deep
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        what = "nested too deeply" if isinstance(exc, RecursionError) else exc
        problems.append(Problem(str(path), line, None, f"YAML error: {what}".replace("\n", " ")))
        return None, {}, problems
    finally:
        if loader is not None:
            loader.dispose()
    dups: list[tuple[str, int]] = []
    lines = _yaml_lines(node, "", None, dups) if node is not None else {}
    for p, line in dups:
        problems.append(Problem(str(path), line, None, f"duplicate key {p.rpartition('.')[2]!r} ({p})"))
    return data, lines, problems
