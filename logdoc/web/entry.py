"""The Python side of the web page.

The page's Web Worker (``worker.js``) boots Pyodide, loads the lark and logdoc wheels by URL,
imports this module and calls it. It is a thin shim over the public core API: the diagnosis
is computed by exactly the same code as ``logdoc explain`` (``logdoc.api.explain_sources``) and
the Markdown by ``logdoc.report.markdown.render``. The knowledge base arrives as the JSON that
``logdoc web build`` compiled with ``logdoc.kb.compile_rules`` (the page has no PyYAML); it is
loaded once with ``logdoc.kb.load_compiled`` and passed to every call.

Everything crosses the JS boundary as plain strings (JSON), so the worker needs no proxies.
It also runs on CPython, which is how the unit tests exercise it.
"""
from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any

_rules: Any = None  # the RuleSet loaded from kb.json, compiled once
_last_sources: list[tuple[str, str]] | None = None


def init(kb_json: str) -> str:
    """Keep the compiled knowledge base and import the core. Returns runtime facts as JSON."""
    global _rules
    t0 = time.perf_counter()
    import logdoc
    import logdoc.api  # noqa: F401  (import cost belongs to start-up, not to the first click)
    import logdoc.report.markdown  # noqa: F401
    from logdoc import kb

    _rules = kb.load_compiled(kb_json) if kb_json else None
    problems = [str(p) for p in getattr(_rules, "problems", []) if getattr(p, "level", "error") == "error"]

    try:
        import regex  # noqa: F401

        regex_engine = "regex"
    except ImportError:
        regex_engine = "re"
    return json.dumps(
        {
            "logdoc": getattr(logdoc, "__version__", None),
            "python": sys.version.split()[0],
            "platform": sys.platform,
            "regex_engine": regex_engine,
            "rules": _count_rules(_rules),
            "problems": problems,
            "init_ms": round((time.perf_counter() - t0) * 1000, 1),
        }
    )


def warm_up() -> str:
    """Run one tiny explain so the grammars are built before the user's first click."""
    t0 = time.perf_counter()
    sample = (
        "node0:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "node0:100:100 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
        "10.0.0.1<33333> failed : Software caused connection abort\n"
    )
    try:
        _explain([("warm-up.log", sample)], redact=False)
    except Exception:  # a warm-up failure must not break the page; the real call will report it
        return json.dumps({"ok": False, "error": traceback.format_exc(limit=3)})
    return json.dumps({"ok": True, "ms": round((time.perf_counter() - t0) * 1000, 1)})


def explain(sources_json: str, redact: bool = False) -> str:
    """Explain ``[[name, text], ...]`` and return ``{"report", "markdown", "ms"}`` as JSON."""
    global _last_sources
    sources = [(str(name), str(text)) for name, text in json.loads(sources_json)]
    _last_sources = sources
    return _explain_json(sources, redact)


def explain_texts(names: Any, texts: Any, redact: bool = False) -> str:
    """Same as :func:`explain`, with names and texts as two parallel sequences.

    The worker uses this to avoid building one big JSON string around a 5 MB log.
    """
    global _last_sources
    sources = [(str(n), str(t)) for n, t in zip(list(names), list(texts))]
    _last_sources = sources
    return _explain_json(sources, redact)


def markdown_again(redact: bool) -> str:
    """Markdown of the last explained sources, redacted or not (for "copy as Markdown")."""
    if _last_sources is None:
        raise RuntimeError("nothing has been explained yet")
    t0 = time.perf_counter()
    report = _explain(_last_sources, redact=redact)
    from logdoc.report import markdown

    return json.dumps(
        {
            "markdown": markdown.render(report),
            "redact": bool(redact),
            "ms": round((time.perf_counter() - t0) * 1000, 1),
        }
    )


def _explain_json(sources: list[tuple[str, str]], redact: bool) -> str:
    from logdoc.report import markdown

    t0 = time.perf_counter()
    report = _explain(sources, redact=redact)
    t1 = time.perf_counter()
    md = markdown.render(report)
    t2 = time.perf_counter()
    return json.dumps(
        {
            "report": report,
            "markdown": md,
            "redact": bool(redact),
            "ms": {"explain": round((t1 - t0) * 1000, 1), "markdown": round((t2 - t1) * 1000, 1)},
        }
    )


def _explain(sources: list[tuple[str, str]], *, redact: bool) -> dict:
    from logdoc import api

    return api.explain_sources(sources, redact=redact, rules=_rules)


def _count_rules(rules: Any) -> int | None:
    try:
        return len(list(rules))
    except TypeError:
        return None
