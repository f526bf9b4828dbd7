"""What NCCL's graph search and topology print per process, compared across the ranks of a communicator
(logdoc.analysis.topology): the ring graph's crossNic, the CPU type of each host."""
from __future__ import annotations

from logdoc.analysis import analyze
from logdoc.pipeline import parse_sources


def _node(n: int, cross_nic: int, *, version: str = "2.19.3", nranks: int = 4, comm: str = "0x7a1c93e0",
          complete: bool = False, start: bool = True, pattern: int = 4) -> str:
    head = f"node{n}:{n}00:{n}01 [0] NCCL INFO "
    init = f"comm 0x55d{n} rank {n} nranks {nranks} cudaDev 0 nvmlDev 0 busId 1b000 commId {comm} - Init "
    out = f"{head}NCCL version {version}+cuda12.3\n"
    if start:
        out += f"{head}{init}START\n"
    out += (f"{head}Pattern {pattern}, crossNic {cross_nic}, nChannels 2, bw 24.000000/24.000000, type NVL/PIX, "
            "sameChannels 1\n")
    if complete:
        out += f"{head}{init}COMPLETE\n"
    return out


def findings(files: dict[str, str], aspect: str) -> list:
    res = parse_sources(list(files.items()))
    a = analyze(res.events, list(res.files))
    return [e for e in a.synthetic if e.kind == "analysis.topology_disagreement" and e.fields["aspect"] == aspect]


def test_one_node_s_ring_crossnic_against_the_others():
    files = {f"node{n}.log": _node(n, 1 if n == 1 else 0) for n in range(4)}
    (f,) = findings(files, "cross_nic")
    assert f.fields["values"] == {"0": [0, 2, 3], "1": [1]}
    assert f.fields["minority"] == [1] and f.fields["comm_id"] == "0x7a1c93e0"
    assert f.fields["nccl_version"] == "2.19.3"
    # every init started and none completed: a hang at init
    assert f.fields["failed"] is True and f.fields["unfinished"] == [0, 1, 2, 3]
    assert (f.file, f.line) == ("node1.log", 3)  # the odd node's line leads the evidence
    assert "0 on ranks 0, 2 and 3; 1 on rank 1" in f.text


def test_lines_tied_to_the_init_that_completes_after_them():
    # (before 2.18.3 no START line: the COMPLETE line that follows names the communicator)
    files = {f"node{n}.log": _node(n, n % 2, start=False, complete=True) for n in range(2)}
    (f,) = findings(files, "cross_nic")
    assert f.fields["comm_id"] == "0x7a1c93e0" and f.fields["unfinished"] == []
    assert f.fields["failed"] is False  # no failure in the job, every init completed


def test_nothing_when_the_ranks_agree_or_for_other_graphs():
    assert findings({f"node{n}.log": _node(n, 1) for n in range(4)}, "cross_nic") == []
    # the tree graph (pattern 1) is not compared
    assert findings({f"node{n}.log": _node(n, n % 2, pattern=1) for n in range(4)}, "cross_nic") == []


def test_communicators_are_compared_with_themselves_only():
    files = {"node0.log": _node(0, 0, comm="0xaaa") + _node(0, 1, comm="0xbbb"),
             "node1.log": _node(1, 0, comm="0xaaa") + _node(1, 1, comm="0xbbb")}
    assert findings(files, "cross_nic") == []


def test_the_oldest_release_is_the_one_named():
    files = {"node0.log": _node(0, 0, version="2.21.5"), "node1.log": _node(1, 1, version="2.18.1")}
    (f,) = findings(files, "cross_nic")
    assert f.fields["nccl_version"] == "2.18.1"


WATCHDOG = ("[rank{r}]:[E1205 10:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
            "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")


def _cpus(n: int, *types: str, version: str | None = "2.19.3") -> str:
    head = f"node{n}:{n}00:{n}01 [0] NCCL INFO "
    out = f"{head}NCCL version {version}+cuda12.3\n" if version else ""
    out += f"{head}=== System : maxBw 24.0 totalBw 24.0 ===\n"
    for i, t in enumerate(types):
        out += f"{head}CPU/{i} ({t})\n{head}+ PCI[24.0] - GPU/1B000 (0)\n"
    return out


def test_one_amd_node_among_intel_nodes():
    files = {f"node{n}.log": _cpus(n, "1/2/0" if n == 2 else "1/1/2") for n in range(4)}
    files["node3.log"] += WATCHDOG.format(r=3)
    (f,) = findings(files, "cpu")
    assert f.fields["values"] == {"x86_64 AMD": ["node2"], "x86_64 Intel": ["node0", "node1", "node3"]}
    assert f.fields["minority"] == ["node2"] and f.fields["basis"] == "hosts"
    assert f.fields["failed"] is True and f.fields["nccl_version"] == "2.19.3"
    assert f.text.startswith("the CPU type differs between hosts: x86_64 AMD on node2")
    assert (f.file, f.line) == ("node2.log", 3)


def test_cpu_models_and_arm_hosts():
    # Skylake and Broadwell are one vendor: NCCL's tuning reads the architecture and the vendor only
    assert findings({"node0.log": _cpus(0, "1/1/2"), "node1.log": _cpus(1, "1/1/1")}, "cpu") == []
    (f,) = findings({"node0.log": _cpus(0, "1/1/2"), "node1.log": _cpus(1, "3/0/0")}, "cpu")
    assert set(f.fields["values"]) == {"x86_64 Intel", "arm64"}
    # 2.21's ids (CPU/0-0) read the same way
    newer = {f"node{n}.log": _cpus(n, t).replace("CPU/0 ", "CPU/0-0 ") for n, t in enumerate(("1/1/2", "1/2/0"))}
    (f,) = findings(newer, "cpu")
    assert set(f.fields["values"]) == {"x86_64 Intel", "x86_64 AMD"}
    # a host whose two sockets differ is left out
    assert findings({"node0.log": _cpus(0, "1/1/2", "1/2/0"), "node1.log": _cpus(1, "1/1/2")}, "cpu") == []


def test_nccl_s_own_line_when_the_hosts_lines_are_missing():
    head = "node0:100:101 [0] NCCL INFO "
    files = {"node0.log": f"{head}NCCL version 2.23.4+cuda12.6\n{head}CPUs with mixed vendors were detected.\n"}
    (f,) = findings(files, "cpu")
    assert f.fields["basis"] == "nccl" and f.fields["mixed"] == ["vendors"] and f.fields["values"] == {}
    assert f.fields["failed"] is False and f.text == "NCCL found CPUs of mixed vendors among the ranks"


def test_a_path_line_naming_a_cpu_is_not_its_type():
    line = ("node{n}:1:1 [0] NCCL INFO NET/0 :GPU/4F000 (6/3.125000/SYS) CPU/0 (4/3.125000/SYS) "
            "NET/0 (0/5000.000000/LOC)\n")
    assert findings({f"node{n}.log": line.format(n=n) for n in range(2)}, "cpu") == []


def test_no_init_line_at_all_says_nothing_of_the_init():
    # NCCL_DEBUG_SUBSYS=GRAPH only: the ring lines, no init line; compared, but no init called unfinished
    files = {f"node{n}.log": _node(n, n % 2, start=False) for n in range(2)}
    (f,) = findings(files, "cross_nic")
    assert f.fields["comm_id"] is None and f.fields["unfinished"] == [] and f.fields["failed"] is False
    assert f.text.startswith("the ring graph's crossNic differs between ranks")
    # an earlier communicator completed in the same process: the later one's init did not
    files = {f"node{n}.log": _node(n, 0, comm="0xaaa", start=False, complete=True) + _node(n, n % 2, start=False)
             for n in range(2)}
    (f,) = findings(files, "cross_nic")
    assert f.fields["unfinished"] == [0, 1] and f.fields["failed"] is True
