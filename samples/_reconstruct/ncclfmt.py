"""Helpers to reconstruct NCCL / PyTorch log lines from the shared message catalogs.

Every NCCL line is produced from a printf format that must exist in
shared/catalog/nccl-messages-by-version.tsv for the NCCL version of the process
(first_tag <= version <= last_tag); a format that is not in the catalog for that
version raises at build time.  The layout of the prefix follows
shared/reference/nccl-log-format.md for that version.
"""
from __future__ import annotations

import csv
import datetime as _dt
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def shared_dir() -> Path:
    cands = [os.environ.get("LOGDOC_SHARED"), HERE.parents[2] / "shared", HERE.parents[1] / "shared",
             Path("/work/shared")]
    for c in cands:
        if c and (Path(c) / "catalog" / "nccl-messages-by-version.tsv").exists():
            return Path(c)
    raise SystemExit("shared/catalog not found (set LOGDOC_SHARED)")


def vt(tag: str) -> tuple:
    tag = tag.strip().lstrip("v").split("-")[0].split("+")[0]
    return tuple(int(x) for x in tag.split("."))


class Catalog:
    def __init__(self):
        p = shared_dir() / "catalog" / "nccl-messages-by-version.tsv"
        with open(p, newline="") as fh:
            r = csv.reader(fh, delimiter="\t")
            next(r)
            self.rows = [dict(level=x[0], subsys=x[1], fmt=x[2], kind=x[3], first=vt(x[4]), last=vt(x[5]),
                              locs=x[7]) for x in r]
        self.by_fmt = {}
        for row in self.rows:
            self.by_fmt.setdefault((row["level"], row["fmt"]), []).append(row)

    def find(self, level, fmt, ver):
        for row in self.by_fmt.get((level, fmt), []):
            if row["first"] <= ver <= row["last"]:
                return row
        return None


CAT = Catalog()

_CONV = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                   r"(?P<len>hh|h|ll|l|z|j|t|L)?(?P<conv>[diouxXeEfgGcsp%])")


def cformat(fmt: str, args) -> str:
    out = []
    pos = 0
    for m in _CONV.finditer(fmt):
        out.append(fmt[pos:m.start()].replace("%", "%%"))
        conv = m.group("conv")
        if conv == "%":
            out.append("%%")
        else:
            conv = {"u": "d", "i": "d", "p": "s"}.get(conv, conv)
            spec = "%" + (m.group("flags") or "") + (m.group("width") or "")
            if m.group("prec"):
                spec += "." + m.group("prec")
            out.append(spec + conv)
        pos = m.end()
    out.append(fmt[pos:].replace("%", "%%"))
    return "".join(out) % tuple(args)


class FormatError(Exception):
    pass


class Proc:
    """One NCCL process (host:pid) of a given NCCL version."""

    def __init__(self, log, host, pid, ver, cuda, dev=0):
        self.log, self.host, self.pid = log, host, pid
        self.ver = vt(ver)
        self.verstr, self.cuda, self.dev = ver, cuda, dev

    # -- checks ---------------------------------------------------------
    def _need(self, level, fmt):
        row = CAT.find(level, fmt.replace("\n", "\\n"), self.ver)  # catalog writes newlines as backslash-n
        if row is None:
            raise FormatError(f"NCCL {self.verstr}: no {level} format {fmt!r}")
        return row

    def _pre(self, tid, dev):
        return f"{self.host}:{self.pid}:{tid} [{self.dev if dev is None else dev}]"

    # -- line kinds -----------------------------------------------------
    def info(self, tid, fmt, *args, dev=None):
        self._need("INFO", fmt)
        self.log.append(f"{self._pre(tid, dev)} NCCL INFO {cformat(fmt, args)}")

    def warn(self, tid, loc, when, fmt, *args, dev=None):
        """WARN: empty line first; timestamp from 2.26; `file:line` before `NCCL WARN`."""
        self._need("WARN", fmt)
        ts = ""
        if self.ver >= (2, 26, 2):
            ts = when.strftime("[%Y-%m-%d %H:%M:%S] ")
        self.log.append("")
        self.log.append(f"{ts}{self._pre(tid, dev)} {loc} NCCL WARN {cformat(fmt, args)}")
        return cformat(fmt, args)

    def bt(self, tid, loc, code, suffix="", dev=None):
        """Back-trace line `file:line -> N` (+ suffix ' [Async thread]' / ' [Progress Thread]')."""
        fmt = "%s:%d -> %d" + suffix
        self._need("INFO", fmt)
        f, ln = loc.rsplit(":", 1)
        self.log.append(f"{self._pre(tid, dev)} NCCL INFO {cformat(fmt, (f, int(ln), code))}")

    def version_banner(self, tid=None, rank0=True):
        text = f"NCCL version {self.verstr}+cuda{self.cuda}"
        if self.ver >= (2, 22, 3):
            # INFO on every rank (format '%s'), at NCCL_DEBUG=INFO
            self._need("INFO", "%s")
            self.log.append(f"{self._pre(tid if tid is not None else self.pid, None)} NCCL INFO {text}")
        elif rank0:
            # <= 2.21: plain printf to stdout by the process that initialises rank 0 only
            self.log.append(text)

    def ring(self, tid, ch, nch, order):
        """`Channel 00/02 : 0 1 ...` (rank 0 only), built by graph/rings.cc and printed with '%s'."""
        self._need("INFO", "%s")
        n = len(order)
        if self.ver >= (2, 23, 4):
            w = len(str(n - 1))
            body = "".join(" %*d" % (w, r) for r in order)
            line = "Channel %02d/%02d :%s" % (ch, nch, body)
        else:
            body = "".join(" %3d" % r for r in order[:20])
            line = "Channel %02d/%02d : %s" % (ch, nch, body)
        self.log.append(f"{self._pre(tid, None)} NCCL INFO {line}")

    def trees(self, tid, trees):
        """trees: list of (down0, down1, down2, up) per channel, for this rank."""
        self._need("INFO", "Trees%s")
        rank = self.rank
        s = "".join(" [%d] %d/%d/%d->%d->%d" % (c, d0, d1, d2, rank, up) for c, (d0, d1, d2, up) in enumerate(trees))
        self.log.append(f"{self._pre(tid, None)} NCCL INFO Trees{s}")


def c10(rank, level, when: _dt.datetime, nanos, src, line, msg, env_rank=True):
    """c10 MessageLogger line of torch >= 2.4: [rankR]:[E1129 17:01:53.685814139 file.cpp:NNN] msg"""
    md = when.month * 100 + when.day
    pre = f"[rank{rank}]:" if (rank is not None and env_rank) else ""
    return f"{pre}[{level}{md} {when:%H:%M:%S}.{nanos:09d} {src}:{line}] {msg}"


def pylog(level, when: _dt.datetime, pid, path, line, msg):
    """torch python logger (>= 2.7): W1129 17:06:38.629000 21743 path:line] msg"""
    usec = (when.microsecond // 1000) * 1000
    return f"{level}{when:%m%d %H:%M:%S}.{usec:06d} {pid} {path}:{line}] {msg}"


def child_failed(script, failures, root, width=60):
    """ChildFailedError summary block. failures/root: dicts with time host rank local_rank exitcode pid."""
    def entry(i, f):
        code = f["exitcode"]
        if code < 0:
            sig = {6: "SIGABRT", 9: "SIGKILL", 15: "SIGTERM", 7: "SIGBUS", 11: "SIGSEGV"}[-code]
            ex = f"  exitcode  : {code} (pid: {f['pid']})  ({sig})"
            tb = f"  traceback : Signal {-code} ({sig}) received by PID {f['pid']}"
        else:
            ex = f"  exitcode  : {code} (pid: {f['pid']}) "
            tb = "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        return [f"[{i}]:", f"  time      : {f['time']}", f"  host      : {f['host']}",
                f"  rank      : {f['rank']} (local_rank: {f['local_rank']})", ex, "  error_file: <N/A>", tb]
    out = ["=" * width, f"{script} FAILED", "-" * width, "Failures:"]
    if failures:
        for i, f in enumerate(failures, 1):
            out += entry(i, f)
    else:
        out.append("  <NO_OTHER_FAILURES>")
    out += ["-" * width, "Root Cause (first observed failure):"] + entry(0, root) + ["=" * width]
    return out


def write_sample(name, files: dict, yaml_text: str):
    root = HERE.parent / name
    root.mkdir(parents=True, exist_ok=True)
    for fn, lines in files.items():
        (root / fn).write_text("\n".join(lines) + "\n")
    (root / "sample.yaml").write_text(yaml_text)
