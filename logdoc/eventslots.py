"""How an :class:`logdoc.events.Event` holds its fields in few slots (a job of 10,000 ranks holds hundreds of
thousands of events; every slot an event has costs 8 bytes on each of them).

* **The fields rarely set** (:data:`RARE`: an end line other than the event's own line, the local and node
  rank, the process name, the attempt, the folds) are one tuple in one slot (``Event._more``), ``None`` while
  all are their defaults, and one object for each combination (:func:`more_of`). :func:`install` gives
  ``Event`` the properties that read and write them.
* **The kind, level and template** are the event's class's: one subclass of ``Event`` per combination (a job
  prints a few hundred), made on first use (:func:`kind_class`), each holding the three as class
  attributes, read as fast as a slot. Nothing changes them once an event is made. Past :data:`KINDS_MAX`
  combinations (or for values that are not texts) an event is an ``_Open`` one that holds them itself.

Standard library only (it runs in the browser too).
"""
from __future__ import annotations

from typing import Any

from .fielddicts import held

RARE = ("end_line", "local_rank", "node_rank", "process", "attempt", "folds")
PLAIN = (0, None, None, None, None, 0)   # their defaults (an end line of 0: the event's own line)
_MORES: dict[tuple, tuple] = {}          # one object of each combination (bounded: _MORES_MAX)
_MORES_MAX = 1 << 16
NO_FIELDS: Any = object()                # the constructor's default ``fields``: a new empty dict
KINDS: dict[tuple, type] = {}            # (kind, level, template) -> its subclass of Event
KINDS_MAX = 1 << 11
_OPEN: list[type] = []                   # the subclass whose events hold their kind, level and template


def more_of(m: tuple) -> tuple | None:
    """The one object of the values ``m`` of :data:`RARE` (None for their defaults)."""
    return None if m == PLAIN else held(_MORES, m, m, _MORES_MAX)


def kind_class(base: type, what: tuple) -> tuple[type, bool]:
    """The subclass of ``base`` for ``what`` (kind, level, template) and whether its events hold the three
    themselves (``_Open``)."""
    try:
        ok = len(KINDS) < KINDS_MAX and all(v is None or v.__class__ is str for v in what)
    except TypeError:
        ok = False
    if not ok:
        if not _OPEN:
            _OPEN.append(type("Event", (base,), {"__slots__": ("kind", "level", "template"),
                                                 "__module__": base.__module__}))
        return _OPEN[0], True
    c = KINDS[what] = type("Event", (base,), {"__slots__": (), "kind": what[0], "level": what[1],
                                              "template": what[2], "__module__": base.__module__})
    return c, False


def _rare(i: int) -> property:
    """The property of the ``i``-th field of :data:`RARE`, read from and written to ``Event._more``."""
    default = PLAIN[i]

    def get(ev: Any) -> Any:
        m = ev._more
        return default if m is None else m[i]

    def put(ev: Any, v: Any) -> None:
        m = ev._more or PLAIN
        ev._more = more_of(m[:i] + (v,) + m[i + 1:])

    return property(get, put, doc=f"the event's {RARE[i]}")


def _end_line(ev: Any) -> int:
    m = ev._more
    return ev.line if m is None or not m[0] else m[0]


def _put_end_line(ev: Any, v: int) -> None:
    m = ev._more or PLAIN
    ev._more = more_of((v if v != ev.line else 0,) + m[1:])


def install(event: type) -> None:
    """Give ``event`` the properties of :data:`RARE`."""
    for i, name in enumerate(RARE[1:], 1):
        setattr(event, name, _rare(i))
    event.end_line = property(_end_line, _put_end_line, doc="the event's last line")  # type: ignore[attr-defined]
