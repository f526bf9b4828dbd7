"""Terminal output with rich: the event table and the diagnosis report."""
from __future__ import annotations

from rich.console import Console


TEXT_MIN = 40  # the narrowest text column worth a table; below it, one record per block


def _row(ev) -> tuple[str, ...]:
    return (f"{ev.file}:{ev.line}", "" if ev.rank is None else str(ev.rank), ev.host or "", ev.level, ev.kind,
            ev.text.splitlines()[0] if ev.text else "")


def print_event_table(events, console: Console | None = None) -> None:
    """The events as a table that fits the terminal: where, rank, host, level, kind and the text cut
    at a word boundary (``…``); when the columns leave less than ``TEXT_MIN`` characters for the text,
    one record per block instead (``where  rank R  host H  LEVEL  kind`` then the text, indented)."""
    from rich.table import Table  # (the report has none: imported by the event table only)
    from rich.text import Text

    from ..shorten import shorten

    console = console or Console()
    rows = [_row(ev) for ev in events]
    names = ("where", "rank", "host", "level", "kind")
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    used = sum(widths) + 3 * len(widths) + 4  # rich's padding and borders
    text_width = console.width - used
    if text_width >= TEXT_MIN:
        table = Table(show_lines=False, header_style="bold")
        for n in names:
            table.add_column(n, no_wrap=True)
        table.add_column("text", no_wrap=True, max_width=text_width)
        for r in rows:
            table.add_row(*r[:5], Text(shorten(r[5], text_width)))
        console.print(table)
        return
    indent = "  "
    for r in rows:
        head = "  ".join(x for x in (r[0], f"rank {r[1]}" if r[1] else "", f"host {r[2]}" if r[2] else "", r[3], r[4]) if x)
        console.print(Text(shorten(head, console.width), style="bold"))
        console.print(Text(indent + shorten(r[5], max(console.width - len(indent), 20))))


def _highlight(text: str, span):
    from rich.text import Text

    from ..shorten import shorten

    line = text.splitlines()[0] if text else ""
    t = Text(shorten(line, 400))
    if span and span[0] < len(line):
        t.stylize("bold red", span[0], min(span[1], len(line)))
    return t


def print_report(report: dict, console: Console | None = None) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from ..kb import human_times
    from ..shorten import shorten
    from ..analysis.ranges import count_text, hosts_text
    from .markdown import _ranks, header_lines

    console = console or Console()
    for line in header_lines(report):
        console.print(line, style="dim", markup=False, highlight=False)
    console.print()
    diags = report.get("diagnoses") or []
    stats = report.get("stats") or {}
    if not diags and not stats.get("lines_read") and stats.get("files", 1):
        console.print("The input is empty: there are no log lines to explain.", style="bold")
        console.print("Give logdoc the output of the job (stdout and stderr of every rank), e.g. "
                      "`torchrun ... 2>&1 | logdoc explain -`.", markup=False)
    elif not diags:
        console.print("No known failure signature matched.", style="bold")
        for u in (report.get("unrecognized") or [])[:20]:
            console.print(f"  {u['file']}:{u['line']}: {shorten(u['text'].splitlines()[0], 200)}", markup=False, highlight=False)
        console.print("Collect next: rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV and "
                      "TORCH_DISTRIBUTED_DEBUG=DETAIL, and give logdoc the logs of every rank.", markup=False)
    for i, d in enumerate(diags, 1):
        color = {"error": "red", "warning": "yellow"}.get(d["severity"], "blue")
        where = _ranks(d.get("ranks") or []) + (" on " + hosts_text(d["hosts"]) if d.get("hosts") else "")
        body = Text()
        body.append(f"{d['id']} · {d['category']} · {d['severity']} · {d['role'].replace('_', ' ')} · "
                    f"confidence {d['confidence']:.0%}\n", style="dim")
        body.append("origin: ", style="bold")
        body.append(where + "\n")
        if d.get("finding"):
            body.append("finding: ", style="bold")
            body.append(human_times(d["finding"]) + "\n")
        body.append("\n")
        body.append("Evidence\n", style="bold")
        for e in d.get("evidence") or []:
            body.append(f"  {e['file']}:{e['line']}  ", style="cyan")
            body.append_text(_highlight(e["text"], e.get("highlight")))
            body.append("\n")
        body.append("\n" + d.get("explanation", "") + "\n")
        if d.get("fix"):
            body.append("\nFix\n", style="bold")
            for n, s in enumerate(d["fix"], 1):
                body.append(f"  {n}. {s}\n")
        if d.get("differential"):
            body.append("\nDifferential (most likely first)\n", style="bold")
            for n, c in enumerate(d["differential"], 1):
                body.append(f"  {n}. {c['category']}: {c.get('cause') or ''}\n")
                for x in c.get("for") or []:
                    body.append(f"     + {x}\n", style="green")
                for x in c.get("against") or []:
                    body.append(f"     - {x}\n", style="red")
                body.append(f"     check: {c['check']}\n", style="dim")
        elif d.get("confirm"):
            body.append("\nConfirm\n", style="bold")
            for s in d["confirm"]:
                body.append(f"  • {s}\n")
        if d.get("not_when"):
            body.append("\nNot the cause when\n", style="bold")
            for s in d["not_when"]:
                body.append(f"  • {s}\n")
        same = [s for s in d.get("symptoms") or () if s.get("same_cause") and not s.get("alternative")]
        other = [s for s in d.get("symptoms") or () if s.get("alternative")]
        after = [s for s in d.get("symptoms") or () if not s.get("same_cause")]
        if same:  # other rules that describe this very failure (logdoc/cards.py)
            body.append("\nThe same failure, as other messages show it\n", style="bold")
            for s in same:
                body.append(f"  = {s['id']} {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})\n", style="dim")
        if other:  # rules that read the same lines as another cause (logdoc/cards.py)
            body.append("\nAnother reading of the same lines (check which one holds)\n", style="bold")
            for s in other:
                body.append(f"  ? {s['id']} {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})\n", style="dim")
        if after:
            total = sorted({r for s in after for r in s.get("ranks") or []})
            body.append(f"\nConsequences ({_ranks(total)} reported them)\n", style="bold")
            for s in after:
                body.append(f"  ↳ {s['id']} {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})\n", style="dim")
        if d.get("docs"):
            body.append("\nDocs\n", style="bold")
            for x in d["docs"]:
                body.append(f"  {x['title']}: {x['url']}\n")
        title = Text(f"[{i}] {d['title']}")  # log text: never read as markup
        console.print(Panel(body, title=title, title_align="left", border_style=color))
    notes = report.get("notes") or []
    if notes:
        console.print("Notes", style="bold")
        for n in notes:
            console.print(f"  {n['id']} {n['title']} ({_ranks(n.get('ranks') or [])})", markup=False, highlight=False)
