"""Gloo job with PyTorch's flight recorder on (TORCH_FR_BUFFER_SIZE), used by samples/generate_fr.py.

Every rank runs a few training steps (all_reduce per step). A fault is injected on purpose:

* ``--fault hang``: rank FAULT_RANK stops before the all_reduce of step FAULT_STEP (a host-side
  hang: it sleeps); the others wait in that all_reduce until Gloo's timeout raises.
* ``--fault op``: rank FAULT_RANK calls broadcast where the others call all_reduce at step FAULT_STEP.

Every rank writes its flight-recorder dump the way a training script can: on an exception from a
collective (``except``) and on SIGTERM (what a scheduler sends to stop a job), to
``$TORCH_FR_DUMP_TEMP_FILE<rank>``, as pickle (``torch._C._distributed_c10d._dump_fr_trace()``) or
JSON (``_dump_fr_trace_json()``). Lines it prints itself start with "worker rank=R pid=P:".
"""
import argparse
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _dump_fr_trace, _dump_fr_trace_json

RANK = int(os.environ.get("RANK", "-1"))


def say(msg):
    print(f"worker rank={RANK} pid={os.getpid()}: {msg}", flush=True)


def dump(fmt, why):
    path = os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(RANK)
    data = _dump_fr_trace_json() if fmt == "json" else _dump_fr_trace()
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    say(f"{why}: flight recorder dump written to {path} ({len(data)} bytes)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--fault", choices=["hang", "op"], required=True)
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--fault-step", type=int, default=4)
    p.add_argument("--format", choices=["pickle", "json"], default="pickle")
    p.add_argument("--timeout", type=float, default=10.0)
    a = p.parse_args()

    def on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a launcher may signal the process and its group
        dump(a.format, "SIGTERM received")
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    dist.init_process_group("gloo", timeout=timedelta(seconds=a.timeout))
    say(f"init done, world size {dist.get_world_size()}, TORCH_FR_BUFFER_SIZE={os.environ.get('TORCH_FR_BUFFER_SIZE')}")
    t = torch.ones(1024)
    try:
        for step in range(a.steps):
            if RANK == a.fault_rank and step == a.fault_step:
                if a.fault == "hang":
                    say(f"step {step}: waiting for a lock held by another thread (simulated host-side hang)")
                    while True:
                        time.sleep(1)
                say(f"step {step}: broadcast instead of all_reduce (simulated divergent code path)")
                dist.broadcast(t, src=0)
            else:
                dist.all_reduce(t)
            say(f"step {step}: done")
    except Exception as exc:  # a collective failed: write the flight recorder, then fail
        say(f"collective failed: {type(exc).__name__}")
        dump(a.format, "after the failure")
        raise
    dist.destroy_process_group()
    say("finished")


if __name__ == "__main__":
    main()
