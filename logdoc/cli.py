"""The ``logdoc`` command. The only module, with ``report/terminal.py``, that uses typer and rich."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .source import InputError

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Explain why a distributed training job (NCCL, Gloo, PyTorch) died, from its logs.\n\n"
    "Examples:\n\n"
    "  logdoc explain rank0.log rank1.log\n\n"
    "  torchrun ... 2>&1 | logdoc explain -\n\n"
    "  logdoc explain logs/            (a torchrun --log-dir tree, Slurm outputs, ...)",
)

PATHS_HELP = "Files, folders (read recursively), globs, or - for standard input. .gz is read transparently."


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


@app.command()
def parse(
    paths: List[str] = typer.Argument(..., help=PATHS_HELP),
    format: str = typer.Option("jsonl", "--format", "-f", help="jsonl (one event per line) or table."),
    unrecognized: bool = typer.Option(False, "--unrecognized", help="List relevant lines that no grammar understood."),
) -> None:
    """Turn logs into typed events (one JSON object per event).

    Example: logdoc parse rank*.log --format table
    """
    from .parse import parse_paths

    if format not in ("jsonl", "table"):
        _fail(f"unknown --format {format!r}: use jsonl or table")
    result = parse_paths(paths, stdin=sys.stdin.buffer)
    out = sys.stdout
    if format == "jsonl":
        for ev in result.events:
            out.write(json.dumps(ev.to_dict(), ensure_ascii=False) + "\n")
    else:
        from .report.terminal import print_event_table

        print_event_table(result.events)
    if unrecognized:
        for u in result.unrecognized:
            print(f"{u.file}:{u.line}: {u.text.splitlines()[0][:300]}", file=sys.stderr)
    _report_skips(result.stats)
    print(_summary_line(result.stats), file=sys.stderr)


def main() -> None:
    """Entry point: user errors are one line and exit 2; nothing escapes as a traceback."""
    try:
        app(standalone_mode=False)
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
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code if exc.exit_code else 2)
        if isinstance(exc, click.exceptions.Abort):
            print("logdoc: aborted", file=sys.stderr)
            sys.exit(130)
        if os.environ.get("LOGDOC_DEBUG"):
            raise
        print(f"logdoc: internal error: {type(exc).__name__}: {exc} (set LOGDOC_DEBUG=1 for the traceback)",
              file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
