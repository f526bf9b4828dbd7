"""From events to diagnoses: match the rules, find where the failure started, fold the cascade.

1. The analysis stage attributes ranks, orders the timeline and adds ``analysis.*`` findings.
2. The knowledge base matches every event; matches of one rule become one diagnosis, with the
   ranks, hosts and evidence lines of all its matches.
3. Root causes are ordered by when they happened (the first failure first), then by severity,
   confidence and priority. Symptoms (watchdog timeouts, closed connections, SIGTERM to survivors)
   are folded under the first root cause; with no root cause, the symptoms stand on their own and
   say so. Context rules become notes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .events import Event
from .kb import Match, RuleSet

SCHEMA = "logdoc.report/1"
MAX_EVIDENCE = 4
_SEVERITY = {"error": 0, "warning": 1, "info": 2}


@dataclass
class Diagnosis:
    rule_id: str
    role: str
    severity: str
    matches: list[Match] = field(default_factory=list)
    first_key: tuple = ()

    @property
    def ranks(self) -> list[int]:
        return sorted({e.rank for m in self.matches for e in m.events if e.rank is not None})

    @property
    def hosts(self) -> list[str]:
        return sorted({e.host for m in self.matches for e in m.events if e.host})


def _order_key(analysis, ev: Event) -> tuple:
    key = getattr(analysis, "order_key", None)
    if key is not None:
        return key(ev)
    return (ev.time is None, ev.time or "", ev.file, ev.line)


def focus(ev: dict[str, Any]) -> dict[str, Any]:
    """Point a multi-line record's evidence at the line that matters: the one the rule's pattern
    matched, or for a traceback its final exception line. The record's first line is kept."""
    text = ev.get("text") or ""
    if "\n" not in text:
        return ev
    lines = text.split("\n")
    span = ev.get("highlight")
    if span:
        idx = text.count("\n", 0, span[0])
        start = text.rfind("\n", 0, span[0]) + 1
        new_span = [span[0] - start, span[1] - start]
    else:
        idx = len(lines) - 1 if ev.get("kind") in _LAST_LINE_KINDS or lines[0].startswith("Traceback") else 0
        while idx > 0 and not lines[idx].strip():
            idx -= 1
        new_span = None
    out = dict(ev, text=lines[idx], record_line=ev["line"], line=ev["line"] + idx, record_text=text)
    if new_span is not None:
        out["highlight"] = new_span
    else:
        out.pop("highlight", None)
    return out


_LAST_LINE_KINDS = {"torch.exception"}


def _evidence(d: Diagnosis) -> list[dict[str, Any]]:
    seen: set[tuple[str, int]] = set()
    out: list[dict[str, Any]] = []
    for m in d.matches:
        for ev_dict in m.render()["evidence"]:
            ev_dict = focus(ev_dict)
            k = (ev_dict["file"], ev_dict["line"])
            if k in seen:
                continue
            seen.add(k)
            out.append(ev_dict)
            if len(out) >= MAX_EVIDENCE:
                return out
    return out


def _render(d: Diagnosis, folded: list[Diagnosis] | None = None) -> dict[str, Any]:
    first = d.matches[0].render()
    out = {
        "id": first["id"],
        "category": first["category"],
        "severity": first["severity"],
        "role": first["role"],
        "title": first["title"],
        "confidence": first["confidence"],
        "ranks": d.ranks,
        "hosts": d.hosts,
        "count": len(d.matches),
        "evidence": _evidence(d),
        "explanation": first["explanation"],
        "fix": first["fix"],
        "confirm": first["confirm"],
        "not_when": first["not_when"],
        "docs": first["docs"],
        "symptoms": [],
    }
    for s in folded or []:
        sr = s.matches[0].render()
        out["symptoms"].append({
            "id": sr["id"], "title": sr["title"], "category": sr["category"], "severity": sr["severity"],
            "ranks": s.ranks, "hosts": s.hosts, "count": len(s.matches), "evidence": _evidence(s)[:2],
        })
    return out


def diagnose(events: list[Event], rules: RuleSet, analysis=None) -> tuple[list[dict], list[dict], list]:
    """Return (diagnoses, notes, run problems) as JSON-ready dicts, most likely root cause first."""
    matches = rules.match(events)
    by_rule: dict[str, Diagnosis] = {}
    for m in matches:
        d = by_rule.get(m.rule.id)
        if d is None:
            d = by_rule[m.rule.id] = Diagnosis(m.rule.id, m.rule.role, m.rule.severity)
        d.matches.append(m)
    for d in by_rule.values():
        d.matches.sort(key=lambda m: _order_key(analysis, m.event))
        d.first_key = _order_key(analysis, d.matches[0].event)

    def rank_key(d: Diagnosis) -> tuple:
        r = d.matches[0].rule
        return (_SEVERITY.get(d.severity, 3), d.first_key, -r.confidence, -r.priority, d.rule_id)

    roots = sorted((d for d in by_rule.values() if d.role == "root_cause"), key=rank_key)
    symptoms = sorted((d for d in by_rule.values() if d.role == "symptom"), key=rank_key)
    context = sorted((d for d in by_rule.values() if d.role == "context"), key=rank_key)

    diagnoses: list[dict] = []
    if roots:
        error_roots = [d for d in roots if d.severity == "error"]
        primary = error_roots[0] if error_roots else roots[0]
        diagnoses.append(_render(primary, folded=symptoms))
        diagnoses.extend(_render(d) for d in roots if d is not primary)
    else:
        diagnoses.extend(_render(d) for d in symptoms)
    notes = [_render(d) for d in context]
    return diagnoses, notes, list(rules.run_problems)
