"""Per-node digests, and the bounded event store every large parse uses.

A job too large to gather leaves its logs on the nodes. ``logdoc digest PATH... -o node7.json``
reduces one node's logs to the events that matter, and ``logdoc explain`` reads digests (mixed
with raw logs if need be) and gives the diagnoses it gives on the raw logs.

What is kept (:class:`Reducer`), per source file and per process stream (host, pid, rank,
local rank, node rank):

* bulk NCCL INFO noise that no rule and no analysis reads (``Trees``, ring ``Channel xx/yy : ...``
  lines, init and bootstrap timings, thresholds, chunk sizes, TRACE lines): the first and the last
  line of each format;
* collective launches (``AllReduce: opCount ...``, ``NCCL CALL ncclAllReduce(...)``), which the
  progress analysis reads (:mod:`logdoc.analysis.collectives`): per communicator and process, the
  first and the last :data:`FULL` launches whole, and one ``nccl.progress`` event that folds the
  rest (:func:`fold_launches`): per collective its count and first and last opCount, the total
  count, first and last lines and times, and the last :data:`TAIL` launches as compact rows (the
  lateness of a straggler is judged on them, and what the ranks launched at each opCount is compared
  on them, :mod:`logdoc.analysis.launches`);
* NCCL init facts (communicators, env, interfaces, transports, versions) and other NCCL INFO
  lines: every distinct message, once (a line printed again by the same process, from any of its
  threads, is the same fact), plus the last, up to :data:`FACT_KEEP` distinct ones per family
  (:func:`family`: a setting, a communicator's init, a format); connections: one per peer,
  direction and transport (channels differ only by their number), plus the last;
* everything else (warnings, errors, torch, Gloo, torchrun, tracebacks): every event, up to
  :data:`KEEP_INFO` of one format per stream at INFO and below, plus the last (a flood of one
  message cannot fill memory, nor the digest); warnings and errors: the first and the last of one
  format from every stream, and the others while the source (a node's log) holds fewer than
  :data:`KEEP` of that format, all streams together (32 processes repeating one warning keep 2
  each, not :data:`KEEP` + 1 each; the rest is counted per stream in ``folded``).

Kept events are the parser's own :class:`~logdoc.events.Event` objects, unchanged, so the analysis
and the knowledge base see the same first failure, the same ranks and the same evidence lines.
The counts of what was folded are in the digest (``folded``, per file, kind and format), with
per-stream state (first and last line and time, events by level). Events are written grouped by
kind and format, which compresses twice as well; reading puts them back in file order.

A digest is JSON (``logdoc.digest/2``), its first key the schema marker, so it is recognised by
content, whatever its file name; written gzip-compressed when its name ends in ``.gz``. Its events
are written without what can be rebuilt exactly (:func:`pack`, :func:`unpack`): keys whose value
is empty, the file name (an index into ``files``), an ``end_line`` equal to ``line``, the NCCL
catalog format named by the template id, and the message that ends the line's text (its offset).
Digests of ``logdoc.digest/1`` (every event in full) are still read.

One module, over 500 lines: what the reducer keeps and how a digest writes it are one contract (the fold
keys decide what a digest holds, and :func:`unpack` rebuilds exactly what :func:`pack` left out), so both
sides change together; the command line and the parser import it as one name.
"""
from __future__ import annotations

import json
import os
from collections import Counter, deque
from itertools import repeat
from operator import itemgetter
from typing import Any, Iterable

from .events import EVENT_FIELDS, WHO, Envelope, Event, all_fields, field_of
from .fielddicts import held
from .lazyre import lazy_re

SCHEMA = "logdoc.digest/2"
READS = ("logdoc.digest/1", SCHEMA)  # /1: the same content, events in full
KEEP = 8             # warnings and errors of one format kept per source (every stream's first and last besides)
KEEP_INFO = 4        # the same for INFO and quieter levels (errors and warnings keep KEEP)
_QUIET = frozenset({"INFO", "DEBUG", "TRACE"})
TAIL = 64            # collective launches read per communicator and process: the last ones
                     # (logdoc.analysis.collectives.WINDOW of them are compared across ranks), kept
                     # as compact rows of one nccl.progress event but for the last FULL (fold_launches)

# Kinds whose every line is noise for the analysis and the rules.
BULK_KINDS = frozenset({"nccl.channel", "nccl.trace_level", "nccl.call"})
# NCCL INFO catalog formats that are noise (matched on the catalog format text).
_BULK_FORMAT = lazy_re(
    r"Trees |Init timings|Bootstrap timings|threadThresholds |P2P Chunksize"
    r"|%d coll channels|%d p2p channels|Channel %\d*d/%\d*d : %s"
)
# Init facts: collapse exact repeats of a line from one process.
FACT_KINDS = frozenset({
    "nccl.connection", "nccl.comm_init", "nccl.comm_info", "nccl.env", "nccl.bootstrap", "nccl.net_socket",
    "nccl.net_ib", "nccl.using_network", "nccl.connected_all_rings", "nccl.connected_all", "nccl.version",
})

_bulk_templates: frozenset[str] | None = None


def bulk_templates() -> frozenset[str]:
    """Ids of the NCCL catalog formats that are bulk noise."""
    global _bulk_templates
    if _bulk_templates is None:
        from .templates import nccl_formats

        _bulk_templates = frozenset(tid for tid, (levels, fmt) in nccl_formats().items()
                                    if "INFO" in levels and _BULK_FORMAT.match(fmt))
    return _bulk_templates


def group_key(ev: Event) -> tuple[Any, ...]:
    """(limit, key): events with one key are folded once ``limit`` of them are kept."""
    kind = ev.kind
    stream = (ev.host, ev.pid, ev.rank, ev.local_rank, ev.node_rank)
    said = (None if ev.rank is not None else ev.fields.get("rank") if kind.startswith("store.")
            else ev.fields.get("global_rank") if kind == "app.lightning" else None)
    if type(said) is int:
        # a store message names the rank that prints it (`... store based barrier for rank: 4, ...`), Lightning's
        # start-up line the global rank of its process: each rank's lines are a stream of their own in a paste of
        # all ranks without prefixes (which ranks printed, and how often, is read)
        stream = (ev.host, ev.pid, ("said", said), ev.local_rank, ev.node_rank)
    if kind.startswith("nccl."):
        f = ev.fields
        fmt = f.get("format")
        if isinstance(fmt, str) and ("opCount %" in fmt or fmt.startswith("nccl%s(")):
            args = f.get("args") or ()
            at = -3 if "opCount %" in fmt else -2  # `comm %p [nranks=%d] stream %p` / `...,%p,%p)`: comm, stream
            comm = args[at] if len(args) >= -at else None
            return -TAIL, ("l", kind, None, comm, stream)
        if kind in BULK_KINDS:
            return 1, ("b", kind, ev.template, stream)
        if kind == "nccl.info" and ev.template is not None and ev.level == "INFO" and ev.template in bulk_templates():
            return 1, ("b", kind, ev.template, stream)
        if kind == "nccl.connection" and ev.level == "INFO":
            # one per peer and transport: the channel number is all that differs between them
            f = ev.fields
            return 1, ("c", kind, (f.get("transport"), f.get("src_rank"), f.get("dst_rank"), f.get("direction")),
                       stream)
        if ev.level == "INFO" and (kind in FACT_KINDS or kind == "nccl.info"):
            # the message, not the line: a thread of the same process printing it again is the same fact
            msg = f.get("message")
            return 1, ("f", kind, msg if isinstance(msg, str) and msg else ev.text, stream)
    return (KEEP if ev.level not in _QUIET else KEEP_INFO), ("k", kind, ev.template, ev.level, stream)


_INTERN_MAX = 96  # strings up to this long are shared between events (hosts, times, names, values)


_INTS: dict[int, int] = {}  # one object per number (line numbers, pids, ranks repeat across ranks)


def _int(v: int) -> int:
    return held(_INTS, v, v, 1 << 16)


_RECORDS: dict[tuple, Any] = {}  # a nested record's value -> the one object of it (interfaces every rank lists)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _record_key(v: Any) -> tuple | None:
    """A key equal for equal nested records of scalars and short texts (types kept: 1, 1.0 and True
    differ), None for one that holds anything else (a long text, more than 32 items)."""
    t = type(v)
    if t in _SCALARS:
        # (a long text, a cause's message, is a rank's own: a record holding one is not looked up)
        return (t, v) if t is not str or len(v) <= _INTERN_MAX else None
    if len(v) > 32:
        return None
    if t is dict:
        out = []
        for k, x in v.items():
            kx = _record_key(x)
            if kx is None or type(k) is not str:
                return None
            out.append((k, kx))
        return (dict, tuple(out))
    if t is list:
        out = []
        for x in v:
            kx = _record_key(x)
            if kx is None:
                return None
            out.append(kx)
        return (list, tuple(out))
    return None


def _one_record(v: Any) -> Any:
    """``v`` (a nested dict or list of a field, compact) or the equal record read before it: one
    object for the ranks that all list the same devices. Nothing changes a record once it is read."""
    key = _record_key(v)
    if key is None:
        return v
    return held(_RECORDS, key, v, 1 << 12)


def _shared(v: Any, intern=__import__("sys").intern) -> Any:
    t = type(v)
    if t is str:
        return intern(v) if len(v) <= _INTERN_MAX else v
    if t is int:
        return _int(v)
    if t is list:
        for i, x in enumerate(v):
            tx = type(x)
            if tx is str and len(x) <= _INTERN_MAX:
                v[i] = intern(x)
            elif tx is int:
                v[i] = _int(x)
            elif tx is dict:
                v[i] = {intern(k) if type(k) is str else k: _shared(y) for k, y in x.items()}
        return _one_record(v) if v else v
    if t is dict:  # a nested record (a cause, an interface): its names and short values shared too
        return _one_record({intern(k) if type(k) is str else k: _shared(y) for k, y in v.items()})
    return v


def share_numbers(events: Iterable[Event]) -> None:
    """One object per number among the events' lines, pids and ranks, in place (what unpickling
    a worker's events makes again for every event: pickling shares strings, not numbers)."""
    ints = _INTS
    for e in events:
        v = e.line
        got = ints.get(v)
        if got is None:
            got = _int(v)
        if e.end_line == v:
            e.end_line = got
        e.line = got
        v = e.pid
        if v is not None:
            got = ints.get(v)
            e.pid = got if got is not None else _int(v)
        v = e.rank
        if v is not None:
            got = ints.get(v)
            e.rank = got if got is not None else _int(v)


def compact(events: Iterable[Event]) -> None:
    """Share what many events hold alike (one host name, one time, one field value, one field
    name for thousands of ranks), in place: the events stay equal, they take less memory. A job of
    many ranks repeats the same short strings in every rank's events (the same parsed line of
    another process, a file read back from a worker process or a digest)."""
    intern = __import__("sys").intern
    for e in events:
        h = e.host
        if h is not None and type(h) is str:
            e.host = intern(h)
        t = e.time
        if t is not None and type(t) is str:
            e.time = intern(t)
        e.file = intern(e.file) if type(e.file) is str else e.file
        f = e.fields
        if f:
            e.fields = {intern(k) if type(k) is str else k: _shared(v) for k, v in f.items()}


FULL = 3  # launches of a communicator and process kept whole at its end (evidence), beside its first


def _launch(ev: Event) -> dict[str, Any] | None:
    from .analysis.collectives import launch_of

    return launch_of(ev)


def _count_op(ops: dict, ev: Event) -> None:
    """Per collective of a communicator: [count, first line, first opCount, last line, last opCount]."""
    la = _launch(ev)
    if la is None:
        return
    _count(ops, ev.line, la["coll"], la["op_count_text"])


def _count(ops: dict, line: int, coll: str, oc: str) -> None:
    o = ops.get(coll)
    if o is None:
        ops[coll] = [1, line, oc, line, oc]
        return
    o[0] += 1
    if line < o[1]:
        o[1], o[2] = line, oc
    if line >= o[3]:
        o[3], o[4] = line, oc


def fold_launches(count: int, first: Event, tail: list[Event], ops: dict, kind: str) -> tuple[list[Event], Event | None]:
    """The launches of one communicator in one process, folded: its first launch and its last
    :data:`FULL` whole (the evidence the progress analysis cites), and one ``nccl.progress`` event
    that holds the rest as :mod:`logdoc.analysis.collectives` reads it: per collective its count and
    first and last opCount, the total count and first and last lines and times, and the last
    launches (``tail``, the last ``TAIL`` in file order) as compact rows ``[line, time, coll,
    opCount, count, datatype, op, root]`` (what :mod:`logdoc.analysis.launches` compares), the first of them the ``start``-th launch (from 0); the
    communicator's size (``nranks``) and how the launches were printed (``via``: opCount lines or
    CALL lines) are those of its last launch.
    Nothing is folded (no progress event) while every launch is kept whole anyway."""
    held = list(tail) if any(e is first for e in tail) else [first] + list(tail)
    if count == len(held) and count <= FULL + 1:
        return held, None
    whole = [first] + [e for e in tail[-FULL:] if e is not first]
    rows = []
    for e in tail:
        la = _launch(e)
        if la is None:
            continue
        rows.append([e.line, e.time, la["coll"], la["op_count_text"], la["count"], la["datatype"], la["op"], la["root"]])
    last = tail[-1] if tail else first
    times = [e.time for e in (first, last) if e.time]
    comm = nranks = via = None
    la = _launch(last)
    if la is not None:
        comm, nranks, via = la["comm"], la["nranks"], la["via"]
    text = (f"{count} NCCL collective launches of comm {comm} folded by logdoc digest: "
            + ", ".join(f"{c} x{o[0]}" for c, o in sorted(ops.items())))
    prog = Event("nccl.progress", "INFO", last.file, last.line, text, last.line, last.rank, last.local_rank,
                 last.node_rank, last.host, last.pid, last.time, None,
                 {"comm": comm, "nranks": nranks, "via": via, "launch_kind": kind, "count": count, "first_line": first.line,
                  "last_line": last.line, "first_time": times[0] if times else None,
                  "last_time": last.time or (times[-1] if times else None),
                  "ops": {c: {"count": o[0], "first_op_count": o[2], "last_op_count": o[4], "first_line": o[1],
                              "last_line": o[3]} for c, o in sorted(ops.items())},
                  "start": count - len(tail), "tail": rows,
                  "dev": field_of(last, "dev"), "tid": field_of(last, "tid")})
    return whole, prog


def _line(e) -> int:
    return e.line


def _text(x) -> str:
    return x if type(x) is str else x.decode()


_COLL = itemgetter(1)
_LINE0 = itemgetter(0)
_TEXT3 = itemgetter(3)


def _tail_line(e) -> int:
    return e[0] if type(e) is tuple else e.line


FACT_KEEP = 4  # distinct lines of one fact family kept per stream (then only counted, and the last kept)


def family(ev: Event, key: tuple) -> tuple:
    """The family of a fact (an NCCL init line): what one process prints again only when something
    changed. One setting (``nccl.env`` by name), one communicator's init and summary lines (by comm
    pointer and phase), one catalog format, one kind. A process that prints more than
    :data:`FACT_KEEP` different lines of one family (a value that keeps changing: memory used, a
    CPU core, a timing) keeps the first ones and the last."""
    kind = key[1]
    f = ev.fields
    if kind == "nccl.env":
        sub: Any = f.get("name")
    elif kind in ("nccl.comm_init", "nccl.comm_info"):
        sub = (f.get("comm"), f.get("phase"))
    elif kind == "nccl.info":
        sub = ev.template
    else:
        sub = None
    return ("F", kind, sub, key[-1])


class Reducer:
    """The events of one source, folded as the module says. ``append`` them in any order;
    ``events()`` gives the kept ones in file order."""

    __slots__ = ("kept", "groups", "tails", "families", "per_node")

    def __init__(self) -> None:
        self.kept: list[Event] = []
        # key -> [count, kept count, last event (not in kept), first line, last line]
        self.groups: dict[tuple, list] = {}
        # a negative limit keeps the last -limit events: key -> [count, limit, events, first line, last line]
        self.tails: dict[tuple, list] = {}
        # distinct facts kept per family (family()): key -> count
        self.families: dict[tuple, int] = {}
        # warnings and errors of one format kept in the whole source, every stream together: key -> count
        self.per_node: dict[tuple, int] = {}

    def append(self, ev: Event) -> None:
        limit, key = group_key(ev)
        if limit < 0:
            t = self.tails.get(key)
            if t is None:
                t = self.tails[key] = [0, -limit, [], ev.line, ev.line, ev, {}, None]
            t[0] += 1
            t[3], t[4] = min(t[3], ev.line), max(t[4], ev.line)
            if ev.line < t[5].line:
                t[5] = ev
            _count_op(t[6], ev)
            t[2].append(ev)
            if len(t[2]) >= 2 * t[1]:
                t[2].sort(key=_line)
                del t[2][:-t[1]]
            return
        g = self.groups.get(key)
        if g is None and key[0] == "f":
            # a fact not seen before: kept while its family has room, else counted in the family
            fam = family(ev, key)
            n = self.families.get(fam, 0)
            if n >= FACT_KEEP:
                key, limit = fam, 0
                g = self.groups.get(fam)
                if g is None:
                    g = self.groups[fam] = [0, 0, None, ev.line, ev.line]
            else:
                self.families[fam] = n + 1
        node = key[:-1] if limit == KEEP and key[0] == "k" else None
        if g is None:
            self.groups[key] = [1, 1, None, ev.line, ev.line]
            self.kept.append(ev)
            if node is not None:
                self.per_node[node] = self.per_node.get(node, 0) + 1
            return
        g[0] += 1
        if ev.line < g[3]:
            g[3] = ev.line
        if ev.line > g[4]:
            g[4] = ev.line
        if g[1] < limit and (node is None or self.per_node.get(node, 0) < KEEP):
            g[1] += 1
            self.kept.append(ev)
            if node is not None:
                self.per_node[node] += 1
            return
        last = g[2]
        if last is None or ev.line > (last[0] if isinstance(last, tuple) else last.line):
            g[2] = ev
        # an event of a folded group that comes before the kept ones (streams settle out of
        # order) is simply counted: the kept ones are the first to settle, the last is the last

    def saturated(self, limit: int, key: tuple, line: int, lazy) -> bool:
        """Count an event of group ``key`` without building it when the group keeps no more
        (``lazy()`` builds it if it turns out to be the group's last); False: build and append it."""
        g = self.full_group(limit, key)
        if g is None:
            return False
        self.count_into(g, line, lazy)
        return True

    def full_group(self, limit: int, key: tuple) -> list | None:
        """The group ``key`` when it keeps no more events (then it never does again: its kept count
        and the source's count of its format only grow), else None. For :meth:`count_into`."""
        if limit < 0:
            return None  # a tail keeps the last ones: each is built
        g = self.groups.get(key)
        if g is None or (g[1] < limit and not (limit == KEEP and key[0] == "k"
                                               and self.per_node.get(key[:-1], 0) >= KEEP)):
            return None
        return g

    def full_family(self, ev: Event, key: tuple) -> list | None:
        """The group an event of the fact group ``key`` (``group_key``'s ``"f"`` key, limit 1, ``ev`` its event or one
        with the same kind, template and fields the family reads) is counted into when that fact was never kept and
        its :func:`family` keeps no more facts: the family's group, once ``append`` made it (a family full stays full:
        ``families`` only grows, and the fact's own group is never made after). None otherwise. For :meth:`count_into`,
        as ``append`` counts it (the family's group keeps its first event only)."""
        if key[0] != "f" or key in self.groups:
            return None
        fam = family(ev, key)
        if self.families.get(fam, 0) < FACT_KEEP:
            return None
        return self.groups.get(fam)

    @staticmethod
    def count_into(g: list, line: int, lazy) -> None:
        """``saturated``'s count of one more event of the full group ``g`` (:meth:`full_group`)."""
        g[0] += 1
        if line < g[3]:
            g[3] = line
        if line > g[4]:
            g[4] = line
        last = g[2]
        if last is None or line > (last[0] if isinstance(last, tuple) else last.line):
            g[2] = (line, lazy)

    def tail(self, key: tuple) -> list | None:
        """The launches' tail of ``key`` (``group_key``'s, limit ``-TAIL``) once it has its first launch."""
        return self.tails.get(key)

    @staticmethod
    def count_launch(t: list, line: int, coll: str, op_count: str, text: str, build) -> bool:
        """``append`` of a collective launch to the tail ``t`` (:meth:`tail`) whose collective and
        opCount text are known without its event (``launch_of`` would give them): counted as
        ``append`` counts it; its event, ``build(line, text)``, is built only if it stays among the
        last ones (the tail keeps the last ``TAIL`` lines counted so, read in file order). False
        (nothing done) when this line comes before the tail's first launch or a launch counted so."""
        if line < t[5].line:
            return False
        pend = t[7]
        if pend is None:
            pend = t[7] = deque(maxlen=t[1])
        elif pend and line <= pend[-1][0]:
            return False
        t[0] += 1
        if line < t[3]:
            t[3] = line
        if line > t[4]:
            t[4] = line
        ops = t[6]
        o = ops.get(coll)
        if o is None:
            ops[coll] = [1, line, op_count, line, op_count]
        else:
            o[0] += 1
            if line < o[1]:
                o[1], o[2] = line, op_count
            if line >= o[3]:
                o[3], o[4] = line, op_count
        pend.append((line, text, build))
        return True

    @staticmethod
    def count_launches(t: list, items: list, build) -> None:
        """:meth:`count_launch` of each launch of ``items`` (``(line, collective, opCount, text)``, in file order,
        each after every launch the tail ``t`` counted before, none before its first launch: what
        ``count_launch`` would take of them all; the opCount and the collective may be ASCII bytes), counted at
        once: the tail's count and first and last lines, per collective its count and first and last lines and
        opCounts (read from its first and last launch among them), the last ``limit`` launches' lines and texts.
        :mod:`logdoc.fast.runs` keeps a communicator's launches so (``Lane.count_pending``)."""
        pend = t[7]
        if pend is None:
            pend = t[7] = deque(maxlen=t[1])
        t[0] += len(items)
        first = items[0][0]
        last = items[-1][0]
        if first < t[3]:
            t[3] = first
        if last > t[4]:
            t[4] = last
        ops = t[6]
        colls = list(map(_COLL, items))
        counts = Counter(colls)
        if len(counts) == 1:
            firsts = lasts = None
        else:
            lasts = dict(zip(colls, items))
            firsts = dict(zip(reversed(colls), reversed(items)))
        for coll, c in counts.items():
            f = items[0] if firsts is None else firsts[coll]
            z = items[-1] if lasts is None else lasts[coll]
            if type(coll) is not str:
                coll = coll.decode()
            o = ops.get(coll)
            if o is None:
                o = ops[coll] = [0, f[0], _text(f[2]), z[0], _text(z[2])]
            else:
                if f[0] < o[1]:
                    o[1], o[2] = f[0], _text(f[2])
                if z[0] >= o[3]:
                    o[3], o[4] = z[0], _text(z[2])
            o[0] += c
        kept = items[-t[1]:]
        pend.extend(zip(map(_LINE0, kept), map(_TEXT3, kept), repeat(build)))

    def extend(self, evs: Iterable[Event]) -> None:
        for ev in evs:
            self.append(ev)

    def events(self) -> list[Event]:
        out = list(self.kept)
        for g in self.groups.values():
            last = g[2]
            if isinstance(last, tuple):
                last = g[2] = last[1]()
            if last is not None:
                out.append(last)
        progress = []
        for key, t in self.tails.items():
            if t[7]:  # the launches counted without their events: built if they stay among the last
                t[2].extend(t[7])
                t[7] = None
                t[2].sort(key=_tail_line)
                del t[2][:-t[1]]
                t[2] = [e[2](e[0], e[1]) if type(e) is tuple else e for e in t[2]]
            else:
                t[2].sort(key=_line)
                del t[2][:-t[1]]
            kept, p = fold_launches(t[0], t[5], t[2], t[6], key[1])
            out.extend(kept)
            if p is not None:
                progress.append(p)
        out.sort(key=lambda e: e.line)
        if progress:  # after the launches of their last line (a stable sort keeps them behind)
            out.extend(progress)
            out.sort(key=lambda e: e.line)
        compact(out)
        return out

    def folded(self, file: str) -> list[dict[str, Any]]:
        """What was folded: one entry per group that lost events."""
        out = []
        for key, (count, kept, last, first_line, last_line) in self.groups.items():
            shown = kept + (1 if last is not None else 0)
            if count > shown:
                host, pid, rank, local_rank, node_rank = key[-1]
                out.append({"file": file, "kind": key[1], "template": key[2] if key[0] in ("b", "k") else None,
                            "host": host, "pid": pid, "rank": rank, "local_rank": local_rank,
                            "node_rank": node_rank, "count": count, "kept": shown,
                            "first_line": first_line, "last_line": last_line})
        for key, (count, limit, evs, first_line, last_line, first, _ops, _pend) in self.tails.items():
            shown = min(count, FULL + 1)
            if count > shown:
                host, pid, rank, local_rank, node_rank = key[-1]
                out.append({"file": file, "kind": key[1], "template": key[2], "host": host, "pid": pid, "rank": rank,
                            "local_rank": local_rank, "node_rank": node_rank, "count": count, "kept": shown,
                            "first_line": first_line, "last_line": last_line})
        return out


# ---------------------------------------------------------------------------------------------
# the digest file

def streams(events: list[Event]) -> list[dict[str, Any]]:
    """Per process stream: where it starts and stops, its last time, its events by level."""
    by: dict[tuple, dict[str, Any]] = {}
    for e in events:
        key = (e.file, e.host, e.pid, e.rank, e.local_rank, e.node_rank)
        s = by.get(key)
        if s is None:
            s = by[key] = {"file": e.file, "host": e.host, "pid": e.pid, "rank": e.rank, "local_rank": e.local_rank,
                           "node_rank": e.node_rank, "first_line": e.line, "last_line": e.end_line,
                           "last_time": e.time, "last_kind": e.kind, "levels": {}}
        s["first_line"] = min(s["first_line"], e.line)
        if e.end_line >= s["last_line"]:
            s["last_line"] = e.end_line
            s["last_kind"] = e.kind
        if e.time and (s["last_time"] is None or e.time > s["last_time"]):
            s["last_time"] = e.time
        s["levels"][e.level] = s["levels"].get(e.level, 0) + 1
    return list(by.values())


_OPTIONAL = ("rank", "local_rank", "node_rank", "host", "pid", "time", "template", "rank_source", "attempt")
_formats: dict[str, str] | None = None


def _catalog_formats() -> dict[str, str]:
    global _formats
    if _formats is None:
        from .templates import nccl_formats

        _formats = {tid: fmt for tid, (_, fmt) in nccl_formats().items()}
    return _formats


def pack(e: Event, files: dict[str, int]) -> dict[str, Any]:
    """An event as a digest writes it (``unpack`` gives it back equal): ``files`` maps file names
    to their index in the digest's ``file_names``."""
    out: dict[str, Any] = {"kind": e.kind, "level": e.level, "line": e.line}
    fi = files.get(e.file)
    if fi is None:
        fi = files[e.file] = len(files)
    out["f"] = fi
    if e.end_line != e.line:
        out["end_line"] = e.end_line
    for k in _OPTIONAL:
        v = getattr(e, k)
        if v is not None:
            out[k] = v
    if e.folds:
        out["folds"] = e.folds  # the unread facts it carries (logdoc/facts.py)
    fields = all_fields(e)   # the header's values too (tid, dev), which the event's head holds
    if fields:
        msg, fmt = fields.get("message"), fields.get("format")
        packed = None
        if isinstance(msg, str) and msg and e.text.endswith(msg):
            packed = dict(fields, message=None)
            out["m"] = len(e.text) - len(msg)           # the message is the text from there on
        if isinstance(fmt, str) and e.template is not None and _catalog_formats().get(e.template) == fmt:
            packed = dict(packed or fields, format=None)
            out["F"] = 1                                # the format is the template's catalog format
        out["fields"] = packed if packed is not None else fields
    out["text"] = e.text
    return out


_EVENT_KEYS = frozenset(EVENT_FIELDS)


def unpack(d: dict[str, Any], file_names: list[str]) -> Event:
    """The event of a packed dict (or of a full one, as ``logdoc.digest/1`` wrote them), compact
    as it is built (what :func:`compact` shares is shared: host, time, file, field names and short
    values), so a job of many digests needs no second pass over its events."""
    intern = _intern
    known = {k: v for k, v in d.items() if k in _EVENT_KEYS}  # (Event.from_dict, without copying ``d`` first)
    if "f" in d:
        known["file"] = file_names[d["f"]]
    elif type(known.get("file")) is str:
        known["file"] = intern(known["file"])
    f = known.get("fields")
    if f or "m" in d or "F" in d:
        fields = {}
        if f:
            ints = _INTS
            for k, v in f.items():  # _shared(v), its two common cases first (a short text, a number)
                t = type(v)
                if t is str:
                    if len(v) <= _INTERN_MAX:
                        v = intern(v)
                elif t is int:
                    got = ints.get(v)
                    v = got if got is not None else _int(v)
                else:
                    v = _shared(v)
                fields[intern(k) if type(k) is str else k] = v
        if "m" in d:
            fields["message"] = _shared(known["text"][d["m"]:])
        if "F" in d:
            fields["format"] = _catalog_formats()[known.get("template")]
        known["fields"] = fields
    ints = _INTS
    for k in ("line", "end_line", "rank", "pid", "local_rank", "node_rank"):
        v = known.get(k)
        if type(v) is int:
            got = ints.get(v)
            known[k] = got if got is not None else _int(v)
    for k in ("kind", "level", "template", "host", "time", "rank_source", "process"):
        v = known.get(k)
        if type(v) is str:
            known[k] = intern(v)
    return Event(**known)


_intern = __import__("sys").intern


def fold_summary(folded: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What was folded, one entry per file, kind and format (the groups of all its streams added
    up: ``count`` lines read, ``kept`` of them kept, in ``streams`` streams, from ``first_line`` to
    ``last_line``): a digest stays small however many streams and groups fold."""
    out: dict[tuple, dict[str, Any]] = {}
    for g in folded:
        key = (g.get("file"), g.get("kind"), g.get("template"))
        o = out.get(key)
        if o is None:
            out[key] = {"file": key[0], "kind": key[1], "template": key[2], "count": g.get("count", 0),
                        "kept": g.get("kept", 0), "streams": g.get("streams", 1), "first_line": g.get("first_line"),
                        "last_line": g.get("last_line")}
            continue
        o["count"] += g.get("count", 0)
        o["kept"] += g.get("kept", 0)
        o["streams"] += g.get("streams", 1)
        fl, ll = g.get("first_line"), g.get("last_line")
        if fl is not None and (o["first_line"] is None or fl < o["first_line"]):
            o["first_line"] = fl
        if ll is not None and (o["last_line"] is None or ll > o["last_line"]):
            o["last_line"] = ll
    return list(out.values())


def _by_kind(packed: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The packed events grouped by kind, format, process and line, each with its place among the
    events of its line (``s``, written when not 0): sorting them by file, line and place gives the
    events back in their order. None when they are not in that order to begin with."""
    prev = None
    same = 0
    for d in packed:
        key = (d["f"], d["line"])
        if prev is not None and key < prev:
            return None
        same = same + 1 if key == prev else 0
        if same:
            d["s"] = same
        prev = key
    return sorted(packed, key=lambda d: (d["kind"], d.get("template") or "", d.get("host") or "", d.get("pid") or 0,
                                         d["f"], d["line"], d.get("s", 0)))


def to_dict(result, folded: list[dict[str, Any]] | None = None, inputs: list[str] | None = None) -> dict[str, Any]:
    """The digest of a :class:`~logdoc.results.ParseResult` (made with ``reduce=True``)."""
    from . import __version__

    files: dict[str, int] = {}
    events = [pack(e, files) for e in result.events]
    names = sorted(files, key=files.__getitem__)
    order = _by_kind(events)
    if order is not None:
        events = order
    return {
        "schema": SCHEMA,
        "logdoc": __version__,
        "host": os.uname().nodename if hasattr(os, "uname") else None,
        "inputs": list(inputs or []),
        "files": list(result.files),
        "stats": result.stats.to_dict(),
        "streams": streams(result.events),
        "folded": fold_summary(folded if folded is not None else getattr(result, "folded", []) or []),
        "unrecognized": [{"file": u.file, "line": u.line, "text": u.text, **({"loose": True} if u.loose else {}),
                          **_who(u.env)} for u in result.unrecognized],
        "file_names": names,
        # events grouped by kind and format (they compress twice as well), "s" their place among
        # the events of one line; reading puts them back in file order (load)
        "order": "kind" if order is not None else "file",
        "events": events,
    }


def write(result, path: str, inputs: list[str] | None = None) -> int:
    """Write the digest of ``result`` to ``path`` (``-`` for standard output); returns its size."""
    data = json.dumps(to_dict(result, inputs=inputs), ensure_ascii=False, separators=(",", ":"), default=str)
    if path == "-":
        import sys

        sys.stdout.write(data + "\n")
        return len(data) + 1
    blob = (data + "\n").encode("utf-8")
    if path.endswith(".gz"):
        import gzip

        blob = gzip.compress(blob, compresslevel=9, mtime=0)  # 8% smaller than 6 on a digest, in ~0.1 s
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(blob)
    os.replace(tmp, path)
    return len(blob)


_MARK = lazy_re(rb'^\s*\{\s*"schema"\s*:\s*"logdoc\.digest/')


def is_digest(head: bytes) -> bool:
    """Whether the first bytes of a file are those of a digest (the schema marker comes first;
    a gzip-compressed digest is recognised inside)."""
    if head[:2] == b"\x1f\x8b":
        import zlib

        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 256)
        except zlib.error:
            return False
    return _MARK.match(head) is not None


class DigestError(ValueError):
    pass


def load(data: bytes | str, name: str = "<digest>") -> dict[str, Any]:
    """A digest's content, its events unpacked. The cyclic collector is off meanwhile: JSON and
    events hold no cycles, and a job of a thousand digests would have it go through the events
    of all the digests read before, again and again."""
    from .collector import collector_off

    with collector_off():
        return _load(data, name)


def _load(data: bytes | str, name: str) -> dict[str, Any]:
    if isinstance(data, bytes) and data[:2] == b"\x1f\x8b":
        import gzip

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise DigestError(f"{name}: not a readable digest ({exc})") from None
    try:
        d = json.loads(data)
    except ValueError as exc:
        raise DigestError(f"{name}: not a readable digest ({exc})") from None
    if not isinstance(d, dict) or not str(d.get("schema", "")).startswith("logdoc.digest/"):
        raise DigestError(f"{name}: not a logdoc digest")
    if d["schema"] not in READS:
        raise DigestError(f"{name}: digest schema {d['schema']} is not {SCHEMA}; use the logdoc that wrote it")
    file_names = [_intern(x) if type(x) is str else x for x in d.get("file_names") or []]
    try:
        packed = d.get("events") or ()
        if d.get("order") == "kind" and d["schema"] == SCHEMA:
            packed = sorted(packed, key=lambda e: (e["f"], e["line"], e.get("s", 0)))
        d["events"] = [unpack(e, file_names) for e in packed]
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise DigestError(f"{name}: not a readable digest (an event: {exc!r})") from None
    return d


def _who(env) -> dict[str, Any]:
    if env is None:
        return {}
    who = {k: getattr(env, k) for k in WHO if getattr(env, k) is not None}
    return {"who": who} if who else {}


def _envelope(who: Any) -> Envelope | None:
    """The envelope a digest kept for a line not understood; what is not of its type is left out."""
    if not isinstance(who, dict):
        return None
    kept = {k: who[k] for k in WHO if isinstance(who.get(k), str if k in ("host", "time") else int)
            and not isinstance(who.get(k), bool)}
    return Envelope(**kept) if kept else None


def add_to(d: dict[str, Any], name: str, stats, events: list[Event], unrecognized: list, files: list[str],
           max_unrecognized: int) -> None:
    """Merge a loaded digest into the parts of a parse result."""
    from .results import Unread, Unrecognized

    s = d.get("stats") or {}
    for k in ("files", "lines_read", "irrelevant", "relevant", "understood", "not_understood", "events", "cut_lines"):
        setattr(stats, k, getattr(stats, k) + int(s.get(k) or 0))
    stats.skipped_files.extend((x.get("file"), x.get("reason")) for x in s.get("skipped_files") or ())
    stats.warnings.extend(s.get("warnings") or ())
    evs = d.get("events") or ()
    events.extend(evs)  # Event objects, compact: load() unpacked them (unpack)
    for u in d.get("unrecognized") or ():
        got = Unrecognized(u["file"], u["line"], u["text"], bool(u.get("loose")), _envelope(u.get("who")))
        if got.loose:
            if isinstance(unrecognized, Unread):
                unrecognized.append(got)  # (settle_unread keeps the first of each text)
        elif isinstance(unrecognized, Unread):
            unrecognized.add_marked(got)
        elif len(unrecognized) < max_unrecognized:
            unrecognized.append(got)
    files.extend(d.get("files") or ())
