"""The bar lane (folding only); plain twin: :meth:`logdoc.pipeline.Feeder.feed`.

A progress bar (``Epoch 0:  46%|####  | 461/1000 [07:41<08:59, ...]``, two thirds of the candidate
lines of both generators' mixed logs) read while nothing is open, or only quiet records of other
streams that it cannot continue, is counted into its stream's saturated ``app.progress`` group
without being assembled, classified or built (:func:`bar`). A bar whose clean bytes, every ASCII
digit read as ``0``, are those of a bar :func:`bar` read without an envelope is counted so from its
bytes, without being cleaned, decoded or unwrapped (:func:`bar_raw`, :data:`_BAR_SHAPES`). Both are
methods of :class:`logdoc.fast.lane.Lane` (``Lane.bar``, ``Lane.bar_raw``), whose state they use.
"""
from __future__ import annotations

from ..blocks import IDLE, Record, may_join_quiet, may_start
from ..classify.torch import BAR_TEMPLATE, bar_alone
from ..envelope import unwrap
from ..events import Envelope, Event
from ..read.lines import after_bars
from ..read.source import as_read
from .plans import MAX_BULK_PLANS

_ENV0 = Envelope()


# The bar lane's memo by bytes (bar_raw): a bar's clean bytes (after its last CR) with every ASCII digit
# read as 0 -> whether no quiet record would take it (quiet_ok), for the bars read without an envelope.
_BAR_SHAPES: dict[bytes, bool] = {}
MAX_BAR_SHAPES = 1 << 12
_DIGIT0 = bytes.maketrans(b"123456789", b"000000000")
_NO_STREAM = Envelope().stream_key()
# the literals with digits among the tests bar() runs (read.source's `#033[`, residue's `[c10d`), as keys hold them
_BAR_REFUSED = (b"#000[", b"c00d")


def _learn_bar(raw: bytes, text: str, qok: bool) -> None:
    """Remember, for :func:`bar_raw`, a bar line that :func:`bar` read without an envelope:
    its clean bytes (after its last CR) with every digit read as 0. Only bytes without control bytes,
    escapes written out as text (``#033[``, ``^[[``, a backslash) and valid UTF-8 that decode to ``text``
    (what ``read.source._clean`` returns for them)."""
    raw = after_bars(raw)
    if not as_read(raw):
        return
    key = raw.translate(_DIGIT0)
    if any(w in key for w in _BAR_REFUSED):
        return  # the literals with digits that the readers ask for: the key cannot tell them apart
    try:
        if raw.decode() != text:
            return
    except UnicodeDecodeError:
        return
    if len(_BAR_SHAPES) >= MAX_BAR_SHAPES:
        _BAR_SHAPES.clear()
    _BAR_SHAPES[key] = qok


def bar(lane, n: int, text: str, raw: bytes | None = None) -> bool:
    """The bar lane (folding only): count line ``n``, a candidate line holding ``%|``, into its
    stream's saturated ``app.progress`` group without its event. False: nothing was done but
    what ``Feeder.feed`` does first (idle records closed), and the caller feeds it. What
    ``Feeder.feed`` would do with it, checked here: the assembler hands it back alone and
    changes nothing (``may_start`` false: it opens nothing; nothing open, or only quiet records
    and the line is none of their continuation lines and not of their streams), the NCCL reader
    passes it by (no ``NCCL``, `` WARN ``, `` INFO ``), the PyTorch reader reads it as a bar
    alone (``classify.torch.bar_alone``, whose event has no nested message), and the group is
    the one ``digest.group_key`` gives the event of that stream."""
    if "NCCL" in text or " WARN " in text or " INFO " in text:
        return False
    feeder = lane.feeder
    asm = feeder.asm
    lasts = asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as feed() does first (then again, closing nothing)
    st = feeder.lane_state
    if st == 2:
        return False
    env, msg = unwrap(text)
    if may_start(msg, env) or not bar_alone(msg):
        return False
    qok = not may_join_quiet(msg)  # (lane.quiet_ok)
    if raw is not None and msg == text and env == _ENV0:
        _learn_bar(raw, text, qok)
    if st == 1 and (not qok or asm.stream_open(env.stream_key())):
        return False
    stream = (env.host, env.pid, env.rank, env.local_rank, env.node_rank)
    gk = lane.bar_keys.get(stream)
    if gk is None:
        gk = _bar_key(lane, stream, n, env, msg)
    name = lane.name
    classify = lane.classify
    if not lane.out.saturated(gk[0], gk[1], n, lambda: classify(Record(n, n, env, msg), name)):
        return False
    lane.folded += 1
    return True


def _bar_key(lane, stream: tuple, n: int, env: Envelope, msg: str) -> tuple:
    if len(lane.bar_keys) >= MAX_BULK_PLANS:
        lane.bar_keys.clear()
    probe = Event("app.progress", "INFO", lane.name, n, msg, n, env.rank, env.local_rank, env.node_rank,
                  env.host, env.pid, env.time, BAR_TEMPLATE, {})
    gk = lane.bar_keys[stream] = lane.group_key(probe)
    return gk


def bar_raw(lane, n: int, raw: bytes) -> bool:
    """:func:`bar` of a candidate line from its bytes, when its clean bytes with every ASCII digit
    read as ``0`` are those of a bar :func:`bar` read without an envelope (:data:`_BAR_SHAPES`).
    False: nothing was done but what ``Feeder.feed`` does first (idle records closed), and the
    caller takes the usual path.

    Why the bytes are enough: the clean text of such a line is its bytes after the last CR,
    decoded (:func:`_learn_bar` took only bytes without control bytes, escapes written out as
    text or a backslash, and valid UTF-8, and digits are ASCII); and what :func:`bar` asks of the
    text (``unwrap`` peels nothing and leaves the text whole, ``may_start`` is false, ``bar_alone``
    true, ``quiet_ok``, no ``NCCL``, `` WARN ``, `` INFO ``) is the same for every text that differs
    from it only in the values of its digits: their patterns read a digit as ``\\d`` only
    (``tests/test_fastpath.py::test_bar_shape_patterns_read_no_digit_value`` holds them to it),
    and their code asks ``isdecimal``/``isdigit`` or a count of digits, never a value, on that way."""
    if raw.find(b"\r") >= 0:  # (find, not `in`: bytes' `in` tries an integer first, a TypeError raised)
        raw = after_bars(raw)
    qok = _BAR_SHAPES.get(raw.translate(_DIGIT0))
    if qok is None:
        return False
    feeder = lane.feeder
    asm = feeder.asm
    lasts = asm.lasts
    if lasts and lasts[0][0] < n - IDLE:  # (none is idle before the first: BlockAssembler.lasts)
        feeder._close_idle(n)  # as feed() does first
    st = feeder.lane_state
    if st == 2 or (st == 1 and (not qok or asm.stream_open(_NO_STREAM))):
        return False
    g = lane.bar_full
    if g is None:
        gk = lane.bar_keys.get((None, None, None, None, None))
        if gk is None:
            gk = _bar_key(lane, (None, None, None, None, None), n, Envelope(), raw.decode())
        g = lane.out.full_group(gk[0], gk[1])
        if g is None:
            return False
        lane.bar_full = g  # (a full group stays full: Reducer.full_group; saturated() without its look-ups)
    name = lane.name
    classify = lane.classify
    lane.out.count_into(g, n, lambda: classify(Record(n, n, Envelope(), raw.decode()), name))
    lane.folded += 1
    return True
