"""Rank from paths only where the path can be trusted (logdoc/analysis/attribution.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from logdoc.analysis.attribution import path_info
from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_paths

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.mark.parametrize("name,rank,local_rank", [
    ("logs/rank3.log", 3, None),
    ("logs/train_rank7.out", 7, None),
    ("logs/rank_2/stdout.log", 2, None),              # a folder named exactly after the rank
    ("out/1/rank.5/stdout", 5, None),                 # Open MPI --output-filename
    ("logs/run1/attempt_0/3/stderr.log", None, 3),    # torchrun --log-dir
    ("run-rank0-validation/train.log", None, None),   # rankN inside a longer folder name
    ("exp_rank4_sweep/rank1.log", 1, None),           # the file's own name wins
    ("pp_rank1/train.log", None, None),
    ("logs/rank_2/node7/stdout.log", 2, None),       # the second folder up
    ("/home/rank24/jobs/run7/logs/train.log", None, None),     # the user's own tree further up
    ("/work/wt/rank24/samples/x/rank3.log", 3, None),
])
def test_trusted_path_layouts(name, rank, local_rank):
    info = path_info(name)
    assert (info.rank, info.local_rank) == (rank, local_rank)


def _report(path: Path) -> dict:
    return build_report(parse_paths([str(path)]), load_rules())


def test_a_folder_name_does_not_blame_rank_0_nor_call_other_logs_missing(tmp_path):
    d = tmp_path / "run-rank0-validation"
    d.mkdir()
    shutil.copy(SAMPLES / "gloo-detail-op-mismatch" / "rank3.log", d / "train.log")
    r = _report(d)
    assert r["diagnoses"][0]["ranks"] == [3]
    assert not [n for n in r["diagnoses"] + r["notes"] if n["id"] == "LD617"], [n["id"] for n in r["notes"]]


def test_a_file_name_never_overrides_the_ranks_its_lines_print(tmp_path):
    shutil.copy(SAMPLES / "gloo-detail-op-mismatch" / "rank3.log", tmp_path / "rank0.log")
    r = _report(tmp_path)
    assert r["diagnoses"][0]["ranks"] == [3]
    assert not [n for n in r["diagnoses"] + r["notes"] if n["id"] == "LD617"]
