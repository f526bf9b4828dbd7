"""The bulk lane's plans (:mod:`logdoc.fast.lane`): what it learns of a line shape from a line of that
shape that the full path read as a bulk NCCL INFO catalog format (:func:`learn`), so that the next
lines of the shape are counted with the full path's own checks and without their events.

A shape is a line's bytes without hex digits. A plan holds the catalog template, the templates the
catalog would prefer (rivals), the grammar-family check for the message's first word, and, for a
collective launch, where the collective, the opCount and the comm are among the format's values.
``head_std`` is :data:`LANE_HEAD` and the template's plain pattern as one pattern (one match a line
instead of two); ``quick`` marks a launch that :meth:`~logdoc.fast.lane.Lane.launch` reads from it alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from .. import nccl
from ..blocks import MAY_START_FIRST, MAY_START_WORDS
from ..envelope import EMBED_MARK, RAY_SUFFIX
from ..events import Event
from ..lazyre import lazy_re

# A lane line: `host:pid:tid [dev] NCCL INFO ` (a `>` first is a quote marker that unwrap's paste
# layer peels, not part of a host name, and so is a backtick that opens inline code).
LANE_HEAD = lazy_re(r"(?![>`])([^\s:\[\]]*):(\d+):(\d+) \[(\d+)\] NCCL INFO ")
MAX_BULK_PLANS = 4096
_HEXB = b"0123456789abcdef"
# The words a lane line must not hold (the envelope's and the assembler's), as they show in a shape:
# a text holding one of them holds its letters other than hex digits, in order, in its shape.
_SHAPE_WORDS = tuple(w.encode().translate(None, _HEXB) for w in (EMBED_MARK, *MAY_START_WORDS))
_SHAPE_SUFFIX = RAY_SUFFIX.encode().translate(None, _HEXB)
# The shapes of the starts of an escape written out as text (read.source._ANSI_TEXT), and less
_ANSI_SHAPES = (b"#[", b"^[[", b"\\")


@dataclass(slots=True)
class BulkPlan:
    """What :meth:`~logdoc.fast.lane.Lane.bulk` needs for one line shape, learned from a line of that shape that the
    full path read as a bulk NCCL INFO catalog format."""

    template: Any                 # the catalog template it matched
    rivals: tuple                 # the templates the catalog would prefer for a message of its shape
    word: str                     # the message's first word
    key: tuple                    # the head of the group key
    std: Any                      # the template's plain pattern
    keys: dict                    # group keys by (host, pid)
    family: Callable[[str], Any]  # the grammar-family check for that first word (nccl.family_for)
    words: bool                   # whether a line of this shape may hold one of the words lane_ok refuses
    launch: tuple | None = None   # a collective launch: (index of the collective's name or None, the name
                                  # when the format has none, index of the opCount), see digest.count_launch
    head_std: Any = None          # LANE_HEAD and the template's plain pattern as one (_head_std), or None
    quick: tuple | None = None    # a launch that Lane.launch reads from head_std alone: the groups of the
                                  # host, pid, opCount, comm and collective (or None) in head_std (_quick)
    raw_std: Any = None           # a quick launch whose shape no grammar family reads (_no_family): its first
                                  # word and std on bytes, matched at the message's start (_raw_std)
    raw_groups: tuple = ()        # the groups of the opCount and the comm in raw_std, and of the collective or None


_BULK_PLANS: dict[bytes, BulkPlan] = {}


def plan_for(raw: bytes) -> BulkPlan | None:
    return _BULK_PLANS.get(raw.translate(None, _HEXB))


def learn(raw: bytes, text: str, ev: Event) -> None:
    """Remember the shape of ``raw``, a lane line the full path read as ``ev`` (a bulk catalog
    format), for :meth:`~logdoc.fast.lane.Lane.bulk`: only when its bytes are its text (no control byte, no CR,
    valid UTF-8), its header is the lane's, and the catalog's cache holds the template it gave."""
    if len(text) >= 640 or "format" not in ev.fields or ev.time is not None:
        return
    try:
        if raw.decode() != text:
            return
    except UnicodeDecodeError:
        return
    m = LANE_HEAD.match(text)
    if m is None or text[m.end():] != ev.fields.get("message") or (m.group(1) or None) != ev.host \
            or int(m.group(2)) != ev.pid:
        return
    from . import shape
    from ..templates import nccl_catalog

    cm = text[m.end():].rstrip()
    word = cm.split(" ", 1)[0]
    entry = nccl_catalog()._by_shape.get((shape(cm), word))
    if entry is None or entry[0].id != ev.template:
        return
    if len(_BULK_PLANS) >= MAX_BULK_PLANS:
        _BULK_PLANS.clear()
    key = raw.translate(None, _HEXB)
    if any(a in key for a in _ANSI_SHAPES):
        return  # a line of this shape may hold an escape written out as text, which cleaning removes
    words = any(w in key for w in _SHAPE_WORDS) or key.endswith(_SHAPE_SUFFIX)
    std = entry[0].rx.std
    launch = launch_plan(ev)
    both = _head_std(std)
    quick = None
    if launch is not None and both is not None and not entry[1] and not words:
        nargs = len(ev.fields["args"])
        if std.groups == nargs:
            g = _HEAD_GROUPS + 1  # the template's first group in head_std
            quick = (1, 2, g + launch[2], g + nargs - 3, None if launch[0] is None else g + launch[0])
    family = nccl.family_for(word)
    raw_std = _raw_std(std, word) if quick is not None and _no_family(family, key) else None
    groups = () if raw_std is None else (quick[2] - _HEAD_GROUPS, quick[3] - _HEAD_GROUPS,
                                         None if quick[4] is None else quick[4] - _HEAD_GROUPS)
    _BULK_PLANS[key] = BulkPlan(entry[0], entry[1], word, ("b", ev.kind, ev.template), std, {}, family, words, launch,
                                both, quick, raw_std, groups)


def _raw_std(std, word: str) -> Any:
    """The message's first word ``word`` followed by a blank or the end (what ``Lane.launch`` asks first, as a
    lookahead) and ``std`` (led by ``^``) without its ``^``, compiled on bytes: on an ASCII line without control
    bytes (a run's, :mod:`logdoc.fast.runs`), ``p.match(raw, k)`` matches exactly when the word's test and
    ``std.match(raw[k:].decode())`` do, with the same groups as bytes: on ASCII text ``\\d``, ``\\w``, ``\\b``
    and case folding read the same in both, ``\\s`` differs only on the control bytes 28 to 31, which such a
    line does not hold, and ``match`` at ``k`` without ``^`` is anchored there (what could look before ``k``, a
    lookbehind or ``\\A``, is refused by :func:`_head_std`, which a quick plan has). None when the pattern or
    the word holds a character not ASCII or a construct bytes refuse."""
    pat = std.pattern
    if not isinstance(pat, str) or not pat.startswith("^") or _head_std(std) is None:
        return None
    try:
        rx = re.compile(b"(?=" + re.escape(word.encode("ascii")) + b"(?: |\\Z))(?:" + pat[1:].encode("ascii") + b")",
                        std.flags & ~re.UNICODE)
    except (UnicodeEncodeError, re.error):
        return None
    return rx if rx.groups == std.groups else None


_COMM_SHAPE = b" comm 0x".translate(None, _HEXB)  # as it shows in a shape: ` omm x`


def _no_family(family, key: bytes) -> bool:
    """Whether ``family`` (``nccl.family_for``'s check) is None for every message of a lane line of shape
    ``key`` (the line's bytes without hex digits; the header ``host:pid:tid [dev] NCCL INFO `` holds four
    blanks, the host none, so the message is what follows the shape's fourth blank). Decided for
    ``_family_comm_arrow`` (the first words with a colon: the launches): it is not None only when the
    message holds `` -> `` (no hex digit: as it is in the shape) or `` comm 0x`` with two blanks or fewer
    before it (`` omm x`` in the shape, the blanks before it the same)."""
    if family is not nccl._family_comm_arrow:
        return False
    parts = key.split(b" ", 4)
    if len(parts) < 5:
        return False
    msg = parts[4]
    if b" -> " in msg:
        return False
    at = msg.find(_COMM_SHAPE)
    return at < 0 or msg.count(b" ", 0, at) > 2


_HEAD_GROUPS = 4   # LANE_HEAD's groups: host, pid, tid, dev
_HEAD_TAIL = len("] NCCL INFO ")  # what LANE_HEAD matches after its last group's end (dev's)
# What _head_std refuses in a pattern after its leading ^: a group referred to by number or name, and
# what could see before the message's start once a header stands there (a lookbehind, \A, \B, a
# second ^ outside a class); \b first is refused too.
_NOT_AFTER_HEAD = lazy_re(r"\\[1-9]|\(\?P=|\(\?<[=!]|\\A|\\B|(?<!\[)\^")


def _head_std(std) -> Any:
    """One pattern for :meth:`~logdoc.fast.lane.Lane.bulk`: :data:`LANE_HEAD` followed by the template's plain pattern
    ``std`` (led by ``^``), groups numbered after LANE_HEAD's. On a line that ends in no blank it
    matches exactly when LANE_HEAD matches and ``std`` matches the message after it (LANE_HEAD can
    match a line one way only: a host without ``:``, then digits up to ``:``, ``:``, `` [``), with
    the same groups; ``std.match(msg.rstrip())`` is what the bulk lane asks. None when ``std`` does
    not start with ``^``, names its groups or holds what :data:`_NOT_AFTER_HEAD` refuses."""
    pat = std.pattern
    if not isinstance(pat, str) or not pat.startswith("^") or std.groupindex:
        return None
    body = pat[1:]
    if _NOT_AFTER_HEAD.search(body) or body.startswith("\\b"):
        return None
    head = LANE_HEAD.pattern
    assert head.endswith("(\\d+)\\] NCCL INFO ") and LANE_HEAD.groups == _HEAD_GROUPS
    try:
        both = re.compile(head + "(?:" + body + ")", std.flags)
    except re.error:
        return None
    return both if both.groups == _HEAD_GROUPS + std.groups else None


def launch_plan(ev: Event) -> tuple | None:
    """For an event that ``digest.group_key`` files as a collective launch of an opCount line
    (``nccl.info`` at INFO, ``opCount %`` and ``comm %p`` in its format): where its collective and
    opCount are among the format's values, as ``collectives.launch_of`` names them; None for any other."""
    f = ev.fields
    fmt, args = f.get("format"), f.get("args")
    if ev.level != "INFO" or not isinstance(fmt, str) or "opCount %" not in fmt or "comm %p" not in fmt \
            or not isinstance(args, list) or len(args) < 3:
        return None
    return _launch_slots(fmt, len(args), ev)


def _launch_slots(fmt: str, nargs: int, ev: Event) -> tuple | None:
    from ..analysis.collectives import labels, launch_of

    names = labels(fmt)
    if len(names) != nargs or "opCount" not in names:
        return None
    la = launch_of(ev)
    if la is None:
        return None
    last = {n: i for i, n in enumerate(names)}  # launch_of reads dict(zip(names, args)): the last of a name
    if "coll" in last:
        return last["coll"], None, last["opCount"]
    if "catalog_location" in ev.fields:  # the name read from the call site (2.3.5): not the format's alone
        return None
    return None, la["coll"], last["opCount"]


_BLANK_END = frozenset(b" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")  # the ASCII characters str.isspace is true of
_MSF_BYTES = frozenset(c.encode()[0] for c in MAY_START_FIRST if c.isascii())
_HEADS: dict[bytes, tuple | None] = {}  # a lane line's header's bytes -> its host and pid (_head_of)
_NO_HEAD = object()


def _head_of(head: bytes) -> tuple | None:
    """The host and pid :data:`LANE_HEAD` reads of ``head`` (ASCII, a line's bytes up to and with its
    first `` NCCL INFO ``) when it reads all of it, else None; remembered (``_HEADS``). A line's
    :data:`LANE_HEAD` match, when there is one, ends there: before it, the line holds one blank only
    (the host holds none), so the same bytes give the same match whatever follows."""
    text = head.decode()
    m = LANE_HEAD.match(text)
    got = m.group(1, 2) if m is not None and m.end() == len(text) else None
    if len(_HEADS) >= MAX_BULK_PLANS:
        _HEADS.clear()
    _HEADS[head] = got
    return got
