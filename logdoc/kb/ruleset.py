"""The rule set: rules indexed by kind, by kind prefix and by catalog template id; :meth:`RuleSet.match`
runs them over a job's events, disabling for the run a user rule whose pattern times out.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..events import Aggregates, Event
from .patterns import MATCH_TIMEOUT, RuleTimeout
from .rule import Match, Rule, _Job
from .schema import Problem

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
        return iter(sorted(self.rules.values(), key=lambda r: r.id))

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
            rules.sort(key=lambda r: (-r.priority, r.id))

    def rules_for(self, kind: str) -> list[Rule]:
        if self._index is None:
            self._build_index()
        assert self._index is not None
        got = self._for.get(kind)  # once per kind: a job of many ranks asks for every event
        if got is not None:
            return got
        rules = self._index.get(kind, [])
        if self._wild:
            extra = [r for p, r in self._wild if kind.startswith(p) and r not in rules]
            if extra:
                rules = sorted(rules + extra, key=lambda r: (-r.priority, r.id))
        self._for[kind] = rules
        return rules

    def match(self, events: Iterable[Event]) -> list[Match]:
        """Every (rule, event) that matches, in event order, higher priority first per event.

        Events alike across ranks (one content key, :class:`logdoc.events.Aggregates`) are matched
        once by the rules whose verdict depends only on the content (:attr:`Rule.content_only`): a
        rule that one member does not match is not tried on the others (a rule that matches is tried on
        each: its groups and span are the member's own), so the regex and condition work grows with
        the distinct events, not with ranks x events (``AGGREGATE = False``: every event matched on
        its own, the differential twin)."""
        evs = list(events)
        agg = Aggregates(evs) if AGGREGATE else None
        job = _Job(evs, self.resolver(), agg)
        disabled: set[str] = set()
        self.run_problems = []
        out: list[Match] = []
        if self._index is None:
            self._build_index()
        # per group (by id of its first member): the rules to try, and the verdicts of content-only rules
        group_rules: dict[int, list[Rule]] = {}
        verdicts: dict[int, dict[str, None]] = {}  # rule ids that did not match
        for ev in evs:
            first = agg.of[id(ev)].first if agg is not None else ev
            rules = group_rules.get(id(first))
            if rules is None:
                rules = self.rules_for(ev.kind)
                if self._by_template and (ev.template or ev.level in ("WARN", "ERROR", "FATAL")):
                    extra = {r.id: r for tid in job.ids(ev) for r in self._by_template.get(tid, ())}
                    if extra:
                        rules = sorted([*rules, *extra.values()], key=lambda r: (-r.priority, r.id))
                if agg is not None:
                    group_rules[id(first)] = rules
            seen = verdicts.get(id(first)) if agg is not None else None
            if seen is None and agg is not None:
                seen = verdicts[id(first)] = {}
            for rule in rules:
                if rule.id in disabled:
                    continue
                if seen is not None and rule.id in seen:
                    continue  # the group's first member did not match it: neither does this one
                try:
                    m = rule.match_event(ev, job)
                except RuleTimeout:
                    disabled.add(rule.id)
                    self.run_problems.append(Problem(
                        rule.file, rule.line, rule.id,
                        f"pattern took longer than {MATCH_TIMEOUT}s on {ev.file}:{ev.line}; "
                        f"rule disabled for this run"))
                    continue
                if m is None and seen is not None and rule.content_only:
                    seen[rule.id] = None
                if m is not None:
                    out.append(m)
        return out


# Events alike across ranks matched once (see RuleSet.match); False: each event on its own.
AGGREGATE = True
