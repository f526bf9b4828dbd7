"""Time across formats, and one order for the events of all ranks.

Stamps reach the analysis in ``Event.time`` as the envelope and NCCL stages wrote them:

* ``2026-01-01T21:57:19`` (NCCL >= 2.26 WARN ``[YYYY-MM-DD HH:MM:SS]``, ISO prefixes, CloudWatch);
* ``--01-01T21:57:19`` (c10 ``[E101 21:57:19.147805485 ...]``: no year, the monotonic fraction dropped);
* ``--11-29T22:39:22.025000`` (torch's Python logger: no year, a wall-clock fraction);
* ``2024-07-25T06:36:18.293`` (torch 2.1-2.2 loggers), with ``Z`` or an offset when printed;

and ``torchrun.child_failed`` events carry ``YYYY-MM-DD_HH:MM:SS`` per failure in their fields.

Rules:

* A stamp without a year borrows the year of the job's year-full stamps (the nearest one when the job
  crosses New Year). With no year-full stamp at all, yearless stamps are compared among themselves.
  Nothing else is invented.
* Across files, times are compared in whole seconds: two events of different files in the same
  second are "same time" (c10 fractions are not wall time, and the other fractions cannot be trusted
  across hosts either).
* Within a file, the file order is the truth. An event without a stamp lies between the stamps of its
  neighbours in the same file (:meth:`Timeline.bounds`); for ordering it takes the last stamp before it
  (or, before the first stamp of its file, the first stamp after it).
* Offsets (``Z``, ``+02:00``) are ignored: log stamps are local time, and so are most of the others.

:class:`Timeline` orders events by ``(time, file order)``: its key is
``(0, seconds, file_index, line)`` for events with a known or bracketed time and
``(1, 0, file_index, line)`` for events of files that have no stamp at all (they come last, in file order).
"""
from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

from datetime import date
from typing import Iterable, Iterator, NamedTuple, Sequence

from ..events import Event
from ..lazyre import lazy_re

_STAMP = lazy_re(
    r"^\s*(?:(?P<y>\d{4})-|--)(?P<mo>\d\d)-(?P<d>\d\d)[T _](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<f>\d+))?\s*(?:Z|[+-]\d\d:?\d\d)?\s*$"
)
_DAY = 86400
NO_YEAR = 2000  # leap year used to compute seconds for yearless-only jobs


class Stamp(NamedTuple):
    year: int | None
    month: int
    day: int
    hour: int
    minute: int
    second: int
    frac: str | None


def parse_stamp(text: str | None) -> Stamp | None:
    if not text:
        return None
    m = _STAMP.match(text)
    if m is None:
        return None
    return Stamp(int(m["y"]) if m["y"] else None, int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]),
                 int(m["s"]), m["f"])


def event_time(ev: Event) -> str | None:
    """The event's own stamp; for a torchrun failure summary, the latest of its failures' times."""
    if ev.time:
        return ev.time
    if ev.kind == "torchrun.child_failed":
        best = None
        best_key = None
        for f in ev.fields.get("failures") or ():
            t = f.get("time") if isinstance(f, dict) else None
            st = parse_stamp(t)
            if st is not None and (best_key is None or st > best_key):
                best, best_key = t, st
        return best
    return None


class Clock:
    """Turns the stamps of one job into comparable whole seconds, borrowing years where needed."""

    def __init__(self, stamps: Iterable[Stamp]) -> None:
        full: set[tuple[int, int, int]] = set()
        for st in stamps:
            if st.year is not None:
                full.add((st.year, st.month, st.day))
        self._full_days = sorted(_ordinal(y, m, d) for y, m, d in full if _ordinal(y, m, d) is not None)
        self.years = sorted({y for y, _, _ in full})
        self._year_cache: dict[tuple[int, int], int | None] = {}
        self.borrowed = False

    def year_for(self, month: int, day: int) -> int | None:
        key = (month, day)
        if key in self._year_cache:
            return self._year_cache[key]
        year = None
        if self.years:
            best = None
            for y in range(self.years[0] - 1, self.years[-1] + 2):
                o = _ordinal(y, month, day)
                if o is None:
                    continue
                dist = min(abs(o - f) for f in self._full_days)
                if best is None or dist < best[0]:
                    best = (dist, y)
            year = best[1] if best else None
        self._year_cache[key] = year
        return year

    def resolve(self, st: Stamp) -> tuple[Stamp, bool]:
        """The stamp with its year filled when it can be borrowed; and whether it was."""
        if st.year is not None:
            return st, False
        y = self.year_for(st.month, st.day)
        if y is None:
            return st, False
        self.borrowed = True
        return st._replace(year=y), True

    def seconds(self, st: Stamp) -> int | None:
        st, _ = self.resolve(st)
        o = _ordinal(st.year if st.year is not None else NO_YEAR, st.month, st.day)
        if o is None:
            return None
        return o * _DAY + st.hour * 3600 + st.minute * 60 + st.second

    def iso(self, st: Stamp) -> str:
        st, _ = self.resolve(st)
        head = f"{st.year:04d}-" if st.year is not None else "--"
        out = f"{head}{st.month:02d}-{st.day:02d}T{st.hour:02d}:{st.minute:02d}:{st.second:02d}"
        return f"{out}.{st.frac}" if st.frac else out


def _ordinal(y: int, m: int, d: int) -> int | None:
    try:
        return date(y, m, d).toordinal()
    except ValueError:
        return None


class Entry(NamedTuple):
    event: Event
    time: str | None      # normalised ISO (year borrowed when possible; as precise as printed)
    second: int | None    # the event's own stamp, whole seconds (comparable across the job)
    lo: int | None        # earliest possible second (own stamp, or the last stamp before it in its file)
    hi: int | None        # latest possible second (own stamp, or the next stamp after it in its file)
    key: tuple            # the sort key of the timeline


def sorted_positions(run: list[int | None], fidx: array, lines: list[int]) -> array:
    """The positions ``0..n-1`` in the order of :meth:`Timeline.key_at` (known second first, by second,
    file and line; equals in their order), sorted as one number an event: the key's parts and the
    position packed side by side, each in the bits its range needs. A tuple an event (and the list of
    positions ``sorted`` makes beside its keys) cost about 150 bytes an event at the peak of
    ``analyze``, 30 MB at 10,000 ranks; one number about 50."""
    n = len(run)
    if not n:
        return array("i")
    known = [o for o in run if o is not None]
    base = min(known) if known else 0
    b_o = ((max(known) - base) if known else 0).bit_length()
    low = min(lines)
    b_l = (max(lines) - low).bit_length()
    b_f = max(fidx).bit_length()
    b_i = n.bit_length()
    # an unknown second after every known one (key_at's first part, 0 or 1), then the second, file, line
    keys = [(((((1 << b_o) if o is None else o - base) << b_f | f) << b_l | (line - low)) << b_i) | i
            for i, (o, f, line) in enumerate(zip(run, fidx, lines))]
    del known
    keys.sort()
    mask = (1 << b_i) - 1
    return array("i", (k & mask for k in keys))


class _Seconds:
    """Per event of a job, a second or None, held as a 4-byte offset from the job's first second: a list
    held an 8-byte slot an event (four of them: the event's own second, its bounds and its running
    second) and an int object per value. Read by position (``[i]``) and in order (iteration)."""

    __slots__ = ("_a", "_base")
    _NONE = -(1 << 31)

    def __init__(self, values: list[int | None], base: int) -> None:
        none = self._NONE
        self._base = base
        self._a = array("i", [none if v is None else v - base for v in values])

    @classmethod
    def of(cls, values: list[int | None], lo: int | None, hi: int | None) -> "_Seconds | list[int | None]":
        """``values`` held so, or the list itself when its seconds span more than the 4 bytes hold."""
        if lo is None or hi is None or hi - lo >= (1 << 31) - 1:
            return values
        return cls(values, lo)

    def __getitem__(self, i: int) -> int | None:
        v = self._a[i]
        return None if v == self._NONE else v + self._base

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[int | None]:
        none, base = self._NONE, self._base
        for v in self._a:
            yield None if v == none else v + base


class Timeline:
    """All events of a job, ordered by time where known and by file order within a file."""

    def __init__(self, events: list[Event]) -> None:
        n = len(events)
        self._events = events
        stamps: list[Stamp | None] = [None] * n
        read: dict[str, Stamp | None] = {}  # one stamp per time text (thousands of ranks print the same seconds)
        for i, ev in enumerate(events):
            t = ev.time if ev.time else (event_time(ev) if ev.kind == "torchrun.child_failed" else None)
            if t:
                st = read.get(t, read)
                if st is read:
                    st = read[t] = parse_stamp(t)
                stamps[i] = st
        del read
        self.clock = Clock(s for s in stamps if s is not None)
        seconds: dict[int, int | None] = {}  # per stamp object, its second: one number object for its events
        sec: list[int | None] = [None] * n
        for i, st in enumerate(stamps):
            if st is not None:
                k = id(st)
                got = seconds.get(k, seconds)
                if got is seconds:
                    got = seconds[k] = self.clock.seconds(st)
                sec[i] = got
        del seconds
        lo: list[int | None] = [None] * n
        hi: list[int | None] = [None] * n
        order: list[int | None] = [None] * n
        file_index: dict[str, int] = {}
        by_file: dict[str, list[int]] = {}
        for i, ev in enumerate(events):
            if ev.file not in file_index:
                file_index[ev.file] = len(file_index)
            by_file.setdefault(ev.file, []).append(i)
        self.file_index = file_index
        for idxs in by_file.values():
            idxs.sort(key=lambda i: (events[i].line, i))
        # where an event is (:meth:`_index`): per file, its events' positions and lines in line
        # order, searched by line (a dict of every event's id costs about 100 bytes an event); the
        # files' runs one after the other in two arrays, file f's from _at_start[f] to _at_start[f + 1]
        # (two arrays a file cost about 190 bytes a file more: a job of 10,000 rank files)
        self._at_start = array("i", [0])
        self._at_pos = array("i")
        for idxs in by_file.values():
            self._at_pos.extend(idxs)
            self._at_start.append(len(self._at_pos))
        self._at_line = array("i", (events[i].line for i in self._at_pos))
        for idxs in by_file.values():
            running = None
            for i in idxs:
                s = sec[i]
                if s is not None:
                    running = s if running is None or s > running else running
                    lo[i] = s
                else:
                    lo[i] = running
                order[i] = running
            nxt = None
            first_known = None
            for i in reversed(idxs):
                s = sec[i]
                if s is not None:
                    nxt = s if nxt is None or s < nxt else nxt
                    hi[i] = s
                    first_known = s
                else:
                    hi[i] = nxt
            if first_known is not None:
                for i in idxs:  # before the first stamp of the file: just before it
                    if order[i] is not None:
                        break
                    order[i] = hi[i]
        # compact per-event state (a job of many ranks has hundreds of thousands of events): the
        # file of each event as a number, its seconds as 4-byte numbers (_Seconds); sort keys are built
        # when asked for (:meth:`key_at`), the order of the events is an array of positions
        self._fidx = array("i", (file_index[ev.file] for ev in events))
        self._order = sorted_positions(order, self._fidx, [ev.line for ev in events])
        known = [x for x in sec if x is not None]
        first, last = (min(known), max(known)) if known else (None, None)
        del known
        self._sec = _Seconds.of(sec, first, last)
        self._lo, self._hi, self._run = (_Seconds.of(lo, first, last), _Seconds.of(hi, first, last),
                                         _Seconds.of(order, first, last))
        del sec, lo, hi, order
        # each event's stamp as a 4-byte number into the job's distinct stamps (-1: none), not a list slot
        held: dict[int, int] = {}
        self._stamps: list[Stamp] = []
        code = array("i", bytes(4 * n))
        for i, st in enumerate(stamps):
            if st is None:
                code[i] = -1
                continue
            k = held.get(id(st))
            if k is None:
                k = held[id(st)] = len(self._stamps)
                self._stamps.append(st)
            code[i] = k
        self._stamp_at = code
        del stamps, held
        self._places: array | None = None  # the inverse of _order, made when asked (place)

    # -- access -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[Entry]:
        for i in self._order:
            yield self._entry(i)

    @property
    def events(self) -> list[Event]:
        return [self._events[i] for i in self._order]

    def _stamp(self, i: int) -> Stamp | None:
        k = self._stamp_at[i]
        return self._stamps[k] if k >= 0 else None

    def _entry(self, i: int) -> Entry:
        st = self._stamp(i)
        return Entry(self._events[i], self.clock.iso(st) if st is not None else None, self._sec[i],
                     self._lo[i], self._hi[i], self.key_at(i))

    def _index(self, ev: Event) -> int | None:
        f = self.file_index.get(ev.file)
        if f is None:
            return None
        lines, pos, events = self._at_line, self._at_pos, self._events
        line = ev.line
        n = self._at_start[f + 1]
        k = bisect_left(lines, line, self._at_start[f], n)
        while k < n and lines[k] == line:
            i = pos[k]
            if events[i] is ev:
                return i
            k += 1
        return None

    def place(self, ev: Event) -> int:
        """The event's place in the order (0 first): what :meth:`key` orders, one number; events unknown to
        this timeline after every known one, by line (as :meth:`key` puts them)."""
        i = self._index(ev)
        if i is None:
            return len(self._order) + max(ev.line, 0)
        places = self._places
        if places is None:
            places = self._places = array("i", bytes(4 * len(self._order)))
            for k, j in enumerate(self._order):
                places[j] = k
        return places[i]

    def entry(self, ev: Event) -> Entry | None:
        i = self._index(ev)
        return None if i is None else self._entry(i)

    def key(self, ev: Event) -> tuple:
        """The sort key ``(known, seconds, file_index, line)``; events unknown to this timeline go last."""
        i = self._index(ev)
        if i is None:
            return (2, 0, 0, ev.line)
        return self.key_at(i)

    def line_key(self, file: str, line: int, stamp: str | None = None) -> tuple:
        """The sort key :meth:`key` would give an event at ``line`` of ``file`` that is not one of this
        timeline's (a launch a digest folded: its line and stamp kept, no event): its own stamp, or the
        order of the events before it."""
        f = self.file_index.get(file)
        if f is None:
            return (2, 0, 0, line)
        lines, pos = self._at_line, self._at_pos
        lo, hi = self._at_start[f], self._at_start[f + 1]
        k = bisect_right(lines, line, lo, hi)
        before = self._run[pos[k - 1]] if k > lo else None
        st = parse_stamp(stamp) if stamp else None
        own = self.clock.seconds(st) if st is not None else None
        run = own if before is None or (own is not None and own > before) else before
        if run is None and k < hi:
            run = self._hi[pos[k]]
        return (0, run, f, line) if run is not None else (1, 0, f, line)

    def seconds(self, ev: Event) -> int | None:
        """The event's own stamp in whole seconds (None when it printed none)."""
        i = self._index(ev)
        if i is None:
            st = parse_stamp(event_time(ev))
            return self.clock.seconds(st) if st is not None else None
        return self._sec[i]

    def bounds(self, ev: Event) -> tuple[int | None, int | None]:
        """The earliest and latest second the event can have happened at (None: unbounded)."""
        i = self._index(ev)
        if i is None:
            s = self.seconds(ev)
            return s, s
        return self._lo[i], self._hi[i]

    def iso(self, ev: Event) -> str | None:
        """The event's own stamp, normalised (year borrowed when possible)."""
        i = self._index(ev)
        st = self._stamp(i) if i is not None else parse_stamp(event_time(ev))
        return self.clock.iso(st) if st is not None else None

    def iso_seconds(self, seconds: int | None) -> str | None:
        """Whole seconds back to ISO (``--MM-DD...`` when no year is known anywhere)."""
        if seconds is None:
            return None
        d, rest = divmod(seconds, _DAY)
        day = date.fromordinal(d)
        hms = f"T{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
        if not self.clock.years:
            return f"--{day.month:02d}-{day.day:02d}{hms}"
        return f"{day.year:04d}-{day.month:02d}-{day.day:02d}{hms}"

    # by position in the event list the timeline was built from (fast paths for whole-job loops)
    def lo_at(self, i: int) -> int | None:
        return self._lo[i]

    def hi_at(self, i: int) -> int | None:
        return self._hi[i]

    def key_at(self, i: int) -> tuple:
        o = self._run[i]
        return (0, o, self._fidx[i], self._events[i].line) if o is not None else (1, 0, self._fidx[i],
                                                                                 self._events[i].line)

    def runs(self, events: list[Event]) -> Sequence[int | None]:
        """Per event of ``events``, the second it has in the order (``key(ev)[1]`` when
        ``key(ev)[0] == 0``, else None), by position when ``events`` is the list this timeline was
        built from (then the timeline's own, read only: no list of every event's)."""
        if events is self._events:
            return self._run
        out: list[int | None] = []
        for ev in events:
            k = self.key(ev)
            out.append(k[1] if k[0] == 0 else None)
        return out

    def same_time(self, a: Event, b: Event) -> bool | None:
        """True when both have stamps in the same second, False when different, None when unknown."""
        sa, sb = self.seconds(a), self.seconds(b)
        if sa is None or sb is None:
            return None
        return sa == sb

    def before(self, a: Event, b: Event) -> bool | None:
        """Whether ``a`` happened before ``b``: by file order in the same file, by whole seconds across
        files. None when the log cannot tell (same second in different files, or no stamps)."""
        if a.file == b.file:
            return (a.line, a.end_line) < (b.line, b.end_line)
        alo, ahi = self.bounds(a)
        blo, bhi = self.bounds(b)
        if ahi is not None and blo is not None and ahi < blo:
            return True
        if bhi is not None and alo is not None and bhi < alo:
            return False
        return None

    def span(self) -> tuple[int | None, int | None]:
        known = [s for s in self._sec if s is not None]
        if not known:
            return None, None
        return min(known), max(known)

    @property
    def year_borrowed(self) -> bool:
        return self.clock.borrowed
