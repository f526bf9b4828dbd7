"""One registry of event kinds (logdoc/kinds.py): every kind that logdoc emits is registered with
the fields it carries, and every kind named in the code's kind sets or in a rule is registered."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logdoc import kb, kinds
from logdoc.analysis import analyze
from logdoc.pipeline import parse_paths
from logdoc.read.source import Source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _unregistered(events) -> list[str]:
    bad = []
    for e in events:
        allowed = kinds.fields(e.kind)
        if allowed is None:
            bad.append(f"{e.kind} (unregistered) at {e.file}:{e.line}")
            continue
        extra = set(e.fields) - allowed
        if extra:
            bad.append(f"{e.kind} carries unregistered fields {sorted(extra)} at {e.file}:{e.line}")
    return sorted(set(bad))


def _samples():
    return [p for p in sorted((ROOT / "samples").iterdir()) if p.is_dir() and not p.name.startswith("_")]


def test_every_kind_emitted_on_the_samples_is_registered_with_its_fields():
    bad = []
    for sample in _samples():
        r = parse_paths([str(sample)])
        a = analyze(r.events, files=r.files)
        bad += _unregistered(list(a.events) + list(a.synthetic))
    assert not bad, "\n".join(bad[:40])


def test_every_kind_emitted_on_rendered_catalog_lines_is_registered():
    from logdoc.pipeline import parse_sources
    from test_fastpath_prefilter import rendered_lines

    text = "\n".join(line for _, line in rendered_lines()) + "\n"
    r = parse_sources([Source("catalog.log", text=text)])
    assert len(r.events) > 3000
    bad = _unregistered(r.events)
    assert not bad, "\n".join(bad[:40])


def test_the_code_names_only_registered_kinds():
    from logdoc import digest, live
    from logdoc.analysis import cascade, common, job

    named = {
        "digest.BULK_KINDS": digest.BULK_KINDS, "digest.FACT_KINDS": digest.FACT_KINDS,
        "live.ABSENCE_KINDS": live.ABSENCE_KINDS, "job.WORK_KINDS": job.WORK_KINDS,
        "cascade._WRAPPERS": cascade._WRAPPERS, "cascade._SYMPTOM_KINDS": cascade._SYMPTOM_KINDS,
        "cascade._ROOT_KINDS": cascade._ROOT_KINDS, "common.WORKER_TORCHRUN_KINDS": common.WORKER_TORCHRUN_KINDS,
    }
    bad = [f"{where}: {k}" for where, ks in named.items() for k in ks if k not in kinds.KINDS]
    assert not bad, bad


def test_every_rule_names_registered_kinds():
    rules = kb.load_rules()
    assert len(rules.active()) > 100
    for rule in rules.active():
        for k in rule.kinds:
            assert kinds.is_registered(k), (rule.id, k)


def test_lint_rejects_a_rule_on_a_kind_nothing_emits(tmp_path):
    (tmp_path / "x.yaml").write_text(
        "rules:\n"
        "  - id: ACME101\n    category: cuda_oom\n    severity: error\n    role: root_cause\n"
        "    title: t\n    match: {kind: torch.blocking_wait_timeout}\n"
        "    explanation: e\n    fix: [f]\n    confirm: [c]\n")
    rules = kb.load_rules(extra_dirs=[str(tmp_path)])
    msgs = [str(p) for p in rules.problems]
    assert any("torch.blocking_wait_timeout" in m and "nothing emits it" in m for m in msgs), msgs


def test_lint_knows_the_fields_the_analysis_emits(tmp_path):
    """A placeholder of a field the analysis fills ({pg_id} on analysis.hung_rank) is not flagged."""
    (tmp_path / "x.yaml").write_text(
        "rules:\n"
        "  - id: ACME102\n    category: collective_timeout_hung_rank\n    severity: error\n    role: root_cause\n"
        "    title: 'hung in group {pg_id}'\n    match: {kind: analysis.hung_rank}\n"
        "    explanation: e\n    fix: [f]\n    confirm: [c]\n")
    rules = kb.load_rules(extra_dirs=[str(tmp_path)])
    assert not [p for p in rules.problems if "pg_id" in str(p)], [str(p) for p in rules.problems]


@pytest.mark.parametrize("kind", sorted(kinds.KINDS))
def test_every_registered_kind_has_a_producer_and_summary(kind):
    spec = kinds.KINDS[kind]
    assert (ROOT / spec.producer).exists() and spec.summary
