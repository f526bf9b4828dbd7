"""Progress per rank and communicator from NCCL's collective-launch lines (logdoc/analysis/collectives.py),
and the lines that say a job was stopped from outside (logdoc/stops.py)."""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from logdoc.analysis import analyze
from logdoc.analysis.collectives import labels, launch_of, progress_table
from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_sources, parse_text
from logdoc.resources import data_dir
from logdoc.stops import classify

ROOT = Path(__file__).resolve().parents[1]


def run(files: dict[str, str], reduce: bool = False):
    res = parse_sources(list(files.items()), reduce=reduce)
    return analyze(res.events, res.files)


def found(a, kind):
    return [e for e in a.synthetic if e.kind == kind and (e.fields.get("source") or "").startswith("nccl_")]


def init(host, pid, dev, rank, comm, cid, n=2, ts=None):
    pre = f"[{ts:%Y-%m-%d %H:%M:%S}] " if ts else ""
    return (f"{pre}{host}:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRankConfig comm {comm} rank {rank} nranks {n} "
            f"cudaDev {dev} nvmlDev {dev} busId {0x18000 + dev * 0x1000:x} commId {cid} - Init COMPLETE")


def coll(host, pid, dev, op, comm, n=2, ts=None, name="AllReduce", count=262144):
    pre = f"[{ts:%Y-%m-%d %H:%M:%S}] " if ts else ""
    return (f"{pre}{host}:{pid}:{pid} [{dev}] NCCL INFO {name}: opCount {op:x} sendbuff 0x7f3c4a000000 recvbuff "
            f"0x7f3c4a000000 count {count} datatype 7 op 0 root 0 comm {comm} [nranks={n}] stream 0x55d0c9b0c000")


def job(ops: dict[int, int], n=None, comm_ids=("0x3f2a9c1d7e6b5a41",), times=None):
    """One log per rank; ``ops[rank]`` collectives launched on every communicator in ``comm_ids``."""
    n = n or len(ops)
    files = {}
    for r, k in ops.items():
        lines = []
        for c, cid in enumerate(comm_ids):
            lines.append(init("gpu1", 500 + r, r, r, f"0x55{r:02x}{c:02x}c0e0f0a0", cid, n=n))
        for i in range(k if isinstance(k, int) else max(k)):
            for c, cid in enumerate(comm_ids):
                kk = k if isinstance(k, int) else k[c]
                if i < kk:
                    ts = times(r, i) if times else None
                    lines.append(coll("gpu1", 500 + r, r, i, f"0x55{r:02x}{c:02x}c0e0f0a0", n=n, ts=ts))
        files[f"rank{r}.log"] = "\n".join(lines) + "\n"
    return files


# -- reading the lines ------------------------------------------------------------------------------

def _catalog_formats():
    out = []
    with open(Path(data_dir("grammars")) / "nccl_messages.tsv", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 6 and ("opCount %lx sendbuff" in parts[5] or parts[5].startswith("nccl%s(")):
                out.append((parts[0], parts[1], parts[2], parts[5]))
    return out


FORMATS = _catalog_formats()


def test_catalog_has_every_launch_format():
    fmts = {f for _, _, _, f in FORMATS}
    assert any(f.startswith("%s: opCount") and "%zu" in f for f in fmts)   # 2.22+
    assert any(f.startswith("%s: opCount") and "%zi" in f for f in fmts)   # 2.4 - 2.21
    assert any(f.startswith("AllReduce: opCount") for f in fmts)           # 2.3 names the collective
    assert any(f.startswith("nccl%s(") for f in fmts)                      # CALL lines, 2.13+


@pytest.mark.parametrize("tid,levels,first,fmt", FORMATS, ids=[f[0] for f in FORMATS])
def test_every_release_launch_format_is_read(tid, levels, first, fmt):
    if fmt.startswith("nccl%s("):
        line = "gpu1:501:501 NCCL CALL ncclAllReduce(7f3c4a000000,7f3c4a000000,262144,7,0,0,0x55a1c0e0f0a0,0x55d0c9b0c000)"
        want = {"coll": "AllReduce", "op_count": None, "count": 262144, "datatype": 7, "comm": "0x55a1c0e0f0a0"}
    else:
        name = fmt.split(":", 1)[0] if not fmt.startswith("opCount") else None
        name = "ReduceScatter" if name == "%s" else name
        value = {"coll": "ReduceScatter", "opCount": "1f", "sendbuff": "0x7f3c4a000000", "recvbuff": "0x7f3c4a000000",
                 "count": "262144", "size": "1048576", "datatype": "7", "op": "0", "root": "0",
                 "comm": "0x55a1c0e0f0a0", "nranks": "2", "stream": "0x55d0c9b0c000"}
        values = iter([value[k] for k in labels(fmt)])
        msg = re.sub(r"%[a-z]+", lambda m: next(values), fmt)
        line = f"gpu1:501:501 [0] NCCL INFO {msg}"
        want = {"coll": name or "collective", "op_count": 0x1F, "count": 262144, "datatype": 7,
                "comm": "0x55a1c0e0f0a0", "nranks": 2}
    evs = parse_text(line).events
    assert len(evs) == 1, line
    la = launch_of(evs[0])
    assert la is not None, (evs[0].kind, evs[0].template, evs[0].fields.get("format"))
    for k, v in want.items():
        assert la[k] == v, (k, la)


def test_labels_name_values_by_the_word_before_them():
    assert labels("%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p "
                  "[nranks=%d] stream %p") == ["coll", "opCount", "sendbuff", "recvbuff", "count", "datatype", "op",
                                               "root", "comm", "nranks", "stream"]


# -- findings --------------------------------------------------------------------------------------------

def test_rank_behind_is_named_with_the_last_collective_each_side_reached():
    a = run(job({0: 3, 1: 4}))
    [h] = found(a, "analysis.hung_rank")
    assert h.fields["ranks"] == [0] and h.fields["waiting_ranks"] == [1]
    assert h.fields["op_count"] == "3" and h.fields["behind_op_count"] == {0: "2"}
    assert h.fields["comm_id"] == "0x3f2a9c1d7e6b5a41"
    assert "rank 1 waits in AllReduce opCount 3" in h.text and "rank 0 reached AllReduce opCount 2" in h.text
    assert "no timestamps" in h.text


def test_equal_counts_give_nothing():
    a = run(job({0: 4, 1: 4, 2: 4, 3: 4}))
    assert not found(a, "analysis.hung_rank") and not found(a, "analysis.straggler")
    table = progress_table(a.job)
    assert [row["last"] for row in table[0]["rows"]] == [3, 3, 3, 3]


def test_more_ranks_behind_than_in_front_is_not_named():
    # one rank ran ahead (host-side enqueue is asynchronous): the three behind are not all hung
    a = run(job({0: 5, 1: 4, 2: 4, 3: 4}))
    assert not found(a, "analysis.hung_rank")


def test_communicators_are_tied_by_comm_id_not_by_pointer():
    # two communicators per process; rank 1 is behind on the second one only
    a = run(job({0: (6, 6), 1: (6, 5)}, comm_ids=("0x1111aaaa2222bbbb", "0x3333cccc4444dddd")))
    [h] = found(a, "analysis.hung_rank")
    assert h.fields["comm_id"] == "0x3333cccc4444dddd" and h.fields["ranks"] == [1]


def test_straggler_from_times_and_hang_from_times():
    t0 = dt.datetime(2026, 11, 30, 9, 0, 0)
    # rank 0 launches each collective 5 s after rank 1 and keeps going: a straggler
    a = run(job({0: 6, 1: 7}, times=lambda r, i: t0 + dt.timedelta(seconds=6 * i + (5 if r == 0 else 0))))
    [s] = found(a, "analysis.straggler")
    assert s.fields["ranks"] == [0] and s.fields["lag_seconds"] == {0: 5}
    assert not found(a, "analysis.hung_rank")
    # same progress, never late before, then nothing for 30 min while a scheduler stops the job
    files = job({0: 6, 1: 7}, times=lambda r, i: t0 + dt.timedelta(seconds=6 * i))
    files["slurm.out"] = "slurmstepd: error: *** JOB 77 ON gpu1 CANCELLED AT 2026-11-30T09:40:00 DUE TO TIME LIMIT ***\n"
    a = run(files)
    [h] = found(a, "analysis.hung_rank")
    assert h.fields["ranks"] == [0] and "hung: its last launch was" in h.text
    assert "time limit" in h.fields["stopped_by"]
    assert not found(a, "analysis.straggler")


def test_call_lines_with_init_call_are_counted():
    def call_log(r, k):
        lines = [f"gpu1:{500 + r}:{500 + r} NCCL CALL ncclCommInitRank(0x55{r}0c0e0f0a0, 2, 0x8a3b2c1d4e5f6071, {r}, {r})"]
        lines += [f"gpu1:{500 + r}:{500 + r} NCCL CALL ncclAllReduce(7f3c4a000000,7f3c4a000000,1024,7,0,0,"
                  f"0x55{r}0c0e0f0a0,0x55d0c9b0c000)"] * k
        return "\n".join(lines) + "\n"
    a = run({"rank0.log": call_log(0, 9), "rank1.log": call_log(1, 8)})
    [h] = found(a, "analysis.hung_rank")
    assert h.fields["source"] == "nccl_call" and h.fields["comm_id"] == "0x8a3b2c1d4e5f6071"
    assert h.fields["ranks"] == [1]


def test_digest_path_keeps_what_the_analysis_needs():
    # the CLI folds bulk lines; launches keep their last ones per communicator, so both paths agree
    t0 = dt.datetime(2026, 11, 30, 9, 0, 0)
    files = job({0: 300, 1: 301}, times=lambda r, i: t0 + dt.timedelta(seconds=6 * i + (5 if r == 0 else 0)))
    raw, red = run(files), run(files, reduce=True)
    for a in (raw, red):
        [s] = found(a, "analysis.straggler")
        assert s.fields["ranks"] == [0] and s.fields["op_count"] == f"{300:x}"


SAMPLES = {
    "nccl-straggler-opcount-time-limit": ("LD520", [0]),
    "nccl-hang-rank-behind-time-limit": ("LD519", [2]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_name_the_culprit_and_the_stop(name):
    from logdoc.pipeline import parse_paths

    rule, ranks = SAMPLES[name]
    rep = build_report(parse_paths([str(ROOT / "samples" / name)], jobs=1), load_rules())
    top = rep["diagnoses"][0]
    assert (top["id"], top["ranks"]) == (rule, ranks)
    assert any(n["id"] == "LD521" for n in rep["notes"]), [n["id"] for n in rep["notes"]]


# -- stopped from outside ----------------------------------------------------------------------------

STOPS = [
    ("slurmstepd: error: *** STEP 1234.0 ON node1 CANCELLED AT 2026-11-29T17:05:00 DUE TO TIME LIMIT ***",
     "slurm", "time_limit", "WARN"),
    ("slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2026-11-29T17:05:00 DUE TO PREEMPTION ***",
     "slurm", "preempted", "WARN"),
    ("slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2026-11-29T17:05:00 ***", "slurm", "cancelled", "WARN"),
    ("slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2026-11-29T17:05:00 DUE TO NODE FAILURE ***",
     "slurm", "node_fail", "ERROR"),
    # slurmstepd's whole sentence for a node failure (src/slurmd/slurmstepd/req.c) and srun's own report of it, as a
    # Jean Zay job log shows them
    ("slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, SEE"
     " SLURMCTLD LOG FOR DETAILS ***", "slurm", "node_fail", "ERROR"),
    ("srun: error: Node failure on jean-zay-iam37", "srun", "node_fail", "ERROR"),
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have been OOM Killed.",
     "slurm", "oom", "ERROR"),
    ("srun: error: node1: task 3: Killed", "srun", "killed", "ERROR"),
    ("srun: error: node1: tasks 0-3: Terminated", "srun", "terminated", "WARN"),
    ("srun: error: node1: task 0: Out Of Memory", "srun", "oom", "ERROR"),
    ("bash: line 1: 12345 Killed                  python train.py", "shell", "killed", "ERROR"),
    ("Killed", "shell", "killed", "ERROR"),
    ("Out of memory: Killed process 40311 (python) total-vm:81234560kB, anon-rss:61234560kB", "kernel", "oom", "ERROR"),
    ("      Reason:       OOMKilled", "kubernetes", "oom", "ERROR"),
    ("Status:           Failed", None, None, None),
    ("Warning  Evicted  2m  kubelet  The node was low on resource: memory. Container trainer was Killed",
     "kubernetes", "evicted", "WARN"),
    ("srun: error: node1: task 0: Exited with exit code 137", "exit_status", "killed", "ERROR"),
    # Open MPI's launcher, as mpirun and (5.x) prterun
    ("mpirun noticed that process rank 3 with PID 4242 on node node1 exited on signal 9 (Killed).", "mpirun", "killed", "ERROR"),
    ("prterun noticed that process rank 0 with PID 0 on node node1 exited on signal 15 (Terminated).", "prterun",
     "terminated", "WARN"),
]

# lines with no prefilter keyword: the classifier reads them, the prefilter does not let them through alone
QUIET_STOPS = [
    ("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", "step_aborted"),
    ("Process exited with exit code 137", "killed"),
    ("Reason:           Evicted", "evicted"),
]


@pytest.mark.parametrize("line,reason", QUIET_STOPS)
def test_stop_lines_the_classifier_reads(line, reason):
    assert classify(line).fields["reason"] == reason


@pytest.mark.parametrize("line,source,reason,level", STOPS, ids=[s[0][:40] for s in STOPS])
def test_stop_lines(line, source, reason, level):
    evs = parse_text(line + "\n").events
    if source is None:
        assert evs == []
        return
    assert [e.kind for e in evs] == ["job.stopped"], line
    f = evs[0].fields
    assert (f["source"], f["reason"], evs[0].level) == (source, reason, level)


@pytest.mark.parametrize("line", [
    "Epoch 3: the learning rate killed the loss",
    "Killed 3 stale workers, continuing",
    "exit code 0",
    "step 137 loss 0.25",
    "The job was CANCELLED by the user yesterday",
    "mpirun noticed that process rank 1 with PID 77 on node node1 exited on signal 11 (Segmentation fault).",
])
def test_not_stop_lines(line):
    assert classify(line) is None


def test_prefilter_lets_stop_lines_through():
    from logdoc import stops
    from logdoc.read import prefilter

    assert set(stops.KEYWORDS) <= set(prefilter.KEYWORDS)
    for line, source, _, _ in STOPS:
        if source is not None:
            assert prefilter.candidate(line), line


def test_stopped_with_equal_counts_is_a_note_not_a_diagnosis():
    t0 = dt.datetime(2026, 11, 30, 9, 0, 0)
    files = job({0: 6, 1: 6}, times=lambda r, i: t0 + dt.timedelta(seconds=6 * i))
    files["slurm.out"] = "slurmstepd: error: *** JOB 77 ON gpu1 CANCELLED AT 2026-11-30T09:40:00 DUE TO TIME LIMIT ***\n"
    rep = build_report(parse_sources(list(files.items())), load_rules())
    assert [d for d in rep["diagnoses"] if d["severity"] == "error"] == []
    assert not [d for d in rep["diagnoses"] if d["id"] in ("LD519", "LD520")]
    assert [n["id"] for n in rep["notes"]] == ["LD521"]


def test_mpirun_names_the_rank_it_saw_killed():
    from logdoc import kb
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources
    text = "mpirun noticed that process rank 3 with PID 4242 on node node1 exited on signal 9 (Killed).\n"
    d = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"][0]
    assert (d["id"], d["ranks"]) == ("LD523", [3])
