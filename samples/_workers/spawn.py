"""torch.multiprocessing.spawn job (used by samples/generate.py): the parent spawns --nprocs
workers that use the Gloo backend on 127.0.0.1 (MASTER_ADDR/MASTER_PORT from the environment).

--fault raise   : worker --fault-rank raises ValueError at step 1 -> ProcessRaisedException
--fault sigkill : worker --fault-rank is killed with SIGKILL at step 1 -> ProcessExitedException
"""
import argparse
import os
import signal
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def say(rank, msg):
    print(f"worker rank={rank} pid={os.getpid()}: {msg}", flush=True)


def worker(rank, world, fault, fault_rank, timeout):
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=timeout))
    say(rank, "process group ready")
    t = torch.ones(256)
    for step in range(3):
        if rank == fault_rank and step == 1:
            if fault == "raise":
                say(rank, f"step {step}: computing loss")
                loss = float("nan")
                if loss != loss:
                    raise ValueError(f"loss is NaN at step {step} (simulated user-code check)")
            elif fault == "sigkill":
                say(rank, f"step {step}: killing myself with SIGKILL (simulated OOM kill)")
                os.kill(os.getpid(), signal.SIGKILL)
        dist.all_reduce(t)
        say(rank, f"step {step}: all_reduce ok")
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nprocs", type=int, default=4)
    p.add_argument("--fault", choices=["raise", "sigkill"], default="raise")
    p.add_argument("--fault-rank", type=int, default=1)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()
    print(f"launcher pid={os.getpid()}: mp.spawn(nprocs={args.nprocs})", flush=True)
    mp.spawn(worker, args=(args.nprocs, args.fault, args.fault_rank, args.timeout),
             nprocs=args.nprocs, join=True)


if __name__ == "__main__":
    main()
