"""How much of the message catalogs the knowledge base explains.

    python tools/catalog_coverage.py [--misses N] [--by-family [N]]

NCCL: every WARN format of every release (tests/data/nccl-messages-by-version.tsv), rendered in the
line layout of the oldest and of the newest release that printed it (tests/nccl_render.py).
The AWS OFI plugin (aws-ofi-nccl): every WARN format of its releases (tests/data/ofi-messages-by-version.tsv,
tools/ofi_catalog.py), in NCCL's line layout with the plugin's function as the location.
PyTorch / Gloo: every catalog row of level ERROR, FATAL or WARN (grammars/torch_templates.tsv),
its format rendered with sample values (the first of several wordings, the renderer of
tests/test_torchlines.py, integers as 7); a
Gloo row as Gloo prints it, ``[<gloo source>:<line>] <message>`` inside a RuntimeError; a one-line
PyTorch message as c10 logs it (``[rank0]:[E1201 10:11:12.000000000 <file>:100] <message>``).

Each line goes through logdoc alone (parse, analysis, knowledge base, diagnosis) and counts as
covered when the report gives it a category: a diagnosis or a note, from a rule or from a catalog
annotation (``benign`` counts). A second figure counts the lines *explained by a rule*: the report's
first diagnosis (or, when it has none, its first note) comes from a ``knowledge/*.yaml`` rule, not
from an annotation's or a differential family's generic card. Prints both figures per source and
overall; ``--misses N`` lists up to N lines that got no category; ``--by-family`` lists, grouped by
source file (NCCL) or catalog family (PyTorch, Gloo), the formats whose first diagnosis is a
generic card (``--by-family N``: at most N formats per group; groups with the most first).
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))

TORCH_LEVELS = ("ERROR", "FATAL", "WARN")
GLOO_SRC = "/pytorch/third_party/gloo/"


def nccl_lines():
    """(label, line) for each WARN format x {first, last} release."""
    from nccl_render import render_line

    with open(ROOT / "tests" / "data" / "nccl-messages-by-version.tsv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["level"] == "WARN"]
    for row in rows:
        for tag in sorted({row["first_tag"], row["last_tag"]}):
            yield f"{tag} {row['locations_in_last_tag'].split(',')[0]}", render_line(
                "WARN", row["format"], tag, row["locations_in_last_tag"])


OFI_HEAD = "ip-10-0-0-1:1234:1300 [0] nccl_net_ofi_func:100 NCCL WARN NET/OFI "  # how NCCL's logger prints them


def ofi_lines():
    """(label, line) for each WARN format of the AWS OFI plugin (tests/data/ofi-messages-by-version.tsv,
    made by tools/ofi_catalog.py), as NCCL's logger prints it (the plugin's function and line in the header)."""
    from nccl_render import render_message

    text = (ROOT / "tests" / "data" / "ofi-messages-by-version.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO("".join(l for l in text.splitlines(True) if not l.startswith("#"))),
                          delimiter="\t")
    for row in rows:
        yield f"{row['last_tag']} {row['files'].split(',')[0]}", OFI_HEAD + render_message(row["format"]).rstrip()


def first_alternatives(fmt: str) -> str:
    """``{name=a|b}`` and ``{a|b}`` (one of several wordings) replaced by the first wording, as a
    release prints one of them; other placeholders stay for the renderer."""
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] != "{":
            out.append(fmt[i])
            i += 1
            continue
        depth, j = 1, i + 1
        while j < len(fmt) and depth:
            depth += {"{": 1, "}": -1}.get(fmt[j], 0)
            j += 1
        inner = fmt[i + 1:j - 1]
        top, d = [], 0  # split on the '|' at the top level of the placeholder
        for ch in inner:
            d += {"{": 1, "}": -1}.get(ch, 0)
            top.append("\0" if ch == "|" and d == 0 else ch)
        parts = "".join(top).split("\0")
        if len(parts) > 1:
            first = re.sub(r"^[a-z_][a-z0-9_]*=", "", parts[0])
            out.append(first_alternatives(first))
        else:
            out.append(fmt[i:j])
        i = j
    return "".join(out)


def torch_lines():
    """(label, text) for each PyTorch / Gloo catalog row of a failure or warning level."""
    from test_torchlines import render

    text = (ROOT / "grammars" / "torch_templates.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO("".join(l for l in text.splitlines(True) if not l.startswith("#"))),
                          delimiter="\t")
    for row in rows:
        if row["level"] not in TORCH_LEVELS:
            continue
        fmt = re.sub(r"\{[a-z_][a-z0-9_]*:int\}", "7", first_alternatives(row["format"]))
        fmt = re.sub(r"\{([a-z_][a-z0-9_]*):(?:word|line|rest)\}", r"{\1}", fmt)
        msg = render(fmt)
        source = row["id"].split(":", 1)[0]
        if row["where"] == "gloo" and source == "gloo":
            loc = row["id"].split(":", 1)[1]
            msg = f"RuntimeError: [{GLOO_SRC}gloo/{loc}] {msg}"
        elif row["where"] == "gloo":  # a Gloo message without its location (logdoc's own rows)
            msg = f"RuntimeError: {msg}"
        elif "\n" not in msg.strip():
            # as c10 logs it: the level letter and the source file in the prefix
            src = Path(row["file"] or "c10d.cpp").name
            msg = f"[rank0]:[{row['level'][0]}1201 10:11:12.000000000 {src}:100] {msg.strip()}"
        yield f"{source} {row['id']}", msg, source


def covered(report: dict) -> str | None:
    for d in (report.get("diagnoses") or []) + (report.get("notes") or []):
        if d.get("category"):
            return d["category"]
    return None


def explained(report: dict) -> str:
    """How the line is explained: ``rule`` (the first diagnosis, or with no diagnosis the first
    note, comes from a knowledge-base rule), ``card`` (its first diagnosis is a generic card of an
    annotation or a differential family), ``note`` (only notes, the first from an annotation) or
    ``none``."""
    diags = [d for d in report.get("diagnoses") or [] if d.get("category")]
    notes = [d for d in report.get("notes") or [] if d.get("category")]
    first = (diags or notes or [None])[0]
    if first is None:
        return "none"
    if not first.get("family"):
        return "rule"
    return "card" if diags else "note"


def group_of(source: str, label: str) -> str:
    """The source file (NCCL, from the label's location) or catalog family (PyTorch / Gloo /
    logdoc, the template id's second part) a line belongs to."""
    if source == "nccl":
        locs = label.split(" ", 1)[1] if " " in label else label
        return re.sub(r"^src/", "", re.split(r"[\s,]+", locs.strip())[0].rsplit(":", 1)[0])
    ident = label.split(" ", 1)[-1]
    parts = ident.split(":")
    return parts[1] if len(parts) > 2 else ident


def measure_each(items, rules):
    """``items``: (source, label, text[, key]). Yields (source, label, text, key, category, how),
    ``how`` as :func:`explained` says (a crash is ``none``, its label says so)."""
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    for item in items:
        source, label, text = item[:3]
        key = item[3] if len(item) > 3 else label
        try:
            report = build_report(parse_sources([("rank0.log", text + "\n")]), rules)
            cat, how = covered(report), explained(report)
        except Exception as exc:  # noqa: BLE001 - a crash is a miss, and said so
            cat, how = None, "none"
            label += f" (crash: {type(exc).__name__}: {exc})"
        yield source, label, text, key, cat, how


def measure(items, rules, each: list | None = None) -> tuple[dict[str, list[int]], list[str]]:
    """``items``: (source, label, text[, key]). Returns ({source: [covered, total, by_rule]},
    misses); ``each`` (a list) receives every line's :func:`measure_each` row."""
    tallies: dict[str, list[int]] = {}
    misses: list[str] = []
    for row in measure_each(items, rules):
        source, label, text, _key, cat, how = row
        if each is not None:
            each.append(row)
        t = tallies.setdefault(source, [0, 0, 0])
        t[1] += 1
        t[2] += how == "rule"
        if cat:
            t[0] += 1
        else:
            misses.append(f"{source}: {label}: {text[:160]!r}")
    return tallies, misses


def by_family(rows, limit: int | None = None) -> list[str]:
    """The formats whose first diagnosis is a generic card, grouped by source and group, the
    groups with the most such formats first. A format rendered in several layouts counts once
    (when any of its layouts gets a card)."""
    groups: dict[tuple[str, str], dict[str, str]] = {}
    totals: dict[tuple[str, str], set] = {}
    for source, label, text, key, _cat, how in rows:
        g = (source, group_of(source, label))
        totals.setdefault(g, set()).add(key)
        if how == "card":
            groups.setdefault(g, {}).setdefault(key, text)
    out = []
    for (source, group), fmts in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"{source} {group}: {len(fmts)} of {len(totals[(source, group)])} formats get only a generic card")
        for key, text in list(fmts.items())[:limit]:
            out.append(f"    {text.strip().splitlines()[0][-150:]}")
    return out


def all_items():
    """(source, label, text, key): ``key`` names the catalog format (one NCCL format is rendered
    in two layouts)."""
    for label, line in nccl_lines():
        yield "nccl", label, line, label.split(" ", 1)[1]
    for label, text, source in torch_lines():
        yield source, label, text, label
    for label, line in ofi_lines():
        yield "ofi", label, line, line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--misses", type=int, default=0, help="list up to N lines that get no category")
    ap.add_argument("--by-family", type=int, nargs="?", const=-1, default=None, metavar="N",
                    help="list the formats that get only a generic card, grouped by source file or "
                         "catalog family (at most N per group)")
    args = ap.parse_args(argv)

    from logdoc.kb import load_rules

    rules = load_rules()
    errors = [str(p) for p in rules.errors]
    if errors:
        print("knowledge base errors (logdoc rules lint):", *errors[:5], sep="\n  ")
    rows: list = []
    tallies, misses = measure(all_items(), rules, each=rows)
    # overall: the catalogs of NCCL, PyTorch and Gloo (and logdoc's own rows); a network plugin's after it
    total = [sum(t[i] for s, t in tallies.items() if s != "ofi") for i in range(3)]
    plugin = [("ofi", tallies["ofi"])] if "ofi" in tallies else []
    for source, (done, n, by_rule) in sorted(t for t in tallies.items() if t[0] != "ofi") + [("overall", total)] + plugin:
        print(f"{source:7s} {done:5d}/{n:<5d} = {100.0 * done / n:5.1f}% get a category; "
              f"{by_rule:5d}/{n:<5d} = {100.0 * by_rule / n:5.1f}% explained by a rule")
    for m in misses[: args.misses]:
        print("  miss:", m)
    if args.by_family is not None:
        print(*by_family(rows, None if args.by_family < 0 else args.by_family), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
