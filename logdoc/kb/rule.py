"""One rule and how it matches one event: :class:`Rule`, its ``with``/``without`` clauses, the
events of one run indexed for those look-ups (:class:`_Job`), and :class:`Match`, a rule's hit with
the values its texts are rendered from.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..cuttail import complete
from ..events import HEAD_KEYS, Event, all_fields
from .conditions import _Cond
from .patterns import _Pattern
from .render import _lookup, _present, render_template, render_title, template_names
from .schema import BUILTIN_ID, DEFAULT_CONFIDENCE, FAMILIES, RULE_KEYS_OPTIONAL, RULE_KEYS_REQUIRED, TOMBSTONE_KEYS

@dataclass
class _Clause:
    kinds: tuple[str, ...]
    pattern: _Pattern | None
    fields: _Cond | None
    scope: str
    alias: str | None
    optional: bool = False

    def accepts(self, ev: Event) -> tuple[bool, dict[str, str], dict[str, Any]]:
        groups: dict[str, str] = {}
        if self.pattern is not None:
            m = self.pattern.search(ev.text or "")
            if m is None:
                return False, {}, {}
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
        captures: dict[str, Any] = {}
        if self.fields is not None and not self.fields.test(_values(ev, groups), captures):
            return False, {}, {}
        return True, groups, captures


@dataclass
class Rule:
    id: str
    data: dict[str, Any]  # the rule as written (normalised: kind is a list)
    file: str = "<memory>"
    line: int = 0
    origin: str = "builtin"  # "builtin" or "user"
    retired: str | None = None
    _kinds: tuple[str, ...] = ()
    _pattern: _Pattern | None = None
    _fields: _Cond | None = None
    _with: tuple[_Clause, ...] = ()
    _without: tuple[_Clause, ...] = ()
    _templates: frozenset[str] = frozenset()  # match.template: catalog ids (any id of their group matches)
    # placeholders of a rule matched by template alone that only its messages' fields can fill
    # (checked against the catalog when the annotations are loaded: logdoc.knowledge)
    _template_placeholders: frozenset[str] = frozenset()

    # --- plain accessors
    def __getattr__(self, name: str) -> Any:  # category, severity, role, title, fix, ...; ``data`` once cached
        d = self.__dict__
        if name == "data" and "_data_blob" in d:  # the cached copy's (__getstate__): loaded on first use
            return d.setdefault("data", pickle.loads(d.pop("_data_blob")))
        if ("data" in d or "_data_blob" in d) and name in RULE_KEYS_REQUIRED + RULE_KEYS_OPTIONAL + TOMBSTONE_KEYS:
            return self.data.get(name)
        raise AttributeError(name)

    def __getstate__(self) -> dict[str, Any]:
        # the knowledge base's cached copy (logdoc.rulecache): the rule as written (a third of the copy's load) pickled
        # apart, loaded when read (a run reads it of the rules it reports), its priority beside it (every run sorts by it)
        state = dict(self.__dict__, _priority=self.priority)
        if "data" in state:
            state["_data_blob"] = pickle.dumps(state.pop("data"), pickle.HIGHEST_PROTOCOL)
        return state

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._kinds

    @property
    def priority(self) -> int:
        p = self.__dict__.get("_priority")
        return int(self.data.get("priority", 0) or 0) if p is None else p

    @property
    def confidence(self) -> float:
        c = self.data.get("confidence")
        return float(c) if c is not None else DEFAULT_CONFIDENCE.get(self.data.get("role", ""), 0.5)

    @property
    def family(self) -> str | None:
        return FAMILIES.get(self.id[2]) if BUILTIN_ID.match(self.id) else None

    @property
    def names_words(self) -> bool:
        """Whether the rule names its message by its words (a pattern, or catalog templates), not by its kind alone."""
        return self._pattern is not None or bool(self._templates)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    # --- matching
    @property
    def templates(self) -> frozenset[str]:
        return self._templates

    def match_event(self, ev: Event, job: "_Job", text: str | None = None) -> "Match | None":
        """The rule's match on ``ev``, its pattern searched in ``text`` when given (the event's text
        with a cut tail completed, :mod:`logdoc.cuttail`), else in the event's text."""
        groups: dict[str, str] = {}
        span = None
        if self._templates and not (self._templates & job.ids(ev)):
            return None
        if self._pattern is not None:
            m = self._pattern.search(ev.text or "" if text is None else text)
            if m is None:
                return None
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            span = m.span()
        captures: dict[str, Any] = {}
        if self._fields is not None and not self._fields.test(_values(ev, groups, text is not None), captures):
            return None
        related: dict[str, Event] = {}
        extra_groups: dict[str, str] = {}
        for i, clause in enumerate(self._with):
            found = job.find(clause, ev)
            if found is None:
                if clause.optional:
                    continue
                return None
            other, ogroups, ocaps = found
            related[clause.alias or f"with{i}"] = other
            for k, v in ogroups.items():
                extra_groups.setdefault(k, v)
                extra_groups.setdefault(f"{clause.alias or f'with{i}'}.{k}", v)
            for k, v in ocaps.items():
                captures.setdefault(k, v)
        for clause in self._without:
            if job.find(clause, ev) is not None:
                return None
        # an empty mapping is one shared dict (a rule that fires on every rank makes thousands of
        # matches; nothing writes into a match's mappings once it is made), and so are groups and a
        # span equal to an earlier match's of the job
        if groups or span is not None:
            groups, span = job.held(groups, span)
        return Match(rule=self, event=ev, groups=groups or _EMPTY, span=span, related=related or _EMPTY,
                     captures=captures or _EMPTY, extra_groups=extra_groups or _EMPTY)


_EMPTY: dict = {}  # read only: the mappings of a match that has none


_VALUE_ATTRS = ("kind", "level", "file", "line", "rank", "local_rank", "node_rank", "host", "pid", "time",
                "template", "text")
_VALUE_ATTR_SET = frozenset(_VALUE_ATTRS)


class _Values(Mapping):
    """What ``fields`` conditions see: the event's fields, then its attributes, then named groups
    (a name in several: the first of these). A view, not a copy: a condition names one or two values
    of an event, and a job's events are many."""

    __slots__ = ("ev", "groups")

    def __init__(self, ev: Event, groups: Mapping[str, str]) -> None:
        self.ev = ev
        self.groups = groups

    def __getitem__(self, name: str) -> Any:
        f = self.ev.fields
        if f and name in f:
            return f[name]
        if name in _VALUE_ATTR_SET:
            return getattr(self.ev, name, None)
        a = all_fields(self.ev) if name in HEAD_KEYS else None  # (tid, dev: held by an NCCL line's head)
        return a[name] if a and name in a else self.groups[name]

    def __contains__(self, name: object) -> bool:
        f = self.ev.fields
        return (bool(f and name in f) or name in _VALUE_ATTR_SET or name in self.groups
                or name in (all_fields(self.ev) or ()))

    def _dict(self) -> dict[str, Any]:
        vals: dict[str, Any] = dict(self.groups)
        for attr in _VALUE_ATTRS:
            vals[attr] = getattr(self.ev, attr, None)
        vals.update(all_fields(self.ev) or {})
        return vals

    def __iter__(self):
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


class _CompletedValues(_Values):
    """:class:`_Values` of an event whose text was cut inside a listed phrase: a field that holds the
    cut end of the text is read with the phrase written out (:func:`logdoc.cuttail.complete`), as the
    pattern reads the text (``errno_text: Cannot al`` is ``Cannot allocate memory``)."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        v = super().__getitem__(name)
        if isinstance(v, str) and v.strip() and (self.ev.text or "").rstrip().endswith(v.rstrip()):
            return complete(v) or v
        return v


def _values(ev: Event, groups: Mapping[str, str], completed: bool = False) -> Mapping[str, Any]:
    """What ``fields`` conditions see (:class:`_Values`; :class:`_CompletedValues` for a cut text)."""
    return _CompletedValues(ev, groups) if completed else _Values(ev, groups)


def _same_process(a: Event, b: Event) -> bool:
    if a.rank is not None and b.rank is not None:
        return a.rank == b.rank and (a.attempt == b.attempt)
    if a.host and b.host and a.pid is not None and b.pid is not None:
        return a.host == b.host and a.pid == b.pid
    return a.file == b.file


def _in_scope(scope: str, ev: Event, other: Event) -> bool:
    if scope == "job":
        return True
    if scope == "file":
        return ev.file == other.file
    if scope == "host":
        if ev.host and other.host:
            return ev.host == other.host
        return ev.file == other.file
    return _same_process(ev, other)


class _ScopeIndex:
    """The events of one kind, bucketed by what :func:`_in_scope` compares, so that a ``with`` /
    ``without`` look-up reads the events that can be in the clause's scope, not every event of the
    kind (at 5,000 ranks a clause of a rule that fires on every rank compared 10,000 events each
    time: 100 million scope tests). :meth:`candidates` gives a superset of the events in scope, in
    the kind's order (``find``'s tie-break); ``_in_scope`` still decides."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        self._buckets: dict[str, dict] | None = None

    def _build(self) -> dict[str, dict]:
        rank: dict = {}
        hp: dict = {}
        file: dict = {}
        host: dict = {}
        for i, e in enumerate(self.events):
            if e.rank is not None:
                rank.setdefault((e.rank, e.attempt), []).append(i)
            if e.host and e.pid is not None:
                hp.setdefault((e.host, e.pid), []).append(i)
            if e.host:
                host.setdefault(e.host, []).append(i)
            file.setdefault(e.file, []).append(i)
        self._buckets = {"rank": rank, "hp": hp, "file": file, "host": host}
        return self._buckets

    def candidates(self, scope: str, ev: Event, small: int = 64) -> Sequence[Event]:
        if scope == "job" or len(self.events) < small:
            return self.events
        b = self._buckets or self._build()
        if scope == "file":
            return [self.events[i] for i in b["file"].get(ev.file, ())]
        groups = [b["file"].get(ev.file, ())]
        if scope == "host":
            if ev.host:
                groups.append(b["host"].get(ev.host, ()))
        else:  # the same process (_same_process): the same rank, or host and pid, or file
            if ev.rank is not None:
                groups.append(b["rank"].get((ev.rank, ev.attempt), ()))
            if ev.host and ev.pid is not None:
                groups.append(b["hp"].get((ev.host, ev.pid), ()))
        if len(groups) == 1 or not any(groups[1:]):
            return [self.events[i] for i in groups[0]]
        return [self.events[i] for i in sorted({i for g in groups for i in g})]


_HELD_MAX = 1 << 12  # matches' groups and spans held by value per job (beyond: started again)


class _Job:
    """All the events of one run, indexed by kind, for ``with`` / ``without`` look-ups."""

    def __init__(self, events: Sequence[Event], resolver: Any = None) -> None:
        self.events = events
        self._by_kind: dict[str, list[Event]] | None = None
        self._scoped: dict[str, _ScopeIndex] = {}
        self.resolver = resolver
        self._ids: dict[int, frozenset[str]] = {}
        self._accepted: dict[tuple[int, str], list] = {}
        # the groups and spans of the matches made, by value: a rule that fires on every rank of a large
        # job captures the same values at the same place thousands of times (read only, as _EMPTY)
        self._held: dict = {}

    def held(self, groups: dict, span: tuple | None) -> tuple[dict, tuple | None]:
        """``groups`` and ``span`` as the objects of an earlier match of the job equal to them."""
        held = self._held
        if len(held) >= _HELD_MAX:
            held.clear()
        if groups:
            groups = held.setdefault(tuple(groups.items()), groups)
        if span is not None:
            span = held.setdefault(span, span)
        return groups, span

    def ids(self, ev: Event) -> frozenset[str]:
        """The event's catalog template id and the other ids of its annotation group."""
        if self.resolver is not None:
            got = self.resolver.quick(ev)  # the template decides: the same ids for every event of it
            if got is not None:
                return got
        got = self._ids.get(id(ev))
        if got is None:
            if self.resolver is not None:
                got = self.resolver.ids(ev)
            else:
                got = frozenset((ev.template,)) if ev.template else frozenset()
            self._ids[id(ev)] = got
        return got

    def by_kind(self, kind: str) -> list[Event]:
        if self._by_kind is None:
            self._by_kind = {}
            for ev in self.events:
                self._by_kind.setdefault(ev.kind, []).append(ev)
        if kind.endswith("*"):
            prefix = kind[:-1]
            return [e for k, evs in self._by_kind.items() if k.startswith(prefix) for e in evs]
        return self._by_kind.get(kind, [])

    def scoped(self, kind: str) -> "_ScopeIndex":
        got = self._scoped.get(kind)
        if got is None:
            got = self._scoped[kind] = _ScopeIndex(self.by_kind(kind))
        return got

    def accepted(self, clause: _Clause, kind: str) -> list:
        """``(event, groups, captures)`` for every event of ``kind`` that ``clause`` accepts, in the
        kind's order. A clause's test reads the other event only, so a job-wide clause is tested once
        per event of the run, not once per event for each event its rule fires on (a rule firing on
        every connect retry of a job compared each retry with every exception: quadratic)."""
        key = (id(clause), kind)
        got = self._accepted.get(key)
        if got is None:
            got = self._accepted[key] = [(other, *res[1:]) for other in self.by_kind(kind)
                                         if (res := clause.accepts(other))[0]]
        return got

    def find(self, clause: _Clause, ev: Event):
        best = None
        best_key = None
        for kind in clause.kinds:
            if clause.scope == "job":
                pool = self.accepted(clause, kind)
            else:
                pool = [(other, *res[1:]) for other in self.scoped(kind).candidates(clause.scope, ev)
                        if other is not ev and _in_scope(clause.scope, ev, other)
                        and (res := clause.accepts(other))[0]]
            for other, groups, caps in pool:
                if other is ev:
                    continue
                key = (0 if other.file == ev.file else 1, abs(other.line - ev.line))
                if best_key is None or key < best_key:
                    best, best_key = (other, groups, caps), key
        return best


@dataclass(slots=True)  # a rule that fires on every rank of a large job makes as many
class Match:
    rule: Rule
    event: Event
    groups: dict[str, str] = field(default_factory=dict)
    span: tuple[int, int] | None = None
    related: dict[str, Event] = field(default_factory=dict)
    captures: dict[str, Any] = field(default_factory=dict)
    extra_groups: dict[str, str] = field(default_factory=dict)

    @property
    def matched_text(self) -> str | None:
        """The text the rule's pattern matched (read from the event by the span, not held per match)."""
        span = self.span
        return None if span is None else (self.event.text or "")[span[0]:span[1]]

    @property
    def events(self) -> list[Event]:
        return [self.event, *self.related.values()]

    def values(self) -> dict[str, Any]:
        """Everything a placeholder can name, by one precedence (highest first): the rule pattern's
        named groups (a group the pattern defines but that did not take part in the match is absent,
        never another value of that name), the matched event's own fields, the event's attributes
        from its log line and envelope (also under ``log.``: ``{log.host}``, ``{log.pid}``), the
        ``any:`` captures, then the named groups of ``with`` events; ``with`` events by alias."""
        ev = self.event
        vals: dict[str, Any] = {}
        for alias, other in self.related.items():
            vals[alias] = _event_values(other)
        vals.update(self.extra_groups)
        vals.update(self.captures)
        vals.update(_event_values(ev))
        # the matched text; a rule without a pattern (a template or fields alone) matched the whole message
        vals["match"] = self.matched_text if self.matched_text is not None else (
            (ev.fields or {}).get("message") or ev.text)
        pattern = self.rule._pattern
        for name in (pattern.groups if pattern is not None else ()):
            vals[name] = None
        vals.update(self.groups)
        return vals

    def render(self) -> dict[str, Any]:
        """The rule's texts with placeholders filled, plus the evidence, as a JSON-ready dict."""
        vals = self.values()
        r = self.rule
        out: dict[str, Any] = {
            "id": r.id,
            "category": r.category,
            "severity": r.severity,
            "role": r.role,
            "title": render_title(r.title or "", vals),
            "confidence": r.confidence,
            "explanation": render_template(r.explanation or "", vals).strip(),
            "fix": [render_template(s, vals) for s in (r.fix or [])],
            "confirm": [render_template(s, vals) for s in (r.confirm or [])],
            "not_when": [render_template(s, vals) for s in (r.not_when or [])],
            "docs": [dict(d) for d in (r.docs or [])],
            "evidence": [self._evidence(self.event, self.span)]
            + [self._evidence(e, None) for e in self.related.values()],
        }
        return out

    def render_title(self, values: Mapping[str, Any] | None = None) -> str:
        return render_title(self.rule.title or "", values if values is not None else self.values())

    @staticmethod
    def _evidence(ev: Event, span: tuple[int, int] | None) -> dict[str, Any]:
        d = {"file": ev.file, "line": ev.line, "rank": ev.rank, "host": ev.host, "kind": ev.kind,
             "text": ev.text}
        if span is not None:
            d["highlight"] = [span[0], span[1]]
        return d


_WHO = ("rank", "ranks", "host", "hosts")


def card_title(matches: Sequence["Match"]) -> str:
    """The title of a card that stands for several matches of one rule: the first match's values,
    except that the ranks and hosts it names are those of every match (``Ranks 0, 1 aborted``)."""
    first = matches[0]
    vals = first.values()
    names = [n for n in template_names(first.rule.title or "") if n.split(".")[-1] in _WHO]
    if len(matches) > 1 and names:
        # one match's values at a time (a rule that fires on every rank of a large job has thousands of
        # matches, each with a dict of every value); the values seen in order, found by a set
        found: dict[str, tuple[list, set]] = {name: ([], set()) for name in names}
        for m in matches:
            v = vals if m is first else m.values()
            for name in names:
                seen, known = found[name]
                got = _lookup(v, name)
                for x in (got if isinstance(got, (list, tuple)) else [got]):
                    if not _present(x):
                        continue
                    try:
                        if x in known:
                            continue
                        known.add(x)
                    except TypeError:  # an unhashable value: compared with the others
                        if x in seen:
                            continue
                    seen.append(x)
        for name in names:
            seen = found[name][0]
            if len(seen) > 1:
                try:
                    seen.sort()
                except TypeError:
                    pass
                vals[name] = seen
    return first.render_title(vals)


_ATTRS = ("kind", "level", "file", "line", "end_line", "rank", "local_rank", "node_rank", "host", "pid", "time",
          "template", "text")


def _event_values(ev: Event) -> dict[str, Any]:
    """An event's placeholders: its own fields before the attributes its log line gave it."""
    attrs: dict[str, Any] = {a: getattr(ev, a, None) for a in _ATTRS}
    attrs["where"] = f"{ev.file}:{ev.line}"
    vals: dict[str, Any] = dict(attrs)
    for k, v in (all_fields(ev) or {}).items():
        if v is not None or k not in vals:
            vals[k] = v
    vals["log"] = attrs
    return vals
