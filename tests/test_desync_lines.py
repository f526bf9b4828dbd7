"""The desync report's lines pasted alone (TraceUtils.h, analyzeLaggingRanks): each item that names ranks is an
event the desync analysis reads, whatever was lost around it (the `Rank N` head, the tabs and the dash, the tail
` (count from 1)`), in a short paste or a long log read only on its candidate lines (issue 13)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.analysis import analyze
from logdoc.api import build_report
from logdoc.envelope import unwrap
from logdoc.pipeline import parse_sources

_FILLER = [f"step {i} | loss 2.31 | lr 3.0e-04" for i in range(1500)]

# (line, hung or straggling ranks, the sequence number the analysis names)
ITEMS = [
    ("[1] finished collective #1155873, but didn't join collective #1155874", "analysis.hung_rank", [1], 1155874),
    ("[1] finished collective #3, but didn't join collective #4 (count from 1)", "analysis.hung_rank", [1], 4),
    ("     [0, 3] finished collective #3, but didn't join collective #4 (count from 1)", "analysis.hung_rank", [0, 3], 4),
    ("  - [2] joined but didn't finish collective #7 (count from 1)", "analysis.straggler", [2], 7),
    ("[0, 2] joined but didn't finish collective #7", "analysis.straggler", [0, 2], 7),
]


@pytest.mark.parametrize("line, kind, ranks, seq", ITEMS)
@pytest.mark.parametrize("long", [False, True])
def test_a_desync_item_alone_names_its_ranks(line, kind, ranks, seq, long):
    lines = _FILLER[:700] + [line] + _FILLER[700:] if long else [line]
    got = parse_sources([("rank0.log", "\n".join(lines) + "\n")])
    items = [e for e in got.events if e.kind == "torch.desync_report"]
    assert len(items) == 1 and line.strip().endswith(items[0].text.strip().lstrip("- "))
    synth = [e for e in analyze(got.events).synthetic if e.kind == kind]
    assert [(e.fields["ranks"], e.fields["seq"]) for e in synth] == [(ranks, seq)]


def test_the_report_names_the_rank_that_never_joined():
    text = ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1155874, OpType=ALLREDUCE, "
            "NumelIn=9445376, NumelOut=9445376, Timeout(ms)=1800000) ran for 1800002 milliseconds before timing out.\n\n"
            "[1] finished collective #1155873, but didn't join collective #1155874\n")
    first = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"][0]
    assert first["id"] == "LD503" and "Rank 1" in first["title"]


def test_an_items_rank_list_is_no_mpich_prefix():
    env, msg = unwrap("[1] finished collective #3, but didn't join collective #4 (count from 1)")
    assert msg.startswith("[1] finished") and env.rank is None
    env, msg = unwrap("[3] RuntimeError: boom")   # MPICH's own prefix is still peeled
    assert env.rank == 3 and msg == "RuntimeError: boom"
