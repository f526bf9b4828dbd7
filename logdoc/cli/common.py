"""What the ``logdoc`` commands share, without typer: one-line user errors, loading the rules,
writing reports, the progress bar, the summary line, and ``explain`` itself.

A plain ``logdoc explain PATH... [--format F] [--rules DIR] [--redact] [--no-color]
[--[no-]progress]`` runs :func:`explain_command` from here without importing typer (about 20 ms
of every start) or building its command (about 0.2 s); every other command line goes to the
typer application in :mod:`logdoc.cli`, whose ``explain`` calls the same function.
``tests/test_fastpath_startup.py`` checks both ways give the same output and exit status.
"""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional, Sequence

class Failure(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def fail(message: str) -> None:
    raise Failure(message)


def summary_line(stats) -> str:
    parts = [
        f"read {stats.lines_read} lines in {stats.files} file{'s' if stats.files != 1 else ''}",
        f"{stats.relevant} relevant",
        f"{stats.events} events",
        f"{stats.not_understood} not understood",
        f"{stats.irrelevant} irrelevant",
    ]
    if stats.cut_lines:
        parts.append(f"{stats.cut_lines} over-long lines cut at 1 MiB")
    return "logdoc: " + ", ".join(parts)


def report_skips(stats) -> None:
    for name, reason in stats.skipped_files:
        print(f"logdoc: skipped {name}: {reason}", file=sys.stderr)
    for w in stats.warnings:
        print(f"logdoc: warning: {w}", file=sys.stderr)


PROGRESS_HELP = "A progress bar on stderr (bytes and files); by default only for large input on a terminal."
PROGRESS_MIN_BYTES = 64 << 20


class _Bar:
    """The progress of a parse on stderr (rich), driven by logdoc.pipeline through add_bytes/file_done."""

    def __init__(self, total: int, files: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self.files = files
        self.done = 0
        self.p = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                          console=Console(stderr=True), transient=True)
        self.task = self.p.add_task(self._label(), total=total or None)

    def _label(self) -> str:
        return f"reading {self.done}/{self.files} file{'s' if self.files != 1 else ''}"

    def add_bytes(self, n: int) -> None:
        self.p.advance(self.task, n)

    def file_done(self, name: str) -> None:
        self.done += 1
        self.p.update(self.task, description=self._label())

    def __enter__(self):
        self.p.start()
        return self

    def __exit__(self, *exc) -> None:
        self.p.stop()


def progress_bar(sources, wanted: Optional[bool]):
    """A progress bar when stderr is a terminal and the input is large (or --progress); else a
    context giving None. Never on a pipe."""
    import contextlib

    if wanted is False or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    total = 0
    for src in sources:
        if src.path is not None:
            try:
                total += os.path.getsize(src.path)
            except OSError:
                pass
        elif src.stream is not None and wanted is None:
            return contextlib.nullcontext(None)  # standard input: size unknown
    if wanted is None and total < PROGRESS_MIN_BYTES:
        return contextlib.nullcontext(None)
    try:
        return _Bar(total, len(sources))
    except Exception:  # noqa: BLE001 - no bar rather than no report
        return contextlib.nullcontext(None)


def make_console(no_color: bool, stderr: bool = False):
    from rich.console import Console

    color = not no_color and not os.environ.get("NO_COLOR")
    if color:
        return Console(no_color=not color, highlight=False, soft_wrap=False, stderr=stderr)
    return Console(no_color=True, color_system=None, highlight=False, stderr=stderr)


def check_rules_dirs(rules_dirs: List[str]) -> None:
    for d in rules_dirs:
        if not os.path.isdir(d):
            fail(f"--rules {d}: no such folder")


def load_rules(rules_dirs: List[str], cached: bool = False):
    from .. import kb

    check_rules_dirs(rules_dirs)
    if cached:  # explain / summary: the compiled copy in the user cache when fresh (logdoc/cache.py)
        from ..rulecache import load_rules as load_cached

        rules = load_cached(extra_dirs=rules_dirs)
    else:
        rules = kb.load_rules(extra_dirs=rules_dirs)
    for p in rules.problems:
        print(f"logdoc: rules: {p}", file=sys.stderr)
    return rules


def emit_report(report: dict, format: str, no_color: bool, to_stderr: bool = False) -> None:
    """Write a report in one of the formats to stdout (or stderr when stdout carries something else)."""
    stream = sys.stderr if to_stderr else sys.stdout
    if format == "json":
        stream.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    elif format == "markdown":
        from ..report.markdown import render

        stream.write(render(report))
    else:
        from ..report.terminal import print_report

        print_report(report, make_console(no_color, stderr=to_stderr))
    stream.flush()


def notice(d: dict) -> None:
    from ..live import format_notice

    sys.stderr.write(format_notice(d))
    sys.stderr.flush()


# The defaults of `logdoc explain` (tests/test_fastpath_startup.py checks them against typer's).
EXPLAIN_DEFAULTS = {"format": "terminal", "rules_dirs": [], "redact": False, "no_color": False, "follow": False,
                    "progress": None, "full": False}


def explain_command(paths: Sequence[str], format: str = "terminal", rules_dirs: Sequence[str] = (),
                    redact: bool = False, no_color: bool = False, follow: bool = False,
                    progress: Optional[bool] = None, full: bool = False) -> int:
    """``logdoc explain``: the report on stdout (stderr with --follow), counts on stderr. Returns
    the exit status: 1 when a diagnosis is an error, else 0 (user errors raise :class:`Failure`)."""
    rules_dirs = list(rules_dirs)
    from ..api import build_report

    if format not in ("terminal", "json", "markdown"):
        fail(f"unknown --format {format!r}: use terminal, json or markdown")
    if follow and list(paths) != ["-"]:
        fail("--follow reads standard input only: use `... 2>&1 | logdoc explain - --follow`")
    if follow:
        from ..live import follow as follow_stream

        check_rules_dirs(rules_dirs)
        sys.stdout.flush()
        # the rules load while the input already flows through
        result, early = follow_stream(sys.stdin.buffer.fileno(), sys.stdout.fileno(),
                                      rules=lambda: load_rules(rules_dirs), emit=notice, redact=redact,
                                      note=lambda msg: print(f"logdoc: {msg}", file=sys.stderr, flush=True))
        rules = early.rules if early is not None else load_rules(rules_dirs)
    else:
        from ..pipeline import parse_sources
        from ..read.source import expand

        rules = load_rules(rules_dirs, cached=True)
        sources = expand(paths, stdin=sys.stdin.buffer)
        # many files: worker processes; bulk noise folded as it is read (logdoc/digest.py): same
        # diagnoses, bounded memory; digests among the paths are read as events
        with progress_bar(sources, progress if format != "json" else False) as bar:
            result = parse_sources(sources, jobs=None, progress=bar, reduce=True)
    if not follow and result.stats.skipped_files and not result.stats.lines_read:
        report_skips(result.stats)  # every input was unreadable (binary, corrupt gzip, no permission)
        fail("nothing to read: every input was skipped" if len(result.stats.skipped_files) > 1
             else "nothing to read: the input was skipped")
    report = build_report(result, rules, redact=redact)
    if format == "json" and not full:  # under 1 MB for any job: rank runs, folded host lists
        from ..analysis.ranges import compact_report

        emit_report(compact_report(report), format, no_color, to_stderr=follow)
    else:
        emit_report(report, format, no_color, to_stderr=follow)
    report_skips(result.stats)
    for p in report.get("problems", []):
        print(f"logdoc: rules: {p}", file=sys.stderr)
    print(summary_line(result.stats), file=sys.stderr)
    return exit_status(report)


def job_failed(report: dict) -> bool:
    """Did the job fail? An error anywhere: a diagnosis, or a consequence folded under one (a
    straggler is only a warning, but the ranks that timed out waiting for it died)."""
    for d in report.get("diagnoses") or ():
        if d.get("severity") == "error" or any(s.get("severity") == "error" for s in d.get("symptoms") or ()):
            return True
    return False


def exit_status(report: dict) -> int:
    """``logdoc explain``'s status: 1 when the job failed, else 0 (2 is bad usage or unreadable input)."""
    return 1 if job_failed(report) else 0
