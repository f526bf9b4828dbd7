"""Version numbers and ranges (``>=2.12.10,<2.27``) as ``applies_to`` uses them.
"""
from __future__ import annotations

import re as _re

from ..lazyre import lazy_re

_VERSION_CLAUSE = lazy_re(r"^\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+)*)\s*$")


def parse_version(text: str) -> tuple[int, ...]:
    m = _re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def version_in_range(version: str, spec: str) -> bool:
    """``version_in_range("2.21.5", ">=2.12.10,<2.27")``; an unparsable version counts as inside."""
    v = parse_version(version)
    if not v:
        return True
    for clause in spec.split(","):
        m = _VERSION_CLAUSE.match(clause)
        if not m:
            continue
        op, ref = m.group(1) or "==", parse_version(m.group(2))
        n = max(len(v), len(ref))
        a, b = v + (0,) * (n - len(v)), ref + (0,) * (n - len(ref))
        if op == "==" and len(ref) < len(v):  # ==2.28 means any 2.28.x
            a = v[: len(ref)]
            b = ref
        ok = {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True
