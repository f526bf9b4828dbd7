"""Build grammars/nccl_messages.tsv from NCCL's message catalog.

    python tools/make_nccl_templates.py PATH/TO/nccl-messages-by-version.tsv > grammars/nccl_messages.tsv

The catalog lists every NCCL log format with the first and last release tag that printed it.
This keeps the INFO, WARN and VERSION formats (TRACE calls are compiled out of release builds,
except TRACE_CALL which prints as `NCCL CALL`), merges the rows of one format, and gives each a
stable id derived from the format text.
"""
from __future__ import annotations

import csv
import hashlib
import sys


def tag_key(tag: str) -> tuple[int, ...]:
    core = tag.lstrip("v").split("-")[0]
    return tuple(int(p) for p in core.split(".") if p.isdigit())


def template_id(fmt: str) -> str:
    return "nccl." + hashlib.sha1(fmt.encode("utf-8")).hexdigest()[:8]


def main(path: str) -> None:
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
    out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar=None)
    print("id\tlevels\tfirst\tlast\twhere\tformat")
    for fmt in sorted(merged):
        m = merged[fmt]
        where = m["where"].split(",")[0].split(" ")[0]
        print("\t".join([template_id(fmt), ",".join(sorted(m["levels"])), m["first"], m["last"], where, fmt]))


if __name__ == "__main__":
    main(sys.argv[1])
