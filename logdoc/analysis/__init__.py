"""Stage 6: reason across ranks.

``analyze(events)`` takes the events of one job (all files together) and returns an :class:`Analysis`:

* ``events`` - the same event objects, with ``rank``, ``rank_source``, ``attempt`` and ``host`` filled
  where they can be attributed (:mod:`.attribution` documents the sources and their order of trust);
* ``synthetic`` - ``analysis.*`` events for findings that need several events or ranks (hung ranks,
  disagreements, collective mismatches, missing and silent ranks, restarts). Each has
  ``fields["evidence"] = [(file, line), ...]`` and the fields listed in ``knowledge/README.md``;
* ``timeline`` - all events ordered by time where known and by file order within a file (:mod:`.timeline`);
* ``anatomy`` - the job's summary for ``logdoc summary`` and the explain header (:mod:`.anatomy`);
* ``first_failure(candidates)`` - the earliest of some candidate events and the origin rank(s) and host(s)
  (:mod:`.cascade`); ``nature(ev)`` - ``root`` / ``neutral`` / ``symptom``;
* ``order_key(ev)`` - a sort key for any event, synthetic ones included (by their earliest evidence).

Pass ``files`` (every input file name, ``ParseResult.files``): a ``rank3.log`` with nothing relevant in
it still says that rank 3 exists and printed no error, which is how a silent hung rank is named.

Standard library only: this runs in the browser under Pyodide too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..events import Event, share_texts
from . import anatomy as _anatomy
from . import cascade, collectives, context, disagreements, flight, launches, pgoptions, progress, stacks, topology
from .attribution import Attribution, attribute, path_info
from .. import kinds as _kinds
from .cascade import FirstFailure, is_failure, nature
from .job import Job
from .timeline import Timeline

__all__ = ["Analysis", "analyze", "FirstFailure", "Timeline", "path_info", "KINDS"]

# The analysis.* kinds and their fields, from the one registry (logdoc/kinds.py).
KINDS: dict[str, tuple[str, ...]] = {k: tuple(sorted(spec.fields)) for k, spec in _kinds.KINDS.items()
                                     if k.startswith("analysis.")}


@dataclass
class Analysis:
    events: list[Event]
    synthetic: list[Event]
    timeline: Timeline
    anatomy: dict[str, Any]
    attribution: Attribution
    job: Job = field(repr=False)
    _at: dict | None = field(default=None, repr=False)
    _need: set | None = field(default=None, repr=False)

    def first_failure(self, candidates: Iterable[Event] | None = None) -> FirstFailure:
        """The earliest of ``candidates`` (default: every failure-like event), with its origin ranks and hosts."""
        if candidates is None:
            candidates = [e for e in self.events if is_failure(e)]
        ff = cascade.first_failure(self.timeline, candidates)
        if ff and not ff.hosts and ff.ranks:
            by_rank = {r["rank"]: r.get("hosts") or [] for r in self.anatomy.get("ranks", [])}
            ff.hosts = sorted({h for r in ff.ranks for h in by_rank.get(r, [])})
        return ff

    def order_key(self, ev: Event) -> tuple:
        """A sort key for any event, synthetic ones included (by their earliest evidence line)."""
        key = self.timeline.key(ev)
        if key[0] != 2:
            return key
        refs = [(f, ln) for f, ln in ev.fields.get("evidence") or ()]
        if self._at is None or any(r not in self._need for r in refs):
            # the events at the lines synthetic events cite, not every line of the job
            need = self._need = (self._need or set()) | set(refs) | {
                (f, ln) for s in self.synthetic for f, ln in s.fields.get("evidence") or ()}
            self._at = {}
            for e in self.events:
                k = (e.file, e.line)
                if k in need:
                    self._at.setdefault(k, e)
        # a line without its event (a launch a digest folded) by its place in its file, the first by its own stamp
        keys = [self.timeline.key(self._at[r]) if r in self._at else
                self.timeline.line_key(r[0], r[1], ev.time if j == 0 else None) for j, r in enumerate(refs)]
        return min(keys) if keys else key

    @staticmethod
    def nature(ev: Event) -> str:
        """``root``, ``neutral`` or ``symptom`` (see :mod:`.cascade`)."""
        return cascade.NATURE[nature(ev)]

    @property
    def all_events(self) -> list[Event]:
        """The parsed events followed by the synthetic ones: what the knowledge base matches."""
        return self.events + self.synthetic

    def to_dict(self) -> dict[str, Any]:
        return {"synthetic": [e.to_dict() for e in self.synthetic], "anatomy": self.anatomy}


def analyze(events: list[Event], files: Iterable[str] | None = None) -> Analysis:
    """Reason across the ranks of one job. ``files``: every input file name, including those that gave no
    event (a ``rank3.log`` with nothing relevant in it still says that rank 3 exists)."""
    if any(e.kind.startswith("analysis.") for e in events):  # (a copy only then: 8 bytes an event)
        events = [e for e in events if not e.kind.startswith("analysis.")]
    share_texts(events)  # a line's message held once, not in its text and its fields both
    file_list = list(files or ())
    attr = attribute(events, file_list)
    timeline = Timeline(events)
    job = Job.build(events, timeline, attr, file_list)
    synthetic: list[Event] = []
    found, tables = progress.analyze(job)
    synthetic.extend(found)
    synthetic.extend(collectives.analyze(job))
    synthetic.extend(launches.analyze(job))  # NCCL launch lines: ranks launch different collectives
    synthetic.extend(flight.analyze(job))
    synthetic.extend(disagreements.analyze(job))
    synthetic.extend(pgoptions.analyze(job))  # ProcessGroupNCCL options the ranks disagree on
    synthetic.extend(topology.analyze(job))  # NCCL's graph search and CPU types the ranks disagree on
    synthetic.extend(stacks.analyze(job))  # py-spy dumps: ranks blocked in different collectives
    synthetic.extend(cascade.restarts(events, timeline))
    synthetic.extend(context.analyze(job))  # the job's shape: nodes, containers, transports
    anatomy = _anatomy.build(job, tables)
    return Analysis(events, synthetic, timeline, anatomy, attr, job)
