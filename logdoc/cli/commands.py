"""The ``logdoc`` commands (typer). What they share is in :mod:`logdoc.cli.common` and the entry
point in :mod:`logdoc.cli`; neither imports typer or rich.

One module, over 500 lines: it is the typer app, one thin function per command registered on the
same ``app``; what the commands share is already in :mod:`logdoc.cli.common`, so each command here is
its options and a call.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperCommand
from ..analysis.ranges import count_text
from ..shorten import shorten

from .common import (
    PROGRESS_HELP,
    check_rules_dirs,
    emit_report,
    explain_command,
    fail,
    load_rules,
    notice,
    progress_bar,
    report_skips,
    summary_line,
)

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Explain why a distributed training job (NCCL, Gloo, PyTorch) died, from its logs.\n\n"
    "Examples:\n\n"
    "\b\n"
    "  logdoc explain rank0.log rank1.log     # files, folders, globs, .gz\n"
    "  logdoc explain logs/                   # a torchrun --log-dir tree, Slurm outputs, ...\n"
    "  torchrun ... 2>&1 | logdoc explain -   # straight from the job's output\n"
    "  logdoc run -- torchrun ... train.py    # run the job; explained if it fails\n"
    "  logdoc rules show LD701                # the page of one rule\n\n"
    "Shell completion: logdoc --install-completion (bash, zsh, fish, PowerShell).",
)

PATHS_HELP = "Files, folders (read recursively), globs, or - for standard input. .gz is read transparently."


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"logdoc {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main_options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                               help="Print logdoc's version and exit.")) -> None:
    pass


class _Command(TyperCommand):
    """Usage lines and argument lists as click writes them: ``PATH...``, not ``{PATH}...`` nor
    ``PATH <list[str]>`` (the metavar already says what it is)."""

    def collect_usage_pieces(self, ctx):
        return [re.sub(r"^\{(.+)\}(\.\.\.)?$", r"\1\2", piece) for piece in super().collect_usage_pieces(ctx)]

    def format_options(self, ctx, formatter) -> None:
        args, opts = [], []
        for param in self.get_params(ctx):
            rv = param.get_help_record(ctx)
            if rv is None:
                continue
            if param.param_type_name == "argument":
                name = (param.metavar or param.name.upper()) + ("..." if param.nargs != 1 else "")
                args.append((name, rv[1]))
            elif param.param_type_name == "option":
                opts.append((re.sub(r" <bool>$", "", rv[0]), rv[1]))
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts)


def _complete_with(*values: str):
    """Shell completion of an option's values (the option itself still accepts and checks any text)."""
    def complete(incomplete: str):
        return [v for v in values if v.startswith(incomplete)]
    return complete


def _complete_rule_id(incomplete: str):
    """Rule ids for shell completion, read from the YAML files without loading the rules."""
    import re

    try:
        from ..resources import data_dir

        ids = set()
        for f in sorted(Path(data_dir("knowledge")).glob("*.yaml")):
            ids.update(re.findall(r"^\s*-\s*id:\s*([A-Z]+\d+)", f.read_text(encoding="utf-8"), re.M))
        return sorted(i for i in ids if i.startswith(incomplete.upper()))
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []


REPORT_FORMATS = _complete_with("terminal", "json", "markdown")


@app.command(cls=_Command)
def parse(
    paths: List[str] = typer.Argument(..., metavar="PATH", help=PATHS_HELP),
    format: str = typer.Option("jsonl", "--format", "-f", metavar="FORMAT", help="jsonl (one event per line) or table.",
                               autocompletion=_complete_with("jsonl", "table")),
    unrecognized: bool = typer.Option(False, "--unrecognized", help="List relevant lines that no grammar understood."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
) -> None:
    """Turn logs into typed events (one JSON object per event).

    Line counts (read, relevant, understood, not understood) go to stderr.

    Examples:

    \b
      logdoc parse rank*.log --format table
      logdoc parse logs/ | jq 'select(.kind == "nccl.warn")'
      logdoc parse rank0.log --unrecognized > /dev/null
    """
    from ..pipeline import parse_sources
    from ..read.source import expand

    if format not in ("jsonl", "table"):
        fail(f"unknown --format {format!r}: use jsonl or table")
    sources = expand(paths, stdin=sys.stdin.buffer)
    with progress_bar(sources, progress) as bar:
        result = parse_sources(sources, jobs=None, progress=bar)
    out = sys.stdout
    if format == "jsonl":
        for ev in result.events:
            out.write(json.dumps(ev.to_dict(), ensure_ascii=False) + "\n")
    else:
        from ..report.terminal import print_event_table
        from .common import make_console

        print_event_table(result.events, make_console(no_color=False))
    if unrecognized:
        for u in result.unrecognized:
            if not u.loose:
                print(f"{u.file}:{u.line}: {shorten(u.text.splitlines()[0], 300)}", file=sys.stderr)
    report_skips(result.stats)
    print(summary_line(result.stats), file=sys.stderr)


@app.command(cls=_Command)
def explain(
    paths: List[str] = typer.Argument(..., metavar="PATH", help=PATHS_HELP),
    format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="terminal, json or markdown.",
                               autocompletion=REPORT_FORMATS),
    rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="A folder of your own rules (same schema; an existing id is overridden)."),
    redact: bool = typer.Option(False, "--redact", help="Replace hostnames and addresses in the output by stable aliases."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour (NO_COLOR is respected too)."),
    follow: bool = typer.Option(False, "--follow", help="Only with -: pass every input line through to stdout unchanged as it "
                                "arrives, print each root cause to stderr as soon as it is certain, and the full "
                                "report to stderr at the end of input."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
    full: bool = typer.Option(False, "--full", help="With --format json: every rank, host and file listed (by default "
                              "long lists are written as runs and the report stays under 1 MB)."),
) -> None:
    """Say what went wrong, on which rank, why, and what to change.

    Reading - (standard input) is streaming: only events are kept, and the report comes at the end
    of input. Exit status: 0 no failure found, 1 the job failed, 2 bad usage or only unreadable input.

    Examples:

    \b
      logdoc explain rank0.log rank1.log
      logdoc explain logs/ --format markdown > report.md
      torchrun ... 2>&1 | logdoc explain -
      torchrun ... 2>&1 | logdoc explain - --follow | tee job.log
    """
    code = explain_command(paths, format, rules_dirs, redact, no_color, follow, progress, full)
    if code:
        raise typer.Exit(code)


@app.command(cls=_Command, context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
def run(
    cmd: List[str] = typer.Argument(..., metavar="CMD", help="The command to run and its arguments, after --."),
    log_dirs: List[str] = typer.Option([], "--log-dir", metavar="DIR", help="A folder the job writes logs into (torchrun "
                                       "--log-dir; found by itself in a torchrun command); its files written during "
                                       "the run are read too. Repeatable."),
    save: Optional[str] = typer.Option(None, "--save", metavar="FILE", help="Also write the command's output (both "
                                       "streams, as lines in arrival order) to FILE; the report then points into it."),
    format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="Report format: terminal, json or markdown.",
                               autocompletion=REPORT_FORMATS),
    report_file: Optional[str] = typer.Option(None, "--report", metavar="FILE", help="Write the report to FILE instead of stderr."),
    rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="A folder of your own rules."),
    redact: bool = typer.Option(False, "--redact", help="Replace hostnames and addresses in logdoc's output by stable aliases."),
    early: bool = typer.Option(True, "--early/--no-early", help="Print each certain root cause to stderr as soon as it shows up."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour (NO_COLOR is respected too)."),
) -> None:
    """Run a job, pass its output through, and explain it if it fails.

    The command runs in its own process group; its stdout and stderr go through unchanged (each to
    its own stream; PYTHONUNBUFFERED=1 unless set, so Python's prints are not held back by the
    pipes); Ctrl-C, SIGTERM and SIGHUP reach the whole group. When it fails, the diagnosis of its
    output (plus NCCL_DEBUG_FILE outputs and --log-dir files) goes to stderr, and logdoc exits with
    the command's own status (128+N when a signal N killed it). On success it exits 0 quietly.

    Examples:

    \b
      logdoc run -- torchrun --nproc-per-node 8 train.py
      logdoc run --log-dir logs/ -- torchrun --log-dir logs/ --nnodes 2 ... train.py
      NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/tmp/nccl.%h.%p logdoc run -- srun -N 2 python train.py
      logdoc run --save job.log -- mpirun -np 16 python train.py
    """
    from ..api import build_report
    from ..live import describe_command, run_command

    if format not in ("terminal", "json", "markdown"):
        fail(f"unknown --format {format!r}: use terminal, json or markdown")
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        fail("no command: logdoc run -- CMD [ARGS]")
    check_rules_dirs(rules_dirs)
    try:
        res = run_command(cmd, log_dirs=log_dirs, save=save, rules=lambda: load_rules(rules_dirs),
                          emit=notice if early else None, redact=redact)
    except FileNotFoundError:
        print(f"logdoc: error: command not found: {cmd[0]}", file=sys.stderr)
        raise typer.Exit(127)
    except PermissionError:
        print(f"logdoc: error: permission denied: {cmd[0]}", file=sys.stderr)
        raise typer.Exit(126)
    except OSError as exc:
        fail(f"cannot start {cmd[0]}: {exc}")
    status = res.exit_status
    if res.returncode is not None and res.returncode < 0:
        import signal as _signal

        try:
            how = f"was killed by {_signal.Signals(-res.returncode).name}"
        except ValueError:
            how = f"was killed by signal {-res.returncode}"
    else:
        how = f"exited with status {status}"
    try:
        rules = res.rules if res.rules is not None else load_rules(rules_dirs)
        report = build_report(res.result, rules, redact=redact)
    except KeyboardInterrupt:
        raise typer.Exit(status)
    errors = [d for d in report["diagnoses"] if d["severity"] == "error"]
    if status == 0:
        if errors:
            d = errors[0]
            print(f"logdoc: the command succeeded, but its output shows [{d['id']}] {d['title']}"
                  f"{' (see ' + save + ')' if save else ''}", file=sys.stderr)
        raise typer.Exit(0)
    sys.stdout.flush()
    print(f"logdoc: {describe_command(cmd)} {how}", file=sys.stderr)
    if res.extra_files:
        print(f"logdoc: also read {count_text(len(res.extra_files), 'file')} it wrote: {', '.join(res.extra_files[:5])}"
              f"{' ...' if len(res.extra_files) > 5 else ''}", file=sys.stderr)
    if report_file:
        with open(report_file, "w", encoding="utf-8") as fh:
            if format == "json":
                fh.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
            elif format == "markdown":
                from ..report.markdown import render

                fh.write(render(report))
            else:
                from rich.console import Console

                from ..report.terminal import print_report

                print_report(report, Console(file=fh, no_color=True, color_system=None, highlight=False, width=100))
        print(f"logdoc: report written to {report_file}", file=sys.stderr)
    else:
        emit_report(report, format, no_color, to_stderr=True)
    report_skips(res.result.stats)
    print(summary_line(res.result.stats), file=sys.stderr)
    raise typer.Exit(status)


@app.command(cls=_Command)
def digest(
    paths: List[str] = typer.Argument(..., metavar="PATH", help=PATHS_HELP),
    output: str = typer.Option(..., "--output", "-o", metavar="FILE", help="Where to write the digest (- for stdout)."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
) -> None:
    """Reduce one node's logs to a small digest that `logdoc explain` reads like the logs.

    For jobs too large to gather: run it where the logs are (a scheduler epilog), copy the
    digests, and explain them together (digests and raw logs can be mixed). The digest keeps the
    events that matter (warnings, errors, init facts, the first and last of the bulk noise), the
    line counts, the file names and per-process state; `logdoc explain` gives the same diagnoses
    on it as on the logs.

    Examples:

    \b
      logdoc digest /var/log/job123/ -o /shared/job123/$(hostname).json
      logdoc explain /shared/job123/*.json
    """
    from .. import digest as _digest
    from ..pipeline import parse_sources
    from ..read.source import expand

    sources = expand(paths, stdin=sys.stdin.buffer)
    with progress_bar(sources, progress) as bar:
        result = parse_sources(sources, jobs=None, progress=bar, reduce=True)
    try:
        size = _digest.write(result, output, inputs=list(paths))
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    report_skips(result.stats)
    print(summary_line(result.stats) + f"; digest: {len(result.events)} events, {size} bytes", file=sys.stderr)


@app.command(cls=_Command)
def redact(
    paths: List[str] = typer.Argument(..., metavar="PATH", help=PATHS_HELP),
    out: Optional[str] = typer.Option(None, "--out", "-o", metavar="DIR",
                                      help="Folder for the copies (the inputs' tree is mirrored there); - or nothing: "
                                           "standard output, for one input."),
    map_file: Optional[str] = typer.Option(None, "--map", metavar="FILE",
                                           help="Also write what was replaced by what (JSON). Keep it to yourself."),
    hosts: List[str] = typer.Option([], "--host", metavar="NAME",
                                    help="A hostname to replace that logdoc does not find in the logs (repeatable)."),
) -> None:
    """Copies of the logs that are safe to share: hostnames, IP and MAC addresses, IB GUIDs, user
    names in paths and e-mail addresses replaced by stable aliases (host-1 is the same host in every
    file); ranks, ports, versions, interface and device names and error texts kept, so `logdoc
    explain` says the same about the copies.

    Examples:

    \b
      logdoc redact logs/ -o shared/
      logdoc redact rank0.log > rank0.redacted.log
      logdoc redact logs/ -o shared/ --map private-key.json
    """
    from ..redact import RedactError, redact_paths

    try:
        r, done = redact_paths(list(paths), out, stdin=sys.stdin.buffer, hosts=hosts)
    except RedactError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {getattr(exc, 'filename', None) or out}: {exc.strerror or exc}")
    if out not in (None, "-"):
        sys.stdout.flush()
    for name, reason in done["skipped"]:
        print(f"logdoc: skipped {name}: {reason}", file=sys.stderr)
    for w in done["warnings"]:
        print(f"logdoc: warning: {w}", file=sys.stderr)
    mapping = r.mapping()
    if map_file:
        try:
            with open(map_file, "w", encoding="utf-8") as fh:
                json.dump(mapping, fh, indent=2, ensure_ascii=False)
        except OSError as exc:
            fail(f"cannot write {map_file}: {exc.strerror or exc}")
    counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(mapping.items()) if k not in ("iid6",))
    where = "standard output" if out in (None, "-") else out
    cut = f", {done['cut_lines']} over-long lines cut at 1 MiB" if done["cut_lines"] else ""
    print(f"logdoc: redacted {done['lines']} lines in {done['files']} file{'s' if done['files'] != 1 else ''} "
          f"to {where}{cut}; replaced: {counts or 'nothing'}", file=sys.stderr)


@app.command(cls=_Command)
def summary(
    paths: List[str] = typer.Argument(..., metavar="PATH", help=PATHS_HELP),
    format: str = typer.Option("terminal", "--format", "-f", metavar="FORMAT", help="terminal or json.",
                               autocompletion=_complete_with("terminal", "json")),
) -> None:
    """The job's anatomy without judging it: ranks, hosts, versions, communicators, transports, env.

    Examples:

    \b
      logdoc summary logs/
      logdoc summary rank*.log --format json | jq .versions
    """
    if format not in ("terminal", "json"):
        fail(f"unknown --format {format!r}: use terminal or json")
    from ..analysis import analyze
    from ..pipeline import parse_paths

    result = parse_paths(paths, stdin=sys.stdin.buffer)
    anatomy = analyze(result.events, files=result.files).anatomy
    if format == "json":
        sys.stdout.write(json.dumps(anatomy, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        from ..report.summary import print_summary

        print_summary(anatomy)
    report_skips(result.stats)
    print(summary_line(result.stats), file=sys.stderr)


rules_app = typer.Typer(no_args_is_help=True, help="The knowledge base: list, show, lint and test rules.\n\n"
                        "Examples:\n\n\b\n  logdoc rules list\n  logdoc rules show LD301\n"
                        "  logdoc rules lint --rules my_rules/")
app.add_typer(rules_app, name="rules")


@rules_app.command("list", cls=_Command)
def rules_list(rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="Add a folder of your own rules.")) -> None:
    """One line per rule: id, category, role, title.

    Examples:

    \b
      logdoc rules list
      logdoc rules list --rules my_rules/ | grep shm
    """
    for r in load_rules(rules_dirs):
        state = " (retired)" if r.retired else ""
        print(f"{r.id}\t{r.category or '-'}\t{r.role or '-'}\t{r.title or ''}{state}")


@rules_app.command("show", cls=_Command)
def rules_show(rule_id: str = typer.Argument(..., metavar="RULE_ID", help="A rule id, e.g. LD301.",
                                             autocompletion=_complete_rule_id),
               rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="Add a folder of your own rules.")) -> None:
    """The whole page of a rule, like `rustc --explain`.

    Examples:

    \b
      logdoc rules show LD301
      logdoc rules show ld701
    """
    from ..report.rulepage import rule_page

    rules = load_rules(rules_dirs)
    rule = rules.get(rule_id.upper())
    if rule is None:
        fail(f"no rule {rule_id}; `logdoc rules list` shows them")
    sys.stdout.write(rule_page(rule))


@rules_app.command("lint", cls=_Command)
def rules_lint(rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="Add a folder of your own rules.")) -> None:
    """Validate every rule; exit 1 on any error.

    Examples:

    \b
      logdoc rules lint
      logdoc rules lint --rules my_rules/
    """
    rules = load_rules(rules_dirs)
    n_err = len(rules.errors)
    print(f"{len(rules.active())} rules, {count_text(n_err, 'error')}, {count_text(len(rules.problems) - n_err, 'warning')}")
    from ..knowledge import lint_summary
    from ..textlint import lint_static, lint_texts, sample_dirs

    for line in lint_summary(rules):
        print(line)
    # the texts as they render: against every match example, and every bundled sample of a checkout
    broken = lint_static(rules) + lint_texts(rules, samples=sample_dirs())
    for line in broken:
        print(f"error: {line}")
    print(f"rendered texts: {count_text(len(broken), 'problem')}")
    if n_err or broken:
        raise typer.Exit(1)


@rules_app.command("test", cls=_Command)
def rules_test(rules_dirs: List[str] = typer.Option([], "--rules", metavar="DIR", help="Add a folder of your own rules.")) -> None:
    """Run every rule's examples (match and no_match); exit 1 on any failure.

    Examples:

    \b
      logdoc rules test
      logdoc rules test --rules my_rules/
    """
    from ..kb import check_examples
    from ..pipeline import parse_sources

    def to_events(sources):
        from ..analysis import analyze

        res = parse_sources(sources)
        a = analyze(res.events, files=res.files)
        return list(a.events) + list(a.synthetic)

    def to_report(sources):
        from ..api import build_report

        return build_report(parse_sources(sources), rules)

    rules = load_rules(rules_dirs)
    failures = check_examples(rules, to_events, to_report=to_report)
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(rules.active())} rules, {count_text(len(failures), 'failing example')}")
    if failures:
        raise typer.Exit(1)


web_app = typer.Typer(no_args_is_help=True, help="The static web page: paste a log, get the diagnosis, computed in the browser.\n\n"
                      "Examples:\n\n\b\n  logdoc web build --out site/\n  logdoc web serve site/")
app.add_typer(web_app, name="web")


@web_app.command("build", cls=_Command)
def web_build(out: str = typer.Option(..., "--out", metavar="DIR", help="Folder to write the site into."),
              cache: Optional[str] = typer.Option(None, "--cache", metavar="DIR", help="Download cache (default: $LOGDOC_WEB_CACHE, else .cache/web in a checkout, else ~/.cache/logdoc/web).")) -> None:
    """Write the static site (page, Pyodide runtime, wheels, kb.json).

    Examples:

    \b
      logdoc web build --out site/
      logdoc web build --out site/ --cache /tmp/logdoc-web-cache
    """
    from ..web.build import BuildError, build_site

    try:
        sizes = build_site(out, cache_dir=cache)
    except BuildError as exc:
        _web_fail(exc)
    print(json.dumps(sizes, indent=2, default=str))


def _web_fail(exc: Exception) -> None:
    """A BuildError as one line (exit 2); a failing tool's own output, if any, goes before it."""
    first, _, details = str(exc).partition("\n")
    if details.strip():
        print(details.rstrip(), file=sys.stderr)
    fail(first)


@web_app.command("serve", cls=_Command)
def web_serve(directory: str = typer.Argument(..., metavar="DIR", help="The built site."),
              port: int = typer.Option(8000, "--port", metavar="PORT", help="Port on 127.0.0.1.")) -> None:
    """Serve a built site on 127.0.0.1 (file:// cannot load Pyodide).

    Examples:

    \b
      logdoc web serve site/
      logdoc web serve site/ --port 8080
    """
    from ..web.build import BuildError, serve

    try:
        serve(directory, port=port)
    except BuildError as exc:
        _web_fail(exc)

