"""The ranked differential in the report: when the first diagnosis is a generic one, the next
candidate causes as diagnoses of their own, right after it.

A family-level card (:mod:`.card`) or a symptom-level rule ("ncclSystemError without the NCCL WARN
that explains it", a bare watchdog timeout) says what failed but not why: the log alone cannot
decide the cause. So does any rule on a message of an ``undecided`` family
(``knowledge/differentials/``: "the store could not be reached", "connect: no route to host"),
however sure the rule is of what it read: the family says so in YAML, and the rule keeps its
confidence (its rank among the others). An expert says "most likely A; if not, B; then C", each
with the check that tells it apart. The card's (or the rule's) own category is A; this module adds
B and C as diagnoses of role ``candidate`` (``logdoc.kb.schema.REPORT_ROLES``), never of severity
error:

* the candidates are the family's causes (``knowledge/differentials/``: the card's family or
  annotation, or the family whose ``match`` the rule's event meets), ranked as the card's
  differential is (what this log shows for, minus against, then the family's prior order);
* a candidate the log speaks against more than for is left out, and so is a category the report
  already names;
* each shows the lines that speak for it (else the lead's line), its cause, and its check as the fix.

Every word comes from the YAML (``generic.candidate_title``, ``generic.candidate_explanation`` and
the causes); this module only chooses and assembles.
"""
from __future__ import annotations

from typing import Any, Sequence

from .card import _candidates, _Card, _family_for, card_annotation, evidence_of
from .conditions import _Context
from .load import Cause, Differentials

MAX_CANDIDATES = 2
ROLE = "candidate"
GENERIC_CONFIDENCE = 0.5  # a rule's symptom or a root cause at most this sure is a generic lead


def _generic(lead: dict[str, Any]) -> bool:
    if lead.get("family"):
        return True
    return lead.get("role") == "symptom" or (lead.get("confidence") or 0) <= GENERIC_CONFIDENCE


def _card_causes(lead: dict[str, Any], rules, diffs: Differentials) -> list[Cause]:
    """The causes of a family-level card, as :mod:`.card` listed them for its differential."""
    ann = getattr(rules, "annotations", None)
    tid = lead.get("template")
    a = ann.get(tid) if ann is not None and tid else None
    fam = None
    if str(lead.get("id") or "").startswith("family:"):
        fid = lead["id"][len("family:"):]
        fam = next((f for f in diffs.families if f.id == fid), None)
        a = card_annotation(a, fam)
    return _candidates(_Card(lead["id"], tid, a, fam), diffs)


def _rule_causes(event, rules, diffs: Differentials, lead: dict[str, Any], undecided_only: bool = False) -> list[Cause]:
    """The causes of the family whose ``match`` the rule's event meets (its own causes, else the
    entries of its ``generic_causes``), after a generic lead or any lead of an ``undecided`` family."""
    resolver = rules.resolver()
    fam = _family_for(diffs, event, resolver.ids(event))
    if fam is None or not (fam.data.get("undecided") or _generic(lead) and not undecided_only):
        return []
    return _candidates(_Card("family:" + fam.id, None, None, fam), diffs) if not fam.causes else list(fam.causes)


def _score(cause: Cause, ctx: _Context) -> tuple[int, list[str], list[str], list]:
    pro, con, lines = [], [], []
    for cond in cause.for_:
        s = cond.evaluate(ctx)
        if s:
            pro.append(s)
            if cond.clause is not None and not cond.absent:
                ev = ctx.find(cond)
                if ev is not None:
                    lines.append(ev)
    for cond in cause.against:
        s = cond.evaluate(ctx)
        if s:
            con.append(s)
    return len(pro) - len(con), pro, con, lines


def _evidence(evs: Sequence, fallback: list[dict]) -> list[dict]:
    out = evidence_of(evs, skip_analysis=True)
    if not out:
        out = [dict(x) for x in fallback[:1]]
    return out


def candidates(lead: dict[str, Any], causes: Sequence[Cause], events: Sequence, rules,
               exclude: set[str], ctx: _Context | None = None) -> list[dict[str, Any]]:
    """The next ranked candidates after a generic lead (at most :data:`MAX_CANDIDATES`)."""
    from ..kb.render import render_template, render_title

    diffs: Differentials = rules.differentials
    if not causes:
        return []
    ctx = ctx or _Context(events, rules.resolver())
    scored = []
    seen = set(exclude)
    for i, c in enumerate(causes):
        if c.category in seen:
            continue
        seen.add(c.category)
        net, pro, con, lines = _score(c, ctx)
        if net < 0:
            continue  # the log speaks against it
        scored.append(((-net, i), c, pro, con, lines))
    scored.sort(key=lambda t: t[0])
    out = []
    title_t = diffs.generic.get("candidate_title") or "{cause}"
    expl_t = diffs.generic.get("candidate_explanation") or "{cause}"
    for _, c, pro, con, lines in scored[:MAX_CANDIDATES]:
        vals = {"cause": c.cause, "category": c.category, "check": c.check, "lead": lead.get("title"),
                "for": pro, "against": con}
        evidence = _evidence(lines, lead.get("evidence") or [])
        ranks = sorted({e["rank"] for e in evidence if e.get("rank") is not None})
        hosts = sorted({e["host"] for e in evidence if e.get("host")})
        out.append({
            "id": f"candidate:{c.category}",
            "category": c.category,
            "severity": "warning" if pro else "info",
            "role": ROLE,
            "title": render_title(title_t, vals),
            "confidence": 0.3 if pro else 0.2,
            "ranks": ranks or list(lead.get("ranks") or []),
            "hosts": hosts or list(lead.get("hosts") or []),
            "reported_by": ranks,
            "finding": None,
            "count": len(evidence),
            "evidence": evidence,
            "explanation": render_template(expl_t, vals).strip(),
            "fix": [c.check],
            "confirm": [],
            "not_when": list(con),
            "docs": [],
            "symptoms": [],
            "for": pro,
            "against": con,
        })
    return out


def add_candidates(diagnoses: list[dict[str, Any]], events: Sequence, rules, lead_event=None) -> list[dict[str, Any]]:
    """The diagnoses with the ranked candidates of a generic first diagnosis right after it.
    ``lead_event`` is the event of the first diagnosis when a rule made it (its family is the one
    whose ``match`` that event meets)."""
    diffs: Differentials | None = getattr(rules, "differentials", None)
    if not diagnoses or diffs is None:
        return diagnoses
    lead = diagnoses[0]
    severity = lead.get("severity")
    if severity not in ("error", "warning"):
        return diagnoses
    if lead.get("family"):
        causes = _card_causes(lead, rules, diffs) if severity == "error" else []
    elif lead_event is not None:
        # a warning leads with candidates only on an undecided family's message: a rule that read an
        # error into lines logged as notices (a gRPC status alone, logged as a warning) still failed
        causes = _rule_causes(lead_event, rules, diffs, lead, undecided_only=severity != "error")
    else:
        return diagnoses
    named = {d.get("category") for d in diagnoses}
    extra = candidates(lead, causes, events, rules, named)
    return [lead, *extra, *diagnoses[1:]] if extra else diagnoses
