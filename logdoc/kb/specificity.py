"""How findings of one report rank against each other, beyond severity and time.

* :func:`specificity` - how much a match's evidence says beyond its line: each ``with`` event the
  rule requires. Of two rules that read the same line, the more specific one is ranked first
  (logdoc/diagnose.py): a release defect confirmed by the version line beats the generic reading of
  the same CUDA failure.
* :func:`explained` - the findings another finding of the same report explains (a rule's
  ``explained_by``, knowledge/README.md): a launcher's summary that a worker exited (torchrun's
  "exited with code 1", Open MPI's "a process exited with a non-zero status") says *that* a worker
  failed; the worker's own report (its exception, its watchdog timeout, its NCCL error) says *why*.
  Such a summary ranks after that report wherever the two stand in the log (logdoc/diagnose.py).
"""
from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Iterable

EXPLAINING_SEVERITIES = ("error", "warning")  # an info finding explains nothing
EXPLAINING_ROLES = ("root_cause", "symptom")  # a context note is no report of a failure


def specificity(m: Any) -> int:
    """The events a match stands on besides its own line: each ``with`` event its rule requires (an
    optional one is attached when present, the rule does not stand on it). ``applies_to`` is no such
    evidence: most ranges say when a wording exists (``>=2.17``: the message is new in 2.17), which the
    line itself already shows; a rule whose cause is a release names the version line in a ``with``."""
    rule = m.rule
    return sum(1 for i, c in enumerate(rule._with) if not c.optional and (c.alias or f"with{i}") in m.related)


def _spec(value: Any) -> tuple[tuple[str, ...], str]:
    """A rule's ``explained_by`` as (kind patterns, scope): a list of kinds (scope ``job``) or
    ``{kind: [...], scope: job|rank}``."""
    if isinstance(value, dict):
        kinds = value.get("kind") or ()
        return (tuple([kinds] if isinstance(kinds, str) else kinds), value.get("scope") or "job")
    return tuple(value or ()), "job"


def _facts(d: Any) -> tuple[frozenset, frozenset, frozenset]:
    """The kinds, ranks and files of a diagnosis's matched events, read once (a large job's watchdog
    diagnosis has a match per rank)."""
    kinds, ranks, files = set(), set(), set()
    for m in d.matches:
        ev = m.event
        kinds.add(ev.kind)
        files.add(ev.file)
        if ev.rank is not None:
            ranks.add(ev.rank)
    return frozenset(kinds), frozenset(ranks), frozenset(files)


def _same_process(a: tuple, b: tuple) -> bool:
    """Whether two diagnoses (their :func:`_facts`) share a process: a rank both name, else (a rank
    unknown) a file."""
    if a[1] and b[1]:
        return bool(a[1] & b[1])
    return bool(a[2] & b[2])


def explained(diagnoses: Iterable[Any]) -> set[str]:
    """The rule ids of ``diagnoses`` (each with ``rule_id``, ``role``, ``severity`` and ``matches``)
    whose rule's ``explained_by`` names the kind of an event another diagnosis stands on (in the same
    process when its scope is ``rank``), when that other one is a failure report (an error or warning,
    a root cause or a symptom) whose own rule is not explained the same way (two launcher summaries
    do not explain each other)."""
    ds = [d for d in diagnoses if d.role in EXPLAINING_ROLES and d.matches]
    specs = {d.rule_id: _spec(d.matches[0].rule.data.get("explained_by")) for d in ds}
    wanting = [d for d in ds if specs[d.rule_id][0]]
    if not wanting:
        return set()
    explainers = [d for d in ds if not specs[d.rule_id][0] and d.severity in EXPLAINING_SEVERITIES]
    facts = {id(d): _facts(d) for d in wanting + explainers}
    out: set[str] = set()
    for d in wanting:
        want, scope = specs[d.rule_id]
        for o in explainers:
            fo = facts[id(o)]
            if scope == "rank" and not _same_process(facts[id(d)], fo):
                continue
            if any(fnmatchcase(k, p) for k in fo[0] for p in want):
                out.add(d.rule_id)
                break
    return out
