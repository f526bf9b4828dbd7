"""torchrun's failure summary (``ChildFailedError``: the ``===`` block with its ``Failures:`` and
``Root Cause`` tables, ``grammars/torch_child_failed.lark``) as a list of failures, one per worker:
rank, local rank, host, exit code, pid, signal, error file, traceback."""
from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree

from .common import SIGNALS, parse

TABLE_ENTRY = re.compile(r"\[\d+\]:[ \t]*\n[ \t]+[a-z_]+[ \t]*:")


def child_failed(text: str) -> dict[str, Any] | None:
    tree = parse("torch_child_failed", text)
    if tree is None:
        return None
    out: dict[str, Any] = {"failures": []}
    for child in tree.children:
        if isinstance(child, Token) and child.type == "TITLE":
            title = str(child).strip()
            out["script"] = title[:-len(" FAILED")] if title.endswith(" FAILED") else title
        elif isinstance(child, Tree):
            root = child.data == "root"
            for entry in child.find_data("entry"):
                out["failures"].append(_failure_entry(entry, root))
    failures = out["failures"]
    failures.sort(key=lambda e: (not e["root_cause"]))
    roots = [e for e in failures if e["root_cause"]]
    if roots:
        out["root_cause"] = {k: roots[0].get(k) for k in ("rank", "local_rank", "host", "exitcode", "signal", "pid")}
    return out


def _failure_entry(entry: Tree, root: bool) -> dict[str, Any]:
    e: dict[str, Any] = {"root_cause": root, "index": None, "time": None, "host": None, "rank": None,
                         "local_rank": None, "exitcode": None, "pid": None, "signal": None, "error_file": None}
    fields = []
    for child in entry.children:
        if isinstance(child, Token):                # the `[i]:` line
            m = re.search(r"\[(\d+)\]", str(child))
            if m:
                e["index"] = int(m.group(1))
        else:
            fields.append(child)
    for field in fields:
        line = str(field.children[0]).strip()
        name, _, value = line.partition(":")
        name, value = name.strip(), value.strip()
        cont = [str(t)[1:] for t in field.children[1:]]
        if name == "time":
            e["time"] = value.replace("_", "T", 1) if re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d", value) else value
        elif name == "host":
            e["host"] = value
        elif name == "rank":
            m = re.match(r"(-?\d+)(?:\s*\(local_rank:\s*(-?\d+)\))?", value)
            if m:
                e["rank"] = int(m.group(1))
                if m.group(2) is not None:
                    e["local_rank"] = int(m.group(2))
        elif name == "exitcode":
            m = re.match(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?\s*(?:\(?(SIG[A-Z0-9]+)\)?)?", value)
            if m:
                e["exitcode"] = int(m.group(1))
                if m.group(2):
                    e["pid"] = int(m.group(2))
                if m.group(3):
                    e["signal"] = m.group(3)
        elif name == "error_file":
            e["error_file"] = None if value in ("<N/A>", "") else value
        elif name == "traceback":
            tb = "\n".join([value] + cont).strip()
            e["traceback"] = tb
            m = re.match(r"Signal (\d+) \((SIG[A-Z0-9]+)\) received by PID (\d+)", tb)
            if m:
                e["signal"] = e["signal"] or m.group(2)
                e["pid"] = e["pid"] or int(m.group(3))
        else:
            e[name] = value
    if e["signal"] is None and isinstance(e["exitcode"], int) and e["exitcode"] < 0:
        e["signal"] = SIGNALS.get(-e["exitcode"])
    return e
