"""Check reconstructed samples against the shared catalogs.

For every samples/nccl-*/ folder: each NCCL line (host:pid:tid [dev] NCCL INFO|WARN ...) must match a
printf format of nccl-messages-by-version.tsv whose [first_tag, last_tag] contains the NCCL version of
that file (from its banner, else sample.yaml produced.nccl), with the prefix layout of that version
(WARN preceded by an empty line, timestamp on WARN from 2.26 only, `file:line (func)` only in 2.30.7).
Each c10 log line ([rankR]:[E.... file:line] msg) must match a torch-messages.tsv format.
Also: one NCCL version per host:pid, one rank per comm pointer.

Usage: python samples/_reconstruct/check.py [sample-dir ...]
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from ncclfmt import CAT, shared_dir, vt

ROOT = Path(__file__).resolve().parents[1]

_CONV = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                   r"(?P<len>hh|h|ll|l|z|j|t|L)?(?P<conv>[diouxXeEfgGcsp%])")


def fmt_regex(fmt: str) -> re.Pattern:
    fmt = fmt.replace("\\n", "\n")  # the catalog writes an embedded newline as backslash-n
    out, pos = [], 0
    for m in _CONV.finditer(fmt):
        out.append(re.escape(fmt[pos:m.start()]))
        c = m.group("conv")
        w = m.group("width")
        if c == "%":
            r = "%"
        elif c in "di":
            r = r" *-?\d+"
        elif c == "u":
            r = r" *\d+"
        elif c in "xX":
            r = r" *[0-9a-fA-F]+"
        elif c == "p":
            r = r"(?:0x[0-9a-f]+|\(nil\))"
        elif c in "feEgG":
            r = r" *-?\d+(?:\.\d+)?(?:e[-+]\d+)?"
        elif c == "c":
            r = "."
        else:
            r = ".*"
        if w and w != "*" and c in "dix" and (m.group("flags") or "").find("0") >= 0:
            r = r"\d{%s,}" % w
        out.append(r)
        pos = m.end()
    out.append(re.escape(fmt[pos:]))
    return re.compile("".join(out) + r"\Z", re.S)


_RX_CACHE = {}


def nccl_match(level, msg, ver):
    hits = []
    for row in CAT.rows:
        if row["level"] != level or not (row["first"] <= ver <= row["last"]):
            continue
        rx = _RX_CACHE.get(row["fmt"])
        if rx is None:
            rx = _RX_CACHE[row["fmt"]] = fmt_regex(row["fmt"])
        if rx.match(msg):
            hits.append(row)
    # prefer specific formats over bare '%s'
    hits.sort(key=lambda r: -len(r["fmt"].replace("%s", "")))
    return hits


def torch_formats():
    rows = []
    with open(shared_dir() / "catalog" / "torch-messages.tsv", newline="") as fh:
        r = csv.reader(fh, delimiter="\t")
        next(r)
        for comp, f, level, fmt0 in r:
          for fmt in ([fmt0, fmt0.split("\\n")[0]] if "\\n" in fmt0 and len(fmt0.split("\\n")[0]) > 10 else [fmt0]):
            parts = re.split(r"(\{[^{}]*\})", fmt)
            rx = []
            for p in parts:
                if p.startswith("{") and p.endswith("}"):
                    inner = p[1:-1]
                    if "|" in inner and not inner.startswith("fragments"):
                        alts = []
                        for a in inner.split("|"):
                            a2 = re.sub(r"<[^>]*>", "\0", a)
                            alts.append(".*".join(re.escape(x) for x in a2.split("\0")))
                        rx.append("(?:" + "|".join(alts) + ")")
                    else:
                        rx.append(".*")
                else:
                    rx.append(re.escape(p.replace("\\n", "\n").replace("\\t", "\t")))
            literal = re.sub(r"\{[^{}]*\}", "", fmt)
            if len(literal.strip()) < 6:
                continue  # pure placeholder formats ({gloo_error}, {strerror}) would match anything
            rows.append((level, fmt, re.compile("".join(rx) + r"\Z", re.S)))
    return rows


TORCH = torch_formats()

NCCL_LINE = re.compile(r"^(?P<ts>\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] )?(?P<host>[\w.-]+):(?P<pid>\d+):(?P<tid>\d+) "
                       r"\[(?P<dev>\d+)\] (?:(?P<loc>\S+:\d+)(?P<func> \(\w+\))? NCCL WARN |NCCL INFO )(?P<msg>.*)$")
C10_LINE = re.compile(r"^(?:\[rank\d+\]:)?\[(?P<lvl>[EWIF])\d{3,4} \d\d:\d\d:\d\d\.\d{9} (?P<src>[\w.]+):\d+\] (?P<msg>.*)$")
ENVELOPES = [re.compile(r"^\s*\d+: "), re.compile(r"^\[\w+?\d+\]:")]
BANNER = re.compile(r"NCCL version (\d+\.\d+\.\d+)\+cuda\d+\.\d+")


def strip_env(line):
    changed = True
    while changed:
        changed = False
        for rx in ENVELOPES:
            m = rx.match(line)
            if m and not line.startswith("[rank"):
                line = line[m.end():]
                changed = True
    return line


def file_version(path: Path, yaml_ver):
    vers = set()
    for line in path.read_text().splitlines():
        m = BANNER.search(line)
        if m and "NCCL error" not in line and "NCCL version 2" in line and "error" not in line:
            vers.add(m.group(1))
    return vers


def yaml_nccl(d: Path, fname=None):
    """produced.nccl: "2.21.5" or "2.21.5 (node0.log), 2.18.3 (node1.log)" (per-file versions)."""
    txt = (d / "sample.yaml").read_text()
    m = re.search(r"^\s*nccl:\s*(.*)$", txt, re.M)
    if not m:
        return []
    val = m.group(1)
    if fname:
        per = dict((f, v) for v, f in re.findall(r"(\d+\.\d+\.\d+) \(([^)]+)\)", val))
        if fname in per:
            return [per[fname]]
    return re.findall(r"\d+\.\d+\.\d+", val)


def check_dir(d: Path):
    problems, counts = [], {"nccl": 0, "c10": 0}
    for f in sorted(d.glob("*.log")):
        yv = yaml_nccl(d, f.name)
        lines = f.read_text().splitlines()
        proc_ver = {}
        # version per host:pid from the banner lines, else the single yaml version
        for line in lines:
            s = strip_env(line)
            m = NCCL_LINE.match(s)
            if m and BANNER.fullmatch(m.group("msg")):
                proc_ver[(m.group("host"), m.group("pid"))] = BANNER.fullmatch(m.group("msg")).group(1)
        fv = file_version(f, yv)
        default = None
        if len(fv) == 1:
            default = next(iter(fv))
        elif len(yv) == 1:
            default = yv[0]
        comm_rank = {}
        # NCCL_DEBUG_TIMESTAMP_LEVELS (2.26+) stamps INFO lines too when it names INFO or ALL
        stamped_info = {(mm.group("host"), mm.group("pid")) for mm in (NCCL_LINE.match(strip_env(x)) for x in lines)
                        if mm and re.match(r"NCCL_DEBUG_TIMESTAMP_LEVELS set by environment to \S*(?:ALL|INFO)",
                                           mm.group("msg"))}
        for i, line in enumerate(lines):
            s = strip_env(line)
            m = NCCL_LINE.match(s)
            if m:
                counts["nccl"] += 1
                key = (m.group("host"), m.group("pid"))
                ver_s = proc_ver.get(key, default)
                if ver_s is None:
                    problems.append(f"{f.name}:{i+1}: no NCCL version known for {key}")
                    continue
                ver = vt(ver_s)
                level = "WARN" if m.group("loc") else "INFO"
                msg = m.group("msg")
                if level == "WARN":
                    prev = strip_env(lines[i - 1]) if i else None
                    if prev not in ("",):
                        problems.append(f"{f.name}:{i+1}: WARN not preceded by an empty line")
                    if (ver >= (2, 26, 2)) != bool(m.group("ts")):
                        problems.append(f"{f.name}:{i+1}: WARN timestamp presence wrong for {ver_s}")
                    if (ver >= (2, 30, 7)) != bool(m.group("func")):
                        problems.append(f"{f.name}:{i+1}: WARN (function) presence wrong for {ver_s}")
                elif m.group("ts") and not (ver >= (2, 26, 2) and key in stamped_info):
                    problems.append(f"{f.name}:{i+1}: INFO line with timestamp")
                if level == "INFO" and BANNER.fullmatch(msg) and ver < (2, 22, 3):
                    problems.append(f"{f.name}:{i+1}: INFO version banner before 2.22")
                hits = nccl_match(level, msg, ver)
                k = 1
                while (not hits or hits[0]["fmt"] == "%s") and level == "WARN" and k <= 3 and i + k < len(lines):
                    # multi-line WARN (format with embedded newlines): join the following raw lines
                    msg = msg + "\n" + strip_env(lines[i + k])
                    hits = nccl_match(level, msg, ver)
                    k += 1
                if not hits or hits[0]["fmt"] == "%s":
                    msg = m.group("msg")
                    hits = nccl_match(level, msg, ver)
                if not hits:
                    problems.append(f"{f.name}:{i+1}: NCCL {ver_s} {level}: no catalog format matches: {msg[:140]}")
                    continue
                best = hits[0]
                if best["fmt"] == "%s" and not (BANNER.fullmatch(msg) or msg.startswith("Channel ")):
                    problems.append(f"{f.name}:{i+1}: only the bare '%s' format matches: {msg[:120]}")
                if msg.startswith("Channel ") and best["fmt"] == "%s":
                    if ver >= (2, 23, 4):
                        ok = re.fullmatch(r"Channel \d\d/\d\d :(?: +\d+)+", msg)
                    else:
                        ok = re.fullmatch(r"Channel \d\d/\d\d : (?: {1,3}\d+)+", msg)
                    if not ok:
                        problems.append(f"{f.name}:{i+1}: ring line layout wrong for {ver_s}")
                cm = re.search(r"comm (0x[0-9a-f]+) rank (\d+)", msg)
                if cm:
                    k = (key, cm.group(1))
                    if comm_rank.setdefault(k, cm.group(2)) != cm.group(2):
                        problems.append(f"{f.name}:{i+1}: comm {cm.group(1)} with two ranks")
                continue
            if BANNER.fullmatch(s):
                counts["nccl"] += 1
                if vt(BANNER.fullmatch(s).group(1)) >= (2, 22, 3):
                    problems.append(f"{f.name}:{i+1}: bare printf banner after 2.21")
                continue
            m = C10_LINE.match(s)
            if m:
                counts["c10"] += 1
                msg = m.group("msg")
                if not any(rx.match(msg) for lvl, fmt, rx in TORCH):
                    problems.append(f"{f.name}:{i+1}: c10 message not in torch catalog: {msg[:140]}")
            if re.search(r"NCCL (INFO|WARN)", s) and not m:
                problems.append(f"{f.name}:{i+1}: unparsed NCCL-looking line: {s[:120]}")
    return problems, counts


def main(argv):
    dirs = [Path(a) for a in argv] or sorted(p for p in ROOT.glob("nccl-*") if p.is_dir())
    bad = 0
    for d in dirs:
        probs, counts = check_dir(d)
        status = "ok" if not probs else f"{len(probs)} problem(s)"
        print(f"{d.name}: {counts['nccl']} NCCL lines, {counts['c10']} c10 lines: {status}")
        for p in probs:
            print("   ", p)
        bad += len(probs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
