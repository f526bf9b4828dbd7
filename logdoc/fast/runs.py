"""A run of lane lines counted in one loop; plain twin: the loop of :func:`logdoc.fast.scan._dense`
(each line through its checks, then :meth:`~logdoc.fast.lane.Lane.fold`, ``Lane.launch``, ``Feeder.line``).

In a dense NCCL INFO region (folding, no control byte in the region, nothing open: ``lane_state`` 0),
most lines are lines whose bytes the lane read before (``_RAW_LANE``, :meth:`Lane.fold` or
:meth:`Lane.hit`), lines of a bulk plan (:meth:`Lane.bulk`), collective launches of a quick plan
(:meth:`Lane.launch`) or lines whose message their process printed before into a full group
(:func:`message_raw`). None of them changes the feeder's state: the state that let the first line of
a run through lets the next ones through, so :func:`run` takes them one after the other in one loop
(the checks of ``_dense`` that would give another path first, a bar's ``%|`` and ``alone._NOTHING``,
asked of each line), counted by :meth:`Lane.fold` and ``Reducer.count_launch`` as ``_dense``'s path
counts them. It stops at the first line that is none of them, or that any check would send elsewhere,
and leaves that line to ``_dense``, which reads it as before; a launch is counted here only when
:meth:`Lane.launch` would count it the same way.
"""
from __future__ import annotations

from .. import nccl
from ..classify.formats import SHORT_TEXT
from .lane import _LANE_MEMO, _RAW_LANE
from .messages import _MESSAGE_MEMO, message_event
from .plans import (_BLANK_END, _BULK_PLANS, _HEAD_GROUPS, _HEADS, _HEXB, _MSF_BYTES, _NO_HEAD, LANE_HEAD,
                    MAX_BULK_PLANS, _head_of)

# [runs, message_raw in runs]; off: _dense reads those lines itself (tests/test_fastpath_launch.py compares)
ON = [True, True]


def run(lane, lines: list, i: int, lineno: int, nothing, message=None) -> int:
    """Count ``lines[i]`` (line ``lineno``) and the lines after it while each is a lane line read before,
    a line :meth:`Lane.bulk` counts, a quick collective launch :meth:`Lane.launch` counts or a line
    ``message`` (:func:`message_raw`, when the feeder has no paste repair) counts; the index of the first
    line not counted (``i`` when none was). Only when ``lane_state`` is 0, folding, in a region without
    control bytes or escapes written out as text (the caller's conditions)."""
    raw_lane = _RAW_LANE
    plans = _BULK_PLANS
    heads = _HEADS
    hexb = _HEXB
    blank = _BLANK_END
    msf = _MSF_BYTES
    tails = lane.launch_tails
    raw_tails = lane.raw_tails
    refused = nccl.grammar_refused
    build = lane._build_raw
    n = lineno - 1
    j = i
    end = len(lines)
    folded = 0
    while j < end:
        raw = lines[j]
        # (bytes.find, not `in`: `sub in raw` first tries sub as an integer, a TypeError raised and cleared)
        if raw.find(b"%|") >= 0 or (nothing is not None and raw in nothing):
            break  # (a bar, a line whose record gave nothing: _dense's earlier checks)
        n += 1
        seen = raw_lane.get(raw)
        if seen is not None:
            if not lane.fold(n, seen):  # (_dense's way, which changes no state)
                lane.hit(n, seen)
            j += 1
            continue
        if raw.find(b"NCCL INFO ") < 0:
            break
        plan = plans.get(raw.translate(None, hexb))
        if plan is None:
            if message is None or not message(lane, n, raw) and not _line(lane, n, raw):
                break
            j += 1
            continue
        if plan.quick is None:
            if not lane.bulk(n, raw, plan):
                break  # (_dense asks it again, then reads the line as usual)
            j += 1
            continue
        # Lane.launch with lane_state 0: any line it would give to Lane.bulk, or refuse, is left to it
        k = raw.find(b" NCCL INFO ") + 11
        if k < 11 or len(raw) >= 640 or raw[-1] in blank or raw[0] in msf or len(raw) - k > SHORT_TEXT \
                or not raw.isascii():
            break
        rx = plan.raw_std
        if rx is not None:
            # the word's test and the message's match on its bytes (plans._raw_std; the family check settled by
            # the shape, plans._no_family); the launch kept with its communicator's others (_pending, flush)
            got = rx.match(raw, k)
            if got is None:
                break
            og, cg, kg = plan.raw_groups
            oc, comm = got.group(og, cg)
            try:
                int(oc, 16)
            except (TypeError, ValueError):
                break
            if kg is None:
                coll = plan.launch[1]
            else:
                coll = got.group(kg)
                if not coll:
                    break
            q = raw_tails.get((raw[:k], comm))
            if q is None:
                q = _pending(lane, raw[:k], comm)
                if q is None:
                    break
            items = q[2]
            items.append((n, coll, oc, raw))
            if len(items) >= MAX_PENDING:
                lane.count_pending(q)
            folded += 1
            j += 1
            continue
        head = heads.get(raw[:k], _NO_HEAD)
        if head is _NO_HEAD or head is None:
            break
        msg = raw[k:].decode()
        if plan.family(msg) is not None and not refused(msg):
            break
        word = plan.word
        if not msg.startswith(word) or (len(msg) > len(word) and msg[len(word)] != " "):
            break
        got = plan.std.match(msg)
        if got is None:
            break
        _, _, og, cg, kg = plan.quick
        oc, comm = got.group(og - _HEAD_GROUPS, cg - _HEAD_GROUPS)
        try:
            int(oc, 16)
        except (TypeError, ValueError):
            break
        if kg is None:
            coll = plan.launch[1]
        else:
            coll = got.group(kg - _HEAD_GROUPS)
            if not coll:
                break
        tk = (head[0], head[1], comm)
        t = tails.get(tk)
        if t is None or not lane.count_launch(tk, t, n, coll, oc, raw, build):
            break
        folded += 1
        j += 1
    lane.folded += folded
    return j


MAX_PENDING = 1 << 8  # launches kept per communicator before they are counted (their bytes are held till then)


def _pending(lane, head: bytes, comm: bytes) -> list | None:
    """The launches not yet counted of the tail of a header's bytes ``head`` (its host and pid, ``_HEADS``) and
    a comm's bytes, ``[tail key, tail, launches]`` (``Lane.pending``, found by the bytes in ``Lane.raw_tails``),
    once the tail has its first launch (``Lane.launch_tails``); None otherwise: the line is left to
    ``_dense`` (``Lane.launch``, which reads an unknown header and makes the tail)."""
    hp = _HEADS.get(head, _NO_HEAD)
    if hp is _NO_HEAD or hp is None:
        return None
    tk = (hp[0], hp[1], comm.decode())
    t = lane.launch_tails.get(tk)
    if t is None:
        return None
    q = lane.pending.get(tk)
    if q is None:
        q = lane.pending[tk] = [tk, t, []]
    if len(lane.raw_tails) >= MAX_BULK_PLANS:
        lane.raw_tails.clear()
    lane.raw_tails[(head, comm)] = q
    return q




def message_raw(lane, n: int, raw: bytes) -> bool:
    """What ``Feeder.line`` -> :meth:`Lane.line` -> :meth:`Lane._fold_message` does with line ``n`` when its
    message was counted into its process's full group before (``Lane.message_groups``), found from the
    header's bytes and the message's: without the text's ``LANE_HEAD`` twice, ``Feeder.line``'s branches
    and ``Lane.ok`` for the lines it refuses. For a lane line (``NCCL INFO `` in its bytes) of no bulk plan,
    read while ``lane_state`` is 0 in a region without control bytes (its bytes are its text) and no paste
    repair (the caller's conditions). The refusal is the cheap part: the header's bytes (``_HEADS``: the
    host and pid ``LANE_HEAD`` reads, which ends at the first `` NCCL INFO ``) and one look-up of (message,
    host, pid); then the checks of the usual path (``Lane.ok``, ``_LANE_MEMO``, the length). False: nothing
    was done."""
    k = raw.find(b" NCCL INFO ") + 11
    if k < 11 or len(raw) >= 640:
        return False
    head = _HEADS.get(raw[:k], _NO_HEAD)
    if head is _NO_HEAD:
        head = _head_of(raw[:k]) if raw.isascii() else None
    if head is None:
        return False
    try:
        msg = raw[k:].decode()
    except UnicodeDecodeError:
        return False
    g = lane.message_groups.get((msg, head[0], head[1]))
    if g is None:
        return False
    text = raw.decode()
    if text in _LANE_MEMO or not lane.ok(text):
        return False  # (Lane.line reads it from its memo; Feeder.line feeds it)
    name = lane.name
    classify = lane.classify
    lane.out.count_into(g, n, lambda: message_event(name, n, text, classify))
    lane.folded += 1
    got = _MESSAGE_MEMO.get(msg)
    if got is not None:
        lane._remember_raw(raw, text, None, got, g)
    return True


def _line(lane, n: int, raw: bytes) -> bool:
    """What ``_dense`` and ``Feeder.line`` do with a lane line of no bulk plan that :func:`message_raw` refused,
    in a run (its bytes hold ``NCCL``, a keyword: a candidate; no paste repair): its text read by
    :meth:`Lane.line` when ``LANE_HEAD`` matches it and :meth:`Lane.ok` vouches for it (that changes no
    state of the feeder: the line is its own record, settled or counted). False: nothing was done."""
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return False
    if LANE_HEAD.match(text) is None or not lane.ok(text):
        return False
    lane.line(n, text, raw)
    return True
