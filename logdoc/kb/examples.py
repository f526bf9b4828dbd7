"""A rule's examples: the log sources or events they hold, and :func:`check_examples`, which runs
them (``logdoc rules test``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ..events import Event
from .ruleset import RuleSet

def example_sources(example: Any, rule_id: str = "example") -> list[tuple[str, str]]:
    """The (name, text) log sources of an example (empty for an ``events`` example)."""
    if isinstance(example, str):
        return [(f"{rule_id}.log", example)]
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


def check_examples(rules: RuleSet, to_events: Callable[[list[tuple[str, str]]], list[Event]],
                   only: Iterable[str] | None = None) -> list[str]:
    """Run every rule's examples through ``to_events`` (the parser + analysis) and this rule set.

    Returns one message per failing example (empty when all pass); used by ``logdoc rules test``.
    """
    failures = []
    wanted = set(only) if only is not None else None
    for rule in rules.active():
        if wanted is not None and rule.id not in wanted:
            continue
        ex = rule.data.get("examples") or {}
        for expect, items in (("match", ex.get("match") or []), ("no_match", ex.get("no_match") or [])):
            for i, item in enumerate(items):
                evs = example_events(item)
                if evs is None:
                    evs = to_events(example_sources(item, rule.id))
                hit = any(m.rule.id == rule.id for m in rules.match(evs))
                if hit != (expect == "match"):
                    failures.append(f"{rule.file}:{rule.line}: rule {rule.id}: {expect} example {i + 1} "
                                    f"{'did not match' if expect == 'match' else 'matched'}")
    return failures
