"""RuleSet.match tests a rule pattern's required literals inline before calling the rule (the first
test of ``_Pattern.search``, without the calls): the matches must be those of every rule tried on
every event of its kinds, on every sample."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from logdoc.analysis import analyze
from logdoc.kb import load_rules
from logdoc.kb.rule import _Job
from logdoc.pipeline import parse_paths

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@lru_cache(maxsize=1)
def rules():
    return load_rules()


def _plain(rs, events):
    job = _Job(events, rs.resolver())
    out = []
    for ev in events:
        cands = rs.rules_for(ev.kind)
        if rs._by_template and (ev.template or ev.level in ("WARN", "ERROR", "FATAL")):
            extra = {r.id: r for tid in job.ids(ev) for r in rs._by_template.get(tid, ())}
            cands = sorted([*cands, *extra.values()], key=lambda r: (-r.priority, r.id))
        for rule in cands:
            m = rule.match_event(ev, job)
            if m is not None:
                out.append((rule.id, ev.file, ev.line, m.span, m.groups))
    return out


def test_gated_match_is_the_plain_match_on_every_sample():
    rs = rules()
    total = 0
    for sample in sorted(p.parent for p in SAMPLES.glob("*/sample.yaml")):
        res = parse_paths([str(sample)], jobs=1)
        events = analyze(res.events, files=res.files).all_events
        got = [(m.rule.id, m.event.file, m.event.line, m.span, m.groups) for m in rs.match(events)]
        assert got == _plain(rs, events), sample.name
        total += len(got)
    assert total > 100


def test_scoped_lookup_is_every_event_compared():
    """``_Job.find`` reads a kind's events bucketed by what a scope compares (rank and attempt, host
    and pid, host, file): the candidates hold every event in scope, in the kind's order, and ``find``
    picks what comparing the event with every event of the kind picks; events with and without rank,
    host, pid and attempt."""
    import random

    from logdoc.events import Event
    from logdoc.kb.rule import _Clause, _in_scope

    rnd = random.Random(7)
    pick = rnd.choice
    events = [Event("x.a" if i % 3 else "x.b", "INFO", pick(["f0", "f1", "f2", "f3"]), rnd.randrange(500), "t",
                    rank=pick([None, 0, 1, 2]), host=pick([None, "", "h0", "h1"]), pid=pick([None, 10, 11]),
                    attempt=pick([None, 0, 1]))
              for i in range(300)]
    job = _Job(events)
    kind = job.by_kind("x.a")
    for scope in ("rank", "host", "file", "job"):
        clause = _Clause(("x.a",), None, None, scope, None)
        for ev in events:
            in_scope = [o for o in kind if _in_scope(scope, ev, o)]
            got = [o for o in job.scoped("x.a").candidates(scope, ev) if _in_scope(scope, ev, o)]
            assert got == in_scope, (scope, ev)
            plain = None
            for other in in_scope:
                key = (0 if other.file == ev.file else 1, abs(other.line - ev.line))
                if other is not ev and (plain is None or key < plain[0]):
                    plain = (key, other)
            found = job.find(clause, ev)
            assert (found[0] if found else None) is (plain[1] if plain else None), (scope, ev)


def test_matches_alike_share_their_groups_and_span_and_read_their_text():
    """A rule that fires on every rank: the matches' equal groups and spans are one object each (per
    job), a match's text is read from its event by its span, and different values stay apart."""
    from logdoc import kb
    from logdoc.events import Event

    rule, probs = kb.build_rule({
        "id": "ACME005", "category": "peer_process_died", "severity": "error", "role": "symptom",
        "title": "timeout {op}", "match": {"kind": "torch.watchdog_timeout",
                                           "pattern": "OpType=(?P<op>[A-Z]+)(?P<never>ZZZ)?"},
        "explanation": "e", "fix": ["f"], "confirm": ["c"], "examples": {"match": ["x"]}}, origin="user")
    assert rule is not None, probs
    ops = ["ALLREDUCE", "ALLREDUCE", "BROADCAST", "ALLREDUCE"]
    evs = [Event("torch.watchdog_timeout", "ERROR", f"r{r}.log", 1,
                 "".join([f"[Rank {r}] WorkNCCL(SeqNum=5, OpType=", op, ")"])) for r, op in enumerate(ops)]
    job = kb._Job(evs)
    ms = [rule.match_event(ev, job) for ev in evs]
    assert [m.groups for m in ms] == [{"op": op} for op in ops]
    assert ms[0].groups is ms[1].groups is ms[3].groups and ms[2].groups is not ms[0].groups
    assert ms[0].span == (28, 44) and ms[0].span is ms[1].span is ms[2].span
    assert [m.matched_text for m in ms] == [f"OpType={op}" for op in ops]
    assert [m.render()["title"] for m in ms] == [f"timeout {op}" for op in ops]
    other = kb._Job(evs[:1])  # another job holds its own
    assert rule.match_event(evs[0], other).groups is not ms[0].groups
