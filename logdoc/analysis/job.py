"""What every cross-rank analysis needs, computed once: events by kind, ranks, world size, process groups."""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from ..events import Event
from .attribution import Attribution, is_default_pg, pg_of
from .common import is_agent, as_int
from .timeline import Timeline
from ..lazyre import lazy_re

# events that describe one piece of collective work (WorkNCCL) and may lack their group's prefix
WORK_KINDS = ("torch.watchdog_timeout", "torch.async_exception")  # a WorkNCCL(...) record (blocking wait too)
_PROGRESS = lazy_re(r"[Ll]ast enqueued (?:NCCL )?work: (-?\d+), last completed (?:NCCL )?work: (-?\d+)")
_WORLD = lazy_re(r"\bsize: (\d+), global rank: (\d+)")
ERROR_LEVELS = ("ERROR", "FATAL")



MAX_RANKS = 1 << 17  # no job has more ranks; a bigger number in a log is damage, not a job


class PgKeys:
    """Event position -> process group key, for the torch events that have or borrow one (:meth:`Job._groups`):
    a mapping that reads like the dict it replaces (``get``, ``[]``, ``in``, ``items`` and ``values`` in the
    same order: the events that name their group by position, then those that borrowed one, in the order
    they were given it), held as a 4-byte code per event of the job and one list of the keys, where a dict
    held an entry and an int object per torch event (about 8 MB at 10,000 ranks, each rank's watchdog
    cascade). A negative code marks a borrowed (inferred) key."""

    __slots__ = ("_code", "_names", "_at", "_late", "_n")

    def __init__(self, size: int = 0) -> None:
        self._code = array("i", bytes(4 * size))
        self._names: list[str] = [""]   # code -> key (0: none)
        self._at: dict[str, int] = {}
        self._late = array("i")         # the positions given a borrowed key, in that order
        self._n = 0

    def _put(self, i: int, key: str, inferred: bool) -> None:
        c = self._at.get(key)
        if c is None:
            c = self._at[key] = len(self._names)
            self._names.append(key)
        if not self._code[i]:
            self._n += 1
            if inferred:
                self._late.append(i)
        self._code[i] = -c if inferred else c

    def __setitem__(self, i: int, key: str) -> None:
        self._put(i, key, False)

    def infer(self, i: int, key: str) -> None:
        """Event ``i`` borrows the group ``key`` of a neighbour."""
        self._put(i, key, True)

    def named(self, i: int) -> str | None:
        """The key event ``i`` printed itself (None when it has none or borrowed it)."""
        c = self._code[i]
        return self._names[c] if c > 0 else None

    def inferred(self, i: int) -> bool:
        """Whether event ``i``'s group was borrowed from a neighbour, not printed by it."""
        return 0 <= i < len(self._code) and self._code[i] < 0

    def get(self, i, default=None):
        if i.__class__ is not int or not 0 <= i < len(self._code):
            return default
        c = self._code[i]
        return self._names[c if c > 0 else -c] if c else default

    def __getitem__(self, i: int) -> str:
        got = self.get(i)
        if got is None:
            raise KeyError(i)
        return got

    def __contains__(self, i) -> bool:
        return self.get(i) is not None

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def items(self):
        names, code = self._names, self._code
        for i, c in enumerate(code):
            if c > 0:
                yield i, names[c]
        for i in self._late:
            yield i, names[-code[i]]

    def keys(self):
        return (i for i, _ in self.items())

    __iter__ = keys

    def values(self):
        return (k for _, k in self.items())

@dataclass
class Job:
    events: list[Event]
    timeline: Timeline
    attr: Attribution
    files: list[str]
    by_kind: dict[str, "array[int]"] = field(default_factory=dict)  # kind -> event positions
    ranks_seen: set[int] = field(default_factory=set)
    ranks_from_files: set[int] = field(default_factory=set)
    world_size: int | None = None
    pg_key: PgKeys = field(default_factory=PgKeys)    # event index -> process group key (inferred or not)
    pg_desc: dict[str, str | None] = field(default_factory=dict)
    errors_by_rank: dict[int, int] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, events: list[Event], timeline: Timeline, attr: Attribution, files: list[str]) -> "Job":
        job = cls(events, timeline, attr, files)
        by_kind = job.by_kind
        for i, ev in enumerate(events):
            # positions as a 4-byte array per kind, not a list of int objects (36 bytes an event)
            got = by_kind.get(ev.kind)
            if got is None:
                got = by_kind[ev.kind] = array("i")
            got.append(i)
            if ev.rank is not None and not is_agent(ev):
                job.ranks_seen.add(ev.rank)
                if is_error(ev):
                    job.errors_by_rank[ev.rank] = job.errors_by_rank.get(ev.rank, 0) + 1
        for name, pi in attr.paths.items():
            if pi.rank is not None:
                job.ranks_from_files.add(pi.rank)
        job.world_size = job._world_size()
        job._groups()
        return job

    # -- ranks ----------------------------------------------------------------------------------

    def _world_size(self) -> int | None:
        sizes = []
        if self.attr.world_size:
            sizes.append(self.attr.world_size)
        for i in self.by_kind.get("torch.pg_info", ()):
            ev = self.events[i]
            m = _WORLD.search(ev.text)
            pid_, desc, _ = pg_of(ev)
            if m and (is_default_pg(pid_, desc) or "default_pg" in ev.text):
                sizes.append(int(m.group(1)))
        for i in self.by_kind.get("store.clients_joined", ()):
            w = as_int(self.events[i].fields.get("world_size"))
            if w:
                sizes.append(w)
        sizes = [s for s in sizes if 0 < s <= MAX_RANKS]
        return max(sizes) if sizes else None

    def index(self, ev: Event) -> int | None:
        return self.timeline._index(ev)

    @property
    def known_ranks(self) -> set[int]:
        return {r for r in self.ranks_seen | self.ranks_from_files if 0 <= r < MAX_RANKS}

    def members(self) -> list[int]:
        """The ranks of the job: 0..world-1 when the size is known, else every rank seen (gaps filled).
        A rank or size beyond :data:`MAX_RANKS` is a damaged line, not a job: it is ignored."""
        known = self.known_ranks
        top = max(known) + 1 if known else 0
        n = max(self.world_size or 0, top)
        return list(range(min(n, MAX_RANKS)))

    # -- process groups -------------------------------------------------------------------------

    def _groups(self) -> None:
        """A group key for every torch event that has or can borrow one.

        A WorkNCCL record (``[Rank 0] Collective WorkNCCL(SeqNum=1, ...)``) carries only ``[Rank r]``; the
        ``[PG ID 1 PG GUID 1(mesh_pp) Rank 0]  failure detected by watchdog at work sequence id: 1`` line
        that follows it in the same process names its group. A work record takes the group of the nearest
        line of the same process (within 12 events) that has the same sequence number, or no number."""
        events = self.events
        pg_key = self.pg_key = PgKeys(len(events))
        keys: set[str] = set()
        for i, ev in enumerate(events):
            if not ev.kind.startswith(("torch.", "gloo.", "store.")):
                continue
            pid_, desc, _ = pg_of(ev)
            key = pid_ if pid_ is not None else (desc if desc else None)
            if key is not None:
                pg_key[i] = key
                keys.add(key)
                if desc or key not in self.pg_desc:
                    self.pg_desc[key] = desc or self.pg_desc.get(key)
        named = pg_key.named
        only = None
        if len(keys) <= 1:
            only = next(iter(keys)) if keys else "0"
        # neighbours per process, in file order
        proc_events: dict[int, list[int]] = {}
        for i, ev in enumerate(events):
            if ev.kind.startswith("torch."):
                proc_events.setdefault(self.attr.proc_of[i], []).append(i)
        for idxs in proc_events.values():
            idxs.sort(key=lambda i: (events[i].file, events[i].line))
            pos = {i: k for k, i in enumerate(idxs)}
            for i in idxs:
                if named(i) is not None:
                    continue
                ev = events[i]
                if ev.kind not in WORK_KINDS and "WorkNCCL(" not in ev.text and not _PROGRESS.search(ev.text):
                    continue
                seq = as_int(ev.fields.get("seq"))
                k = pos[i]
                found = None
                for want_same in ((True, False) if seq is not None else (False,)):
                    for step in range(1, 13):
                        for j in (k + step, k - step):
                            if 0 <= j < len(idxs) and named(idxs[j]) is not None:
                                oseq = as_int(events[idxs[j]].fields.get("seq"))
                                if (want_same and oseq == seq) or (not want_same and (oseq is None or seq is None)):
                                    found = named(idxs[j])
                                    break
                        if found is not None:
                            break
                    if found is not None:
                        break
                if found is None and only is not None:
                    found = only
                if found is not None:
                    pg_key.infer(i, found)
        if "0" not in self.pg_desc and ("0" in self.pg_key.values() or not self.pg_desc):
            self.pg_desc.setdefault("0", "default_pg")

    def pg_label(self, key: str | None) -> str:
        if key is None:
            return "an unknown process group"
        desc = self.pg_desc.get(key)
        if key.isdigit():
            return f"PG {key} ({desc})" if desc else f"PG {key}"
        return str(key)

    def progress_of(self, i: int) -> tuple[int, int] | None:
        """``(last_enqueued, last_completed)`` printed by an event, if any."""
        ev = self.events[i]
        e, c = as_int(ev.fields.get("last_enqueued")), as_int(ev.fields.get("last_completed"))
        if e is not None and c is not None:
            return e, c
        m = _PROGRESS.search(ev.text)
        if m:
            return int(m.group(1)), int(m.group(2))
        return None


def is_error(ev: Event) -> bool:
    return ev.level in ERROR_LEVELS or ev.kind in ("nccl.warn", "torch.exception", "gloo.error", "gloo.connect_full_mesh",
                                                 "torch.terminate", "cuda.oom", "cuda.error")
