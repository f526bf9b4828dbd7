"""PyTorch flight-recorder dumps as input: read them safely, turn their entries into events.

PyTorch's flight recorder (``TORCH_FR_BUFFER_SIZE`` / ``TORCH_NCCL_TRACE_BUFFER_SIZE``) keeps the last
collectives of every process group of a rank and writes them, one file per rank, as a pickle
(``TORCH_FR_DUMP_TEMP_FILE`` / ``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` + rank, e.g. ``nccl_trace_rank_3``;
``torch._C._distributed_c10d._dump_fr_trace()``) or as JSON (``_dump_fr_trace_json()``). A dump is a
mapping ``{version, pg_config, pg_status, comm_lib_version, entries: [...]}``; each entry has
``pg_id``, ``process_group`` (name, description), ``collective_seq_id``, ``p2p_seq_id``, ``op_id``,
``profiling_name`` (``nccl:all_reduce``, ``gloo:broadcast``), ``state`` (``scheduled``, ``started``,
``completed``), ``retired``, ``input_sizes`` / ``output_sizes``, ``input_dtypes`` / ``output_dtypes``,
``time_created_ns`` and the ``time_discovered_*_ns`` stamps, ``timeout_ms``, ``is_p2p`` and ``frames``
(the Python stack).

**A pickle is read without running any code**: :class:`SafeUnpickler` builds only what the pickle
opcodes build by themselves (dicts, lists, tuples, sets, strings, bytes, numbers, booleans, None);
every opcode that would import or call something (``GLOBAL``, ``STACK_GLOBAL``, ``INST``, ``OBJ``,
``REDUCE`` of an imported callable, extension codes, persistent ids) needs :meth:`find_class` or
:meth:`persistent_load`, which refuse. A refused dump is an :class:`DumpError` (one line, exit 2).

Events: one ``fr.dump`` per file (``rank``, ``version``, ``entries``, ``pg_config``, ``pg_status``) and
one ``fr.entry`` per entry (``line`` is the entry's position, 1-based). The rank is the number at the
end of the file name (as ``torchfrtrace`` reads it). Standard library only.
"""
from __future__ import annotations

import io
import json
import os
import pickle
from typing import Any

from .events import Event
from .lazyre import lazy_re
from .read.source import InputError, Source

MAX_DUMP = 512 << 20
MAX_FRAMES = 8
_RANK = lazy_re(r"(\d+)(?:\.(?:json|pkl|pickle))?$")


class DumpError(InputError):
    """A flight-recorder dump that cannot or must not be read."""


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that imports nothing and calls nothing: plain containers and scalars only."""

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle's hook
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain containers and scalars are read")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refusing a persistent id: only plain containers and scalars are read")


def safe_loads(data: bytes) -> Any:
    """Unpickle ``data`` without importing or calling anything (:class:`SafeUnpickler`)."""
    return SafeUnpickler(io.BytesIO(data)).load()


def sniff(head: bytes) -> str | None:
    """``pickle`` / ``json`` when the first bytes can start a flight-recorder dump."""
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "pickle"
    stripped = head.lstrip()
    if stripped.startswith(b"{") and b'"entries"' in head and (b'"pg_config"' in head or b'"version"' in head):
        return "json"
    return None


def load(data: bytes, name: str) -> dict[str, Any]:
    """A dump from its bytes (pickle or JSON). Raises :class:`DumpError`."""
    form = sniff(data[:65536]) or ("json" if data.lstrip().startswith(b"{") else None)
    try:
        if form == "pickle":
            dump = safe_loads(data)
        elif form == "json":
            dump = json.loads(data.decode("utf-8"))
        else:
            raise DumpError(f"{name}: not a flight-recorder dump (neither a pickle nor JSON)")
    except DumpError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, UnicodeDecodeError, IndexError, KeyError, TypeError,
            AttributeError, MemoryError, RecursionError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DumpError(f"{name}: flight-recorder dump refused: {msg}") from None
    if not isinstance(dump, dict) or not isinstance(dump.get("entries"), list):
        raise DumpError(f"{name}: not a flight-recorder dump (no list of entries)")
    return dump


def rank_of(name: str) -> int | None:
    m = _RANK.search(os.path.basename(name))
    return int(m.group(1)) if m else None


def _sizes(v: Any) -> list | None:
    if isinstance(v, (list, tuple)):
        return [list(x) if isinstance(x, (list, tuple)) else x for x in v]
    return None


def _iso(ns: Any) -> str | None:
    if not isinstance(ns, int) or isinstance(ns, bool) or ns <= 0:
        return None
    import datetime as _dt

    try:
        return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, OSError, ValueError):
        return None


def _frame(f: Any) -> str | None:
    if not isinstance(f, dict):
        return None
    return f"{f.get('filename')}:{f.get('line')} in {f.get('name')}"


def user_frame(frames: list[str]) -> str | None:
    """The first frame outside torch's own files: the caller of the collective."""
    for fr in frames:
        if "/torch/" not in fr.split(":", 1)[0]:
            return fr
    return frames[0] if frames else None


def entry_state(e: dict) -> str:
    """``completed`` / ``started`` / ``scheduled``. A Gloo work's state stays ``scheduled``; its
    ``retired`` flag (the work finished and left the ring) says it completed."""
    state = str(e.get("state") or "scheduled")
    if state != "completed" and (e.get("time_discovered_completed_ns") or e.get("retired") is True):
        return "completed"
    if state == "scheduled" and e.get("time_discovered_started_ns"):
        return "started"
    return state


def events_from(dump: dict[str, Any], name: str) -> list[Event]:
    rank = rank_of(name)
    if isinstance(dump.get("rank"), int):
        rank = dump["rank"]
    out = []
    pg_config = dump.get("pg_config") if isinstance(dump.get("pg_config"), dict) else {}
    entries = [e for e in dump["entries"] if isinstance(e, dict)]
    summary = (f"flight-recorder dump of rank {rank if rank is not None else '?'}: {len(entries)} entries, "
               f"version {dump.get('version')}")
    out.append(Event("fr.dump", "INFO", name, 1, summary, rank=rank, template="fr.dump",
                     fields={"rank": rank, "version": str(dump.get("version")) if dump.get("version") is not None else None,
                             "entries": len(entries), "pg_config": _plain(pg_config),
                             "pg_status": _plain(dump.get("pg_status")), "comm_lib_version": dump.get("comm_lib_version")}))
    for i, e in enumerate(entries, start=2):
        pg = e.get("process_group")
        pg_name, pg_desc = (str(pg[0]), str(pg[1])) if isinstance(pg, (list, tuple)) and len(pg) >= 2 else (None, None)
        prof = str(e.get("profiling_name") or "")
        backend, _, op = prof.partition(":") if ":" in prof else ("", "", prof)
        frames = [x for x in (_frame(f) for f in (e.get("frames") or [])[:64]) if x]
        state = entry_state(e)
        seq = e.get("p2p_seq_id") if e.get("is_p2p") else e.get("collective_seq_id")
        fields = {
            "pg_id": e.get("pg_id"), "pg_name": pg_name, "pg_desc": pg_desc, "seq": seq,
            "collective_seq_id": e.get("collective_seq_id"), "p2p_seq_id": e.get("p2p_seq_id"), "op_id": e.get("op_id"),
            "record_id": e.get("record_id"), "profiling_name": prof or None, "backend": backend or None, "op": op or None,
            "op_type": op.upper() if op else None, "state": state, "raw_state": e.get("state"),
            "retired": e.get("retired"), "is_p2p": bool(e.get("is_p2p")),
            "input_sizes": _sizes(e.get("input_sizes")), "output_sizes": _sizes(e.get("output_sizes")),
            "input_dtypes": list(e.get("input_dtypes") or []), "output_dtypes": list(e.get("output_dtypes") or []),
            "timeout_ms": e.get("timeout_ms"), "time_created": _iso(e.get("time_created_ns")),
            "created_ns": e.get("time_created_ns") if isinstance(e.get("time_created_ns"), int) else None,
            "time_started": _iso(e.get("time_discovered_started_ns")),
            "time_completed": _iso(e.get("time_discovered_completed_ns")),
            "frames": frames[:MAX_FRAMES], "user_frame": user_frame(frames),
        }
        where = f" at {fields['user_frame']}" if fields["user_frame"] else ""
        text = (f"[FR rank {rank if rank is not None else '?'}] {pg_desc or pg_name or e.get('pg_id')} "
                f"#{seq} {prof or '?'} {state} in={fields['input_sizes']} {','.join(fields['input_dtypes'])}{where}")
        out.append(Event("fr.entry", "INFO", name, i, text, rank=rank, template="fr.entry", fields=fields))
    return out


def _plain(v: Any, depth: int = 0) -> Any:
    """JSON-ready copy (tuples as lists, keys as strings), bounded."""
    if depth > 6:
        return None
    if isinstance(v, dict):
        return {str(k): _plain(x, depth + 1) for k, x in list(v.items())[:4096]}
    if isinstance(v, (list, tuple, set)):
        return [_plain(x, depth + 1) for x in list(v)[:4096]]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def load_source(source: Source) -> dict[str, Any] | None:
    """The dump a source holds, or None when it is not a flight-recorder dump."""
    if source.skip:
        return None
    if source.text is not None:
        head = source.text[:65536].encode("utf-8", "surrogateescape")
        return load(source.text.encode("utf-8", "surrogateescape"), source.name) if sniff(head) == "json" else None
    if source.path is None or not os.path.isfile(source.path):
        return None
    try:
        with open(source.path, "rb") as fh:
            head = fh.read(65536)
            if sniff(head) is None:
                return None
            if os.path.getsize(source.path) > MAX_DUMP:
                raise DumpError(f"{source.name}: flight-recorder dump larger than {MAX_DUMP >> 20} MiB")
            data = head + fh.read()
    except OSError:
        return None
    return load(data, source.name)


def json_lines(dump: dict[str, Any]) -> list[str]:
    """A dump as JSON text, one entry per line (what ``logdoc redact`` writes: the JSON form reads the same)."""
    head = {k: _plain(v) for k, v in dump.items() if k != "entries"}
    lines = ["{" + json.dumps("entries") + ": ["]
    entries = dump.get("entries") or []
    for i, e in enumerate(entries):
        lines.append(json.dumps(_plain(e)) + ("," if i + 1 < len(entries) else ""))
    lines.append("],")
    body = json.dumps(head)[1:-1]
    lines.append(body + "}" if body else '"version": null}')
    return lines


def source_events(source: Source) -> list[Event] | None:
    """The events of a source that is a flight-recorder dump, or None when it is not one. Only a
    regular file or in-memory text is looked at (standard input cannot be read twice)."""
    dump = load_source(source)
    return None if dump is None else events_from(dump, source.name)
