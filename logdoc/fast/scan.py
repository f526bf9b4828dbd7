"""The block scan; plain twin: :meth:`logdoc.pipeline.Feeder.read_lines` (every line, one by one).

:func:`scan` finds the candidate lines of a block with one ``bytes.find`` pass per prefilter
keyword (or takes them from grep, :mod:`logdoc.fast.grep`) instead of looking at every line in
Python; the lines between candidates are only counted (``bytes.count``), except while the feeder
needs every line (:meth:`~logdoc.pipeline.Feeder.needs_every_line`). A block where most lines
are candidates (an ``NCCL_DEBUG=INFO`` log) is read line by line (:func:`_dense`), with the lanes
(:mod:`logdoc.fast.lane`) taking the lines they read before. The same lines reach the feeder in
the same order as on the plain path, so the events and counts are the same.
"""
from __future__ import annotations

import re
from operator import methodcaller
from typing import Callable

from ..lazyre import lazy_re
from ..read import prefilter
from ..blocks import CONTINUATION_MARKS
from ..read.source import _clean
from .grep import DENSE_BYTES, GrepFailed
from .alone import _CLOCKED, _NOTHING, _OPENERS, alone_raw, clocked_raw, opener, opener_before_bar, opener_pair, opener_raw
from .lane import _RAW_LANE
from .plans import _BULK_PLANS, _HEXB
from . import runs

DENSE = 0.25   # a block with more candidate lines than this share is read line by line
SMALL = 64     # regions with fewer lines are read line by line
_ESC = b"\x1b"
_CTRL_BYTES = tuple(bytes([b]) for b in list(range(0, 9)) + [11, 12] + list(range(14, 32)) + [127]) + (b"\r",)

# _quiet_skip(raw), for a line that the keyword search (grep or the find passes) did not name, so
# that holds no keyword: the line is no candidate and cannot continue a quiet record, whatever its
# clean text: it is printable ASCII (no control byte, CR, ESC or UTF-8 that cleaning or decoding
# would change), not blank, without a continuation mark. The marks that hold a keyword (`nccl`,
# `Last error:`, `WorkNCCL(`...) or another mark (`frame #`) need no looking for, and the tab is a
# control byte: one search of a few literals (a fifth of the cost of every keyword and mark).
_MARKS = [k for k in CONTINUATION_MARKS if k != "\t" and not any(w in k for w in prefilter.KEYWORDS)]
_NOT_QUIET = lazy_re(rb"[\x00-\x1f\x7f]|" + b"|".join(
    re.escape(k.encode("ascii")) for k in _MARKS if not any(o != k and o in k for o in _MARKS)))


# _NOT_QUIET's test by C scans of the bytes (its pattern, led by a class, is tried at every byte):
# no byte is a control byte (deleting them leaves the length) and no mark is in the line.
_CTRL_DELETE = bytes(range(0, 32)) + b"\x7f"
_MARK_BYTES = tuple(k.encode("ascii") for k in _MARKS if not any(o != k and o in k for o in _MARKS))


def _quiet_skip(raw: bytes) -> bool:
    if not raw.isascii() or len(raw.translate(None, _CTRL_DELETE)) != len(raw) or raw.strip(b" ") == b"":
        return False
    find = raw.find  # (not `k in raw`: bytes' `in` tries an integer first and raises and clears a TypeError)
    for k in _MARK_BYTES:
        if find(k) >= 0:
            return False
    return True


_CTRL_BUT_NL = _CTRL_DELETE.replace(b"\n", b"")


def _quiet_run(buf: bytes, start: int, end: int) -> bool:
    """Whether :func:`_quiet_skip` is true of every line of ``buf[start:end]`` (whole lines, each
    ending in ``\n``): its tests, made once on the run (no mark holds a newline)."""
    if end - start < 2:
        return False
    run = buf[start:end]
    if not run.isascii() or len(run.translate(None, _CTRL_BUT_NL)) != len(run):
        return False
    find = run.find
    for k in _MARK_BYTES:
        if find(k) >= 0:
            return False
    bare = run.replace(b" ", b"")  # a line of blanks only: an empty line once they are gone
    return bare[:1] != b"\n" and b"\n\n" not in bare


def _quiet_run_by_shape(buf: bytes, start: int, end: int) -> bool:
    """:func:`_quiet_run` of a run of whole lines that hold no keyword (the lines between two keyword lines of
    the block scan), from each line's class by shape (:func:`line_class`: ORDINARY is no keyword and
    :func:`_quiet_skip` true): a translation and a look-up per line in C, where :func:`_quiet_run` makes a dozen
    scans of the run (its nine marks searched for are half its cost). A line whose shape is not known yet is
    classified (and remembered)."""
    if end - start < 2:
        return False
    lines = buf[start:end - 1].split(b"\n")
    got = list(map(_SHAPES.get, map(_TO_SHAPE, lines)))
    if got.count(ORDINARY) == len(got):
        return True
    if None not in got:
        return False
    for raw in lines:
        if line_class(raw) != ORDINARY:
            return False
    return True


def _quiet_skip_rx(raw: bytes) -> bool:
    """The plain twin of :func:`_quiet_skip` (tests/test_fastpath.py compares them)."""
    return raw.isascii() and _NOT_QUIET.search(raw) is None and raw.strip(b" ") != b""


# The starts of an escape written out as text (read.source._ANSI_TEXT: `#033[`, `^[[`, `\u001b[`, `\x1b[`,
# `\033[`, `\e[`), which cleaning removes: a line holding one is cleaned, not only decoded.
_ANSI_TEXT_LEADS = (b"#033[", b"^[[", b"\\u001b[", b"\\u001B[", b"\\x1b[", b"\\x1B[", b"\\033[", b"\\e[")
_CTRL_RX = lazy_re(b"[" + b"".join(re.escape(b) for b in _CTRL_BYTES) + b"]|"
                   + b"|".join(re.escape(b) for b in _ANSI_TEXT_LEADS))


# The escapes written out as text by their first byte: a byte rare in a log, looked for alone (memchr),
# and each place it is at asked for its escapes (a search of the longer texts costs ten times more).
_LEADS_BY_BYTE = tuple((b, tuple(x for x in _ANSI_TEXT_LEADS if x[:1] == b))
                       for b in dict.fromkeys(x[:1] for x in _ANSI_TEXT_LEADS))
_FEW = 64  # places of a first byte asked one by one; more: the escapes are searched for


def _region_is_plain(buf: bytes, start: int, end: int) -> bool:
    """No CR, ESC or other control byte in ``buf[start:end]``, and no escape written out as text:
    its lines are their own clean text."""
    find = buf.find
    for b in _CTRL_BYTES:
        if find(b, start, end) >= 0:
            return False
    for b, leads in _LEADS_BY_BYTE:
        i = find(b, start, end)
        k = 0
        while i >= 0 and k < _FEW:
            for x in leads:
                if buf.startswith(x, i) and i + len(x) <= end:
                    return False
            i = find(b, i + 1, end)
            k += 1
        if i >= 0:
            for x in leads:
                if find(x, i, end) >= 0:
                    return False
    return True


def _region_is_plain_scan(buf: bytes, start: int, end: int) -> bool:
    """The plain twin of :func:`_region_is_plain` (one search per byte and escape; tests/test_fastpath_alone.py)."""
    find = buf.find
    for b in _CTRL_BYTES + _ANSI_TEXT_LEADS:
        if find(b, start, end) >= 0:
            return False
    return True


# A line's keywords and quiet skip by its shape (its bytes with every digit a 0); plain twins:
# prefilter.CANDIDATE_BYTES and _quiet_skip. A rank's ordinary prints differ in their numbers only (step,
# loss, time, rank), and one search of the 47 keywords costs 3 to 7 us a line, the look-up about 0.3 us.
# A keyword without a digit is in a line exactly when it is in its shape (a digit becomes a digit); a
# shape that holds a keyword with digits made 0 (`c10d`: `c00d`) is not kept, so every line of a kept
# shape says what the line that made it said. A line's other tests (ASCII, control bytes, blanks,
# continuation marks: none holds a digit) are the same for its shape.
_DIGIT0 = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_KEYS = tuple(k.translate(_DIGIT0) for k in prefilter.KEYWORDS_BYTES if k != k.translate(None, b"0123456789"))
KEYWORD, PLAIN, ORDINARY = 0, 1, 2  # a keyword; none but not counted by the quiet skip; none and counted
MAX_SHAPES = 16384
_SHAPES: dict[bytes, int] = {}
_TO_SHAPE = methodcaller("translate", _DIGIT0)


def line_class(raw: bytes) -> int:
    """KEYWORD, PLAIN or ORDINARY for one line's bytes (remembered by shape)."""
    key = raw.translate(_DIGIT0)
    got = _SHAPES.get(key)
    if got is None:
        got = line_class_plain(raw)
        for k in _DIGIT_KEYS:
            if key.find(k) >= 0:
                return got
        if len(_SHAPES) >= MAX_SHAPES:
            _SHAPES.clear()
        _SHAPES[key] = got
    return got


def line_class_plain(raw: bytes) -> int:
    """The plain twin of :func:`line_class`: the keyword search and the quiet skip of the line itself."""
    if prefilter.CANDIDATE_BYTES.search(raw) is not None:
        return KEYWORD
    return ORDINARY if _quiet_skip(raw) else PLAIN


def _dense(feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int) -> int:
    """A region where most lines are candidates: line by line (the NCCL lane does most of them);
    a line without CR or control bytes needs no cleaning, only decoding (in a region that holds
    some, a rank log's progress bars redrawn with CR, each line is asked; the others are cleaned
    and fed as :meth:`~logdoc.pipeline.Feeder.read_lines` feeds them)."""
    ctrl = None if _region_is_plain(buf, start, end) else _CTRL_RX.search
    clean = _clean
    line = feeder.line
    cand = prefilter._CANDIDATE.search
    lane = feeder.lane
    raw_lane = _RAW_LANE
    plans = _BULK_PLANS
    bulk = lane.bulk if lane is not None and lane.reduce else None
    launch = lane.launch if bulk is not None else None
    fold = lane.fold if lane is not None and lane.reduce else None
    bars = lane.bar_raw if lane is not None and lane.reduce else None
    hexb = _HEXB
    kind = line_class
    pasted = feeder.paste
    every = feeder.every
    stats = feeder.stats
    nothing = _NOTHING if lane is not None else None
    lines = buf[start:end - 1].split(sep) if end > start else []
    last = len(lines) - 1
    pairs = lane is not None and sep == b"\n" and feeder.paste is None and not every  # (fast.alone.opener)
    skip = -1
    run = runs.run if bulk is not None and ctrl is None and runs.ON[0] else None  # (fast.runs)
    message = runs.message_raw if feeder.paste is None and runs.ON[1] else None
    resume = 0
    for i, raw in enumerate(lines):
        if i < resume:
            continue  # counted by runs.run
        lineno += 1
        if i == skip:
            continue  # the line after an opener, read with it
        if bars is not None and raw.find(b"%|") >= 0 and bars(lineno, raw):
            continue  # a bar of a shape read before, counted from its bytes (Lane.bar_raw)
        if nothing is not None and raw in nothing and alone_raw(lane, lineno, raw):
            continue  # a line whose record gave nothing before, counted from its bytes (fast.alone.alone_raw)
        if ctrl is not None and ctrl(raw) is not None:
            text = clean(raw)
            line(lineno, text, cand(text) is not None)
            continue
        if lane is not None:
            st = feeder.lane_state
            if st == 0 and run is not None and i != resume:  # (not the line a run stopped at)
                resume = run(lane, lines, i, lineno, nothing, message)
                if resume > i:
                    lineno += resume - i - 1
                    continue
            if st == 0 or st == 1:
                seen = raw_lane.get(raw)
                if seen is not None and (st == 0 or seen.quiet_ok):
                    if fold is None or not fold(lineno, seen):
                        lane.hit(lineno, seen)
                    continue
                if bulk is not None and raw.find(b"NCCL INFO ") >= 0:  # (every plan's shape holds it: LANE_HEAD)
                    plan = plans.get(raw.translate(None, hexb))
                    if plan is not None and (launch(lineno, raw, plan) if plan.quick else bulk(lineno, raw, plan)):
                        continue
        st = feeder.state
        cls = -1
        if not every and st != 2 and raw.isascii():
            cls = KEYWORD if raw.find(b"NCCL") >= 0 else kind(raw)  # (an NCCL line's numbers and addresses vary)
            if cls == ORDINARY or (cls == PLAIN and st == 0):
                if st != 3:
                    stats.irrelevant += 1  # line(): no keyword (its bytes are its text), nothing open or quiet
                    continue
                if pasted is None:  # only quiet records are open and the line cannot continue one: line() counts
                    feeder.passed()  # it and ends the record of the lines without an envelope (a line the paste
                    continue  # repair joined to the one before it is only counted: line() asks)
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            text = clean(raw)
            line(lineno, text, cand(text) is not None)
            continue
        if cls < 0:
            cls = KEYWORD if raw.find(b"NCCL") >= 0 else kind(raw)
        c = cls == KEYWORD  # (a keyword: its bytes are in the line's exactly when it is in the text)
        if c and pairs and i < last and feeder.state < 2 and raw.find(b"NCCL") < 0:
            nxt = lines[i + 1]  # no candidate, its bytes its clean text, and one the quiet skip counts
            if kind(nxt) == ORDINARY and (ctrl is None or ctrl(nxt) is None):
                seen = _OPENERS.get(raw)
                if seen is not None and opener_raw(feeder, lineno, seen):
                    skip = i + 1  # (fast.alone.opener: the record this line opens and the next line ends)
                    continue
                if opener(feeder, lineno, text, c, raw):
                    skip = i + 1
                continue
        line(lineno, text, c, raw)
    return lineno


def candidate_starts(buf: bytes, start: int, end: int, sep: bytes, budget: int) -> list[int] | None:
    """The starts of the lines of ``buf[start:end]`` (whole lines, each ending in the one byte ``sep``) that
    hold a keyword or an ESC, in order, or None when there are more than ``budget``: each line's class
    by its shape (:func:`line_class`), a look-up for a line whose shape was seen. Plain twin:
    :func:`candidate_starts_find` (one ``bytes.find`` pass per keyword: 48 passes over the block cost
    five to ten times the look-ups on a rank's training output)."""
    kind = line_class
    out: list[int] = []
    add = out.append
    pos = start
    for raw in buf[start:end].split(sep):
        if raw.find(b"NCCL") >= 0 or kind(raw) == KEYWORD or raw.find(_ESC) >= 0:  # (NCCL's lines: new shapes)
            add(pos)
            if len(out) > budget:
                return None
        pos += len(raw) + 1
    return out


def candidate_starts_find(buf: bytes, start: int, end: int, sep: bytes, budget: int) -> list[int] | None:
    """The plain twin of :func:`candidate_starts` (tests/test_fastpath_ordinary.py compares them)."""
    find = buf.find
    rfind = buf.rfind
    starts: set[int] = set()
    add = starts.add
    for kw in prefilter.KEYWORDS_BYTES + (_ESC,):
        i = find(kw, start, end)
        while i >= 0:
            add(rfind(sep, start, i) + 1 or start)
            i = find(kw, find(sep, i, end) + 1, end)
            if len(starts) > budget:
                return None
    return sorted(starts)


def scan(feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int,
         hits: Callable[[int], tuple[list[int], list[int]] | None] | None = None) -> int:
    """Feed the lines of ``buf[start:end]`` (the first is line ``lineno + 1``); return the number of
    the last one. Only candidate lines and the lines a record needs are looked at in Python.
    ``hits(limit)``: the starts of the lines that hold a keyword or an ESC and their line
    numbers, when already known (grep), or None when there are more than ``limit``."""
    find = buf.find
    numbers = None
    if hits is not None:
        # grep numbered the hits: the lines between them need not be counted
        got = hits(max(SMALL, (end - start) // DENSE_BYTES))
        if got is None:
            return _dense(feeder, buf, start, end, sep, lineno)
        order, numbers = got
    else:
        nlines = buf.count(sep, start, end)
        if nlines < SMALL:
            return feeder.read_lines(buf, start, end, sep, lineno)
        got = candidate_starts(buf, start, end, sep, int(nlines * DENSE))
        if got is None:
            return _dense(feeder, buf, start, end, sep, lineno)
        order = got
    count = buf.count
    clean = _clean
    cand = prefilter._CANDIDATE.search
    stats = feeder.stats
    raw_lane = _RAW_LANE
    plans = _BULK_PLANS
    lane = feeder.lane
    bulk = lane.bulk if lane is not None and lane.reduce else None
    fold = lane.fold if lane is not None and lane.reduce else None
    bars = lane.bar_raw if lane is not None and lane.reduce else None
    hexb = _HEXB
    quiet_skip = _quiet_skip
    nothing = _NOTHING if lane is not None else None
    pairs = lane is not None and sep == b"\n"  # (fast.alone.opener)
    pos = start
    tried = start  # the lines before it were asked of _quiet_run and are looked at one by one
    idx = 0
    m = len(order)
    while True:
        if feeder.needs_every_line(lineno + 1):
            if pos >= end:
                break
            while idx < m and order[idx] < pos:
                idx += 1
            hit = idx < m and order[idx] == pos
            st = feeder.state
            if not hit and st == 1 and pos >= tried and sep == b"\n":
                # a run of lines without a keyword under Gate.QUIET, up to the next keyword line: when
                # every one of them is one _quiet_skip would count, all are counted at once (those past
                # the window are counted so by the skip below too); else they are looked at one by one
                nxt = order[idx] if idx < m else end
                if _quiet_run_by_shape(buf, pos, nxt):
                    if numbers is not None and idx < m:
                        run = numbers[idx] - 1 - lineno
                        if run < 0:
                            raise GrepFailed(f"line {numbers[idx]} out of step")
                    else:
                        run = count(sep, pos, nxt)
                    stats.irrelevant += run
                    lineno += run
                    pos = nxt
                    continue
                tried = nxt
            nl = find(sep, pos, end)
            if hit:
                if lane is not None and feeder.lane_state < 2 and feeder.paste is None:
                    # an NCCL line within a quiet record's window: the lanes read it from its bytes as they
                    # do outside the window (below); before, it was fed and classified (Lane.line)
                    raw = buf[pos:nl]
                    seen = raw_lane.get(raw)
                    if seen is not None and (feeder.lane_state == 0 or seen.quiet_ok):
                        lineno += 1
                        pos = nl + 1
                        if fold is None or not fold(lineno, seen):
                            lane.hit(lineno, seen)
                        continue
                    if bulk is not None and raw.find(b"NCCL INFO ") >= 0:
                        plan = plans.get(raw.translate(None, hexb))
                        if plan is not None and bulk(lineno + 1, raw, plan):
                            lineno += 1
                            pos = nl + 1
                            continue
                if bars is not None and buf.find(b"%|", pos, nl) >= 0 and bars(lineno + 1, buf[pos:nl]):
                    lineno += 1  # a bar of a shape read before, counted from its bytes (Lane.bar_raw)
                    pos = nl + 1
                    continue
                if nothing and buf[pos:nl] in nothing and alone_raw(lane, lineno + 1, buf[pos:nl]):
                    lineno += 1  # a line whose record gave nothing before, counted from its bytes (fast.alone.alone_raw)
                    pos = nl + 1
                    continue
                st = feeder.state
            if (st == 1 or (st == 3 and feeder.paste is None)) and not hit and quiet_skip(buf[pos:nl]):
                # only quiet records are open (Gate.QUIET, Gate.BARE) and the line is no candidate and
                # cannot continue one (printable ASCII only, so its bytes are its clean text): line()
                # would count it, and end the record of the lines without an envelope (Feeder.passed)
                lineno += 1
                if st == 3:
                    feeder.passed()
                else:
                    stats.irrelevant += 1
                pos = nl + 1
                continue
            raw = buf[pos:nl]
            lineno += 1
            if (hit and pairs and st == 1 and nl + 1 < end and not (idx + 1 < m and order[idx + 1] == nl + 1)
                    and feeder.paste is None and not feeder.every):
                got = opener_pair(feeder, buf, nl, end, lineno, raw, quiet_skip)
                if got >= 0:  # (fast.alone.opener: the record this line opens and the next line ends)
                    if got > nl + 1:
                        lineno += 1
                    pos = got
                    continue
            elif (hit and pairs and st == 1 and nl + 1 < end and raw in _OPENERS and feeder.paste is None
                  and not feeder.every and opener_before_bar(feeder, lineno, raw, buf[nl + 1:find(sep, nl + 1, end)])):
                pos = nl + 1  # (the record this line opens, which the bar after it ends: fast.alone.opener_before_bar)
                continue
            if not (_CLOCKED and clocked_raw(feeder, lineno, raw)):  # (a c10 line again: fast.alone.clocked_raw)
                text = clean(raw)
                feeder.line(lineno, text, cand(text) is not None, raw)
            pos = nl + 1
            continue
        while idx < m and order[idx] < pos:
            idx += 1
        if idx >= m:
            rest = count(sep, pos, end)
            stats.irrelevant += rest
            lineno += rest
            break
        s = order[idx]
        idx += 1
        if s > pos:
            if numbers is not None:
                skipped = numbers[idx - 1] - 1 - lineno
                if skipped < 0:
                    raise GrepFailed(f"line {numbers[idx - 1]} out of step")
            else:
                skipped = count(sep, pos, s)
            stats.irrelevant += skipped
            lineno += skipped
        nl = find(sep, s, end)
        raw = buf[s:nl]
        lineno += 1
        pos = nl + 1
        seen = raw_lane.get(raw)
        if seen is not None and lane is not None:
            st = feeder.lane_state
            if st == 0 or (st == 1 and seen.quiet_ok):
                if fold is None or not fold(lineno, seen):
                    lane.hit(lineno, seen)
                continue
        if bulk is not None and feeder.lane_state < 2 and raw.find(b"NCCL INFO ") >= 0:
            plan = plans.get(raw.translate(None, hexb))
            if plan is not None and bulk(lineno, raw, plan):
                continue
        if bars is not None and raw.find(b"%|") >= 0 and bars(lineno, raw):
            continue  # a bar of a shape read before, counted from its bytes (Lane.bar_raw)
        if nothing is not None and raw in nothing and alone_raw(lane, lineno, raw):
            continue  # a line whose record gave nothing before, counted from its bytes (fast.alone.alone_raw)
        if (pairs and feeder.state < 2 and pos < end and not (idx < m and order[idx] == pos)
                and feeder.paste is None and not feeder.every):
            got = opener_pair(feeder, buf, pos - 1, end, lineno, raw, quiet_skip)
            if got >= 0:  # (fast.alone.opener: the record this line opens and the next line ends)
                if got > pos:
                    lineno += 1
                pos = got
                continue
        elif (pairs and pos < end and raw in _OPENERS and feeder.state < 2 and feeder.paste is None and not feeder.every
              and opener_before_bar(feeder, lineno, raw, buf[pos:find(sep, pos, end)])):
            continue  # (the record this line opens, which the bar after it ends: fast.alone.opener_before_bar)
        if not (_CLOCKED and clocked_raw(feeder, lineno, raw)):  # (a c10 line again: fast.alone.clocked_raw)
            text = clean(raw)
            feeder.line(lineno, text, cand(text) is not None, raw)
    return lineno

