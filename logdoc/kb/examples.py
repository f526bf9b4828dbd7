"""A rule's examples: the log sources or events they hold, and :func:`check_examples`, which runs
them (``logdoc rules test``).

A match example says *where*, as semgrep's tests do: the rule must not only fire somewhere on the
example, its evidence must be the line the example names, and the finding must take the role the
example names in the report.

* A one-line example names its own line: the match's evidence must be that line.
* An example of several lines (or files) is a mapping ``{log: TEXT}`` / ``{files: {...}}`` with
  ``where:`` (a piece of text, or a list of them, that the evidence lines must contain; each piece
  in one of them).
* ``role:`` (``root_cause``, ``symptom`` or ``context``) is the part the rule's finding plays in the
  whole report of the example: the head of a card (or the same failure folded into one), a symptom
  folded under another cause, or a note. Without ``role:`` it is the rule's own role.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from ..events import Event
from .ruleset import RuleSet


def example_sources(example: Any, rule_id: str = "example") -> list[tuple[str, str]]:
    """The (name, text) log sources of an example (empty for an ``events`` example)."""
    if isinstance(example, str):
        return [(f"{rule_id}.log", example)]
    if isinstance(example, Mapping) and "log" in example:
        return [(f"{rule_id}.log", str(example["log"]))]
    if isinstance(example, Mapping) and "files" in example:
        return [(str(k), str(v)) for k, v in example["files"].items()]
    return []


def example_events(example: Any) -> list[Event] | None:
    """The events of an ``{events: [...]}`` example, else None."""
    if isinstance(example, Mapping) and "events" in example:
        out = []
        for i, e in enumerate(example["events"]):
            d = {"level": "INFO", "file": "example.log", "line": i + 1, "text": "", "fields": {}}
            d.update(e)
            out.append(Event.from_dict(d))
        return out
    return None


def example_where(example: Any) -> list[str]:
    """The pieces of text the evidence of a match example must contain: a one-line example's line
    itself, else its ``where:``."""
    if isinstance(example, str):
        lines = [ln for ln in example.splitlines() if ln.strip()]
        return [lines[0].strip()] if len(lines) == 1 else []
    if isinstance(example, Mapping):
        where = example.get("where")
        if isinstance(where, str):
            return [where]
        if isinstance(where, list):
            return [str(w) for w in where]
    return []


def _evidence_lines(match, sources: Sequence[tuple[str, str]]) -> list[str]:
    """The source lines a match cites (its event's and its related events' lines)."""
    texts = {name: text.splitlines() for name, text in sources}
    out = []
    for ev in match.events:
        lines = texts.get(ev.file)
        if lines is None:
            out.append(ev.text)
            continue
        first, last = ev.line, max(ev.end_line or ev.line, ev.line)
        out.extend(lines[first - 1:last])
    return out


def report_role(report: Mapping[str, Any], rule_id: str) -> str | None:
    """The part a rule plays in a report: ``root_cause`` (a card's head with that role, or the same
    failure told by another message, folded into that card), ``symptom`` (a consequence folded under
    a card, or a card of role symptom), ``context`` (a note), else None."""
    for d in report.get("diagnoses") or ():
        if d.get("id") == rule_id:
            return "symptom" if d.get("role") == "symptom" else ("context" if d.get("role") == "context" else "root_cause")
    for d in report.get("diagnoses") or ():
        for s in d.get("symptoms") or ():
            if s.get("id") == rule_id:  # the same failure told by another message stays a root cause
                return "root_cause" if s.get("same_cause") and s.get("role") != "symptom" else "symptom"
    if any(n.get("id") == rule_id for n in report.get("notes") or ()):
        return "context"
    return None


def check_example(rules: RuleSet, rule, expect: str, index: int, item: Any,
                  to_events: Callable[[list[tuple[str, str]]], list[Event]],
                  to_report: Callable[[list[tuple[str, str]]], Mapping[str, Any]] | None = None) -> list[str]:
    """What is wrong with one example of one rule (empty when it holds)."""
    where_at = f"{rule.file}:{rule.line}: rule {rule.id}: {expect} example {index + 1}"
    sources = example_sources(item, rule.id)
    evs = example_events(item)
    if evs is None:
        evs = to_events(sources)
    hits = [m for m in rules.match(evs) if m.rule.id == rule.id]
    if expect == "no_match":
        return [f"{where_at} matched"] if hits else []
    if not hits:
        return [f"{where_at} did not match"]
    out = []
    if sources:
        cited = [ln for m in hits for ln in _evidence_lines(m, sources)]
        for piece in example_where(item):
            if not any(piece in ln for ln in cited):
                out.append(f"{where_at} matched, but not at the line with {piece!r} "
                           f"(evidence: {[ln.strip()[:80] for ln in cited[:3]]})")
    role = (item.get("role") if isinstance(item, Mapping) else None) or rule.role
    if to_report is not None and sources:
        got = report_role(to_report(sources), rule.id)
        if got != role:
            out.append(f"{where_at} plays {got or 'no part'} in the report, not {role}")
    return out


def check_examples(rules: RuleSet, to_events: Callable[[list[tuple[str, str]]], list[Event]],
                   only: Iterable[str] | None = None,
                   to_report: Callable[[list[tuple[str, str]]], Mapping[str, Any]] | None = None) -> list[str]:
    """Run every rule's examples through ``to_events`` (the parser + analysis) and this rule set,
    and, for examples that name a ``role``, through ``to_report`` (the whole pipeline).

    Returns one message per failing example (empty when all pass); used by ``logdoc rules test``.
    """
    failures = []
    wanted = set(only) if only is not None else None
    for rule in rules.active():
        if wanted is not None and rule.id not in wanted:
            continue
        ex = rule.data.get("examples") or {}
        for expect in ("match", "no_match"):
            for i, item in enumerate(ex.get(expect) or []):
                failures.extend(check_example(rules, rule, expect, i, item, to_events, to_report))
    return failures
