"""The ``fields`` conditions of a rule: values compared with the operators, ``any:`` captures, dotted
paths into nested fields.
"""
from __future__ import annotations

from typing import Any, Mapping

from .patterns import _Pattern
from .schema import NEGATIVE_OPERATORS, OPERATORS
from ..lazyre import lazy_re

_INT = lazy_re(r"[+-]?\d+")
_FLOAT = lazy_re(r"[+-]?\d+\.\d*")


def _num(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        s = value.strip()
        if not s or not (s[0] in "+-" or s[0].isdigit()):
            return value  # neither pattern can match (a rule compares many values that are words)
        if _INT.fullmatch(s):
            return int(s)
        if _FLOAT.fullmatch(s):
            return float(s)
    return value


def _eq(a: Any, b: Any) -> bool:
    if a == b:
        return True
    na, nb = _num(a), _num(b)
    if isinstance(na, (int, float)) and isinstance(nb, (int, float)) and not isinstance(na, bool):
        return na == nb
    return False


def _cmp(a: Any, b: Any, op: str) -> bool:
    a, b = _num(a), _num(b)
    try:
        if op == "lt":
            return a < b
        if op == "le":
            return a <= b
        if op == "gt":
            return a > b
        return a >= b
    except TypeError:
        return False


def _get(values: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    cur: Any = values
    for part in path.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, (list, tuple)) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    return True, cur


class _Words(tuple):
    """The values of an ``in`` / ``not_in`` that are all words (no number reads in them): a value
    equals one of them (:func:`_eq`) exactly when it is one of them, or, a number, never."""

    def __new__(cls, words):
        self = super().__new__(cls, words)
        self.set = frozenset(words)
        return self

    def has(self, value: Any) -> bool:
        if type(value) is str:
            return value in self.set  # (a word never equals a number, and equal strings are equal)
        return any(_eq(value, x) for x in self)


class _Cond:
    """A compiled ``fields`` mapping: ``{name: value-or-operators}``."""

    def __init__(self, spec: Mapping[str, Any], timeout: float | None) -> None:
        self.items: list[tuple[str, Any]] = []
        for name, cond in spec.items():
            self.items.append((name, self._compile(cond, timeout)))

    @classmethod
    def _compile(cls, cond: Any, timeout: float | None) -> Any:
        if not isinstance(cond, Mapping):
            return ("eq", cond)
        ops = []
        for op, arg in cond.items():
            if op in ("matches", "not_matches"):
                arg = _Pattern(str(arg), timeout)
            elif op == "len":
                arg = cls._compile(arg, timeout)
            elif op == "any":
                arg = _Cond(arg, timeout) if isinstance(arg, Mapping) and all(
                    k not in OPERATORS for k in arg) else cls._compile(arg, timeout)
            elif op in ("in", "not_in") and isinstance(arg, (list, tuple)) and arg and all(
                    isinstance(x, str) and _num(x) is x for x in arg):
                arg = _Words(arg)  # words only: a word value is in them or not, by a set look-up
            ops.append((op, arg))
        return ("ops", ops)

    def test(self, values: Mapping[str, Any], captures: dict[str, Any], prefix: str = "") -> bool:
        for name, cond in self.items:
            present, value = _get(values, name)
            if not _test(present, value, cond, captures, prefix + name):
                return False
        return True


def _test(present: bool, value: Any, cond: Any, captures: dict[str, Any], path: str) -> bool:
    kind, arg = cond
    if kind == "eq":
        return present and _eq(value, arg)
    for op, a in arg:
        if not present or value is None:
            if op == "exists":
                if a:
                    return False
                continue
            if op in NEGATIVE_OPERATORS:
                continue
            return False
        if op == "exists":
            ok = bool(a)
        elif op == "eq":
            ok = _eq(value, a)
        elif op == "ne":
            ok = not _eq(value, a)
        elif op in ("lt", "le", "gt", "ge"):
            ok = _cmp(value, a, op)
        elif op == "in":
            ok = a.has(value) if type(a) is _Words else any(_eq(value, x) for x in a)
        elif op == "not_in":
            ok = not (a.has(value) if type(a) is _Words else any(_eq(value, x) for x in a))
        elif op == "contains":
            if isinstance(value, str):
                ok = str(a) in value
            elif isinstance(value, (list, tuple, set)):
                ok = any(_eq(v, a) for v in value)
            elif isinstance(value, Mapping):
                ok = a in value
            else:
                ok = False
        elif op == "matches":
            ok = a.search(str(value)) is not None
        elif op == "not_matches":
            ok = a.search(str(value)) is None
        elif op == "len":
            try:
                n = len(value)
            except TypeError:
                return False
            ok = _test(True, n, a, captures, path + ".len")
        elif op == "any":
            if not isinstance(value, (list, tuple)):
                return False
            ok = False
            for item in value:
                sub: dict[str, Any] = {}
                if isinstance(a, _Cond):
                    hit = isinstance(item, Mapping) and a.test(item, sub)
                else:
                    hit = _test(True, item, a, sub, path)
                if hit:
                    ok = True
                    if isinstance(item, Mapping):
                        for k, v in item.items():
                            captures.setdefault(f"{path}.{k}", v)
                    else:
                        captures.setdefault(f"{path}.item", item)
                    break
        else:  # validated away
            return False
        if not ok:
            return False
    return True
