"""The Python API: the same report the CLI prints as JSON, for notebooks, frameworks and the web page.

    import logdoc
    report = logdoc.explain("logs/")          # paths (str or list), or log text
    report["diagnoses"][0]["title"]
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from .diagnose import SCHEMA, diagnose
from .pipeline import parse_paths, parse_sources
from .results import ParseResult


def _rules(rules=None, rules_json: dict | None = None, extra_dirs: Sequence[str] = ()):
    from . import kb

    if rules is not None:
        return rules
    if rules_json is not None:
        return kb.load_compiled(rules_json)
    return _loaded_rules(tuple(os.fspath(d) for d in extra_dirs))


_LOADED: dict[tuple[str, ...], Any] = {}


def _loaded_rules(extra_dirs: tuple[str, ...]):
    """The rule set, as the command line loads it (the compiled copy in the user cache when it is
    fresh, logdoc/cache.py), kept for the life of the process: a notebook or a tool that calls
    :func:`explain` many times parses the YAML knowledge base once, not every time."""
    from .rulecache import load_rules

    rules = _LOADED.get(extra_dirs)
    if rules is None:
        if len(_LOADED) > 8:
            _LOADED.clear()
        rules = _LOADED[extra_dirs] = load_rules(extra_dirs=extra_dirs)
    return rules


def build_report(result: ParseResult, rules, *, redact: bool = False) -> dict[str, Any]:
    from .collector import collector_off

    with collector_off():  # the analysis makes many objects and few cycles
        return _build_report(result, rules, redact)


def _build_report(result: ParseResult, rules, redact: bool) -> dict[str, Any]:
    from .analysis import analyze
    from .report.picture import timeline_section

    analysis = analyze(result.events, files=result.files)
    events = list(analysis.events) + list(analysis.synthetic)
    diagnoses, notes, problems = diagnose(events, rules, analysis)
    if not diagnoses:
        from .reread import reread

        # nothing explains the job: its lines not understood, read as messages without their headers
        got = reread(result, events, rules, analysis)
        if got is not None:
            diagnoses, notes = got
    report = {
        "schema": SCHEMA,
        "diagnoses": diagnoses,
        "notes": notes,
        "job": analysis.anatomy,
        "stats": result.stats.to_dict(),
        "unrecognized": [{"file": u.file, "line": u.line, "text": u.text[:500]}
                         for u in [u for u in result.unrecognized if not u.loose][:50]],
        "problems": [str(p) for p in problems],
        "files": result.files,
        # the picture of the failure: one row per rank, time across (logdoc/report/picture.py)
        "timeline": timeline_section(analysis),
    }
    if redact:
        from .redact import Redactor

        # the same redactor as `logdoc redact`, hosts learned from the parsed events
        report = Redactor.for_events(result.events).value(report)
    return report


def explain_sources(sources: Iterable[tuple[str, str]], *, redact: bool = False, rules_json: dict | None = None,
                    rules=None) -> dict[str, Any]:
    """Explain in-memory logs: ``sources`` is a list of ``(file name, text)``."""
    return build_report(parse_sources(list(sources)), _rules(rules, rules_json), redact=redact)


def explain(text_or_paths: str | os.PathLike | Sequence[str | os.PathLike], *, redact: bool = False,
            rules_dirs: Sequence[str] = ()) -> dict[str, Any]:
    """Explain logs given as a path, a list of paths, or the log text itself."""
    if isinstance(text_or_paths, (str, os.PathLike)):
        s = os.fspath(text_or_paths)
        if "\n" in s or not os.path.exists(s):
            result = parse_sources([("<text>", s)])
        else:
            result = parse_paths([s])
    else:
        result = parse_paths([os.fspath(p) for p in text_or_paths])
    return build_report(result, _rules(extra_dirs=rules_dirs), redact=redact)
