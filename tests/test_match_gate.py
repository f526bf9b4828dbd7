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
