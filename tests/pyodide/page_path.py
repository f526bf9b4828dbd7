# Runs inside Pyodide (see run.mjs) before any test-only wheel is installed: exactly what the web
# page has (the lark and logdoc wheels, stdlib `re`, no PyYAML, the knowledge base as kb.json).
# It explains every bundled sample through logdoc.web.entry, the module the page's worker calls,
# and returns the reports; the pytest wrapper compares them with CPython's.
import json
import sys
import time
from pathlib import Path

missing = {}
for name in ("yaml", "regex", "rich", "typer"):
    try:
        __import__(name)
        missing[name] = False
    except ImportError:
        missing[name] = True

from logdoc.web import entry  # noqa: E402

t0 = time.perf_counter()
info = json.loads(entry.init(KB_JSON))  # noqa: F821  (set by run.mjs)
init_ms = (time.perf_counter() - t0) * 1000

reports = {}
timings = {}
samples = Path("/repo/samples")
for meta in sorted(samples.glob("*/sample.yaml")):
    folder = meta.parent
    sources = [
        (p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8", errors="replace"))
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "sample.yaml"
    ]
    t = time.perf_counter()
    out = json.loads(entry.explain(json.dumps(sources)))
    timings[folder.name] = round((time.perf_counter() - t) * 1000, 1)
    reports[folder.name] = out["report"]

json.dumps({
    "absent": missing,
    "info": info,
    "init_ms": round(init_ms, 1),
    "timings_ms": timings,
    "reports": reports,
    "python": sys.version.split()[0],
})
