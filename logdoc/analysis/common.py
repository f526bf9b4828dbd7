"""Small helpers shared by the analysis modules: host names, rank lists in words, synthetic events."""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..events import Event
from .ranges import ranks_text  # noqa: F401  (re-exported: the analysis modules import it from here)
from ..lazyre import Pattern, lazy_re

MAX_EVIDENCE = 40  # evidence pointers kept per synthetic event (the count is kept too)

_IP = lazy_re(r"^\d+\.\d+\.\d+\.\d+$|:")


WORKER_TORCHRUN_KINDS = ("torchrun.error_file",)  # written by the worker (``@record``), not by the agent


_AGENT_KIND: dict[str, bool] = {}


def is_agent(ev: Event) -> bool:
    """A line of the torchrun agent: it names workers but does not speak for one."""
    k = ev.kind
    r = _AGENT_KIND.get(k)
    if r is None:
        r = _AGENT_KIND[k] = k.startswith("torchrun.") and k not in WORKER_TORCHRUN_KINDS
    return r


_SHORT: dict[str, str] = {}


def short_host(host: str | None) -> str | None:
    """NCCL prints ``gethostname()`` cut at the first dot; torchrun prints the FQDN. Compare the short form."""
    if not host:
        return None
    r = _SHORT.get(host)
    if r is None:
        r = host if _IP.search(host) else host.split(".", 1)[0]
        if len(_SHORT) < 100000:
            _SHORT[host] = r
    return r


def as_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def evidence_of(events: Iterable[Event]) -> list[tuple[str, int]]:
    seen: set[tuple[str, int]] = set()
    out: list[tuple[str, int]] = []
    for ev in events:
        key = (ev.file, ev.line)
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def synthetic(kind: str, text: str, evidence: list[Event], *, level: str = "WARN",
              on_ranks: Iterable[int] | None = None, on_hosts: Iterable[str] | None = None, **fields: Any) -> Event:
    """An ``analysis.*`` event. It points at its first evidence line; ``fields.evidence`` lists them all.

    ``on_ranks`` / ``on_hosts``: where the finding is (the culprit, the odd group), kept in the fields
    ``origin_ranks`` / ``origin_hosts``; when it is one rank (host), the event's ``rank`` (``host``) is set
    to it."""
    ev_list = evidence_of(evidence)
    first = evidence[0] if evidence else None
    rank_list = sorted(set(r for r in (on_ranks or ()) if r is not None))
    host_list = sorted(set(h for h in (on_hosts or ()) if h))
    fields = dict(fields)
    fields.setdefault("origin_ranks", rank_list)
    fields.setdefault("origin_hosts", host_list)
    fields["evidence"] = ev_list[:MAX_EVIDENCE]
    fields["evidence_count"] = len(ev_list)
    ev = Event(
        kind=kind,
        level=level,
        file=first.file if first else "<analysis>",
        line=first.line if first else 0,
        end_line=first.line if first else 0,
        text=text,
        rank=rank_list[0] if len(rank_list) == 1 else None,
        host=host_list[0] if len(host_list) == 1 else None,
        time=first.time if first else None,
        template=kind,
        fields=fields,
    )
    ev.rank_source = "analysis" if ev.rank is not None else None
    if first is not None:
        ev.attempt = first.attempt
    return ev


class _Gated:
    """What :func:`gated` gives: made on the first search (a run that never searches with it does not
    compile the pattern), then its ``search`` is the gated pattern's own."""

    __slots__ = ("_pattern", "_made", "search")

    def __init__(self, pattern) -> None:
        self._pattern = pattern
        self._made = None
        self.search = self._first_search

    def _first_search(self, text: str):
        return self.made().search(text)

    def made(self):
        """The gated pattern (a ``kb.patterns._Pattern``), or the pattern itself."""
        if self._made is None:
            self._made = _gate(self._pattern)
            self.search = self._made.search
        return self._made

    @property
    def needs(self):  # the literals looked for before a search (None: searched as it is)
        return getattr(self.made(), "needs", None)


def gated(pattern: "re.Pattern[str]"):
    """``pattern`` with the search of kb/patterns.py: a text that holds none of the literals every
    match holds (read from ``re``'s own parse of the pattern) is not searched. The same matches; a long
    alternation searched over every event's text (a job of many ranks has many) costs a few substring
    tests instead. A pattern with flags other than IGNORECASE is returned as it is. A :func:`lazy_re`
    pattern stays uncompiled until the first search (:class:`_Gated`, which offers ``search``)."""
    if isinstance(pattern, Pattern):
        if pattern._source[1] & ~(re.IGNORECASE | re.UNICODE):
            return pattern
        return _Gated(pattern)
    return _gate(pattern)


def _gate(pattern):
    from ..kb.patterns import _Pattern

    source = pattern.pattern
    if re.compile(source).flags != pattern.flags:
        source = "(?i)" + source
        if pattern.flags & ~(re.IGNORECASE | re.UNICODE) or re.compile(source).flags != pattern.flags:
            return pattern
    return _Pattern(source, None)
