"""How specific a match's evidence is.

* :func:`specificity` - how much a match's evidence says beyond its line: each ``with`` event the
  rule requires. Of two rules that read the same line, the more specific one is ranked first
  (logdoc/diagnose.py): a release defect confirmed by the version line beats the generic reading of
  the same CUDA failure.
"""
from __future__ import annotations

from typing import Any


def specificity(m: Any) -> int:
    """The events a match stands on besides its own line: each ``with`` event its rule requires (an
    optional one is attached when present, the rule does not stand on it). ``applies_to`` is no such
    evidence: most ranges say when a wording exists (``>=2.17``: the message is new in 2.17), which the
    line itself already shows; a rule whose cause is a release names the version line in a ``with``."""
    rule = m.rule
    return sum(1 for i, c in enumerate(rule._with) if not c.optional and (c.alias or f"with{i}") in m.related)
