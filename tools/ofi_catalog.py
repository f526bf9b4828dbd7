"""The AWS OFI network plugin's (aws-ofi-nccl) WARN formats by release, from its git history.

    python tools/ofi_catalog.py GIT_DIR [OUT]

GIT_DIR is a clone (or bare mirror) of https://github.com/aws/aws-ofi-nccl. Every release tag (``v1.3.0-aws``,
``v1.14.0``, ...) is read with ``git grep``: each ``NCCL_OFI_WARN("...", ...)`` call of ``src/`` gives its format
(adjacent string literals joined; ``PRIu64``-style macros as the ``lu`` they expand to (``%lu`` after no ``%``); any other name beside a literal, such as a
macro's argument in ``NCCL_OFI_WARN("Called " fn_name " on ...")``, as the string ``%s`` it expands to), and a
format is written once with the
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
_INT_MACRO = re.compile(r"\bPRI([diouxX])(8|16|32|64|PTR)\b")
_OPEN_CONVERSION = re.compile(r"(?<!%)(?:%%)*%[-+ #0]*\d*(?:\.\d+)?$")  # a literal ending in "%" or "%016": the macro ends it
# a name that C joins to an adjacent literal: a macro that expands to a string literal (a function-like macro's
# argument, PACKAGE_NAME); what follows it must be a literal, or the call's end after a literal
_NAME = re.compile(r"[A-Za-z_]\w*(?=[ \t\n\\]*(\"|[,)]))")


def releases(git_dir: str) -> list[str]:
    tags = subprocess.run(["git", "-C", git_dir, "tag"], capture_output=True, text=True, check=True).stdout.split()
    rel = [t for t in tags if _TAG.match(t)]
    return sorted(rel, key=lambda t: tuple(int(x) for x in _TAG.match(t).groups()))


def _format(call: str, defines: dict[str, str] | None = None) -> str | None:
    """The format of one call's text (from just after ``NCCL_OFI_WARN(``): its leading string literals, the
    ``PRI*`` macros between them and the names C joins to them (``%s``), joined; None when no literal starts it
    (after at most one such name). ``defines`` gives the literal of an object-like macro (PACKAGE_NAME's
    ``aws-ofi-nccl``), written in its place."""
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
            # PRIu64 is the literal "lu" (or "llu"), written after the "%" it completes: "%" PRIu64 is "%lu"
            out.append(("l" if _OPEN_CONVERSION.search("".join(out)) else "%l") + macro.group(1))
            pos = macro.end()
            continue
        name = _NAME.match(call, pos)
        if name is not None and (name.group(1) == '"' or out):
            out.append((defines or {}).get(name.group(0), "%s"))
            pos = name.end()
            continue
        break
    return "".join(out) if any(part != "%s" for part in out) else None


_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+"((?:[^"\\\n]|\\.)*)"[ \t]*$', re.M)
_AC_INIT = re.compile(r"AC_INIT\(\s*\[([^\]]+)\]")


def _show(git_dir: str, tag: str, name: str) -> str:
    return subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{name}"], capture_output=True, text=True,
                          errors="replace", check=True).stdout


def formats_at(git_dir: str, tag: str) -> dict[str, set[str]]:
    """{format: files} of the WARN calls under src/ at ``tag``; a macro defined as a string literal (under src/
    or include/, and configure.ac's package name as PACKAGE_NAME) is read as its literal."""
    files = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "--name-only", tag, "--", "src", "include",
                            "configure.ac"], capture_output=True, text=True, check=True).stdout.split()
    texts = {name: _show(git_dir, tag, name) for name in files if name.endswith((".c", ".cc", ".cpp", ".h"))}
    defines = {m.group(1): m.group(2) for text in texts.values() for m in _DEFINE.finditer(text)}
    if "configure.ac" in files:
        package = _AC_INIT.search(_show(git_dir, tag, "configure.ac"))
        if package is not None:
            defines.setdefault("PACKAGE_NAME", package.group(1))
    found: dict[str, set[str]] = {}
    for name, text in texts.items():
        if not name.startswith("src/"):
            continue
        for m in _CALL.finditer(text):
            fmt = _format(text[m.end():m.end() + 2000], defines)
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
