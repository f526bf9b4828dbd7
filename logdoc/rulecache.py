"""The knowledge base's compiled copy in the user cache (see :mod:`logdoc.cache` for the folder).

YAML parsing with line numbers and validation cost about 0.3 s on every run (several seconds with
the catalog annotations on a busy machine); the loaded rule set, pickled, loads in a few
milliseconds. Keyed by logdoc's version, the loader's own source files, the regex engine, and
every knowledge file's path, size and modification time (built-in and ``--rules``). A stale entry
is never used; a damaged one is rebuilt.

The knowledge side's half of the start-up caches: the parser side's (:mod:`logdoc.cache`) knows
nothing of the knowledge base, so the two do not import each other.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Sequence

from .cache import cache_dir, prune, write_atomic

KB_CACHE_SCHEMA = "logdoc.kbcache/1"


def _kb_key(dirs: Sequence[Path]) -> str | None:
    from . import __version__, annotations, cache, differential, kb, knowledge

    h = hashlib.sha256()
    h.update(f"{KB_CACHE_SCHEMA}|{__version__}|{kb.SCHEMA}|{kb.regex_engine()}|{kb.yaml_available()}|"
             f"{sys.version_info[:2]}".encode())
    # the loader's own code: an edited module of the kb or differential package makes a new key
    kb_files = sorted(str(p) for pkg in (kb, differential) for p in Path(pkg.__file__).parent.glob("*.py"))
    for mod in (*kb_files, __file__, cache.__file__, annotations.__file__, knowledge.__file__):
        try:
            st = os.stat(mod)
            h.update(f"\0{mod}\0{st.st_size}\0{st.st_mtime_ns}".encode())
        except (OSError, TypeError):
            return None
    for d in dirs:
        h.update(b"\0dir\0" + str(d.resolve()).encode())
        if not d.is_dir():
            h.update(b"missing")
            continue
        try:
            files = kb._rule_files(d) + knowledge.knowledge_files(d)
        except Exception:  # noqa: BLE001 - no cache rather than a wrong one
            return None
        for p in files:
            try:
                st = p.stat()
            except OSError:
                return None
            h.update(f"\0{p}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()[:32]


def load_rules(extra_dirs: Sequence[str | Path] = ()):
    """``kb.load_rules(extra_dirs=extra_dirs)``, from the cache when it is fresh."""
    import pickle

    from . import kb

    dirs = [kb._builtin_dir()] + [Path(x) for x in extra_dirs]
    folder = cache_dir()
    key = _kb_key(dirs) if folder is not None else None
    path = folder / f"kb-{key}.pickle" if key is not None and folder is not None else None
    if path is not None and path.is_file():
        try:
            with open(path, "rb") as fh:
                head = fh.readline()
                if head == (KB_CACHE_SCHEMA + "\n").encode():
                    rs = pickle.load(fh)
                    if isinstance(rs, kb.RuleSet):
                        return rs
        except Exception:  # noqa: BLE001 - a damaged cache is rebuilt
            pass
    rs = kb.load_rules(extra_dirs=extra_dirs)
    if path is not None:
        try:
            blob = pickle.dumps(rs, protocol=pickle.HIGHEST_PROTOCOL)
            back = pickle.loads(blob)  # only cache what loads back
            if isinstance(back, kb.RuleSet) and len(back) == len(rs):
                write_atomic(path, (KB_CACHE_SCHEMA + "\n").encode() + blob)
                prune(folder, "kb-", keep=path.name)
        except Exception:  # noqa: BLE001
            pass
    return rs
