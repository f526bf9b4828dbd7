"""Toy data-parallel loop used by samples/generate.py to produce real-run samples.

It is started either by the generator itself (one process per rank, env:// rendezvous
through RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT) or by torchrun, and uses the Gloo
backend on 127.0.0.1. Faults are injected on purpose with --fault/--fault-ranks/--fault-step.
Every line it prints itself starts with "worker rank=R pid=P:"; everything else is
printed by torch, Gloo or Python.
"""
import argparse
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

RANK = int(os.environ.get("RANK", "-1"))


def say(msg):
    print(f"worker rank={RANK} pid={os.getpid()}: {msg}", flush=True)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--numel", type=int, default=1024)
    p.add_argument("--timeout", type=float, default=10.0, help="process group timeout, seconds")
    p.add_argument("--healthy-mix", action="store_true",
                   help="each step also runs broadcast, all_gather and barrier")
    p.add_argument("--fault", default="none",
                   choices=["none", "sigkill", "exit", "raise", "hang", "freeze", "slow",
                            "segfault"])
    p.add_argument("--fault-ranks", default="", help="comma separated global ranks")
    p.add_argument("--fault-step", type=int, default=2)
    p.add_argument("--exit-code", type=int, default=0)
    p.add_argument("--slow-seconds", default="2,6,12",
                   help="--fault slow: data-loading time of the fault ranks at steps 0, 1, 2 ...")
    p.add_argument("--jitter", type=float, default=0.0,
                   help="rank r spends r*JITTER seconds on its batch each step (normal imbalance)")
    p.add_argument("--group-timeout-ms", type=float, default=None,
                   help="run the loop on dist.new_group(timeout=timedelta(milliseconds=X))")
    p.add_argument("--record", action="store_true",
                   help="wrap main() in torch.distributed.elastic's @record (error files)")
    return p.parse_args()


def inject(fault, step, t, exit_code):
    if fault == "sigkill":
        # start the collective, then die while it is in flight (like the OOM killer would)
        dist.all_reduce(t, async_op=True)
        say(f"step {step}: all_reduce started, killing myself with SIGKILL (simulated OOM kill)")
        os.kill(os.getpid(), signal.SIGKILL)
    elif fault == "exit":
        say(f"step {step}: leaving the training loop early with sys.exit({exit_code}) (simulated early-stop bug)")
        sys.exit(exit_code)
    elif fault == "raise":
        say(f"step {step}: loading next batch")
        batch = {"input_ids": torch.zeros(8, 16, dtype=torch.long)}
        labels = batch["labels"]  # simulated user bug: the batch has no labels
        del labels
    elif fault == "hang":
        say(f"step {step}: waiting for the data loader (simulated: it never returns)")
        time.sleep(600)  # "forever" for the runs; bounded in case nobody ends this process
        os._exit(1)
    elif fault == "segfault":
        # a crash in native code (here: reading address 0 through ctypes)
        say(f"step {step}: calling into a native extension (simulated: it dereferences NULL)")
        import ctypes
        ctypes.string_at(0)
    elif fault == "freeze":
        # enter the collective, then freeze the whole process (like a process stuck in the kernel)
        dist.all_reduce(t, async_op=True)
        say(f"step {step}: all_reduce started, freezing myself with SIGSTOP (simulated hung process)")
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(600)
        os._exit(1)


def main(args):
    world = int(os.environ["WORLD_SIZE"])
    fault_ranks = {int(r) for r in args.fault_ranks.split(",") if r != ""}
    say(f"init_process_group(backend=gloo, world_size={world}, timeout={args.timeout:g}s)")
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    say("process group ready")
    group = None
    if args.group_timeout_ms is not None:
        group = dist.new_group(timeout=timedelta(milliseconds=args.group_timeout_ms))
        say(f"new_group(timeout=timedelta(milliseconds={args.group_timeout_ms:g})) ready")
    t = torch.ones(args.numel)
    slow = [float(s) for s in args.slow_seconds.split(",")]
    for step in range(args.steps):
        if args.jitter:
            time.sleep(RANK * args.jitter)
        if RANK in fault_ranks and args.fault == "slow":
            took = slow[min(step, len(slow) - 1)]
            time.sleep(took)
            say(f"step {step}: data loading took {took:g} s (simulated slow disk)")
        elif RANK in fault_ranks and step == args.fault_step and args.fault != "none":
            inject(args.fault, step, t, args.exit_code)
        t.fill_(1.0)
        dist.all_reduce(t, group=group)
        msg = f"step {step}: all_reduce ok (sum={t[0].item():g})"
        if args.healthy_mix:
            b = torch.full((4,), float(RANK))
            dist.broadcast(b, src=0)
            out = [torch.zeros(2) for _ in range(world)]
            dist.all_gather(out, torch.full((2,), float(RANK)))
            dist.barrier()
            msg += f", broadcast ok (src=0 value={b[0].item():g}), all_gather ok, barrier ok"
        say(msg)
    dist.barrier()
    dist.destroy_process_group()
    say("finished cleanly")


if __name__ == "__main__":
    ARGS = parse_args()
    if ARGS.record:
        from torch.distributed.elastic.multiprocessing.errors import record
        record(main)(ARGS)
    else:
        main(ARGS)
