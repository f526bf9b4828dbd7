"""``logdoc summary`` for people: the job's anatomy in the terminal, with rich.

The input is the anatomy dict of :func:`logdoc.analysis.analyze` (what ``logdoc summary
--format json`` prints). Sections, each only when the logs said something about it: the job
(world size, ranks x hosts, time span, restarts), what the ranks disagree on (first, since it is
the point), hosts (ranks, pids, GPUs by bus id), versions, communicators (members, init,
failure), where each group's ranks stand (SeqNum / op), transports and interfaces by host, the
NCCL/torch environment, and the files read.
"""
from __future__ import annotations

import io
import os
from typing import Any, Iterable

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..analysis.common import ranks_text


def _ranks(values: Iterable[Any]) -> str:
    vals = list(values)
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return ranks_text(vals)
    return ", ".join(map(str, vals))


def _bare(values: Iterable[Any]) -> str:
    vals = list(values)
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return ranks_text(vals, word=False)
    return ", ".join(map(str, vals))


def _table(title: str, *cols: str) -> Table:
    t = Table(title=title, title_justify="left", title_style="bold", header_style="bold dim",
              show_edge=False, box=None, pad_edge=False, padding=(0, 2, 0, 0))
    for c in cols:
        t.add_column(c, overflow="fold")
    return t


def _job(a: dict) -> list[Text]:
    ranks = a.get("ranks") or []
    hosts = a.get("hosts") or []
    ws = a.get("world_size")
    head = Text("Job: ", style="bold")
    seen = f"{len(ranks)} rank{'s' if len(ranks) != 1 else ''} seen"
    if ws and ws != len(ranks):
        head.append(f"world size {ws}, {seen}")
    elif ranks:
        head.append(f"{len(ranks)} rank{'s' if len(ranks) != 1 else ''}")
    else:
        head.append("no rank named in the logs")
    if hosts:
        per = {h: len((a.get("by_host") or {}).get(h, {}).get("ranks") or []) for h in hosts}
        shape = ""
        if ranks and len(set(per.values())) == 1 and next(iter(per.values())):
            shape = f" ({len(hosts)} x {next(iter(per.values()))})"
        head.append(f" on {len(hosts)} host{'s' if len(hosts) != 1 else ''}{shape}")
    out = [head]
    span = a.get("time_span") or {}
    if span.get("start"):
        t = Text("Time: ", style="bold")
        start, end = str(span["start"]), str(span.get("end") or "")
        t.append(f"{start} to {end}" if end and end != start else start)
        if span.get("seconds") is not None:
            t.append(f" ({_duration(span['seconds'])})")
        if span.get("year_borrowed"):
            t.append("; the logs print no year", style="dim")
        out.append(t)
    missing = a.get("ranks_without_output") or []
    if missing:
        out.append(Text.assemble(("No output from: ", "bold yellow"), _ranks(missing)))
    attempts = a.get("attempts") or []
    if len(attempts) > 1:
        out.append(Text.assemble(("Restarts: ", "bold"), f"{len(attempts)} attempts of the worker group "
                                 f"(torchrun), {len(attempts) - 1} restart{'s' if len(attempts) > 2 else ''}"))
    return out


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _agreement(a: dict) -> list[Any]:
    agree = [x for x in a.get("agreement") or () if isinstance(x, dict)]
    differ = [x for x in agree if not x.get("agree")]
    same = [x for x in agree if x.get("agree")]
    out: list[Any] = []
    if differ:
        t = _table("The ranks disagree on", "what", "value", "ranks / hosts")
        for x in differ:
            first = True
            for value, who in (x.get("values") or {}).items():
                t.add_row(Text(str(x.get("aspect", "?")), style="bold red") if first else "",
                          str(value), _bare(who))
                first = False
        out.append(t)
    if same and len(a.get("ranks") or ()) != 1:
        names = ", ".join(f"{x.get('aspect')} {next(iter(x.get('values') or {'?': 0}))}" for x in same)
        out.append(Text.assemble(("All ranks agree on: ", "bold green"), names))
    return out


def _hosts(a: dict) -> Table | None:
    by_host = a.get("by_host") or {}
    if not by_host:
        return None
    t = _table("Hosts", "host", "ranks", "pids", "GPUs (bus id)")
    for host, info in by_host.items():
        t.add_row(str(host), _bare(info.get("ranks") or []), ", ".join(map(str, info.get("pids") or [])),
                  ", ".join(map(str, info.get("bus_ids") or [])))
    return t


def _versions(a: dict) -> Table | None:
    versions = a.get("versions") or {}
    if not versions:
        return None
    t = _table("Versions", "component", "version", "ranks", "hosts")
    for comp, vals in versions.items():
        if not isinstance(vals, dict):
            t.add_row(str(comp), str(vals), "", "")
            continue
        many = len(vals) > 1
        for v, who in vals.items():
            who = who if isinstance(who, dict) else {}
            ranks = _bare(who.get("ranks") or []) or ", ".join(
                "process in " + os.path.basename(str(p)) for p in who.get("processes") or [])
            t.add_row(Text(str(comp), style="bold red" if many else ""), str(v), ranks,
                      ", ".join(who.get("hosts") or []))
    return t


def _communicators(a: dict) -> Table | None:
    comms = [c for c in a.get("communicators") or () if isinstance(c, dict)]
    if not comms:
        return None
    t = _table("Communicators", "group", "size", "members", "hosts", "init", "state")
    for c in comms:
        init = c.get("init") or {}
        init_s = f"{init.get('complete', 0)}/{init.get('started', 0)} done" if init else ""
        if c.get("failed"):
            f = c.get("failure") or {}
            what = "failed"
            if f.get("seq") is not None:
                what += f" at SeqNum {f['seq']}"
            if f.get("op_types"):
                what += " " + "/".join(f["op_types"])
            if f.get("ranks"):
                what += f" ({_ranks(f['ranks'])})"
            state = Text(what, style="bold red")
        else:
            state = Text("no failure seen", style="dim")
        t.add_row(str(c.get("id", "?")), str(c.get("size") or ""), _bare(c.get("members") or []),
                  ", ".join(c.get("hosts") or []), init_s, state)
    return t


def _progress(a: dict) -> Table | None:
    progress = a.get("progress") or {}
    rows = [(pg, r) for pg, p in progress.items() if isinstance(p, dict) for r in p.get("rows") or ()]
    if not rows:
        return None
    t = _table("Where the ranks stand", "group", "ranks", "state")
    for pg, r in rows:
        p = progress[pg]
        name = f"PG {p.get('pg', pg)}" + (f" ({p['pg_desc']})" if p.get("pg_desc") else "")
        state = str(r.get("state", ""))
        style = "bold red" if "failed" in state else ("yellow" if "no progress" in state or "behind" in state
                                                       else "")
        t.add_row(name, _bare(r.get("ranks") or []), Text(state, style=style))
    return t


def _transports(a: dict) -> Table | None:
    tr = a.get("transports") or {}
    ifs = a.get("interfaces") or {}
    hosts = list(dict.fromkeys([*tr, *ifs]))
    if not hosts:
        return None
    t = _table("Transports", "host", "network", "channels", "GPUDirect", "devices", "interfaces")
    for h in hosts:
        x = tr.get(h) or {}
        chans = x.get("transports") or {}
        kinds: dict[str, int] = {}
        for name, n in chans.items():
            key = "/".join(str(name).split("/")[:2])
            kinds[key] = kinds.get(key, 0) + (n if isinstance(n, int) else 1)
        gdr = x.get("gdr") or []
        gdr_s = "yes" if any(gdr) else ("no" if gdr else "")
        iface = ifs.get(h) or {}
        names = {f"{k}={v}" for part in iface.values() if isinstance(part, dict) for k, v in part.items()}
        t.add_row(str(h), ", ".join(x.get("network") or []),
                  ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items())), gdr_s,
                  ", ".join(x.get("ib_devices") or []), ", ".join(sorted(names)))
    return t


def _env(a: dict) -> Table | None:
    env = a.get("env") or {}
    if not env:
        return None
    t = _table("Environment", "variable", "value", "ranks")
    for var, vals in sorted(env.items()):
        many = isinstance(vals, dict) and len(vals) > 1
        for v, who in (vals.items() if isinstance(vals, dict) else [(vals, [])]):
            t.add_row(Text(str(var), style="bold red" if many else ""), str(v), _bare(who or []))
    return t


def _files(a: dict) -> Table | None:
    files = a.get("files") or []
    if not files:
        return None
    names = [str(f.get("file", "?")) for f in files]
    base = ""
    if len(names) > 1:
        try:
            base = os.path.commonpath(names)
        except ValueError:
            base = ""
        if base in names:
            base = os.path.dirname(base)
    t = _table(f"Files (in {base}{os.sep})" if base else "Files", "file", "ranks", "events")
    quiet = 0
    for name, f in zip(names, files):
        if not f.get("events") and not f.get("ranks") and len(files) > 3:
            quiet += 1
            continue
        t.add_row(os.path.relpath(name, base) if base else name, _bare(f.get("ranks") or []),
                  str(f.get("events", "")))
    if quiet:
        t.add_row(Text(f"and {quiet} file{'s' if quiet != 1 else ''} with no event", style="dim"), "", "")
    return t


def renderable(anatomy: dict[str, Any]) -> Group:
    """The anatomy as one rich renderable (sections separated by a blank line)."""
    parts: list[Any] = [*_job(anatomy)]
    for section in (_agreement(anatomy), [_progress(anatomy)], [_hosts(anatomy)], [_versions(anatomy)],
                    [_communicators(anatomy)], [_transports(anatomy)], [_env(anatomy)], [_files(anatomy)]):
        items = [s for s in section if s is not None]
        if items:
            parts.append(Text(""))
            parts.extend(items)
    return Group(*parts)


def print_summary(anatomy: dict[str, Any], console: Console | None = None) -> None:
    (console or Console()).print(renderable(anatomy))


def render_text(anatomy: dict[str, Any], width: int = 100) -> str:
    """Plain text (no colour) at ``width`` columns, e.g. for tests or a file."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False, highlight=False)
    console.print(renderable(anatomy))
    return buf.getvalue()
