"""ProcessGroupNCCL's options in every release's wording: torch 1.10 - 2.0's block (a header, then one
``NAME: value`` line per option: logdoc.blocks joins it), 2.1's one line (``initialization options:NCCL_...``)
and 2.2+'s ``initialization options`` / ``environments`` lines give the same facts (timeout_ms,
async_error_handling, blocking_wait), on the fast path and on the plain one."""
from __future__ import annotations

from pathlib import Path

import pytest

from logdoc import fast, pipeline
from logdoc.blocks import BlockAssembler
from logdoc.classify.torch import classify
from logdoc.events import Envelope
from logdoc.read.source import Source

HEAD = "ProcessGroupNCCL initialized with following options:"
OPTIONS_1_12 = ["NCCL_ASYNC_ERROR_HANDLING: 1", "NCCL_DESYNC_DEBUG: 0", "NCCL_BLOCKING_WAIT: 0", "TIMEOUT(ms): 1800000",
                "USE_HIGH_PRIORITY_STREAM: 0"]
OPTIONS_2_0 = OPTIONS_1_12 + [" TORCH_DISTRIBUTED_DEBUG: OFF", " NCCL_DEBUG: INFO"]
ONE_LINE_2_1 = ("[Rank 0] ProcessGroupNCCL initialization options:NCCL_ASYNC_ERROR_HANDLING: 1, NCCL_DESYNC_DEBUG: 0, "
                "NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0, "
                "TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: INFO, ID=94235")
FACTS = {"timeout_ms": 1800000, "async_error_handling": 1, "blocking_wait": 0}


def _records(lines):
    ba = BlockAssembler()
    recs = []
    for i, (env, text) in enumerate(lines, 1):
        recs.extend(ba.feed(i, env, text))
    recs.extend(ba.flush())
    return sorted(recs, key=lambda r: r.line)


def _facts(parsed):
    return {k: parsed.fields.get(k) for k in FACTS}


@pytest.mark.parametrize("options", [OPTIONS_1_12, OPTIONS_2_0])
def test_the_block_is_one_record_with_the_one_line_forms_facts(options):
    head = Envelope(level="I", source="ProcessGroupNCCL.cpp:665", pid=7)
    after = Envelope(level="I", source="ProcessGroupNCCL.cpp:842", pid=7)
    lines = [(head, f"[Rank 0] {HEAD}")] + [(Envelope(), o) for o in options]
    lines.append((after, "[Rank 0] NCCL watchdog thread started!"))
    recs = _records(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, len(options) + 1), (len(options) + 2, len(options) + 2)]
    p = classify(recs[0].text, recs[0].env)
    assert (p.kind, p.fields["pg_rank"], _facts(p)) == ("torch.pg_info", 0, FACTS)
    assert p.fields.get("debug") == ("OFF" if options is OPTIONS_2_0 else None)
    one = classify(ONE_LINE_2_1, Envelope(level="I"))
    assert (one.kind, one.template, _facts(one)) == ("torch.pg_info", p.template, FACTS)


def test_the_block_ends_at_the_first_other_line_and_ranks_keep_their_options():
    a, b = (Envelope(level="I", source="ProcessGroupNCCL.cpp:482", pid=p) for p in (11, 12))
    lines = [(a, f"[Rank 3] {HEAD}"), (Envelope(), "NCCL_ASYNC_ERROR_HANDLING: 0"), (Envelope(), "TIMEOUT(ms): 5000"),
             (b, f"[Rank 1] {HEAD}"), (Envelope(), "NCCL_ASYNC_ERROR_HANDLING: 1"), (Envelope(), "TIMEOUT(ms): 7000"),
             (Envelope(), "epoch 1 loss 0.3")]
    recs = _records(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 6), (7, 7)]
    got = [_facts(classify(r.text, r.env)) for r in recs[:2]]
    assert got == [{"timeout_ms": 5000, "async_error_handling": 0, "blocking_wait": None},
                   {"timeout_ms": 7000, "async_error_handling": 1, "blocking_wait": None}]


def test_the_later_lines_name_the_same_facts():
    env = Envelope(level="I")
    p = classify("[PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL initialization options: size: 2, global rank: 0, "
                 "TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0", env)
    assert p.fields["timeout_ms"] == 600000
    e = classify("[PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL environments: NCCL version: 2.21.5, "
                 "TORCH_NCCL_ASYNC_ERROR_HANDLING: 3, TORCH_NCCL_ENABLE_TIMING: 0, TORCH_NCCL_BLOCKING_WAIT: 1, "
                 "TORCH_DISTRIBUTED_DEBUG: OFF, TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK: 0, "
                 "TORCH_NCCL_TRACE_BUFFER_SIZE: 0, TORCH_NCCL_NAN_CHECK: 0, TORCH_NCCL_CUDA_EVENT_CACHE: 1", env)
    assert (e.fields["async_error_handling"], e.fields["blocking_wait"]) == (3, 1)


def test_the_header_alone_or_joined_to_its_first_option_is_no_options_record():
    # (a paste that glued the first option to the header: the old wording never printed them on one line)
    assert classify(f"[Rank 0] {HEAD} NCCL_ASYNC_ERROR_HANDLING: 0", Envelope(level="I")).template is None
    assert classify(f"[Rank 0] {HEAD}", Envelope(level="I")).template is None


def test_fast_and_plain_paths_read_the_blocks_alike(tmp_path: Path):
    lines = []
    for n in range(40):
        r = n % 4
        lines.append(f"I0719 10:50:33.{n:06d} {2000 + r} ProcessGroupNCCL.cpp:482] [Rank {r}] {HEAD}")
        lines += OPTIONS_2_0 if n % 3 else OPTIONS_1_12
        lines += [f"step {n} loss 0.{n}", f"[I ProcessGroupNCCL.cpp:842] [Rank {r}] NCCL watchdog thread started!"]
    p = tmp_path / "job.log"
    p.write_text("\n".join(lines) + "\n")
    got = []
    for on in (False, True):
        with fast.switched(on):
            res = pipeline.parse_sources([Source(str(p), path=str(p), every_line=False)])
        got.append(([e.to_dict() for e in res.events], res.stats.to_dict()))
    assert got[0] == got[1]
    infos = [e for e in got[0][0] if e["kind"] == "torch.pg_info"]
    assert len(infos) == 40 and all(e["fields"]["timeout_ms"] == 1800000 for e in infos)
    assert got[0][1]["not_understood"] == 0


def test_two_ranks_blocks_interleaved_under_torchrun_tee(tmp_path: Path):
    lines = [f"[default{r}]:I0719 10:50:33.48571{r} 21940{r} ProcessGroupNCCL.cpp:482] [Rank {r}] {HEAD}" for r in (0, 1)]
    for a, b in zip(OPTIONS_1_12, ["NCCL_ASYNC_ERROR_HANDLING: 0", "NCCL_DESYNC_DEBUG: 0", "NCCL_BLOCKING_WAIT: 1",
                                   "TIMEOUT(ms): 600000", "USE_HIGH_PRIORITY_STREAM: 0"]):
        lines += [f"[default0]:{a}", f"[default1]:{b}"]
    lines.append("[default0]:step 1 loss 2.3")
    p = tmp_path / "job.log"
    p.write_text("\n".join(lines) + "\n")
    for on in (False, True):
        with fast.switched(on):
            res = pipeline.parse_sources([Source(str(p), path=str(p), every_line=False)])
        got = [(e.line, e.end_line, e.local_rank, {k: e.fields.get(k) for k in FACTS}) for e in res.events]
        assert got == [(1, 11, 0, FACTS), (2, 12, 1, {"timeout_ms": 600000, "async_error_handling": 0, "blocking_wait": 1})]
        assert res.stats.not_understood == 0
