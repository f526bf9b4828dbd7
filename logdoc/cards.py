"""One card per cause: merge diagnoses that explain the same failure.

``diagnose`` gives one card per rule. Several rules often describe one cause: a SIGKILL seen by the
cross-rank analysis (LD715), by torchrun's summary (LD701) and by its "failed (exitcode: -9)" line
(LD702); a duplicate GPU in NCCL's WARN (LD410) and in the init lines (LD411). Two root-cause cards
are the same cause when

* they show the same log line as evidence (the same event), or
* they have the same category and one's ranks lie within the other's (the same process death, the
  same mismatch seen from the minority and from the whole job), or
* the later card says how a process died (SIGKILL, a signal) and names exactly the ranks the earlier
  card blames (a hung rank that its agent then killed).

The card that ``diagnose`` ranked first of the two (the most specific: a cross-rank finding that
names the origin before a per-rank report, see ``diagnose.rank_key``) keeps the lead; the others
become its symptoms, marked ``"same_cause": true``, with their own symptoms. Then the order is the
first failure, the other root causes by confidence, then the cards that are not root causes.

Two cards of different categories on the same line are not two views of one failure but two
readings of one message (``NET/IB : No device found.`` is a container without its RDMA devices, or
an ``NCCL_IB_HCA`` filter that keeps none): the later one is folded too, so that the line is
explained once, but marked ``"alternative": true``, and the reports show it as another reading to
check rather than as the same failure. A generic card (a family card, "a Python exception") is no
reading of its own: it stays the same failure.
"""
from __future__ import annotations

from typing import Any

MAX_SYMPTOM_EVIDENCE = 2
DEATHS = {"peer_process_died"}  # the categories whose cards say how a process ended


def _lines(card: dict[str, Any]) -> set[tuple[str, int]]:
    out = set()
    for e in card.get("evidence") or ():
        if e.get("file") is not None:
            out.add((e["file"], e.get("record_line") or e.get("line")))
            out.add((e["file"], e.get("line")))
    return out


def _alternative(lead: dict[str, Any], lead_lines: set, card: dict[str, Any]) -> bool:
    """Whether ``card`` reads the lead's own lines as another cause: another category, and neither card
    a generic one (a family card of the catalog annotations, a rule that says no more than "a Python
    exception"), which names no cause of its own to weigh against the other."""
    return (lead.get("category") != card.get("category") and bool(lead_lines & _lines(card))
            and not any(c.get("family") or c.get("_generic") for c in (lead, card)))


def _same_cause(lead: dict[str, Any], lead_lines: set, card: dict[str, Any]) -> bool:
    if lead_lines & _lines(card):
        return True
    a, b = set(lead.get("ranks") or ()), set(card.get("ranks") or ())
    if not a or not b:
        return False
    if card.get("category") in DEATHS and a == b:
        return True  # how the very processes the lead blames ended (a hung rank killed by its agent)
    return lead.get("category") == card.get("category") and (a <= b or b <= a)


def _as_symptom(card: dict[str, Any], alternative: bool = False) -> dict[str, Any]:
    out = {
        "id": card["id"], "title": card["title"], "category": card["category"], "severity": card["severity"],
        "ranks": card.get("ranks") or [], "hosts": card.get("hosts") or [], "count": card.get("count", 1),
        "evidence": (card.get("evidence") or [])[:MAX_SYMPTOM_EVIDENCE], "same_cause": True,
    }
    if alternative:
        out["alternative"] = True
    return out


def merge_cards(diagnoses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The diagnoses with every card that explains the same failure as an earlier one folded into
    it (see the module's docstring). The input order is ``diagnose``'s ranking."""
    leads: list[tuple[dict[str, Any], set]] = []
    out: list[dict[str, Any]] = []
    for card in diagnoses:
        if card.get("role") == "root_cause":
            for lead, lines in leads:
                if _same_cause(lead, lines, card):
                    lead["symptoms"] = list(lead.get("symptoms") or [])
                    known = {s["id"] for s in lead["symptoms"]}
                    lead["symptoms"].insert(0, _as_symptom(card, _alternative(lead, lines, card)))
                    lead["symptoms"].extend(s for s in card.get("symptoms") or () if s["id"] not in known)
                    lines |= _lines(card)
                    break
            else:
                leads.append((card, _lines(card)))
                out.append(card)
        else:
            out.append(card)
    if len(out) <= 2:
        return out
    first, rest = out[0], out[1:]
    roots = sorted((c for c in rest if c.get("role") == "root_cause"), key=lambda c: -(c.get("confidence") or 0))
    return [first, *roots, *(c for c in rest if c.get("role") != "root_cause")]
