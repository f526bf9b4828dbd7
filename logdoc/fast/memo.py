"""Classifications remembered; plain twins: :func:`logdoc.classify.torch.classify`, for
:func:`text_classify` the last steps of :func:`logdoc.pipeline.classify_record`, and for
:func:`unwrap` :func:`logdoc.envelope.unwrap`.

``classify.torch.classify`` reads nothing of the envelope but its level, so the same message at the same
level gives the same answer (a c10 warning every rank prints). The steps after it (a bare NCCL message,
another library's line, a job stopped from outside) read the text only: a Python warning every step
prints again (``.../checkpoint.py:464: UserWarning: ...``) is looked up once. Only answers made of plain
values are kept, and each hit is a copy.

``envelope.unwrap`` reads the text only, and a line printed again (a Python warning every step, its
``warnings.warn(`` line) is fed again: its envelope's values and message are remembered by text, and each
hit is a new :class:`~logdoc.events.Envelope` (the feeder and the paste repair change the one they get).
"""
from __future__ import annotations

from itertools import islice

from .. import stops
from ..classify.bare import classify_bare
from ..classify.torch import classify as classify_torch
from ..envelope import unwrap as _unwrap
from ..events import Envelope
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


MAX_TEXT_MEMO = 4096
_TEXT_MEMO: dict[str, tuple | None] = {}  # text -> what the text-only classifiers said


def _read_text(text: str) -> Parsed | None:
    """The text-only steps of ``classify_record``, in its order: a bare NCCL message, then a stop."""
    parsed = classify_bare(text)
    if parsed is None:
        parsed = stops.classify(text)
    return parsed


def text_classify(text: str) -> Parsed | None:
    """``classify_bare(text) or stops.classify(text)``, remembered."""
    if text in _TEXT_MEMO:
        hit = _TEXT_MEMO[text]
        if hit is None:
            return None
        kind, level, template, fields = hit
        return Parsed(kind, level, template, {k: (list(v) if isinstance(v, list) else v) for k, v in fields.items()})
    parsed = _read_text(text)
    if len(_TEXT_MEMO) >= MAX_TEXT_MEMO:
        _TEXT_MEMO.clear()
    if parsed is None:
        _TEXT_MEMO[text] = None
    elif all(_simple(v) for v in parsed.fields.values()):
        _TEXT_MEMO[text] = (parsed.kind, parsed.level, parsed.template,
                            {k: (list(v) if isinstance(v, list) else v) for k, v in parsed.fields.items()})
    return parsed


MAX_UNWRAP_MEMO = 4096  # full: its older half is dropped
_UNWRAP_MEMO: dict[str, tuple] = {}  # text -> (the envelope's values in field order, the message)
_ENV_FIELDS = Envelope.__dataclass_fields__


def unwrap(text: str) -> tuple[Envelope, str]:
    """``envelope.unwrap(text)``, remembered (a new envelope for every call)."""
    got = _UNWRAP_MEMO.get(text)
    if got is not None:
        return Envelope(*got[0]), got[1]
    env, msg = _unwrap(text)
    if len(_UNWRAP_MEMO) >= MAX_UNWRAP_MEMO:
        for old in list(islice(_UNWRAP_MEMO, MAX_UNWRAP_MEMO // 2)):
            del _UNWRAP_MEMO[old]
    _UNWRAP_MEMO[text] = (tuple(getattr(env, f) for f in _ENV_FIELDS), msg)
    return env, msg
