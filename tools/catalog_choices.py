"""The template every catalog reading chooses, written out one per line, to compare two versions of
the catalog engine (or of a catalog) line for line.

    python tools/catalog_choices.py > before.tsv     # on the old code
    python tools/catalog_choices.py > after.tsv      # on the new code
    diff before.tsv after.tsv && echo identical

What it reads:
- every line of every sample (``samples/``) and field case (``tests/field/cases``, ``tests/field/holdout``),
  through the whole parse, with the fast paths on and off: ``file, line, kind, template`` of each event;
- every line of those logs asked of both engines directly (:func:`line_choices`);
- every NCCL catalog format rendered (``tests/nccl_render.py``): ``Catalog.match`` of the message, and
  ``match_cut`` of the message without its first word;
- every PyTorch / Gloo catalog row rendered (the renderer of ``tests/test_torchlines.py``, the first
  wording of each alternative): ``match_templates`` for the tables the classifiers ask
  (body+line, gloo, gloo with the row's file and line, body+line+gloo), with the fields read.

The last line is a summary: how many readings were written, per part.
"""
from __future__ import annotations

import csv
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tools")]


def _log_files():
    for base in (ROOT / "samples", ROOT / "tests" / "field" / "cases", ROOT / "tests" / "field" / "holdout"):
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix not in (".yaml", ".md", ".py") and p.name != "KNOWN_MISSES":
                yield p


def pipeline_choices(out) -> int:
    from logdoc import fast
    from logdoc.pipeline import parse_paths

    n = 0
    for on in (True, False):
        fast.set_enabled(on)
        try:
            for p in _log_files():
                res = parse_paths([str(p)])
                for ev in res.events:
                    out.write(f"parse\t{'fast' if on else 'plain'}\t{p.relative_to(ROOT)}\t{ev.line}\t{ev.kind}\t{ev.template}\n")
                    n += 1
        finally:
            fast.set_enabled(True)
    return n


def line_choices(out) -> int:
    """The engines asked directly about every line of the logs: the NCCL catalog about the text after
    ``NCCL WARN`` / ``NCCL INFO`` (or the whole line), the PyTorch table about the text after the last
    ``] `` (or the whole line)."""
    from logdoc.classify.torch.catalog import match_templates
    from logdoc.templates import nccl_catalog

    cat = nccl_catalog()
    n = 0
    for p in _log_files():
        if p.suffix == ".gz":
            continue
        name = p.relative_to(ROOT)
        for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            head = re.search(r"NCCL (?:WARN|INFO) ", line)
            msg = line[head.end():] if head else line
            hit = cat.match(msg)
            body = line.rsplit("] ", 1)[-1]
            th = match_templates(body, ("body", "line"))
            out.write(f"line\t{name}\t{i}\t{hit[0].id if hit else None}\t{th[0].id if th else None}\n")
            n += 1
    return n


def nccl_choices(out) -> int:
    from nccl_render import render_message

    from logdoc.templates import match_cut, nccl_catalog

    cat = nccl_catalog()
    n = 0
    for t in cat.templates.values():
        msg = render_message(t.format)
        hit = cat.match(msg)
        out.write(f"nccl\tmatch\t{t.id}\t{hit[0].id if hit else None}\t{list(hit[1]) if hit else None}\n")
        rest = msg.split(" ", 1)[1] if " " in msg.strip() else ""
        cut = match_cut(cat, rest) if rest else None
        out.write(f"nccl\tcut\t{t.id}\t{cut[0].id if cut else None}\t{list(cut[1]) if cut else None}\n")
        n += 2
    return n


def torch_choices(out) -> int:
    from catalog_coverage import first_alternatives
    from test_torchlines import render

    from logdoc.classify.torch.catalog import match_templates

    text = (ROOT / "grammars" / "torch_templates.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO("".join(ln for ln in text.splitlines(True) if not ln.startswith("#"))),
                          delimiter="\t")
    n = 0
    for row in rows:
        fmt = re.sub(r"\{[a-z_][a-z0-9_]*:int\}", "7", first_alternatives(row["format"]))
        fmt = re.sub(r"\{([a-z_][a-z0-9_]*):(?:word|line|rest)\}", r"{\1}", fmt)
        msg = render(fmt)
        line = row["id"].rsplit(":", 1)[-1]
        asks = ((("body", "line"), None, None), (("gloo",), None, None),
                (("gloo",), row["file"] or None, int(line) if line.isdigit() else None),
                (("body", "line", "gloo"), None, None))
        for wheres, file, ln in asks:
            hit = match_templates(msg, wheres, file, ln)
            got = (hit[0].id, sorted(hit[1].items())) if hit else None
            out.write(f"torch\t{'+'.join(wheres)}:{file}:{ln}\t{row['id']}\t{got}\n")
            n += 1
    return n


def main() -> int:
    out = sys.stdout
    counts = {"parse": pipeline_choices(out), "line": line_choices(out), "nccl": nccl_choices(out), "torch": torch_choices(out)}
    out.write("total\t" + "\t".join(f"{k}={v}" for k, v in counts.items()) + f"\tall={sum(counts.values())}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
