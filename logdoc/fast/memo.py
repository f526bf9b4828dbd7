"""PyTorch classifications remembered per (message, level); plain twin: :func:`logdoc.classify.torch.classify`.

``classify.torch.classify`` reads nothing of the envelope but its level, so the same message at the same
level gives the same answer (a c10 warning every rank prints). Only answers made of plain values are
kept, and each hit is a copy.
"""
from __future__ import annotations

from ..classify.torch import classify as classify_torch
from ..grammar import Parsed

MAX_TORCH_MEMO = 4096
_TORCH_MEMO: dict[tuple[str, str | None], tuple | None] = {}  # (text, env.level) -> what the torch classifier said


def _simple(v) -> bool:
    if isinstance(v, list):
        return all(x is None or isinstance(x, (str, int, float, bool)) for x in v)
    return v is None or isinstance(v, (str, int, float, bool))


def torch_classify(text: str, env) -> Parsed | None:
    """``classify_torch(text, env)``, remembered."""
    key = (text, env.level)
    if key in _TORCH_MEMO:
        hit = _TORCH_MEMO[key]
        if hit is None:
            return None
        kind, level, template, fields = hit
        return Parsed(kind, level, template, {k: (list(v) if isinstance(v, list) else v) for k, v in fields.items()})
    parsed = classify_torch(text, env)
    if len(_TORCH_MEMO) >= MAX_TORCH_MEMO:
        _TORCH_MEMO.clear()
    if parsed is None:
        _TORCH_MEMO[key] = None
    elif all(_simple(v) for v in parsed.fields.values()):
        _TORCH_MEMO[key] = (parsed.kind, parsed.level, parsed.template,
                            {k: (list(v) if isinstance(v, list) else v) for k, v in parsed.fields.items()})
    return parsed
