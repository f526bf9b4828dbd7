"""The AWS OFI network plugin's (aws-ofi-nccl) WARN formats by release, from its git history.

    python tools/ofi_catalog.py GIT_DIR [OUT]

GIT_DIR is a clone (or bare mirror) of https://github.com/aws/aws-ofi-nccl. Every release tag (``v1.3.0-aws``,
``v1.14.0``, ...) is read with ``git grep``: each ``NCCL_OFI_WARN("...", ...)`` call of ``src/`` gives its format
(adjacent string literals joined; ``PRIu64``-style macros as ``%lu``), and a format is written once with the
first and the last release that prints it and the files it is in. OUT defaults to
``tests/data/ofi-messages-by-version.tsv``. The plugin prints these through NCCL's logger as
``host:pid:tid [dev] <function>:<line> NCCL WARN NET/OFI <message>`` (``include/nccl_ofi_log.h``), so they are
in no NCCL catalog; ``tools/catalog_coverage.py`` measures how much of them the knowledge base explains.
"""
from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "ofi-messages-by-version.tsv"

_TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(?:-aws)?$")
_CALL = re.compile(r"NCCL_OFI_WARN\s*\(")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_INT_MACRO = re.compile(r"\bPRI([diux])(8|16|32|64|PTR)\b")


def releases(git_dir: str) -> list[str]:
    tags = subprocess.run(["git", "-C", git_dir, "tag"], capture_output=True, text=True, check=True).stdout.split()
    rel = [t for t in tags if _TAG.match(t)]
    return sorted(rel, key=lambda t: tuple(int(x) for x in _TAG.match(t).groups()))


def _format(call: str) -> str | None:
    """The format of one call's text (from just after ``NCCL_OFI_WARN(``): its leading string literals and
    the ``PRI*`` macros between them, joined; None when the call does not start with a literal."""
    out, pos = [], 0
    while True:
        while pos < len(call) and call[pos] in " \t\n\\":
            pos += 1
        m = _LITERAL.match(call, pos)
        if m is not None:
            out.append(m.group(1))
            pos = m.end()
            continue
        macro = _INT_MACRO.match(call, pos)
        if macro is not None and out:
            out.append("%l" + macro.group(1))
            pos = macro.end()
            continue
        break
    return "".join(out) if out else None


def formats_at(git_dir: str, tag: str) -> dict[str, set[str]]:
    """{format: files} of the WARN calls under src/ at ``tag``."""
    files = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "--name-only", tag, "--", "src"],
                           capture_output=True, text=True, check=True).stdout.split()
    found: dict[str, set[str]] = {}
    for name in files:
        if not name.endswith((".c", ".cc", ".cpp", ".h")):
            continue
        text = subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{name}"], capture_output=True, text=True,
                              errors="replace", check=True).stdout
        for m in _CALL.finditer(text):
            fmt = _format(text[m.end():m.end() + 2000])
            if fmt:
                found.setdefault(fmt, set()).add(name)
    return found


def build(git_dir: str) -> tuple[list[dict[str, str]], int]:
    """(one row per format, sorted by its files; how many releases were read)."""
    rows: dict[str, dict[str, str]] = {}
    tags = releases(git_dir)
    for tag in tags:
        for fmt, files in formats_at(git_dir, tag).items():
            row = rows.setdefault(fmt, {"format": fmt, "level": "WARN", "first_tag": tag, "last_tag": tag, "files": ""})
            row["last_tag"] = tag
            row["files"] = ",".join(sorted(set(filter(None, row["files"].split(","))) | files))
    return sorted(rows.values(), key=lambda r: (r["files"], r["format"])), len(tags)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    out = Path(args[1]) if len(args) > 1 else OUT
    try:
        rows, n_releases = build(args[0])
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"ofi_catalog: cannot read the plugin's history in {args[0]}: {exc}", file=sys.stderr)
        return 1
    with open(out, "w", encoding="utf-8", newline="") as fh:
        fh.write("# aws-ofi-nccl WARN formats by release; regenerate with: python tools/ofi_catalog.py <aws-ofi-nccl clone>\n")
        w = csv.DictWriter(fh, fieldnames=["format", "level", "first_tag", "last_tag", "files"], delimiter="\t",
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"ofi_catalog: {len(rows)} WARN formats from {n_releases} releases -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
