"""Start-up caches in the user's cache folder: the knowledge base compiled (its loader is
:mod:`logdoc.rulecache`), and the built Lark parsers. Both are keyed by what they are built from, so a stale entry is never used,
and every failure (no home, read-only disk, a damaged file) falls back to building as usual.

* knowledge base: YAML parsing with line numbers and validation cost about 0.3 s on every run;
  the loaded rule set, pickled, loads in a few milliseconds (the JSON compiled form would be
  validated again: 50 ms). Keyed by logdoc's version, the loader's own source files, the regex
  engine, and every rule file's path, size and modification time (built-in and ``--rules``).
* grammars: Lark's own cache file for each grammar and start symbol (Lark checks the grammar
  text and options itself).
* message catalogs (:func:`load_table`): the NCCL and PyTorch template tables, keyed by the files
  they are built from and the module that builds them.

The folder is ``$LOGDOC_CACHE_DIR``, else ``$XDG_CACHE_HOME/logdoc``, else ``~/.cache/logdoc``,
created private to the user. ``LOGDOC_NO_CACHE=1`` turns every cache off.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Sequence

def cache_dir(create: bool = True) -> Path | None:
    if os.environ.get("LOGDOC_NO_CACHE"):
        return None
    base = os.environ.get("LOGDOC_CACHE_DIR")
    if base:
        d = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        try:
            d = Path(xdg) / "logdoc" if xdg else Path.home() / ".cache" / "logdoc"
        except (RuntimeError, KeyError):
            return None
    if create:
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
    try:
        st = d.stat()
    except OSError:
        return None
    # only a folder of this user that nobody else can write: cached parsers are pickles
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return None
    return d


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def prune(folder: Path, prefix: str, keep: str, limit: int = 8) -> None:
    try:
        old = sorted((p for p in folder.glob(prefix + "*") if p.name != keep), key=lambda p: p.stat().st_mtime)
        for p in old[:-limit] if len(old) > limit else []:
            p.unlink()
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------
# message catalogs

TABLE_CACHE_SCHEMA = "logdoc.tablecache/1"


def load_table(name: str, sources: Sequence[str | Path], build):
    """``build()``, or the pickled result of an earlier call with the same ``sources`` (the files it
    is built from, its own module among them: keyed by their path, size and modification time,
    logdoc's version and Python's). For tables built at the first line that needs them on every
    run: the NCCL and PyTorch message catalogs (about 10 ms each to build, 1 to 5 to load).
    Patterns in them must pickle uncompiled (``classify.formats.BoundedPattern`` does)."""
    import pickle

    from . import __version__

    folder = cache_dir()
    if folder is None:
        return build()
    h = hashlib.sha256(f"{TABLE_CACHE_SCHEMA}|{__version__}|{name}|{sys.version_info[:2]}".encode())
    for src in sources:
        try:
            st = os.stat(src)
        except (OSError, TypeError):
            return build()
        h.update(f"\0{src}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    path = folder / f"table-{name}-{h.hexdigest()[:24]}.pickle"
    try:
        with open(path, "rb") as fh:
            if fh.readline() == (TABLE_CACHE_SCHEMA + "\n").encode():
                return pickle.load(fh)
    except Exception:  # noqa: BLE001 - missing or damaged: built again
        pass
    table = build()
    try:
        write_atomic(path, (TABLE_CACHE_SCHEMA + "\n").encode() + pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
        prune(folder, f"table-{name}-", keep=path.name, limit=2)
    except Exception:  # noqa: BLE001 - no cache rather than no table
        pass
    return table


# ---------------------------------------------------------------------------------------------
# grammars

def lark_cache_file(name: str, start: str, grammar: str) -> str | None:
    """A file for Lark's ``cache=`` option (Lark verifies the grammar and options it holds)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        import lark
    except ImportError:
        return None
    digest = hashlib.sha256(f"{lark.__version__}|{name}|{start}|{grammar}".encode()).hexdigest()[:24]
    return str(folder / f"lark-{name}-{start}-{digest}.pickle")
