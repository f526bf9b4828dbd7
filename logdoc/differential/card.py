"""Which events no rule explains get a family-level card, and the card itself: the candidates of
its family and categories ranked by what in this log speaks for and against each
(:func:`rank_differential`), the texts rendered, and the cards added to a report's diagnoses and
notes (:func:`attach`). Every word shown comes from the YAML; this module only evaluates and
assembles."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .conditions import _Context
from .load import Cause, Differentials, Family

MAX_EVIDENCE = 4


def evidence_of(evs: Sequence, skip_analysis: bool = False) -> list[dict[str, Any]]:
    """A card's evidence: the first MAX_EVIDENCE distinct lines of ``evs`` (an ``analysis.*`` event
    is no line of the log when ``skip_analysis``)."""
    out: list[dict[str, Any]] = []
    seen = set()
    for e in evs:
        k = (e.file, e.line)
        if k in seen or (skip_analysis and e.kind.startswith("analysis.")):
            continue
        seen.add(k)
        out.append({"file": e.file, "line": e.line, "rank": e.rank, "host": e.host, "kind": e.kind,
                    "text": e.text})
        if len(out) >= MAX_EVIDENCE:
            break
    return out


_STRONG_KINDS = ("nccl.warn", "torch.nccl_error")
_STRONG_PREFIX = ("gloo.", "store.")
_DIST_ERRORS = ("DistBackendError", "DistNetworkError", "DistStoreError", "DistError")


def _strong(ev) -> bool:
    """An error-level event of the communication stack: it needs an explanation even when a rule
    explained something else."""
    if ev.kind in _STRONG_KINDS:
        return True
    f = ev.fields or {}
    if ev.kind == "nccl.trace" and f.get("code") not in (None, 0, "0"):
        return True
    if ev.level not in ("ERROR", "FATAL"):
        return False
    if ev.kind.startswith(_STRONG_PREFIX):
        return True
    if ev.kind in ("torch.exception", "torch.terminate"):
        exc = str(f.get("exc_type") or f.get("cxx_type") or "")
        return exc.rsplit(".", 1)[-1].split("::")[-1] in _DIST_ERRORS
    return False


def _same_result(fam: Family, ev) -> bool:
    """The family's ``nccl_result`` is the event's: the ncclResult its reader named (``fields.nccl_result``:
    a result text with a typo, a framework's own wording), whatever the text's words."""
    want = fam.match.get("nccl_result")
    got = (ev.fields or {}).get("nccl_result")
    return bool(want and got) and got in ([want] if isinstance(want, str) else want)


def _result_family(fam: Family) -> bool:
    """A family that stands for an NCCL result, whether a carrier names it (``nccl_result``) or NCCL's error trace
    returns it (``N -> 3`` lines): the WARN that NCCL printed for that result says more."""
    kind = fam.match.get("kind")
    return bool(fam.match.get("nccl_result")) or kind == "nccl.trace" or kind == ["nccl.trace"]


def _family_for(diffs: Differentials, ev, ids: frozenset[str]) -> Family | None:
    for fam in diffs.families:
        lv = fam.match.get("level")
        if lv is not None and ev.level not in ([lv] if isinstance(lv, str) else lv):
            continue
        c = fam._clause
        if c.templates and not (c.templates & ids):
            continue
        if c.kinds and not any(ev.kind == k or k.endswith("*") and ev.kind.startswith(k[:-1]) for k in c.kinds):
            continue
        if _same_result(fam, ev):
            return fam  # the result the event quotes, read from whatever wording it was printed in
        if c.clause is not None and (c.clause.pattern is not None or c.clause.fields is not None):
            ok, _, _ = c.clause.accepts(ev)
            if not ok:
                continue
        return fam
    return None


def card_annotation(a, fam: Family | None):
    """The annotation a card of this message explains with: none when the message quotes an NCCL
    result (``by_result``) and that result has a family, whose card explains it instead."""
    return None if a is not None and a.by_result and fam is not None else a


@dataclass
class _Card:
    key: str
    tid: str | None
    annotation: Any
    family: Family | None
    events: list = field(default_factory=list)


def family_cards(events: Sequence, rules, matches: Iterable, have_diagnosis: bool,
                 order_key=None) -> tuple[list[dict], list[dict], list[dict]]:
    """(root-cause cards, symptom cards, notes) for the events no rule explains."""
    ann = getattr(rules, "annotations", None)
    diffs: Differentials | None = getattr(rules, "differentials", None)
    if diffs is None:
        return [], [], []
    resolver = rules.resolver()
    # The events the matches explain, and their lines (per file, the line numbers: a job of many ranks
    # has a match on every rank's lines, and a tuple an event cost 13 MB at 10,000 ranks). A matched
    # event that is not a synthetic one stands on an explained line, so only a nested event (judged
    # by the lines of root causes) needs its own identity looked up.
    explained: set[int] = set()
    # a note's synthetic event stands on the line of its first evidence (the first line of a rank's log, say),
    # which it does not explain
    explained_lines: dict[str, Any] = {}
    # a message nested in a carrier that only a symptom explains ("the communicator was aborted; the
    # original reason was: ...") still needs its own card: its line is explained only by a root cause
    caused_lines: dict[str, Any] = {}
    # the carriers of a message a rule explains (file, line, kind): what they report is that message's
    # failure (``NCCL error: unhandled system error`` / ``Last error:`` / its WARN), which the rule names
    # better than the carrier's family can
    carried: set[tuple] = set()
    # an NCCL WARN that a rule reads as an error: what NCCL printed for the result that a carrier reports (its
    # `Last error:` printed apart, in another stream or process); the result's family card would only restate it
    warned = False
    for m in matches:
        role = m.rule.role
        if not warned and m.rule.severity == "error" and role in ("root_cause", "symptom"):
            warned = any(e.kind == "nccl.warn" for e in m.events)
        for e in m.events:
            analysis = e.kind.startswith("analysis.")
            if not analysis and (e.fields or {}).get("nested_in"):
                explained.add(id(e))
                carried.add((e.file, e.fields.get("nested_line"), e.fields.get("nested_kind")))
            if not (role == "context" and analysis):
                _add_line(explained_lines, e)
            if role != "symptom":
                _add_line(caused_lines, e)
    cards: dict[str, _Card] = {}
    notes: dict[str, _Card] = {}
    fam_memo: dict[tuple, Family | None] = {}
    none: frozenset = frozenset()
    for ev in events:
        if ev.kind.startswith("analysis."):
            continue
        nested = (ev.fields or {}).get("nested_in")
        if nested and id(ev) in explained or ev.line in (caused_lines if nested else explained_lines).get(ev.file,
                                                                                                            none):
            continue
        if carried and not nested and (ev.file, ev.line, ev.kind) in carried:
            continue
        errorish = ev.level in ("ERROR", "FATAL") or ev.kind == "nccl.warn" or _strong(ev)
        if not errorish and ev.level != "WARN":
            continue
        tid = resolver.catalog_id(ev)
        a = ann.get(tid) if ann is not None and tid else None
        if a is not None and a.role in ("benign", "context"):
            key = "note:" + a.ids[0]
            notes.setdefault(key, _Card(key, tid, a, None)).events.append(ev)
            continue
        if not errorish and a is None:
            continue  # a warning means something only through its annotation
        # the family of a catalog message is the same for all its lines (a log repeats them)
        fkey = (ev.kind, ev.level, tid) if tid else (ev.kind, ev.level, ev.text)
        fam = fam_memo[fkey] if fkey in fam_memo else fam_memo.setdefault(
            fkey, _family_for(diffs, ev, resolver.ids(ev)))
        if warned and fam is not None and _result_family(fam):
            continue
        a = card_annotation(a, fam)
        if a is None and fam is None:
            continue
        if have_diagnosis and not (_strong(ev) or ev.level in ("ERROR", "FATAL")):
            continue  # beside a rule's diagnosis, a warning that is not the stack's own error waits
        key = "catalog:" + a.ids[0] if a is not None else "family:" + fam.id
        if fam is not None and (fam._templates or fam.causes):
            key = "family:" + fam.id  # a message family with its own candidates: one card
        cards.setdefault(key, _Card(key, tid, a, fam)).events.append(ev)
    if not cards and not notes:
        return [], [], []
    ctx = _Context(events, resolver)
    roots, symptoms = [], []
    for card in cards.values():
        out = _render(card, diffs, ctx, order_key)
        (symptoms if out["role"] == "symptom" else roots).append(out)
    note_out = [_render(c, diffs, ctx, order_key, note=True) for c in notes.values()]
    return roots, symptoms, note_out


_FEW_LINES = 16  # the lines of a file held as a list up to this many, then as a set


def _add_line(lines: dict[str, Any], ev) -> None:
    """``ev``'s line among the lines of its file: a short list while the file has few (a rank's log of a
    large job has a handful: a set each would cost 7 MB at 10,000 ranks), a set beyond."""
    got = lines.get(ev.file)
    if got is None:
        lines[ev.file] = [ev.line]
    elif got.__class__ is list:
        if ev.line not in got:
            got.append(ev.line)
            if len(got) > _FEW_LINES:
                lines[ev.file] = set(got)
    else:
        got.add(ev.line)


def _went_on(evs: Sequence, ctx: _Context) -> bool:
    """Every line of ``evs`` (an NCCL WARN no rule or annotation explains) is followed in its own file
    by a sign that the run went on past it (the communicator's `Init COMPLETE`, nccl-tests' `Out of
    bounds values : 0 OK` or its average bus bandwidth), and nothing in the log failed: the warning
    did not stop the run, whatever it means."""
    if not evs or any(e.level in ("ERROR", "FATAL") for e in ctx.loud):
        return False
    last: dict[str, int] = {}
    for e in evs:
        if e.kind != "nccl.warn" or e.line is None:
            return False
        last[e.file] = max(last.get(e.file, 0), e.line)
    after: dict[str, int] = {}
    for e in ctx.job.by_kind("nccl.comm_init") + ctx.job.by_kind("nccltests.check") + ctx.job.by_kind("nccltests.bandwidth"):
        f = e.fields or {}
        if e.kind == "nccl.comm_init" and f.get("phase") != "COMPLETE" or f.get("verdict") == "FAILED":
            continue
        if e.line is not None and e.line > after.get(e.file, 0):
            after[e.file] = e.line
    return all(after.get(file, 0) > line for file, line in last.items())


def _values(card: _Card) -> dict[str, Any]:
    from ..kb.rule import _event_values

    ev = card.events[0]
    vals = _event_values(ev)
    a = card.annotation
    vals.update({"meaning": a.meaning if a else None, "condition": a.condition if a else None,
                 "template": card.tid, "count": len(card.events), "category": a.category if a else None})
    return vals


def _candidates(card: _Card, diffs: Differentials) -> list[Cause]:
    out: list[Cause] = []
    if card.family is not None and card.family.causes:
        out.extend(card.family.causes)
    cats: list[str] = []
    if card.annotation is not None:
        cats = [card.annotation.category, *card.annotation.differential]
    elif card.family is not None:
        cats = list(card.family.data.get("generic_causes") or [])
    have = {c.category for c in out}
    for cat in cats:
        if cat in have or cat == "benign":
            continue
        cause = diffs.categories.get(cat)
        if cause is not None:
            out.append(cause)
            have.add(cat)
    return out


def rank_differential(causes: Sequence[Cause], ctx: _Context) -> list[dict[str, Any]]:
    scored = []
    for i, c in enumerate(causes):
        pro = [s for s in (x.evaluate(ctx) for x in c.for_) if s]
        con = [s for s in (x.evaluate(ctx) for x in c.against) if s]
        scored.append(((-(len(pro) - len(con)), i), {"category": c.category, "cause": c.cause, "for": pro,
                                                      "against": con, "check": c.check}))
    scored.sort(key=lambda t: t[0])
    return [d for _, d in scored]


def _render(card: _Card, diffs: Differentials, ctx: _Context, order_key, note: bool = False) -> dict[str, Any]:
    from ..kb.render import render_template, render_title

    evs = sorted(card.events, key=order_key) if order_key else list(card.events)
    card.events = evs
    vals = _values(card)
    a, fam = card.annotation, card.family
    # an annotated message speaks for itself unless a family has its own candidate list for it
    fdata = fam.data if fam is not None and (fam.causes or a is None) else {}
    differential = [] if note else rank_differential(_candidates(card, diffs), ctx)
    role = fdata.get("role") or (a.role if a is not None else None) or "root_cause"
    if note:
        title = render_title(diffs.generic.get("note_title") or "{meaning}", vals)
        severity = "info"
    else:
        title = render_title(fdata.get("title") or diffs.generic.get("title") or "{meaning}", vals)
        severity = fdata.get("severity") or ("error" if any(
            e.level in ("ERROR", "FATAL") or e.kind.startswith("nccl.") for e in evs) else "warning")
        if severity == "error" and a is None and _went_on(evs, ctx):
            severity = "warning"
    explanation = render_template(fdata.get("explanation") or diffs.generic.get("explanation") or "", vals).strip()
    # A message that names its cause keeps its category; otherwise the differential's lead is it.
    if a is not None and (note or a.role == "root_cause" and not fdata.get("causes")):
        category = a.category
    elif differential:
        category = differential[0]["category"]
    else:
        category = a.category if a is not None else None
    ranks = sorted({e.rank for e in evs if e.rank is not None})
    hosts = sorted({e.host for e in evs if e.host})
    evidence = evidence_of(evs)
    return {
        "id": card.key,
        "category": category,
        "severity": severity,
        "role": "context" if note else role,
        "title": title,
        "confidence": 0.2 if note else (0.45 if role == "root_cause" else 0.35),
        "ranks": ranks,
        "hosts": hosts,
        "reported_by": ranks,
        "finding": None,
        "count": len(evs),
        "evidence": evidence,
        "explanation": explanation,
        "fix": [render_template(s, vals) for s in fdata.get("fix") or []],
        "confirm": [d["check"] for d in differential[:3]],
        "not_when": [],
        "docs": [dict(d) for d in fdata.get("docs") or []],
        "symptoms": [],
        "family": True,
        "template": card.tid,
        "meaning": a.meaning if a is not None else None,
        "condition": a.condition if a is not None else None,
        "differential": differential,
    }


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    return {"id": d["id"], "title": d["title"], "category": d["category"], "severity": d["severity"],
            "ranks": d["ranks"], "hosts": d["hosts"], "count": d["count"], "evidence": d["evidence"][:2]}


def attach(diagnoses: list[dict], notes: list[dict], events: Sequence, rules, matches: Sequence,
           order_key=None) -> tuple[list[dict], list[dict]]:
    """Add the family-level cards of the events no rule explains to a report's diagnoses and notes.

    Under a rule's root cause, family symptoms are folded as its symptoms and family root causes
    follow the rules' own. Without one, the first family root cause leads and the symptoms (the
    rules' and the families') fold under it; with neither, the symptoms stand on their own."""
    roots, symptoms, fnotes = family_cards(events, rules, matches, bool(diagnoses), order_key)
    if not (roots or symptoms or fnotes):
        return diagnoses, notes
    if diagnoses and diagnoses[0].get("role") == "root_cause":
        # next to a rule's root cause, only a message that names a cause of its own stands alone;
        # the rest (other ranks' reports, generic families) is folded under it
        own = [d for d in roots if d["id"].startswith("catalog:")]
        rest = [d for d in roots if not d["id"].startswith("catalog:")]
        diagnoses[0].setdefault("symptoms", []).extend(_compact(s) for s in rest + symptoms)
        diagnoses = diagnoses + own
    elif roots:
        primary = roots[0]
        primary["symptoms"] = [_compact(d) for d in diagnoses + symptoms]
        diagnoses = [primary] + roots[1:]
    else:
        # only symptoms: an error a message reports (a Gloo connect refused) before a rule's warning about what
        # followed it (the SIGABRT a launcher reported); otherwise the rules' own order, then the families'
        order = {"error": 0, "warning": 1}
        diagnoses = sorted(diagnoses + symptoms, key=lambda d: order.get(d.get("severity"), 2))
    return diagnoses, notes + fnotes
