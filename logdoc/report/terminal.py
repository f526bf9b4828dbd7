"""Terminal output with rich: the event table and the diagnosis report."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


def print_event_table(events, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(show_lines=False, header_style="bold")
    for col in ("where", "rank", "host", "level", "kind", "template", "text"):
        table.add_column(col, overflow="fold")
    for ev in events:
        table.add_row(
            f"{ev.file}:{ev.line}",
            "" if ev.rank is None else str(ev.rank),
            ev.host or "",
            ev.level,
            ev.kind,
            ev.template or "",
            ev.text.splitlines()[0][:160] if ev.text else "",
        )
    console.print(table)
