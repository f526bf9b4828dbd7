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
