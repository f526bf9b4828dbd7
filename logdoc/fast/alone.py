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

from ..blocks import Record, may_join_quiet, may_start
from ..events import Envelope
from .plans import LANE_HEAD

_ENV0 = Envelope()
_NO_STREAM = Envelope().stream_key()


def _no_stream(env: Envelope, msg: str, text: str) -> bool:
    """A line of the stream without any envelope, whose bytes alone say what its record is: no envelope
    at all, or only a Python warning's (``file.py:N: UserWarning: ``: it names no process, and the same
    bytes peel to the same message and envelope, layers and all)."""
    return (env == _ENV0 and msg == text) or (env.layers == ("pywarn",) and env.stream_key() == _NO_STREAM)


_C0 = bytes(range(32)) + b"\x7f"
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
    if (len(raw.translate(None, _C0)) != len(raw) or raw.find(b"\\") >= 0 or raw.find(b"^[[") >= 0
            or raw.find(b"#033[") >= 0):
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
    if asm.has_open_block:
        feeder._close_idle(n)  # as feed() does first (then again, closing nothing)
    st = feeder.state
    if st != 0 and st != 1:
        return False  # (not lane_state: a traceback's code line holds no continuation mark)
    env, msg = feeder.unwrap(text)
    if env.layers and env.layers[-1] in _WARN_LIKE:
        return False
    if may_start(msg, env):
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
    if asm.has_open_block:
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
    and the line has no envelope, its bytes are remembered (:data:`_OPENERS`). Progress bars and the
    NCCL lane's lines are not: their lanes count them as they pass."""
    stats = feeder.stats
    before = (stats.irrelevant, stats.relevant, stats.events, len(feeder.unrecognized))
    feeder.line(n, text, cand, raw)
    if feeder.state != _BARE:
        return False
    window = feeder.until - n
    feeder.passed()
    if (feeder.state < 2 and stats.irrelevant == before[0] + 2
            and (stats.relevant, stats.events, len(feeder.unrecognized)) == before[1:]
            and raw.find(b"%|") < 0 and LANE_HEAD.match(text) is None):
        env, msg = feeder.unwrap(text)
        if _no_stream(env, msg, text):
            if len(_OPENERS) >= MAX_OPENERS:
                _OPENERS.clear()
            _OPENERS[raw] = (not may_join_quiet(msg), window)
    return True


def opener_raw(feeder, n: int, seen: tuple[bool, int]) -> bool:
    """:func:`opener` of a line whose bytes are remembered (``seen``: :data:`_OPENERS`' value), followed by
    a line the quiet skip counts: both counted as irrelevant, the window moved as ``Feeder._feed``
    moves it. False: nothing was done but what ``Feeder.feed`` does first (idle records closed)."""
    asm = feeder.asm
    if asm.has_open_block:
        feeder._close_idle(n)  # as feed() does first
    st = feeder.state
    if st != 0 and (st != 1 or not seen[0] or asm.stream_open(_NO_STREAM)):
        return False
    feeder.until = n + seen[1]
    feeder.stats.irrelevant += 2
    return True
