"""YAML with the line of every key: the one reader of knowledge YAML (rules, annotations,
differentials), so that every problem can name its line. ``yaml`` is optional: without it
(the browser) the knowledge base comes from its compiled JSON copy.
"""
from __future__ import annotations

import sys
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .schema import Problem


@cache
def yaml_module():
    """PyYAML, or None without it (the sources are optional: the compiled JSON needs only the
    stdlib). Imported when YAML is first read: a run whose knowledge base comes from the user cache
    does not import it (about 15 ms)."""
    try:
        import yaml
    except ImportError:  # pragma: no cover
        return None
    return yaml


def yaml_available() -> bool:
    """Whether :func:`yaml_module` would find PyYAML, without importing it (the cache key)."""
    if "yaml" in sys.modules:
        return sys.modules["yaml"] is not None
    return find_spec("yaml") is not None


def __getattr__(name: str):
    if name == "_yaml":  # the module or None, as this name always gave; imported when asked
        return yaml_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _yaml_lines(node: Any, path: str = "", out: dict[str, int] | None = None,
                dups: list[tuple[str, int]] | None = None, _seen: set[int] | None = None) -> dict[str, int]:
    out = {} if out is None else out
    _yaml = yaml_module()
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
    _yaml = yaml_module()
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
