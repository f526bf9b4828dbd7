"""Real-run samples with PyTorch flight-recorder dumps (torch 2.13 CPU, Gloo on 127.0.0.1).

    python samples/generate_fr.py            # both scenarios
    python samples/generate_fr.py NAME       # one of them

torch 2.13 records Gloo collectives in the flight recorder (TORCH_FR_BUFFER_SIZE) and dumps them with
``torch._C._distributed_c10d._dump_fr_trace()`` (pickle) or ``_dump_fr_trace_json()``; Gloo has no
automatic dump on timeout, so the worker (``_workers/fr_dump.py``) writes the dump itself when a
collective fails and on SIGTERM, to ``$TORCH_FR_DUMP_TEMP_FILE<rank>``. Runs use the process
handling of ``generate.py`` (bounded in time, every process killed at the end); the dumps are copied
into ``samples/<name>/fr/`` byte for byte, the logs are ``rank<N>.log`` as printed.
"""
from __future__ import annotations

import datetime
import fcntl
import glob
import os
import shutil
import sys
import time

import generate as g

SC = {
    "gloo-fr-hang-rank-skips-allreduce": dict(
        title="Flight recorder (pickle dumps): rank 1 of 2 hangs before the all_reduce of step 4; rank 0 times out in it",
        world=2, args=["--fault", "hang", "--fault-rank", "1", "--fault-step", "4", "--format", "pickle",
                       "--steps", "6", "--timeout", "10"],
        must_exit=[0], category="collective_timeout_hung_rank", rule="LD503", origin=[1],
        description=(
            "Two Gloo ranks with TORCH_FR_BUFFER_SIZE=2000 and a 10 s process-group timeout. Rank 1 stops before "
            "the all_reduce of step 4 (a simulated host-side hang: it sleeps); rank 0 enters that all_reduce "
            "(collective #5 of the default group) and Gloo times it out after 10 s. Rank 0 writes its "
            "flight-recorder dump when the collective fails, rank 1 when the run is stopped with SIGTERM "
            "(as a scheduler stops a job): fr/fr_trace_rank_0 and fr/fr_trace_rank_1, pickles from "
            "torch._C._distributed_c10d._dump_fr_trace()."),
        notes=(
            "The culprit is rank 1: in the dumps rank 0 recorded gloo:all_reduce #5 and never completed it, rank 1's "
            "last entry is #4 (completed) and it never recorded #5. Rank 0's Gloo timeout is the consequence. In "
            "Gloo entries the state stays 'scheduled'; 'retired: true' says the work finished (logdoc reads it "
            "so). The dump files are as torch wrote them."),
    ),
    "gloo-fr-mismatched-collective": dict(
        title="Flight recorder (JSON dumps): rank 2 of 4 calls broadcast where the others call all_reduce",
        world=4, args=["--fault", "op", "--fault-rank", "2", "--fault-step", "3", "--format", "json",
                       "--steps", "5", "--timeout", "10"],
        must_exit=None, category="collective_mismatch", rule="LD507", origin=[2],
        description=(
            "Four Gloo ranks with TORCH_FR_BUFFER_SIZE=2000 and a 10 s process-group timeout. At step 3 rank 2 "
            "takes another code path and calls broadcast while ranks 0, 1 and 3 call all_reduce (collective #4 "
            "of the default group). Every rank writes its flight-recorder dump as JSON "
            "(torch._C._distributed_c10d._dump_fr_trace_json()) when its collective fails, or on SIGTERM when the "
            "run is stopped: fr/fr_trace_rank_0 to fr/fr_trace_rank_3."),
        notes=(
            "The culprit is rank 2: at collective #4 the dumps show gloo:broadcast on rank 2 and gloo:all_reduce on "
            "the others, which is what torchfrtrace reports as a collective type mismatch. Whatever errors the ranks "
            "print afterwards follow from it. The dump files are as torch wrote them."),
    ),
}


def run_one(name: str, date: str) -> list[str]:
    sc = SC[name]
    out = os.path.join(g.HERE, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    g.prepare_run_dir()
    os.makedirs(os.path.join(g.RUN_DIR, "fr"))
    run = g.Run(name, out)
    # the ranks still running are stopped with SIGTERM and write their dump then: give them time
    run.terminate = lambda procs, grace=3.0: g.Run.terminate(run, procs, grace=20.0)
    env = {"TORCH_FR_BUFFER_SIZE": 2000, "TORCH_FR_DUMP_TEMP_FILE": "fr/fr_trace_rank_"}
    try:
        codes = run.ranks(sc["world"], sc["args"], env=env, must_exit=sc["must_exit"], limit=90, grace=2,
                          script="fr_dump.py")
    finally:
        run.cleanup()
    os.makedirs(os.path.join(out, "fr"))
    dumps = sorted(glob.glob(os.path.join(g.RUN_DIR, "fr", "fr_trace_rank_*")))
    for p in dumps:
        shutil.copyfile(p, os.path.join(out, "fr", os.path.basename(p)))
    problems = []
    if len(dumps) != sc["world"]:
        problems.append(f"{len(dumps)} dumps for {sc['world']} ranks")
    desc = sc["description"] + " Command(s): " + " ; ".join(run.commands) + f" Exit codes: {codes}."
    lines = [f"title: {g.yq(sc['title'])}", "description: >-"] + ["  " + x for x in g._wrap(desc)] + [
        "origin: real-run",
        "produced:",
        f"  how: {g.yq('python samples/generate_fr.py ' + name)}",
        f"  torch: {g.yq(g.TORCH_VERSION)}",
        "  nccl: null",
        f"  date: {g.yq(date)}",
        "expect:",
        "  healthy: false",
        f"  category: {sc['category']}",
        f"  rule: {sc['rule']}",
        f"  origin_ranks: [{', '.join(map(str, sc['origin']))}]",
        "notes: >-",
    ] + ["  " + x for x in g._wrap(sc["notes"])]
    with open(os.path.join(out, "sample.yaml"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return problems


def main(argv: list[str]) -> int:
    names = argv or list(SC)
    os.makedirs(os.path.dirname(g.RUN_DIR), exist_ok=True)
    lock = open(g.RUN_DIR + ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    g._become_subreaper()
    date = datetime.date.today().isoformat()
    bad = 0
    try:
        for name in names:
            t0 = time.monotonic()
            problems = run_one(name, date)
            print(f"== {name}: {'ok' if not problems else '; '.join(problems)} ({time.monotonic() - t0:.0f}s)", flush=True)
            bad += bool(problems)
    finally:
        shutil.rmtree(g.RUN_DIR, ignore_errors=True)
        g.write_readme()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
