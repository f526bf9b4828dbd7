"""Ranks that call mismatched collectives (used by samples/generate.py).

--kind shape : every rank all_reduces a tensor of 1024 elements, except --odd-rank (2048)
--kind op    : every rank calls all_reduce, except --odd-rank, which calls broadcast
--kind dtype : every rank all_reduces float32, except --odd-rank (float64)
Run it with and without TORCH_DISTRIBUTED_DEBUG=DETAIL to see both failure forms.
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

RANK = int(os.environ.get("RANK", "-1"))


def say(msg):
    print(f"worker rank={RANK} pid={os.getpid()}: {msg}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=["shape", "op", "dtype"], required=True)
    p.add_argument("--odd-rank", type=int, default=1)
    p.add_argument("--numel", type=int, default=1024)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()
    dist.init_process_group("gloo", timeout=timedelta(seconds=args.timeout))
    say(f"process group ready (TORCH_DISTRIBUTED_DEBUG={os.environ.get('TORCH_DISTRIBUTED_DEBUG', 'unset')})")
    t = torch.ones(args.numel)
    dist.all_reduce(t)
    say("step 0: all_reduce ok")
    odd = RANK == args.odd_rank
    if args.kind == "shape":
        t = torch.ones(args.numel * 2 if odd else args.numel)
        say(f"step 1: all_reduce of shape {list(t.shape)}")
        dist.all_reduce(t)
    elif args.kind == "dtype":
        t = torch.ones(args.numel, dtype=torch.float64 if odd else torch.float32)
        say(f"step 1: all_reduce of dtype {t.dtype}")
        dist.all_reduce(t)
    elif odd:
        say(f"step 1: broadcast of shape {list(t.shape)} from rank 0")
        dist.broadcast(t, src=0)
    else:
        say(f"step 1: all_reduce of shape {list(t.shape)}")
        dist.all_reduce(t)
    say("step 1: done")
    dist.barrier()
    dist.destroy_process_group()
    say("finished cleanly")


if __name__ == "__main__":
    main()
