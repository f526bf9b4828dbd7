"""The picture of the failure: one row per rank (or rankless process), time across.

:func:`timeline_section` builds the report's compact ``timeline`` section from an analysis (it runs
in the core, in the browser too: standard library only). :func:`text_timeline` draws it as text for
Markdown (a code block that renders on any code host); the page draws the same section as inline
SVG (``logdoc/web/static/app.js``).

The section::

    {"axis": "time" | "order",      # seconds since the first stamp, or the order of the events
     "span": seconds | None, "start": iso | None, "end": iso | None,
     "first": {"row": i, "file", "line", "text", "x"} | None,      # the first failure
     "rows": [{"label": "rank 3", "host": "h1", "ranks": [3],
               "from": x, "to": x,                                  # its first and last event
               "state": "completed 182 and never enqueued 183" | None,  # from job.progress
               "behind": bool,                                       # stopped before the others
               "marks": [{"x", "nature": "root"|"neutral"|"symptom", "file", "line", "text",
                          "first": bool}]}]}

``x`` is seconds since ``start`` on a time axis; without usable times it is the mark's index in
its own row (torchrun attempts in their order, then file order), since nothing orders the rows
against each other. A job with more than :data:`MAX_ROWS` ranks has its ranks with the same story (state, and
the natures of their marks) merged into one row ``ranks 8-63``.
"""
from __future__ import annotations

from typing import Any

from ..lazyre import lazy_re

MAX_ROWS = 24
MAX_MARKS = 8
_SEQ = lazy_re(r"SeqNum (\d+)")


def _behind(state: str, seq: Any) -> bool:
    if "never enqueued" in state:
        return True
    m = _SEQ.search(state)
    return bool(m and isinstance(seq, int) and int(m.group(1)) < seq)


def _short(text: str, n: int = 110) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    if len(line) <= n:
        return line
    cut = line[:n].rsplit(" ", 1)[0]
    return (cut if len(cut) > n // 2 else line[:n]) + "…"


class _Mark:
    """A mark of a row while the rows are chosen and merged: its line's words are read only for the
    marks drawn (a job of thousands of ranks merges most of its rows away)."""

    __slots__ = ("x", "nature", "ev", "first")

    def __init__(self, x, nature, ev, first) -> None:
        self.x, self.nature, self.ev, self.first = x, nature, ev, first

    def __getitem__(self, name: str):
        return getattr(self, name)

    def drawn(self, headline) -> dict[str, Any]:
        ev = self.ev
        return {"x": self.x, "nature": self.nature, "file": ev.file, "line": ev.line, "text": _short(headline(ev)),
                "first": self.first}


def timeline_section(analysis) -> dict[str, Any] | None:
    """The ``timeline`` section of the report, or None when no failure-like event was seen."""
    from ..analysis.cascade import NATURE, headline, is_failure, nature as _nature

    tl = analysis.timeline
    events = analysis.events
    failures = [e for e in events if is_failure(e)]
    if not failures:
        return None
    key = tl.key  # the timeline's key of an event drawn (asked again, not held for every failure of the job)
    ff = analysis.first_failure(failures)
    first_ev = ff.event if ff else None
    axis = "time" if all(key(e)[0] == 0 for e in failures) else "order"
    run = tl.runs(events)  # per event, its second in the timeline's order (None: no time known)
    start = min((o for o in run if o is not None), default=None) if axis == "time" else None

    def x_of(ev) -> int | None:
        if axis != "time" or start is None:
            return None  # without usable times only the order inside one row is known: set below
        k = key(ev)
        return k[1] - start if k[0] == 0 else None

    def new_row(label, host, ranks):
        return {"label": label, "host": host, "ranks": ranks, "from": None, "to": None, "state": None,
                "behind": False, "marks": [], "_evs": []}

    # rows: ranks, then rankless processes that failed (a launcher, a pid of its own)
    rows: dict[Any, dict[str, Any]] = {}
    anatomy_ranks = {r.get("rank"): r for r in analysis.anatomy.get("ranks") or [] if isinstance(r, dict)}
    for r in sorted(x for x in anatomy_ranks if isinstance(x, int)):
        rows[("r", r)] = new_row(f"rank {r}", anatomy_ranks[r].get("host"), [r])

    def row_for(ev):
        if ev.rank is not None:
            return rows.setdefault(("r", ev.rank), new_row(f"rank {ev.rank}", ev.host, [ev.rank]))
        who = f"pid {ev.pid}" if ev.pid is not None else ev.file.replace("\\", "/").rsplit("/", 1)[-1]
        label = f"{who} (no rank)" if ev.host is None else f"{who} on {ev.host}"
        return rows.setdefault(("p", label), new_row(label, ev.host, []))

    if axis == "time" and start is not None:  # the stretch of output seen, per rank
        for ev, o in zip(events, run):
            if o is None or ev.rank is None:
                continue
            row = rows.get(("r", ev.rank))
            if row is None:
                continue
            x = o - start
            row["from"] = x if row["from"] is None else min(row["from"], x)
            row["to"] = x if row["to"] is None else max(row["to"], x)
    # failure lines per row: torchrun attempts in their order, then the timeline's order
    at = tl.place  # (one number a failure for the sort: its place in the timeline's order, as its key orders it)
    for ev in sorted(failures, key=lambda e: ((e.attempt or 0) << 32) + at(e)):
        if ev.rank is None and ev.kind == "torchrun.child_failed" and ev is not first_ev:
            continue  # the launcher's summary repeats what the ranks said
        row_for(ev)["_evs"].append(ev)
    for row in rows.values():
        evs = row.pop("_evs")
        if not evs:
            continue
        # only the first lines of a row, its last, and the first failure are drawn (and classified)
        keep = evs[:2 * MAX_MARKS] + [e for e in evs[2 * MAX_MARKS:] if e is first_ev] + (
            evs[-1:] if len(evs) > 2 * MAX_MARKS else [])
        position = {id(e): i for i, e in enumerate(evs)}
        marks = []
        for ev in keep:
            x = x_of(ev) if axis == "time" else position[id(ev)]
            marks.append(_Mark(x, NATURE[_nature(ev)], ev, ev is first_ev))
        if axis != "time":
            row["from"], row["to"] = 0, len(evs) - 1
        elif not row["ranks"]:
            xs = [m["x"] for m in marks if m["x"] is not None]
            row["from"], row["to"] = (min(xs), max(xs)) if xs else (None, None)
        if len(marks) > MAX_MARKS:
            chosen = [m for m in marks if m["first"]]
            seen = {m["nature"] for m in chosen}
            for m in marks:  # the first of each nature, then the earliest
                if m["nature"] not in seen:
                    seen.add(m["nature"])
                    chosen.append(m)
            for m in marks:
                if len(chosen) >= MAX_MARKS:
                    break
                if not any(m is c for c in chosen):
                    chosen.append(m)
            marks = sorted(chosen, key=lambda m: (m["x"] is None, m["x"] or 0))
        if len(evs) > len(marks):
            row["more"] = len(evs) - len(marks)
        row["marks"] = marks
    # where each rank stands in the failed collective (job.progress), and who is behind
    for table in (analysis.anatomy.get("progress") or {}).values():
        if not isinstance(table, dict):
            continue
        for prow in table.get("rows") or ():
            for r in prow.get("ranks") or ():
                row = rows.get(("r", r))
                if row is None or row["state"]:
                    continue
                row["state"] = str(prow.get("state") or "") or None
                row["behind"] = bool(row["state"]) and _behind(row["state"], table.get("seq"))
    # a rankless process that only echoed the consequence (an uncaught-exception banner, say) adds nothing
    out_rows = [row for key, row in rows.items()
                if (row["marks"] or row["state"] or row["from"] is not None)
                and not (key[0] == "p" and all(m["nature"] == "symptom" and not m["first"] for m in row["marks"]))]
    if len(out_rows) > MAX_ROWS:
        out_rows = _merge(out_rows)
    for row in out_rows:  # the marks drawn, with their lines' words (not those of the rows merged away)
        row["marks"] = [m.drawn(headline) for m in row["marks"]]
    first = None
    for i, row in enumerate(out_rows):
        for m in row["marks"]:
            if m["first"]:
                first = {"row": i, "file": m["file"], "line": m["line"], "text": m["text"], "x": m["x"]}
                break
        if first:
            break
    xs = [v for row in out_rows for v in (row["from"], row["to"]) if v is not None]
    xs += [m["x"] for row in out_rows for m in row["marks"] if m["x"] is not None]
    span = max(xs) if xs else None
    return {
        "axis": axis,
        "span": span,
        "start": tl.iso_seconds(start) if axis == "time" and start is not None else None,
        "end": tl.iso_seconds(start + span) if axis == "time" and start is not None and span is not None else None,
        "first": first,
        "rows": out_rows,
    }


def _merge(rows: list[dict]) -> list[dict]:
    """Consecutive rank rows that tell the same story become one row (a first failure stays alone)."""
    def story(row):
        if not row["ranks"] or any(m["first"] for m in row["marks"]):
            return None
        return (row["state"], row["behind"], tuple(m["nature"] for m in row["marks"][:3]))

    out: list[dict] = []
    for row in rows:
        prev = out[-1] if out else None
        if prev is not None and story(row) is not None and story(prev) == story(row) \
                and prev["ranks"][-1] + 1 == row["ranks"][0]:
            prev["ranks"] = prev["ranks"] + row["ranks"]
            prev["label"] = f"ranks {prev['ranks'][0]}-{prev['ranks'][-1]}"
            if prev.get("host") != row.get("host"):
                prev["host"] = None
            for k, fn in (("from", min), ("to", max)):
                vals = [v for v in (prev[k], row[k]) if v is not None]
                prev[k] = fn(vals) if vals else None
            continue
        out.append(dict(row))
    return out


def _fmt_x(x: int | None, axis: str) -> str:
    if x is None:
        return "?"
    if axis != "time":
        return f"#{x + 1}"
    if x < 60:
        return f"+{x}s"
    if x < 3600:
        return f"+{x // 60}m{x % 60:02d}s"
    return f"+{x // 3600}h{x % 3600 // 60:02d}m"


SYMBOL = {"root": "X", "neutral": "!", "symptom": "x"}


def text_timeline(section: dict[str, Any] | None, width: int = 48) -> list[str]:
    """The section as monospace lines: ``rank 3 |----X        | completed 182 ...``."""
    if not section or not section.get("rows"):
        return []
    rows = section["rows"]
    axis = section["axis"]
    span = section.get("span") or 0
    label_w = min(24, max(len(_label(r)) for r in rows))

    def col(x):
        if x is None:
            return None
        return 0 if span <= 0 else min(width - 1, round(x * (width - 1) / span))

    lines = []
    for row in rows:
        cells = [" "] * width
        a, b = col(row.get("from")), col(row.get("to"))
        if a is not None and b is not None:
            for i in range(a, b + 1):
                cells[i] = "-"
        for m in row["marks"]:
            c = col(m["x"])
            if c is None:
                continue
            sym = "@" if m["first"] else SYMBOL.get(m["nature"], "!")
            if cells[c] != "@":
                cells[c] = sym
        tail = row.get("state") or ""
        if row.get("behind"):
            tail = "BEHIND: " + tail
        if row.get("more"):
            tail += f" (+{row['more']} more)"
        lines.append(f"{_label(row)[:label_w].ljust(label_w)} |{''.join(cells)}| {tail}".rstrip())
    ruler_end = _fmt_x(span, axis)
    ruler = f"{' ' * label_w}  {'+0s' if axis == 'time' else '#1'}".ljust(label_w + 2 + width - len(ruler_end)) + ruler_end
    head = (f"time from {section['start']} ({_fmt_x(span, axis)} across)" if axis == "time" and section.get("start")
            else "the failure lines of each row in their order (the logs print no usable time, "
                 "so rows are not aligned in time)")
    legend = "@ first failure   X root cause   ! error   x consequence   - output seen"
    out = [head, ruler, *lines, legend]
    if section.get("first"):
        f = section["first"]
        out.append(f"first failure: {rows[f['row']]['label']}, {f['file']}:{f['line']}: {f['text']}")
    return out


def _label(row: dict) -> str:
    host = row.get("host")
    return f"{row['label']} {host}" if host and row["ranks"] else row["label"]
