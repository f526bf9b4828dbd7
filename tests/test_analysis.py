"""Stage 6: reasoning across ranks (logdoc.analysis).

Scenarios are built from real-looking lines and parsed with ``parse_sources`` (what the CLI does), except
where a line kind is not produced by the parser yet (then the Event is built directly).
"""
from __future__ import annotations

import json

import pytest

from logdoc.analysis import analyze, path_info
from logdoc.analysis.common import ranks_text
from logdoc.analysis.timeline import Timeline, parse_stamp
from logdoc.events import Event
from logdoc.pipeline import parse_sources


def run(files: dict[str, str], extra_files: tuple[str, ...] = ()):
    res = parse_sources(list(files.items()))
    return analyze(res.events, list(res.files) + list(extra_files))


def kinds(a, kind: str) -> list[Event]:
    return [e for e in a.synthetic if e.kind == kind]


def at(a, file: str, needle: str) -> Event:
    for e in a.events:
        if e.file == file and needle in e.text:
            return e
    raise AssertionError(f"no event with {needle!r} in {file}")


# -- helpers -------------------------------------------------------------------------------------------

def test_ranks_text():
    assert ranks_text([7]) == "rank 7"
    assert ranks_text([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15]) == "ranks 0-6 and 8-15"
    assert ranks_text([1, 3, 5]) == "ranks 1, 3 and 5"


def test_path_info():
    assert path_info("logs/rank3.log").rank == 3
    assert path_info("job/rank_12/stdout.txt").rank == 12
    assert path_info("train_rank5.out").rank == 5
    assert path_info("pp_rank1_tp0.log").rank is None  # a pipeline rank is not a global rank
    p = path_info("logs/job42_f1y5/attempt_1/3/stderr.log")
    assert (p.local_rank, p.attempt, p.run, p.rank) == (3, 1, "job42_f1y5", None)
    assert path_info("logs/x/attempt_0/2/error.json").local_rank == 2
    p = path_info("debug/nccl.node-7.4242")
    assert (p.host, p.pid) == ("node-7", 4242)
    assert path_info("slurm-123456-4.out").node_rank == 4


# -- rank attribution -----------------------------------------------------------------------------------

NCCL_2PROC = """\
nodeA:1001:1001 [0] NCCL INFO comm 0x11 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START
nodeA:1001:1001 [0] NCCL INFO comm 0x22 rank 1 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE
nodeA:1002:1002 [1] NCCL INFO comm 0x33 rank 1 nranks 2 cudaDev 1 busId 2000 - Init START
nodeA:1002:1002 [1] NCCL INFO comm 0x44 rank 3 nranks 4 cudaDev 1 busId 2000 - Init COMPLETE
nodeB:1001:1001 [0] NCCL INFO comm 0x55 rank 0 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE

[2026-03-02 10:00:01] nodeA:1002:1090 [1] misc/socket.cc:66 NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.2<4000>
nodeA:1002:1090 [1] NCCL INFO misc/socket.cc:844 -> 6
"""


def test_nccl_host_pid_joined_with_world_comm_init():
    a = run({"console.log": NCCL_2PROC})
    warn = at(a, "console.log", "Connection closed")
    # pid 1002 is rank 1 of a 2-rank sub-communicator and rank 3 of the 4-rank world communicator
    assert (warn.rank, warn.rank_source) == (3, "nccl-init")
    assert warn.host == "nodeA"
    # the same pid on another host is another process
    b = at(a, "console.log", "comm 0x55")
    assert b.rank == 0
    ranks = {r["rank"]: r for r in a.anatomy["ranks"]}
    assert ranks[3]["bus_id"] == "2000" and ranks[3]["host"] == "nodeA"
    assert a.anatomy["world_size"] == 4


def test_envelope_beats_filename_and_filename_fills_the_rest():
    text0 = ("[W1129 17:02:34.306620559 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
             "127.0.0.1:29619 - retrying (try=0, timeout=10000ms, delay=4805ms): x\n")
    a = run({"logs/rank3.log": text0,
             "logs/rank4.log": "[rank2]:[E1129 17:01:53.685814139 ProcessGroupGloo.cpp:67] [Rank 2]: Rank 1 failed "
                               "to pass monitoredBarrier in 5000 ms\n"})
    e3 = a.events[0] if a.events[0].file == "logs/rank3.log" else a.events[1]
    assert (e3.rank, e3.rank_source) == (3, "filename")
    e4 = [e for e in a.events if e.file == "logs/rank4.log"][0]
    assert (e4.rank, e4.rank_source) == (2, "envelope")


def test_pg_prefix_only_for_default_group():
    text = (
        "[E ProcessGroupNCCL.cpp:1234] [PG ID 0 PG GUID 0(default_pg) Rank 5]  failure detected by watchdog at work "
        "sequence id: 9 PG status: last enqueued work: 9, last completed work: 8\n"
        "[E ProcessGroupNCCL.cpp:1234] [PG ID 1 PG GUID 1(mesh_pp) Rank 0]  failure detected by watchdog at work "
        "sequence id: 3 PG status: last enqueued work: 3, last completed work: 2\n"
    )
    a = run({"console.log": text})
    d, pp = a.events
    assert (d.rank, d.rank_source) == (5, "prefix")
    # rank 0 of mesh_pp is not global rank 0 ... but the console is one process, so the stream gives 5
    assert pp.rank == 5 and pp.rank_source == "stream"


def test_pg_rank_of_a_subgroup_is_not_a_global_rank():
    a = run({"a.log": "[E ProcessGroupNCCL.cpp:1] [PG ID 1 PG GUID 1(mesh_pp) Rank 0]  failure detected by watchdog "
                      "at work sequence id: 3 PG status: last enqueued work: 3, last completed work: 2\n",
             "b.log": "[E ProcessGroupNCCL.cpp:1] [PG ID 1 PG GUID 1(mesh_pp) Rank 1]  failure detected by watchdog "
                      "at work sequence id: 3 PG status: last enqueued work: 3, last completed work: 2\n"})
    assert [e.rank for e in a.events] == [None, None]
    assert [e.rank_source for e in a.events] == [None, None]


def test_bare_rank_prefix_trusted_when_job_has_one_group():
    a = run({"x.log": "[E ProcessGroupNCCL.cpp:632] [Rank 6] Watchdog caught collective operation timeout: "
                      "WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600010 "
                      "milliseconds before timing out.\n"})
    assert (a.events[0].rank, a.events[0].rank_source) == (6, "prefix")


def test_torchrun_tee_local_rank_with_rendezvous_result():
    # the agent's "Rendezvous complete" result (group_rank, local_ranks, global_ranks) maps [defaultN]:
    rdzv = Event(kind="torchrun.rendezvous", level="INFO", file="slurm-77-1.out", line=1, node_rank=1,
                 text="[default] Rendezvous complete for workers. Result:\n  restart_count=0\n  group_rank=1\n"
                      "  group_world_size=2\n  local_ranks=[0, 1]\n  global_ranks=[2, 3]\n")
    res = parse_sources([("slurm-77-1.out",
                          "\n1: [default1]:node1:601:601 [1] NCCL INFO cudaDriverVersion 12040\n"
                          "1: [default1]:[E1129 17:05:00.000000001 ProcessGroupNCCL.cpp:632] [PG ID 1 PG GUID 1(x) "
                          "Rank 0]  failure detected by watchdog at work sequence id: 3\n")])
    a = analyze([rdzv] + res.events, res.files)
    ev = [e for e in a.events if e.kind == "nccl.info"][0]
    assert (ev.rank, ev.rank_source, ev.local_rank, ev.node_rank) == (3, "torchrun", 1, 1)
    assert rdzv.rank is None  # the agent's own line is no rank's


def test_torchrun_logdir_tree_and_child_failed_summary():
    console = """\
E1129 22:52:37.722000 26163 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 1 (pid: 26169) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/bin/torchrun", line 8, in <module>
    sys.exit(main())
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_22:52:37
  host      : node9.cluster.local
  rank      : 4 (local_rank: 0)
  exitcode  : -15 (pid: 26168)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 26168
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_22:52:37
  host      : node9.cluster.local
  rank      : 5 (local_rank: 1)
  exitcode  : 1 (pid: 26169)
  error_file: /tmp/torchelastic_x/none_1dq/attempt_0/1/error.json
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
    worker = """\
Traceback (most recent call last):
  File "/work/train.py", line 53, in main
    labels = batch["labels"]
KeyError: 'labels'
"""
    a = run({"console.log": console, "logs/none_1dq/attempt_0/1/stderr.log": worker})
    exc = [e for e in a.events if e.kind == "torch.exception"]
    assert len(exc) == 1
    assert (exc[0].rank, exc[0].rank_source, exc[0].local_rank, exc[0].attempt) == (5, "torchrun", 1, 0)
    wf = [e for e in a.events if e.kind == "torchrun.worker_failed"][0]
    assert (wf.rank, wf.rank_source) == (5, "torchrun")
    ff = a.first_failure()
    assert ff.ranks == [5] and ff.nature == "root"


def test_nccl_debug_file_and_unattributable_events():
    a = run({"dbg/nccl.node7.4242": "node7:4242:4242 [0] NCCL INFO comm 0xa rank 6 nranks 8 cudaDev 0 busId 1000 - "
                                    "Init COMPLETE\nnode7:4242:4250 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.7<0>\n",
             "console.log": "[W1129 17:02:34.306620559 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate "
                            "to host 127.0.0.1:29619 - retrying (try=0, timeout=10000ms, delay=4805ms): x\n"
                            "[rank1]: RuntimeError: boom\n[rank2]: RuntimeError: boom\n"})
    dbg = [e for e in a.events if e.file == "dbg/nccl.node7.4242"]
    assert {e.rank for e in dbg} == {6}
    store = at(a, "console.log", "TCP client failed")
    assert store.rank is None and store.rank_source is None  # two ranks print into that console: no guess
    assert a.anatomy["attribution"]["unattributed_events"] == 1
    # a console where only one process speaks is that process's
    b = run({"console.log": "[W1129 17:02:34.306620559 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate "
                            "to host 127.0.0.1:29619 - retrying (try=0, timeout=10000ms, delay=4805ms): x\n"
                            "[rank1]: RuntimeError: boom\n"})
    assert (b.events[0].rank, b.events[0].rank_source) == (1, "stream")


# -- hung rank from SeqNum progress --------------------------------------------------------------------

def _timeout(rank: int, seq: int = 183, sec: int = 7) -> str:
    return (f"[rank{rank}]:[E1127 02:13:{sec:02d}.123456789 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1048576, "
            f"NumelOut=1048576, Timeout(ms)=600000) ran for 600087 milliseconds before timing out.\n"
            f"[rank{rank}]:[E1127 02:13:{sec:02d}.123556789 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) "
            f"Rank {rank}]  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: "
            f"{seq}, last completed work: {seq - 1}\n")


def test_hung_rank_named_from_seqnum_progress():
    files = {f"rank{r}.log": _timeout(r) for r in (0, 1, 2)}
    files["rank3.log"] = (
        "[rank3]:[E1127 02:13:08.000000001 ProcessGroupNCCL.cpp:2061] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received "
        "a dump signal due to a collective timeout from  rank 0 and we will try our best to dump the debug info. "
        "Last enqueued NCCL work: 182, last completed NCCL work: 182.This is most likely caused by incorrect usages "
        "of collectives, e.g., wrong sizes used across ranks.\n")
    a = run(files)
    hung = kinds(a, "analysis.hung_rank")
    assert len(hung) == 1
    h = hung[0]
    assert h.fields["ranks"] == [3] and h.rank == 3
    assert h.fields["seq"] == 183 and h.fields["op_type"] == "ALLREDUCE"
    assert h.fields["pg"] == "default_pg" and h.fields["pg_id"] == "0"
    assert h.fields["waiting_ranks"] == [0, 1, 2]
    assert "ranks 0-2 wait in SeqNum 183 ALLREDUCE" in h.fields["table"]
    assert "rank 3 completed 182 and never enqueued 183" in h.fields["table"]
    assert "rank 3 completed 182 and never enqueued 183" in h.fields["detail"]
    assert h.fields["evidence"] and all(isinstance(x, tuple) for x in h.fields["evidence"])
    assert a.anatomy["progress"]["0"]["seq"] == 183


def test_hung_rank_sixteen_ranks_one_silent():
    files = {f"rank{r}.log": _timeout(r) for r in range(16) if r != 7}
    files["rank7.log"] = "step 1200 loss 2.31\n"  # nothing relevant: rank 7 just stopped
    a = run(files)
    h = kinds(a, "analysis.hung_rank")[0]
    assert h.fields["ranks"] == [7]
    assert h.fields["table"][0] == "ranks 0-6 and 8-15 wait in SeqNum 183 ALLREDUCE"
    assert "rank 7 has no relevant output" in h.fields["table"]


def test_no_hung_rank_when_a_rank_failed_with_an_error():
    files = {f"rank{r}.log": _timeout(r) for r in (0, 1)}
    files["rank2.log"] = (
        "[rank2]:[E1127 02:03:07.000000001 ProcessGroupNCCL.cpp:632] [Rank 2] Collective WorkNCCL(SeqNum=183, "
        "OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) raised the following async exception: "
        "NCCL error: remote process exited or there was a network error\n")
    files["rank3.log"] = ""
    a = run(files)
    assert kinds(a, "analysis.hung_rank") == []


def test_collective_mismatch_at_same_seqnum():
    files = {f"rank{r}.log": _timeout(r, seq=41) for r in (0, 1, 2)}
    files["rank3.log"] = _timeout(3, seq=41).replace("OpType=ALLREDUCE", "OpType=BROADCAST")
    a = run(files)
    cm = kinds(a, "analysis.collective_mismatch")
    assert len(cm) == 1
    f = cm[0].fields
    assert f["aspect"] == "op_type" and f["seq"] == 41 and f["pg"] == "default_pg"
    assert f["values"] == {"ALLREDUCE": [0, 1, 2], "BROADCAST": [3]}
    assert cm[0].rank == 3


def test_monitored_barrier_and_gloo_timeout_name_the_missing_rank():
    a = run({"rank0.log": "[rank0]:[E1129 22:40:24.011951214 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 1 failed to pass "
                          "monitoredBarrier in 5000 ms\n",
             "rank1.log": "",
             "rank2.log": "[rank2]:[E1129 22:40:24.009503710 ProcessGroupGloo.cpp:67] Rank 2 successfully reached "
                          "monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check "
                          "rank 0 logs for faulty rank.\n"})
    h = kinds(a, "analysis.hung_rank")
    assert len(h) == 1 and h[0].fields["ranks"] == [1] and h[0].fields["source"] == "monitored_barrier"
    assert h[0].fields["waiting_ranks"] == [0, 2]


def test_clients_joined_names_the_rank_that_never_started():
    a = run({"rank0.log": "torch.distributed.DistStoreError: Timed out after 11 seconds waiting for clients. "
                          "3/4 clients joined.\n",
             "rank1.log": "", "rank2.log": ""})
    m = kinds(a, "analysis.missing_ranks")
    assert len(m) == 1
    assert m[0].fields["ranks"] == [3] and m[0].fields["world_size"] == 4 and m[0].fields["seen"] == 3


# the store-based barrier's status lines of torch 1.8-1.13, every 10 s under the root logger, all ranks in one paste
# (Lightning-AI/pytorch-lightning#4420): the ranks that print one are the ones the count holds
_BARRIER_WAITS = "".join(
    f"INFO:root:Waiting in store based barrier to initialize process group for rank: {r}, key: store_based_barrier_key:1 "
    "(world_size=8, worker_count=7, timeout=0:30:00)\n" for r in (0, 2, 6, 1, 3, 7, 5, 0))


def test_barrier_still_waiting_names_the_rank_that_printed_no_status_line():
    m = kinds(run({"log.txt": _BARRIER_WAITS}), "analysis.missing_ranks")
    assert len(m) == 1
    f = m[0].fields
    assert f["ranks"] == [4] and f["world_size"] == 8 and f["seen"] == 7 and f["source"] == "store_barrier"


def test_barrier_that_completed_after_the_wait_is_no_missing_rank():
    done = "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.\n"
    assert kinds(run({"log.txt": _BARRIER_WAITS + done}), "analysis.missing_ranks") == []
    # 2.0-2.1's wording counts `num_workers_joined=`; a later key's wait is read on its own
    new = ("INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for rank: 1, "
           "key: store_based_barrier_key:2 (world_size=2, num_workers_joined=1, timeout=0:30:00)\n")
    m = kinds(run({"log.txt": _BARRIER_WAITS + done + new}), "analysis.missing_ranks")
    assert [(e.fields["ranks"], e.fields["world_size"], e.fields["seen"]) for e in m] == [([0], 2, 1)]


def test_barrier_timeout_of_torch_1_8_counts_worker_count():
    a = run({"rank0.log": "", "rank1.log": "RuntimeError: Timed out initializing process group in store based barrier on "
             "rank: 1, for key: store_based_barrier_key:1 (world_size=3, worker_count=2, timeout=0:30:00)\n"})
    m = kinds(a, "analysis.missing_ranks")
    assert len(m) == 1 and m[0].fields["ranks"] == [2] and m[0].fields["seen"] == 2


# PyTorch Lightning's start-up lines of two nodes that both took node rank 0 (srun without --ntasks-per-node;
# Lightning-AI/pytorch-lightning#4389): ranks 0-3 announced twice, 4-7 never, no `All distributed processes registered`
_PL_TWICE = "".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8\n" for r in (1, 1, 2, 2, 3, 3, 0, 0))


def test_lightning_ranks_announced_twice_name_the_ranks_never_started():
    m = kinds(run({"log.txt": _PL_TWICE}), "analysis.missing_ranks")
    assert len(m) == 1
    f = m[0].fields
    assert f["source"] == "lightning" and f["ranks"] == [4, 5, 6, 7] and f["duplicated"] == [0, 1, 2, 3]
    # rank 0's line that every rank registered: the init completed
    done = "All distributed processes registered. Starting with 8 processes\n"
    assert kinds(run({"log.txt": _PL_TWICE + done}), "analysis.missing_ranks") == []
    # one node's output (ranks once each, others in the other node's file), or a restart (every rank twice)
    once = "".join(f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8\n" for r in (1, 2, 0, 3))
    again = "".join(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/2\n" for r in (0, 1, 0, 1))
    assert kinds(run({"log.txt": once}), "analysis.missing_ranks") == []
    assert kinds(run({"log.txt": again}), "analysis.missing_ranks") == []


def test_lightning_2_start_lines_are_read_in_a_long_log():
    """Lightning 2.x writes `Initializing distributed: GLOBAL_RANK: r, ...` with a capital (lightning/fabric/utilities/
    distributed.py); a log longer than EVERY_LINE_MAX lines reads only keyword lines, and neither that line nor rank 0's
    `All distributed processes registered` holds another keyword (logdoc/read/prefilter.py)."""
    start = "".join(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4\n" for r in (0, 1, 0, 1))
    steps = "".join(f"Epoch 0:  step {i} loss=2.{i % 97:02d} lr=3e-4\n" for i in range(1500))
    m = kinds(run({"log.txt": start + steps}), "analysis.missing_ranks")
    assert len(m) == 1 and m[0].fields["ranks"] == [2, 3] and m[0].fields["duplicated"] == [0, 1]
    done = "distributed_backend=nccl\nAll distributed processes registered. Starting with 4 processes\n"
    assert kinds(run({"log.txt": start + steps + done}), "analysis.missing_ranks") == []


# -- disagreements ----------------------------------------------------------------------------------------

def _init(host: str, pid: int, rank: int, nranks: int = 4, version: str = "2.21.5+cuda12.4") -> str:
    return (f"{host}:{pid}:{pid} [0] NCCL INFO NCCL version {version}\n"
            f"{host}:{pid}:{pid} [0] NCCL INFO comm 0x{pid:x} rank {rank} nranks {nranks} cudaDev 0 nvmlDev 0 "
            f"busId {rank + 1}000 commId 0xabc - Init COMPLETE\n")


def test_version_mismatch_on_one_rank():
    a = run({"rank0.log": _init("n1", 11, 0), "rank1.log": _init("n1", 12, 1),
             "rank2.log": _init("n2", 21, 2), "rank3.log": _init("n2", 22, 3, version="2.18.3+cuda12.2")})
    vm = kinds(a, "analysis.version_mismatch")
    comps = {e.fields["component"]: e for e in vm}
    assert set(comps) == {"nccl", "cuda"}
    n = comps["nccl"].fields
    assert n["versions"] == ["2.18.3", "2.21.5"]
    assert n["ranks_by_version"] == {"2.18.3": [3], "2.21.5": [0, 1, 2]}
    assert n["hosts_by_version"] == {"2.18.3": ["n2"], "2.21.5": ["n1", "n2"]}
    assert comps["nccl"].rank == 3
    assert a.anatomy["versions"]["nccl"]["2.18.3"]["ranks"] == [3]


def test_env_disagreement_and_forced_protocol():
    base = {r: _init(f"n{r}", 100 + r, r) for r in range(4)}
    for r in range(4):
        base[r] += f"n{r}:{100 + r}:{100 + r} [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    base[1] += "n1:101:101 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n"
    base[2] = base[2].replace("to eth0", "to ib0")
    a = run({f"rank{r}.log": t for r, t in base.items()})
    env = {e.fields["name"]: e for e in kinds(a, "analysis.env_disagreement")}
    assert env["NCCL_SOCKET_IFNAME"].fields["values"] == {"eth0": [0, 1, 3], "ib0": [2]}
    assert env["NCCL_PROTO"].fields["values"] == {"(unset)": [0, 2, 3], "Simple": [1]}
    forced = kinds(a, "analysis.env_forced")
    assert forced and forced[0].fields["name"] == "NCCL_PROTO" and forced[0].fields["agree"] is False
    assert a.anatomy["env"]["NCCL_SOCKET_IFNAME"] == {"eth0": [0, 1, 3], "ib0": [2]}


def test_transport_disagreement_gdr_and_socket():
    def host(h, pid, rank, via):
        return (_init(h, pid, rank) + f"{h}:{pid}:{pid} [0] NCCL INFO Using network {'Socket' if 'Socket' in via else 'IB'}\n"
                f"{h}:{pid}:{pid} [0] NCCL INFO Channel 00/0 : {rank}[0] -> {(rank + 1) % 4}[0] [send] via {via}\n")
    a = run({"rank0.log": host("a", 1, 0, "NET/IB/0/GDRDMA"), "rank1.log": host("b", 2, 1, "NET/IB/0/GDRDMA"),
             "rank2.log": host("c", 3, 2, "NET/IB/0"), "rank3.log": host("d", 4, 3, "NET/Socket/0")})
    td = {e.fields["aspect"]: e for e in kinds(a, "analysis.transport_disagreement")}
    assert td["network"].fields["values"] == {"IB": [0, 1, 2], "Socket": [3]}
    assert td["network"].fields["hosts"] == {"IB": ["a", "b", "c"], "Socket": ["d"]}
    assert td["gdr"].fields["values"] == {"GDRDMA": [0, 1], "no GDRDMA": [2]}
    assert td["gdr"].host == "c"
    assert a.anatomy["transports"]["d"]["transports"] == {"NET/Socket/0": 1}


def test_interface_disagreement_subnet_and_loopback():
    a = run({"rank0.log": _init("a", 1, 0) + "a:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.1.5<0>\n",
             "rank1.log": _init("b", 2, 1) + "b:2:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.1.6<0>\n",
             "rank2.log": _init("c", 3, 2) + "c:3:3 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>\n"})
    idis = {e.fields["aspect"]: e for e in kinds(a, "analysis.interface_disagreement")}
    assert set(idis) == {"name", "subnet"}
    assert idis["subnet"].fields["values"]["docker0:172.17.0.1"] == [2]
    assert idis["subnet"].fields["special"] == {"c": "docker-bridge"}


def test_nranks_disagreement_and_duplicate_gpu():
    a = run({"rank0.log": _init("a", 1, 0), "rank1.log": _init("a", 2, 1).replace("busId 2000", "busId 1000"),
             "rank2.log": _init("b", 3, 2, nranks=3)})
    nd = kinds(a, "analysis.nranks_disagreement")
    assert nd and nd[0].fields["aspect"] == "nranks" and nd[0].fields["values"]["3"] == [2]
    dup = kinds(a, "analysis.duplicate_gpu")
    assert dup and dup[0].fields["host"] == "a" and dup[0].fields["bus_id"] == "1000" and dup[0].fields["ranks"] == [0, 1]


# -- time ------------------------------------------------------------------------------------------------------

def test_stamps_and_year_borrowing():
    assert parse_stamp("--01-01T21:57:19").year is None
    assert parse_stamp("2026-11-29_22:39:25").day == 29
    evs = [Event("nccl.warn", "WARN", "a.log", 1, "x", time="2026-01-01T21:57:19"),
           Event("torch.watchdog_failure", "ERROR", "b.log", 1, "y", time="--01-01T21:57:19"),
           Event("torch.watchdog_failure", "ERROR", "b.log", 2, "z", time="--01-01T21:57:20"),
           Event("torch.exception", "ERROR", "b.log", 3, "untimed")]
    tl = Timeline(evs)
    assert tl.iso(evs[1]) == "2026-01-01T21:57:19" and tl.year_borrowed
    assert tl.same_time(evs[0], evs[1]) is True
    assert tl.before(evs[0], evs[1]) is None      # same second, different files: the log cannot tell
    assert tl.before(evs[0], evs[2]) is True
    assert tl.bounds(evs[3]) == (tl.seconds(evs[2]), None)
    assert [e.line for e in tl.events] == [1, 1, 2, 3]


def test_timeline_order_is_its_key_order():
    """The order sorted from one packed number an event (timeline.sorted_positions) is the order of
    Timeline.key_at, equals in their order: times before none, across files, lines out of order, a
    line 0, days apart."""
    import random

    rnd = random.Random(4)
    evs = []
    for i in range(400):
        t = rnd.choice([None, None, "--01-01T21:57:19", "--01-01T21:57:20", "2026-03-01T00:00:01",
                        "2025-12-31T23:59:59"])
        evs.append(Event("torch.x", "ERROR", f"r{rnd.randrange(7)}.log", rnd.randrange(0, 40), "x", time=t))
    for n in (0, 1, 2, 400):
        tl = Timeline(evs[:n])
        assert list(tl._order) == sorted(range(n), key=tl.key_at)
        # one number a place, the same order as the key (equals in their order), unknown events last
        other = Event("torch.x", "ERROR", "elsewhere.log", 3, "x")
        some = evs[:n:3] + [other]
        assert sorted(some, key=tl.place) == sorted(some, key=tl.key)


def test_new_year_borrows_the_nearest_year():
    evs = [Event("nccl.warn", "WARN", "a.log", 1, "x", time="2026-01-01T00:00:05"),
           Event("torch.x", "ERROR", "b.log", 1, "y", time="--12-31T23:59:59")]
    tl = Timeline(evs)
    assert tl.iso(evs[1]) == "2025-12-31T23:59:59"
    assert tl.before(evs[1], evs[0]) is True


def test_timeline_orders_across_files_and_keeps_file_order():
    a = run({"rank0.log": "[rank0]:[E1129 17:01:55.1 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 1 failed to pass "
                          "monitoredBarrier in 5000 ms\n",
             "rank1.log": "[rank1]:[E1129 17:01:53.9 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate "
                          "to host 127.0.0.1:29619 - retrying (try=0, timeout=10000ms, delay=4805ms): x\n"
                          "[rank1]: RuntimeError: later, no stamp\n"})
    order = [(e.file, e.line) for e in a.timeline.events]
    assert order.index(("rank1.log", 1)) < order.index(("rank0.log", 1))
    assert order.index(("rank1.log", 1)) < order.index(("rank1.log", 2))
    keys = [a.timeline.key(e) for e in a.timeline.events]
    assert keys == sorted(keys)


def test_first_failure_prefers_root_cause_at_the_same_second():
    a = run({"rank0.log": "[rank0]:[E1129 17:00:05.1 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
                          "operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                          "Timeout(ms)=1000) ran for 1001 milliseconds before timing out.\n",
             "rank1.log": "[2026-11-29 17:00:05] h1:20:20 [0] include/alloc.h:339 NCCL WARN Cuda failure 'out of memory'\n"})
    ff = a.first_failure()
    assert ff.ranks == [1] and ff.nature == "root" and ff.time == "2026-11-29T17:00:05"
    assert a.nature(a.events[0]) == "symptom"


def test_first_failure_sigkill_observed_late_by_the_agent():
    console = ("E1128 15:02:10.048000 5360 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed "
               "(exitcode: -9) local_rank: 1 (pid: 5378) of binary: /opt/venv/bin/python3\n")
    peers = ("[2026-11-28 15:02:09] n1:5412:5476 [1] misc/socket.cc:66 NCCL WARN socketProgress: Connection closed by "
             "remote peer 10.0.1.12<39907>\n")
    a = run({"node1.log": console, "node0.log": peers})
    ff = a.first_failure()
    assert ff.event.kind == "torchrun.worker_failed" and ff.nature == "root"


# -- the DGX Spark story (seed 003): the failure is on the second communicator ------------------------------

DGX = {
    "rank0.log": """\
dgx1:1007:1007 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp1s0f0np0
dgx1:1007:1007 [0] NCCL INFO Bootstrap: Using enp1s0f0np0:192.168.100.10<0>
dgx1:1007:1007 [0] NCCL INFO NCCL version 2.28.8+cuda13.0
dgx1:1007:1007 [0] NCCL INFO NET/Socket : Using [0]enp1s0f0np0:192.168.100.10<0>
dgx1:1007:1007 [0] NCCL INFO Using network Socket
dgx1:1007:1007 [0] NCCL INFO ncclCommInitRankConfig comm 0x389afbf0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x6b1e6f2a9d4c3e81 - Init START
dgx1:1007:1007 [0] NCCL INFO NCCL_ALGO set by environment to Ring
dgx1:1007:1007 [0] NCCL INFO NCCL_PROTO set by environment to Simple
dgx1:1007:1007 [0] NCCL INFO ncclCommInitRankConfig comm 0x389afbf0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x6b1e6f2a9d4c3e81 - Init COMPLETE
dgx1:1007:1007 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0
dgx1:1007:1007 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0
dgx1:1007:1007 [0] NCCL INFO ncclCommInitRankConfig comm 0x3a6c5e40 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x1c9d0a77e4f25b36 - Init START
dgx1:1007:1007 [0] NCCL INFO NCCL_ALGO set by environment to Ring
dgx1:1007:1007 [0] NCCL INFO NCCL_PROTO set by environment to Simple
dgx1:1007:1007 [0] NCCL INFO ncclCommInitRankConfig comm 0x3a6c5e40 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x1c9d0a77e4f25b36 - Init COMPLETE
dgx1:1007:1007 [0] NCCL INFO Channel 00/1 : 0[0] -> 1[0] [send] via NET/Socket/0/Shared

[2026-01-01 21:57:19] dgx1:1007:1165 [0] transport/net_socket.cc:565 NCCL WARN NET/Socket : peer 192.168.100.11<56630> message truncated : receiving 8 bytes instead of 4. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks
dgx1:1007:1165 [0] NCCL INFO proxy.cc:1006 -> 5 [Progress Thread]
[rank0]:[E101 21:57:19.147805485 ProcessGroupNCCL.cpp:617] [Rank 0] Collective WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, Timeout(ms)=600000) raised the following async exception: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)
[rank0]:[E101 21:57:19.150803196 ProcessGroupNCCL.cpp:2290] [PG ID 1 PG GUID 1(mesh_pp) Rank 0]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, last completed work: -1
""",
    "rank1.log": """\
dgx2:2751:2751 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp1s0f0np0
dgx2:2751:2751 [0] NCCL INFO Bootstrap: Using enp1s0f0np0:192.168.100.11<0>
dgx2:2751:2751 [0] NCCL INFO NCCL version 2.28.8+cuda13.0
dgx2:2751:2751 [0] NCCL INFO NET/Socket : Using [0]enp1s0f0np0:192.168.100.11<0>
dgx2:2751:2751 [0] NCCL INFO Using network Socket
dgx2:2751:2751 [0] NCCL INFO ncclCommInitRankConfig comm 0x2f0b7a30 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x6b1e6f2a9d4c3e81 - Init COMPLETE
dgx2:2751:2751 [0] NCCL INFO NCCL_ALGO set by environment to Ring
dgx2:2751:2751 [0] NCCL INFO NCCL_PROTO set by environment to Simple
dgx2:2751:2751 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0
dgx2:2751:2751 [0] NCCL INFO ncclCommInitRankConfig comm 0x31d94e60 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x1c9d0a77e4f25b36 - Init COMPLETE

[2026-01-01 21:57:20] dgx2:2751:2914 [0] misc/socket.cc:66 NCCL WARN socketProgress: Connection closed by remote peer 192.168.100.10<47164>
[rank1]:[E101 21:57:20.613870219 ProcessGroupNCCL.cpp:1993] [PG ID 0 PG GUID 0(default_pg) Rank 1] Observed flight recorder dump signal from another rank via TCPStore.
[rank1]:[E101 21:57:20.620118437 ProcessGroupNCCL.cpp:2290] [PG ID 1 PG GUID 1(mesh_pp) Rank 1]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, last completed work: -1
""",
}


def test_dgx_spark_failure_on_second_communicator():
    a = run(DGX)
    an = a.anatomy
    comms = an["communicators"]
    assert len(comms) == 2
    by_desc = {c["description"]: c for c in comms}
    assert set(by_desc) == {"default_pg", "mesh_pp"}
    pp, default = by_desc["mesh_pp"], by_desc["default_pg"]
    assert pp["failed"] is True and default["failed"] is False
    assert pp["pg_id"] == "1" and pp["nccl_comm_id"] == "0x1c9d0a77e4f25b36" and pp["size"] == 2
    assert pp["members"] == [0, 1] and default["nccl_comm_id"] == "0x6b1e6f2a9d4c3e81"
    assert pp["failure"]["seq"] == 1 and pp["failure"]["ranks"] == [0, 1]
    assert "message truncated" in pp["failure"]["nccl_warnings"][0]["text"]
    assert an["failed_communicators"] == ["PG 1 (mesh_pp)"]
    # what the two ranks agree on: same NCCL, same forced protocol/algorithm, same interface name
    agree = {row["aspect"]: row for row in an["agreement"]}
    assert agree["NCCL version"]["agree"] and agree["NCCL_PROTO"]["agree"] and agree["NCCL_ALGO"]["agree"]
    assert agree["NCCL_PROTO"]["values"] == {"Simple": [0, 1]}
    forced = {e.fields["name"]: e.fields["agree"] for e in kinds(a, "analysis.env_forced")}
    assert forced == {"NCCL_ALGO": True, "NCCL_PROTO": True}
    assert not kinds(a, "analysis.env_disagreement") and not kinds(a, "analysis.version_mismatch")
    # the c10 stamps have no year; NCCL's have one: the origin is rank 0, one second before rank 1
    ff = a.first_failure()
    assert ff.ranks == [0] and ff.hosts == ["dgx1"] and ff.time == "2026-01-01T21:57:19"
    assert "message truncated" in ff.event.text
    assert an["time_span"]["start"] == "2026-01-01T21:57:19" and an["time_span"]["year_borrowed"]
    # NCCL lines are attributed through host:pid + the world communicator's init line
    warn = at(a, "rank1.log", "socketProgress")
    assert warn.rank == 1 and warn.host == "dgx2"
    assert {r["rank"]: r["host"] for r in an["ranks"]} == {0: "dgx1", 1: "dgx2"}
    json.dumps(a.to_dict())  # JSON-serialisable


def test_async_exception_takes_the_group_of_the_following_failure_line():
    a = run(DGX)
    work = [e for e in a.events if "Collective WorkNCCL" in e.text]
    if not work or work[0].kind != "torch.async_exception":
        pytest.skip("the parser does not classify the async exception record as torch.async_exception")
    i = a.job.index(work[0])
    assert a.job.pg_key[i] == "1"


# -- torchrun attempts --------------------------------------------------------------------------------------------

def test_torchrun_attempts_kept_apart_and_first_attempt_blamed():
    console = """\
[default1]:[rank1]: Traceback (most recent call last):
[default1]:[rank1]:   File "/work/train.py", line 53, in main
[default1]:[rank1]:     labels = batch["labels"]
[default1]:[rank1]: KeyError: 'labels'
E1129 22:54:48.264000 31492 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 1 (pid: 31498) of binary: /usr/bin/python3
I1129 22:54:48.264000 31492 site-packages/torch/distributed/elastic/agent/server/api.py:700] [default] Worker group FAILED. 2/2 attempts left; will restart worker group
[default0]:[rank0]: Traceback (most recent call last):
[default0]:[rank0]:   File "/work/train.py", line 41, in main
[default0]:[rank0]:     dist.all_reduce(t)
[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:7606. This is typically caused by a remote worker crashing.
E1129 22:54:50.089000 31492 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 0 (pid: 31563) of binary: /usr/bin/python3
"""
    a = run({"console.log": console})
    attempts = {(e.kind, e.rank): e.attempt for e in a.events if e.kind != "torchrun.worker_failed"}
    assert attempts[("torch.exception", 1)] == 0
    exc0 = [e for e in a.events if e.rank == 0 and e.kind in ("gloo.error", "torch.exception")]
    assert exc0 and exc0[0].attempt == 1
    r = kinds(a, "analysis.restart")
    assert len(r) == 1
    f = r[0].fields
    assert f["attempt"] == 0 and f["later_attempts"] == [1] and f["origin_ranks"] == [1]
    assert "KeyError" in f["first_failure"]["text"]
    assert [x["attempt"] for x in a.anatomy["attempts"]] == [0, 1]


def test_logdir_attempts_and_cross_attempt_local_rank():
    a = run({"logs/run_x/attempt_0/1/stderr.log": "[rank1]: RuntimeError: boom\n",
             "logs/run_x/attempt_1/1/stderr.log": "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
                                                  "debug_logger.cc:9] ERROR failed to connect, willRetry=1, retry=1, "
                                                  "retryLimit=3, rank=1, size=2, local=[127.0.0.1]:1, remote=[127.0.0.1]:2, error=x\n"})
    late = [e for e in a.events if e.file.endswith("attempt_1/1/stderr.log")]
    assert late and all(e.attempt == 1 and e.local_rank == 1 for e in late)
    assert all(e.rank == 1 and e.rank_source == "torchrun" for e in late)
    assert kinds(a, "analysis.restart")[0].fields["attempt"] == 0


# -- silent rank, healthy jobs, scale --------------------------------------------------------------------------------

def test_silent_rank():
    files = {}
    for r in range(4):
        sec = "00:00" if r == 2 else "10:05"
        files[f"rank{r}.log"] = (f"[2026-05-01 12:{sec}] h{r}:{r + 10}:{r + 10} [0] misc/socket.cc:1 NCCL WARN "
                                 f"something {r}\n")
    a = run(files)
    s = kinds(a, "analysis.silent_rank")
    assert len(s) == 1 and s[0].fields["ranks"] == [2] and s[0].fields["gap_seconds"] == 605


def test_healthy_init_logs_give_no_error_finding():
    files = {f"rank{r}.log": _init(f"n{r // 2}", 100 + r, r) + f"n{r // 2}:{100 + r}:{100 + r} [0] NCCL INFO Channel "
             f"00/0 : {r}[0] -> {(r + 1) % 4}[0] [send] via NET/IB/0/GDRDMA\n" for r in range(4)}
    a = run(files)
    assert [e for e in a.synthetic if e.level in ("ERROR", "FATAL")] == []
    assert not a.first_failure()


def test_a_large_job_names_its_one_hung_rank():
    # How fast this runs is measured by tests/perf/bench.py (--only scale), not here: a timed
    # assertion fails on a loaded machine and under Pyodide without saying anything about behaviour.
    events = []
    n = 1024
    for r in range(n):
        f = f"rank{r}.log"
        h = f"node{r // 8}"
        events.append(Event("nccl.version", "INFO", f, 1, "NCCL version 2.21.5+cuda12.4", host=h, pid=1000 + r % 8,
                            fields={"version": "2.21.5", "cuda": "12.4"}))
        events.append(Event("nccl.comm_init", "INFO", f, 2, "comm", host=h, pid=1000 + r % 8,
                            fields={"comm": f"0x{r:x}", "rank": r, "nranks": n, "comm_id": "0x1", "bus_id": f"{r % 8}000",
                                    "phase": "COMPLETE"}))
        for k in range(3, 100):
            events.append(Event("nccl.connection", "INFO", f, k, "c", host=h, pid=1000 + r % 8,
                                fields={"transport": "NET/IB/0/GDRDMA", "net": "IB", "gdr": True, "src_rank": r,
                                        "dst_rank": (r + 1) % n}))
        if r != 7:
            events.append(Event("torch.watchdog_timeout", "ERROR", f, 100, "t", rank=r, time="--11-27T02:13:07",
                                fields={"seq": 183, "op_type": "ALLREDUCE", "pg_id": 0, "pg_desc": "default_pg"}))
    a = analyze(events)
    h = kinds(a, "analysis.hung_rank")
    assert h and h[0].fields["ranks"] == [7]
    assert len(a.anatomy["ranks"]) == n


# -- more cross-rank findings ------------------------------------------------------------------------------------

def test_peer_exited_is_the_quiet_rank_not_the_ones_torchrun_stopped():
    closed = ("[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
              "Connection closed by peer [127.0.0.1]:7606. This is typically caused by a remote worker crashing.\n")
    a = run({"rank0.log": closed.format(r=0), "rank1.log": "", "rank2.log": closed.format(r=2),
             "rank3.log": closed.format(r=3)})
    p = kinds(a, "analysis.peer_exited")
    assert len(p) == 1 and p[0].fields["ranks"] == [1] and p[0].fields["reporting_ranks"] == [0, 2, 3]


def test_peer_exited_narrowed_by_the_peer_address():
    def node(h, ip, pid0, ranks, warn_rank=None):
        out = ""
        for k, r in enumerate(ranks):
            pid = pid0 + k
            out += _init(h, pid, r, nranks=4) + f"{h}:{pid}:{pid} [0] NCCL INFO NET/Socket : Using [0]eth0:{ip}<0>\n"
            if r == warn_rank:
                out += (f"\n[2026-11-28 15:02:09] {h}:{pid}:{pid + 50} [0] misc/socket.cc:66 NCCL WARN socketProgress: "
                        f"Connection closed by remote peer 10.0.1.12<39907>\n")
        return out
    a = run({"node0.log": node("n1", "10.0.1.11", 100, [0, 1], warn_rank=1),
             "node1.log": node("n2", "10.0.1.12", 200, [2, 3])})
    p = kinds(a, "analysis.peer_exited")
    assert p and p[0].fields["peer_hosts"] == ["n2"] and p[0].fields["ranks"] == [2, 3]


def test_detail_mismatch_names_the_odd_rank():
    evs = []
    for r in range(4):
        other = 3 if r != 3 else 0
        evs.append(Event("torch.collective_mismatch", "ERROR", f"rank{r}.log", 1, "Detected mismatch", rank=r,
                         fields={"rank": r, "other_rank": other, "seq": 1, "op_type": "BROADCAST" if r == 3 else "ALLREDUCE",
                                 "other_op_type": "ALLREDUCE" if r == 3 else "BROADCAST", "differs": ["op type"]}))
    a = analyze(evs)
    cm = kinds(a, "analysis.collective_mismatch")
    assert len(cm) == 1 and cm[0].fields["source"] == "detail"
    assert cm[0].fields["values"] == {"ALLREDUCE": [0, 1, 2], "BROADCAST": [3]} and cm[0].rank == 3


def test_missing_rank_files():
    timeout = ("[E1129 22:41:10.306172881 socket.cpp:1028] [c10d] The client socket has timed out after 10000ms while trying "
               "to connect to (127.0.0.1, 29619).\n")
    a = run({"rank1.log": timeout, "rank2.log": timeout, "rank3.log": timeout})
    m = kinds(a, "analysis.missing_ranks")
    assert m and m[0].fields["source"] == "logs" and m[0].fields["ranks"] == [0]


def test_mp_spawn_process_index_is_the_rank_on_one_node():
    a = analyze([Event("torchrun.worker_failed", "ERROR", "console.log", 9,
                       "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL",
                       fields={"signal": "SIGKILL", "local_rank": 3, "launcher": "spawn"})])
    assert a.events[0].rank == 3
    ff = a.first_failure()
    assert ff.ranks == [3] and ff.nature == "root"


def test_order_key_for_synthetic_events():
    files = {f"rank{r}.log": _timeout(r) for r in (0, 1, 2)}
    files["rank3.log"] = ""
    a = run(files)
    h = kinds(a, "analysis.hung_rank")[0]
    assert a.order_key(h)[0] == 0  # placed with its evidence, not after everything


SAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*") if p.is_dir() and not p.name.startswith("_"))
                         if SAMPLES.exists() else [])
def test_every_sample_analyses_to_json(sample):
    from logdoc.pipeline import parse_paths

    res = parse_paths([str(SAMPLES / sample)])
    a = analyze(res.events, res.files)
    json.dumps(a.to_dict())
    assert all(e.kind.startswith("analysis.") and e.fields.get("evidence") is not None for e in a.synthetic)


def test_analysis_can_run_twice_on_the_same_events():
    res = parse_sources(list(DGX.items()))
    first = analyze(res.events, res.files)
    ranks1 = [(e.rank, e.rank_source) for e in first.events]
    second = analyze(res.events, res.files)
    assert [(e.rank, e.rank_source) for e in second.events] == ranks1
    assert [e.text for e in second.synthetic] == [e.text for e in first.synthetic]


def test_tee_local_rank_stream_and_slurm_task_file():
    console = ("[default1]:nodeB:77:77 [1] NCCL INFO cudaDriverVersion 12040\n"
               "[default0]:nodeB:76:76 [0] NCCL INFO cudaDriverVersion 12040\n"
               "[default1]:[rank5]: RuntimeError: boom\n"
               "[default0]:[rank4]: RuntimeError: boom too\n")
    a = run({"slurm-991-2.out": console})
    nccl = {e.pid: e for e in a.events if e.kind == "nccl.info"}
    assert (nccl[77].rank, nccl[77].rank_source, nccl[77].node_rank) == (5, "stream", 2)
    assert nccl[76].rank == 4
    ranks = {r["rank"]: r for r in a.anatomy["ranks"]}
    assert ranks[5]["local_rank"] == 1 and ranks[5]["node_rank"] == 2 and ranks[5]["host"] == "nodeB"


def test_equal_groups_are_split_by_the_first_failure_and_findings_name_their_origin():
    files = {"rank0.log": _init("a", 1, 0), "rank1.log": _init("a", 2, 1),
             "rank2.log": _init("b", 3, 2, version="2.18.3+cuda12.2"), "rank3.log": _init("b", 4, 3, version="2.18.3+cuda12.2")}
    files["rank2.log"] += ("\n[2026-02-02 10:00:00] b:3:3 [0] bootstrap.cc:78 NCCL WARN Message truncated : received 112 "
                           "bytes instead of 64\n")
    files["rank0.log"] += ("\n[2026-02-02 10:00:01] a:1:9 [0] misc/socket.cc:66 NCCL WARN socketProgress: Connection "
                           "closed by remote peer b<4000>\n")
    a = run(files)
    vm = [e for e in kinds(a, "analysis.version_mismatch") if e.fields["component"] == "nccl"][0]
    assert vm.fields["minority"] == [2, 3] and vm.fields["origin_ranks"] == [2, 3] and vm.fields["origin_hosts"] == ["b"]
    dup = run({"rank0.log": _init("a", 1, 0), "rank1.log": _init("a", 2, 1).replace("busId 2000", "busId 1000")})
    d = kinds(dup, "analysis.duplicate_gpu")[0]
    assert d.rank is None and d.fields["origin_ranks"] == [0, 1]


def test_incomplete_logs_do_not_name_hung_ranks():
    # 2 of 8 rank logs: the six others are not hung, they are just not here
    a = run({"rank0.log": _init("a", 1, 0, nranks=8) + _timeout(0), "rank7.log": _init("b", 2, 7, nranks=8) + _timeout(7)})
    assert kinds(a, "analysis.hung_rank") == []
    assert a.anatomy["progress"]["0"]["seq"] == 183


def test_gated_patterns_find_what_the_patterns_find():
    """analysis.common.gated: the container words, connect failures and the root / symptom texts of the
    cascade are searched only in texts that hold one of their literals; the matches are the same."""
    from pathlib import Path

    from logdoc.analysis import cascade, context, disagreements
    from logdoc.analysis.common import gated
    from logdoc.pipeline import parse_paths

    samples = Path(__file__).resolve().parents[1] / "samples"
    texts = [e.text for e in parse_paths([str(samples)], jobs=1).events]
    texts += ["running in DOCKER", "Dоcker", "\u212a8s node", "CONNECT to 10.0.0.2 Failed", "connect: Refused",
              "Watchdog caught collective operation timeout", "Signal 9 (SIGKILL)", "ſigkill", ""]
    pairs = [(context._CONTAINER, context._CONTAINER_SEARCH), (disagreements._CONNECT_FAIL,
             disagreements._CONNECT_FAIL_SEARCH), (cascade.ROOT_TEXT, cascade._ROOT_SEARCH),
             (cascade.SYMPTOM_TEXT, cascade._SYMPTOM_SEARCH)]
    hits = 0
    for plain, fast in pairs:
        assert fast.needs  # gated: it has literals to look for
        for t in texts:
            a, b = plain.search(t), fast.search(t)
            assert (a and a.span()) == (b and b.span()), (plain.pattern[:40], t[:80])
            hits += a is not None
    assert hits > 50
    import re
    verbose = re.compile(r"a b", re.X)
    assert gated(verbose) is verbose  # flags the gate does not read: the pattern itself


def test_shared_text_reads_as_the_line():
    """share_texts keeps a line's header once and its message in its fields: the text reads the same,
    through pickling and copying too, and a text set later replaces it."""
    import copy
    import pickle

    from logdoc.events import Event, share_texts

    head = "node1:11:11 [0] NCCL INFO "
    evs = [Event("nccl.info", "INFO", "r0.log", i + 1, head + m, fields={"message": m})
           for i, m in enumerate(("NET/Plugin: No plugin found", "cudaDriverVersion 12040"))]
    other = Event("torch.exception", "ERROR", "r0.log", 3, "RuntimeError: boom", fields={"message": "other"})
    share_texts([*evs, other])
    assert [e.text for e in evs] == [head + "NET/Plugin: No plugin found", head + "cudaDriverVersion 12040"]
    assert other.text == "RuntimeError: boom"
    back = pickle.loads(pickle.dumps(evs[0]))
    assert back == evs[0] and back.text == evs[0].text and copy.copy(evs[1]).text == evs[1].text
    # a worker's events pickled together: their head is still one object in the parent
    from logdoc.events import _TEXT

    sent = pickle.loads(pickle.dumps(evs))
    assert sent == evs and _TEXT.__get__(sent[0]) is _TEXT.__get__(sent[1])
    assert copy.copy(evs[0]).fields is evs[0].fields
    assert evs[0].to_dict()["text"] == head + "NET/Plugin: No plugin found"
    evs[1].text = "replaced"
    assert evs[1].text == "replaced"


def test_header_values_held_by_the_head_and_facts_alike_one_dict():
    """share_texts moves an NCCL header's tid and dev to the process's head, share_keys holds the rest of
    the facts every rank prints alike as one dict: every reader of the fields as parsed (to_dict,
    field_of, a rule's values) sees them as before, through pickling too."""
    import pickle

    from logdoc.events import Event, all_fields, field_of, share_keys, share_texts

    def fact(rank: int, msg: str) -> Event:
        head = f"node{rank // 8}:{100 + rank}:{200 + rank} [{rank % 8}] NCCL INFO "
        return Event("nccl.using_network", "INFO", f"r{rank}.log", 7, head + msg, rank=rank,
                     fields={"tid": 200 + rank, "dev": rank % 8, "message": msg, "network": msg[-2:]})

    parsed = [fact(r, "Using network IB") for r in range(3)]
    before = [(e.to_dict(), dict(e.fields)) for e in parsed]
    for e in parsed:  # per source, as parse_sources runs them
        share_texts([e])
        share_keys([e])
    assert [(e.to_dict(), all_fields(e)) for e in parsed] == before
    assert all("tid" not in e.fields and "dev" not in e.fields for e in parsed)
    assert parsed[1].fields is parsed[2].fields  # one dict for the ranks that print the same fact
    assert field_of(parsed[2], "dev") == 2 and field_of(parsed[2], "tid") == 202 and field_of(parsed[2], "x") is None
    back = pickle.loads(pickle.dumps(parsed))
    assert back == parsed and [b.text for b in back] == [e.text for e in parsed]
    assert back[2].fields is parsed[2].fields
    # a rule's fields condition and its placeholders read them as fields
    from logdoc.kb.rule import _event_values, _values

    vals = _values(parsed[1], {})
    assert vals["dev"] == 1 and "tid" in vals and vals["network"] == "IB"
    assert _event_values(parsed[1])["tid"] == 201


def test_long_values_equal_within_a_source_are_one_object():
    """share_long_values: a long text repeated by a process's failure lines (a watchdog's timeout as its
    own line, as the exception of the next, as a nested cause) is one object; texts and values read the
    same, short ones and different ones are left alone."""
    from logdoc.events import SHORT_TEXT, Event, share_long_values

    msg = "[Rank 9] Watchdog caught collective operation timeout: " + "x" * SHORT_TEXT
    copies = ["".join(msg) for _ in range(4)]
    assert len({id(c) for c in copies}) == 4
    first = Event("torch.watchdog_timeout", "ERROR", "r.log", 1, copies[0])
    second = Event("torch.watchdog_failure", "ERROR", "r.log", 2, "[PG 0] terminated: " + msg,
                   fields={"exception": copies[1], "cause": {"exception": copies[2], "n": 1}, "args": [copies[3], "s"]})
    short = Event("torch.teardown", "ERROR", "r.log", 3, "short", fields={"a": "short"})
    share_long_values([first, second, short])
    assert first.text is second.fields["exception"] is second.fields["cause"]["exception"] is second.fields["args"][0]
    assert second.fields == {"exception": msg, "cause": {"exception": msg, "n": 1}, "args": [msg, "s"]}
    assert second.text == "[PG 0] terminated: " + msg and short.text == "short" and short.fields == {"a": "short"}


def test_a_long_text_around_its_field_is_held_as_parts():
    """share_long_values: a long text that holds one of its event's long fields (a ``terminate called``
    record around its ``what()``) and that nothing else of the source repeats is held as the parts
    around it (interned: every rank's record shares its head and frames); it reads the same, pickled,
    copied and written; a long text another value repeats stays one shared string."""
    import copy
    import pickle

    from logdoc.events import LONG_FIELD, _TEXT, Event, _Around, share_long_values, share_texts

    head = "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  "
    frames = "\nException raised from checkTimeout at ProcessGroupNCCL.cpp:635 (most recent call first):\nframe #0: x"
    evs = []
    for r in (3, 4):
        what = f"[PG ID 0 Rank {r}] watchdog thread terminated with exception: " + "w" * LONG_FIELD
        text = "".join([head, what, frames])  # new objects, as a parse makes them
        evs.append(Event("torch.terminate", "ERROR", f"r{r}.log", 9, text, fields={"cxx_type": "E", "what": what}))
        share_long_values([evs[-1]])  # per source
    held = [_TEXT.__get__(e) for e in evs]
    assert all(h.__class__ is _Around for h in held)
    assert held[0][0] is held[1][0] and held[0][2] is held[1][2]  # the head and the frames: one object each
    for r, e in zip((3, 4), evs):
        assert e.text == head + e.fields["what"] + frames and f"Rank {r}]" in e.text
        back = pickle.loads(pickle.dumps(e))
        assert back == e and back.text == e.text and copy.copy(e).text == e.text
        assert e.to_dict()["text"] == e.text
    sent = pickle.loads(pickle.dumps(evs))
    share_texts(sent)  # what analyze runs on a worker's events: the parts shared with the job's again
    assert _TEXT.__get__(sent[0])[0] is held[0][0] and [e.text for e in sent] == [e.text for e in evs]
    # a long text that another value of the source repeats is that one string, not parts
    msg = "[Rank 5] Watchdog caught collective operation timeout: " + "t" * LONG_FIELD
    own = Event("torch.watchdog_timeout", "ERROR", "r5.log", 1, "".join(["[E] ", msg]), fields={"m": "".join(msg)})
    echo = Event("torch.watchdog_failure", "ERROR", "r5.log", 2, "".join(["[E] ", msg]), fields={"m": "".join(msg)})
    share_long_values([own, echo])
    assert _TEXT.__get__(own).__class__ is str and _TEXT.__get__(own) is _TEXT.__get__(echo)
    short = Event("torch.terminate", "ERROR", "r6.log", 1, "a" * LONG_FIELD, fields={"what": "a" * (LONG_FIELD - 1)})
    share_long_values([short])  # a field too short to pay for the parts
    assert _TEXT.__get__(short).__class__ is str


def test_an_echoed_line_is_one_shape_for_every_rank():
    """share_long_values: a line every rank prints with its own numbers (``[Rank N] Some NCCL operations
    have failed ...``) whose values its fields hold is held as the shape of its words (one object for all
    the ranks) and reads the same, pickled, copied, written and shared again as a worker's; a value written
    otherwise than ``str`` writes it stays in the text."""
    import copy
    import pickle

    from logdoc.events import _TEXT, Event, _Shape, share_long_values, share_texts

    words = "] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels."
    evs = []
    for r in (3, 14, 1000):
        text = "".join(["[Rank ", str(r), words])  # new objects, as a parse makes them
        evs.append(Event("torch.teardown", "ERROR", f"r{r}.log", 9, text, rank=r,
                         fields={"pg_prefix": "rank", "pg_rank": r}))
        share_long_values([evs[-1]])  # per source
    held = [_TEXT.__get__(e) for e in evs]
    assert all(h.__class__ is _Shape for h in held) and held[0] is held[1] is held[2]
    for r, e in zip((3, 14, 1000), evs):
        assert e.text == f"[Rank {r}{words}"
        back = pickle.loads(pickle.dumps(e))
        assert back == e and back.text == e.text and copy.copy(e).text == e.text
        assert e.to_dict()["text"] == e.text
    sent = pickle.loads(pickle.dumps(evs))
    share_texts(sent)  # what analyze runs on a worker's events: the job's one shape again
    assert _TEXT.__get__(sent[0]) is held[0] and [e.text for e in sent] == [e.text for e in evs]
    # a number inside a longer one is not the value; a value written otherwise stays text
    odd = Event("torch.teardown", "ERROR", "r7.log", 9, "[Rank 07" + words, fields={"pg_rank": 7, "seq": 183})
    share_long_values([odd])
    assert _TEXT.__get__(odd).__class__ is str and odd.text == "[Rank 07" + words
    seq = Event("torch.watchdog_failure", "ERROR", "r8.log", 9, "work 183 seq 18" + words, fields={"seq": 18})
    share_long_values([seq])
    assert _TEXT.__get__(seq)[0] == "work 183 seq " and seq.text == "work 183 seq 18" + words


def test_process_group_keys_read_like_a_dict():
    """Job.pg_key: the positions that name their group, in order, then those that borrowed one, in the
    order they were given it; get, [], in and len as a dict's."""
    import pytest

    from logdoc.analysis.job import PgKeys

    keys = PgKeys(10)
    keys[5], keys[2] = "1", "0"
    keys.infer(9, "1")
    keys.infer(0, "0")
    assert list(keys.items()) == [(2, "0"), (5, "1"), (9, "1"), (0, "0")]
    assert list(keys.values()) == ["0", "1", "1", "0"] and len(keys) == 4 and keys
    assert keys[5] == "1" and keys.get(7) is None and keys.get(None) is None and 7 not in keys and 9 in keys
    assert keys.inferred(9) and not keys.inferred(5) and keys.named(5) == "1" and keys.named(9) is None
    with pytest.raises(KeyError):
        keys[7]
    assert not PgKeys() and list(PgKeys().items()) == []


def test_a_ranks_failure_message_is_held_once_after_the_parse():
    """The parse shares per source: the watchdog's message a rank's failure lines repeat is one object."""
    from logdoc.pipeline import parse_text

    msg = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
           "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.")
    text = (f"[rank3]:[E1126 07:28:44.000000000 ProcessGroupNCCL.cpp:632] {msg}\n"
            f"[rank3]:[E1126 07:28:45.000000000 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
            f"Process group watchdog thread terminated with exception: {msg}\n")
    res = parse_text(text, "rank3.log")
    held = [v for e in res.events for v in (e.text, *(e.fields or {}).values()) if isinstance(v, str) and v == msg]
    assert len(held) >= 2 and len({id(v) for v in held}) == 1


@pytest.mark.parametrize("lines, reason", [
    (["NCCL_IB_HCA set to mlx5_0:1,mlx5_1:1"], "NCCL_IB_HCA=mlx5_0:1,mlx5_1:1 is set"),
    (["NET/Socket : Using [0]ib0:192.168.10.4<0>"], "the socket interface ib0 is an RDMA NIC's network device"),
    (["NET/Socket : Using [0]ib0.<ip>"], "the socket interface ib0 is an RDMA NIC's network device"),  # masked
    (["NET/OFI aws-ofi-nccl initialization failed"], "a network plugin failed to start"),
    (["NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.10.5<0>"], "a process on dgx2 uses NET/IB"),
    ([], None),
    (["NCCL_IB_DISABLE set by environment to 1.", "NET/Socket : Using [0]eth0:10.0.0.4<0>"], None),
])
def test_the_log_shows_the_job_is_meant_to_use_rdma(lines, reason):
    # a machine without an RDMA NIC also says "No device found": only these signs make it a lost fabric
    text = "dgx1:1007:1007 [0] NCCL INFO NET/IB : No device found.\n" + "".join(
        f"dgx2:2201:2201 [0] NCCL {'WARN' if 'failed' in l else 'INFO'} {l}\n" for l in lines)
    a = run({"job.log": text})
    got = [e for e in kinds(a, "analysis.context") if e.fields["aspect"] == "ib_expected"]
    if reason is None:
        assert not got
    else:
        assert got and reason in got[0].fields["reasons"], got and got[0].fields["reasons"]


def test_fields_share_their_names_and_read_the_same():
    """share_keys: an event's fields are a dict that shares its table of names with every other of the
    same names, equal, ordered and pickled alike; a name added to one leaves the others alone; a
    job's worth of them takes well under the memory of dicts of their own (CPython)."""
    import gc
    import pickle
    import sys
    import tracemalloc

    from logdoc.events import Event, share_keys

    names = [f"name{i}" for i in range(12)]

    def made():
        return [Event("nccl.info", "INFO", "r.log", i + 1, "t", fields={k: i for k in names}) for i in range(2000)]

    before = [e.fields for e in made()]
    tracemalloc.start()
    at = tracemalloc.get_traced_memory()[0]
    plain = made()
    mid = tracemalloc.get_traced_memory()[0]
    evs = made()
    share_keys(evs)
    gc.collect()
    shared = tracemalloc.get_traced_memory()[0] - mid
    tracemalloc.stop()
    odd = Event("nccl.info", "INFO", "r.log", 1, "t", fields={1: "not a name", "a": 2})
    empty = Event("nccl.info", "INFO", "r.log", 2, "t")
    share_keys([odd, empty])
    assert [e.fields for e in evs] == before and all(type(e.fields) is dict for e in evs)
    assert list(evs[5].fields.items()) == list(before[5].items())
    assert odd.fields == {1: "not a name", "a": 2} and empty.fields == {}
    back = pickle.loads(pickle.dumps(evs[3]))
    assert back == evs[3] and back.fields == before[3]
    evs[0].fields["extra"] = 1
    evs[1].fields.pop("name0")
    assert "extra" not in evs[2].fields and evs[2].fields == before[2] and evs[0].fields["extra"] == 1
    if sys.implementation.name == "cpython":
        # 2,000 events with their fields (a dict of 12 names: 464 bytes of its own, 184 sharing its names)
        assert shared < 0.7 * (mid - at) and len(plain) == len(evs)


def test_the_rank_and_file_rows_share_their_names():
    """anatomy's per-rank and per-file rows are dicts that share their table of names (events.keyed):
    equal to plain dicts, written alike, smaller than a dict of its own (CPython)."""
    import json
    import tracemalloc

    from logdoc.events import keyed

    texts = {f"rank{r}.log": f"[rank{r}]:[E1126 07:28:44.000000000 ProcessGroupNCCL.cpp:632] [Rank {r}] "
                             "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
                             "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n"
             for r in range(3)}
    a = run(texts)
    ranks, files = a.anatomy["ranks"], a.anatomy["files"]
    assert [r["rank"] for r in ranks] == [0, 1, 2] and len(files) == 3
    for rows in (ranks, files):
        plain = [dict(r) for r in rows]
        assert rows == plain and json.dumps(rows) == json.dumps(plain) and all(type(r) is dict for r in rows)
    row = {"a": 1, "b": [2], "c": None}
    assert keyed(row) == row and list(keyed(row)) == ["a", "b", "c"]
    for names in (list(ranks[0]), list(files[0])):  # a job's worth of rows: less memory than dicts of their own
        tracemalloc.start()
        at = tracemalloc.get_traced_memory()[0]
        own = [{k: i for k in names} for i in range(1000)]
        mid = tracemalloc.get_traced_memory()[0]
        shared = [keyed({k: i for k in names}) for i in range(1000)]
        end = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert shared == own and end - mid < 0.8 * (mid - at), (names, end - mid, mid - at)


def test_timeline_seconds_held_as_offsets_read_like_the_list():
    """timeline._Seconds: per event a second or None, 4 bytes each, read by position and in order as the
    list it holds; a span the 4 bytes cannot hold keeps the list."""
    from logdoc.analysis.timeline import _Seconds

    day = 739_000 * 86_400
    values = [None, day + 5, day, None, day + 86_399 * 3]
    held = _Seconds.of(values, day, day + 86_399 * 3)
    assert held.__class__ is _Seconds and len(held) == 5
    assert [held[i] for i in range(5)] == values and list(held) == values
    wide = [day, day + (1 << 31)]
    assert _Seconds.of(wide, day, day + (1 << 31)) is wide and _Seconds.of([None], None, None) == [None]
