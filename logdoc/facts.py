"""Per-process INFO facts that nothing reads one by one, folded into the event before them.

Every rank of a large job prints the same NCCL init output. Some of its lines are read by no
analysis and no rule (``Setting affinity for GPU %d to %s``, ``Trees%s``, ``TUNER/Plugin: Using internal tuner
plugin.``, ``Using non-device net plugin version %d``: the plugin reader of analysis/context.py finds
no plugin in either), and the bulk formats of
:func:`logdoc.digest.bulk_templates`: ``P2P Chunksize``, ``threadThresholds``, the
channel counts, init and bootstrap timings); the report only counts them, per rank, file, attempt
and attribution source. :func:`fold_unread` drops such an event and counts it on the event right
before it in the same file (``Event.folds``), when that event is an NCCL line of the same process
(host, pid, rank, local rank, node rank, process name): the analysis attributes both alike, so every
count of the report stays the same. An event with a time is kept (its time may be a rank's last
activity), and so is one with nothing of its process before it.

One function, run where events are made: per source by :func:`logdoc.pipeline.parse_sources`
(one process or a worker: a worker's result is folded before it is sent) and per digest as it is
read. Running it again changes nothing. Standard library only (it runs in the browser too).
"""
from __future__ import annotations

from typing import Iterable

from .events import Event
from .lazyre import lazy_re

# catalog formats besides the bulk ones that nothing reads one by one
_UNREAD_FORMAT = lazy_re(r"Setting affinity for GPU |Trees%s$|TUNER/Plugin: Using internal tuner plugin\.$"
                         r"|Using non-device net plugin version %d$")

_unread: frozenset[str] | None = None


def unread_templates() -> frozenset[str]:
    """Ids of the NCCL INFO catalog formats whose events are only counted."""
    global _unread
    if _unread is None:
        from .digest import bulk_templates
        from .templates import nccl_catalog

        _unread = bulk_templates() | frozenset(
            t.id for t in nccl_catalog().templates.values() if "INFO" in t.levels and _UNREAD_FORMAT.match(t.format))
    return _unread


def _same_process(a: Event, b: Event) -> bool:
    return (a.host == b.host and a.pid == b.pid and a.rank == b.rank and a.local_rank == b.local_rank
            and a.node_rank == b.node_rank and a.process == b.process and a.attempt == b.attempt
            and a.rank_source == b.rank_source)


def fold_unread(events: Iterable[Event]) -> list[Event]:
    """``events`` (in file order within each file) without the unread INFO facts that the event
    before them in their file carries (:data:`Event.folds`), as the module says."""
    unread = unread_templates()
    out: list[Event] = []
    before: dict[str, Event] = {}   # file -> the last event kept of it
    for ev in events:
        if (ev.kind == "nccl.info" and ev.level == "INFO" and ev.time is None and ev.template in unread):
            prev = before.get(ev.file)
            if prev is not None and prev.kind.startswith("nccl.") and prev.line < ev.line and _same_process(prev, ev):
                prev.folds += 1 + ev.folds
                continue
        before[ev.file] = ev
        out.append(ev)
    return out
