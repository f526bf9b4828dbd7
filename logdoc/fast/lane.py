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

The bar lane (folding only): a progress bar (``Epoch 0:  46%|####  | 461/1000 [07:41<08:59, ...]``)
read while nothing is open is counted into its stream's saturated ``app.progress`` group without
being assembled, classified or built (:meth:`Lane.bar`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from .. import nccl
from ..blocks import MAY_START_FIRST, MAY_START_WORDS, Record, may_join_quiet, may_start
from ..classify.torch import BAR_TEMPLATE, bar_alone
from ..envelope import EMBED_MARK, RAY_SUFFIX, tail_is_plain, unwrap
from ..events import Envelope, Event
from ..classify.formats import SHORT_TEXT
from ..lazyre import lazy_re

# A lane line: `host:pid:tid [dev] NCCL INFO ` (a `>` first is a quote marker that unwrap's paste
# layer peels, not part of a host name, and so is a backtick that opens inline code).
LANE_HEAD = lazy_re(r"(?![>`])([^\s:\[\]]*):(\d+):(\d+) \[(\d+)\] NCCL INFO ")
MAX_LANE_MEMO = 1 << 13
MAX_MESSAGE_MEMO = 1 << 13
MAX_BULK_PLANS = 4096
_HEXB = b"0123456789abcdef"
_ENV0 = Envelope()
_W1, _W2 = MAY_START_WORDS
# The words a lane line must not hold (the envelope's and the assembler's), as they show in a shape:
# a text holding one of them holds its letters other than hex digits, in order, in its shape.
_SHAPE_WORDS = tuple(w.encode().translate(None, _HEXB) for w in (EMBED_MARK, *MAY_START_WORDS))
_SHAPE_SUFFIX = RAY_SUFFIX.encode().translate(None, _HEXB)


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


@dataclass(slots=True)
class BulkPlan:
    """What :meth:`Lane.bulk` needs for one line shape, learned from a line of that shape that the
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


_LANE_MEMO: dict[str, LaneHit] = {}
_MESSAGE_MEMO: dict[str, tuple] = {}  # a lane line's message (after its header) -> kind, level, template, fields
_RAW_LANE: dict[bytes, Seen] = {}
_BULK_PLANS: dict[bytes, BulkPlan] = {}


def quiet_ok(text: str) -> bool:
    """No quiet record would take this line (it is no continuation line)."""
    return not may_join_quiet(text)


@lru_cache(maxsize=1)
def _bulk() -> frozenset:
    from ..digest import bulk_templates

    return bulk_templates()


def plan_for(raw: bytes) -> BulkPlan | None:
    return _BULK_PLANS.get(raw.translate(None, _HEXB))


class Lane:
    """The lanes of one :class:`logdoc.pipeline.Feeder` (it reads their state, ``lane_state``,
    from the feeder: what its open records may take)."""

    __slots__ = ("feeder", "classify", "name", "out", "stats", "reduce", "group_key", "folded", "bar_keys")

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

    def ok(self, text: str) -> bool:
        """For a line that starts with :data:`LANE_HEAD`: whether ``feed`` would give it back as a
        record of its own and change nothing."""
        if not tail_is_plain(text):
            return False
        if (text[0] in MAY_START_FIRST or _W1 in text or _W2 in text) and may_start(text, _ENV0):
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
        False: nothing was done."""
        return self._fold(n, seen.hit, seen.text)

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
            ev = message_event(self.name, n, text, self.classify)
            if ev is None:
                self.feeder.settle([Record(n, n, Envelope(), text)], -1)
                return
            launch = ev.kind == "nccl.info" and _launch_plan(ev) is not None
            if ev.kind != "nccl.info" or (ev.template not in _bulk() and not launch):  # bulk lines rarely repeat
                if len(_LANE_MEMO) >= MAX_LANE_MEMO:
                    _LANE_MEMO.clear()
                _LANE_MEMO[text] = LaneHit(ev.kind, ev.level, ev.template, _copy_fields(ev.fields), ev.host, ev.pid,
                                           ev.time)
            elif raw is not None and self.reduce and raw.translate(None, _HEXB) not in _BULK_PLANS:
                _learn_bulk(raw, text, ev)
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

    def bar(self, n: int, text: str) -> bool:
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
        feeder = self.feeder
        asm = feeder.asm
        if asm.has_open_block:
            feeder._close_idle(n)  # as feed() does first (then again, closing nothing)
        st = feeder.lane_state
        if st == 2:
            return False
        env, msg = unwrap(text)
        if may_start(msg, env) or not bar_alone(msg):
            return False
        if st == 1 and (not quiet_ok(msg) or asm.stream_open(env.stream_key())):
            return False
        stream = (env.host, env.pid, env.rank, env.local_rank, env.node_rank)
        gk = self.bar_keys.get(stream)
        if gk is None:
            if len(self.bar_keys) >= MAX_BULK_PLANS:
                self.bar_keys.clear()
            probe = Event("app.progress", "INFO", self.name, n, msg, n, env.rank, env.local_rank, env.node_rank,
                          env.host, env.pid, env.time, BAR_TEMPLATE, {})
            gk = self.bar_keys[stream] = self.group_key(probe)
        name = self.name
        classify = self.classify
        if not self.out.saturated(gk[0], gk[1], n, lambda: classify(Record(n, n, env, msg), name)):
            return False
        self.folded += 1
        return True

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
        m = LANE_HEAD.match(text)
        if m is None:
            return False
        # ok(), inline (lane_state 0: nothing open; 1: only quiet records, which must not take it).
        if plan.words and (EMBED_MARK in text or text.endswith(RAY_SUFFIX) or _W1 in text or _W2 in text):
            return False
        if text[0] in MAY_START_FIRST and may_start(text, _ENV0):
            return False
        lane = self.feeder.lane_state
        if lane != 0 and (lane != 1 or not quiet_ok(text)):
            return False
        msg = text[m.end():]
        if plan.family(msg) is not None:  # no grammar reads it (nccl.family_for(word) = _family here)
            return False
        cm = msg.rstrip()
        word = plan.word
        k = len(word)
        if not cm.startswith(word) or (len(cm) > k and cm[k] != " "):
            return False
        got = plan.std.match(cm) if len(cm) <= SHORT_TEXT else plan.template.rx.match(cm)  # = t.rx.match(cm)
        if got is None:
            return False
        for other in plan.rivals:
            if (not other.anchor or other.anchor in cm) and other.rx.match(cm):
                return False
        name = self.name
        hp = m.group(1, 2)
        classify = self.classify
        if plan.launch is not None:
            return self._launch(n, text, hp, plan, got.groups())
        keys = plan.keys
        full = keys.get(hp)
        if full is None:  # the group key of this host and pid (the event's stream: no rank on a lane line)
            if len(keys) >= MAX_BULK_PLANS:
                keys.clear()
            full = keys[hp] = plan.key + ((hp[0] or None, int(hp[1]), None, None, None),)
        if not self.out.saturated(1, full, n, lambda: classify(Record(n, n, Envelope(), text), name)):
            return False
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
        key = ("l", "nccl.info", None, args[-3], (hp[0] or None, int(hp[1]), None, None, None))
        name = self.name
        classify = self.classify
        if not self.out.count_launch(key, n, coll, oc, lambda: classify(Record(n, n, Envelope(), text), name)):
            return False
        self.stats.understood_line()
        return True


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
    if got is not None:
        kind, level, template, rest = got
        fields = {"tid": tid, "dev": dev}
        for k, v in rest.items():
            fields[k] = _deep(v) if isinstance(v, (list, dict)) else v
        # positional, in Event's field order (tests/test_fastpath.py guards it)
        return Event(kind, level, name, n, text, n, None, None, None, host, pid, None, template, fields)
    ev = classify(Record(n, n, Envelope(), text), name)
    if ev is None:
        return None
    f = ev.fields
    keys = list(f)
    if keys[:3] == ["tid", "dev", "message"] and f["tid"] == tid and f["dev"] == dev and f["message"] == msg \
            and ev.host == host and ev.pid == pid and ev.time is None and ev.rank is None and ev.text == text:
        if len(_MESSAGE_MEMO) >= MAX_MESSAGE_MEMO:
            _MESSAGE_MEMO.clear()
        _MESSAGE_MEMO[msg] = (ev.kind, ev.level, ev.template, {k: _deep(f[k]) for k in keys[2:]})
    return ev


def _learn_bulk(raw: bytes, text: str, ev: Event) -> None:
    """Remember the shape of ``raw``, a lane line the full path read as ``ev`` (a bulk catalog
    format), for :meth:`Lane.bulk`: only when its bytes are its text (no control byte, no CR,
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
    words = any(w in key for w in _SHAPE_WORDS) or key.endswith(_SHAPE_SUFFIX)
    _BULK_PLANS[key] = BulkPlan(entry[0], entry[1], word, ("b", ev.kind, ev.template), entry[0].rx.std, {},
                                nccl.family_for(word), words, _launch_plan(ev))


def _launch_plan(ev: Event) -> tuple | None:
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
