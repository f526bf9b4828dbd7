"""Early diagnoses: re-run the diagnosis on the events so far and announce each certain root cause once."""

import time
from typing import Callable

from .stream import LiveParser

# What makes a root cause "certain" enough to announce before the end of the output.
CERTAIN_CONFIDENCE = 0.8
# Findings about what is *absent* (a rank that stops, a rank that never joined) are only true at
# the end of the output.
ABSENCE_KINDS = frozenset({"analysis.hung_rank", "analysis.missing_ranks", "analysis.straggler"})


# ---------------------------------------------------------------------------------------------
# early diagnoses

def is_certain(diagnosis: dict, rules) -> bool:
    """A root cause worth announcing before the output ends: an error-severity root-cause rule with
    confidence >= CERTAIN_CONFIDENCE, no ``without`` clause (a later line could still rule it out)
    and no finding about something absent (only true at the end)."""
    if diagnosis.get("role") != "root_cause" or diagnosis.get("severity") != "error":
        return False
    rule = rules.get(diagnosis.get("id", "")) if rules is not None else None
    if rule is None:
        return False
    match = rule.data.get("match") or {}
    if not isinstance(match, dict) or match.get("without"):
        return False
    kinds = match.get("kind") or []
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    if any(k in ABSENCE_KINDS for k in kinds):
        return False
    return rule.confidence >= CERTAIN_CONFIDENCE


class EarlyDiagnoser:
    """Re-run the diagnosis on the events so far and report each new certain root cause once.

    Call :meth:`poke` often (after every chunk and when idle). A run happens when there is news (a
    new WARN/ERROR/FATAL event, or lines added to a record still open) and either the input has
    been quiet for ``debounce`` seconds or the news is ``max_wait`` seconds old; runs are spaced so
    that they take at most about a fifth of the time.
    """

    def __init__(self, parser: LiveParser, rules, emit: Callable[[dict], None], *,
                 debounce: float = 0.3, max_wait: float = 2.0, redact: bool = False):
        self.parser = parser
        self.rules = rules
        self.redact = redact
        self.emit = emit
        self.debounce = debounce
        self.max_wait = max_wait
        self.seen: set[str] = set()
        self.runs = 0
        self._state = (0, 0)
        self._news_since: float | None = None
        self._last_input = time.monotonic()
        self._not_before = 0.0

    def input(self) -> None:
        self._last_input = time.monotonic()

    def _news(self) -> bool:
        """A new WARN/ERROR/FATAL event, or a line taken by a record still open, since last asked."""
        p = self.parser
        state = (p.alarms, p.record_progress)
        news = state[0] != self._state[0] or (state[1] != self._state[1] and p.record_open)
        self._state = state
        return news

    def poke(self) -> None:
        now = time.monotonic()
        if self._news() and self._news_since is None:
            self._news_since = now
        if self._news_since is None or now < self._not_before:
            return
        if now - self._last_input < self.debounce and now - self._news_since < self.max_wait:
            return
        self._news_since = None
        self.run()
        took = time.monotonic() - now
        self._not_before = time.monotonic() + 4 * took

    def timeout(self) -> float | None:
        """How long the caller may block waiting for input before calling :meth:`poke` again."""
        if self._news_since is None:
            return None
        now = time.monotonic()
        due = max(self._not_before, min(self._last_input + self.debounce, self._news_since + self.max_wait))
        return max(0.01, due - now)

    def run(self) -> list[dict]:
        from ..api import build_report

        self.runs += 1
        p = self.parser
        try:
            report = build_report(p.snapshot(), self.rules, redact=self.redact)
        except Exception:  # noqa: BLE001 - an early look must never stop the pass-through
            return []
        new = []
        for d in report.get("diagnoses", []):
            if d.get("id") in self.seen or not is_certain(d, self.rules):
                continue
            self.seen.add(d["id"])
            new.append(d)
            try:
                self.emit(d)
            except Exception:  # noqa: BLE001 - e.g. stderr closed: the pass-through goes on
                pass
        return new


def evidence_line(e: dict) -> str:
    """The telling line of an evidence record: the highlighted one, else the first."""
    text = e.get("text") or ""
    hl = e.get("highlight")
    if hl and isinstance(hl, (list, tuple)) and 0 <= hl[0] < len(text):
        start = text.rfind("\n", 0, hl[0]) + 1
        end = text.find("\n", hl[0])
        return text[start: end if end >= 0 else len(text)].strip()
    return text.split("\n", 1)[0].strip()


def format_notice(d: dict, prefix: str = "logdoc: ") -> str:
    """A few plain lines for a diagnosis found while the job runs."""
    where = ""
    ranks = d.get("ranks") or []
    if ranks:
        where = (" rank " if len(ranks) == 1 else " ranks ") + ", ".join(map(str, ranks[:8]))
    if d.get("hosts"):
        where += " on " + ", ".join(d["hosts"][:4])
    lines = [f"{prefix}root cause{' (' + where.strip() + ')' if where else ''}: [{d['id']}] {d['title']}"]
    for e in (d.get("evidence") or [])[:1]:
        lines.append(f"{prefix}  at {e['file']}:{e['line']}: {evidence_line(e)[:200]}")
    for f in (d.get("fix") or [])[:1]:
        lines.append(f"{prefix}  fix: {f.strip()}")
    lines.append(f"{prefix}  (logdoc rules show {d['id']} for the whole page)")
    return "\n".join(lines) + "\n"
