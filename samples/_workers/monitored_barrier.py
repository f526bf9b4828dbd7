"""Gloo monitored_barrier where one rank never arrives (used by samples/generate.py).

Rank --missing-rank stays busy (simulated: a long checkpoint write) instead of entering
dist.monitored_barrier(), so rank 0 names it in its error message.
"""
import argparse
import os
import time
from datetime import timedelta

import torch.distributed as dist

RANK = int(os.environ.get("RANK", "-1"))


def say(msg):
    print(f"worker rank={RANK} pid={os.getpid()}: {msg}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--missing-rank", type=int, default=1)
    p.add_argument("--barrier-timeout", type=float, default=5.0)
    p.add_argument("--wait-all-ranks", action="store_true")
    args = p.parse_args()
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    say("process group ready")
    if RANK == args.missing_rank:
        say("writing a checkpoint before the barrier (simulated: it takes far too long)")
        time.sleep(600)  # "forever" for the runs; bounded in case nobody ends this process
        os._exit(1)
    say(f"entering monitored_barrier(timeout={args.barrier_timeout:g}s, wait_all_ranks={args.wait_all_ranks})")
    dist.monitored_barrier(timeout=timedelta(seconds=args.barrier_timeout),
                           wait_all_ranks=args.wait_all_ranks)
    say("passed monitored_barrier")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
