"""Fields dicts held in less memory: names shared per tuple of names, equal dicts one object.

:func:`held` is the bounded memo every such table uses (here, the rare fields of an event in
:mod:`logdoc.eventslots`, a digest's numbers and records in :mod:`logdoc.digest`).

:func:`split_names` makes a dict whose names live in one table for every dict of the same names (CPython's
key-sharing dicts, what instance attributes use); :func:`held_alike` also holds one dict per value for the
dicts that many events have alike (the INFO facts every rank of a job prints, once ``events.share_texts``
has moved their header's thread and device to the head). :func:`logdoc.events.share_keys` runs them.
Standard library only.
"""
from __future__ import annotations

from typing import Any

# A class per field-name tuple whose instances' ``__dict__`` keep their names in one table that
# every dict of that tuple shares (CPython's key-sharing dicts, what instance attributes use): a
# plain ``dict`` to every reader, with only its values of its own. Over _SPLIT_KEYS names the
# shared table costs more than it saves (at 30, CPython's most, a dict of 30 took 1.5 kB).
_SCHEMAS: dict[tuple, type] = {}
_SPLIT_KEYS = 28
_SCHEMAS_MAX = 1 << 12


def held(memo: dict, key: Any, v: Any, cap: int) -> Any:
    """The value held under ``key`` in ``memo``, or ``v`` held there now (a memo of ``cap`` entries starts
    over: memory stays bounded whatever the input)."""
    got = memo.get(key)
    if got is None:
        if len(memo) >= cap:
            memo.clear()
        got = memo[key] = v
    return got


def split_names(f: dict, schemas=_SCHEMAS, new=object.__new__) -> dict:
    """``f`` as a dict sharing its table of names (:func:`logdoc.events.share_keys`), or ``f`` itself."""
    if len(f) > _SPLIT_KEYS or f.__class__ is not dict:
        return f
    keys = tuple(f)
    cls = schemas.get(keys)
    if cls is None:
        if len(schemas) >= _SCHEMAS_MAX or not all(k.__class__ is str for k in keys):
            return f
        cls = schemas[keys] = type("Fields", (), {})
    d = new(cls).__dict__
    for k, v in f.items():  # one at a time: ``update`` would give the dict a table of its own
        d[k] = v
    return d


def keyed(row: dict) -> dict:
    """``row`` as a dict that shares its table of names with every other row of the same names (as
    events.share_keys does for fields): a table's per-rank rows of a job of many ranks, equal to ``row``."""
    return split_names(row)


# The fields of events whose head holds their header's values (an NCCL INFO fact without its tid and dev),
# one dict per value for every source of every job: the ranks of a job print the same facts. A value is
# held from its second time on (_SEEN: a bit per hash, set by the values seen once), so the facts a rank
# alone prints (its comm pointers, its peers) cost a bit, not a key (bounded: _FIELDS_MAX, then started
# over). Nothing changes an event's fields once parsed; what adds a field makes a new dict.
_FIELDS: dict[tuple, dict] = {}
_SEEN = bytearray()
_SEEN_BITS = 1 << 23   # 1 MB, made on first use: one value in a hundred of 60,000 taken for seen
_FIELDS_MAX = 1 << 16
_PLAIN = frozenset((str, int, float, bool, type(None)))


def held_alike(f: dict) -> dict:
    """``f`` as the dict held for its value (names, values and their types), made as :func:`split_names`
    makes it; ``f`` split alone when a value is a record that is not plain (nested lists and dicts of
    plain values are compared by value) or the first of its value."""
    key = _value_key(f, 0)
    if key is None:
        return split_names(f)
    got = _FIELDS.get(key)
    if got is None:
        if not _seen(hash(key)):
            return split_names(f)
        got = held(_FIELDS, key, split_names(f), _FIELDS_MAX)
    return got


def _seen(h: int) -> bool:
    """Whether the bit of hash ``h`` was set (a value seen before, or one whose bit it shares); set it."""
    global _SEEN
    if not _SEEN:
        _SEEN = bytearray(_SEEN_BITS >> 3)
    i = h & (_SEEN_BITS - 1)
    j, b = i >> 3, 1 << (i & 7)
    if _SEEN[j] & b:
        return True
    _SEEN[j] |= b
    return False


def _value_key(v: Any, depth: int) -> tuple | None:
    c = v.__class__
    if c in _PLAIN:
        return (c, v)
    if (c is not dict and c is not list and c is not tuple) or depth > 3 or len(v) > 32:
        return None
    if c is dict:
        out = [dict]
        for k, x in v.items():
            kx = _value_key(x, depth + 1)
            if kx is None:
                return None
            out.append(k)
            out.append(kx)
        return tuple(out)
    if c is list or c is tuple:
        out = [c]
        for x in v:
            kx = _value_key(x, depth + 1)
            if kx is None:
                return None
            out.append(kx)
        return tuple(out)
    return None
