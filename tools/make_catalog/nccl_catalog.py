"""The printf dialect's generator: grammars/nccl_messages.tsv from NCCL's message catalog.

    python tools/make_catalog nccl [PATH/TO/nccl-messages-by-version.tsv]

(the catalog copied to tests/data/ by default; ``--out -`` writes to standard output).

The catalog lists every NCCL log format with the first and last release tag that printed it.
This keeps the INFO, WARN and VERSION formats (TRACE calls are compiled out of release builds,
except TRACE_CALL which prints as `NCCL CALL`), merges the rows of one format, and gives each a
stable id derived from the format text.
"""
from __future__ import annotations

import csv
import hashlib
from typing import TextIO


def tag_key(tag: str) -> tuple[int, ...]:
    core = tag.lstrip("v").split("-")[0]
    return tuple(int(p) for p in core.split(".") if p.isdigit())


def template_id(fmt: str) -> str:
    return "nccl." + hashlib.sha1(fmt.encode("utf-8")).hexdigest()[:8]


def write(path: str, fh_out: TextIO) -> int:
    """The table of the catalog at ``path`` written to ``fh_out``; returns the number of formats."""
    merged: dict[str, dict] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            level = row["level"]
            if level == "TRACE" and row["subsys"] == "NCCL_CALL":
                level = "CALL"
            elif level not in ("INFO", "WARN", "VERSION"):
                continue
            fmt = row["format"]
            if not fmt.strip():
                continue
            cur = merged.setdefault(fmt, {"levels": set(), "first": row["first_tag"], "last": row["last_tag"],
                                          "where": row["locations_in_last_tag"]})
            cur["levels"].add(level)
            if tag_key(row["first_tag"]) < tag_key(cur["first"]):
                cur["first"] = row["first_tag"]
            if tag_key(row["last_tag"]) > tag_key(cur["last"]):
                cur["last"] = row["last_tag"]
                cur["where"] = row["locations_in_last_tag"]
    fh_out.write("id\tlevels\tfirst\tlast\twhere\tformat\n")
    for fmt in sorted(merged):
        m = merged[fmt]
        where = m["where"].split(",")[0].split(" ")[0]
        fh_out.write("\t".join([template_id(fmt), ",".join(sorted(m["levels"])), m["first"], m["last"], where, fmt]) + "\n")
    return len(merged)
