"""Stage 5: the typed event that every later stage works on.

An :class:`Event` is one recognised record of a log: one line, or a multi-line block such as a
Python traceback or a torchrun failure summary. ``docs/architecture.md`` lists the kinds and their
fields.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .eventslots import KINDS, NO_FIELDS, install, kind_class, more_of
from .fielddicts import held_alike, keyed, split_names  # noqa: F401 (keyed: the analysis' rows, as fields)

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")


@dataclass(slots=True)
class Envelope:
    """What the launcher and logger wrappers around a line said about it."""

    rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: str | None = None
    level: str | None = None
    source: str | None = None  # c10 `file.cpp:line` or Python logger path, when printed
    layers: tuple[str, ...] = ()  # names of the envelopes peeled, outermost first
    # the name a prefix gives the process that printed the line (a Ray actor such as `VllmWorkerProcess`
    # or `RayWorkerWrapper`, the label of a prefix logdoc/paste/ learned), kept after it is peeled
    process: str | None = None

    def stream_key(self) -> tuple:
        """Lines with the same key come from the same process stream."""
        return (self.node_rank, self.host, self.rank, self.local_rank, self.pid)


# what an envelope says of who printed a line and when (kept with a line read again: logdoc/reread.py, digests)
WHO = ("rank", "local_rank", "node_rank", "host", "pid", "time")


# Event's fields in the order its constructor takes them (the pipeline, the lanes and pickling build events
# positionally)
EVENT_FIELDS = ("kind", "level", "file", "line", "text", "end_line", "rank", "local_rank", "node_rank", "host",
                "pid", "time", "template", "fields", "rank_source", "attempt", "process", "folds")


class Event:
    """One recognised record (a line or a block): fields as :data:`EVENT_FIELDS` lists them. Filled by the
    analysis: ``rank_source`` (how the rank was attributed: "envelope", "prefix", "nccl-init",
    "filename") and ``attempt``. ``process`` is the name a peeled prefix gave the process
    (``Envelope.process``); ``folds`` counts the events of the same process this one stands for besides
    itself (INFO facts nothing reads one by one and a progress bar's other lines, logdoc/facts.py),
    counted wherever events are. How it holds them in few slots: logdoc/eventslots.py."""

    __slots__ = ("file", "line", "text", "rank", "host", "pid", "time", "fields", "rank_source", "_more")
    kind: str
    level: str
    template: str | None

    def __new__(cls, kind: str, level: str, file: str, line: int, text: str, end_line: int = 0,
                rank: int | None = None, local_rank: int | None = None, node_rank: int | None = None,
                host: str | None = None, pid: int | None = None, time: str | None = None,
                template: str | None = None, fields: dict[str, Any] = NO_FIELDS, rank_source: str | None = None,
                attempt: int | None = None, process: str | None = None, folds: int = 0) -> "Event":
        what = (kind, level, template)
        try:
            c = KINDS.get(what)
        except TypeError:
            c = None
        if c is None:
            c, opened = kind_class(Event, what)
            self = object.__new__(c)
            if opened:
                self.kind, self.level, self.template = what  # type: ignore[misc]
        else:
            self = object.__new__(c)
        self.file = file
        self.line = line
        self.text = text
        self.rank = rank
        self.host = host
        self.pid = pid
        self.time = time
        self.fields = {} if fields is NO_FIELDS else fields
        self.rank_source = rank_source
        if (end_line and end_line != line or local_rank is not None or node_rank is not None or process is not None
                or attempt is not None or folds):
            self._more = more_of((end_line if end_line != line else 0, local_rank, node_rank, process, attempt,
                                   folds))
        else:
            self._more = None
        return self

    def _values(self) -> tuple:
        return tuple(getattr(self, k) for k in EVENT_FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Event(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in EVENT_FIELDS) + ")"

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "level": self.level,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "rank": self.rank,
            "local_rank": self.local_rank,
            "node_rank": self.node_rank,
            "host": self.host,
            "pid": self.pid,
            "time": self.time,
            "template": self.template,
            "fields": all_fields(self),
            "text": self.text,
        }
        if self.rank_source is not None:
            out["rank_source"] = self.rank_source
        if self.attempt is not None:
            out["attempt"] = self.attempt
        if self.process is not None:
            out["process"] = self.process
        if self.folds:
            out["folds"] = self.folds
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Event":
        known = {k: data[k] for k in EVENT_FIELDS if k in data}
        return cls(**known)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


install(Event)


class _Head(str):
    """What a line's text holds before its message (``host:pid:tid [dev] NCCL INFO ``), one object for
    every line of a process that starts alike: an event that holds one has the text ``head + message``."""

    __slots__ = ()


class _HeadAt(tuple):
    """A :class:`_Head` that also holds the values its NCCL header gave the fields first: ``(head, tid,
    dev)``, the text ``head + message``. The event's ``fields`` then leave ``tid`` and ``dev`` out, so the
    INFO facts every rank of a job prints alike are one fields dict for all of them (:func:`share_keys`);
    :func:`all_fields` and :func:`field_of` read them back."""

    __slots__ = ()


class _Around(tuple):
    """A record's text held as ``(before, name, after)``: the text is ``before`` followed by its field
    ``name`` and ``after`` (a ``terminate called ...`` record around its ``what()``), the field's long
    text held once and the parts shared by the records that print the same ones."""

    __slots__ = ()


class _Shape(tuple):
    """A line's text held as its words around its event's own values: ``(words, name, words, name, ...,
    words)``, the text being the words with each name's field value between them (as ``str`` writes an int).
    The lines every rank of a job echoes in a watchdog cascade (``[Rank 8] Some NCCL operations have failed
    or timed out ...``, ``[Rank 8] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183, ...) ran
    for 600020 milliseconds``) print the same words around that rank's numbers, which their fields hold
    anyway: every rank's line of the same words is one shape for the whole job (:func:`share_long_values`
    makes them, :data:`_SHAPES` holds one of each) and the rank keeps only its values."""

    __slots__ = ()


_TEXT = Event.text  # the slot itself (the property below reads and writes through it)


def _text(ev: Event, _get=_TEXT.__get__, _head=_Head, _at=_HeadAt, _around=_Around, _shape=_Shape,
          _str=str) -> str:
    t = _get(ev)
    c = t.__class__
    if c is _head:
        return t + ev.fields["message"]
    if c is _at:
        return t[0] + ev.fields["message"]
    if c is _around:
        return t[0] + ev.fields[t[1]] + t[2]
    if c is _shape:
        f = ev.fields
        if len(t) == 3:
            v = f[t[1]]
            return t[0] + (v if v.__class__ is _str else _str(v)) + t[2]
        out = [t[0]]
        for k in range(1, len(t), 2):
            v = f[t[k]]
            out.append(v if v.__class__ is _str else _str(v))
            out.append(t[k + 1])
        return "".join(out)
    return t


Event.text = property(_text, _TEXT.__set__, doc="the record's text as read")  # type: ignore[assignment]

HEAD_KEYS = ("tid", "dev")   # the fields an NCCL header gives, held by the process's head (_HeadAt)


def head_fields(ev: Event, _get=_TEXT.__get__, _at=_HeadAt) -> tuple:
    """The ``(name, value)`` pairs of ``ev``'s fields that its head holds (``tid``, ``dev``), or ``()``."""
    t = _get(ev)
    return (("tid", t[1]), ("dev", t[2])) if t.__class__ is _at else ()


def all_fields(ev: Event, _get=_TEXT.__get__, _at=_HeadAt) -> dict[str, Any]:
    """``ev.fields`` as parsed: the values its head holds (``tid``, ``dev``) first, then the fields (the
    same object when the head holds none). For a reader of every field (JSON, digests, placeholders)."""
    t = _get(ev)
    if t.__class__ is not _at:
        return ev.fields
    out = {"tid": t[1], "dev": t[2]}
    out.update(ev.fields)
    return out


def field_of(ev: Event, name: str, default: Any = None) -> Any:
    """One field of ``ev`` as parsed (:func:`all_fields`), without building the dict."""
    f = ev.fields
    if f and name in f:
        return f[name]
    for k, v in head_fields(ev):
        if k == name:
            return v
    return default


SHORT_TEXT = 96  # a line's text up to this long without a message of its own is held once for all its copies
_intern = __import__("sys").intern


def share_texts(events: Iterable[Event]) -> None:
    """Hold each event's text as a shared head and its ``message`` field, in place, where the text is
    the head followed by the message (NCCL lines: a process prints the same header before every
    message): the text reads the same, and a job of many ranks keeps each message once instead of
    twice. An event whose fields change later still reads its text from its head and message. A short
    text without its message (a progress bar every rank prints alike) is interned instead. The fields
    an NCCL header gives (``tid``, ``dev``: a process's own) move to its head (:class:`_HeadAt`), so that
    the rest of an INFO fact is the same from rank to rank (:func:`share_keys` holds it once)."""
    heads: dict[Any, Any] = {}
    get, put, head_t = _TEXT.__get__, _TEXT.__set__, _Head
    for ev in events:
        t = get(ev)
        if t.__class__ is not str:
            if t.__class__ is _Around:  # read back from a worker: its parts shared with the job's again
                put(ev, _Around((_intern(t[0]), t[1], _intern(t[2]))))
            elif t.__class__ is _Shape:  # the same: one shape of its words for the job
                put(ev, _SHAPES.get(t, t))
            continue
        m = ev.fields.get("message") if ev.fields else None
        if m.__class__ is not str or not m or not t.endswith(m):
            if len(t) <= SHORT_TEXT:
                put(ev, _intern(t))  # a short line many ranks print alike (a progress bar): one object
            continue
        h = t[:len(t) - len(m)]
        f = ev.fields
        at = _header_values(f)
        key = (h, at) if at else h
        got = heads.get(key)
        if got is None:
            got = heads[key] = _HeadAt((h, *at)) if at else head_t(h)
        if at:
            ev.fields = {k: v for k, v in f.items() if k not in HEAD_KEYS}
        put(ev, got)


def _header_values(f: dict) -> tuple:
    """``(tid, dev)`` when ``f`` starts with the two fields of an NCCL header (ints), else ``()``."""
    if len(f) < 3 or f.__class__ is not dict:
        return ()
    it = iter(f)
    if next(it) != "tid" or next(it) != "dev":
        return ()
    tid, dev = f["tid"], f["dev"]
    if tid.__class__ is not int or dev.__class__ is not int:
        return ()
    return (tid, dev)



LONG_FIELD = 2 * SHORT_TEXT  # a field this long that a text holds is held once (_Around): it saves more than the parts cost


def _around(ev: Event, t: str, put) -> bool:
    """Hold ``t`` as the parts around the longest text field of ``ev`` that it holds (see :class:`_Around`);
    False when it holds none."""
    best = None
    for k, v in ev.fields.items():
        if v.__class__ is str and len(v) > LONG_FIELD and (best is None or len(v) > len(best[1])):
            at = t.find(v)
            if at >= 0:
                best = (k, v, at)
    if best is not None:
        k, v, at = best
        put(ev, _Around((_intern(t[:at]), k, _intern(t[at + len(v):]))))
        return True
    return False


SHAPE_MIN = 40   # a text at least this long that holds its event's values is held as a shape (_Shape)
_SHAPES: dict[tuple, _Shape] = {}   # one of each shape, for every source of every job (bounded: _SHAPES_MAX)
_SHAPES_MAX = 1 << 12


def _find_value(seg: str, s: str) -> int:
    """Where ``s`` stands in ``seg`` as a word of its own (not inside a longer number or name), or -1."""
    at = seg.find(s)
    n = len(s)
    first_w, last_w = s[0].isalnum(), s[-1].isalnum()
    while at >= 0:
        if not (first_w and at > 0 and seg[at - 1].isalnum()) and \
                not (last_w and at + n < len(seg) and seg[at + n].isalnum()):
            return at
        at = seg.find(s, at + 1)
    return -1


def _shape(ev: Event, t: str, put) -> bool:
    """Hold ``t`` as a :class:`_Shape` over the event's own short values (ints, short texts), each taken
    at its first place where it stands as a word, in the order of the fields: the same for every rank
    whose line prints the same words. False when the text holds none of them."""
    parts = [t]
    for k, v in ev.fields.items():
        c = v.__class__
        if c is int:
            s = str(v)
        elif c is str and 0 < len(v) <= SHORT_TEXT:
            s = v
        else:
            continue
        for j in range(0, len(parts), 2):
            at = _find_value(parts[j], s)
            if at >= 0:
                seg = parts[j]
                parts[j:j + 1] = [seg[:at], k, seg[at + len(s):]]
                break
    if len(parts) == 1:
        return False
    key = tuple(_intern(p) if i % 2 == 0 else p for i, p in enumerate(parts))
    got = _SHAPES.get(key)
    if got is None:
        if len(_SHAPES) >= _SHAPES_MAX:
            return False
        got = _Shape(key)
        put(ev, got)
        if _text(ev) != t:  # a value written otherwise than str() writes it: the text as it was
            put(ev, t)
            return False
        _SHAPES[key] = got
        return True
    put(ev, got)
    return True


def share_long_values(events: Iterable[Event]) -> None:
    """Hold each long text equal to one held before (in this call) as that one object, in place: an
    event's text and its field values, nested records (a cause) included. The lines of one process's
    failure repeat the same message: a watchdog's timeout is its own line, the exception of the line
    that reports the watchdog's death, the ``what()`` of the ``terminate called`` record and its
    cause's exception, each a separate copy as parsed. Run per source (one rank's file, one digest):
    equal texts of different ranks are rare, and a table of a whole job's texts would cost more.
    A long text that no other value of the source repeats and that holds one of its event's long
    fields is held as the parts around that field (:class:`_Around`, the parts interned: the
    ``terminate called ...`` record of every rank prints the same head and frames around its own
    ``what()``); one that holds no long field but its event's short values (a rank's number, a sequence
    number) as the shape of its words around them (:class:`_Shape`, one for every rank that prints the
    same words). It reads the same."""
    held: dict[str, str] = {}
    twice: set[int] = set()   # ids of the held texts that another value repeated
    get, put = _TEXT.__get__, _TEXT.__set__
    alone: list[Event] = []   # events whose text was the first of its value (or short)
    for ev in events:
        t = get(ev)
        if t.__class__ is str and len(t) >= SHAPE_MIN:
            if len(t) > SHORT_TEXT:
                got = held.setdefault(t, t)
                if got is not t:
                    put(ev, got)
                    twice.add(id(got))
                elif ev.fields:
                    alone.append(ev)
            elif ev.fields:
                alone.append(ev)
        if ev.fields:
            _share_long(ev.fields, held, twice, 0)
    # a text that nothing else of the source repeats: held as the parts around the long field it holds,
    # else as the shape of its words around its values
    for ev in alone:
        t = get(ev)
        if id(t) not in twice and not (len(t) > LONG_FIELD and _around(ev, t, put)):
            _shape(ev, t, put)


def _share_long(v: Any, held: dict[str, str], twice: set[int], depth: int) -> None:
    items = v.items() if v.__class__ is dict else enumerate(v) if v.__class__ is list else ()
    for k, x in items:
        t = x.__class__
        if t is str:
            if len(x) > SHORT_TEXT:
                got = v[k] = held.setdefault(x, x)
                if got is not x:
                    twice.add(id(got))
        elif (t is dict or t is list) and depth < 4:
            _share_long(x, held, twice, depth + 1)


def share_keys(events: Iterable[Event]) -> None:
    """Hold each event's ``fields`` as a dict that shares its table of names with every other
    event's of the same names in the same order, in place: the same dict to every reader (equal,
    ordered alike, written and pickled alike; a name added later gives that one dict a table of its
    own), in less memory than a dict of its own (5 fields: 120 bytes instead of 184; 12 fields: 184
    instead of 464). Run per source where events are made; an event unpickled (a worker's) is made so. The
    fields of an event whose head holds its header's values (:func:`share_texts`) are one dict per value
    for the whole job (``_FIELDS``): the INFO facts every rank prints alike."""
    split, get, at = split_names, _TEXT.__get__, _HeadAt
    for ev in events:
        f = ev.fields
        if f:
            ev.fields = held_alike(f) if get(ev).__class__ is at else split(f)


def _unpickled(*values: Any) -> Event:
    ev = Event(*values)
    f = ev.fields
    if f:
        ev.fields = held_alike(f) if _TEXT.__get__(ev).__class__ is _HeadAt else split_names(f)
    return ev


def _reduce(ev: Event, _get=_TEXT.__get__):
    """What pickles an event (a worker's events sent to the parent): its slots in order, its text as held
    (a shared head stays one object), its fields made to share their names as they are read back."""
    return _unpickled, (ev.kind, ev.level, ev.file, ev.line, _get(ev), ev.end_line, ev.rank, ev.local_rank,
                        ev.node_rank, ev.host, ev.pid, ev.time, ev.template, ev.fields, ev.rank_source,
                        ev.attempt, ev.process, ev.folds)


def _copy(ev: Event) -> Event:
    """A shallow copy (``copy.copy``): the same fields dict, the text as held."""
    return Event(*_reduce(ev)[1])


Event.__reduce__ = _reduce  # type: ignore[assignment,method-assign]
Event.__copy__ = _copy  # type: ignore[attr-defined]
