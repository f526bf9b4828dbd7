"""Events nothing reads one by one, folded into the event before them: per-process INFO facts, a bar's lines.

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

Progress bars are folded the same way (:func:`fold_unread`): a bar right after a bar of the same
process in its file (no event kept between them), the same bar as read apart from its numbers and
its glyphs (:func:`_bar_shape`: the description as printed, the statistics with numbers masked), is counted on the one
kept. Of the two the one kept is the one the busy-rank check (``analysis.progress._busy``: the bar
that had run longest, unfinished, the first of equals) would choose: a rank's tqdm output is then
one event, not one per line it printed, and every finding, count and evidence line stays the same.

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
        from .templates import nccl_formats

        _unread = bulk_templates() | frozenset(
            tid for tid, (levels, fmt) in nccl_formats().items() if "INFO" in levels and _UNREAD_FORMAT.match(fmt))
    return _unread


def _same_process(a: Event, b: Event) -> bool:
    return (a.host == b.host and a.pid == b.pid and a.rank == b.rank and a.local_rank == b.local_rank
            and a.node_rank == b.node_rank and a.process == b.process and a.attempt == b.attempt
            and a.rank_source == b.rank_source)


BAR = "app.progress"
_DIGITS = lazy_re(r"\d+")
_SPACES = lazy_re(r"\s+")


def _bar_shape(ev: Event) -> tuple[str, str] | None:
    """A bar's text as the lines of one bar print it while it advances: its description as printed
    (before its percent), the statistics after its glyphs with their numbers masked (counts, times,
    rates, a postfix's values). None for a text that does not read so."""
    t = ev.text
    i = t.find("%|")
    j = t.find("|", i + 2) if i >= 0 else -1
    if j < 0:
        return None
    return t[:i].rstrip("0123456789").rstrip(), _SPACES.sub(" ", _DIGITS.sub("0", t[j + 1:]))


def _same_bar(a: Event, b: Event) -> bool:
    sa = _bar_shape(a)
    return sa is not None and sa == _bar_shape(b)


def _candidate(ev: Event) -> bool:
    """Whether a bar can be the busy-rank check's (analysis/progress.py ``_busy``): timed, unfinished."""
    f = ev.fields
    el, pct = f.get("elapsed_s"), f.get("percent")
    return isinstance(el, int) and not (isinstance(pct, int) and pct >= 100 or f.get("remaining_s") == 0)


def _later_bar_wins(prev: Event, ev: Event) -> bool:
    """Of two bars of one process, whether ``ev`` (the later) is the one the busy-rank check would
    choose over ``prev``: a candidate whose time is longer, or a candidate after one that is none."""
    if not _candidate(ev):
        return False
    return not _candidate(prev) or ev.fields["elapsed_s"] > prev.fields["elapsed_s"]


def fold_unread(events: Iterable[Event]) -> list[Event]:
    """``events`` (in file order within each file) without the unread INFO facts that the event
    before them in their file carries (:data:`Event.folds`), and with a progress bar's lines one
    event, as the module says."""
    unread = unread_templates()
    out: list[Event] = []
    before: dict[str, Event] = {}   # file -> the last event kept of it
    at: dict[str, int] = {}         # file -> the position of that event in ``out``
    for ev in events:
        kind = ev.kind
        if (kind == "nccl.info" and ev.level == "INFO" and ev.time is None and ev.template in unread):
            prev = before.get(ev.file)
            if prev is not None and prev.kind.startswith("nccl.") and prev.line < ev.line and _same_process(prev, ev):
                prev.folds += 1 + ev.folds
                continue
        elif kind == BAR and ev.time is None:
            prev = before.get(ev.file)
            if (prev is not None and prev.kind == BAR and prev.time is None and prev.line < ev.line
                    and _same_process(prev, ev) and _same_bar(prev, ev)):
                if not _later_bar_wins(prev, ev):
                    prev.folds += 1 + ev.folds
                    continue
                ev.folds += 1 + prev.folds  # the later one stands for both
                out[at[ev.file]] = ev
                before[ev.file] = ev
                continue
        before[ev.file] = ev
        at[ev.file] = len(out)
        out.append(ev)
    return out
