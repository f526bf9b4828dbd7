"""Of two rules that read the same line, the one whose match stands on more evidence comes first
(logdoc/kb/specificity.py, logdoc/diagnose.py's rank_key): each ``with`` event it requires. Confidence and
priority only break what evidence leaves equal."""
from __future__ import annotations

from pathlib import Path

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources

_CUMEM = ("node1:1234:1234 [0] NCCL INFO NCCL version {v}+cuda12.2\n"
          "node1:1234:1290 [0] include/alloc.h:56 NCCL WARN Cuda failure 2 'out of memory'\n")


def _ids(text: str, rules) -> list[str]:
    # the diagnoses in report order (a rule on the same line as the first folds under it as the same cause)
    return [d["id"] for d in build_report(parse_sources([("x.log", text)]), rules)["diagnoses"]]


@pytest.mark.parametrize("version, first", [("2.26.2", "LD415"), ("2.25.1", "LD415"), ("2.26.5", "LD802")])
def test_a_release_defect_confirmed_by_the_version_line_beats_the_generic_reading(version, first):
    # LD802 (any NCCL allocation failure, confidence 0.85) and LD415 (cuMem host allocation of 2.24.3-2.26.2,
    # confidence 0.6) read the same WARN line; the version line is evidence only LD415 stands on
    assert _ids(_CUMEM.format(v=version), kb.load_rules())[0] == first


_RULE = """\
  - id: {id}
    category: {category}
    severity: error
    role: root_cause
    title: "{id}"
    confidence: {confidence}
    match: {match}
    explanation: "{id}"
    fix: ["do something"]
    confirm: ["check something"]
{extra}    examples: {{match: ["h:1:2 [0] misc/x.cc:1 NCCL WARN frobnicate failed"]}}
"""


def _rules(tmp_path: Path, specific_match: str, extra: str = ""):
    body = "family: test\ndescription: test\nrules:\n" + _RULE.format(
        id="LD190", category="cuda_error_other", confidence=0.95, extra="",
        match="{kind: nccl.warn, pattern: 'frobnicate failed'}") + "\n" + _RULE.format(
        id="LD191", category="nccl_bug_or_version_specific", confidence=0.3, extra=extra, match=specific_match)
    d = tmp_path / "rules"
    d.mkdir()
    (d / "test.yaml").write_text(body, encoding="utf-8")
    rs = kb.load_rules(extra_dirs=[d])
    assert not [p for p in rs.problems if "test.yaml" in p], rs.problems
    return rs


_LINE = "h:1:2 [0] misc/x.cc:1 NCCL WARN frobnicate failed\n"
_VERSION = "h:1:1 [0] NCCL INFO NCCL version {}+cuda12.2\n"


def test_a_required_with_event_outranks_confidence(tmp_path):
    rs = _rules(tmp_path, "{kind: nccl.warn, pattern: 'frobnicate failed', with: {kind: nccl.version, scope: job}}")
    assert _ids(_VERSION.format("2.21.5") + _LINE, rs)[0] == "LD191"


def test_an_optional_with_event_is_no_evidence_the_rule_stands_on(tmp_path):
    rs = _rules(tmp_path, "{kind: nccl.warn, pattern: 'frobnicate failed', "
                          "with: {kind: nccl.version, scope: job, optional: true}}")
    assert _ids(_VERSION.format("2.21.5") + _LINE, rs)[0] == "LD190"


@pytest.mark.parametrize("version", ["2.21.5", None])
def test_a_version_in_applies_to_alone_is_no_evidence(tmp_path, version):
    # most ranges say when a wording exists, which the line itself shows (LD805's NVLS bind failure is
    # >=2.17 and still comes after LD804's reading of the CUDA error it quotes)
    rs = _rules(tmp_path, "{kind: nccl.warn, pattern: 'frobnicate failed'}",
                extra="    applies_to: {nccl: '>=2.20,<2.22'}\n")
    assert _ids((_VERSION.format(version) if version else "") + _LINE, rs)[0] == "LD190"
