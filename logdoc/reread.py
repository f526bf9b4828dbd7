"""When no rule explains a job: its lines read once more as messages printed without their headers.

People paste the message they saw, not the line that carried it: ``Horovod has been shut down. This was
caused by an exception on one of the ranks ...`` without the ``HorovodInternalError: `` before it, an
errno text a program printed after words of its own, a message a launcher quoted. When the rules explain
nothing in a job, each line that holds a keyword but that no grammar understood (the parse keeps them:
:class:`logdoc.results.Unread`, the first line of each text; in a paste of a few lines, every line with a
word: the one line pasted may be the message alone, ``bind gave: Address already in use``) is read as the
message of an exception whose type line was lost (an event of kind ``torch.exception`` without ``exc_type``,
flagged ``bare``, its text the line as read, its rank and host those its envelope said as the line was first
read). A diagnosis is taken from that second reading only when a rule names the message by its words (a rule
with a pattern or catalog templates, or the family of an NCCL result named by NCCL's own words for it): the
readings of a kind alone (an exception of the program, a cut traceback) and the catalog, other family and
candidate cards are not, since any line that says "error" would give them. A line printed under a warning
level (its envelope's, or a ``[WARN]``/``[WARNING]`` tag of its own, as TensorRT-LLM's ``[WARN] CUDA IPC is not usable on this system: cudaErrorInvalidDevice:
101 ... falling back to NCCL``) still has its header, and the header says the program went on: it is not
read again as an exception whose type line was lost.
"""
from __future__ import annotations

from typing import Any

from .events import WHO, Event
from .lazyre import lazy_re
from .results import ParseResult

# the cards (not rules): what a message's family or its catalog entry says, candidates after a vague first diagnosis
_CARD = ("family:", "candidate:", "catalog:", "note:")
_MAX_LINE = 2000
# what the report says of such a diagnosis, and how much less sure it is than on the line as printed
READ_AS = ("read as a message printed without its header: nothing in the log as printed matched a rule, and this "
           "line's words are the message the rule names")
_DISCOUNT = 0.8
# a line's own warning tag: a leading run of bracketed tags one of which is the level (`[WARN] `,
# `[TensorRT-LLM][WARNING] `), or the bare level word before a colon or a blank (`WARNING: `)
_WARN_TAG = lazy_re(r"(?:\[[^\]\n]{0,40}\])*\[(?:WARN|WARNING)\]|(?:WARN|WARNING)[:\s]")
_WARN_LEVELS = frozenset({"WARN", "WARNING"})


def bare_events(result: ParseResult) -> list[Event]:
    """The lines of ``result`` that no grammar understood, read as exception messages without their type."""
    from .pipeline import _classify_text
    from .envelope import unwrap

    out: list[Event] = []
    for u in result.unrecognized:
        text = u.text
        if "\n" in text or len(text) > _MAX_LINE:
            continue
        env, msg = unwrap(text)
        msg = msg.strip()
        if not msg or _warned(msg, env, u.env):
            continue
        if u.env is not None:  # (the text was peeled of its envelope as it was read: what it said of who printed it)
            env = _with_who(env, u.env)
        parsed = _classify_text("RuntimeError: " + msg, env)
        if parsed is None:
            continue
        fields = {k: v for k, v in parsed.fields.items() if k != "exc_type"}
        fields["bare"] = True
        out.append(Event(parsed.kind, "ERROR", u.file, u.line, text, u.line, env.rank, env.local_rank,
                         env.node_rank, env.host, env.pid, env.time, parsed.template, fields))
    return out


def _warned(msg: str, *envs) -> bool:
    """Whether the line was printed under a warning level: an envelope's (as read now, or as peeled when the
    line was first read), or a warning tag at the head of its message."""
    return any(e is not None and e.level in _WARN_LEVELS for e in envs) or _WARN_TAG.match(msg) is not None


def _with_who(env, outer):
    """``env`` with what ``outer`` (the envelope peeled as the line was read) said of who printed the line."""
    from dataclasses import replace

    got = {k: getattr(outer, k) for k in WHO if getattr(env, k) is None and getattr(outer, k) is not None}
    return replace(env, **got) if got else env


def reread(result: ParseResult, events: list[Event], rules, analysis) -> tuple[list[dict], list[dict]] | None:
    """The diagnoses (and notes) of the job with its lines not understood read as bare messages; None when
    no rule names one of them by its words."""
    from .diagnose import diagnose

    bare = bare_events(result)
    # (a job nothing explains may be a large healthy one: the whole job is matched again only when a rule that names
    # its message by its words takes one of these lines on its own)
    if not bare or not (any(m.rule.names_words for m in rules.match(bare)) or _result_families(bare, rules)):
        return None
    at = {(e.file, e.line) for e in bare}
    diagnoses, notes, _ = diagnose(events + bare, rules, analysis)
    kept = [d for d in diagnoses if _specific(d, rules) and any((ev.get("file"), ev.get("line")) in at
                                                                 for ev in d.get("evidence") or ())]
    if not kept:
        return None
    for d in kept:
        d["read_as"] = "bare message"
        d["confidence"] = round(d["confidence"] * _DISCOUNT, 2)
        d["finding"] = READ_AS + (f"; {d['finding']}" if d.get("finding") else "")
    return kept, notes


def _specific(d: dict[str, Any], rules) -> bool:
    """A diagnosis of a rule that names its message by its words, or the card of an NCCL result's family (not another
    card, not a rule of a kind alone such as LD710's exception of the program or LD772's cut traceback)."""
    rid = str(d.get("id") or "")
    if rid.startswith("family:"):
        return rid[len("family:"):] in _result_ids(rules)
    if rid.startswith(_CARD):
        return False
    rule = rules.get(rid)
    return rule is not None and rule.names_words


def _result_ids(rules) -> frozenset[str]:
    """The message families that stand for an NCCL result (``nccl_result``): NCCL's own words for it
    (ncclGetErrorString's ``unhandled system error``) name the message as a rule's pattern does."""
    diffs = rules.differentials
    return frozenset(f.id for f in diffs.families if f.match.get("nccl_result")) if diffs is not None else frozenset()


def _result_families(bare: list[Event], rules) -> bool:
    """Whether one of ``bare`` is a message of an NCCL result's family."""
    from .differential.card import _family_for

    diffs = rules.differentials
    if diffs is None:
        return False
    ids = _result_ids(rules)
    for ev in bare:
        fam = _family_for(diffs, ev, frozenset({ev.template}) if ev.template else frozenset())
        if fam is not None and fam.id in ids:
            return True
    return False
