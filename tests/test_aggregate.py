"""The aggregate store (logdoc/events.py ``Aggregates``): events alike across ranks are held once for
the work that depends only on what they say. The report must not change: every sample and a generated
50-rank job give the same JSON report with and without aggregation."""
from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from logdoc.api import build_report
from logdoc.events import Aggregates, Event, content_key
from logdoc.kb import load_rules, ruleset
from logdoc.pipeline import parse_paths

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIRS = sorted(p.parent for p in (ROOT / "samples").glob("*/sample.yaml"))


@lru_cache(maxsize=1)
def rules():
    return load_rules()


def _report(path: Path, aggregate: bool, monkeypatch) -> str:
    monkeypatch.setattr(ruleset, "AGGREGATE", aggregate)
    return json.dumps(build_report(parse_paths([str(path)], jobs=1), rules()), sort_keys=True, default=str)


def test_content_key_ignores_who_printed_it():
    a = Event("nccl.env", "INFO", "rank_0001.log", 7, "NCCL_IB_HCA set by environment to mlx5", rank=1, host="n1",
              pid=11, fields={"name": "NCCL_IB_HCA", "value": "mlx5", "dev": 1, "tid": 11})
    b = Event("nccl.env", "INFO", "rank_0009.log", 8, "NCCL_IB_HCA set by environment to mlx5", rank=9, host="n2",
              pid=99, fields={"name": "NCCL_IB_HCA", "value": "mlx5", "dev": 1, "tid": 99})
    c = Event("nccl.env", "INFO", "rank_0010.log", 8, "NCCL_IB_HCA set by environment to mlx4", rank=10,
              fields={"name": "NCCL_IB_HCA", "value": "mlx4", "dev": 2, "tid": 5})
    assert content_key(a) == content_key(b) != content_key(c)
    store = Aggregates([a, b, c])
    assert len(store) == 2
    g = store.of[id(b)]
    assert g.first is a and g.last is b and g.count == 2 and g.ranges() == [(1, 1), (9, 9)]


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_same_report_on_every_sample(sample, monkeypatch):
    assert _report(sample, True, monkeypatch) == _report(sample, False, monkeypatch)


def test_same_report_on_a_generated_job(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tests" / "perf"))
    import gen_logs

    gen_logs.job_folder(str(tmp_path / "job"), nranks=50, file_mb=0.01, seed=5)
    on = _report(tmp_path / "job", True, monkeypatch)
    assert on == _report(tmp_path / "job", False, monkeypatch)
    assert json.loads(on)["diagnoses"][0]["ranks"] == [16]
