"""The ``logdoc`` command line: the entry point.

A plain ``logdoc explain PATH...`` runs :func:`logdoc.cli.common.explain_command` straight from here,
without typer; every other command line goes to the typer application in
:mod:`logdoc.cli.commands`. Imports go one way: ``commands`` imports ``common``; only :func:`main`
imports ``commands``. User errors are one line and exit 2; nothing escapes as a traceback.
"""
from __future__ import annotations

import atexit
import os
import sys
from typing import List

from .. import regex_cache
from ..collector import hold_for_explain, release
from ..read.source import InputError
from .common import EXPLAIN_DEFAULTS, Failure, explain_command

__all__ = ["main"]

_FAST_FLAGS = {"--no-color": "no_color", "--redact": "redact", "--progress": "progress", "--full": "full"}


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
        release()  # (the collector, off for a plain explain only: logdoc.collector.hold_for_explain)
        from .commands import app

        return app(standalone_mode=False)
    _leave(explain_command(**fast))


def _leave(code: int) -> None:
    """End the process now, once the output is flushed. After a plain explain nothing is left to
    clean up (worker processes have been joined, the progress bar stopped, caches written), and
    the interpreter's teardown of a large parse's objects would cost 30 to 40 ms more."""
    sys.stdout.flush()
    sys.stderr.flush()
    regex_cache.save()
    os._exit(code)


def main() -> None:
    """Entry point: user errors are one line and exit 2; nothing escapes as a traceback."""
    hold_for_explain(sys.argv[1:])
    if regex_cache.install():  # (compiled patterns taken from the cache folder: logdoc.regex_cache)
        atexit.register(regex_cache.save)
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
