"""``logdoc.install_excepthook()``: a short diagnosis before the traceback of a distributed error."""

import os
from typing import Any, Sequence

from ..lazyre import lazy_re
from ..pipeline import parse_sources
from ..read.source import Source
from .early import format_notice

# ---------------------------------------------------------------------------------------------
# the excepthook

_DIST_TYPES = {"DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "DistQueueEmptyError",
               "ChildFailedError", "RendezvousError", "RendezvousTimeoutError", "RendezvousClosedError",
               "RendezvousConnectionError", "RendezvousStateError", "SignalException"}
_DIST_TEXT = lazy_re(r"NCCL|nccl[A-Z]\w*Error|\bGloo\b|\bgloo\b|c10d|ProcessGroup|TCPStore|torch\.distributed|"
                        r"rendezvous|Rendezvous|connectFullMesh|watchdog|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|"
                        r"collective operation timeout")


def looks_distributed(exc: BaseException | None) -> bool:
    """Whether an exception (or one it was raised from) comes from distributed training."""
    seen = 0
    while exc is not None and seen < 8:
        seen += 1
        t = type(exc)
        mod = getattr(t, "__module__", "") or ""
        if t.__name__ in _DIST_TYPES or mod.startswith(("torch.distributed", "torch._C._distributed")):
            return True
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001
            text = ""
        if _DIST_TEXT.search(text[:20000]):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def exception_diagnosis(etype, value, tb, *, logs: Sequence[str] | None = None, max_diagnoses: int = 2) -> str | None:
    """Plain text to print before the traceback of a distributed exception, or None."""
    if value is None or not looks_distributed(value):
        return None
    import traceback

    text = "".join(traceback.format_exception(etype, value, tb))
    rank = os.environ.get("RANK")
    if rank is not None and rank.isdigit():
        # so the diagnosis names the rank, as torchrun --tee would
        text = "".join(f"[rank{rank}]: {line}\n" for line in text.splitlines())
    sources: list[Any] = [Source("<exception>", text=text)]
    if logs is None:
        env_logs = os.environ.get("LOGDOC_LOGS", "")
        logs = [p for p in env_logs.split(os.pathsep) if p]
    warnings = []
    if logs:
        from ..read.source import InputError, expand

        for p in logs:
            try:
                sources.extend(expand([p]))
            except InputError as exc:
                warnings.append(str(exc))
    from ..api import _rules, build_report

    report = build_report(parse_sources(sources), _rules())
    diags = [d for d in report.get("diagnoses", []) if d.get("severity") in ("error", "warning")]
    lines = []
    for w in warnings:
        lines.append(f"logdoc: LOGDOC_LOGS: {w}\n")
    if not diags:
        if lines:
            return "".join(lines)
        return None
    lines.append("logdoc: this looks like a distributed training failure; what logdoc makes of it:\n")
    for d in diags[:max_diagnoses]:
        lines.append(format_notice(d).replace("logdoc: root cause", "logdoc: " + d.get("role", "").replace("_", " "), 1))
    lines.append("logdoc: (set LOGDOC_LOGS to the other ranks' log files or folders for a fuller diagnosis)\n"
                 if not logs else "")
    return "".join(lines)
