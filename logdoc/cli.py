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


def _console(no_color: bool, stderr: bool = False):
    from rich.console import Console

    color = not no_color and not os.environ.get("NO_COLOR")
    if color:
        return Console(no_color=not color, highlight=False, soft_wrap=False, stderr=stderr)
    return Console(no_color=True, color_system=None, highlight=False, stderr=stderr)


def _load_rules(rules_dirs: List[str]):
    from . import kb

    for d in rules_dirs:
        if not os.path.isdir(d):
            _fail(f"--rules {d}: no such folder")
    rules = kb.load_rules(extra_dirs=rules_dirs)
    for p in rules.problems:
        print(f"logdoc: rules: {p}", file=sys.stderr)
    return rules


@app.command()
def explain(
    paths: List[str] = typer.Argument(..., help=PATHS_HELP),
    format: str = typer.Option("terminal", "--format", "-f", help="terminal, json or markdown."),
    rules_dirs: List[str] = typer.Option([], "--rules", help="A folder of your own rules (same schema; an existing id is overridden)."),
    redact: bool = typer.Option(False, "--redact", help="Replace hostnames and addresses in the output by stable aliases."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour (NO_COLOR is respected too)."),
) -> None:
    """Say what went wrong, on which rank, why, and what to change.

    Exit status: 0 no error found, 1 an error diagnosis, 2 bad usage or unreadable input.

    Examples:

      logdoc explain rank0.log rank1.log

      torchrun ... 2>&1 | logdoc explain -

      logdoc explain logs/ --format markdown > report.md
    """
    from .api import build_report
    from .parse import parse_paths

    if format not in ("terminal", "json", "markdown"):
        _fail(f"unknown --format {format!r}: use terminal, json or markdown")
    rules = _load_rules(rules_dirs)
    result = parse_paths(paths, stdin=sys.stdin.buffer)
    report = build_report(result, rules, redact=redact)
    if format == "json":
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    elif format == "markdown":
        from .report.markdown import render

        sys.stdout.write(render(report))
    else:
        from .report.terminal import print_report

        print_report(report, _console(no_color))
    _report_skips(result.stats)
    for p in report.get("problems", []):
        print(f"logdoc: rules: {p}", file=sys.stderr)
    print(_summary_line(result.stats), file=sys.stderr)
    if any(d["severity"] == "error" for d in report["diagnoses"]):
        raise typer.Exit(1)


@app.command()
def summary(
    paths: List[str] = typer.Argument(..., help=PATHS_HELP),
    format: str = typer.Option("json", "--format", "-f", help="json (the only format for now)."),
) -> None:
    """The job's anatomy without judging it: ranks, hosts, versions, communicators, transports, env.

    Example: logdoc summary logs/
    """
    from .analysis import analyze
    from .parse import parse_paths

    result = parse_paths(paths, stdin=sys.stdin.buffer)
    anatomy = analyze(result.events).anatomy
    sys.stdout.write(json.dumps(anatomy, indent=2, ensure_ascii=False, default=str) + "\n")
    _report_skips(result.stats)
    print(_summary_line(result.stats), file=sys.stderr)


rules_app = typer.Typer(no_args_is_help=True, help="The knowledge base: list, show, lint and test rules.")
app.add_typer(rules_app, name="rules")


@rules_app.command("list")
def rules_list(rules_dirs: List[str] = typer.Option([], "--rules", help="Add a folder of your own rules.")) -> None:
    """One line per rule: id, category, role, title. Example: logdoc rules list"""
    for r in _load_rules(rules_dirs):
        state = " (retired)" if r.retired else ""
        print(f"{r.id}\t{r.category or '-'}\t{r.role or '-'}\t{r.title or ''}{state}")


@rules_app.command("show")
def rules_show(rule_id: str, rules_dirs: List[str] = typer.Option([], "--rules")) -> None:
    """The whole page of a rule, like `rustc --explain`. Example: logdoc rules show LD301"""
    from .report.rulepage import rule_page

    rules = _load_rules(rules_dirs)
    rule = rules.get(rule_id.upper())
    if rule is None:
        _fail(f"no rule {rule_id}; `logdoc rules list` shows them")
    sys.stdout.write(rule_page(rule))


@rules_app.command("lint")
def rules_lint(rules_dirs: List[str] = typer.Option([], "--rules")) -> None:
    """Validate every rule; exit 1 on any error. Example: logdoc rules lint --rules my_rules/"""
    rules = _load_rules(rules_dirs)
    n_err = len(rules.errors)
    print(f"{len(rules.active())} rules, {n_err} error(s), {len(rules.problems) - n_err} warning(s)")
    if n_err:
        raise typer.Exit(1)


@rules_app.command("test")
def rules_test(rules_dirs: List[str] = typer.Option([], "--rules")) -> None:
    """Run every rule's examples (match and no_match). Example: logdoc rules test"""
    from .kb import check_examples
    from .parse import parse_sources

    def to_events(sources):
        from .analysis import analyze

        res = parse_sources(sources)
        a = analyze(res.events)
        return list(a.events) + list(a.synthetic)

    rules = _load_rules(rules_dirs)
    failures = check_examples(rules, to_events)
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(rules.active())} rules, {len(failures)} failing example(s)")
    if failures:
        raise typer.Exit(1)


web_app = typer.Typer(no_args_is_help=True, help="The static web page: paste a log, get the diagnosis, computed in the browser.")
app.add_typer(web_app, name="web")


@web_app.command("build")
def web_build(out: str = typer.Option(..., "--out", help="Folder to write the site into."),
              cache: Optional[str] = typer.Option(None, "--cache", help="Download cache (default ~/.cache/logdoc-web).")) -> None:
    """Write the static site (page, Pyodide runtime, wheels, kb.json). Example: logdoc web build --out site/"""
    from .web.build import build_site

    sizes = build_site(out, cache_dir=cache)
    print(json.dumps(sizes, indent=2, default=str))


@web_app.command("serve")
def web_serve(directory: str = typer.Argument(..., help="The built site."),
              port: int = typer.Option(8000, "--port")) -> None:
    """Serve a built site on 127.0.0.1 (file:// cannot load Pyodide). Example: logdoc web serve site/"""
    from .web.build import serve

    serve(directory, port=port)


def main() -> None:
    """Entry point: user errors are one line and exit 2; nothing escapes as a traceback."""
    try:
        code = app(standalone_mode=False)
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


if __name__ == "__main__":
    main()
