"""Stages 1 to 5 together: sources in, events and honest line counts out.

For every line: the prefilter decides whether it can matter; a candidate is unwrapped, joined into
a multi-line record when it starts or continues a block (a traceback, a torchrun summary, ...),
and classified by the NCCL grammar, then by the PyTorch/Gloo grammars. Every line read is counted
exactly once, as irrelevant, understood, or relevant but not understood.

Which lines are fed to the block assembler (:class:`Feeder`, the same rule on every path):

* every candidate line (:func:`logdoc.prefilter.candidate`);
* every line while an open record may take any line (a traceback, a torchrun failure table, a
  wrapped WorkNCCL record: their code and table lines hold no keyword) or belongs to a stream
  without a rank (the stream's next line closes it);
* while only records of ranked streams that take continuation lines only are open (a c10 message
  waiting for its ``Exception raised from`` / ``frame #`` / tab lines), the lines within
  :data:`WINDOW` lines of the last line a record took that may continue one (:func:`_may_continue`);
* a record that took no line for :data:`IDLE` lines is closed: a stream that went quiet (a rank
  that printed one c10 warning and then only its own output) does not keep the slow path on.

A line that is not a candidate and stays a record of its own is irrelevant (not classified).

The fast path (on unless ``LOGDOC_NO_FASTPATH=1``) reads large blocks (:func:`logdoc.source.read_blocks`)
and finds candidate lines with one ``bytes.find`` pass per prefilter keyword instead of looking at
every line in Python; lines between candidates are only counted (``bytes.count``). A block where
most lines are candidates (an ``NCCL_DEBUG=INFO`` log) is read line by line. Both paths feed the
same lines in the same order, so they give the same events and counts
(``tests/test_fastpath.py``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Iterator, Sequence

from . import nccl, nested, prefilter, stops, torchlines
from .blocks import _CHAIN, _CONT_PREFIXES, _FRAME_EQ, _SPAWN, _TB_HEAD, BlockAssembler, Record, _is_cont
from .envelope import unwrap
from .events import Envelope, Event
from .grammar import Parsed
from .source import ReadStats, Source, _clean, _close, expand, open_text, read_blocks
from .templates import SHORT_TEXT

MAX_UNRECOGNIZED = 200
WINDOW = 16    # lines after the last line a record took that are fed whatever they hold
IDLE = 2000    # lines after which a record that took nothing is closed
DENSE = 0.25   # a block with more candidate lines than this share is read line by line
SMALL = 64     # regions with fewer lines are read line by line
BLOCK_SIZE = 4 << 20  # bytes read at a time


@dataclass(slots=True)
class Stats:
    files: int = 0
    lines_read: int = 0
    irrelevant: int = 0
    relevant: int = 0
    understood: int = 0
    not_understood: int = 0
    events: int = 0
    cut_lines: int = 0
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "lines_read": self.lines_read,
            "irrelevant": self.irrelevant,
            "relevant": self.relevant,
            "understood": self.understood,
            "not_understood": self.not_understood,
            "events": self.events,
            "cut_lines": self.cut_lines,
            "skipped_files": [{"file": f, "reason": r} for f, r in self.skipped_files],
            "warnings": list(self.warnings),
        }

    def understood_line(self, n: int = 1) -> None:
        """``n`` lines read and understood, each as one event."""
        self.relevant += n
        self.understood += n
        self.events += n

    def merge(self, other: "Stats") -> None:
        for name in ("files", "lines_read", "irrelevant", "relevant", "understood", "not_understood", "events", "cut_lines"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped_files.extend(other.skipped_files)
        self.warnings.extend(other.warnings)


@dataclass(slots=True)
class Unrecognized:
    file: str
    line: int
    text: str


@dataclass(slots=True)
class ParseResult:
    events: list[Event]
    stats: Stats
    unrecognized: list[Unrecognized]
    files: list[str]
    folded: list[dict] = field(default_factory=list)  # with reduce=True: what was folded (logdoc.digest)


def fast_enabled() -> bool:
    from .grammar import fastpath_enabled

    return fastpath_enabled()


_TORCH_MEMO: dict[tuple[str, str | None], tuple | None] = {}  # (text, env.level) -> what torchlines said
MAX_TORCH_MEMO = 4096


def _simple(v) -> bool:
    if isinstance(v, list):
        return all(x is None or isinstance(x, (str, int, float, bool)) for x in v)
    return v is None or isinstance(v, (str, int, float, bool))


def _torch_classify(text: str, env):
    """torchlines.classify, memoised on the fast path: it reads nothing of the envelope but its
    level (``torchlines._level``), so the same message at the same level gives the same answer
    (a c10 warning every rank prints; only results of plain values are kept)."""
    if not fast_enabled():
        return torchlines.classify(text, env)
    key = (text, env.level)
    if key in _TORCH_MEMO:
        hit = _TORCH_MEMO[key]
        if hit is None:
            return None
        kind, level, template, fields = hit
        return Parsed(kind, level, template, {k: (list(v) if isinstance(v, list) else v) for k, v in fields.items()})
    parsed = torchlines.classify(text, env)
    if len(_TORCH_MEMO) >= MAX_TORCH_MEMO:
        _TORCH_MEMO.clear()
    if parsed is None:
        _TORCH_MEMO[key] = None
    elif all(_simple(v) for v in parsed.fields.values()):
        _TORCH_MEMO[key] = (parsed.kind, parsed.level, parsed.template,
                            {k: (list(v) if isinstance(v, list) else v) for k, v in parsed.fields.items()})
    return parsed


def classify_record(rec: Record, name: str) -> Event | None:
    env = rec.env
    parsed = nccl.classify(rec.text, env)
    if parsed is None:
        parsed = _torch_classify(rec.text, env) if "NCCL" not in rec.text else torchlines.classify(rec.text, env)
    if parsed is None:
        parsed = nccl.classify_bare(rec.text)  # an NCCL WARN message with no header at all
    if parsed is None:
        parsed = stops.classify(rec.text)  # the job stopped from outside (scheduler, OOM killer)
    if parsed is None:
        return None
    # positional: kind, level, file, line, text, end_line, rank, local_rank, node_rank, host, pid, time,
    # template, fields (the order of Event's fields)
    return Event(parsed.kind, parsed.level, name, rec.line, rec.text, rec.end_line, env.rank, env.local_rank,
                 env.node_rank, env.host, env.pid, env.time, parsed.template, parsed.fields)


MAX_ERROR_FILE = 4 << 20


def _error_file_event(source: Source, stats: Stats) -> Event | None:
    """torchrun's per-worker ``error.json`` (written by @record): one event, or None if it is not one."""
    import json

    try:
        with source.open() as fh:
            raw = fh.read(MAX_ERROR_FILE + 1)
        if len(raw) > MAX_ERROR_FILE:
            return None
        data = json.loads(raw.decode("utf-8", "replace"))
        msg = data["message"]
        info = msg.get("extraInfo", {}) if isinstance(msg, dict) else {}
        text = msg.get("message", "") if isinstance(msg, dict) else str(msg)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    stats.files += 1
    stats.lines_read += 1
    stats.understood_line()
    exc_type, _, exc_message = text.partition(": ")
    fields = {"exc_type": exc_type if exc_message else None, "exc_message": exc_message or text,
              "traceback": info.get("py_callstack"), "timestamp": info.get("timestamp")}
    time = None
    try:
        import datetime as _dt

        time = _dt.datetime.fromtimestamp(int(info["timestamp"]), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (KeyError, ValueError, TypeError, OverflowError, OSError):
        pass
    return Event(kind="torchrun.error_file", level="ERROR", file=source.name, line=1, text=text, time=time,
                 template="torchrun.error_file", fields=fields)


# ---------------------------------------------------------------------------------------------
# which lines go to the block assembler

_GREEDY_KINDS = ("child_failed", "wrapped")
_GREEDY_TB = ("frames", "last_error", "after_spawn", "chain")
_GREEDY_MSG = ("last_error", "spawn")


def _quiet(block) -> bool:
    """A record that only takes continuation lines (a message whose first line is all there is
    so far, or C++ frames): lines that cannot continue it need not be fed for its sake."""
    kind = block.kind
    if kind == "message":
        return block.state == ""
    return kind == "frames"


# Substrings of every line that may continue a quiet record (blocks._is_cont, anywhere in the line).
_CONTINUES = ("\t", "nccl", "#") + tuple(sorted({p.strip() for p in _CONT_PREFIXES}))


_CONTINUES_RX = re.compile("|".join(re.escape(c) for c in _CONTINUES))


# _quiet_skip(raw): the line is no candidate and cannot continue a quiet record, whatever its clean
# text: it is printable ASCII (no control byte, CR, ESC or UTF-8 that cleaning or decoding would
# change), not blank, without a keyword or a continuation marker.
_QUIET_MARKS = re.compile(b"|".join(re.escape(k.encode("ascii")) for k in prefilter.KEYWORDS + _CONTINUES))
_CTRL = re.compile(rb"[\x00-\x1f\x7f]")


def _quiet_skip(raw: bytes) -> bool:
    return (raw.isascii() and _CTRL.search(raw) is None and _QUIET_MARKS.search(raw) is None
            and raw.strip(b" ") != b"")


def _may_continue(text: str) -> bool:
    return _CONTINUES_RX.search(text) is not None or not text.strip()


def _takes_anything(block) -> bool:
    """Whether an open block may take a line that holds no keyword and is not a continuation
    line: then every line is fed while it is open (see :mod:`logdoc.blocks`)."""
    kind = block.kind
    if kind in _GREEDY_KINDS:
        return True
    if kind == "traceback":
        return block.state in _GREEDY_TB
    if kind == "message":
        return block.state in _GREEDY_MSG
    return False


class Feeder:
    """Feeds the lines of one source to a :class:`BlockAssembler` under the rule of the module
    docstring and turns the records into events (appended to ``out``) and counts (``stats``).

    ``line(n, text, cand)`` for every line in order (``cand``: ``prefilter.candidate(text)``), or
    only for the lines where ``needs_every_line(n)`` is true plus every candidate line: the
    lines left out are counted with ``skip(k)``. Then ``finish()``.
    """

    __slots__ = ("name", "stats", "unrecognized", "asm", "until", "out", "_open", "lane", "reduce", "group_key", "folded",
                 "state", "lane_state", "paste")

    def __init__(self, name: str, stats: Stats, unrecognized: list[Unrecognized], out: list[Event]):
        self.name = name
        self.stats = stats
        self.unrecognized = unrecognized
        self.asm = BlockAssembler()
        self.until = 0
        self.out = out
        self._open = getattr(self.asm, "_open", None)
        self.lane = fast_enabled()  # the NCCL lane (part of the fast path)
        self.paste = None  # what logdoc.paste learned for the source's lines (set by use_paste)
        self.state = self.lane_state = 0
        self.folded = 0  # lines understood and counted into a saturated group (added to stats by finish)
        self.reduce = hasattr(out, "saturated")
        self.group_key = None
        if self.reduce:
            from .digest import group_key

            self.group_key = group_key

    def needs_every_line(self, n: int) -> bool:
        """Whether line ``n`` is looked at even without a keyword (the state does not change
        while lines are skipped, and this is false for every later line once it is false):
        every line while an open record may take any line, or belongs to a stream without a
        rank (its next line closes it); within :data:`WINDOW` lines of the last line a record
        took, the lines that may continue a record (:func:`_may_continue`)."""
        st = self.state
        return st == 2 or (st == 1 and n <= self.until)

    def wants(self, n: int, text: str) -> bool:
        """Whether a line without a keyword is fed (``needs_every_line`` said it is looked at)."""
        return self.state == 2 or _may_continue(text)

    def _update_state(self) -> None:
        """``state``: 0 nothing open, 1 only quiet records of ranked streams, 2 anything else;
        ``lane_state``: 0 nothing open, 1 the lane may take a non-continuation line, 2 it may not."""
        if not self.asm.has_open_block:
            self.state = self.lane_state = 0
            return
        if self._open is None:
            self.state = self.lane_state = 2
            return
        st, lane = 1, 1
        for key, b in self._open.items():
            anything = _takes_anything(b)
            if key[2] is None or (not anything and not _quiet(b)) or anything:
                st = 2
            if key == _NO_KEY or anything:
                lane = 2
        self.state, self.lane_state = st, lane
    def skip(self, k: int) -> None:
        self.stats.irrelevant += k

    def line(self, n: int, text: str, cand: bool, raw: bytes | None = None) -> None:
        if cand:
            if self.lane and _LANE_S.match(text) is not None and self.lane_ok(text):
                self.lane_line(n, text, raw)
            else:
                self.feed(n, text, True)
        elif self.state and self.needs_every_line(n) and self.wants(n, text):
            self.feed(n, text, False)
        else:
            self.stats.irrelevant += 1

    def fold_hit(self, n: int, seen: tuple) -> bool:
        """``lane_hit`` when the line's group is saturated (folding only): counted, not built.
        False: nothing was done."""
        hit = seen[0]
        gk = hit[7]
        if gk is None:
            return False
        name = self.name
        text = seen[1]
        if not self.out.saturated(gk[0], gk[1], n, lambda: _memo_event(hit, name, n, text)):
            return False
        self.folded += 1
        return True

    def lane_hit(self, n: int, seen: tuple) -> None:
        """``line`` for the bytes of a line the lane read before (``_RAW_LANE``): the same text,
        the same event; only the state of the assembler is checked again (by the caller)."""
        self.lane_line(n, seen[1], None, seen[0])

    def lane_line(self, n: int, text: str, raw: bytes | None = None, hit: list | None = None) -> None:
        """A line the NCCL lane vouches for (``lane_ok``): its record is the line alone, with an
        empty envelope, so its event depends on its text only: the same text printed again (an
        init storm, a ring, a connection) is not classified again (``_LANE_MEMO``)."""
        if hit is None:
            hit = _LANE_MEMO.get(text)
            if hit is not None and raw is not None:
                if len(_RAW_LANE) >= MAX_LANE_MEMO:
                    _RAW_LANE.clear()
                _RAW_LANE[raw] = (hit, text, _quiet_ok(text))
        if hit is None:
            rec = Record(n, n, Envelope(), text)
            ev = classify_record(rec, self.name)
            if ev is None:
                self.settle([rec], -1)
                return
            if ev.kind != "nccl.info" or ev.template not in _bulk():  # bulk lines (opCount ...) rarely repeat
                if len(_LANE_MEMO) >= MAX_LANE_MEMO:
                    _LANE_MEMO.clear()
                _LANE_MEMO[text] = [ev.kind, ev.level, ev.template, _copy_fields(ev.fields), ev.host, ev.pid, ev.time,
                                    None]
            elif raw is not None and self.reduce and raw.translate(None, _HEXB) not in _BULK_PLANS:
                _learn_bulk(raw, text, ev)
        else:
            if self.reduce:
                if hit[7] is None:
                    hit[7] = self.group_key(_memo_event(hit, self.name, n, text))
                if self.fold_hit(n, (hit, text)):
                    return
            self.stats.understood_line()
            ev = _memo_event(hit, self.name, n, text)
        self.out.append(ev)
        if hit is None:
            self.stats.understood_line()

    def bulk(self, n: int, raw: bytes, plan: tuple) -> bool:
        """The bulk lane (folding only, ``lane_state`` 0 or 1): count line ``n`` into its saturated
        group without building its event, when its bytes have the shape of a line already read
        as a bulk catalog format (``_BULK_PLANS``) and every check the full path makes on such a
        line gives what it gave there. False: nothing was done (the caller takes the usual path).

        Why the checks are enough: the shape (``raw`` without hex digits) fixes the shape of the
        header and of the message, so the catalog looks up the same (shape, first word) entry
        (the word is compared); ``nccl.HEADER`` reads a ``_LANE_HEAD`` line exactly as
        ``_LANE_HEAD`` does; the rest is the full path's own checks, run here: ``lane_ok``,
        ``_family`` (no grammar reads it), the template's match and its rivals' (the catalog's)."""
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            return False
        if len(text) >= 640:  # nccl.classify's has_huge_number: never true below 640 characters
            return False
        m = _LANE_HEAD.match(text)
        if m is None:
            return False
        t, rivals, word, key, std, keys, family, words = plan
        # lane_ok, inline (lane_state 0: nothing open; 1: only quiet records, which must not take it).
        # `words`: whether a line of this shape may hold `]:[`, `rror`, `xception` or end in
        # `across cluster]` at all (their letters that are not hex digits are in the shape).
        if words and ("]:[" in text or text.endswith("across cluster]") or "rror" in text or "xception" in text):
            return False
        if text[0] in _MAY_START_FIRST and _may_start(text, _ENV0):
            return False
        if self.lane_state != 0 and (self.lane_state != 1 or not _quiet_ok(text)):
            return False
        msg = text[m.end():]
        if family(msg) is not None:  # no grammar reads it (nccl.family_for(word) = _family here)
            return False
        cm = msg.rstrip()
        k = len(word)
        if not cm.startswith(word) or (len(cm) > k and cm[k] != " "):
            return False
        if (std.match(cm) if len(cm) <= SHORT_TEXT else t.rx.match(cm)) is None:  # = t.rx.match(cm)
            return False
        for other in rivals:
            if (not other.anchor or other.anchor in cm) and other.rx.match(cm):
                return False
        name = self.name
        hp = m.group(1, 2)
        full = keys.get(hp)
        if full is None:  # the group key of this host and pid (the event's stream: no rank on a lane line)
            if len(keys) >= MAX_BULK_PLANS:
                keys.clear()
            full = keys[hp] = key + ((hp[0] or None, int(hp[1]), None, None, None),)
        if not self.out.saturated(1, full, n, lambda: classify_record(Record(n, n, Envelope(), text), name)):
            return False
        self.folded += 1
        return True

    def lane_ok(self, text: str) -> bool:
        """For a line that starts with an NCCL ``host:pid:tid [dev] NCCL INFO`` header: whether
        ``feed`` would give it back as a record of its own and change nothing (see ``_LANE``)."""
        if "]:[" in text or text.endswith("across cluster]") or text.endswith("`"):
            return False
        if (text[0] in _MAY_START_FIRST or "rror" in text or "xception" in text) and _may_start(text, _ENV0):
            return False
        lane = self.lane_state
        if lane == 0:
            return True
        if lane == 2:
            return False
        # only quiet records are open: none takes a line unless it is a continuation line
        return _quiet_ok(text)

    def feed(self, n: int, text: str, cand: bool) -> None:
        asm = self.asm
        if self._open:
            self._close_idle(n)
        env, msg = unwrap(text)
        if self.paste is not None:
            self.paste.apply(n, env)
        recs = asm.feed(n, env, msg)
        self._update_state()
        alone = False
        for r in recs:
            if r.line == n:
                alone = True
                break
        if not alone:
            self.until = n + WINDOW
        if recs:
            self.settle(recs, -1 if cand else n)

    def _close_idle(self, n: int) -> None:
        limit = n - IDLE
        idle = []
        for key, b in self._open.items():
            last = b.lines[-1][0]
            if b.pending and b.pending[-1][0] > last:
                last = b.pending[-1][0]
            if last < limit:
                idle.append(key)
        for key in idle:
            self.settle(self.asm._close(key), -1)
        if idle:
            self._update_state()

    def settle(self, records: list[Record], plain_line: int = -1) -> None:
        stats = self.stats
        name = self.name
        for rec in records:
            n = rec.nlines
            if rec.line == plain_line:
                stats.irrelevant += n  # a line without a keyword, alone: not classified
                continue
            ev = classify_record(rec, name)
            if ev is not None:
                stats.relevant += n
                stats.understood += n
                stats.events += 1
                self.out.append(ev)
                if not ev.kind.startswith("nccl."):
                    for child in nested.children(ev):  # messages quoted inside it: events of their own
                        stats.events += 1
                        self.out.append(child)
            elif prefilter.marked(rec.text):
                stats.relevant += n
                stats.not_understood += n
                if len(self.unrecognized) < MAX_UNRECOGNIZED:
                    self.unrecognized.append(Unrecognized(name, rec.line, rec.text))
            else:
                stats.irrelevant += n

    def finish(self) -> None:
        self.settle(self.asm.flush())
        self._update_state()
        self.stats.understood_line(self.folded)
        self.folded = 0

    def use_paste(self, paste) -> None:
        """Apply what :func:`logdoc.paste.prepare` learned for the lines (their lane is the plain path)."""
        self.paste = paste
        self.lane = False

    def fork(self, stats: Stats, unrecognized: list[Unrecognized], out: list[Event]) -> "Feeder":
        """An independent copy that goes on from here into other sinks: its open records are
        copies, and its derived state is its own (``peek`` finishes a fork to see the events as if
        the input ended now)."""
        import copy

        f = Feeder(self.name, stats, unrecognized, out)
        f.asm = copy.deepcopy(self.asm)
        f._open = getattr(f.asm, "_open", None)
        f.until = self.until
        f._update_state()
        if self.paste is not None:
            f.use_paste(self.paste)
        return f


# ---------------------------------------------------------------------------------------------
# reading a region of whole lines

def _lines_one_by_one(feeder: Feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int) -> int:
    line = feeder.line
    cand = prefilter._CANDIDATE.search
    clean = _clean
    for raw in buf[start:end - 1].split(sep) if end > start else ():
        lineno += 1
        text = clean(raw)
        line(lineno, text, cand(text) is not None)
    return lineno


# The NCCL lane: an `host:pid:tid [dev] NCCL INFO msg` line read while no record is open, from a
# region without CR or control bytes, goes straight to the classifier. It is exactly what the
# general path does with it: unwrap() peels nothing from such a line (its first ':' is followed
# by a digit, so no `host: ` envelope; it starts with no paste decoration (`>`, blanks, a bullet
# and a blank); no `]:[`, no Ray suffix: checked), and the assembler,
# with nothing open, hands back a record of its own unless the line may start one (checked).
# (a `>` first is a quote marker that unwrap's paste layer peels, not part of a host name, and so
# is a backtick that opens inline code; a line that ends in an unbalanced backtick is not a lane line)
_LANE_S = re.compile(r"(?![>`])[^\s:\[\]]*:\d+:\d+ \[\d+\] NCCL INFO ")
_ENV0 = Envelope()
_NO_KEY = (None, None, None, None, None)
_LANE_MEMO: dict[str, list] = {}  # line text -> kind, level, template, fields, host, pid, time, group key
_RAW_LANE: dict[bytes, tuple] = {}  # line bytes -> (_LANE_MEMO entry, text, _quiet_ok(text))
# The bulk lane (Feeder.bulk): line shape -> (catalog template, its rivals, first word of the message,
# the group key's head, the template's plain pattern, group keys by (host, pid), the grammar-family
# check for that first word, whether lane_ok's words can occur). Learned from a line
# the full path read as a bulk NCCL INFO format.
_LANE_HEAD = re.compile(r"(?![>`])([^\s:\[\]]*):(\d+):\d+ \[\d+\] NCCL INFO ")
_BULK_PLANS: dict[bytes, tuple] = {}
MAX_BULK_PLANS = 4096
_HEXB = b"0123456789abcdef"


def _learn_bulk(raw: bytes, text: str, ev: Event) -> None:
    """Remember the shape of ``raw``, a lane line the full path read as ``ev`` (a bulk catalog
    format), for :meth:`Feeder.bulk`: only when its bytes are its text (no control byte, no CR,
    valid UTF-8), its header is the lane's, and the catalog's cache holds the template it gave."""
    if len(text) >= 640 or "format" not in ev.fields or ev.time is not None:
        return
    try:
        if raw.decode() != text:
            return
    except UnicodeDecodeError:
        return
    m = _LANE_HEAD.match(text)
    if m is None or text[m.end():] != ev.fields.get("message") or (m.group(1) or None) != ev.host \
            or int(m.group(2)) != ev.pid:
        return
    from .grammar import shape
    from .templates import nccl_catalog

    cm = text[m.end():].rstrip()
    word = cm.split(" ", 1)[0]
    entry = nccl_catalog()._by_shape.get((shape(cm), word))
    if entry is None or entry[0].id != ev.template:
        return
    if len(_BULK_PLANS) >= MAX_BULK_PLANS:
        _BULK_PLANS.clear()
    key = raw.translate(None, _HEXB)
    # a text holding one of these holds their letters other than hex digits, in order, in its shape
    words = any(w in key for w in (b"]:[", b"rror", b"xption")) or key.endswith(b"ross lustr]")
    _BULK_PLANS[key] = (entry[0], entry[1], word, ("b", ev.kind, ev.template), entry[0].rx.std, {},
                        nccl.family_for(word), words)


@lru_cache(maxsize=1)
def _bulk() -> frozenset:
    from .digest import bulk_templates

    return bulk_templates()


def _quiet_ok(text: str) -> bool:
    """No quiet record would take this line (it is no continuation line)."""
    return not (_is_cont(text) or text.startswith(_TB_HEAD) or text.startswith(_CHAIN)
                or _SPAWN.match(text) or _FRAME_EQ.match(text))
MAX_LANE_MEMO = 1 << 13


def _copy_fields(f: dict) -> dict:
    out = dict(f)
    for k, v in out.items():
        if isinstance(v, list):
            out[k] = [dict(x) if isinstance(x, dict) else x for x in v]
        elif isinstance(v, dict):
            out[k] = dict(v)
    return out


def _memo_event(h: list, name: str, n: int, text: str) -> Event:
    return Event(h[0], h[1], name, n, text, n, None, None, None, h[4], h[5], h[6], h[2], _copy_fields(h[3]))
_CTRL_BYTES = tuple(bytes([b]) for b in list(range(0, 9)) + [11, 12] + list(range(14, 32)) + [127]) + (b"\r",)
_may_start = BlockAssembler._may_start
_MAY_START_FIRST = frozenset("T=\tn#Ef<LU WrtOCFSN[RD-")


def _region_is_plain(buf: bytes, start: int, end: int) -> bool:
    """No CR, ESC or other control byte in ``buf[start:end]``: its lines are their own clean text."""
    find = buf.find
    for b in _CTRL_BYTES:
        if find(b, start, end) >= 0:
            return False
    return True


def _dense(feeder: Feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int) -> int:
    """A region where most lines are candidates: line by line (the NCCL lane does most of them);
    a region without CR or control bytes needs no cleaning, only decoding."""
    if not _region_is_plain(buf, start, end):
        return _lines_one_by_one(feeder, buf, start, end, sep, lineno)
    line = feeder.line
    cand = prefilter._CANDIDATE.search
    lane = feeder.lane
    raw_lane = _RAW_LANE
    plans = _BULK_PLANS
    bulk = feeder.bulk if lane and feeder.reduce else None
    fold = feeder.fold_hit if lane and feeder.reduce else None
    hexb = _HEXB
    for raw in buf[start:end - 1].split(sep) if end > start else ():
        lineno += 1
        if lane:
            st = feeder.lane_state
            if st == 0 or st == 1:
                seen = raw_lane.get(raw)
                if seen is not None and (st == 0 or seen[2]):
                    if fold is None or not fold(lineno, seen):
                        feeder.lane_hit(lineno, seen)
                    continue
                if bulk is not None:
                    plan = plans.get(raw.translate(None, hexb))
                    if plan is not None and bulk(lineno, raw, plan):
                        continue
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            text = _clean(raw)
            line(lineno, text, cand(text) is not None)
            continue
        line(lineno, text, cand(text) is not None, raw)
    return lineno


_ESC = b"\x1b"


def _scan(feeder: Feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int,
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
            return _lines_one_by_one(feeder, buf, start, end, sep, lineno)
        budget = int(nlines * DENSE)
        starts: set[int] = set()
        rfind = buf.rfind
        add = starts.add
        for kw in prefilter.KEYWORDS_BYTES + (_ESC,):
            i = find(kw, start, end)
            while i >= 0:
                add(rfind(sep, start, i) + 1 or start)
                i = find(kw, find(sep, i, end) + 1, end)
                if len(starts) > budget:
                    return _dense(feeder, buf, start, end, sep, lineno)
        order = sorted(starts)
    count = buf.count
    clean = _clean
    cand = prefilter._CANDIDATE.search
    stats = feeder.stats
    raw_lane = _RAW_LANE
    plans = _BULK_PLANS
    bulk = feeder.bulk if feeder.lane and feeder.reduce else None
    fold = feeder.fold_hit if feeder.lane and feeder.reduce else None
    hexb = _HEXB
    quiet_skip = _quiet_skip
    pos = start
    idx = 0
    m = len(order)
    while True:
        if feeder.needs_every_line(lineno + 1):
            if pos >= end:
                break
            nl = find(sep, pos, end)
            if feeder.state == 1 and quiet_skip(buf[pos:nl]):
                # only quiet records are open and the line is no candidate and cannot continue one
                # (printable ASCII only, so its bytes are its clean text): line() would count it
                lineno += 1
                stats.irrelevant += 1
                pos = nl + 1
                continue
            text = clean(buf[pos:nl])
            lineno += 1
            feeder.line(lineno, text, cand(text) is not None)
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
        if seen is not None and feeder.lane:
            lane = feeder.lane_state
            if lane == 0 or (lane == 1 and seen[2]):
                if fold is None or not fold(lineno, seen):
                    feeder.lane_hit(lineno, seen)
                continue
        if bulk is not None and feeder.lane_state < 2:
            plan = plans.get(raw.translate(None, hexb))
            if plan is not None and bulk(lineno, raw, plan):
                continue
        text = clean(raw)
        feeder.line(lineno, text, cand(text) is not None, raw)
    return lineno


def region_reader(fast: bool | None = None) -> Callable[..., int]:
    """How a region of whole lines is fed to a :class:`Feeder`: the fast scan (the same lines fed in
    the same order) or line by line. The file reader and the live reader both use it."""
    if fast is None:
        fast = fast_enabled()
    return _scan if fast else _lines_one_by_one


def read_source(source: Source, feeder: Feeder, rstats: ReadStats, fast: bool | None = None,
                progress: Callable[[int], None] | None = None, grep: bool = True) -> None:
    """Feed every line of ``source`` to ``feeder`` (the fast path unless ``fast`` is False)."""
    opened = open_text(source, rstats)
    if opened is None:
        return
    stream, raw = opened
    if fast is None:
        fast = fast_enabled()
    region = region_reader(fast)
    hits = _GrepHits.start(source, stream) if fast and grep else None
    lineno = 0
    seen = 0
    try:
        for buf, start, end, sep, off in read_blocks(stream, source.name, rstats, BLOCK_SIZE):
            if hits is not None:
                if sep != b"\n" or not hits.alive:
                    hits.stop()
                    hits = None
                elif off >= 0:
                    lineno = _scan(feeder, buf, start, end, sep, lineno,
                                   lambda limit, h=hits, lo=off, hi=off + end - start, b=start: h.take(lo, hi, b, limit))
                    if progress is not None and rstats.bytes != seen:
                        progress(rstats.bytes - seen)
                        seen = rstats.bytes
                    continue
            lineno = region(feeder, buf, start, end, sep, lineno)
            if progress is not None and rstats.bytes != seen:
                progress(rstats.bytes - seen)
                seen = rstats.bytes
        if hits is not None:
            hits.finish()
    finally:
        if hits is not None:
            hits.stop()
        _close(source, raw)


GREP_MEMORY_KB = 128 << 10  # address space for the grep helper (lines are at most MAX_LINE for logdoc)


class GrepFailed(Exception):
    """grep did not read the whole file: the source is read again without it."""


def _grep_path() -> str | None:
    if os.environ.get("LOGDOC_NO_GREP"):
        return None
    import shutil

    return shutil.which("grep")


# The head of each line of ``grep -n -b`` output: ``NUMBER:OFFSET:``.
_GREP_HEAD = re.compile(rb"^(\d+):(\d+):", re.M)
# A block whose first PROBE hits come less than DENSE_BYTES apart on average is read line by line
# (an NCCL_DEBUG=INFO storm) without reading the rest of its hits.
PROBE = 2048
DENSE_BYTES = 256


class _GrepHits:
    """The start offsets of the lines of a file that hold a prefilter keyword or an ESC byte, from
    ``grep -a -n -b -F`` running beside the parse (on the other core), with their line numbers:
    the block scan then neither looks for the keywords itself nor counts the lines between them.
    Only for plain files (not gzip, not stdin), LF line ends.
    The lines it reports are a superset of the candidates (each is checked on its clean text),
    and a file where grep fails is read again the plain way (:class:`GrepFailed`)."""

    MIN_SIZE = 1 << 20  # smaller files: the find passes are cheaper than starting grep

    def __init__(self, proc):
        self.proc = proc
        self.out = proc.stdout
        self.heads: list[tuple[int, int]] = []  # (offset, line number) read from grep, from index ``at``
        self.at = 0
        self.tail = b""  # the start of an output line not complete yet
        self.alive = True

    @classmethod
    def start(cls, source: Source, stream) -> "_GrepHits | None":
        if source.path is None or source.text is not None or source.stream is not None:
            return None
        if getattr(stream, "name", None) != source.path:  # gzip (or anything not the file itself)
            return None
        try:
            if os.path.getsize(source.path) < cls.MIN_SIZE:
                return None
        except OSError:
            return None
        grep = _grep_path()
        if grep is None:
            return None
        import shutil
        import subprocess

        args = [grep, "-a", "-n", "-b", "-F"]
        for kw in prefilter.KEYWORDS_BYTES + (_ESC,):
            args += ["-e", kw.decode("latin-1")]
        args += ["--", source.path]
        # grep holds a whole line in memory: under an address-space limit it gives up on a huge line
        # ("memory exhausted", status 2) and the file is read again without it (GrepFailed).
        sh = shutil.which("sh")
        if sh is not None:
            args = [sh, "-c", f'ulimit -v {GREP_MEMORY_KB} 2>/dev/null; exec "$@"', "sh"] + args
        env = dict(os.environ, LC_ALL="C")
        try:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                    env=env, bufsize=1 << 16)
        except OSError:
            return None
        return cls(proc)

    def take(self, lo: int, hi: int, base: int, limit: int | None = None) -> tuple[list[int], list[int]] | None:
        """Hits with ``lo <= offset < hi`` as positions ``offset - lo + base`` and their line
        numbers (hits below ``lo`` fell in cut lines and are dropped). More than ``limit`` of them,
        or a first :data:`PROBE` of them less than :data:`DENSE_BYTES` apart: None, and the rest of
        the block's hits are passed over unread (a dense block is read line by line anyway)."""
        out: list[int] = []
        numbers: list[int] = []
        heads, i = self.heads, self.at
        while True:
            if i >= len(heads):
                if not self._read():
                    break
                heads, i = self.heads, 0
                continue
            off, number = heads[i]
            if off >= hi:
                break
            i += 1
            if off >= lo:
                out.append(off - lo + base)
                numbers.append(number)
                if limit is not None and (len(out) > limit or len(out) == PROBE and off - lo < PROBE * DENSE_BYTES):
                    self.at = i
                    self._pass(hi)
                    return None
        self.at = i
        return out, numbers

    def _chunk(self) -> bytes | None:
        """The next whole output lines from grep (at least one), or None at its end."""
        parts = [self.tail] if self.tail else []
        while True:
            data = self.out.read1(1 << 20)
            if not data:
                if parts:
                    raise GrepFailed("grep output ends inside a line")
                return None
            last = data.rfind(b"\n")
            if last < 0:
                parts.append(data)  # a long line: keep reading
                continue
            parts.append(data[:last + 1])
            self.tail = data[last + 1:]
            return b"".join(parts) if len(parts) > 1 else parts[0]

    def _read(self) -> bool:
        """Parse the heads of the next chunk of grep output into ``heads``; False at the end."""
        chunk = self._chunk()
        if chunk is None:
            return False
        self.heads = self._heads(chunk)
        self.at = 0
        return True

    def _heads(self, chunk: bytes) -> list[tuple[int, int]]:
        """(offset, line number) of every line of a chunk of whole output lines."""
        found = _GREP_HEAD.findall(chunk)
        if len(found) != chunk.count(b"\n"):
            raise GrepFailed("unexpected grep output")
        return [(int(o), int(n)) for n, o in found]

    def _pass(self, hi: int) -> None:
        """Pass over the hits below ``hi``: chunks of output whose last line is below it are
        dropped without being parsed."""
        heads, i = self.heads, self.at
        while i < len(heads) and heads[i][0] < hi:
            i += 1
        self.at = i
        if i < len(heads):
            return
        while True:
            chunk = self._chunk()
            if chunk is None:
                self.heads, self.at = [], 0
                return
            last = chunk.rfind(b"\n", 0, len(chunk) - 1) + 1
            m = _GREP_HEAD.match(chunk, last)
            if m is None:
                raise GrepFailed("unexpected grep output")
            if int(m.group(2)) < hi:
                continue
            self.heads = [h for h in self._heads(chunk) if h[0] >= hi]
            self.at = 0
            return

    def finish(self) -> None:
        rest = self.at < len(self.heads) or self.tail or self.out.read()
        code = self.proc.wait()
        if code not in (0, 1) or rest:
            raise GrepFailed(f"grep exit status {code}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.out.close()
        except OSError:
            pass
        self.proc.wait()
        self.alive = False


def iter_source_events(source: Source, stats: Stats, unrecognized: list[Unrecognized]) -> Iterator[Event]:
    """Events of one source (settled order; sort by ``line`` for file order); ``stats`` and
    ``unrecognized`` are filled as it goes."""
    yield from source_events(source, stats, unrecognized)


def source_events(source: Source, stats: Stats, unrecognized: list[Unrecognized], fast: bool | None = None,
                  progress: Callable[[int], None] | None = None, reduce: bool = False,
                  folded: list[dict] | None = None) -> list[Event]:
    """Events of one source in file order; ``stats`` and ``unrecognized`` are filled. With
    ``reduce``, bulk noise is folded as :mod:`logdoc.digest` says (and listed in ``folded``)."""
    if source.name.endswith("error.json"):
        ev = _error_file_event(source, stats)
        if ev is not None:
            return [ev]
    from .flight_recorder import source_events as _fr_events  # a flight-recorder dump (pickle or JSON)

    fr = _fr_events(source)
    if fr is not None:
        stats.files += 1
        stats.lines_read += len(fr)
        stats.understood_line(len(fr))
        return fr
    if reduce:
        from .digest import Reducer

        out = Reducer()
    else:
        out = []  # type: ignore[assignment]
    from .paste import prepare

    source, paste = prepare(source)  # paste damage repaired (logdoc.paste); None: read as it is
    rstats = ReadStats()
    feeder = Feeder(source.name, stats, unrecognized, out)  # type: ignore[arg-type]
    if paste is not None:
        feeder.use_paste(paste)
        rstats.warnings.extend(paste.notes)
    before = (Stats(**{k: getattr(stats, k) for k in Stats.__slots__ if k not in ("skipped_files", "warnings")}),
              len(stats.skipped_files), len(stats.warnings), len(unrecognized))
    try:
        try:
            read_source(source, feeder, rstats, fast=fast, progress=progress)
        except GrepFailed:
            # read the file again without grep, from the counts as they were before it
            snap, n_skip, n_warn, n_unrec = before
            for k in ("files", "lines_read", "irrelevant", "relevant", "understood", "not_understood", "events",
                      "cut_lines"):
                setattr(stats, k, getattr(snap, k))
            del stats.skipped_files[n_skip:], stats.warnings[n_warn:], unrecognized[n_unrec:]
            if reduce:
                from .digest import Reducer

                out = Reducer()
            else:
                out = []  # type: ignore[assignment]
            rstats = ReadStats()
            feeder = Feeder(source.name, stats, unrecognized, out)  # type: ignore[arg-type]
            if paste is not None:
                feeder.use_paste(paste)
                rstats.warnings.extend(paste.notes)
            read_source(source, feeder, rstats, fast=fast, progress=None, grep=False)
        feeder.finish()
    finally:
        stats.files += rstats.files
        stats.lines_read += rstats.lines
        stats.cut_lines += rstats.cut_lines
        stats.skipped_files.extend(rstats.skipped_files)
        stats.warnings.extend(rstats.warnings)
    if reduce:
        if folded is not None:
            folded.extend(out.folded(source.name))  # type: ignore[attr-defined]
        return out.events()  # type: ignore[attr-defined]
    # Records of interleaved streams settle out of order: restore file order.
    out.sort(key=lambda e: e.line)
    return out


def _digest_head(src: Source) -> bool:
    # only a regular file can be sniffed and read again (a FIFO blocks, a pipe loses what was read)
    if src.path is None or src.skip or not os.path.isfile(src.path):
        return False
    try:
        with open(src.path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return False
    from .digest import is_digest

    return is_digest(head)


def _as_source(src: Source | tuple[str, str]) -> Source:
    return src if isinstance(src, Source) else Source(src[0], text=src[1])


def parse_sources(sources: Iterable[Source | tuple[str, str]], *, jobs: int | None = 1,
                  progress=None, reduce: bool = False) -> ParseResult:
    """Parse every source (a :class:`Source`, or ``(name, text)`` for in-memory text).

    ``jobs``: worker processes for many files (None: one per core when that pays; the result is
    the same as with one process). ``progress``: an object with ``add_bytes(n)`` and
    ``file_done(name)`` (the CLI's progress bar), or None. ``reduce``: fold bulk noise
    (:mod:`logdoc.digest`): memory stays bounded whatever the input size, and the analysis gives
    the same diagnoses. A digest file among the sources (recognised by content) adds its events."""
    srcs = [_as_source(s) for s in sources]
    if jobs != 1:
        from .parallel import parse_parallel, worth_it

        if worth_it(srcs, jobs):
            return parse_parallel(srcs, jobs, progress=progress, reduce=reduce)
    stats = Stats()
    unrecognized: list[Unrecognized] = []
    events: list[Event] = []
    names: list[str] = []
    folded: list[dict] = []
    add = progress.add_bytes if progress is not None else None
    for src in srcs:
        if _digest_head(src):
            add_digest(src, stats, events, unrecognized, names, folded)
        else:
            names.append(src.name)
            events.extend(source_events(src, stats, unrecognized, progress=add, reduce=reduce, folded=folded))
        if progress is not None:
            progress.file_done(src.name)
    return ParseResult(events, stats, in_file_order(unrecognized, names), names, folded)


def in_file_order(unrecognized: list[Unrecognized], names: Sequence[str]) -> list[Unrecognized]:
    """The lines not understood in the order of the files and of their lines, whatever order their
    records settled in (interleaved streams settle out of order)."""
    order = {n: i for i, n in enumerate(names)}
    return sorted(unrecognized, key=lambda u: (order.get(u.file, len(order)), u.line))


def add_digest(src: Source, stats: Stats, events: list[Event], unrecognized: list[Unrecognized], names: list[str],
               folded: list[dict]) -> None:
    from . import digest

    try:
        with open(src.path, "rb") as fh:  # type: ignore[arg-type]
            d = digest.load(fh.read(), src.name)
    except OSError as exc:
        stats.skipped_files.append((src.name, exc.strerror or str(exc)))
        return
    except digest.DigestError as exc:
        stats.skipped_files.append((src.name, str(exc)))
        return
    digest.add_to(d, src.name, stats, events, unrecognized, names, MAX_UNRECOGNIZED)
    folded.extend(d.get("folded") or ())


def parse_text(text: str, name: str = "<text>") -> ParseResult:
    return parse_sources([Source(name, text=text)])


def parse_paths(paths: Iterable[str], stdin=None, *, jobs: int | None = 1, progress=None,
                reduce: bool = False) -> ParseResult:
    """Parse command-line paths (files, folders, globs, ``-``). Raises ``InputError`` for bad paths."""
    return parse_sources(expand(paths, stdin=stdin), jobs=jobs, progress=progress, reduce=reduce)
