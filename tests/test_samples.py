"""Golden tests: logdoc explain on every bundled sample says what its sample.yaml expects.

A failing golden test is a bug in logdoc or in the sample's expectation; never loosen it silently.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_paths

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))


@lru_cache(maxsize=1)
def rules():
    return load_rules()


@lru_cache(maxsize=None)
def report_for(path: Path) -> dict:
    return build_report(parse_paths([str(path)]), rules())


def meta(path: Path) -> dict:
    return yaml.safe_load((path / "sample.yaml").read_text(encoding="utf-8"))


def test_there_are_samples():
    assert len(SAMPLE_DIRS) >= 30


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_sample_metadata(sample):
    m = meta(sample)
    assert m["origin"] in ("real-run", "reconstructed")
    assert m["produced"]["how"]
    assert "expect" in m and isinstance(m["expect"].get("healthy"), bool)
    if not m["expect"]["healthy"]:
        assert m["expect"].get("category")
        assert m["expect"].get("rule"), "every failing sample names the rule logdoc must report"


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_sample_diagnosis(sample):
    expect = meta(sample)["expect"]
    report = report_for(sample)
    errors = [d for d in report["diagnoses"] if d["severity"] == "error"]
    if expect["healthy"]:
        assert errors == [], [d["id"] for d in errors]
        return
    assert report["diagnoses"], "no diagnosis at all"
    top = report["diagnoses"][0]
    summary = [(d["id"], d["category"], d["ranks"]) for d in report["diagnoses"]]
    assert top["category"] == expect["category"], summary
    assert top["id"] == expect["rule"], summary
    if expect.get("origin_ranks") is not None:
        assert top["ranks"] == sorted(expect["origin_ranks"]), summary
