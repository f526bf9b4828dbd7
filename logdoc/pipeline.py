"""Stages 1 to 5, the plain path: sources in, events and honest line counts out.

For every source: read (:mod:`logdoc.read.source`, :mod:`logdoc.read.lines`) -> paste damage repaired
(:mod:`logdoc.paste`) -> for every line, the prefilter decides whether it can matter
(:mod:`logdoc.read.prefilter`) -> a candidate is unwrapped (:func:`logdoc.envelope.unwrap`) -> joined
into a multi-line record when it starts or continues one (:class:`logdoc.blocks.BlockAssembler`)
-> classified (NCCL, then PyTorch/Gloo, then headerless NCCL, then outside stops) -> an
:class:`~logdoc.events.Event`. Every line read is counted exactly once in :class:`Stats`, as
irrelevant, understood, or relevant but not understood.

Which lines are fed to the block assembler (:class:`Feeder`, the same rule on every path):

* every candidate line (:func:`logdoc.read.prefilter.candidate`);
* every line while an open record may take any line (a traceback, a torchrun failure table, a
  wrapped WorkNCCL record: their code and table lines hold no keyword) or belongs to a stream
  without a rank (the stream's next line closes it);
* while only records of ranked streams that take continuation lines only are open (a c10 message
  waiting for its ``Exception raised from`` / ``frame #`` / tab lines), the lines within
  :data:`WINDOW` lines of the last line a record took that may continue one (:func:`_may_continue`);
* a record that took no line for :data:`IDLE` lines is closed: a stream that went quiet (a rank
  that printed one c10 warning and then only its own output) does not keep the slow path on.

A line that is not a candidate and stays a record of its own is irrelevant (not classified).

The speed machinery is in :mod:`logdoc.fast` (on unless ``LOGDOC_NO_FASTPATH=1``): it feeds the
same lines in the same order to the same :class:`Feeder`, so it gives the same events and counts
(``tests/test_fastpath.py``). The two places it joins this path are marked ``fast:``.

One module, over 500 lines: it is the plain path read top to bottom (classify a record, the Feeder's
gates, read and feed a source, every source), and the Feeder's states are read by each of those steps;
the speed machinery is already out, in :mod:`logdoc.fast`.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from enum import IntEnum
from typing import TYPE_CHECKING, Callable, Iterable

from . import nccl, nested, results, stops
from .blocks import CONTINUATION_MARKS, IDLE, BlockAssembler, Record, undouble
from .classify.bare import classify_bare
from .classify.torch import classify as classify_torch
from .envelope import unwrap
from .events import Envelope, Event
from .fast import enabled as fast_enabled
from .fast.grep import GrepFailed, GrepHits
from .fast.alone import alone
from .fast.lane import LANE_HEAD, Lane
from .fast.memo import text_classify, torch_classify
from .fast.memo import unwrap as unwrap_memo
from .fast.scan import scan
from .lazyre import lazy_re
from .read import prefilter
from .read.source import ReadStats, Source, _clean, _close, expand, open_text, read_blocks
from .residue import leading_prefixes
from .results import ParseResult, Stats, Unread, Unrecognized, settle_unread

if TYPE_CHECKING:
    from .paste import Paste

__all__ = ["Feeder", "Gate", "LaneGate", "classify_record", "source_events", "parse_sources", "parse_paths",
           "parse_text", "region_reader"]

WINDOW = 16    # lines after the last line a record took that are fed whatever they hold
BLOCK_SIZE = 4 << 20  # bytes read at a time
MAX_ERROR_FILE = 4 << 20
_WORD = lazy_re(r"[A-Za-z]{2}")  # a line that holds a word (a tiny paste's lines kept for the second reading)


# ---------------------------------------------------------------------------------------------
# one record -> one event

def _classify_text(text: str, env: Envelope):
    parsed = nccl.classify(text, env)
    if parsed is None:
        # fast: a PyTorch message is classified once per (text, level), what follows once per text
        fast = "NCCL" not in text and fast_enabled()
        parsed = torch_classify(text, env) if fast else classify_torch(text, env)
        if parsed is None:
            if fast:
                parsed = text_classify(text)
            else:
                parsed = classify_bare(text)  # an NCCL WARN message with no header at all
                if parsed is None:
                    parsed = stops.classify(text)  # the job stopped from outside (scheduler, OOM killer)
    return parsed


def classify_record(rec: Record, name: str) -> Event | None:
    env = rec.env
    parsed = _classify_text(rec.text, env)
    if parsed is None and "\n\n" in rec.text:
        # a record whose lines are all one blank apart (a copy from a web console or a notebook's output): read
        # without those blanks; the event keeps the text as read, so what it quotes is counted where it stands
        spaced = undouble(rec.text)
        if spaced is not None:
            parsed = _classify_text(spaced, env)
    if parsed is None and "\n" not in rec.text:
        # a one-line record under a prefix no envelope knows and too few lines to learn it from
        # (logdoc/paste/ learns a repeated one): the message after it, read once more
        for cut in leading_prefixes(rec.text):
            parsed = _classify_text(rec.text[cut:], env)
            if parsed is None:
                # a known envelope under it (`<job> [stderr] trainer-1  | <message>`: docker compose's under a
                # stream tag), peeled as the line's first would be
                inner, msg = unwrap(rec.text[cut:])
                if inner.layers and msg:
                    parsed = _classify_text(msg, inner)
                    if parsed is not None:
                        env = _stacked(env, inner)
            if parsed is not None:
                break
    if parsed is None:
        return None
    # positional (a third of the cost of keywords): kind, level, file, line, text, end_line, rank, local_rank,
    # node_rank, host, pid, time, template, fields (Event's field order; tests/test_fastpath.py guards it)
    ev = Event(parsed.kind, parsed.level, name, rec.line, rec.text, rec.end_line, env.rank, env.local_rank,
               env.node_rank, env.host, env.pid, env.time, parsed.template, parsed.fields)
    if env.process is not None:
        ev.process = env.process  # the name the peeled prefix gave the process
    return ev


def _stacked(outer: Envelope, inner: Envelope) -> Envelope:
    """``outer`` with what ``inner`` (an envelope found under an unknown prefix) says and ``outer`` does not."""
    said = {k: v for k in ("rank", "local_rank", "node_rank", "host", "pid", "time", "level", "source", "process")
            if getattr(outer, k) is None and (v := getattr(inner, k)) is not None}
    return replace(outer, layers=outer.layers + inner.layers, **said)


# ---------------------------------------------------------------------------------------------
# which lines go to the block assembler

class Gate(IntEnum):
    """Which lines without a keyword are fed (:attr:`Feeder.state`)."""

    NONE = 0    # nothing open: none
    QUIET = 1   # only records of ranked streams that take continuation lines only: within WINDOW, those that may continue one
    ALL = 2     # anything else: every line
    BARE = 3    # as QUIET, and a record of the lines without any envelope: every line is looked at, those that
                # may continue a record are fed, and the first that may not ends that record (its stream's next
                # line would), whichever stream it is of: a line of a ranked stream is not read in full for it


class LaneGate(IntEnum):
    """What the NCCL lane (:mod:`logdoc.fast.lane`) may do (:attr:`Feeder.lane_state`)."""

    FREE = 0    # nothing open: it takes its lines
    QUIET = 1   # only records that take continuation lines only: it takes its lines that are none
    CLOSED = 2  # a record may take any line, or a line without envelope is open: it takes nothing


_NONE, _QUIET, _ALL, _BARE = Gate  # module constants: an enum's class attribute costs ten times a global
_FREE, _LQUIET, _CLOSED = LaneGate
_CONTINUES_RX = lazy_re("|".join(re.escape(c) for c in CONTINUATION_MARKS))


def _may_continue(text: str) -> bool:
    return _CONTINUES_RX.search(text) is not None or not text.strip()


# The two prefixes a line's envelope may peel that NCCL's WARN text itself may start with (`%s: ...`,
# `[%d] ...`): pdsh's `host: ` and MPICH's `[rank] `.
_WARN_LIKE = {"pdsh": "host", "mpich": "rank"}


def _quoted_warn(env: Envelope, text: str, msg: str) -> tuple[Envelope, str]:
    """The line after a bare ``Last error:`` read whole (``asm.awaits_quote``): the ``word: `` or ``[N] ``
    that the envelope took for a pdsh or MPICH prefix is the start of NCCL's WARN text
    (``%s: communicator was revoked``, ``[%d] Error no transport for ...``); the layers outside it stay."""
    field = _WARN_LIKE[env.layers[-1]]
    value = getattr(env, field)
    token = value if field == "host" else f"[{value}]"
    at = text.rfind(token, 0, len(text) - len(msg))
    if at < 0:
        return env, msg
    outer = unwrap(text[:at] + "x")[0] if at else Envelope()
    return replace(env, **{field: getattr(outer, field)}, layers=env.layers[:-1]), text[at:]


# the counts a record's lines go to (Feeder.settle)
_IRRELEVANT = ("irrelevant",)
_UNDERSTOOD = ("relevant", "understood")
_NOT_UNDERSTOOD = ("relevant", "not_understood")


class Feeder:
    """Feeds the lines of one source to a :class:`BlockAssembler` under the rule of the module
    docstring and turns the records into events (appended to ``out``) and counts (``stats``).

    ``line(n, text, cand)`` for every line in order (``cand``: ``prefilter.candidate(text)``), or
    only for the lines where ``needs_every_line(n)`` is true plus every candidate line: the
    lines left out are counted with ``skip(k)``. Then ``finish()``. ``out`` is a list, or a
    :class:`logdoc.digest.Reducer` (bulk noise folded).
    """

    __slots__ = ("name", "stats", "unrecognized", "asm", "until", "out", "lane", "reduce", "state", "lane_state",
                 "paste", "every", "tiny", "owed", "_held", "unwrap", "loose")

    def __init__(self, name: str, stats: Stats, unrecognized: list[Unrecognized], out: list[Event]):
        self.name = name
        self.stats = stats
        self.unrecognized = unrecognized
        self.loose: set[str] = set()  # the texts of the loose lines kept (results.Unread)
        self.asm = BlockAssembler()
        self.until = 0
        self.out = out
        self.paste = None  # what logdoc.paste learned for the source's lines (set by use_paste)
        self.every = False  # a short source (logdoc.paste: Paste.every_line): every line is fed
        # a paste of at most MAX_LOOSE lines: each line with a word is kept for the second reading (logdoc/reread.py),
        # keyword or not (the one line pasted may be a message whose keyword-bearing header or type was lost)
        self.tiny = False
        # a line read as several glued records is one line read: line -> [pieces not counted, their texts,
        # the first piece's text, the counts the last record that held one of its pieces went to]
        self.owed: dict[int, list] = {}
        self._held: list[list] = []  # the entries of ``owed`` that the record being settled held
        self.state = Gate.NONE
        self.lane_state = LaneGate.FREE
        self.reduce = False
        if not isinstance(out, list):
            from .digest import Reducer

            self.reduce = isinstance(out, Reducer)
        self.lane = Lane(self, classify_record) if fast_enabled() else None  # fast: the NCCL lane
        self.unwrap = unwrap_memo if fast_enabled() else unwrap  # fast: a line fed again is unwrapped once

    def needs_every_line(self, n: int) -> bool:
        """Whether line ``n`` is looked at even without a keyword (the state does not change
        while lines are skipped, and this is false for every later line once it is false):
        every line while an open record may take any line, or belongs to a stream without a
        rank (its next line closes it); within :data:`WINDOW` lines of the last line a record
        took, the lines that may continue a record (:func:`_may_continue`)."""
        st = self.state
        return st == _ALL or st == _BARE or (st == _QUIET and n <= self.until)

    def wants(self, n: int, text: str) -> bool:
        """Whether a line without a keyword is fed (``needs_every_line`` said it is looked at)."""
        return self.state == _ALL or _may_continue(text)

    def _update_state(self) -> None:
        if not self.asm.has_open_block:
            self.state, self.lane_state = _NONE, _FREE
            return
        quiet, no_greedy = self.asm.open_state()
        self.state = _QUIET if quiet else _BARE if self.asm.bare_quiet() else _ALL
        self.lane_state = _LQUIET if no_greedy else _CLOSED

    def skip(self, k: int) -> None:
        self.stats.irrelevant += k

    def line(self, n: int, text: str, cand: bool, raw: bytes | None = None) -> None:
        if self.paste is not None and n in self.paste.joined:
            self.stats.irrelevant += 1  # its text was joined to a line before it (logdoc/paste/)
            return
        if cand or self.every:
            lane = self.lane
            if lane is not None and LANE_HEAD.match(text) is not None and lane.ok(text):
                lane.line(n, text, raw)  # fast: the same event, without unwrapping or assembling
            elif lane is None:
                self.feed(n, text, True)
            elif (not lane.reduce or "%|" not in text or not lane.bar(n, text, raw)) and not alone(lane, n, text, raw):
                self.feed(n, text, True)  # (fast: a progress bar of a saturated group is only counted, a
                # line that opens no record is settled alone: logdoc.fast.bars, logdoc.fast.alone)
        elif self.state and self.needs_every_line(n):
            if self.wants(n, text):
                self.feed(n, text, False)
            else:
                self.passed()
        else:
            self.stats.irrelevant += 1

    def passed(self) -> None:
        """A line without a keyword that may continue no record (``wants`` said no) is counted; under
        :attr:`Gate.BARE` it ends the record of the lines without an envelope."""
        self.stats.irrelevant += 1
        if self.state == _BARE:
            self.settle(self.asm.end_bare(), -1)
            self._update_state()

    def feed(self, n: int, text: str, cand: bool) -> None:
        paste = self.paste
        if paste is not None and paste.pieces:
            pieces = paste.pieces.get(n)
            if pieces:  # several records glued on one line (logdoc/paste/): each read on its own,
                # the line is counted once (see _pay): what its records owe, before any is settled
                self.owed[n] = [len(pieces) - 1, {unwrap(p)[1] for p in pieces[1:]}, unwrap(pieces[0])[1], ()]
                for piece in pieces:
                    self._feed(n, piece, cand)
                return
        self._feed(n, text, cand)

    def _feed(self, n: int, text: str, cand: bool) -> None:
        asm = self.asm
        if asm.has_open_block:
            self._close_idle(n)
        env, msg = self.unwrap(text)
        if env.layers and env.layers[-1] in _WARN_LIKE and asm.has_open_block:
            quoted = _quoted_warn(env, text, msg)
            if quoted[0] is not env and asm.awaits_quote(quoted[0]):
                env, msg = quoted
        head = len(text) - len(msg)
        if self.paste is not None:
            self.paste.apply(n, env)
            head += self.paste.peeled.get(n, 0)  # (what the paste repair took off the line counts too)
        self.feed_unwrapped(n, env, msg, head, cand)

    def feed_unwrapped(self, n: int, env: Envelope, msg: str, head: int, cand: bool) -> None:
        """The end of :meth:`_feed`: line ``n`` unwrapped (``env``, ``msg``; ``head``: the length of what was
        peeled) assembled, and the records it ends settled (:mod:`logdoc.fast.alone` calls it for a line
        whose envelope and message it knows from its bytes)."""
        recs = self.asm.feed(n, env, msg, head)
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
        idle = self.asm.close_idle(n - IDLE)
        if idle:
            self.settle(idle, -1)
            self._update_state()

    def settle(self, records: list[Record], plain_line: int = -1) -> None:
        stats = self.stats
        name = self.name
        for rec in records:
            n = rec.nlines
            if self.owed:
                n -= self._pay(rec)
            if rec.line == plain_line:
                stats.irrelevant += n  # a line without a keyword, alone: not classified
                if self._held:
                    self._counted_in(_IRRELEVANT)
                continue
            ev = classify_record(rec, name)
            if self._held:
                self._counted_in(_UNDERSTOOD if ev is not None else _NOT_UNDERSTOOD
                                 if prefilter.marked(rec.text) else _IRRELEVANT)
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
                unread = self.unrecognized
                if unread.__class__ is Unread:
                    unread.add_marked(Unrecognized(name, rec.line, rec.text, False, rec.env))
                elif len(unread) < results.MAX_UNRECOGNIZED:
                    unread.append(Unrecognized(name, rec.line, rec.text, False, rec.env))
            else:
                stats.irrelevant += n
                loose = self.loose
                if (self.every and rec.text not in loose and len(loose) < results.MAX_LOOSE
                        and self.unrecognized.__class__ is Unread and "\n" not in rec.text
                        and (prefilter.candidate(rec.text) or self.tiny and _WORD.search(rec.text) is not None)):
                    # kept for the reading of a job nothing else explains (logdoc/reread.py), from a short source
                    # only (a paste, read line by line on every path: a large file's fast path counts such lines from
                    # their bytes once it has seen them, in this process, and would keep fewer)
                    loose.add(rec.text)
                    self.unrecognized.append(Unrecognized(name, rec.line, rec.text, True, rec.env))

    def _pay(self, rec: Record) -> int:
        """The lines of ``rec`` not to count: the pieces after the first of a line read as several
        glued records, which are one line read (``lines_read == irrelevant + relevant``)."""
        paid = 0
        holding = self._held = []
        for g in [g for g in self.owed if rec.line <= g <= rec.end_line]:
            owed = self.owed[g]
            holding.append(owed)
            if rec.line == rec.end_line:
                # only pieces of line g: all of them owed but the first piece (a record may join a
                # piece to the one before it, so its text has fewer lines than pieces)
                held = rec.nlines - (1 if rec.text.startswith(owed[2]) else 0)
            else:
                texts = owed[1]
                held = sum(1 for t in rec.text.split("\n") if t in texts) or 1
            take = min(owed[0], held, rec.nlines - paid)
            owed[0] -= take
            paid += take
            if not owed[0]:
                del self.owed[g]
        return paid

    def _counted_in(self, fields: tuple[str, ...]) -> None:
        for owed in self._held:
            owed[3] = fields
        self._held = []

    def _settle_owed(self) -> None:
        """The pieces of glued lines that no record paid for (:meth:`_pay` reads a record's pieces from
        its text, which may join two of them): taken off the counts the last record holding one went to."""
        stats = self.stats
        for owed in self.owed.values():
            for field in owed[3]:
                setattr(stats, field, getattr(stats, field) - owed[0])
        self.owed.clear()

    def finish(self) -> None:
        self.settle(self.asm.flush())
        if self.owed:
            self._settle_owed()
        self._update_state()
        if self.lane is not None:
            self.lane.flush()  # (the launches fast.runs kept, counted)
            self.stats.understood_line(self.lane.folded)
            self.lane.folded = 0

    def use_paste(self, paste) -> None:
        """Apply what :func:`logdoc.paste.prepare` learned for the lines (their lane is the plain path)."""
        self.paste = paste
        self.lane = None
        self.every = paste.every_line
        self.tiny = paste.every_line and 0 < paste.lines <= results.MAX_LOOSE
        self.asm.wrap_width = paste.longest
        self.asm.column_cut = paste.at_width >= 2
        self.asm.code_heads = paste.every_line

    def read_lines(self, buf: bytes, start: int, end: int, sep: bytes, lineno: int) -> int:
        """Feed the lines of ``buf[start:end]`` (whole lines, each ending in ``sep``; the first is
        line ``lineno + 1``) one by one; return the number of the last one."""
        line = self.line
        cand = prefilter._CANDIDATE.search
        clean = _clean
        for raw in buf[start:end - 1].split(sep) if end > start else ():
            lineno += 1
            text = clean(raw)
            line(lineno, text, cand(text) is not None)
        return lineno

    def fork(self, stats: Stats, unrecognized: list[Unrecognized], out: list[Event]) -> "Feeder":
        """An independent copy that goes on from here into other sinks: its open records are
        copies, and its derived state is its own (``peek`` finishes a fork to see the events as if
        the input ended now)."""
        import copy

        f = Feeder(self.name, stats, unrecognized, out)
        f.asm = copy.deepcopy(self.asm)
        f.until = self.until
        f._update_state()
        if self.paste is not None:
            f.use_paste(self.paste)
        return f


# ---------------------------------------------------------------------------------------------
# one source -> its events

def _lines_one_by_one(feeder: Feeder, buf: bytes, start: int, end: int, sep: bytes, lineno: int) -> int:
    return feeder.read_lines(buf, start, end, sep, lineno)


def region_reader(fast: bool | None = None) -> Callable[..., int]:
    """How a region of whole lines is fed to a :class:`Feeder`: the fast scan (:func:`logdoc.fast.scan.scan`,
    the same lines fed in the same order) or line by line. The file reader and the live reader both use it."""
    if fast is None:
        fast = fast_enabled()
    return scan if fast else _lines_one_by_one


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
    hits = GrepHits.start(source, stream) if fast and grep else None  # fast: grep numbers the keyword lines
    lineno = 0
    seen = 0
    try:
        for buf, start, end, sep, off in read_blocks(stream, source.name, rstats, BLOCK_SIZE):
            if hits is not None:
                if sep != b"\n" or not hits.alive:
                    hits.stop()
                    hits = None
                elif off >= 0:
                    lineno = scan(feeder, buf, start, end, sep, lineno,
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


def source_events(source: Source, stats: Stats, unrecognized: list[Unrecognized], fast: bool | None = None,
                  progress: Callable[[int], None] | None = None, reduce: bool = False,
                  folded: list[dict] | None = None, head: bytes | None = None) -> list[Event]:
    """Events of one source in file order; ``stats`` and ``unrecognized`` are filled. With
    ``reduce``, bulk noise is folded as :mod:`logdoc.digest` says (and listed in ``folded``).
    ``head``: the first bytes of the file, when the caller read them (a file whose first
    non-blank byte can start neither a pickle nor JSON is no flight-recorder dump: not opened for it)."""
    if source.name.endswith("error.json"):
        ev = _error_file_event(source, stats)
        if ev is not None:
            return [ev]
    from .flight_recorder import source_events as _fr_events  # a flight-recorder dump (pickle or JSON)

    lead = head.lstrip()[:1] if head is not None else b""
    fr = _fr_events(source) if not lead or lead in (b"{", b"\x80") else None
    if fr is not None:
        stats.files += 1
        stats.lines_read += len(fr)
        stats.understood_line(len(fr))
        return fr
    from .paste import prepare

    source, paste = prepare(source)  # paste damage repaired (logdoc.paste); None: read as it is
    return prepared_events(source, paste, stats, unrecognized, fast, progress, reduce, folded)


def prepared_events(source: Source, paste: Paste | None, stats: Stats, unrecognized: list[Unrecognized],
                    fast: bool | None = None, progress: Callable[[int], None] | None = None,
                    reduce: bool = False, folded: list[dict] | None = None) -> list[Event]:
    """:func:`source_events` of a source that :func:`logdoc.paste.prepare` has seen (``paste``:
    what it learned, None: read as it is). The live reader ends here too."""
    if paste is not None and paste.every_line:
        fast = False  # a short source: every line is fed (the fast path hands over keyword lines only)
    before = stats.snapshot(), len(unrecognized)

    def start() -> tuple[Feeder, ReadStats]:
        if reduce:
            from .digest import Reducer

            out = Reducer()
        else:
            out = []
        rstats = ReadStats()
        feeder = Feeder(source.name, stats, unrecognized, out)  # type: ignore[arg-type]
        if paste is not None:
            feeder.use_paste(paste)
            rstats.warnings.extend(paste.notes)
        return feeder, rstats

    feeder, rstats = start()
    try:
        try:
            read_source(source, feeder, rstats, fast=fast, progress=progress)
        except GrepFailed:
            # fast: grep did not read the whole file: read it again without grep, from the counts before it
            stats.restore(before[0])
            if isinstance(unrecognized, Unread):
                unrecognized.truncate(before[1])
            else:
                del unrecognized[before[1]:]
            feeder, rstats = start()
            read_source(source, feeder, rstats, fast=fast, progress=None, grep=False)
        feeder.finish()
    finally:
        stats.files += rstats.files
        stats.lines_read += rstats.lines
        stats.cut_lines += rstats.cut_lines
        stats.skipped_files.extend(rstats.skipped_files)
        stats.warnings.extend(rstats.warnings)
    out = feeder.out
    if reduce:
        if folded is not None:
            folded.extend(out.folded(source.name))  # type: ignore[attr-defined]
        return out.events()  # type: ignore[attr-defined]
    # Records of interleaved streams settle out of order: restore file order.
    out.sort(key=lambda e: e.line)
    return out


# ---------------------------------------------------------------------------------------------
# every source -> the parse result

def _head(src: Source) -> bytes | None:
    """The first 256 bytes of a regular file (only one can be sniffed and read again: a FIFO
    blocks, a pipe loses what was read); None for any other source."""
    if src.path is None or src.skip or not os.path.isfile(src.path):
        return None
    try:
        with open(src.path, "rb") as fh:
            return fh.read(256)
    except OSError:
        return None


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
    from .paste import short_sources

    srcs = short_sources([_as_source(s) for s in sources])  # a large input's short files: no every-line read
    if jobs != 1:
        from .parallel import parse_parallel, worth_it

        if worth_it(srcs, jobs):
            return parse_parallel(parse_sources, srcs, jobs, progress=progress, reduce=reduce)
    from .collector import collector_off

    with collector_off():  # as in a worker's task (logdoc/parallel.py)
        return _parse_in_turn(srcs, progress, reduce)


def _parse_in_turn(srcs: list[Source], progress, reduce: bool) -> ParseResult:
    """:func:`parse_sources` in this process, one source after the other."""
    stats = Stats()
    unrecognized = Unread()
    events: list[Event] = []
    names: list[str] = []
    folded: list[dict] = []
    add = progress.add_bytes if progress is not None else None
    from .digest import is_digest
    from .events import share_keys, share_long_values, share_texts

    for src in srcs:
        head = _head(src)
        at = len(events)
        if head is not None and is_digest(head):
            add_digest(src, stats, events, unrecognized, names, folded)
        else:
            names.append(src.name)
            events.extend(source_events(src, stats, unrecognized, progress=add, reduce=reduce, folded=folded,
                                        head=head))
        if reduce and len(events) > at:
            from .facts import fold_unread

            events[at:] = fold_unread(events[at:])  # the INFO facts nothing reads one by one: counted
        if len(events) > at:
            # each line's message held once (not in its text and its fields both) from the start: a
            # job of many ranks holds every event of the parse at once, and a worker sends them so
            share_texts(events[at:])
            share_long_values(events[at:])  # a failure's message its lines repeat: one object
            share_keys(events[at:])  # the field names of events alike: one table
        if progress is not None:
            progress.file_done(src.name)
    return ParseResult(events, stats, settle_unread(unrecognized, names), names, folded)




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
    digest.add_to(d, src.name, stats, events, unrecognized, names, results.MAX_UNRECOGNIZED)
    folded.extend(d.get("folded") or ())


def parse_text(text: str, name: str = "<text>") -> ParseResult:
    return parse_sources([Source(name, text=text)])


def parse_paths(paths: Iterable[str], stdin=None, *, jobs: int | None = 1, progress=None,
                reduce: bool = False) -> ParseResult:
    """Parse command-line paths (files, folders, globs, ``-``). Raises ``InputError`` for bad paths."""
    return parse_sources(expand(paths, stdin=stdin), jobs=jobs, progress=progress, reduce=reduce)
