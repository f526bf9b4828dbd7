"""The NCCL lane and the bulk lane; plain twin: :meth:`logdoc.pipeline.Feeder.feed`.

The NCCL lane: a ``host:pid:tid [dev] NCCL INFO msg`` line read while no record that could take
it is open goes straight to the classifier, and the same text printed again (an init storm, a
ring, a connection) is not classified again (``_LANE_MEMO``, keyed also by the line's bytes in
``_RAW_LANE``). It is exactly what the plain path does with such a line, under preconditions asked
of their owners:

* :func:`logdoc.envelope.unwrap` peels nothing from it: its first ``:`` is followed by a digit (no
  ``host: `` envelope), it starts with no paste decoration (``>``, a backtick: :data:`LANE_HEAD`),
  and :func:`logdoc.envelope.tail_is_plain` (no c10 envelope after residue, no Ray suffix, no
  closing backtick);
* the assembler hands it back as a record of its own: :func:`logdoc.blocks.may_start` is false,
  and every open record takes continuation lines only (:meth:`~logdoc.blocks.BlockAssembler.open_state`)
  and this line is none (:func:`logdoc.blocks.may_join_quiet`).

The bulk lane (folding only): a line whose bytes have the shape of a line already read as a bulk
catalog format (``_BULK_PLANS``, shape = the bytes without hex digits) is counted into its
saturated group without building its event (:meth:`Lane.bulk` says why that is the same).

The bar lane (folding only, :mod:`logdoc.fast.bars`): a progress bar read while nothing is open is
counted into its stream's saturated ``app.progress`` group without being assembled, classified or
built (:meth:`Lane.bar`), from its bytes when their shape was read before (:meth:`Lane.bar_raw`).
The alone lane (:mod:`logdoc.fast.alone`) settles the lines that open no record without the assembler.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .. import nccl
from . import readings
from .bars import bar, bar_raw
from .messages import _MESSAGE_MEMO, MAX_MESSAGE_MEMO, _bulk, _deep, _reading, _remember, message_event  # noqa: F401 (tests read them here)
from .plans import (_BLANK_END, _BULK_PLANS, _HEAD_GROUPS, _HEAD_TAIL, _HEXB, _HEADS, _MSF_BYTES, _NO_HEAD, LANE_HEAD,
                    MAX_BULK_PLANS, BulkPlan, _head_of, launch_plan, learn)
from ..blocks import MAY_START_FIRST, MAY_START_WORDS, Record, may_join_quiet, may_start
from ..envelope import EMBED_MARK, RAY_SUFFIX, tail_is_plain
from ..events import Envelope, Event
from ..classify.formats import SHORT_TEXT

MAX_LANE_MEMO = 1 << 13
_ENV0 = Envelope()
_W1, _W2, _TB = MAY_START_WORDS  # (_TB: a traceback's head, read at a line's end: after a logger's words)


def _copy_fields(f: dict) -> dict:
    out = dict(f)
    for k, v in out.items():
        if isinstance(v, list):
            out[k] = [dict(x) if isinstance(x, dict) else x for x in v]
        elif isinstance(v, dict):
            out[k] = dict(v)
    return out


@dataclass(slots=True)
class LaneHit:
    """What the classifier made of a lane line's text (its envelope is empty: the event depends on
    the text only), and the group key of its events once folding asked for it."""

    kind: str
    level: str
    template: str | None
    fields: dict
    host: str | None
    pid: int | None
    time: str | None
    group_key: tuple | None = None

    def event(self, name: str, n: int, text: str) -> Event:
        # positional, in Event's field order (tests/test_fastpath.py guards it): a third of the cost of keywords
        return Event(self.kind, self.level, name, n, text, n, None, None, None, self.host, self.pid, self.time,
                     self.template, _copy_fields(self.fields))


@dataclass(slots=True)
class Seen:
    """A lane line's bytes read before: its :class:`LaneHit`, its text, and whether no quiet record
    would take it (``not may_join_quiet(text)``)."""

    hit: LaneHit
    text: str
    quiet_ok: bool
    out: Any = None               # the Reducer whose full group of this line is ``group`` (Lane.fold)
    group: Any = None


_LANE_MEMO: dict[str, LaneHit] = {}
_RAW_LANE: dict[bytes, Seen] = {}
_RAW_ONCE: dict[bytes, None] = {}  # the bytes of lines Lane._fold_message counted once (Lane._remember_raw)


def quiet_ok(text: str) -> bool:
    """No quiet record would take this line (it is no continuation line)."""
    return not may_join_quiet(text)


class Lane:
    """The lanes of one :class:`logdoc.pipeline.Feeder` (it reads their state, ``lane_state``,
    from the feeder: what its open records may take)."""

    __slots__ = ("feeder", "classify", "name", "out", "stats", "reduce", "group_key", "folded", "bar_keys",
                 "launch_tails", "raw_tails", "pending", "bulk_groups", "message_groups", "bar_full")

    def __init__(self, feeder, classify: Callable[[Record, str], Event | None]) -> None:
        self.feeder = feeder
        self.classify = classify  # logdoc.pipeline.classify_record
        self.name = feeder.name
        self.out = feeder.out
        self.stats = feeder.stats
        self.reduce = feeder.reduce
        self.group_key = None
        if self.reduce:
            from ..digest import group_key

            self.group_key = group_key
        self.folded = 0  # lines understood and counted into a saturated group (added to stats by finish)
        self.bar_keys: dict[tuple, tuple] = {}  # the app.progress group of a stream (bar)
        self.launch_tails: dict[tuple, list] = {}  # (host, pid, comm) text -> its Reducer tail (_launch)
        self.raw_tails: dict[tuple, list] = {}  # (header, comm) bytes -> its launches not yet counted (fast.runs)
        self.pending: dict[tuple, list] = {}  # (host, pid, comm) text -> the same (fast.runs._pending)
        self.bulk_groups: dict[tuple, list] = {}   # a bulk group key -> its full Reducer group (bulk)
        self.message_groups: dict[tuple, list] = {}  # (message, host, pid) text -> its full group (_fold_message)
        self.bar_full: list | None = None  # the full app.progress group of the bars without a stream (bar_raw)

    def count_launch(self, tk: tuple, t: list, n: int, coll: str, oc: str, text, build) -> bool:
        """``Reducer.count_launch`` of a launch of the tail ``t`` (key ``tk`` in :attr:`launch_tails`), once the
        launches :mod:`logdoc.fast.runs` kept for that tail are counted (they come before it)."""
        q = self.pending.get(tk)
        if q is not None and q[2]:
            self.count_pending(q)
        return self.out.count_launch(t, n, coll, oc, text, build)

    def count_pending(self, q: list) -> None:
        """Count the launches :mod:`logdoc.fast.runs` kept in ``q`` (``[tail key, tail, launches]``) into
        their tail (``Reducer.count_launches``)."""
        items = q[2]
        if items:
            q[2] = []
            self.out.count_launches(q[1], items, self._build_raw)

    def flush(self) -> None:
        """Count every launch :mod:`logdoc.fast.runs` kept (the source ends: ``Feeder.finish``)."""
        for q in self.pending.values():
            self.count_pending(q)

    def ok(self, text: str) -> bool:
        """For a line that starts with :data:`LANE_HEAD`: whether ``feed`` would give it back as a
        record of its own and change nothing."""
        if not tail_is_plain(text):
            return False
        if (text[0] in MAY_START_FIRST or _W1 in text or _W2 in text or text.endswith(_TB)) and may_start(text, _ENV0):
            return False
        lane = self.feeder.lane_state
        if lane == 0:
            return True
        if lane == 2:
            return False
        # only quiet records are open: none takes a line unless it is a continuation line
        return quiet_ok(text)

    def fold(self, n: int, seen: Seen) -> bool:
        """:meth:`hit` when the line's group is saturated (folding only): counted, not built.
        False: nothing was done. The full group is remembered on ``seen`` for this source's
        reducer (a full group stays full: ``Reducer.full_group``)."""
        out = self.out
        if seen.out is out:
            hit = seen.hit
            name = self.name
            text = seen.text
            out.count_into(seen.group, n, lambda: hit.event(name, n, text))
            self.folded += 1
            return True
        gk = seen.hit.group_key
        if gk is None:
            return False
        g = out.full_group(gk[0], gk[1])
        if g is None:
            return False
        seen.out, seen.group = out, g
        return self.fold(n, seen)

    def _fold(self, n: int, hit: LaneHit, text: str) -> bool:
        gk = hit.group_key
        if gk is None:
            return False
        name = self.name
        if not self.out.saturated(gk[0], gk[1], n, lambda: hit.event(name, n, text)):
            return False
        self.folded += 1
        return True

    def hit(self, n: int, seen: Seen) -> None:
        """:meth:`line` for the bytes of a line the lane read before (``_RAW_LANE``): the same text,
        the same event; only the state of the assembler is checked again (by the caller)."""
        self.line(n, seen.text, None, seen.hit)

    def line(self, n: int, text: str, raw: bytes | None = None, hit: LaneHit | None = None) -> None:
        """A line :meth:`ok` vouches for: its record is the line alone, with an empty envelope."""
        if hit is None:
            hit = _LANE_MEMO.get(text)
            if hit is not None and raw is not None:
                if len(_RAW_LANE) >= MAX_LANE_MEMO:
                    _RAW_LANE.clear()
                _RAW_LANE[raw] = Seen(hit, text, quiet_ok(text))
        if hit is None:
            if self.reduce and self._fold_message(n, text, raw):
                return
            ev = message_event(self.name, n, text, self.classify)
            if ev is None:
                self.feeder.settle([Record(n, n, Envelope(), text)], -1)
                return
            launch = ev.kind == "nccl.info" and launch_plan(ev) is not None
            if ev.kind != "nccl.info" or (ev.template not in _bulk() and not launch):  # bulk lines rarely repeat
                if len(_LANE_MEMO) >= MAX_LANE_MEMO:
                    _LANE_MEMO.clear()
                _LANE_MEMO[text] = LaneHit(ev.kind, ev.level, ev.template, _copy_fields(ev.fields), ev.host, ev.pid,
                                           ev.time)
            elif raw is not None and self.reduce and raw.translate(None, _HEXB) not in _BULK_PLANS:
                learn(raw, text, ev)
            self.out.append(ev)
            self.stats.understood_line()
            return
        if self.reduce:
            if hit.group_key is None:
                hit.group_key = self.group_key(hit.event(self.name, n, text))
            if self._fold(n, hit, text):
                return
        self.stats.understood_line()
        self.out.append(hit.event(self.name, n, text))

    def _fold_message(self, n: int, text: str, raw: bytes | None = None) -> bool:
        """:meth:`line` (folding only) for a line whose message the lane read before
        (``_MESSAGE_MEMO``, :func:`message_event`) when the group of its event keeps no more: counted
        into it without the event (built only if it stays the group's last). The group key is read
        from an event that holds the message's reading and the header's host and pid
        (``digest.group_key`` reads neither ``tid`` nor ``dev``); not a bulk format's line, whose shape
        the bulk lane learns from it. False: nothing was done. ``raw``: the line's bytes, whose text
        is ``text``: remembered with the group (:func:`_remember_raw`), the next line of the same bytes
        is counted from them (``_RAW_LANE``, :meth:`fold`)."""
        if len(text) >= 640:
            return False
        m = LANE_HEAD.match(text)
        if m is None:
            return False
        msg = text[m.end():]
        mk = (msg, m.group(1), m.group(2))
        g = self.message_groups.get(mk)
        if g is not None:  # a message of this process counted into its full group before: the same group
            name = self.name
            classify = self.classify
            self.out.count_into(g, n, lambda: message_event(name, n, text, classify))
            self.folded += 1
            if raw is not None:
                got = _MESSAGE_MEMO.get(msg)
                if got is not None:
                    self._remember_raw(raw, text, m, got, g)
            return True
        got = _MESSAGE_MEMO.get(msg)
        if got is None:
            got = readings.reading(msg)
            if got is None:
                return False
            _remember(msg, got)
        kind, level, template, rest = got
        if kind == "nccl.info" and template in _bulk():
            return False  # the bulk lane learns its plans from such lines (line())
        probe = Event(kind, level, self.name, n, text, n, None, None, None, m.group(1) or None, int(m.group(2)), None,
                      template, rest)
        limit, key = self.group_key(probe)
        g = self.out.full_group(limit, key)
        if g is None:
            g = self.out.full_family(probe, key)  # (a fact of a family full: memory used, a core that changes)
            if g is None:
                return False
        if all(x is not text for x in key):  # (a key read from the line's own text, tid and dev: not kept)
            if len(self.message_groups) >= MAX_MESSAGE_MEMO:
                self.message_groups.clear()
            self.message_groups[mk] = g  # a full group stays full (Reducer.full_group)
        name = self.name
        classify = self.classify
        self.out.count_into(g, n, lambda: message_event(name, n, text, classify))
        self.folded += 1
        if raw is not None:
            self._remember_raw(raw, text, m, got, g)
        return True

    def _remember_raw(self, raw: bytes, text: str, m, got: tuple, g: list) -> None:
        """Remember the bytes of a line that :meth:`_fold_message` counted into the full group ``g``, the
        second time (its message's reading ``got``, its header's match ``m`` or None): the next line of the
        same bytes is the same text, read while the lane's state lets it pass (``Seen.quiet_ok``), so
        :meth:`fold` counts it into the same group (a full group stays full), its event, if built,
        :func:`message_event`'s (the reading plus the header's values); for another source's reducer
        the hit is what :meth:`line` is given for a line the lane read before (``_LANE_MEMO``)."""
        if raw not in _RAW_ONCE:  # (the first time: bytes seen once are most often never seen again)
            if len(_RAW_ONCE) >= MAX_LANE_MEMO:
                _RAW_ONCE.clear()
            _RAW_ONCE[raw] = None
            return
        kind, level, template, rest = got
        if m is None:
            m = LANE_HEAD.match(text)
        fields = {"tid": int(m.group(3)), "dev": int(m.group(4))}
        for k, v in rest.items():
            fields[k] = _deep(v) if isinstance(v, (list, dict)) else v
        hit = LaneHit(kind, level, template, fields, m.group(1) or None, int(m.group(2)), None)
        if len(_RAW_LANE) >= MAX_LANE_MEMO:
            _RAW_LANE.clear()
        _RAW_LANE[raw] = Seen(hit, text, quiet_ok(text), self.out, g)

    def bar(self, n: int, text: str, raw: bytes | None = None) -> bool:
        """The bar lane (:func:`logdoc.fast.bars.bar`)."""
        return bar(self, n, text, raw)

    def bar_raw(self, n: int, raw: bytes) -> bool:
        """The bar lane from a line's bytes (:func:`logdoc.fast.bars.bar_raw`)."""
        return bar_raw(self, n, raw)

    def bulk(self, n: int, raw: bytes, plan: BulkPlan) -> bool:
        """The bulk lane (folding only, ``lane_state`` 0 or 1): count line ``n`` into its saturated
        group without building its event, when its bytes have the shape of a line already read
        as a bulk catalog format (``_BULK_PLANS``) and every check the full path makes on such a
        line gives what it gave there. False: nothing was done (the caller takes the usual path).

        Why the checks are enough: the shape (``raw`` without hex digits) fixes the shape of the
        header and of the message, so the catalog looks up the same (shape, first word) entry
        (the word is compared); ``nccl.HEADER`` reads a :data:`LANE_HEAD` line exactly as
        :data:`LANE_HEAD` does; the rest is the full path's own checks, run here: :meth:`ok`,
        the grammar family (no grammar reads it), the template's match and its rivals' (the catalog's)."""
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            return False
        if len(text) >= 640:  # nccl.classify's has_huge_number: never true below 640 characters
            return False
        both = plan.head_std
        got = None
        if both is not None and not text[-1].isspace():
            # LANE_HEAD and the template's match in one (_head_std: the same on a text that ends in no blank)
            got = both.match(text)
            if got is None:
                return False
            msg = cm = text[got.end(_HEAD_GROUPS) + _HEAD_TAIL:]
            if len(cm) > SHORT_TEXT:  # the template's own pattern reads a long text (below)
                got = None
        if got is None:
            m = LANE_HEAD.match(text)
            if m is None:
                return False
            msg = text[m.end():]
            cm = msg.rstrip()
        # ok(), inline (lane_state 0: nothing open; 1: only quiet records, which must not take it).
        if plan.words and (EMBED_MARK in text or text.endswith(RAY_SUFFIX) or _W1 in text or _W2 in text
                           or text.endswith(_TB)):
            return False
        if text[0] in MAY_START_FIRST and may_start(text, _ENV0):
            return False
        lane = self.feeder.lane_state
        if lane != 0 and (lane != 1 or not quiet_ok(text)):
            return False
        if plan.family(msg) is not None and not nccl.grammar_refused(msg):
            return False  # a grammar may read it (nccl.family_for(word) = _family here), not known to fail
        word = plan.word
        k = len(word)
        if not cm.startswith(word) or (len(cm) > k and cm[k] != " "):
            return False
        if got is None:
            got = plan.std.match(cm) if len(cm) <= SHORT_TEXT else plan.template.rx.match(cm)  # = t.rx.match(cm)
            if got is None:
                return False
            hp = m.group(1, 2)
            args = got.groups()
        else:
            hp = got.group(1, 2)
            args = got.groups()[_HEAD_GROUPS:]
        for other in plan.rivals:
            if (not other.anchor or other.anchor in cm) and other.rx.match(cm):
                return False
        if plan.launch is not None:
            return self._launch(n, text, hp, plan, args)
        keys = plan.keys
        full = keys.get(hp)
        if full is None:  # the group key of this host and pid (the event's stream: no rank on a lane line)
            if len(keys) >= MAX_BULK_PLANS:
                keys.clear()
            full = keys[hp] = plan.key + ((hp[0] or None, int(hp[1]), None, None, None),)
        out = self.out
        groups = self.bulk_groups
        g = groups.get(full)
        if g is None:
            g = out.full_group(1, full)
            if g is None:
                return False
            groups[full] = g
        name = self.name
        classify = self.classify
        out.count_into(g, n, lambda: classify(Record(n, n, Envelope(), text), name))
        self.folded += 1
        return True

    def _launch(self, n: int, text: str, hp: tuple, plan: BulkPlan, args: tuple) -> bool:
        """:meth:`bulk` for a collective launch: what ``digest.group_key`` and ``collectives.launch_of``
        read of its event (the comm, the collective, the opCount) read from the catalog match that
        gives its ``fields.args``; counted into its tail, built only if it stays among the last."""
        ci, coll, oi = plan.launch
        oc = args[oi]
        try:
            int(oc, 16)
        except (TypeError, ValueError):
            return False
        if ci is not None:
            coll = args[ci]
            if not coll:
                return False
        comm = args[-3]
        tails = self.launch_tails
        tk = (hp[0], hp[1], comm)
        t = tails.get(tk)
        if t is None:
            t = self.out.tail(("l", "nccl.info", None, comm, (hp[0] or None, int(hp[1]), None, None, None)))
            if t is None:
                return False
            tails[tk] = t
        if not self.count_launch(tk, t, n, coll, oc, text, self._build):
            return False
        self.folded += 1
        return True

    def launch(self, n: int, raw: bytes, plan: BulkPlan) -> bool:
        """:meth:`bulk` of a collective launch whose plan is ``quick`` (:func:`_quick`): the same checks
        and the same count, in the order of the cheapest first; any line off the common case (a first
        character ``may_start`` may read, a record open, a blank at its end, a long message, a byte
        not ASCII) is left to :meth:`bulk`. The header is read once per header's bytes
        (:func:`_head_of`: ``head_std`` is :data:`LANE_HEAD` then the template's plain pattern, and
        :data:`LANE_HEAD` ends at the line's first `` NCCL INFO ``), the message by the template's plain
        pattern. False: nothing was done."""
        k = raw.find(b" NCCL INFO ") + 11
        if k < 11 or len(raw) >= 640 or raw[-1] in _BLANK_END or raw[0] in _MSF_BYTES or self.feeder.lane_state \
                or len(raw) - k > SHORT_TEXT or not raw.isascii():
            return self.bulk(n, raw, plan)
        head = _HEADS.get(raw[:k], _NO_HEAD)
        if head is _NO_HEAD:
            head = _head_of(raw[:k])
        if head is None:
            return False
        msg = raw[k:].decode()
        if plan.family(msg) is not None and not nccl.grammar_refused(msg):
            return False
        word = plan.word
        if not msg.startswith(word) or (len(msg) > len(word) and msg[len(word)] != " "):
            return False
        got = plan.std.match(msg)
        if got is None:
            return False
        _, _, og, cg, kg = plan.quick
        oc, comm = got.group(og - _HEAD_GROUPS, cg - _HEAD_GROUPS)
        try:
            int(oc, 16)
        except (TypeError, ValueError):
            return False
        if kg is None:
            coll = plan.launch[1]
        else:
            coll = got.group(kg - _HEAD_GROUPS)
            if not coll:
                return False
        host, pid = head
        tk = (host, pid, comm)
        t = self.launch_tails.get(tk)
        if t is None:
            t = self.out.tail(("l", "nccl.info", None, comm, (host or None, int(pid), None, None, None)))
            if t is None:
                return False
            self.launch_tails[tk] = t
        if not self.count_launch(tk, t, n, coll, oc, raw, self._build_raw):
            return False
        self.folded += 1
        return True

    def _build_raw(self, n: int, raw: bytes) -> Event | None:
        """:meth:`_build` of a launch :meth:`launch` counted from its bytes (ASCII: its text)."""
        return self.classify(Record(n, n, Envelope(), raw.decode()), self.name)

    def _build(self, n: int, text: str) -> Event | None:
        """The event of lane line ``n`` (a launch counted by :meth:`_launch` that stays in its tail)."""
        return self.classify(Record(n, n, Envelope(), text), self.name)
