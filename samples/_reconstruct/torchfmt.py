"""PyTorch-side text blocks (c10 envelopes, exception texts, torchrun output) used by build.py."""
from __future__ import annotations

from ncclfmt import c10, pylog, child_failed

ERRSTR = {
    2: ("unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "),
    3: ("internal error - please report this issue to the NCCL developers", "ncclInternalError: Internal check failed."),
    5: ("invalid usage (run with NCCL_DEBUG=WARN for details)",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."),
    6: ("remote process exited or there was a network error",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."),
    1: ("unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "ncclUnhandledCudaError: Call to CUDA function failed."),
}


def nccl_async_text(code, ncclver, last):
    s, interp = ERRSTR[code]
    return [f"NCCL error: {s}, NCCL version {ncclver}", interp, "Last error:", last]


def nccl_sync_text(code, ncclver, last, srcpath, line):
    s, interp = ERRSTR[code]
    return [f"NCCL error in: {srcpath}:{line}, {s}, NCCL version {ncclver}", interp, "Last error:", last]


def cxx_frames(fn_at, frames, libdir, addrbase):
    """`Exception raised from F at PATH:LINE (most recent call first):` + frames."""
    out = [f"Exception raised from {fn_at} (most recent call first):"]
    a = addrbase
    for i, (sym, off, lib) in enumerate(frames):
        a += 0x1a3c40 + 0x1000 * i
        where = f"{libdir}/{lib}" if not lib.startswith("/") else lib
        out.append(f"frame #{i}: {sym} + {off} ({hex(a)} in {where})")
    return out


def tee(prefix, lines):
    return [prefix + l for l in lines]
