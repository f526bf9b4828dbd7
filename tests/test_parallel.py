"""Parsing many files with worker processes gives what one process gives: the same events in the
same order, the same counts, the same not-understood list, the same folded groups."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logdoc import digest, parallel
from logdoc.pipeline import parse_paths

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(Path(__file__).parent / "perf"))


def _as_data(res):
    return ([e.to_dict() for e in res.events], res.stats.to_dict(),
            [(u.file, u.line, u.text) for u in res.unrecognized], res.files, res.folded)


@pytest.mark.parametrize("reduce", [False, True])
def test_parallel_equals_one_process(tmp_path, reduce):
    import gen_logs

    job = tmp_path / "job"
    gen_logs.job_folder(str(job), nranks=10, file_mb=0.2, seed=12)
    d = tmp_path / "node9.json"
    digest.write(parse_paths([str(SAMPLES / "nccl-ib-completion-error-12")], reduce=True), str(d))
    paths = [str(job), str(SAMPLES / "torchrun-redirects-logdir-record"), str(SAMPLES / "gloo-master-not-started"),
             str(d), str(SAMPLES / "nccl-socket-fallback")]
    one = _as_data(parse_paths(paths, jobs=1, reduce=reduce))
    two = _as_data(parse_paths(paths, jobs=2, reduce=reduce))
    assert one == two
    assert len(one[3]) > 12


def test_runs_of_files_per_task_give_the_same(tmp_path, monkeypatch):
    """Several files per task (a job of many rank logs): the same as one process, and as one file a task."""
    import gen_logs

    job = tmp_path / "job"
    gen_logs.job_folder(str(job), nranks=24, file_mb=0.01, seed=5)
    paths = [str(job), str(SAMPLES / "gloo-master-not-started")]
    one = _as_data(parse_paths(paths, jobs=1, reduce=True))
    sizes = []
    real = parallel.chunks

    def runs_of_five(srcs, n):
        got = [srcs[i:i + 5] for i in range(0, len(srcs), 5)]
        sizes.extend(len(g) for g in got)
        return got

    monkeypatch.setattr(parallel, "chunks", runs_of_five)
    two = _as_data(parse_paths(paths, jobs=2, reduce=True))
    assert one == two and max(sizes) == 5
    assert [len(c) for c in real(list(range(2000)), 2)] == [64] * 31 + [16]
    assert [len(c) for c in real(list(range(10)), 2)] == [1] * 10


def test_unrecognized_cap_is_the_same(tmp_path, monkeypatch):
    from logdoc import results

    monkeypatch.setattr(results, "MAX_UNRECOGNIZED", 3)
    files = []
    for i in range(6):
        p = tmp_path / f"r{i}.log"
        p.write_text("".join(f"NCCL something odd {i} {j}\n" for j in range(2)))
        files.append(str(p))
    one = parse_paths(files, jobs=1)
    two = parse_paths(files, jobs=3)
    assert [(u.file, u.line) for u in one.unrecognized] == [(u.file, u.line) for u in two.unrecognized]
    assert len(one.unrecognized) == 3


def test_when_workers_pay():
    from logdoc.read.source import Source

    few = [Source("a", path=__file__)] * 2
    many = [Source("a", path=__file__)] * 8
    assert not parallel.worth_it(few, 4)
    assert parallel.worth_it(many, 4)                    # asked for explicitly
    assert not parallel.worth_it(many, None)             # small files: not worth forking
    assert not parallel.worth_it(many, 1)
    assert not parallel.worth_it([Source("<stdin>", stream=sys.stdin)] * 8, 4)
