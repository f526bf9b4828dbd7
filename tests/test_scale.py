"""A job of many ranks (issue 19): the same report from raw rank files and from node digests, and
what the parse keeps per rank does not grow with the number of ranks.

The job is ``tests/perf/gen_logs.py``'s job folder (one failing rank, every other rank echoing
the watchdog's timeout), read as the command line reads it (``reduce=True``) and as one digest per
node of 8 ranks (as ``tests/perf/bench.py``'s scale case makes them).
"""
from __future__ import annotations

import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

from logdoc import digest
from logdoc.api import build_report
from logdoc.events import _TEXT
from logdoc.pipeline import parse_paths, parse_sources
from logdoc.read.source import expand

sys.path.insert(0, str(Path(__file__).parent / "perf"))

import gen_logs  # noqa: E402


@lru_cache(maxsize=1)
def rules():
    from logdoc.kb import load_rules

    return load_rules()


def _cards(report: dict) -> list[tuple]:
    out = []
    for key in ("diagnoses", "notes"):
        for d in report[key]:
            out.append((key, d["id"], d["title"], tuple(d["ranks"]), d["severity"], d["role"]))
            for s in d.get("symptoms") or ():
                out.append(("symptom", s.get("id"), s.get("title"), tuple(s.get("ranks") or ())))
    return out


def _node_digests(job: Path, out: Path, per_node: int = gen_logs.GPUS) -> list[str]:
    out.mkdir()
    files = sorted(str(f) for f in job.iterdir())
    made = []
    for i in range(0, len(files), per_node):
        node = files[i:i + per_node]
        name = str(out / f"node{i // per_node:05d}.json.gz")
        digest.write(parse_sources(expand(node), jobs=1, reduce=True), name, inputs=node)
        made.append(name)
    return made


def test_a_200_rank_job_reads_the_same_raw_and_from_node_digests(tmp_path):
    job = tmp_path / "job"
    info = gen_logs.job_folder(str(job), 200, 0.01, seed=13)
    raw = build_report(parse_paths([str(job)], reduce=True), rules())
    dg = build_report(parse_paths(_node_digests(job, tmp_path / "digests")), rules())
    assert _cards(raw) == _cards(dg)
    first = raw["diagnoses"][0]
    assert first["id"] == "LD201" and first["ranks"] == [info["origin"]]
    assert [r["rank"] for r in raw["job"]["ranks"]] == [r["rank"] for r in dg["job"]["ranks"]] == list(range(200))
    assert raw["job"]["ranks"] == dg["job"]["ranks"]


def _per_rank(job: Path) -> tuple[Counter, list]:
    res = parse_paths([str(job)], reduce=True)
    return Counter(e.rank for e in res.events), res.events


def test_what_a_rank_keeps_does_not_grow_with_the_ranks(tmp_path):
    small, big = tmp_path / "small", tmp_path / "big"
    info = gen_logs.job_folder(str(small), 16, 0.01, seed=3)
    gen_logs.job_folder(str(big), 64, 0.01, seed=3)
    few, _ = _per_rank(small)
    many, events = _per_rank(big)
    echo = [r for r in many if r is not None and r != info["origin"]]
    assert len(echo) >= 60
    # a rank that only echoes the watchdog keeps as many events in a job of 64 ranks as in one of 16
    assert max(many[r] for r in echo) <= max(few[r] for r in few if r is not None and r != info["origin"])
    # each NCCL line's message is held once: its text is its process's header (one object for the
    # process) followed by the message
    nccl = [e for e in events if e.kind.startswith("nccl.") and e.fields.get("message")]
    held = [e for e in nccl if type(_TEXT.__get__(e)) is not str]
    assert len(held) >= 0.9 * len(nccl) > 0
    assert len({id(_TEXT.__get__(e)) for e in held}) <= len({(e.host, e.pid) for e in held}) * 2
    assert all(e.text.endswith(e.fields["message"]) for e in nccl)


def test_diagnose_holds_an_origin_list_only_where_it_is_not_the_printing_rank(tmp_path, monkeypatch):
    """A card's ranks are its matches' origins; a match whose origin is the rank that printed it (every
    echo of a watchdog cascade) keeps no list of its own, and the cards name the same ranks."""
    from logdoc import diagnose as dg

    job = tmp_path / "job"
    info = gen_logs.job_folder(str(job), 32, 0.01, seed=5)
    seen: dict[int, dg.Diagnosis] = {}
    add = dg.Diagnosis.add

    def spy(self, m, origins):
        add(self, m, origins)
        seen[id(self)] = self
        assert self.origin_of(m) == origins

    monkeypatch.setattr(dg.Diagnosis, "add", spy)
    report = build_report(parse_paths([str(job)], reduce=True), rules())
    matches = sum(len(d.matches) for d in seen.values())
    assert matches >= 32 and sum(len(d.origins) for d in seen.values()) <= 4
    assert report["diagnoses"][0]["ranks"] == [info["origin"]]
