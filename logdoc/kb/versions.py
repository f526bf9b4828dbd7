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


def nccl_release(printed: str) -> str:
    """The NCCL release a PyTorch message names. PyTorch up to 1.10 decoded NCCL's version code with the
    pre-2.9 scheme (major = code / 1000, minor = code % 1000 / 100, patch = the rest), so from NCCL 2.9 on
    (code major*10000 + minor*100 + patch) it printed 2.10.3 as ``21.0.3``, 2.9.6 as ``20.9.6`` and
    2.12.10 as ``21.2.10``: a printed major of 20 to 29 is undone to the release."""
    parts = printed.split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts) and 20 <= int(parts[0]) <= 29 and len(parts[1]) == 1:
        return f"2.{(int(parts[0]) - 20) * 10 + int(parts[1])}.{int(parts[2])}"
    return printed
