"""The report as Markdown, for pasting into an issue or a chat."""
from __future__ import annotations

from typing import Any

from ..analysis.ranges import count_text, hosts_text, ranks_text
from .picture import text_timeline


def _ranks(ranks: list) -> str:
    """A diagnosis's ranks in words (``ranks 0-6, 8 and 9``), also from a compact report's runs
    (``"0-719"``); ``rank unknown`` when none is known."""
    expanded: list[int] = []
    for r in ranks or ():
        if isinstance(r, int):
            expanded.append(r)
        elif isinstance(r, str) and "-" in r:
            a, _, b = r.partition("-")
            if a.isdigit() and b.isdigit():
                expanded.extend(range(int(a), int(b) + 1))
    return ranks_text(expanded) if expanded else "rank unknown"


def header_lines(report: dict[str, Any]) -> list[str]:
    job = report.get("job") or {}
    stats = report.get("stats") or {}
    out = [f"Read {count_text(stats.get('lines_read', 0), 'line')} in {count_text(stats.get('files', 0), 'file')}: "
           f"{count_text(stats.get('events', 0), 'event')}, {count_text(stats.get('not_understood', 0), 'relevant line')} "
           "not understood."]
    ranks = job.get("ranks") or []
    hosts = job.get("hosts") or []
    n = job.get("world_size") or len(ranks)
    if n or hosts:
        line = f"Job: {count_text(n, 'rank')}" if n else "Job:"
        if hosts:
            line += f" on {count_text(len(hosts), 'host')} ({', '.join(map(str, hosts[:8]))}{', ...' if len(hosts) > 8 else ''})"
        out.append(line + ".")
    versions = job.get("versions") or {}
    if versions:
        parts = []
        for comp, vals in versions.items():
            if isinstance(vals, dict):
                parts.append(f"{comp} " + ", ".join(sorted(vals)))
            elif isinstance(vals, (list, tuple)):
                parts.append(f"{comp} " + ", ".join(map(str, vals)))
            elif vals:
                parts.append(f"{comp} {vals}")
        if parts:
            out.append("Versions: " + "; ".join(parts) + ".")
    nets = sorted({n for t in (job.get("transports") or {}).values() if isinstance(t, dict) for n in t.get("network") or ()})
    if nets:
        out.append("Network: " + ", ".join(nets) + ".")
    comms = [c for c in job.get("communicators") or () if isinstance(c, dict)]
    failed = [c for c in comms if c.get("failed")]
    if failed:
        descr = []
        for c in failed:
            f = c.get("failure") or {}
            what = f" at SeqNum {f['seq']}" if f.get("seq") is not None else ""
            if f.get("op_types"):
                what += " " + "/".join(f["op_types"])
            descr.append(f"{c['id']}{what}")
        ok = [c["id"] for c in comms if not c.get("failed") and (c.get("init") or {}).get("complete")]
        line = "Failed on communicator " + "; ".join(descr)
        if ok:
            line += f" (while {', '.join(ok)} initialised and worked)"
        out.append(line + ".")
    agree = [a for a in job.get("agreement") or () if isinstance(a, dict)]
    same = [_agreed(a) for a in agree if a.get("agree")]
    differ = [_differing(a) for a in agree if not a.get("agree")]
    if differ:
        out.append("Ranks disagree on: " + "; ".join(differ) + ".")
    if same and len(job.get("ranks") or ()) > 1:
        out.append("Ranks agree on: " + ", ".join(same) + ".")
    return out


def _agreed(a: dict) -> str:
    value = next(iter(a.get("values") or {"?": []}))
    name = a.get("aspect", "?")
    return f"{name}={value}" if name.isupper() or name.startswith("NCCL_") else f"{name} {value}"


def _differing(a: dict) -> str:
    vals = a.get("values") or {}
    return f"{a.get('aspect', '?')} (" + ", ".join(f"{v}: {_ranks(list(r)) if all(isinstance(x, int) for x in r) else ', '.join(map(str, r))}"
                                                for v, r in vals.items()) + ")"


def _in_line_order(evidence: list[dict], files: list[str]) -> list[dict]:
    """Evidence in the order of the input: by file (as the report lists them), then line."""
    index = {f: i for i, f in enumerate(files)}
    return sorted(evidence, key=lambda e: (index.get(e.get("file"), len(index)), str(e.get("file")),
                                           e.get("line") or 0))


def render(report: dict[str, Any]) -> str:
    lines = ["# logdoc report", ""]
    lines += header_lines(report)
    lines.append("")
    picture = text_timeline(report.get("timeline"))
    if picture and len((report.get("timeline") or {}).get("rows") or ()) > 1:
        lines += ["## The failure, rank by rank", "", "```text", *picture, "```", ""]
    diags = report.get("diagnoses") or []
    if not diags:
        lines.append("**No known failure signature matched.**")
        unrec = report.get("unrecognized") or []
        if unrec:
            lines += ["", "Relevant lines that were not understood:", "", "```"]
            lines += [f"{u['file']}:{u['line']}: {u['text'].splitlines()[0][:200]}" for u in unrec[:20]]
            lines.append("```")
        lines += ["", "Collect next: rerun with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV` and "
                  "`TORCH_DISTRIBUTED_DEBUG=DETAIL`, and give logdoc the logs of every rank."]
    for i, d in enumerate(diags, 1):
        where = _ranks(d.get("ranks") or [])
        if d.get("hosts"):
            where += " on " + hosts_text(d["hosts"])
        lines += [f"## {i}. {d['title']}", "",
                  f"`{d['id']}` · {d['category']} · {d['severity']} · {d['role'].replace('_', ' ')} · "
                  f"confidence {d['confidence']:.0%} · origin: {where}", ""]
        if d.get("finding"):
            lines += [f"Finding: {d['finding']}", ""]
        lines += ["Evidence:", "", "```"]
        for e in _in_line_order(d.get("evidence") or [], report.get("files") or []):
            lines.append(f"{e['file']}:{e['line']}: {e['text'].splitlines()[0][:300]}")
        lines += ["```", "", d.get("explanation", ""), ""]
        if d.get("fix"):
            lines.append("Fix:")
            lines += [f"{n}. {s}" for n, s in enumerate(d["fix"], 1)]
            lines.append("")
        if d.get("differential"):
            lines.append("Differential (most likely first; + speaks for, - against):")
            for n, c in enumerate(d["differential"], 1):
                lines.append(f"{n}. **{c['category']}**: {c.get('cause') or ''}")
                lines += [f"   - + {x}" for x in c.get("for") or []]
                lines += [f"   - - {x}" for x in c.get("against") or []]
                lines.append(f"   - check: `{c['check']}`")
            lines.append("")
        elif d.get("confirm"):
            lines.append("Confirm:")
            lines += [f"- {s}" for s in d["confirm"]]
            lines.append("")
        if d.get("not_when"):
            lines.append("Not the cause when:")
            lines += [f"- {s}" for s in d["not_when"]]
            lines.append("")
        same = [s for s in d.get("symptoms") or () if s.get("same_cause") and not s.get("alternative")]
        other = [s for s in d.get("symptoms") or () if s.get("alternative")]
        after = [s for s in d.get("symptoms") or () if not s.get("same_cause")]
        if same:  # other rules that describe this very failure (logdoc/cards.py)
            lines.append("The same failure, as other messages show it:")
            lines += [f"- `{s['id']}` {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})" for s in same]
            lines.append("")
        if other:  # rules that read the same lines as another cause (logdoc/cards.py)
            lines.append("Another reading of the same lines (check which one holds):")
            lines += [f"- `{s['id']}` {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})" for s in other]
            lines.append("")
        if after:
            lines.append("Consequences:")
            lines += [f"- `{s['id']}` {s['title']} ({_ranks(s.get('ranks') or [])}, {count_text(s['count'], 'line')})" for s in after]
            lines.append("")
        if d.get("docs"):
            lines.append("Docs: " + " · ".join(f"[{x['title']}]({x['url']})" for x in d["docs"]))
            lines.append("")
    notes = report.get("notes") or []
    if notes:
        lines.append("## Notes")
        lines += [f"- `{n['id']}` {n['title']} ({_ranks(n.get('ranks') or [])})" for n in notes]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
