"""Ranks that launch different collectives under one opCount of an NCCL communicator
(logdoc/analysis/launches.py)."""
from __future__ import annotations

from logdoc.analysis import analyze
from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_paths, parse_sources


def run(files: dict[str, str], reduce: bool = False):
    res = parse_sources(list(files.items()), reduce=reduce)
    return analyze(res.events, res.files)


def found(a):
    return [e for e in a.synthetic if e.kind == "analysis.collective_mismatch" and e.fields.get("source") == "nccl_launch"]


def init(pid, dev, rank, comm, cid, n):
    return (f"gpu1:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRankConfig comm {comm} rank {rank} nranks {n} "
            f"cudaDev {dev} nvmlDev {dev} busId {0x18000 + dev * 0x1000:x} commId {cid} - Init COMPLETE")


def launch(pid, dev, op, comm, n, name="AllReduce", count=262144, dtype=7, root=0, redop=0, host="gpu1"):
    return (f"{host}:{pid}:{pid} [{dev}] NCCL INFO {name}: opCount {op:x} sendbuff 0x7f3c4a000000 recvbuff "
            f"0x7f3c4a000000 count {count} datatype {dtype} op {redop} root {root} comm {comm} [nranks={n}] "
            f"stream 0x55d0c9b0c000")


def ranks_job(ops, with_init=True, cid="0x3f2a9c1d7e6b5a41"):
    """One log per rank; ``ops[rank]`` the launches (keyword dicts for :func:`launch`) in order, opCount 0 up."""
    n = len(ops)
    files = {}
    for r, launches in ops.items():
        comm = f"0x55{r:02x}00c0e0f0a0"
        lines = [init(500 + r, r, r, comm, cid, n)] if with_init else []
        for i, kw in enumerate(launches):
            kw = dict(kw)
            op = kw.pop("op", i)
            lines.append(launch(500 + r, r, op, comm, n, **kw))
        files[f"rank{r}.log"] = "\n".join(lines) + "\n"
    return files


SAME = [{}, {}, {}]


def test_a_rank_launching_another_collective_is_named():
    ops = {r: [{}, {"name": "Broadcast" if r == 3 else "AllReduce"}, {}] for r in range(4)}
    [m] = found(run(ranks_job(ops)))
    f = m.fields
    assert (f["aspect"], f["seq"], f["minority_ranks"], f["ranks"]) == ("op_type", 1, [3], [0, 1, 2, 3])
    assert f["values"] == {"AllReduce": [0, 1, 2], "Broadcast": [3]}
    assert f["pg_id"] == "0x3f2a9c1d7e6b5a41" and m.rank == 3
    assert "at opCount 1 of NCCL communicator 0x3f2a9c1d7e6b5a41" in m.text
    assert m.line == 3 and m.file == "rank3.log"  # the odd rank's launch line comes first


def test_a_rank_launching_another_count_is_named_and_carded():
    ops = {r: [{"count": 4096 if r == 0 else 1024}] for r in range(4)}
    files = ranks_job(ops)
    [m] = found(run(files))
    assert (m.fields["aspect"], m.fields["minority_ranks"]) == ("count", [0])
    assert m.fields["values"] == {"AllReduce (count 1024)": [1, 2, 3], "AllReduce (count 4096)": [0]}
    rep = build_report(parse_sources(list(files.items())), load_rules())
    top = rep["diagnoses"][0]
    assert (top["id"], top["ranks"]) == ("LD597", [0])
    assert "opCount 0" in top["title"] and "SeqNum" not in top["title"]


def test_processes_without_ranks_count_and_datatype_named():
    # one file of grep output, no rank and no init line: the processes are the members
    lines = [launch(700 + p, p, 0, f"0x7f{p:02x}005a260", 4, name="Broadcast", count=25 if p else 99,
                    dtype=4 if p else 6) for p in range(4)]
    [m] = found(run({"all.log": "\n".join(f"LOG.{p}.txt:{ln}" for p, ln in enumerate(lines)) + "\n"}))
    f = m.fields
    assert f["aspect"] == "count, datatype" and f["minority_ranks"] == ["gpu1:700"]
    assert f["values"]["Broadcast (count 99, datatype 6 (float16))"] == ["gpu1:700"]
    assert len(f["ranks"]) == 4 and m.fields["origin_ranks"] == []


def test_root_and_reduction_op_differ():
    ops = {r: [{"name": "Broadcast", "root": 1 if r == 2 else 0}] for r in range(3)}
    [m] = found(run(ranks_job(ops)))
    assert (m.fields["aspect"], m.fields["minority_ranks"]) == ("root", [2])
    ops = {r: [{"redop": 2 if r == 1 else 0}] for r in range(3)}
    [m] = found(run(ranks_job(ops)))
    assert m.fields["aspect"] == "op" and m.fields["values"]["AllReduce (op 2 (max))"] == [1]


def test_only_the_first_differing_opcount_is_reported():
    ops = {r: [{}, {"count": 5 if r == 1 else 6}, {"count": 7 if r == 1 else 8}] for r in range(3)}
    [m] = found(run(ranks_job(ops)))
    assert m.fields["seq"] == 1


def test_digest_path_finds_it_too():
    ops = {r: [{"count": 4096 if r == 0 else 1024}] + [{}] * 200 for r in range(3)}
    [m] = found(run(ranks_job(ops), reduce=True))
    assert (m.fields["seq"], m.fields["minority_ranks"]) == (0, [0])


def test_a_difference_among_the_folded_launches_is_found_as_on_every_line(tmp_path):
    """``explain`` and a digest fold a long run of launches (logdoc/digest.py: the first and last few whole,
    the last TAIL as rows); a rank that reduced with another op 20 launches before the end is found all
    the same, with the same diagnoses, and cited by the line of its launch."""
    from logdoc import digest

    ops = {r: [{}] * 180 + [{"redop": 2 if r == 1 else 0}] + [{}] * 20 for r in range(3)}
    files = ranks_job(ops)
    raw, folded = found(run(files)), found(run(files, reduce=True))
    assert [(m.fields["seq"], m.fields["aspect"], m.fields["minority_ranks"]) for m in folded] == [(180, "op", [1])]
    assert [(m.fields["seq"], m.fields["values"]) for m in raw] == [(180, folded[0].fields["values"])]
    assert (folded[0].file, folded[0].line) == ("rank1.log", 182) == (raw[0].file, raw[0].line)
    assert folded[0].fields["evidence"] == raw[0].fields["evidence"]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = tmp_path.parent / "launches-node.json"
    digest.write(parse_paths([str(tmp_path)], reduce=True), str(out))
    rules = load_rules()
    reports = [build_report(parse_paths(p, reduce=red), rules) for p, red in
               (([str(tmp_path)], False), ([str(tmp_path)], True), ([str(out)], False))]
    tops = [[(d["id"], d["ranks"]) for d in rep["diagnoses"]] for rep in reports]
    assert tops[0][0] == ("LD597", [1]) and tops[1] == tops[0] and tops[2] == tops[0]
    assert [e["line"] for e in reports[1]["diagnoses"][0]["evidence"]][:1] == [182]


def test_a_send_before_the_folded_launches_still_ends_the_comparison():
    # rank 0's Send at opCount 5 is folded away, its first opCount kept in the progress event's ops
    ops = {r: [{}] * 5 + [{"name": "Send" if r == 0 else "Recv"}] + [{}] * 150 + [{"count": 9 if r else 8}] + [{}] * 10
           for r in range(2)}
    assert found(run(ranks_job(ops))) == []
    assert found(run(ranks_job(ops), reduce=True)) == []


def test_launches_folded_as_two_streams_of_one_process_count_as_one():
    """A process's lines that tell two ranks apart (an envelope on some of them) are two streams to the
    digest, each folded on its own; the progress of the process's launches is still the whole of them."""
    from logdoc.analysis.collectives import progress_table

    ops = {0: [{}] * 150, 1: [{}] * 150, 2: [{}] * 120}
    files = ranks_job(ops)
    lines = files["rank1.log"].splitlines()
    files["rank1.log"] = "\n".join(("[default1]:" + ln) if 20 <= i < 100 else ln for i, ln in enumerate(lines)) + "\n"
    raw, folded = run(files), run(files, reduce=True)
    assert len([e for e in folded.events if e.kind == "nccl.progress" and e.rank == 1]) == 2
    view = [[(r["member"], r["launches"], r["last"]) for t in progress_table(a.job) for r in t["rows"]]
            for a in (raw, folded)]
    assert view[0] == view[1] == [(0, 150, 149), (1, 150, 149), (2, 120, 119)]


# -- near misses ------------------------------------------------------------------------------------

def test_identical_launches_and_a_single_rank_give_nothing():
    assert found(run(ranks_job({r: SAME for r in range(4)}))) == []
    assert found(run(ranks_job({0: [{"count": 3}, {"name": "Broadcast"}]}))) == []


def test_two_communicators_of_one_size_are_not_compared_with_each_other():
    # 4 ranks: TP groups {0,1} {2,3} run AllReduce, DP groups {0,2} {1,3} run Broadcast, both at opCount 0
    tp = {0: 0, 1: 0, 2: 1, 3: 1}
    dp = {0: 0, 1: 1, 2: 0, 3: 1}
    for with_init in (True, False):
        files = {}
        for r in range(4):
            tcomm, dcomm = f"0x55{r:02x}01c0e0f0a0", f"0x55{r:02x}02c0e0f0a0"
            lines = []
            if with_init:
                lines.append(init(500 + r, r, r % 2, tcomm, f"0x1111{tp[r]}", 2))
                lines.append(init(500 + r, r, r // 2, dcomm, f"0x2222{dp[r]}", 2))
            lines.append(launch(500 + r, r, 0, tcomm, 2, count=100 + tp[r]))
            lines.append(launch(500 + r, r, 0, dcomm, 2, name="Broadcast", count=7))
            files[f"rank{r}.log"] = "\n".join(lines) + "\n"
        assert found(run(files)) == [], with_init


def test_grouped_launches_under_one_opcount_are_not_compared():
    ops = {0: [{"op": 0, "count": 10}, {"op": 0, "count": 20}, {"op": 1}],
           1: [{"op": 0, "count": 20}, {"op": 0, "count": 10}, {"op": 1}]}
    assert found(run(ranks_job(ops))) == []


def test_point_to_point_launches_are_not_compared_nor_what_follows_them():
    ops = {0: [{"name": "Send", "count": 10}, {"count": 5}],
           1: [{"name": "Recv", "count": 99}, {"count": 6}]}
    assert found(run(ranks_job(ops))) == []
    # before the first Send/Recv the collectives still count
    ops = {0: [{"count": 1}, {"name": "Send"}], 1: [{"count": 2}, {"name": "Recv"}]}
    [m] = found(run(ranks_job(ops)))
    assert m.fields["seq"] == 0


def test_masked_pids_in_one_paste_stay_apart_by_gpu():
    # one paste of one host's processes whose pids were masked: the GPU of each header tells them apart
    lines = [launch("XXXXXX", d, 0, f"0x55{d:02x}00c0e0f0a0", 4, count=53 if d else 25503912, dtype=4 if d else 6)
             for d in range(4)]
    [m] = found(run({"paste.txt": "\n".join(lines) + "\n"}))
    assert m.fields["aspect"] == "count, datatype"
    assert m.fields["values"]["AllReduce (count 25503912, datatype 6 (float16))"] == ["gpu1 GPU 0"]
