"""A lane message's event from its reading remembered by message (:func:`message_event`, ``_MESSAGE_MEMO``);
plain twin: the classifier on the whole line (``classify(Record(n, n, Envelope(), text), name)``), which
tests/test_fastpath.py holds it to. Used by the NCCL lane (:mod:`logdoc.fast.lane`).
"""
from __future__ import annotations

from functools import lru_cache
from itertools import islice
from typing import Callable

from . import readings
from .plans import LANE_HEAD
from ..blocks import Record
from ..events import Envelope, Event

MAX_MESSAGE_MEMO = 1 << 14  # full: its older half is dropped (a job's messages outnumber it: the recent ones stay)
_MESSAGE_MEMO: dict[str, tuple] = {}  # a lane line's message (after its header) -> kind, level, template, fields


@lru_cache(maxsize=1)
def _bulk() -> frozenset:
    from ..digest import bulk_templates

    return bulk_templates()


def _deep(v):
    if isinstance(v, list):
        return [_deep(x) for x in v]
    if isinstance(v, dict):
        return {k: _deep(x) for k, x in v.items()}
    return v


def message_event(name: str, n: int, text: str, classify: Callable[[Record, str], Event | None]) -> Event | None:
    """``classify(Record(n, n, Envelope(), text), name)`` for a lane line (:meth:`Lane.ok` vouched
    for it), its message read once per process: ranks print the same messages (an init storm's
    settings, the network, the tuner), which differ only in their header. What the classifier
    makes of such a line is the message's reading (``nccl._from_header`` reads the message alone)
    plus the header's values (``tid``, ``dev`` in the fields, the host and pid of the event): the
    reading is remembered by message (``_MESSAGE_MEMO``) and the header's values applied afresh.
    Only a reading whose fields begin with exactly those of the header (``tid``, ``dev``,
    ``message``) and whose event holds the header's host and pid and no time is remembered; a
    line of 640 characters or more (``envelope.has_huge_number`` may read it) is classified."""
    m = LANE_HEAD.match(text)
    if m is None or len(text) >= 640:
        return classify(Record(n, n, Envelope(), text), name)
    msg = text[m.end():]
    host = m.group(1) or None
    pid = int(m.group(2))
    tid = int(m.group(3))
    dev = int(m.group(4))
    got = _MESSAGE_MEMO.get(msg)
    if got is None:
        got = readings.reading(msg)
        if got is not None:
            _remember(msg, got)
    if got is not None:
        kind, level, template, rest = got
        fields = {"tid": tid, "dev": dev}
        for k, v in rest.items():
            fields[k] = _deep(v) if isinstance(v, (list, dict)) else v
        # positional, in Event's field order (tests/test_fastpath.py guards it)
        return Event(kind, level, name, n, text, n, None, None, None, host, pid, None, template, fields)
    ev = classify(Record(n, n, Envelope(), text), name)
    got = _reading(ev, text, msg, host, pid, tid, dev)
    if got is not None:
        _remember(msg, got)
        if got[0] == "nccl.info" and got[2] in _bulk():
            return ev  # the bulk lane reads such lines by their bytes (and asks the grammar's memo)
        head = text[:m.end()]
        readings.observe(msg, got, lambda other: _reading(classify(Record(n, n, Envelope(), head + other), name),
                                                          head + other, other, host, pid, tid, dev))
    return ev


def _remember(msg: str, got: tuple) -> None:
    if len(_MESSAGE_MEMO) >= MAX_MESSAGE_MEMO:
        for old in list(islice(_MESSAGE_MEMO, MAX_MESSAGE_MEMO // 2)):
            del _MESSAGE_MEMO[old]
    _MESSAGE_MEMO[msg] = got


def _reading(ev: Event | None, text: str, msg: str, host, pid, tid, dev) -> tuple | None:
    """What :func:`message_event` remembers of the event of lane line ``text`` (header values
    ``host``, ``pid``, ``tid``, ``dev``, message ``msg``): kind, level, template and the fields after
    the header's; None when the event is not the message's reading plus the header's values."""
    if ev is None:
        return None
    f = ev.fields
    keys = list(f)
    if keys[:3] == ["tid", "dev", "message"] and f["tid"] == tid and f["dev"] == dev and f["message"] == msg \
            and ev.host == host and ev.pid == pid and ev.time is None and ev.rank is None and ev.text == text:
        return ev.kind, ev.level, ev.template, {k: _deep(f[k]) for k in keys[2:]}
    return None
