"""Render NCCL catalog formats into log lines, the way a given release would print them."""
from __future__ import annotations

import csv
import re
from pathlib import Path

DATA = Path(__file__).parent / "data"
CONV = re.compile(r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                  r"(?P<len>hh|h|ll|l|z|j|t|L|q)?(?P<conv>[diouxXeEfFgGaAcspnm%])|\{#?[A-Za-z_]\w*\}")
VALUES = {"d": "3", "i": "3", "u": "64", "x": "1a2b", "X": "1A2B", "o": "17", "f": "1.500000",
          "e": "1.5e+00", "g": "1.5", "c": "x", "p": "0x7f3a2c001200", "s": "eth0",
          "m": "Cannot allocate memory"}  # glibc: %m prints strerror(errno) and takes no argument


def tag_key(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.lstrip("v").split("-")[0].split("."))


def render_message(fmt: str) -> str:
    first = fmt.split("\\n")[0]

    def sub(m: re.Match) -> str:
        if m.group(0).startswith("{"):
            return "value"
        conv = m["conv"]
        if conv == "%":
            return "%"
        val = VALUES.get(conv, "1")
        if m["width"] and m["width"].isdigit() and len(val) < int(m["width"]):
            pad = "0" if "0" in (m["flags"] or "") and conv not in "sp" else " "
            val = val.rjust(int(m["width"]), pad) if "-" not in (m["flags"] or "") else val.ljust(int(m["width"]))
        return val

    # the C escapes a format literal keeps (the AWS OFI plugin's catalog quotes with \" in four formats)
    return CONV.sub(sub, first).replace("\\t", "\t").replace('\\"', '"').replace("\\\\", "\\")


def render_line(level: str, fmt: str, tag: str, location: str) -> str:
    """One line as release ``tag`` prints it at ``level``."""
    ver = tag_key(tag)
    msg = render_message(fmt)
    head = "gpu-node-07:2345:2400 [1] "
    stamp = "[2026-11-29 10:11:12] " if ver >= (2, 26) else ""
    if level == "WARN":
        loc = location.split(",")[0].split(" ")[0]
        loc = loc[4:] if loc.startswith("src/") else loc
        func = " (ncclCommInitRank)" if ver >= (2, 30, 7) and not loc.startswith("plugins/") else ""
        return f"{stamp}{head}{loc}{func} NCCL WARN {msg}"
    if level == "VERSION":
        return msg if ver < (2, 22) else f"{head}NCCL INFO {msg}"
    if level == "CALL":
        return f"gpu-node-07:2345:2400 NCCL CALL {msg}"
    return f"{head}NCCL INFO {msg}"


def catalog_rows():
    with open(DATA / "nccl-messages-by-version.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["level"] in ("INFO", "WARN", "VERSION"):
                yield row
