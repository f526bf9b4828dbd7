"""The alone lane; plain twin: :meth:`logdoc.pipeline.Feeder.feed`.

A candidate line that opens no record (``may_start`` false: a Python warning's first line, a
``torch`` path in an application's own print) read while nothing is open, or only quiet records
that it cannot continue and that are not of its stream, is handed back by the assembler as a
record of its own, and the assembler's state is left as it was: :func:`alone` settles that record
directly (``Feeder.settle``, the same event or count), without the assembler's look at it. Such a
line printed again, whose record gave nothing (no event, no marked word: counted as irrelevant),
is counted from its bytes (:func:`alone_raw`, :data:`_NOTHING`): the same bytes make the same
clean text, and the classifier reads a text and an empty envelope (or a Python warning's, which the
same bytes peel alike, layers and all), never a line number. Both take
the :class:`logdoc.fast.lane.Lane` of the feeder, whose state they use.

A candidate line read while nothing is open that opens the record of the lines without any
envelope (``may_start`` true: a Python warning whose text says ``exception``) is ended by its next
line when that line can continue nothing (the block scan's quiet skip, ``Gate.BARE``): when the
record, that one line, gave nothing, the two lines are counted from their bytes the next time
(:func:`opener`, :data:`_OPENERS`), without the assembler: the same bytes read while nothing is open
open the same record, and the next line ends it the same way.

In a training log, the same warnings are printed again and again (``.../torch/utils/checkpoint.py:464:
UserWarning: ...``, once per step and rank): two thirds of the candidate lines of
``tests/perf/gen_job_logs.py mixed`` that are not progress bars or NCCL lines.
"""
from __future__ import annotations

from typing import Any

from ..blocks import IDLE, Record, may_join_quiet, may_start
from ..envelope import C10_CLOCK, c10_time
from ..events import EVENT_FIELDS, Envelope, Event
from ..read.prefilter import _CANDIDATE
from ..read.source import _clean, as_read
from .bars import _BAR_SHAPES, _DIGIT0
from .plans import LANE_HEAD

_ENV0 = Envelope()
_NO_STREAM = Envelope().stream_key()


def _no_stream(env: Envelope, msg: str, text: str) -> bool:
    """A line of the stream without any envelope, whose bytes alone say what its record is: no envelope
    at all, or only a Python warning's (``file.py:N: UserWarning: ``: it names no process, and the same
    bytes peel to the same message and envelope, layers and all)."""
    return (env == _ENV0 and msg == text) or (env.layers == ("pywarn",) and env.stream_key() == _NO_STREAM)


# the envelope layers whose prefix NCCL's WARN text may start with (Feeder._feed reads such a line
# again after a bare `Last error:`): never taken here
_WARN_LIKE = ("pdsh", "mpich")

# The bytes of lines whose record, alone with an empty envelope, gave nothing -> whether no quiet
# record would take the line (not may_join_quiet).
_NOTHING: dict[bytes, bool] = {}
MAX_NOTHING = 1 << 12


def _learn(raw: bytes, text: str, qok: bool) -> None:
    """Remember the bytes of a line whose text is ``text`` (printable, valid UTF-8 decoding to it:
    what ``read.source._clean`` returns for them) and whose record gave nothing."""
    if not as_read(raw):
        return
    try:
        if raw.decode() != text:
            return
    except UnicodeDecodeError:
        return
    if len(_NOTHING) >= MAX_NOTHING:
        _NOTHING.clear()
    _NOTHING[raw] = qok


def alone(lane, n: int, text: str, raw: bytes | None = None) -> bool:
    """Line ``n``, a candidate line that neither the NCCL lane nor the bar lane took, settled as the
    record of its own that ``Feeder.feed`` would make of it. False: nothing was done but what
    ``Feeder.feed`` does first (idle records closed), and the caller feeds it.

    What ``Feeder.feed`` does with such a line, checked here: the envelope is not one whose prefix
    a quoted WARN text may start with; the assembler hands it back alone and changes nothing
    (``may_start`` false: it opens nothing; nothing is open, or only records of ranked streams that
    take continuation lines only (``Feeder.state`` is ``Gate.QUIET``; not ``lane_state``: an open
    traceback takes its code lines, which hold no continuation mark), the line is none of their
    continuation lines (``may_join_quiet``) and no record of its stream is open); the line is
    alone, so the window is not moved; its record is settled as a candidate's (``settle(records, -1)``)."""
    if LANE_HEAD.match(text) is not None:
        return False  # the NCCL lane's lines go their own way
    feeder = lane.feeder
    asm = feeder.asm
    lasts = asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as feed() does first (then again, closing nothing)
    st = feeder.state
    if st != 0 and st != 1:
        return False  # (not lane_state: a traceback's code line holds no continuation mark)
    env, msg = feeder.unwrap(text)
    if env.layers and env.layers[-1] in _WARN_LIKE:
        return False
    if may_start(msg, env):
        if raw is not None and env.layers == _C10:
            _learn_clocked(raw, text, env, msg)
        return False
    qok = not may_join_quiet(msg)
    if st == 1 and (not qok or asm.stream_open(env.stream_key())):
        return False
    stats = feeder.stats
    before = stats.irrelevant, stats.events, len(feeder.unrecognized)
    feeder.settle([Record(n, n, env, msg)], -1)
    if (raw is not None and _no_stream(env, msg, text) and stats.irrelevant == before[0] + 1
            and stats.events == before[1] and len(feeder.unrecognized) == before[2]):
        _learn(raw, text, qok)
    return True


def alone_raw(lane, n: int, raw: bytes) -> bool:
    """:func:`alone` of a line whose bytes are those of a line whose record gave nothing
    (:data:`_NOTHING`): counted as irrelevant, as ``Feeder.settle`` counts it. False: nothing was
    done but what ``Feeder.feed`` does first (idle records closed), and the caller takes the usual
    path."""
    qok = _NOTHING.get(raw)
    if qok is None:
        return False
    feeder = lane.feeder
    asm = feeder.asm
    lasts = asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as feed() does first
    st = feeder.state
    if (st != 0 and st != 1) or (st == 1 and (not qok or asm.stream_open(_NO_STREAM))):
        return False
    feeder.stats.irrelevant += 1
    return True


# The bytes of candidate lines without an envelope that, read while nothing or only quiet records of
# ranked streams were open, opened the record of the lines without an envelope, which the next line
# (one the quiet skip counts) ended, and which gave nothing -> (whether no quiet record would take
# the line, the window Feeder._feed gave it).
_OPENERS: dict[bytes, tuple[bool, int]] = {}
MAX_OPENERS = 1 << 12
_BARE = 3  # pipeline.Gate.BARE (pipeline imports this module)


def opener(feeder, n: int, text: str, cand: bool, raw: bytes) -> bool:
    """Line ``n``, a candidate read while nothing or only quiet records are open (``Feeder.state`` 0 or
    1) and followed by a line that the block scan's quiet skip counts, fed as ``Feeder.line`` feeds it.
    True when it opened the record of the lines without an envelope (``Gate.BARE``): that record is
    then ended as the next line ends it (``Feeder.passed``), and the caller counts the next line as
    read. When that record gave nothing (two lines counted as irrelevant, no event, nothing unread)
    and the line has no envelope, its bytes are remembered (:data:`_OPENERS`); when it gave one event
    and the line is a c10 warning of no process with its clock, its bytes but the clock's are
    (:data:`_EVENT_OPENERS`). Progress bars and the NCCL lane's lines are not: their lanes count them
    as they pass."""
    stats = feeder.stats
    before = (stats.irrelevant, stats.relevant, stats.events, len(feeder.unrecognized))
    clock = C10_CLOCK.match(raw)
    out = feeder.out
    if clock is not None:
        feeder.out = _Kept(out)  # (the event its record gives, seen as it is appended)
    try:
        feeder.line(n, text, cand, raw)
        if feeder.state != _BARE:
            return False
        window = feeder.until - n
        feeder.passed()
    finally:
        kept, feeder.out = feeder.out, out
    if feeder.state >= 2 or raw.find(b"%|") >= 0 or LANE_HEAD.match(text) is not None:
        return True
    if (stats.irrelevant == before[0] + 2
            and (stats.relevant, stats.events, len(feeder.unrecognized)) == before[1:]):
        env, msg = feeder.unwrap(text)
        if _no_stream(env, msg, text):
            if len(_OPENERS) >= MAX_OPENERS:
                _OPENERS.clear()
            _OPENERS[raw] = (not may_join_quiet(msg), window)
    elif (clock is not None and (stats.irrelevant, stats.relevant, stats.events) == (before[0] + 1, before[1] + 1, before[2] + 1)
          and len(feeder.unrecognized) == before[3] and len(kept.events) == 1):
        _learn_event(feeder, n, text, raw, clock, window, kept.events[0])
    return True


def _opens(feeder, n: int, seen: tuple) -> bool:
    """What ``Feeder.feed`` does first (idle records closed), then whether the record a remembered opener
    (``seen``: its ``may_join_quiet`` refusal first, its window second) opens may open now, as ``Feeder._feed``
    decides it; if so, the window moved as it moves it."""
    asm = feeder.asm
    lasts = asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as feed() does first
    st = feeder.state
    if st != 0 and (st != 1 or not seen[0] or asm.stream_open(_NO_STREAM)):
        return False
    feeder.until = n + seen[1]
    return True


def opener_raw(feeder, n: int, seen: tuple[bool, int]) -> bool:
    """:func:`opener` of a line whose bytes are remembered (``seen``: :data:`_OPENERS`' value), followed by
    a line the quiet skip counts: both counted as irrelevant, the window moved as ``Feeder._feed``
    moves it. False: nothing was done but what ``Feeder.feed`` does first (idle records closed)."""
    if not _opens(feeder, n, seen):
        return False
    feeder.stats.irrelevant += 2
    return True


# A c10 warning of no process, with its clock (``[W1129 10:00:03.798512173 socket.cpp:697] [c10d] The client
# socket has failed to connect ...``), printed again and again at other times, that opened the record of the
# lines without an envelope, which the next line ended, and that gave one event: its bytes but its clock's
# (``envelope.C10_CLOCK``: the prefix, the clock's length, the rest) -> (whether no quiet record would take
# the line, the window, the event's values but its line, end line, time and fields; its fields). The same
# bytes but the clock's unwrap alike but for the time, which ``envelope.c10_time`` reads from the clock; the
# classifiers never read the time, so the record gives the same event at that time.
_EVENT_OPENERS: dict[tuple[bytes, int, bytes], tuple] = {}
MAX_EVENT_OPENERS = 1 << 10
_SLOTS = EVENT_FIELDS
_VARY = ("file", "line", "end_line", "time", "fields")


class _Kept:
    """A feeder's ``out`` that keeps what is appended to it, as it was then, and hands it on."""

    __slots__ = ("out", "events")

    def __init__(self, out) -> None:
        self.out = out
        self.events: list[tuple] = []

    def append(self, ev: Event) -> None:
        self.events.append(tuple(getattr(ev, f) for f in _SLOTS))
        self.out.append(ev)


def _plain_value(v) -> bool:
    if isinstance(v, list):
        return all(x is None or isinstance(x, (str, int, float, bool)) for x in v)
    return v is None or isinstance(v, (str, int, float, bool))


def _learn_event(feeder, n: int, text: str, raw: bytes, clock, window: int, values: tuple) -> None:
    """Remember line ``n`` (``raw``, its clock found by ``clock``) whose record of its own gave the event of
    ``values`` (:data:`_EVENT_OPENERS`), when its bytes are its text and its envelope is c10's alone and
    names no process."""
    if not as_read(raw) or not raw.isascii() or raw.decode() != text:
        return
    env, msg = feeder.unwrap(text)
    ev = dict(zip(_SLOTS, values))
    if (env.layers != ("c10",) or env.stream_key() != _NO_STREAM or env.process is not None
            or ev["line"] != n or ev["file"] != feeder.name or ev["time"] is None
            or ev["time"] != c10_time(clock[1], clock[2]) or not all(map(_plain_value, ev["fields"].values()))):
        return
    if len(_EVENT_OPENERS) >= MAX_EVENT_OPENERS:
        _EVENT_OPENERS.clear()
    _EVENT_OPENERS[_but_clock(raw, clock)] = (
        not may_join_quiet(msg), window, tuple(v for f, v in ev.items() if f not in _VARY),
        ev["end_line"] - n, ev["fields"])


def _but_clock(raw: bytes, clock) -> tuple[bytes, int, bytes]:
    """A c10 line's bytes but its clock's (``envelope.C10_CLOCK``'s match): what comes before the clock, the
    clock's length, what comes after it (from the clock's closing mark)."""
    at = clock.start(1)
    return raw[:at], clock.end() - at, raw[clock.end() - 1:]


def _seen_at(raw: bytes, memo: dict) -> tuple[Any, str] | None:
    """What ``memo`` remembers of a line of the same bytes but its clock's, and the time its own clock reads
    (``envelope.c10_time``); None when it remembers none or the clock reads no time."""
    clock = C10_CLOCK.match(raw)
    if clock is None:
        return None
    seen = memo.get(_but_clock(raw, clock))
    if seen is None:
        return None
    time = c10_time(clock[1], clock[2])
    return None if time is None else (seen, time)


def event_opener_raw(feeder, n: int, raw: bytes) -> bool:
    """:func:`opener` of a line whose bytes but its clock's are remembered (:data:`_EVENT_OPENERS`), followed by
    a line the quiet skip counts: its event made at its time, both lines counted, the window moved as
    ``Feeder._feed`` moves it. False: nothing was done but what ``Feeder.feed`` does first (idle records closed)."""
    got = _seen_at(raw, _EVENT_OPENERS)
    if got is None:
        return False
    seen, time = got
    if not _opens(feeder, n, seen):
        return False
    kind, level, text, rank, local_rank, node_rank, host, pid, template, rank_source, attempt, process, folds = seen[2]
    ev = Event(kind, level, feeder.name, n, text, n + seen[3], rank, local_rank, node_rank, host, pid, time, template,
               {k: (list(v) if isinstance(v, list) else v) for k, v in seen[4].items()}, rank_source, attempt, process, folds)
    stats = feeder.stats
    stats.relevant += 1
    stats.understood += 1
    stats.events += 1
    stats.irrelevant += 1
    feeder.out.append(ev)
    return True


# c10 lines with their clock that open a record (``may_start``: every c10 line), as a rank prints its
# warnings again and again at other times (``[rank11]:[W1129 10:00:36.151292000 ProcessGroupNCCL.cpp:4115]
# [PG ID 0 PG GUID 0 Rank 11]  using GPU 3 to perform barrier ...``): their bytes but the clock's
# (``envelope.C10_CLOCK``) -> the envelope's values but the time, and the message. ``Feeder.line`` hands such
# a line (a candidate: no keyword reaches into a clock) to ``alone``, which gives it back (``may_start``), then
# to ``Feeder.feed``; :func:`clocked_raw` does what they do from the envelope and message remembered.
_CLOCKED: dict[tuple[bytes, int, bytes], tuple] = {}
MAX_CLOCKED = 1 << 12
_C10 = ("c10",)


def _learn_clocked(raw: bytes, text: str, env: Envelope, msg: str) -> None:
    clock = C10_CLOCK.match(raw)
    if (clock is None or env.time is None or env.time != c10_time(clock[1], clock[2]) or raw.find(b"%|") >= 0
            or not as_read(raw) or not raw.isascii() or raw.decode() != text or _CANDIDATE.search(text) is None):
        return
    if len(_CLOCKED) >= MAX_CLOCKED:
        _CLOCKED.clear()
    _CLOCKED[_but_clock(raw, clock)] = (
        tuple(getattr(env, f) for f in _ENV_FIELDS), msg)


_ENV_FIELDS = tuple(Envelope.__dataclass_fields__)


def clocked_raw(feeder, n: int, raw: bytes) -> bool:
    """``Feeder.line(n, text, True, raw)`` of a line whose bytes but its clock's are remembered (:data:`_CLOCKED`):
    idle records closed (``alone``), then the line assembled as ``Feeder._feed`` assembles it, its envelope
    the one remembered at the time ``envelope.c10_time`` reads from its clock. False: nothing was done."""
    if feeder.paste is not None:
        return False
    got = _seen_at(raw, _CLOCKED)
    if got is None:
        return False
    seen, time = got
    lasts = feeder.asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as alone() does first (then feed() again, closing nothing)
    env = Envelope(*seen[0])
    env.time = time
    msg = seen[1]
    feeder.feed_unwrapped(n, env, msg, len(raw) - len(msg), True)
    return True


def opener_before_bar(feeder, n: int, raw: bytes, nxt: bytes) -> bool:
    """:func:`opener_raw` of line ``n`` (``raw``, remembered in :data:`_OPENERS`) followed by a candidate ``nxt`` of
    the lines without an envelope that no quiet record would take, known by its bytes: a progress bar of a shape
    read before without an envelope (``bars._BAR_SHAPES``, no CR), or a line of :data:`_NOTHING` or
    :data:`_OPENERS`. Such a line cannot continue the record line ``n`` opens, so it ends it, which gives nothing,
    and is then read as it is without it. Line ``n`` counted, the window moved as ``Feeder._feed`` moves it;
    ``nxt`` is the caller's next line. False: nothing was done but what ``Feeder.feed`` does first (idle
    records closed)."""
    seen = _OPENERS.get(raw)
    if seen is None:
        return False
    after = _OPENERS.get(nxt)
    if not ((after is not None and after[0]) or _NOTHING.get(nxt)
            or (nxt.find(b"\r") < 0 and _BAR_SHAPES.get(nxt.translate(_DIGIT0)) is True)):
        return False
    if not _opens(feeder, n, seen):
        return False
    feeder.stats.irrelevant += 1
    return True


def opener_pair(feeder, buf: bytes, nl: int, end: int, lineno: int, raw: bytes, quiet_skip) -> int:
    """Line ``lineno`` (``raw``, a candidate ending at ``nl`` in ``buf``, read while ``Feeder.state`` is 0 or 1) and
    the next line, one the block scan's quiet skip (``quiet_skip``) counts, read as :func:`opener` reads them: the
    start of the line after the two when both were read, ``nl + 1`` when line ``lineno`` alone was, -1 when it
    is to be fed as usual (nothing was done but closing idle records)."""
    if raw.find(b"NCCL") >= 0:
        return -1  # (NCCL's lines: the NCCL lanes read them, the usual path)
    nxt = buf.find(b"\n", nl + 1, end)
    if nxt < 0 or not quiet_skip(buf[nl + 1:nxt]):
        return -1
    seen = _OPENERS.get(raw)
    if seen is not None and opener_raw(feeder, lineno, seen):
        return nxt + 1
    if _EVENT_OPENERS and event_opener_raw(feeder, lineno, raw):
        return nxt + 1  # (a c10 warning of no process printed again at another time)
    text = _clean(raw)
    return nxt + 1 if opener(feeder, lineno, text, _CANDIDATE.search(text) is not None, raw) else nl + 1
