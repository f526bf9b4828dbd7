"""Digests and the bounded event store: the same diagnoses as the raw logs.

For every sample: explain on the raw logs, on the raw logs with bulk noise folded (what the CLI
does), and on a digest of the sample folder (alone, and mixed with nothing else) give the same
diagnosis ids, categories and ranks, in the same order. The same holds on generated job logs that
fold a lot (a dense NCCL_DEBUG=INFO log, a job folder with one failing rank).
"""
from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from logdoc import digest
from logdoc.api import build_report
from logdoc.events import Event
from logdoc.pipeline import parse_paths

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))
sys.path.insert(0, str(Path(__file__).parent / "perf"))


@lru_cache(maxsize=1)
def rules():
    from logdoc.kb import load_rules

    return load_rules()


def _summary(report: dict) -> list[tuple]:
    return [(d["id"], d["category"], d["ranks"], d["severity"], d["role"]) for d in report["diagnoses"]]


def _three_ways(paths: list[str], tmp_path: Path) -> tuple[list, list, list, dict]:
    full = parse_paths(paths)
    folded = parse_paths(paths, reduce=True)
    out = tmp_path / "node.json"
    digest.write(folded, str(out), inputs=paths)
    from_digest = parse_paths([str(out)])
    return (_summary(build_report(full, rules())), _summary(build_report(folded, rules())),
            _summary(build_report(from_digest, rules())), json.loads(out.read_text()))


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_sample_same_diagnoses_raw_folded_digest(sample, tmp_path):
    raw, folded, from_digest, d = _three_ways([str(sample)], tmp_path)
    assert folded == raw
    assert from_digest == raw
    assert d["schema"] == digest.SCHEMA
    assert d["files"] and d["stats"]["lines_read"] > 0


def test_digest_keeps_events_unchanged_and_stats(tmp_path):
    sample = SAMPLES / "nccl-ib-completion-error-12"
    folded = parse_paths([str(sample)], reduce=True)
    out = tmp_path / "d.json"
    digest.write(folded, str(out))
    back = parse_paths([str(out)])
    assert [e.to_dict() for e in back.events] == [e.to_dict() for e in folded.events]
    assert back.stats.to_dict() == folded.stats.to_dict()
    assert back.files == folded.files
    assert [(u.file, u.line) for u in back.unrecognized] == [(u.file, u.line) for u in folded.unrecognized]


def test_digests_of_two_nodes_mixed_with_a_raw_log(tmp_path):
    sample = SAMPLES / "nccl-ib-completion-error-12"
    logs = sorted(str(p) for p in sample.glob("*.log"))
    assert len(logs) >= 2
    raw = _summary(build_report(parse_paths(logs), rules()))
    d0 = tmp_path / "node0.json"
    digest.write(parse_paths(logs[:1], reduce=True), str(d0))
    mixed = _summary(build_report(parse_paths([str(d0)] + logs[1:]), rules()))
    assert mixed == raw


def test_digest_is_recognised_by_content_not_name(tmp_path):
    folded = parse_paths([str(SAMPLES / "nccl-socket-fallback")], reduce=True)
    out = tmp_path / "whatever.log"
    digest.write(folded, str(out))
    assert digest.is_digest(out.read_bytes()[:256])
    assert len(parse_paths([str(out)]).events) == len(folded.events)
    not_digest = tmp_path / "x.json"
    not_digest.write_text('{"schema": "logdoc.report/1", "diagnoses": []}\n')
    assert not digest.is_digest(not_digest.read_bytes())


def test_bad_digest_is_skipped_with_a_reason(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "logdoc.digest/1", "events": [')
    res = parse_paths([str(bad)])
    assert res.events == []
    assert res.stats.skipped_files and "digest" in res.stats.skipped_files[0][1]
    future = tmp_path / "future.json"
    future.write_text('{"schema": "logdoc.digest/9", "events": []}')
    res = parse_paths([str(future)])
    assert "logdoc.digest/9" in res.stats.skipped_files[0][1]


def test_generated_job_folds_a_lot_and_says_the_same(tmp_path):
    import gen_logs

    dense = tmp_path / "dense.log"
    gen_logs.nccl_dense(str(dense), 30000, seed=8)
    raw, folded, from_digest, d = _three_ways([str(dense)], tmp_path)
    assert folded == raw == from_digest
    assert d["folded"] and sum(g["count"] - g["kept"] for g in d["folded"]) > 10000
    assert len(d["events"]) < 30000 / 3

    job = tmp_path / "job"
    info = gen_logs.job_folder(str(job), nranks=16, file_mb=0.3, seed=9)
    raw, folded, from_digest, d = _three_ways([str(job)], tmp_path)
    assert folded == raw == from_digest
    assert raw and raw[0][0] == "LD201" and raw[0][2] == [info["origin"]]
    size = sum(p.stat().st_size for p in job.iterdir())
    assert (tmp_path / "node.json").stat().st_size < size / 5


def test_reducer_folds_floods_and_keeps_first_and_last():
    r = digest.Reducer()
    for i in range(1, 1001):
        r.append(Event("torch.message", "WARN", "f", i, f"same thing {i}", template="t"))
    for i in range(1, 501):
        r.append(Event("nccl.info", "INFO", "f", 2000 + i, "x", host="h", pid=1, template=next(iter(digest.bulk_templates()))))
    evs = r.events()
    lines = [e.line for e in evs]
    assert lines[:digest.KEEP] == list(range(1, digest.KEEP + 1))
    assert 1000 in lines and 2001 in lines and 2500 in lines
    assert len(evs) == digest.KEEP + 1 + 2
    folded = r.folded("f")
    assert sorted(g["count"] for g in folded) == [500, 1000]


def test_reducer_keeps_a_warning_per_node_with_every_stream_first_and_last():
    r = digest.Reducer()
    line = 0
    for rep in range(20):
        for pid in range(32):  # 32 processes of one node repeat one warning, interleaved
            line += 1
            r.append(Event("nccl.warn", "WARN", "f", line, "Cuda failure 'out of memory'", host="h", pid=pid,
                           rank=pid, template="w"))
    evs = r.events()
    by_pid: dict[int, list[int]] = {}
    for e in evs:
        by_pid.setdefault(e.pid, []).append(e.line)
    assert sorted(by_pid) == list(range(32))  # every process's evidence is there: its first and last
    assert all(lines[0] == pid + 1 and lines[-1] == 19 * 32 + pid + 1 for pid, lines in by_pid.items())
    assert len(evs) == 2 * 32  # not KEEP + 1 per process
    assert sum(g["count"] for g in r.folded("f")) == 20 * 32


def test_store_lines_of_every_rank_in_one_paste_are_each_ranks_own_stream(tmp_path):
    """A paste of all ranks without prefixes: the store-based barrier's status line names the rank that prints
    it, so folding keeps each rank's (which ranks printed one names the missing rank; Lightning-AI/pytorch-lightning#4420)."""
    log = tmp_path / "log.txt"
    log.write_text("".join(
        f"INFO:root:Waiting in store based barrier to initialize process group for rank: {r}, key: store_based_barrier_key:1 "
        "(world_size=8, worker_count=7, timeout=0:30:00)\n" for r in (0, 2, 6, 1, 3, 7, 5, 0)))
    full, folded = parse_paths([str(log)]), parse_paths([str(log)], reduce=True)
    assert _summary(build_report(folded, rules())) == _summary(build_report(full, rules()))
    assert build_report(folded, rules())["diagnoses"][0]["ranks"] == [4]


def test_lightnings_start_lines_of_every_rank_are_each_ranks_own_stream(tmp_path):
    """Lightning's `initializing ddp: GLOBAL_RANK: r, ...` lines of all processes in one output: folding keeps each
    rank's, so how often each rank was announced is read (Lightning-AI/pytorch-lightning#4389)."""
    log = tmp_path / "log.txt"
    log.write_text("".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8\n" for r in (1, 1, 2, 2, 3, 3, 0, 0)))
    full, folded = parse_paths([str(log)]), parse_paths([str(log)], reduce=True)
    assert _summary(build_report(folded, rules())) == _summary(build_report(full, rules()))
    assert build_report(folded, rules())["diagnoses"][0]["id"] == "LD6080"


def test_streams_state():
    evs = [Event("nccl.info", "INFO", "a.log", 3, "x", host="h", pid=7, time="2026-01-01T00:00:01"),
           Event("nccl.warn", "WARN", "a.log", 9, "y", host="h", pid=7, time="2026-01-01T00:00:05")]
    (s,) = digest.streams(evs)
    assert s["first_line"] == 3 and s["last_line"] == 9 and s["last_kind"] == "nccl.warn"
    assert s["last_time"] == "2026-01-01T00:00:05" and s["levels"] == {"INFO": 1, "WARN": 1}


def test_gzip_digest(tmp_path):
    folded = parse_paths([str(SAMPLES / "nccl-ib-completion-error-12")], reduce=True)
    plain, packed = tmp_path / "n.json", tmp_path / "n.json.gz"
    digest.write(folded, str(plain))
    digest.write(folded, str(packed))
    assert packed.stat().st_size < plain.stat().st_size / 4
    assert digest.is_digest(packed.read_bytes()[:256])
    assert [e.to_dict() for e in parse_paths([str(packed)]).events] == [e.to_dict() for e in folded.events]


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_packed_events_come_back_equal(sample, tmp_path):
    """A digest writes its events without what can be rebuilt; reading gives them back unchanged,
    and a logdoc.digest/1 digest (every event in full) is still read the same."""
    folded = parse_paths([str(sample)], reduce=True)
    out = tmp_path / "d.json"
    digest.write(folded, str(out))
    want = [e.to_dict() for e in folded.events]
    assert [e.to_dict() for e in parse_paths([str(out)]).events] == want
    d = json.loads(out.read_text())
    full = dict(d, schema="logdoc.digest/1", events=want)
    full.pop("file_names")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(full))
    assert [e.to_dict() for e in parse_paths([str(old)]).events] == want
    if want:  # the events are what shrinks
        assert len(out.read_bytes()) < len(json.dumps(full, separators=(",", ":"), ensure_ascii=False).encode())


def test_second_generator_job_log_same_diagnoses_and_smaller(tmp_path):
    import gen_job_logs

    log = tmp_path / "job.log"
    gen_job_logs.generate("mixed", str(log), 0.6)
    raw, folded, from_digest, d = _three_ways([str(log)], tmp_path)
    assert raw and folded == raw == from_digest
    packed = (tmp_path / "node.json").stat().st_size
    full = len(json.dumps(dict(d, events=[e.to_dict() for e in parse_paths([str(tmp_path / "node.json")]).events]),
                          separators=(",", ":"), ensure_ascii=False).encode())
    assert packed < 0.8 * full


def test_a_damaged_packed_event_is_a_clear_skip(tmp_path):
    folded = parse_paths([str(SAMPLES / "nccl-socket-fallback")], reduce=True)
    out = tmp_path / "d.json"
    digest.write(folded, str(out))
    d = json.loads(out.read_text())
    d["events"][0]["f"] = 99
    out.write_text(json.dumps(d))
    res = parse_paths([str(out)])
    assert res.events == []
    assert "not a readable digest" in res.stats.skipped_files[0][1]


# -- collective launches fold into per-communicator progress (nccl.progress) --------------------

def _launch_job(ops: dict[int, int], times=None, call: bool = False, comms: int = 1) -> dict[str, str]:
    """One log per rank: an init line per communicator, then ``ops[rank]`` launches on each (opCount
    lines, or NCCL CALL lines), stamped when ``times(rank, i)`` gives a datetime."""
    files = {}
    n = len(ops)
    for r, k in ops.items():
        lines = []
        for c in range(comms):
            comm = f"0x55{r:02x}{c:02x}c0e0f0a0"
            cid = f"0x{c + 1:x}f2a9c1d7e6b5a41"
            if call:
                lines.append(f"gpu{r // 2}:{500 + r}:{500 + r} NCCL CALL ncclCommInitRank({comm}, {n}, {cid}, {r}, {r})")
            else:
                lines.append(f"gpu{r // 2}:{500 + r}:{500 + r} [{r}] NCCL INFO ncclCommInitRank comm {comm} rank {r} "
                             f"nranks {n} cudaDev {r} nvmlDev {r} busId 18000 commId {cid} - Init COMPLETE")
        for i in range(k):
            for c in range(comms):
                comm = f"0x55{r:02x}{c:02x}c0e0f0a0"
                pre = f"[{times(r, i):%Y-%m-%d %H:%M:%S}] " if times else ""
                name = ("AllReduce", "AllGather")[i % 3 == 2]
                if call:
                    lines.append(f"{pre}gpu{r // 2}:{500 + r}:{500 + r} NCCL CALL nccl{name}(7f3c4a000000,7f3c4a000000,"
                                 f"{1024 + i},7,0,0,{comm},0x55d0c9b0c000)")
                else:
                    lines.append(f"{pre}gpu{r // 2}:{500 + r}:{500 + r} [{r}] NCCL INFO {name}: opCount {i:x} sendbuff "
                                 f"0x7f3c4a000000 recvbuff 0x7f3c4a001000 count {1024 + i} datatype 7 op 0 root 0 "
                                 f"comm {comm} [nranks={n}] stream 0x55d0c9b0c000")
        files[f"rank{r}.log"] = "\n".join(lines) + "\n"
    return files


def _progress_view(paths: list[str]):
    from logdoc.analysis import analyze
    from logdoc.analysis.collectives import progress_table

    def view(res):
        a = analyze(res.events, res.files)
        found = [(e.kind, e.text, sorted((k, repr(v)) for k, v in e.fields.items())) for e in a.synthetic
                 if e.kind in ("analysis.hung_rank", "analysis.straggler")]
        return found, progress_table(a.job), _summary(build_report(res, rules()))

    return view


@pytest.mark.parametrize("case", ["hang", "straggler", "calls", "two-comms"])
def test_folded_launches_give_what_every_launch_gives(case, tmp_path):
    """Raw (every launch an event), folded (what explain does) and from a digest: the same hang and
    straggler findings (text, fields, evidence lines), the same progress table (launch counts
    included), the same diagnoses; the digest holds one nccl.progress per communicator and process."""
    import datetime as dt

    t0 = dt.datetime(2026, 11, 30, 9, 0, 0)
    if case == "hang":
        files = _launch_job({0: 400, 1: 400, 2: 371, 3: 400})
    elif case == "straggler":
        files = _launch_job({0: 300, 1: 301, 2: 301},
                            times=lambda r, i: t0 + dt.timedelta(seconds=6 * i + (4 if r == 0 else 0)))
    elif case == "calls":
        files = _launch_job({0: 250, 1: 243}, call=True)
    else:
        files = _launch_job({0: 200, 1: 200, 2: 180}, comms=2)
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    paths = [str(tmp_path)]
    full = parse_paths(paths)
    folded = parse_paths(paths, reduce=True)
    out = tmp_path.parent / f"{case}-node.json"
    digest.write(folded, str(out), inputs=paths)
    back = parse_paths([str(out)])
    view = _progress_view(paths)
    want = view(full)
    assert want[0], "the case must find something"
    assert view(folded) == want
    assert view(back) == want
    d = json.loads(out.read_text())
    progress = [e for e in d["events"] if e["kind"] == "nccl.progress"]
    per_comm = 2 if case == "two-comms" else 1
    assert len(progress) == len(files) * per_comm
    assert len(d["events"]) < sum(t.count("\n") for t in files.values()) / 10


def test_digest_size_does_not_grow_with_the_log(tmp_path):
    """The second generator's dense NCCL log (collective launches dominate): a log four times longer
    gives a digest of about the same size, under 100 kB compressed."""
    import gen_job_logs

    sizes = []
    for mb in (0.5, 2):
        log = tmp_path / f"nccl{mb}.log"
        gen_job_logs.generate("nccl", str(log), mb)
        out = tmp_path / f"nccl{mb}.json.gz"
        digest.write(parse_paths([str(log)], reduce=True), str(out))
        sizes.append(out.stat().st_size)
    assert sizes[1] < 100_000
    assert sizes[1] < 1.5 * sizes[0]


def test_compact_shares_repeated_strings_and_keeps_events_equal():
    """Many ranks' events repeat the same short strings; compact() makes them one object each and
    changes nothing else."""
    def ev(r):
        return Event("nccl.env", "INFO", f"rank{r}.log", 3, f"gpu-h100-000:{40 + r}:{40 + r} [0] NCCL INFO x",
                     host="".join(["gpu-", "h100-000"]), pid=40 + r, time="".join(["2026-11-30T09:", "00:00"]),
                     template="nccl.env", fields={"name": "".join(["NCCL_", "IB_HCA"]), "args": ["".join(["ml", "x5"])],
                                                  "long": "y" * 200 + str(r)})
    evs = [ev(r) for r in range(3)]
    assert evs[0].host is not evs[1].host  # built apart, as the parser builds them
    before = [e.to_dict() for e in evs]
    digest.compact(evs)
    assert [e.to_dict() for e in evs] == before
    assert evs[0].host is evs[1].host is evs[2].host
    assert evs[0].time is evs[2].time
    assert evs[0].fields["name"] is evs[1].fields["name"]
    assert evs[0].fields["args"][0] is evs[2].fields["args"][0]


def test_facts_fold_per_family_and_every_setting_is_kept():
    """An NCCL fact printed again by another thread of the process is the same fact; a family whose
    value keeps changing keeps its first FACT_KEEP lines and its last; every setting (nccl.env by
    name) keeps its own line."""
    r = digest.Reducer()
    line = 0
    for tid in (1, 2):
        for i in range(10):
            line += 1
            msg = f"NCCL_X{i} set by environment to 1"
            r.append(Event("nccl.env", "INFO", "f", line, f"h:1:{tid} [0] NCCL INFO {msg}", host="h", pid=1,
                           template="nccl.env", fields={"name": f"NCCL_X{i}", "value": "1", "message": msg}))
    for i in range(50):
        line += 1
        msg = f"[Proxy Service] Device 0 CPU core {i}"
        r.append(Event("nccl.info", "INFO", "f", line, f"h:1:1 [0] NCCL INFO {msg}", host="h", pid=1,
                       template="nccl.test-fact", fields={"message": msg}))
    evs = r.events()
    env = [e for e in evs if e.kind == "nccl.env"]
    assert sorted({e.fields["name"] for e in env}) == sorted(f"NCCL_X{i}" for i in range(10))
    assert len(env) == 20  # each setting once, and its last print (the other thread's)
    info = [e for e in evs if e.kind == "nccl.info"]
    assert [e.line for e in info] == [21, 22, 23, 24, line]
    assert sum(g["count"] for g in r.folded("f")) >= 50 - digest.FACT_KEEP


def _folded_digest_every(paths, tmp_path, monkeypatch):
    """The parse of ``paths`` with facts folded, the same read back from its digest, and the parse without
    any fold (facts.fold_unread off)."""
    from logdoc import facts

    folded = parse_paths(paths, reduce=True)
    out = tmp_path / "d.json"
    digest.write(folded, str(out))
    from_digest = parse_paths([str(out)], reduce=True)
    with monkeypatch.context() as m:
        m.setattr(facts, "fold_unread", list)
        every = parse_paths(paths, reduce=True)
    return folded, from_digest, every


@pytest.mark.parametrize("name", ["nccl-healthy-2node-16gpu-ib-gdr", "nccl-socket-fallback"])
def test_unread_facts_folded_give_the_same_report(name, tmp_path, monkeypatch):
    """logdoc/facts.py: the INFO facts nothing reads one by one are counted on the event before
    them; the whole report (counts per rank, file, attempt and source included) is the one every
    event gives, raw and from a digest written of the folded events."""
    from logdoc import facts

    folded, from_digest, every = _folded_digest_every([str(SAMPLES / name)], tmp_path, monkeypatch)
    assert len(folded.events) < len(every.events)
    assert sum(1 + e.folds for e in folded.events) == len(every.events)
    assert facts.fold_unread(list(folded.events)) == folded.events  # again: nothing changes
    want = json.dumps(build_report(every, rules()), sort_keys=True, default=str)
    assert json.dumps(build_report(folded, rules()), sort_keys=True, default=str) == want
    assert json.dumps(build_report(from_digest, rules()), sort_keys=True, default=str) == want


def _bar(line: int, done: int, elapsed: int, total: int = 1000, file: str = "r0.log") -> Event:
    pct = done * 100 // total
    text = f"Epoch 0: {pct:4d}%|{'#' * (pct // 10):10}| {done}/{total} [{elapsed // 60:02d}:{elapsed % 60:02d}<01:00,  1.27it/s]"
    return Event("app.progress", "INFO", file, line, text, template="logdoc:app:progress-bar",
                 fields={"desc": "Epoch 0", "percent": pct, "done": str(done), "total": str(total),
                         "elapsed_s": elapsed, "remaining_s": 60})


def test_progress_bar_lines_folded_keep_the_busy_checks_bar():
    """logdoc/facts.py: the lines of one bar of one process, one after the other, are one event that
    counts the others (Event.folds); the one kept is the one the busy-rank check would choose (the
    longest run unfinished, the first of equals), whichever of the two comes first."""
    from logdoc import facts

    evs = [_bar(1, 10, 300), _bar(2, 20, 300), _bar(3, 30, 400), _bar(4, 1000, 900), _bar(5, 40, 400)]
    out = facts.fold_unread(evs)
    assert [(e.line, e.folds) for e in out] == [(3, 4)]  # 400 s, its first line; 100% finished counts for nothing
    assert facts.fold_unread(list(out)) == out
    # another bar (another description), another file, or an event between: not folded
    other = _bar(2, 10, 300)
    other.text = other.text.replace("Epoch 0", "Evaluating")
    evs = [_bar(1, 10, 300), other, _bar(1, 10, 300, file="r1.log"),
           Event("nccl.env", "INFO", "r0.log", 3, "x"), _bar(4, 20, 300)]
    assert [e.folds for e in facts.fold_unread(evs)] == [0, 0, 0, 0, 0]


def test_progress_bars_folded_give_the_same_report(tmp_path, monkeypatch):
    """A job folder whose ranks print tqdm bars: the report with a bar's lines folded is the one every
    line gives (counts per rank, file, attempt and source included), raw and from a digest."""
    import gen_logs

    job = tmp_path / "job"
    gen_logs.job_folder(str(job), nranks=24, file_mb=0.01, seed=5)
    folded, from_digest, every = _folded_digest_every([str(job)], tmp_path, monkeypatch)
    bars = [e for e in folded.events if e.kind == "app.progress"]
    assert bars and sum(1 + e.folds for e in bars) > len(bars)
    assert sum(1 + e.folds for e in folded.events) == len(every.events)
    want = json.dumps(build_report(every, rules()), sort_keys=True, default=str)
    assert json.dumps(build_report(folded, rules()), sort_keys=True, default=str) == want
    assert json.dumps(build_report(from_digest, rules()), sort_keys=True, default=str) == want


def test_a_bar_folded_through_the_timeout_is_still_the_busy_rank(tmp_path, monkeypatch):
    """The busy-rank check (LD544) cites the same bar line whether a bar's lines are folded or not."""
    from logdoc import facts

    bar = "Tokenizing:  {p}%|██████████          | {d}/20000 [{e}<57:14, 3.88 examples/s]"
    wd = ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
          "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800328 milliseconds before timing out.")
    log = tmp_path / "rank1.log"
    log.write_text("\n".join([bar.format(p=30, d=6000, e="25:00"), bar.format(p=35, d=7000, e="30:01"),
                              bar.format(p=36, d=7200, e="30:01"), bar.format(p=37, d=7400, e="29:00"), wd]) + "\n")
    folded = parse_paths([str(log)], reduce=True)
    with monkeypatch.context() as m:
        m.setattr(facts, "fold_unread", list)
        every = parse_paths([str(log)], reduce=True)
    assert [(e.line, e.folds) for e in folded.events if e.kind == "app.progress"] == [(2, 3)]
    want = build_report(every, rules())
    got = build_report(folded, rules())
    assert got["diagnoses"][0]["id"] == "LD544"
    assert json.dumps(got["diagnoses"], sort_keys=True, default=str) == json.dumps(want["diagnoses"], sort_keys=True,
                                                                                  default=str)
