"""Stage 3: a cheap test that keeps the grammars away from ordinary training output.

Most lines of a job log are the job's own prints. A line is a *candidate* when it holds one of a
few literal keywords that every NCCL, PyTorch-distributed, Gloo, torchrun, CUDA and kernel message
of interest contains. A candidate that no grammar understands is reported as "relevant but not
understood" only when it also carries a strong marker (:data:`MARKERS`); other candidates were
ordinary output that happened to say "error".
"""
from __future__ import annotations

import re

# Literal keywords: a line without any of them is never parsed.
KEYWORDS = (
    "NCCL", "rror", "Traceback", "xception", "c10d", "ProcessGroup", "Gloo", "gloo", "Watchdog",
    "watchdog", "Rank", "rank", "===", "Failures:", "Root Cause", "Xid", "CUDA", "cuda", "SIG",
    "exitcode", "terminate", "what():", "imed out", "Connection", "failed", "torch", "Timeout",
    "Socket", "socket", "ailure", "Killed", "killed", "oom", "OOM", "Bus error", "Segmentation",
    "core dumped", "File \"", "-> ", "onnect", "[PG", "atchdog", "signal", "Worker group", "endezvous",
    "out of memory", "Flight", "timeout", "Failed", "NVRM",
)
_CANDIDATE = re.compile("|".join(re.escape(k) for k in KEYWORDS))

# Strong markers: a candidate with one of these that no grammar reads is worth listing.
MARKERS = re.compile(
    r"NCCL|c10d|ProcessGroup|[Gg]loo|torch\.distributed|torchrun|WorkNCCL|Watchdog|watchdog|TCPStore"
    r"|\[rank\d+\]|Traceback|ChildFailedError|DistBackendError|DistNetworkError|DistStoreError|NVRM"
)


def candidate(line: str) -> bool:
    return _CANDIDATE.search(line) is not None


def marked(text: str) -> bool:
    return MARKERS.search(text) is not None
