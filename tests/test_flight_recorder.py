"""Flight-recorder dumps as input (logdoc/flight_recorder.py) and what they say together
(logdoc/analysis/flight.py)."""
from __future__ import annotations

import copyreg
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from logdoc.analysis import analyze
from logdoc.api import build_report
from logdoc.flight_recorder import DumpError, entry_state, load, safe_loads, sniff
from logdoc.kb import load_rules
from logdoc.pipeline import parse_paths

ROOT = Path(__file__).resolve().parents[1]


def entry(seq, op="all_reduce", sizes=((1024,),), dtype="Float", state="completed", pg=("0", "default_pg"),
          frames=("train.py", 42, "step")):
    return {
        "frames": [{"name": "all_reduce", "filename": "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py",
                    "line": 3245},
                   {"name": frames[2], "filename": frames[0], "line": frames[1]}],
        "record_id": seq - 1, "pg_id": 0, "process_group": pg, "thread_name": "python", "thread_id": "1",
        "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq, "profiling_name": f"nccl:{op}",
        "time_created_ns": 1796152764630022399 + seq, "input_sizes": [list(s) for s in sizes],
        "input_dtypes": [dtype], "output_sizes": [list(s) for s in sizes], "output_dtypes": [dtype],
        "state": state, "time_discovered_started_ns": None, "time_discovered_completed_ns": None,
        "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
    }


def dump(entries, ranks="[0, 1, 2, 3]"):
    return {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": ranks}},
            "pg_status": {}, "comm_lib_version": "2.21.5", "entries": entries}


def write(tmp_path, dumps: dict[int, dict], form="pickle"):
    paths = []
    for r, d in dumps.items():
        p = tmp_path / f"nccl_trace_rank_{r}"
        p.write_bytes(pickle.dumps(d, protocol=4) if form == "pickle" else json.dumps(d).encode())
        paths.append(str(p))
    return paths


def run(paths):
    res = parse_paths(paths)
    return analyze(res.events, res.files)


def found(a, kind):
    return [e for e in a.synthetic if e.kind == kind and e.fields.get("source") == "flight_recorder"]


# -- reading safely -------------------------------------------------------------------------------------

class _Boom:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


class _Eval:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (eval, (f"open({self.path!r}, 'w').write('x')",))


def _hostile(path: Path) -> list[bytes]:
    p = str(path)
    out = [pickle.dumps({"entries": [_Boom(p)], "version": "2.10"}, protocol=proto) for proto in (0, 2, 4, 5)]
    out.append(pickle.dumps({"entries": [], "x": _Eval(p)}, protocol=4))
    # a protocol-0 INST opcode: builds os.system("touch ...") the old way
    out.append(b"(S'touch " + p.encode() + b"'\nios\nsystem\n.")
    # an extension code registered for os.system (EXT1): resolved through find_class too
    copyreg.add_extension("os", "system", 0xF0)
    try:
        out.append(b"\x80\x02\x82\xf0X" + len("touch " + p).to_bytes(4, "little") + b"touch " + p.encode() + b"\x85R.")
    finally:
        copyreg.remove_extension("os", "system", 0xF0)
    # a persistent id
    out.append(b"\x80\x02Pfoo\n.")
    return out


def test_hostile_pickles_run_nothing(tmp_path):
    marker = tmp_path / "pwned"
    for i, data in enumerate(_hostile(marker)):
        with pytest.raises(DumpError) as exc:
            load(data, f"dump{i}")
        assert "\n" not in str(exc.value)
        assert not marker.exists(), f"payload {i} ran"
    # the same bytes through the ordinary unpickler do run code: the test would notice
    pickle.loads(_hostile(marker)[2])
    assert marker.exists()


def test_hostile_pickle_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "nccl_trace_rank_0"
    bad.write_bytes(_hostile(marker)[2])
    p = subprocess.run([sys.executable, "-m", "logdoc", "explain", str(bad)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert "refusing to load" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not marker.exists()


def test_plain_containers_are_read():
    d = {"a": [1, 2.5, None, True], "b": ("x", b"y"), "c": {1, 2}, "d": frozenset({3})}
    assert safe_loads(pickle.dumps(d, protocol=5)) == d
    assert sniff(pickle.dumps(d, protocol=2)) == "pickle" and sniff(b'{"entries": [], "version": "2"}') == "json"
    assert sniff(b"node1:12:12 [0] NCCL INFO ...") is None


def test_gloo_state_from_retired():
    assert entry_state({"state": "scheduled", "retired": True}) == "completed"
    assert entry_state({"state": "scheduled", "retired": False}) == "scheduled"
    assert entry_state({"state": "scheduled", "time_discovered_started_ns": 5}) == "started"


# -- what the dumps say together --------------------------------------------------------------------

def test_rank_that_never_reached_the_collective(tmp_path):
    ok = [entry(s) for s in range(1, 5)]
    waiting = ok + [entry(5, state="started")]
    paths = write(tmp_path, {0: dump(waiting), 1: dump(waiting), 2: dump(ok), 3: dump(waiting)})
    a = run(paths)
    [h] = found(a, "analysis.hung_rank")
    assert h.fields["ranks"] == [2] and h.fields["seq"] == 5 and h.fields["waiting_ranks"] == [0, 1, 3]
    assert "train.py:42 in step" in h.text


def test_missing_dump_and_json_form(tmp_path):
    ok = [entry(s) for s in range(1, 4)]
    paths = write(tmp_path, {0: dump(ok), 1: dump(ok), 3: dump(ok)}, form="json")
    a = run(paths)
    [m] = found(a, "analysis.missing_ranks")
    assert m.fields["ranks"] == [2]
    assert not found(a, "analysis.hung_rank")


@pytest.mark.parametrize("aspect,odd", [
    ("op_type", dict(op="broadcast")),
    ("input_sizes", dict(sizes=((2048,),))),
    ("dtypes", dict(dtype="BFloat16")),
])
def test_mismatched_collective(tmp_path, aspect, odd):
    same = [entry(s) for s in range(1, 3)]
    paths = write(tmp_path, {r: dump(same + [entry(3, state="started", **(odd if r == 1 else {}))]) for r in range(4)})
    a = run(paths)
    [m] = found(a, "analysis.collective_mismatch")
    assert m.fields["aspect"] == aspect and m.fields["minority_ranks"] == [1] and m.fields["seq"] == 3


def test_all_completed_gives_nothing(tmp_path):
    ok = [entry(s) for s in range(1, 6)]
    a = run(write(tmp_path, {r: dump(ok) for r in range(4)}))
    assert not [e for e in a.synthetic if e.fields.get("source") == "flight_recorder"]


def test_findings_tie_to_the_text_log_of_the_same_rank(tmp_path):
    ok = [entry(s) for s in range(1, 3)]
    waiting = ok + [entry(3, state="started")]
    paths = write(tmp_path, {0: dump(waiting, "[0, 1]"), 1: dump(ok, "[0, 1]")})
    log = tmp_path / "rank1.log"
    log.write_text("[rank1]:[W1201 19:20:00.000000000 ProcessGroupNCCL.cpp:1200] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
                   "some warning before the hang\n")
    a = run(paths + [str(log)])
    [h] = found(a, "analysis.hung_rank")
    assert ("%s" % log, 1) in [tuple(x) for x in h.fields["evidence"]]


# -- the real-run samples ---------------------------------------------------------------------------

FR_SAMPLES = sorted(p.parent.name for p in (ROOT / "samples").glob("gloo-fr-*/sample.yaml"))


@pytest.mark.parametrize("name", FR_SAMPLES)
def test_fr_samples(name):
    import yaml

    meta = yaml.safe_load((ROOT / "samples" / name / "sample.yaml").read_text())
    rep = build_report(parse_paths([str(ROOT / "samples" / name)]), load_rules())
    top = rep["diagnoses"][0]
    assert (top["id"], top["ranks"]) == (meta["expect"]["rule"], meta["expect"]["origin_ranks"])
    # the dumps alone say the same
    dumps = [str(p) for p in (ROOT / "samples" / name / "fr").iterdir()]
    rep = build_report(parse_paths(dumps), load_rules())
    top = rep["diagnoses"][0]
    assert top["ranks"] == meta["expect"]["origin_ranks"]


def test_json_dumps_as_in_memory_text(tmp_path):
    """The browser and the API hand sources over as text: JSON dumps are read from it too."""
    from logdoc.api import explain_sources

    ok = [entry(s) for s in range(1, 4)]
    waiting = ok + [entry(4, state="started")]
    rep = explain_sources([(f"fr/trace_rank_{r}", json.dumps(dump(waiting if r != 3 else ok))) for r in range(4)])
    top = rep["diagnoses"][0]
    assert (top["id"], top["ranks"]) == ("LD503", [3])


def test_straggler_from_the_times_the_entries_were_created(tmp_path):
    def entries(r):
        out = []
        for s in range(1, 9):
            e = entry(s)
            e["time_created_ns"] = 1796152764000000000 + s * 6_000_000_000 + (4_000_000_000 if r == 2 else 0)
            out.append(e)
        return out
    a = run(write(tmp_path, {r: dump(entries(r)) for r in range(4)}))
    [s] = found(a, "analysis.straggler")
    assert s.fields["ranks"] == [2] and s.fields["lag_seconds"] == {2: 4.0} and s.fields["common_count"] == 8
    assert not found(a, "analysis.hung_rank")
