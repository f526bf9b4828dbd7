"""The ``for`` / ``against`` conditions of a differential and what they are tested on.

A condition (an item of ``knowledge/differentials/*.yaml``, in the rules' condition language) holds
when an event of the log matches it, when none does (``absent: true``), or when the log has a number
of hosts or ranks; it is shown as its ``says`` text with the line that speaks. :class:`_Context` is
the run's events, looked at once: the warnings and errors, a repeated message through its first and
last lines."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

QUOTE = 110
REPRESENTATIVES = 8  # lines of one repeated message that conditions look at


class _Condition:
    """One ``for`` / ``against`` item: an event that must be (or, ``absent: true``, must not be) in
    the log, or a number of hosts / ranks; ``says`` is how it is shown."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        from ..kb.conditions import _Cond
        from ..kb.patterns import _Pattern
        from ..kb.rule import _Clause

        self.spec = dict(spec)
        kinds = spec.get("kind")
        self.kinds = tuple([kinds] if isinstance(kinds, str) else kinds or ())
        tpl = spec.get("template")
        self.templates = frozenset([tpl] if isinstance(tpl, str) else tpl or ())
        self.clause = None
        if self.kinds or "pattern" in spec or "fields" in spec or self.templates:
            self.clause = _Clause(kinds=self.kinds, pattern=_Pattern(spec["pattern"], None) if "pattern" in spec else None,
                                  fields=_Cond(spec["fields"], None) if "fields" in spec else None,
                                  scope="job", alias=None)
        self.hosts = _Cond({"n": spec["hosts"]}, None) if "hosts" in spec else None
        self.ranks = _Cond({"n": spec["ranks"]}, None) if "ranks" in spec else None
        self.absent = bool(spec.get("absent", False))
        self.says = str(spec.get("says") or "")

    def evaluate(self, ctx: "_Context") -> str | None:
        """The evidence string when the condition holds in this log, else None."""
        if self.hosts is not None:
            n = len(ctx.hosts)
            if not self.hosts.test({"n": n}, {}):
                return None
            if self.clause is None:
                return f"{self.says} ({n} host{'s' if n != 1 else ''} in the log)"
        if self.ranks is not None:
            n = len(ctx.ranks)
            if not self.ranks.test({"n": n}, {}):
                return None
            if self.clause is None:
                return f"{self.says} ({n} rank{'s' if n != 1 else ''} in the log)"
        if self.clause is None:
            return self.says or None
        hit = ctx.find(self)
        if self.absent:
            return None if hit is not None else self.says
        if hit is None:
            return None
        return f'{self.says}: "{_quote(hit, self.clause.pattern)}" ({Path(hit.file).name}:{hit.line})'


def _quote(ev, pattern) -> str:
    """The part of the event's text that speaks: around the pattern's match, else its telling line."""
    text = ev.text or ""
    m = pattern.search(text) if pattern is not None else None
    if m is not None:
        start = max(text.rfind("\n", 0, m.start()) + 1, m.start() - (QUOTE - (m.end() - m.start())) // 2)
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        end = min(end, start + QUOTE)
        out = text[start:end].strip()
        return ("..." if start > 0 and text[start - 1] != "\n" else "") + out + ("..." if end < len(text) and text[end] != "\n" else "")
    line = text.strip().split("\n")[-1 if ev.kind == "torch.exception" else 0].strip()
    return line if len(line) <= QUOTE else line[: QUOTE - 3] + "..."


class _Context:
    """What the conditions are tested on: the run's events, once."""

    def __init__(self, events: Sequence, resolver) -> None:
        from ..kb.rule import _Job

        self.job = _Job(events, resolver)
        self.events = events
        self.hosts = {e.host for e in events if e.host and not e.kind.startswith("analysis.")}
        self.ranks = {e.rank for e in events if e.rank is not None}
        # a condition without a kind looks at the warnings and errors only (a large log has
        # hundreds of thousands of INFO lines, and evidence for or against a cause is not among them)
        # A message the log repeats (thousands of lines of one catalog template) is looked at through
        # its first and last lines.
        self.loud = []
        per_template: dict[Any, list] = {}
        for e in events:
            if e.level not in ("WARN", "ERROR", "FATAL") or e.kind.startswith("analysis."):
                continue
            seen = per_template.setdefault(e.template or (e.kind, e.text[:80]), [])
            if len(seen) < REPRESENTATIVES:
                self.loud.append(e)
            seen.append(e)
        for seen in per_template.values():
            if len(seen) > REPRESENTATIVES:
                self.loud.append(seen[-1])
        self._memo: dict[int, Any] = {}

    def find(self, cond: _Condition):
        key = id(cond)
        if key in self._memo:
            return self._memo[key]
        found = None
        kinds = cond.kinds or None
        pool = self.loud if kinds is None else [e for k in kinds for e in self.job.by_kind(k)]
        for ev in pool:
            if cond.templates and not (cond.templates & self.job.ids(ev)):
                continue
            ok, _, _ = cond.clause.accepts(ev)
            if ok:
                found = ev
                break
        self._memo[key] = found
        return found
