"""The rule set: rules indexed by kind, by kind prefix and by catalog template id; :meth:`RuleSet.match`
runs them over a job's events, disabling for the run a user rule whose pattern times out.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..events import Event
from ..cuttail import complete, complete_format
from ..winsock import as_posix
from .patterns import MATCH_TIMEOUT, RuleTimeout
from .rule import Match, Rule, _Job
from .schema import Problem, id_key

class RuleSet:
    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}  # active and retired, by id
        self.problems: list[Problem] = []  # load-time problems
        self.run_problems: list[Problem] = []  # problems of the last match() call (timeouts)
        self._index: dict[str, list[Rule]] | None = None
        self._wild: list[tuple[str, Rule]] = []
        self._by_template: dict[str, list[Rule]] = {}
        self.annotations = None  # logdoc.annotations.Annotations, when the knowledge base has them
        self.differentials = None  # logdoc.differential.Differentials, likewise
        self._resolver = None

    def resolver(self):
        """The catalog-id resolver over this knowledge base's annotations."""
        if self._resolver is None:
            from ..resolve import Resolver

            self._resolver = Resolver(self.annotations)
        return self._resolver

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_resolver"] = None  # memo of one run's messages: not worth caching
        return state

    # --- access
    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self.rules.values(), key=lambda r: id_key(r.id)))

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self.rules

    def get(self, rule_id: str) -> Rule | None:
        return self.rules.get(rule_id)

    def active(self) -> list[Rule]:
        return [r for r in self if not r.retired]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    def add(self, rule: Rule) -> None:
        self.rules[rule.id] = rule
        self._index = None

    # --- matching
    def _build_index(self) -> None:
        self._index = {}
        self._for: dict[str, list[Rule]] = {}
        self._wild = []
        self._by_template = {}
        for rule in self.active():
            if rule.templates and not rule.kinds:  # matched by template id, whatever its kind
                for tid in rule.templates:
                    self._by_template.setdefault(tid, []).append(rule)
                continue
            for kind in rule.kinds:
                if kind.endswith("*"):
                    self._wild.append((kind[:-1], rule))
                else:
                    self._index.setdefault(kind, []).append(rule)
        for rules in self._index.values():
            rules.sort(key=lambda r: (-r.priority, id_key(r.id)))

    def rules_for(self, kind: str) -> list[Rule]:
        if self._index is None:
            self._build_index()
        assert self._index is not None
        got = self._for.get(kind)  # once per kind: a job of many ranks asks for every event
        if got is not None:
            return got
        rules = self._index.get(kind, [])
        if self._wild:
            extra = [r for p, r in self._wild if kind.startswith(p) and all(r is not x for x in rules)]  # (not ==: reads data)
            if extra:
                rules = sorted(rules + extra, key=lambda r: (-r.priority, id_key(r.id)))
        self._for[kind] = rules
        return rules

    def match(self, events: Iterable[Event]) -> list[Match]:
        """Every (rule, event) that matches, in event order, higher priority first per event."""
        evs = list(events)
        job = _Job(evs, self.resolver())
        disabled: set[str] = set()
        self.run_problems = []
        out: list[Match] = []
        if self._index is None:
            self._build_index()
        # the rules to try, prepared once per kind (and per kind and catalog ids): each with the
        # texts one of which its pattern needs (patterns.py), tested here before the rule is called
        by_ids: dict[tuple, tuple] = {}  # (kind, catalog ids) -> prepared rules
        by_kind: dict[str, tuple] = {}
        with_ids = bool(self._by_template)
        for ev in evs:
            if with_ids and (ev.template or ev.level in ("WARN", "ERROR", "FATAL")):
                key = (ev.kind, job.ids(ev))
                prep = by_ids.get(key)
                if prep is None:
                    rules = self.rules_for(ev.kind)
                    extra = {r.id: r for tid in key[1] for r in self._by_template.get(tid, ())}
                    if extra:
                        rules = sorted([*rules, *extra.values()], key=lambda r: (-r.priority, id_key(r.id)))
                    prep = by_ids[key] = _prepared(rules)
            else:
                prep = by_kind.get(ev.kind)
                if prep is None:
                    prep = by_kind[ev.kind] = _prepared(self.rules_for(ev.kind))
            if not prep:
                continue
            text = ev.text or ""
            # the text with a phrase a viewer cut written out (logdoc/cuttail.py), or with Windows'
            # socket errors written as Linux's (logdoc/winsock.py): a rule that does not match the text
            # is tried on it too. A line of the second reading (logdoc/reread.py, ``bare``: its header taken for lost)
            # counts as cut only inside a word: a progress line's own dots after a word (simpleP2P's
            # `Disabling peer access...`) would read as a cut inside cudaErrorPeerAccessUnsupported's text
            whole = complete(text, ev.fields.get("bare") is True)
            if whole is None:
                whole = as_posix(text)
            if whole is None and ev.kind == "nccl.warn" and ev.fields.get("cut"):
                f = ev.fields
                whole = complete_format(text, f.get("message") or "", f.get("format") or "")
            low = whole_low = None
            for rule, needs, fold in prep:
                if disabled and rule.id in disabled:
                    continue
                ok = True
                if needs is not None:
                    # the pattern's own first test (patterns.py), without the calls: none of the texts
                    # every match holds is in the text, so the rule does not match
                    if fold:
                        if low is None:
                            low = text.lower() if text.isascii() else False
                        hay = low
                    else:
                        hay = text
                    if hay is not False:
                        for lit in needs:
                            if lit in hay:
                                break
                        else:
                            ok = False
                    if not ok and whole is None:
                        continue
                try:
                    m = rule.match_event(ev, job) if ok else None
                    if m is None and whole is not None and (rule._pattern is not None or rule._fields is not None):
                        if fold and whole_low is None:
                            whole_low = whole.lower() if whole.isascii() else False
                        if _may_match(needs, whole_low if fold else whole):
                            m = rule.match_event(ev, job, whole)
                except RuleTimeout:
                    disabled.add(rule.id)
                    self.run_problems.append(Problem(
                        rule.file, rule.line, rule.id,
                        f"pattern took longer than {MATCH_TIMEOUT}s on {ev.file}:{ev.line}; "
                        f"rule disabled for this run"))
                    continue
                if m is not None:
                    out.append(m)
        return out


def _may_match(needs, hay) -> bool:
    """The pattern's own first test (patterns.py), without the calls: False when none of the texts
    every match holds is in ``hay`` (the text, lower-cased for a pattern that ignores case; False: a
    text that is not ASCII, which the test cannot rule out), so the rule does not match."""
    if needs is None or hay is False:
        return True
    for lit in needs:
        if lit in hay:
            return True
    return False


def _prepared(rules: list[Rule]) -> tuple:
    """``(rule, needs, fold)`` per rule: what :meth:`RuleSet.match` tests before calling the rule."""
    out = []
    for rule in rules:
        pat = rule._pattern
        needs = pat.needs if pat is not None else None
        out.append((rule, needs, bool(pat.fold) if pat is not None else False))
    return tuple(out)
