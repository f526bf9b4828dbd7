"""The ranks' ProcessGroupNCCL options compared (logdoc.analysis.pgoptions): a group's timeout and the
TORCH_NCCL_* settings torch prints, in every release's wording; a finding only where two processes printed
different values for the same fact."""
from __future__ import annotations

from logdoc.analysis import analyze
from logdoc.pipeline import parse_sources

OLD_HEAD = "ProcessGroupNCCL initialized with following options:"


def _options(r: int, timeout: int, pg: str = "0", desc: str = "default_pg") -> str:
    return (f"[rank{r}]:[I1205 10:00:0{r}.000000000 ProcessGroupNCCL.cpp:937] [PG ID {pg} PG GUID {pg}({desc}) Rank {r}] "
            f"ProcessGroupNCCL initialization options: size: 4, global rank: {r}, TIMEOUT(ms): {timeout}, "
            f"USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: {pg}\n")


def _environments(r: int, aeh: int = 3, debug: str = "OFF") -> str:
    # (2.3's wording: the dump and heartbeat settings still on this line; not the catalog's)
    return (f"[rank{r}]:[I1205 10:00:0{r}.000000000 ProcessGroupNCCL.cpp:946] [PG ID 0 PG GUID 0(default_pg) Rank {r}] "
            f"ProcessGroupNCCL environments: NCCL version: 2.20.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: {aeh}, "
            "TORCH_NCCL_DUMP_ON_TIMEOUT: 0, TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: 60000, TORCH_NCCL_DESYNC_DEBUG: 0, "
            f"TORCH_NCCL_ENABLE_TIMING: 0, TORCH_NCCL_BLOCKING_WAIT: 0, TORCH_DISTRIBUTED_DEBUG: {debug}, "
            "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK: 0, TORCH_NCCL_ENABLE_MONITORING: 1, "
            "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 480, TORCH_NCCL_TRACE_BUFFER_SIZE: 0, TORCH_NCCL_COORD_CHECK_MILSEC: 1000, "
            "TORCH_NCCL_NAN_CHECK: 0, TORCH_NCCL_CUDA_EVENT_CACHE: 0, TORCH_NCCL_LOG_CPP_STACK_ON_UNCLEAN_SHUTDOWN: 1\n")


def _watchdog(r: int, timeout: int, seq: int = 5) -> str:
    return (f"[rank{r}]:[E1205 10:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)={timeout}) "
            f"ran for {timeout + 12} milliseconds before timing out.\n")


def findings(files: dict[str, str]) -> dict[str, dict]:
    res = parse_sources(list(files.items()))
    a = analyze(res.events, list(res.files))
    return {e.fields["option"]: e for e in a.synthetic if e.kind == "analysis.pg_options_disagreement"}


def test_every_release_s_environments_line_is_read_as_the_options():
    res = parse_sources([("rank0.log", _environments(0, aeh=1))])
    (ev,) = res.events
    assert ev.kind == "torch.pg_info"
    assert ev.template == "torch:ProcessGroupNCCL:processgroupnccl-environments-nccl-version-torch-nccl-async"
    assert (ev.fields["async_error_handling"], ev.fields["blocking_wait"], ev.fields["debug"]) == (1, 0, "OFF")


def test_a_shorter_timeout_on_one_rank_that_fired_first():
    files = {f"rank{r}.log": _options(r, 1800000) for r in range(4)}
    files["rank2.log"] = _options(2, 300000) + _watchdog(2, 300000)
    got = findings(files)
    assert set(got) == {"TIMEOUT(ms)"}
    f = got["TIMEOUT(ms)"]
    assert f.fields["values"] == {"300000": [2], "1800000": [0, 1, 3]}
    assert (f.fields["pg"], f.fields["shortest_ms"], f.fields["short"], f.fields["fired_short"]) == ("0 (default_pg)", 300000, [2], True)
    assert f.rank == 2 and (f.file, f.line) == ("rank2.log", 2)  # the watchdog line leads the evidence
    assert "the watchdog of rank 2 fired first" in f.text


def test_the_longer_timeout_firing_is_no_cascade_from_the_shorter():
    files = {"rank0.log": _options(0, 300000), "rank1.log": _options(1, 1800000) + _watchdog(1, 1800000)}
    f = findings(files)["TIMEOUT(ms)"]
    assert f.fields["fired_short"] is False and f.fields["timed_out"] == [1]


def test_nothing_when_the_ranks_agree_or_one_rank_printed():
    assert findings({f"rank{r}.log": _options(r, 600000) + _environments(r) for r in range(3)}) == {}
    assert findings({"rank0.log": _options(0, 60000) + _environments(0, aeh=0)}) == {}


def test_groups_are_compared_with_themselves_only():
    # each rank runs a subgroup with its own (agreed) timeout beside the default group
    files = {f"rank{r}.log": _options(r, 1800000) + _options(r, 60000, pg="1", desc="undefined") for r in range(2)}
    assert findings(files) == {}
    files["rank1.log"] = _options(1, 1800000) + _options(1, 120000, pg="1", desc="undefined")
    f = findings(files)["TIMEOUT(ms)"]
    assert f.fields["pg"] == "1" and f.fields["values"] == {"60000": [0], "120000": [1]}


def test_settings_by_either_name_and_the_old_block():
    one_line = ("[Rank 0] ProcessGroupNCCL initialization options:NCCL_ASYNC_ERROR_HANDLING: 1, NCCL_DESYNC_DEBUG: 0, "
                "NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0, "
                "TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: INFO, ID=94235\n")
    assert "NCCL_ASYNC_ERROR_HANDLING" not in findings({"rank0.log": one_line, "rank1.log": _environments(1, aeh=1)})
    got = findings({"rank0.log": one_line, "rank1.log": _environments(1, aeh=0, debug="DETAIL")})
    assert got["NCCL_ASYNC_ERROR_HANDLING"].fields["values"] == {"0": [1], "1": [0]}
    assert got["TORCH_DISTRIBUTED_DEBUG"].fields["values"] == {"DETAIL": [1], "OFF": [0]}
    block = [f"I1205 10:00:00.000000 {2000 + r} ProcessGroupNCCL.cpp:665] [Rank {r}] {OLD_HEAD}\n"
             f"NCCL_ASYNC_ERROR_HANDLING: 1\nNCCL_DESYNC_DEBUG: 0\nNCCL_BLOCKING_WAIT: {int(r == 2)}\n"
             "TIMEOUT(ms): 1800000\nUSE_HIGH_PRIORITY_STREAM: 0\n" for r in range(3)]
    got = findings({f"rank{r}.log": t for r, t in enumerate(block)})
    assert set(got) == {"NCCL_BLOCKING_WAIT"} and got["NCCL_BLOCKING_WAIT"].fields["minority"] == [2]


def test_a_process_with_two_values_for_one_unnamed_group_is_left_out():
    # torch 2.1 names no group: a rank that printed two timeouts cannot say which group is which
    def line(r, t):
        return (f"[Rank {r}] ProcessGroupNCCL initialization options:NCCL_ASYNC_ERROR_HANDLING: 1, NCCL_DESYNC_DEBUG: 0, "
                f"NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): {t}, USE_HIGH_PRIORITY_STREAM: 0, "
                f"TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: INFO, ID=9423{r}\n")
    assert findings({"rank0.log": line(0, 1800000) + line(0, 60000), "rank1.log": line(1, 60000)}) == {}


# -- a watchdog read against the timeout its group printed ------------------------------------------------

def mismatches(files: dict[str, str]) -> list:
    res = parse_sources(list(files.items()))
    return [e for e in analyze(res.events, list(res.files)).synthetic if e.kind == "analysis.pg_timeout_mismatch"]


def test_a_watchdog_at_the_default_when_the_group_was_given_longer():
    files = {f"rank{r}.log": _options(r, 7200000) + _watchdog(r, 600000) for r in range(2)}
    (m,) = mismatches(files)
    assert (m.fields["timeout_ms"], m.fields["configured_ms"], m.fields["basis"]) == (600000, 7200000, "process")
    assert m.fields["ranks"] == [0, 1] and m.fields["default_timeout"] and m.fields["longer"]


def test_a_subgroup_at_the_default_beside_a_longer_default_group():
    sub = _options(0, 600000, pg="1", desc="undefined")
    (m,) = mismatches({"rank0.log": _options(0, 7200000) + sub + _watchdog(0, 600000)})
    assert m.fields["basis"] == "subgroup" and m.fields["pg"] == "0 (default_pg)"
    # a short timeout a subgroup was given on purpose is its own
    assert mismatches({"rank0.log": _options(0, 7200000) + sub.replace("600000", "120000") + _watchdog(0, 120000)}) == []


def test_a_rank_without_options_is_read_against_what_the_others_agree_on():
    (m,) = mismatches({"rank0.log": _options(0, 7200000), "rank1.log": _options(1, 7200000),
                       "rank2.log": _watchdog(2, 1800000)})
    assert (m.fields["basis"], m.fields["ranks"], m.fields["configured_ms"]) == ("job", [2], 7200000)
    assert mismatches({"rank0.log": _options(0, 7200000), "rank1.log": _options(1, 3600000),
                       "rank2.log": _watchdog(2, 1800000)}) == []  # (no agreed value to read it against)


def test_no_mismatch_at_the_group_s_own_timeout_or_without_options():
    assert mismatches({"rank0.log": _options(0, 600000) + _watchdog(0, 600000)}) == []
    assert mismatches({"rank0.log": _watchdog(0, 600000), "rank1.log": _watchdog(1, 600000)}) == []
