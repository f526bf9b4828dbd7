"""A rule's ``applies_to`` against the versions a log shows, and how specific a match's evidence is.

``applies_to`` (knowledge/README.md) names the releases a rule's wording or behaviour belongs to. The
versions are the job's, as the analysis collects them from every line that names one
(:func:`logdoc.analysis.disagreements.versions`: NCCL's banner under any prefix, the version PyTorch
prints inside its NCCL errors, ``collect_env`` output, ...):

* :func:`applies` - ``False`` when the log shows a component's version and none of the versions it
  shows is in the rule's range (the rule's release defect or wording cannot be this job's); ``True``
  when every component the rule names has a version in range; ``None`` when the log shows none of them.
* :func:`specificity` - how much a match's evidence says beyond its line: each ``with`` event the
  rule requires, and each ``applies_to`` component a version of the log confirms. Of two rules that
  read the same line, the more specific one is ranked first (logdoc/diagnose.py): a release defect
  confirmed by the version line beats the generic reading of the same CUDA failure.
"""
from __future__ import annotations

from typing import Any, Mapping

from .versions import parse_version, version_in_range

Versions = Mapping[str, "list[str] | tuple[str, ...]"]


def job_versions(anatomy: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """``{"nccl": ["2.26.2+cuda12.2"], "torch": [...], ...}`` from the anatomy's ``versions``."""
    out: dict[str, list[str]] = {}
    for comp, by_version in ((anatomy or {}).get("versions") or {}).items():
        vs = [str(v) for v in by_version if parse_version(str(v))]
        if vs:
            out[comp] = vs
    return out


def applies(rule: Any, versions: Versions) -> bool | None:
    """Whether the log's versions fall in ``rule.applies_to`` (see the module)."""
    at = rule.data.get("applies_to") if rule is not None else None
    if not at or not versions:
        return None
    known = False
    for comp, spec in at.items():
        vs = versions.get(comp)
        if not vs:
            continue
        known = True
        if not any(version_in_range(v, str(spec)) for v in vs):
            return False
    return True if known else None


def specificity(m: Any, versions: Versions) -> int:
    """The pieces of evidence a match stands on besides its own line (see the module)."""
    rule = m.rule
    required = sum(1 for i, c in enumerate(rule._with)
                   if not c.optional and (c.alias or f"with{i}") in m.related)
    confirmed = 0
    at = rule.data.get("applies_to")
    if at and versions:
        confirmed = sum(1 for comp, spec in at.items()
                        if versions.get(comp) and all(version_in_range(v, str(spec)) for v in versions[comp]))
    return required + confirmed
