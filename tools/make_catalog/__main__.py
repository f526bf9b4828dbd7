"""The generators of the two message catalogs, one sub-command per dialect:

    python tools/make_catalog nccl [SRC]   # printf: grammars/nccl_messages.tsv from NCCL's catalog
                                           # (SRC: tests/data/nccl-messages-by-version.tsv by default)
    python tools/make_catalog torch        # brace: grammars/torch_templates.tsv from tests/data/torch/

Both tables are committed; logdoc reads them (through logdoc/classify/catalog.py, the one engine)
and never the catalogs they are built from. Every template keeps its id from one run to the next:
NCCL's is a hash of the format text, PyTorch's and Gloo's the component and a slug, or Gloo's
file and line. Compare the readings before and after a regeneration with
``python tools/catalog_choices.py``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import nccl_catalog  # noqa: E402
import torch_catalog  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/make_catalog", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="dialect", required=True)
    n = sub.add_parser("nccl", help="printf dialect: grammars/nccl_messages.tsv")
    n.add_argument("src", nargs="?", default=str(ROOT / "tests" / "data" / "nccl-messages-by-version.tsv"))
    n.add_argument("--out", default=str(ROOT / "grammars" / "nccl_messages.tsv"), help="'-' for standard output")
    t = sub.add_parser("torch", help="brace dialect: grammars/torch_templates.tsv")
    t.add_argument("--out", default=str(ROOT / "grammars" / "torch_templates.tsv"))
    args = ap.parse_args(argv)
    if args.dialect == "nccl":
        if args.out == "-":
            nccl_catalog.write(args.src, sys.stdout)
            return 0
        with open(args.out, "w", encoding="utf-8", newline="") as fh:
            count = nccl_catalog.write(args.src, fh)
        print(f"wrote {count} templates to {args.out}", file=sys.stderr)
        return 0
    return torch_catalog.main(Path(args.out))


if __name__ == "__main__":
    raise SystemExit(main())
