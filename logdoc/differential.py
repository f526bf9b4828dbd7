"""A family-level diagnosis for a failure no rule explains, with a ranked differential.

When an error-level event (an NCCL WARN, an ncclResult error, a torch ``Dist*Error``, a Gloo
enforce or I/O failure, a c10d store error ...) is matched by no rule, it still means something:
its catalog annotation (:mod:`logdoc.annotations`) gives a category, a role and a meaning, and the
differentials of ``knowledge/differentials/*.yaml`` give, per category and per message family,
the candidate causes, what in a log speaks for or against each (conditions on events, in the
rules' condition language) and the single cheapest check that tells it apart. This module tests
those conditions on this log, ranks the candidates and builds the card (a diagnosis dict of the
report, with ``differential: [{category, cause, for, against, check}]``). Benign and context
annotations become notes.

Every word shown comes from the YAML; this module only evaluates and assembles.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

SCHEMA = "logdoc.differentials/1"
FILE_KEYS = ("description", "generic", "categories", "families")
CAUSE_KEYS = ("category", "cause", "check", "for", "against")
COND_KEYS = ("kind", "template", "pattern", "fields", "hosts", "ranks", "absent", "says")
FAMILY_KEYS = ("id", "match", "role", "severity", "title", "explanation", "fix", "docs", "causes", "generic_causes")
FAMILY_MATCH_KEYS = ("kind", "template", "pattern", "fields", "level")
GENERIC_KEYS = ("title", "explanation", "note_title")
MAX_EVIDENCE = 4
QUOTE = 110
REPRESENTATIVES = 8  # lines of one repeated message that conditions look at


def _problem(file: str, line: int, message: str, level: str = "error"):
    from .kb.schema import Problem

    return Problem(file, line, None, message, level)


# --------------------------------------------------------------------------------------------
# conditions

class _Condition:
    """One ``for`` / ``against`` item: an event that must be (or, ``absent: true``, must not be) in
    the log, or a number of hosts / ranks; ``says`` is how it is shown."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        from .kb.conditions import _Cond
        from .kb.patterns import _Pattern
        from .kb.rule import _Clause

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
        from .kb.rule import _Job

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


# --------------------------------------------------------------------------------------------
# the knowledge

@dataclass
class Cause:
    category: str
    cause: str
    check: str
    for_: list[_Condition] = field(default_factory=list)
    against: list[_Condition] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Family:
    id: str
    match: dict[str, Any]
    data: dict[str, Any]
    causes: list[Cause]
    _clause: Any = None
    _templates: frozenset[str] = frozenset()


@dataclass
class Differentials:
    categories: dict[str, Cause] = field(default_factory=dict)
    families: list[Family] = field(default_factory=list)
    generic: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=lambda: {"categories": {}, "families": [], "generic": {}})
    problems: list = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **self.raw}

    @classmethod
    def from_json(cls, data: Any) -> "Differentials":
        out = cls()
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            out.problems.append(_problem("<compiled>", 0, f"not compiled differentials ({SCHEMA})"))
            return out
        _add_document(out, {k: data.get(k) for k in ("categories", "families", "generic") if data.get(k)},
                      {}, "<compiled>")
        return out


def load_differentials(d: str | Path, base: Differentials | None = None) -> Differentials:
    from .annotations import annotation_files
    from .kb.yamlfile import _load_yaml_file

    out = base or Differentials()
    for path in annotation_files(Path(d)):
        data, lines, problems = _load_yaml_file(path, fast=True)
        out.problems.extend(problems)
        if data is not None:
            _add_document(out, data, lines, str(path))
    return out


def _add_document(out: Differentials, data: Any, lines: Mapping[str, int], file: str) -> None:
    from .kb.schema import CATEGORIES

    if not isinstance(data, Mapping):
        out.problems.append(_problem(file, 1, "a differentials file is a mapping (categories, families)"))
        return
    for key in data:
        if key not in FILE_KEYS:
            out.problems.append(_problem(file, lines.get(str(key), 1), f"unknown top-level key {key!r}"))
    generic = data.get("generic") or {}
    if generic:
        if not isinstance(generic, Mapping) or any(k not in GENERIC_KEYS or not isinstance(v, str)
                                                    for k, v in generic.items()):
            out.problems.append(_problem(file, lines.get("generic", 1), f"generic maps {', '.join(GENERIC_KEYS)} to text"))
        else:
            out.generic.update(generic)
            out.raw["generic"].update(generic)
    cats = data.get("categories") or {}
    if not isinstance(cats, Mapping):
        out.problems.append(_problem(file, lines.get("categories", 1), "categories maps a category to its cause"))
        cats = {}
    for cat, spec in cats.items():
        where = f"categories.{cat}"
        if cat not in CATEGORIES:
            out.problems.append(_problem(file, lines.get(where, 1), f"unknown category {cat!r}"))
            continue
        cause = _cause(out, {"category": cat, **spec} if isinstance(spec, Mapping) else spec, lines, where, file)
        if cause is not None:
            if cat in out.categories:
                out.problems.append(_problem(file, lines.get(where, 1), f"category {cat} given twice"))
                continue
            out.categories[cat] = cause
            out.raw["categories"][cat] = dict(spec)
    fams = data.get("families") or []
    if not isinstance(fams, list):
        out.problems.append(_problem(file, lines.get("families", 1), "families must be a list"))
        fams = []
    known = {f.id for f in out.families}
    for i, spec in enumerate(fams):
        where = f"families.{i}"
        fam = _family(out, spec, lines, where, file)
        if fam is None:
            continue
        if fam.id in known:
            out.problems.append(_problem(file, lines.get(where, 1), f"family {fam.id} given twice"))
            continue
        known.add(fam.id)
        out.families.append(fam)
        out.raw["families"].append(dict(spec))


def _check_cond_spec(out: Differentials, spec: Any, lines, where: str, file: str) -> _Condition | None:
    from .kb.validate import _check_fields, _check_regex, _Checker, _kinds

    if not isinstance(spec, Mapping) or not spec.get("says"):
        out.problems.append(_problem(file, lines.get(where, 1), "a condition is a mapping with says and "
                                     "kind / template / pattern / fields / hosts / ranks"))
        return None
    ck = _Checker(file, {k[len(where) + 1:]: v for k, v in lines.items() if k.startswith(where + ".")},
                  lines.get(where, 1), None, "builtin")
    for key in spec:
        if key not in COND_KEYS:
            ck.err(key, f"unknown condition key {key!r}")
    if "kind" in spec:
        _kinds(ck, "kind", spec["kind"])
    if "pattern" in spec:
        _check_regex(ck, "pattern", spec["pattern"])
    if "fields" in spec:
        _check_fields(ck, "fields", spec["fields"], set())
    for key in ("hosts", "ranks"):
        if key in spec:
            _check_fields(ck, key, {"n": spec[key]} if isinstance(spec[key], Mapping) else {"n": {"eq": spec[key]}}, set())
    if "absent" in spec and not isinstance(spec["absent"], bool):
        ck.err("absent", "absent must be true or false")
    out.problems.extend(p for p in ck.problems)
    if ck.failed:
        return None
    return _Condition(spec)


def _cause(out: Differentials, spec: Any, lines, where: str, file: str) -> Cause | None:
    from .kb.schema import CATEGORIES

    line = lines.get(where, 1)
    if not isinstance(spec, Mapping):
        out.problems.append(_problem(file, line, "a cause is a mapping with category, cause, check, for, against"))
        return None
    bad = False
    for key in spec:
        if key not in CAUSE_KEYS:
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"unknown key {key!r}"))
            bad = True
    if spec.get("category") not in CATEGORIES:
        out.problems.append(_problem(file, line, f"unknown category {spec.get('category')!r}"))
        bad = True
    for key in ("cause", "check"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"missing {key} (one line of text)"))
            bad = True
    conds: dict[str, list[_Condition]] = {"for": [], "against": []}
    for key in ("for", "against"):
        items = spec.get(key) or []
        if not isinstance(items, list):
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"{key} must be a list of conditions"))
            bad = True
            continue
        for j, item in enumerate(items):
            c = _check_cond_spec(out, item, lines, f"{where}.{key}.{j}", file)
            if c is None:
                bad = True
            else:
                conds[key].append(c)
    if bad:
        return None
    return Cause(category=spec["category"], cause=spec["cause"].strip(), check=spec["check"].strip(),
                 for_=conds["for"], against=conds["against"], raw=dict(spec))


def _family(out: Differentials, spec: Any, lines, where: str, file: str) -> Family | None:
    from .kb.conditions import _Cond
    from .kb.patterns import _Pattern
    from .kb.rule import _Clause
    from .kb.schema import ROLES

    line = lines.get(where, 1)
    if not isinstance(spec, Mapping) or not isinstance(spec.get("id"), str):
        out.problems.append(_problem(file, line, "a family is a mapping with id, match, title, causes"))
        return None
    bad = False
    for key in spec:
        if key not in FAMILY_KEYS:
            out.problems.append(_problem(file, lines.get(f"{where}.{key}", line), f"unknown key {key!r}"))
            bad = True
    match = spec.get("match")
    if not isinstance(match, Mapping) or not match or any(k not in FAMILY_MATCH_KEYS for k in match):
        out.problems.append(_problem(file, lines.get(f"{where}.match", line),
                                     f"match is a mapping of {', '.join(FAMILY_MATCH_KEYS)}"))
        return None
    cond = _check_cond_spec(out, {**{k: v for k, v in match.items() if k != "level"}, "says": spec["id"]},
                            lines, f"{where}.match", file)
    if cond is None:
        bad = True
    if "role" in spec and spec["role"] not in ROLES:
        out.problems.append(_problem(file, lines.get(f"{where}.role", line), f"role must be one of {', '.join(ROLES)}"))
        bad = True
    if not isinstance(spec.get("title"), str):
        out.problems.append(_problem(file, line, "missing title"))
        bad = True
    causes = []
    for j, c in enumerate(spec.get("causes") or []):
        cause = _cause(out, c, lines, f"{where}.causes.{j}", file)
        if cause is None:
            bad = True
        else:
            causes.append(cause)
    docs = spec.get("docs") or []
    if not (isinstance(docs, list) and all(isinstance(d, Mapping) and set(d) == {"title", "url"} for d in docs)):
        out.problems.append(_problem(file, lines.get(f"{where}.docs", line), "docs is a list of {title, url}"))
        bad = True
    if bad or cond is None:
        return None
    return Family(id=spec["id"], match=dict(match), data=dict(spec), causes=causes, _clause=cond,
                  _templates=cond.templates)


# --------------------------------------------------------------------------------------------
# which events get a card

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
        if c.clause is not None and (c.clause.pattern is not None or c.clause.fields is not None):
            ok, _, _ = c.clause.accepts(ev)
            if not ok:
                continue
        return fam
    return None


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
    explained = {id(e) for m in matches for e in m.events}
    explained_lines = {(e.file, e.line) for m in matches for e in m.events}
    cards: dict[str, _Card] = {}
    notes: dict[str, _Card] = {}
    fam_memo: dict[tuple, Family | None] = {}
    for ev in events:
        if ev.kind.startswith("analysis.") or id(ev) in explained or (ev.file, ev.line) in explained_lines:
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


def _values(card: _Card) -> dict[str, Any]:
    from .kb.rule import _event_values

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
    from .kb.render import render_template

    evs = sorted(card.events, key=order_key) if order_key else list(card.events)
    card.events = evs
    vals = _values(card)
    a, fam = card.annotation, card.family
    # an annotated message speaks for itself unless a family has its own candidate list for it
    fdata = fam.data if fam is not None and (fam.causes or a is None) else {}
    differential = [] if note else rank_differential(_candidates(card, diffs), ctx)
    role = fdata.get("role") or (a.role if a is not None else None) or "root_cause"
    if note:
        title = render_template(diffs.generic.get("note_title") or "{meaning}", vals)
        severity = "info"
    else:
        title = render_template(fdata.get("title") or diffs.generic.get("title") or "{meaning}", vals)
        severity = fdata.get("severity") or ("error" if any(
            e.level in ("ERROR", "FATAL") or e.kind.startswith("nccl.") for e in evs) else "warning")
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
    evidence = []
    seen = set()
    for e in evs:
        k = (e.file, e.line)
        if k in seen:
            continue
        seen.add(k)
        evidence.append({"file": e.file, "line": e.line, "rank": e.rank, "host": e.host, "kind": e.kind,
                         "text": e.text})
        if len(evidence) >= MAX_EVIDENCE:
            break
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
        diagnoses = diagnoses + symptoms
    return diagnoses, notes + fnotes
