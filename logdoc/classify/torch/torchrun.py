"""torchrun's failure summary (``ChildFailedError``: the ``===`` block with its ``Failures:`` and
``Root Cause`` tables, ``grammars/torch_child_failed.lark``) as a list of failures, one per worker:
rank, local rank, host, exit code, pid, signal, error file, traceback."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .common import SIGNALS, parse
from ...lazyre import lazy_re

if TYPE_CHECKING:
    from lark import Tree

_ROOT = "Root Cause (first observed failure):"
_HEAD = "===\n? FAILED\n---\n"
_FAILURES = lazy_re(r"Failures:[ \t]*$", re.M)
_DASH = lazy_re(r"-{3,}[ \t\r]*$", re.M)
_BORDER = lazy_re(r"\n={3,}[ \t\r]*$")


def _doc(others: str, root: str) -> str:
    """The summary with its head put back around the entries of its two sections."""
    parts = [_HEAD + "Failures:", others.strip("\n"), "---", _ROOT, root.strip("\n"), "==="]
    return "\n".join(p for p in parts if p)


def cut_summary(text: str) -> dict[str, Any] | None:
    """The summary pasted without its head (the ``====`` border and ``<script> FAILED``, and maybe
    more): it starts at an entry's ``[i]:`` line, at one of its fields (``time``, ``host``, ``rank``,
    ``exitcode``, ``error_file``, ``traceback``), at ``Failures:`` or at ``Root Cause ...``. The
    missing head is put back so that the grammar reads it, each entry in the section it stands in:
    the entries after ``Root Cause ...`` are the root cause, so are those just before the closing
    border when no section line survived (elastic prints the root cause last); entries before a
    ``----`` line or after ``Failures:`` are the other failures. None unless some failure has an exit
    code or a traceback (a lone ``rank: 0`` is anybody's print)."""
    body = text.strip("\n")
    closed = _BORDER.search(body) is not None
    if closed:
        body = body[:_BORDER.search(body).start()]
    if _ROOT in body:
        before, _, after = body.partition(_ROOT)
        before = before.rstrip("\n")
        if _DASH.search(before.rsplit("\n", 1)[-1]):
            before = before.rsplit("\n", 1)[0] if "\n" in before else ""
        if _FAILURES.search(before):
            before = before[_FAILURES.search(before).end():]
        doc = _doc(before, after)
    else:
        lines = body.split("\n")
        last_dash = max((i for i, ln in enumerate(lines) if _DASH.match(ln)), default=-1)
        if _FAILURES.search(body) or last_dash >= 0 or not closed:
            # other failures (cut before the root cause, or nothing says which section: not the root)
            rest = "\n".join(lines[:last_dash] if last_dash >= 0 else lines)
            m = _FAILURES.search(rest)
            rest = rest[m.end():] if m else rest
            doc = _doc(rest, "\n".join(lines[last_dash + 1:]) if last_dash >= 0 and closed else "")
        else:
            doc = _doc("", body)
    out = child_failed(doc)
    if out is None or not any(f.get("exitcode") is not None or f.get("traceback") for f in out["failures"]):
        return None
    out.pop("script", None)
    out["cut"] = True
    return out


def child_failed(text: str) -> dict[str, Any] | None:
    tree = parse("torch_child_failed", text)
    if tree is None:
        return None
    from lark import Token, Tree  # (imported by the parse above)

    out: dict[str, Any] = {"failures": []}
    for child in tree.children:
        if isinstance(child, Token) and child.type == "TITLE":
            title = str(child).strip()
            out["script"] = title[:-len(" FAILED")] if title.endswith(" FAILED") else title
        elif isinstance(child, Tree):
            root = child.data == "root"
            for entry in child.children:
                if isinstance(entry, Tree) and entry.data in ("entry", "cut_entry"):
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
    from lark import Token

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
