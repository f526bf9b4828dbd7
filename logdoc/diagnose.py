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
from .kb import Match, RuleSet, card_title
from .lazyre import lazy_re

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
    # id(match) -> origin ranks, for the matches whose origin is not the rank that printed them
    origins: dict[int, list[int]] = field(default_factory=dict)

    def add(self, m: Match, origins: list[int]) -> None:
        self.matches.append(m)
        if origins != _own(m):  # (a job of many ranks: a list per match for nothing)
            self.origins[id(m)] = origins

    def origin_of(self, m: Match) -> list[int]:
        got = self.origins.get(id(m))
        return _own(m) if got is None else got

    @property
    def ranks(self) -> list[int]:
        """Where it started: the origin ranks each match names, else the ranks that printed it."""
        return sorted({r for m in self.matches for r in self.origin_of(m)})

    @property
    def reported_by(self) -> list[int]:
        return sorted({e.rank for m in self.matches for e in m.events if e.rank is not None})

    def hosts(self, rank_hosts: dict[int, tuple[str, ...]]) -> list[str]:
        """The hosts of the origin ranks (as the logs place them), else of the evidence."""
        hosts = {h for m in self.matches for h in (m.event.fields or {}).get("origin_hosts") or ()}
        if not hosts:
            hosts = {h for r in self.ranks for h in rank_hosts.get(r, ())}
        if not hosts:
            hosts = {e.host for m in self.matches for e in m.events if e.host}
        return sorted(hosts)


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [int(x) for x in value.replace(",", " ").split() if x.lstrip("-").isdigit()]
    if isinstance(value, (list, tuple, set)):
        return [i for v in value for i in _ints(v)]
    return []


_ADDR = lazy_re(r"\[?((?:\d{1,3}\.){3}\d{1,3}|[0-9a-fA-F:]+:[0-9a-fA-F:]*)\]?(?:<\d+>|:\d+)?$")


def address_index(events: list[Event]) -> dict[str, set[int]]:
    """Which ranks own which IP address, from the interfaces NCCL says it uses."""
    index: dict[str, set[int]] = {}
    for ev in events:
        if ev.rank is None:
            continue
        f = ev.fields or {}
        addrs = []
        if ev.kind == "nccl.net_socket":
            addrs = [i.get("addr") for i in f.get("interfaces") or ()]
        elif ev.kind == "nccl.bootstrap":
            addrs = [f.get("addr")]
        elif ev.kind == "nccl.net_ib":
            addrs = [f.get("oob_addr")]
        for a in addrs:
            if a:
                index.setdefault(a, set()).add(ev.rank)
    return index


def _resolve(value: Any, addrs: dict[str, set[int]]) -> list[int]:
    if isinstance(value, str):
        m = _ADDR.match(value.strip())
        if m and m.group(1) in addrs:
            return sorted(addrs[m.group(1)])
    return _ints(value)


def origin_ranks(m: Match, addrs: dict[str, set[int]] | None = None) -> list[int]:
    """The ranks a match blames. An ``analysis.*`` finding carries ``origin_ranks``; a rule can name
    the values that hold the origin (``origin: failed`` for a monitoredBarrier report printed by
    rank 0 about rank 1; ``origin: [rank, peer]`` for a message about a peer's address, which is
    mapped to the rank that owns it); otherwise it is the rank that printed the evidence."""
    fields = m.event.fields or {}
    if fields.get("origin_ranks"):
        return _ints(fields["origin_ranks"])
    names = m.rule.data.get("origin")
    if names:
        vals = m.values()
        found = [r for name in ([names] if isinstance(names, str) else names)
                 for r in _resolve(vals.get(name), addrs or {})]
        if found:
            return sorted(set(found))
    return _own(m)


def _own(m: Match) -> list[int]:
    """The rank that printed a match's event, as :func:`origin_ranks` names it when nothing else does."""
    return [m.event.rank] if m.event.rank is not None else []


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
        idx = len(lines) - 1 if (ev.get("kind") in _LAST_LINE_KINDS or lines[0].startswith("Traceback")
                                 or _FRAME_HEAD.match(lines[0])) else 0
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
_FRAME_HEAD = lazy_re(r"[ \t]*File \"")  # a traceback whose head a paste cut (logdoc/blocks.py FRAME_LINE)
_NCCL_HEAD = lazy_re(r"^.*?NCCL (?:WARN|INFO) ")


def _core(text: str) -> str:
    """A line without its NCCL header, to recognise the same message quoted elsewhere."""
    return _NCCL_HEAD.sub("", text).strip()


def _evidence(d: Diagnosis, at: dict[tuple[str, int], Event] | None = None) -> list[dict[str, Any]]:
    seen: set[tuple[str, int]] = set()
    out: list[dict[str, Any]] = []
    for m in d.matches:
        for ev_dict in _real_lines(m, at or {}):
            ev_dict = focus(ev_dict)
            k = (ev_dict["file"], ev_dict["line"])
            same_text = (ev_dict["file"], _core(ev_dict.get("text") or ""))
            if k in seen or same_text in seen:
                continue  # the same line, or PyTorch quoting NCCL's last WARN back
            seen.add(k)
            seen.add(same_text)
            out.append(ev_dict)
            if len(out) >= MAX_EVIDENCE:
                return out
    return out


def _real_lines(m: Match, at: dict[tuple[str, int], Event]) -> list[dict[str, Any]]:
    """The evidence of a match. A cross-rank finding is shown by the log lines it was drawn from,
    not by its own summary sentence (which the explanation already gives)."""
    rendered = m.render()["evidence"]
    if not m.event.kind.startswith("analysis."):
        return rendered
    lines = []
    for ref in (m.event.fields or {}).get("evidence") or ():
        try:
            ev = at.get((ref[0], int(ref[1])))
        except (TypeError, ValueError, IndexError):
            ev = None
        if ev is not None:
            lines.append({"file": ev.file, "line": ev.line, "rank": ev.rank, "host": ev.host, "kind": ev.kind,
                          "text": ev.text})
    return lines + rendered[1:] if lines else rendered


def _render(d: Diagnosis, rank_hosts: dict[int, tuple[str, ...]], folded: list[Diagnosis] | None = None,
            at: dict[tuple[str, int], Event] | None = None) -> dict[str, Any]:
    first = d.matches[0].render()
    first["title"] = card_title(d.matches)  # the ranks and hosts of every match, not the first's
    out = {
        "id": first["id"],
        "category": first["category"],
        "severity": d.severity,
        "role": first["role"],
        "title": first["title"],
        "confidence": first["confidence"],
        "ranks": d.ranks,
        "hosts": d.hosts(rank_hosts),
        "reported_by": d.reported_by,
        "finding": d.matches[0].event.text if d.matches[0].event.kind.startswith("analysis.") else None,
        "count": len(d.matches),
        "evidence": _evidence(d, at),
        "explanation": first["explanation"],
        "fix": first["fix"],
        "confirm": first["confirm"],
        "not_when": first["not_when"],
        "docs": first["docs"],
        "symptoms": [],
        "_keys": {(m.event.file, m.event.line, m.event.kind) for m in d.matches},
        "_generic": all(_generic(m) for m in d.matches),
    }
    for s in folded or []:
        sr = s.matches[0].render()
        sr["title"] = card_title(s.matches)
        out["symptoms"].append({
            "id": sr["id"], "title": sr["title"], "category": sr["category"], "severity": sr["severity"],
            "ranks": s.ranks, "hosts": s.hosts(rank_hosts), "count": len(s.matches), "evidence": _evidence(s, at)[:2],
        })
    return out


_FAILED = ("ERROR", "FATAL")


def _notice(ev: Event) -> bool:
    """A line its printer logged as a warning or a note (a c10 ``[W ...]``, a Python logger's WARNING):
    PyTorch, Gloo and the store retry after these. NCCL's WARN is its error level, so NCCL lines
    are never notices. In a log where nothing was logged as an error (no exception, no ``[E ...]``,
    no traceback), a rule that reads an error into notices alone says a warning: the IPv6 lookup
    warnings c10d prints while pods start, a client socket retrying a connection."""
    return ev.level in ("WARN", "INFO", "DEBUG") and not ev.kind.startswith(("nccl.", "analysis."))


_UNNAMED = "torch.exception"  # a Python exception whose message is no known format (docs/architecture.md)


def _vague(by_rule: dict[str, "Diagnosis"]) -> set[str]:
    """Rules whose diagnosis says less than another root cause of the same log, and so comes after it:

    * a carrier: each of its events quotes a message (``fields.nested_line``, :mod:`logdoc.nested`)
      that another root-cause rule explains (the exception that says "NCCL error" after the
      ``Last error:`` that says why);
    * an unnamed exception: each of its events is a Python exception whose message is no known
      format, while another root-cause rule explains a named message (an OOM, an illegal memory
      access, a duplicate GPU beat "a Python exception on rank ?").
    """
    roots = [d for d in by_rule.values() if d.role == "root_cause"]
    if len(roots) < 2:
        return set()
    explained: dict[str, set[tuple[str, int]]] = {}   # rule -> carriers (file, line) of its nested events
    named: set[str] = set()
    for d in roots:
        for m in d.matches:
            for ev in m.events:
                f = ev.fields or {}
                if f.get("nested_line") is not None:
                    explained.setdefault(d.rule_id, set()).add((ev.file, f["nested_line"]))
            if m.event.kind != _UNNAMED and not m.event.kind.startswith("analysis."):
                named.add(d.rule_id)
    out: set[str] = set()
    for d in roots:
        evs = [m.event for m in d.matches]
        others = [r for r in explained if r != d.rule_id]
        carried = {c for r in others for c in explained[r]}
        if carried and all((ev.file, ev.line) in carried for ev in evs):
            out.add(d.rule_id)
        elif all(ev.kind == _UNNAMED for ev in evs) and any(r != d.rule_id for r in named):
            out.add(d.rule_id)
    return out


def _carriers(by_rule: dict[str, "Diagnosis"], links: dict, events, matches, rules) -> set[str]:
    """Root-cause rules on unnamed exceptions each of whose events only carries a message that says more
    (:func:`logdoc.nested.carrier_links`): a message another rule explains, or an error no rule
    explains that a family card will (its catalog annotation is no note). Such a carrier is the
    evidence of that message (issue 13: a specific cause outranks a generic one), not a cause."""
    if not links:
        return set()
    from .nested import key as event_key

    # the root causes whose every match is a generic carrier first: the tables below (every matched
    # line, every failure of the job) only for those (a large job's watchdog cascade has none)
    cands = []
    for d in by_rule.values():
        if d.role != "root_cause":
            continue
        keys = [event_key(m.event) for m in d.matches]
        if all(k in links and _generic(m) for k, m in zip(keys, d.matches)):
            cands.append((d, keys))
    if not cands:
        return set()
    owner: dict[tuple, str] = {}
    for d in by_rule.values():
        if d.role in ("root_cause", "symptom"):
            for m in d.matches:
                owner.setdefault(event_key(m.event), d.rule_id)
    explained = {id(e) for m in matches for e in m.events}
    ann = getattr(rules, "annotations", None)
    resolver = rules.resolver() if ann is not None and hasattr(rules, "resolver") else None
    carded: set[tuple] = set()
    for ev in events:
        if id(ev) in explained or not (ev.level in _FAILED or ev.kind == "nccl.warn"):
            continue
        tid = resolver.catalog_id(ev) if resolver is not None else None
        a = ann.get(tid) if ann is not None and tid else None
        if a is None or a.role not in ("benign", "context"):
            carded.add(event_key(ev))
    out: set[str] = set()
    for d, keys in cands:
        carried = set().union(*(links[k] for k in keys))
        if any(owner.get(c, d.rule_id) != d.rule_id or c in carded for c in carried):
            out.add(d.rule_id)
    return out


_SEV_ORDER = {"error": 0, "warning": 1, "info": 2}


def _generic(m: Match) -> bool:
    """A match that says no more than "a Python exception": a rule on an unnamed exception that reads
    no wording of its message (no pattern, no catalog template), such as LD710."""
    return (m.event.kind == _UNNAMED and m.rule._pattern is None
            and not (m.rule.data.get("match") or {}).get("template"))


def _keys(d: dict[str, Any]) -> set[tuple]:
    """The events a rendered diagnosis stands for: a rule's matched events, a card's evidence lines."""
    if d.get("_keys"):
        return d["_keys"]
    return {(e.get("file"), e.get("record_line") or e.get("line"), e.get("kind")) for e in d.get("evidence") or ()}


def fold_carriers(diagnoses: list[dict[str, Any]], links: dict) -> list[dict[str, Any]]:
    """Each generic diagnosis (a card, a rule on unnamed exceptions) whose every event carries a message
    that another diagnosis of the report stands for (:func:`logdoc.nested.carrier_links`) is folded into that one as its symptom, which takes the
    carrier's place if it was ranked later: the DistBackendError's card into the card of the NCCL WARN
    under its ``Last error:``, "a Python exception" into the rule of the message it quotes."""
    from .cards import _as_symptom

    out = list(diagnoses)
    for _ in range(len(out)):
        folded = False
        for i, d in enumerate(out):
            ks = _keys(d)
            if (d.get("role") not in ("root_cause", "symptom") or not (d.get("family") or d.get("_generic"))
                    or not ks or not all(k in links for k in ks)):
                continue
            carried = set().union(*(links[k] for k in ks))
            for j, n in enumerate(out):
                if j == i or n.get("role") not in ("root_cause", "symptom"):
                    continue
                nk = _keys(n)
                if not (nk & carried) or any(k in links and not ks.isdisjoint(links[k]) for k in nk):
                    continue  # not what d carries, or n carries d back
                if _SEV_ORDER.get(n.get("severity"), 3) > _SEV_ORDER.get(d.get("severity"), 3):
                    continue
                known = {s["id"] for s in n.get("symptoms") or ()}
                extra = [s for s in d.get("symptoms") or () if s["id"] not in known and s["id"] != n["id"]]
                n["symptoms"] = [_as_symptom(d), *extra, *(n.get("symptoms") or ())]
                del out[i]
                if j > i:
                    out.remove(n)
                    out.insert(i, n)
                folded = True
                break
            if folded:
                break
        if not folded:
            break
    return out


def evidence_refs(events) -> set[tuple[str, int]]:
    """The ``(file, line)`` of every evidence line the synthetic ``events`` cite."""
    need: set[tuple[str, int]] = set()
    for ev in events:
        for ref in (ev.fields or {}).get("evidence") or ():
            try:
                need.add((ref[0], int(ref[1])))
            except (TypeError, ValueError, IndexError):
                continue
    return need


def diagnose(events: list[Event], rules: RuleSet, analysis=None) -> tuple[list[dict], list[dict], list]:
    """Return (diagnoses, notes, run problems) as JSON-ready dicts, most likely root cause first."""
    matches = rules.match(events)
    addrs = address_index(events)
    rank_hosts: dict[int, tuple[str, ...]] = {}   # a rank's hosts: one tuple per host for its ranks
    alone: dict[str, tuple[str]] = {}
    # the lines a cross-rank finding was drawn from (its evidence), shown in its place (_real_lines):
    # only those are looked up, not every line of the job
    need = evidence_refs(ev for ev in events if ev.kind.startswith("analysis."))
    at: dict[tuple[str, int], Event] = {}
    for ev in events:
        if need and not ev.kind.startswith("analysis."):
            k = (ev.file, ev.line)
            if k in need:
                at.setdefault(k, ev)
        if ev.rank is not None and ev.host and not ev.kind.startswith(("analysis.", "torchrun.")):
            hs = rank_hosts.get(ev.rank, ())
            if ev.host not in hs:
                rank_hosts[ev.rank] = hs + (ev.host,) if hs else alone.setdefault(ev.host, (ev.host,))
    by_rule: dict[str, Diagnosis] = {}
    for m in matches:
        d = by_rule.get(m.rule.id)
        if d is None:
            d = by_rule[m.rule.id] = Diagnosis(m.rule.id, m.rule.role, m.rule.severity)
        d.add(m, origin_ranks(m, addrs))
    for d in by_rule.values():
        d.matches.sort(key=lambda m: _order_key(analysis, m.event))
        d.first_key = _order_key(analysis, d.matches[0].event)
    if not any(ev.level in _FAILED for ev in events):
        for d in by_rule.values():
            if d.severity == "error" and all(_notice(m.event) for m in d.matches):
                d.severity = "warning"

    from .nested import carrier_links
    links = carrier_links(events)
    carriers = _carriers(by_rule, links, events, matches, rules)
    vague = _vague(by_rule) | carriers

    from .kb.specificity import explained, specificity
    # what another finding explains comes after it, and is no cause of its own (a launcher's exit
    # summary after the worker's own report, a cut traceback after its process's named error)
    later = explained(by_rule.values())
    carriers |= {r for r in later if by_rule[r].role == "root_cause"}

    def rank_key(d: Diagnosis) -> tuple:
        # What another finding explains after it; the most severe; the specific before the vague (_vague); earliest;
        # at the same moment a cross-rank finding (names the rank that started it) before a per-rank report of the
        # same thing; on one line the rule whose match stands on more evidence (kb/specificity.py); confidence, priority.
        r = d.matches[0].rule
        cross_rank = d.matches[0].event.kind.startswith("analysis.")
        return (d.rule_id in later, _SEVERITY.get(d.severity, 3), d.rule_id in vague, d.first_key, not cross_rank,
                -specificity(d.matches[0]), -r.confidence, -r.priority, d.rule_id)

    # a carrier whose message another diagnosis explains is that diagnosis's evidence, not a cause (nor is what another explains)
    roots = sorted((d for d in by_rule.values() if d.role == "root_cause" and d.rule_id not in carriers),
                   key=rank_key)
    symptoms = sorted((d for d in by_rule.values() if d.role == "symptom" or d.rule_id in carriers), key=rank_key)
    context = sorted((d for d in by_rule.values() if d.role == "context"), key=rank_key)

    diagnoses: list[dict] = []
    if roots:
        error_roots = [d for d in roots if d.severity == "error"]
        primary = error_roots[0] if error_roots else roots[0]
        # A cross-rank finding of the same category describes the same failure and names where it
        # started (the missing store host, the minority version): it leads.
        better = [d for d in roots if d.severity == primary.severity and d.matches[0].rule.category ==
                  primary.matches[0].rule.category and d.matches[0].event.kind.startswith("analysis.")]
        if better:
            primary = better[0]
        diagnoses.append(_render(primary, rank_hosts, folded=symptoms, at=at))
        diagnoses.extend(_render(d, rank_hosts, at=at) for d in roots if d is not primary)
    else:
        diagnoses.extend(_render(d, rank_hosts, at=at) for d in symptoms)
    for out in diagnoses:
        if out["id"] in carriers:
            out["role"] = "symptom"
    notes = [_render(d, rank_hosts, at=at) for d in context]
    # what no rule explains: a family-level card from the catalog annotations (logdoc/differential/)
    from .differential import attach
    diagnoses, notes = attach(diagnoses, notes, events, rules, matches, lambda ev: _order_key(analysis, ev))
    # one card per cause: the cards that explain the same event or death fold into the first (logdoc/cards.py)
    from .cards import merge_cards
    diagnoses = merge_cards(diagnoses)
    # a carrier (a generic exception, a DistBackendError's card) folds into what its message explains
    diagnoses = fold_carriers(diagnoses, links) if links else diagnoses
    for out in diagnoses + notes:
        out.pop("_keys", None)
        out.pop("_generic", None)
    # a generic first diagnosis: the next ranked causes right after it (logdoc/differential/candidates.py)
    from .differential.candidates import add_candidates

    lead = by_rule.get(diagnoses[0]["id"]) if diagnoses else None
    diagnoses = add_candidates(diagnoses, events, rules, lead.matches[0].event if lead is not None else None)
    return diagnoses, notes, list(rules.run_problems)
