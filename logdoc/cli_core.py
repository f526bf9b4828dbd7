"""What the ``logdoc`` commands share, without typer: one-line user errors, loading the rules,
writing reports, the progress bar, the summary line, and the entry point.

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

from .source import InputError

class Failure(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _fail(message: str) -> None:
    raise Failure(message)


def _summary_line(stats) -> str:
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


def _report_skips(stats) -> None:
    for name, reason in stats.skipped_files:
        print(f"logdoc: skipped {name}: {reason}", file=sys.stderr)
    for w in stats.warnings:
        print(f"logdoc: warning: {w}", file=sys.stderr)


PROGRESS_HELP = "A progress bar on stderr (bytes and files); by default only for large input on a terminal."
PROGRESS_MIN_BYTES = 64 << 20


class _Bar:
    """The progress of a parse on stderr (rich), driven by logdoc.parse through add_bytes/file_done."""

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


def _progress(sources, wanted: Optional[bool]):
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


def _console(no_color: bool, stderr: bool = False):
    from rich.console import Console

    color = not no_color and not os.environ.get("NO_COLOR")
    if color:
        return Console(no_color=not color, highlight=False, soft_wrap=False, stderr=stderr)
    return Console(no_color=True, color_system=None, highlight=False, stderr=stderr)


def _check_rules_dirs(rules_dirs: List[str]) -> None:
    for d in rules_dirs:
        if not os.path.isdir(d):
            _fail(f"--rules {d}: no such folder")


def _load_rules(rules_dirs: List[str], cached: bool = False):
    from . import kb

    _check_rules_dirs(rules_dirs)
    if cached:  # explain / summary: the compiled copy in the user cache when fresh (logdoc/cache.py)
        from .cache import load_rules as load_cached

        rules = load_cached(extra_dirs=rules_dirs)
    else:
        rules = kb.load_rules(extra_dirs=rules_dirs)
    for p in rules.problems:
        print(f"logdoc: rules: {p}", file=sys.stderr)
    return rules


def _emit_report(report: dict, format: str, no_color: bool, to_stderr: bool = False) -> None:
    """Write a report in one of the formats to stdout (or stderr when stdout carries something else)."""
    stream = sys.stderr if to_stderr else sys.stdout
    if format == "json":
        stream.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    elif format == "markdown":
        from .report.markdown import render

        stream.write(render(report))
    else:
        from .report.terminal import print_report

        print_report(report, _console(no_color, stderr=to_stderr))
    stream.flush()


def _notice(d: dict) -> None:
    from .live import format_notice

    sys.stderr.write(format_notice(d))
    sys.stderr.flush()


# The defaults of `logdoc explain` (tests/test_fastpath_startup.py checks them against typer's).
EXPLAIN_DEFAULTS = {"format": "terminal", "rules_dirs": [], "redact": False, "no_color": False, "follow": False,
                    "progress": None}


def explain_command(paths: Sequence[str], format: str = "terminal", rules_dirs: Sequence[str] = (),
                    redact: bool = False, no_color: bool = False, follow: bool = False,
                    progress: Optional[bool] = None) -> int:
    """``logdoc explain``: the report on stdout (stderr with --follow), counts on stderr. Returns
    the exit status: 1 when a diagnosis is an error, else 0 (user errors raise :class:`Failure`)."""
    rules_dirs = list(rules_dirs)
    from .api import build_report

    if format not in ("terminal", "json", "markdown"):
        _fail(f"unknown --format {format!r}: use terminal, json or markdown")
    if follow and list(paths) != ["-"]:
        _fail("--follow reads standard input only: use `... 2>&1 | logdoc explain - --follow`")
    if follow:
        from .live import follow as follow_stream

        _check_rules_dirs(rules_dirs)
        sys.stdout.flush()
        # the rules load while the input already flows through
        result, early = follow_stream(sys.stdin.buffer.fileno(), sys.stdout.fileno(),
                                      rules=lambda: _load_rules(rules_dirs), emit=_notice, redact=redact,
                                      note=lambda msg: print(f"logdoc: {msg}", file=sys.stderr, flush=True))
        rules = early.rules if early is not None else _load_rules(rules_dirs)
    else:
        from .parse import parse_sources
        from .source import expand

        rules = _load_rules(rules_dirs, cached=True)
        sources = expand(paths, stdin=sys.stdin.buffer)
        # many files: worker processes; bulk noise folded as it is read (logdoc/digest.py): same
        # diagnoses, bounded memory; digests among the paths are read as events
        with _progress(sources, progress if format != "json" else False) as bar:
            result = parse_sources(sources, jobs=None, progress=bar, reduce=True)
    report = build_report(result, rules, redact=redact)
    _emit_report(report, format, no_color, to_stderr=follow)
    _report_skips(result.stats)
    for p in report.get("problems", []):
        print(f"logdoc: rules: {p}", file=sys.stderr)
    print(_summary_line(result.stats), file=sys.stderr)
    return 1 if any(d["severity"] == "error" for d in report["diagnoses"]) else 0


_FAST_FLAGS = {"--no-color": "no_color", "--redact": "redact", "--progress": "progress"}


def _fast_explain(argv: List[str]):
    """The arguments of a plain ``logdoc explain PATH... [--format F] [--rules DIR] [--redact]
    [--no-color] [--[no-]progress]`` as keyword arguments of :func:`explain_command`, or None for anything
    else (help, --follow, unknown options: typer reads those). Building typer's command costs
    about 0.2 s of start-up (its parameter adapters import pydantic); a plain explain needs none of it."""
    if not argv or argv[0] != "explain" or os.environ.get("LOGDOC_NO_FAST_CLI"):
        return None
    kwargs = dict(EXPLAIN_DEFAULTS, paths=None)
    paths: List[str] = []
    rules_dirs: List[str] = []
    i, args = 1, argv
    only_paths = False
    while i < len(args):
        a = args[i]
        if only_paths or a == "-" or not a.startswith("-"):
            paths.append(a)
        elif a == "--":
            only_paths = True
        elif a in ("--format", "-f", "--rules") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            if a == "--rules":
                rules_dirs.append(args[i + 1])
            else:
                kwargs["format"] = args[i + 1]
            i += 1
        elif a.startswith("--format=") or a.startswith("--rules="):
            name, _, value = a[2:].partition("=")
            if name == "rules":
                rules_dirs.append(value)
            else:
                kwargs["format"] = value
        elif a in _FAST_FLAGS:
            kwargs[_FAST_FLAGS[a]] = True
        elif a == "--no-progress":
            kwargs["progress"] = False
        else:
            return None
        i += 1
    if not paths or "paths" not in kwargs or "rules_dirs" not in kwargs:
        return None
    kwargs["paths"] = paths
    kwargs["rules_dirs"] = rules_dirs
    if kwargs.get("follow"):
        return None
    return kwargs


def _run(argv: List[str]):
    fast = _fast_explain(argv)
    if fast is None:
        from .cli import app

        return app(standalone_mode=False)
    _leave(explain_command(**fast))


def _leave(code: int) -> None:
    """End the process now, once the output is flushed. After a plain explain nothing is left to
    clean up (worker processes have been joined, the progress bar stopped, caches written), and
    the interpreter's teardown of a large parse's objects would cost 30 to 40 ms more."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main() -> None:
    """Entry point: user errors are one line and exit 2; nothing escapes as a traceback."""
    try:
        code = _run(sys.argv[1:])
        # without standalone mode click returns typer.Exit(n)'s code instead of exiting with it
        if isinstance(code, int) and code:
            sys.exit(code)
    except Failure as exc:
        print(f"logdoc: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except InputError as exc:
        print(f"logdoc: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print("logdoc: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        finally:
            sys.exit(0)
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        # usage errors: click's ClickException, or typer's vendored copy of it (typer >= 0.17)
        if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            sys.exit(exc.exit_code if exc.exit_code else 2)
        if type(exc).__name__ == "Abort":
            print("logdoc: aborted", file=sys.stderr)
            sys.exit(130)
        if os.environ.get("LOGDOC_DEBUG"):
            raise
        print(f"logdoc: internal error: {type(exc).__name__}: {exc} (set LOGDOC_DEBUG=1 for the traceback)",
              file=sys.stderr)
        sys.exit(3)
