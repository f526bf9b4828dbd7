#!/usr/bin/env python3
"""The long fuzz run: hostile and damaged input through the whole logdoc pipeline, for N minutes.

    python tools/fuzz.py --minutes 10                 # in-process pipeline + the CLI now and then
    python tools/fuzz.py --minutes 60 --seed 7 --out fuzz-findings/
    python tools/fuzz.py --minutes 5 --regex          # then every attack on every catalog format
    python tools/fuzz.py --replay fuzz-findings/case-000123.bin

Each case is one generated input: random bytes; a run of real sample lines (``samples/``) mutated
at the byte level (hostile bytes spliced in, runs repeated, lines cut or run together, line ends
rewritten, invalid UTF-8, NULs, ANSI/OSC sequences); a damaged paste (hard wraps, ``...``
elisions, markdown quotes, fences and bullets, ranks interleaved mid-line); an over-long line; and
any of these gzipped, then cut or corrupted. A worker process reads each case the way the CLI does
and checks:

* no exception escapes the parse, the analysis, the report (JSON, Markdown, terminal) or redaction;
* every line is counted once (``lines_read == irrelevant + relevant``, ``relevant == understood +
  not_understood``) and events point at lines that exist;
* the fast path and the plain path (``LOGDOC_NO_FASTPATH``) give the same events and counts, and
  folding bulk noise (what ``explain`` does) gives the same diagnoses;
* the case finishes within ``--slow`` seconds (a case over ``--hang`` seconds is killed and kept).

Every ``--cli-every`` cases the input is also written to a file and given to ``python -m logdoc
explain`` in a child: the status must be 0, 1 or 2, with no traceback and one ``logdoc:`` line per
message. Failing, slow and hanging inputs are saved in ``--out`` (with the traceback) for
``--replay``. The exit status is 1 when anything was found. The CI runs the same properties for
about a minute (``tests/test_fuzz_pipeline.py``, ``tests/test_hostile_*.py``).
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HOSTILE = [b"\x00", b"\r", b"\r\r\r", b"\x1b[31m", b"\x1b[0m", b"\x1b]0;title\x07", b"\x1b[2K\x1b[1A", b"\t",
           b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x7f", b"\x0c",
           b"\xc2\x85", b"\xe2\x80\xa8", b"[", b"]", b":", b"[rank", b"]:[E", b"NCCL", b" NCCL WARN ",
           b"Traceback (most recent call last):", b"=" * 60, b"[Rank 0] ", b"WorkNCCL(", b"\n", b"...", b"> ",
           b"```", b"1" * 700, b"(", b")", b"%s", b"{x}", b"\\", b'"', b"frame #0: ", b"RuntimeError: " * 20,
           b"a" * 5000, b" " * 5000, b"::ffff:10.1.2.3", b"host-1:1:2 [0] ", b"\xef\xbb\xbf"]


# --------------------------------------------------------------------------------------------------
# generating cases

def load_lines() -> list[bytes]:
    lines: list[bytes] = []
    for p in sorted((ROOT / "samples").rglob("*")):
        if p.is_file() and p.name != "sample.yaml" and p.suffix not in (".py", ".md", ".yaml") and "_" != p.name[0]:
            lines.extend(p.read_bytes().splitlines())
    return lines or [b"h:1:2 [0] NCCL WARN x"]


def mutate(rnd: random.Random, data: bytes, lines: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.randint(1, 25)):
        op = rnd.randint(0, 8)
        i = rnd.randint(0, len(b))
        if op == 0 and b:
            del b[i:i + rnd.randint(1, 60)]
        elif op == 1:
            b[i:i] = rnd.choice(HOSTILE)
        elif op == 2:
            b[i:i] = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(1, 12)))
        elif op == 3:
            b = b[:i]
        elif op == 4:
            j = rnd.randint(i, min(len(b), i + 300))
            b[i:i] = b[i:j] * rnd.randint(2, 40)
        elif op == 5:
            b[i:i] = rnd.choice(lines)
        elif op == 6:
            b = bytearray(bytes(b).replace(b"\n", rnd.choice([b"\r", b" ", b"\r\n", b"", b"\n\n"]), rnd.randint(1, 50)))
        elif op == 7:
            b[i:i] = str(rnd.choice([0, -1, 2**31, 2**63, 10**30, 99999999999])).encode()
        else:
            k = rnd.randint(0, max(0, len(b) - 1))
            if b:
                b[k] = rnd.randint(0, 255)
    return bytes(b)


def damaged_paste(rnd: random.Random, chunk: list[bytes]) -> bytes:
    """What chat tools and tired humans do to logs."""
    out: list[bytes] = []
    how = rnd.sample(["wrap", "quote", "fence", "bullet", "elide", "interleave", "indent"], rnd.randint(1, 3))
    width = rnd.choice([40, 72, 80, 100, 120])
    lines = list(chunk)
    if "interleave" in how and len(lines) > 3:
        half = len(lines) // 2
        a, c = lines[:half], lines[half:]
        lines = []
        for x, y in zip(a, c):
            cut = rnd.randint(0, len(x))
            lines.append(x[:cut] + y)
            lines.append(x[cut:])
    if "elide" in how and len(lines) > 4:
        i = rnd.randint(1, len(lines) - 2)
        lines[i:i + rnd.randint(1, 10)] = [rnd.choice([b"...", b"[...]", b"(2000 lines omitted)", b"\xe2\x80\xa6"])]
    for line in lines:
        pieces = [line[k:k + width] for k in range(0, len(line), width)] if "wrap" in how and line else [line]
        for p in pieces:
            if "quote" in how:
                p = b"> " + p
            if "bullet" in how:
                p = rnd.choice([b"- ", b"* ", b"1. "]) + p
            if "indent" in how:
                p = b"    " + p
            out.append(p)
    if "fence" in how:
        out = [rnd.choice([b"```", b"```text", b"~~~"])] + out + [b"```"]
    return b"\n".join(out) + b"\n"


def make_case(rnd: random.Random, lines: list[bytes]) -> tuple[str, bytes]:
    kind = rnd.choices(["bytes", "mutated", "paste", "long", "clean"], weights=[1, 6, 3, 1, 1])[0]
    if kind == "bytes":
        data = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 5000)))
    else:
        start = rnd.randint(0, len(lines) - 1)
        chunk = lines[start:start + rnd.randint(1, 200)]
        if kind == "paste":
            data = damaged_paste(rnd, chunk)
        elif kind == "long":
            data = b"\n".join(chunk[:3]) + b"\n" + rnd.choice(chunk) * rnd.randint(2000, 20000) + b"\n" + b"\n".join(chunk[3:])
        else:
            data = b"\n".join(chunk) + rnd.choice([b"\n", b""])
        if kind == "mutated":
            data = mutate(rnd, data, lines)
    name = "case.log"
    if rnd.random() < 0.1:
        data = gzip.compress(data)
        name = "case.log.gz"
        r = rnd.random()
        if r < 0.4:
            data = data[: rnd.randint(0, len(data))]
        elif r < 0.6 and data:
            k = rnd.randint(0, len(data) - 1)
            data = data[:k] + bytes([data[k] ^ (1 << rnd.randint(0, 7))]) + data[k + 1:]
    return name, data


# --------------------------------------------------------------------------------------------------
# checking a case (in the worker)

_RULES = None


def check(name: str, data: bytes, deep: bool) -> dict:
    global _RULES
    from rich.console import Console

    from logdoc import fast
    from logdoc.api import build_report
    from logdoc.kb import load_rules
    from logdoc.pipeline import parse_sources
    from logdoc.redact import Redactor
    from logdoc.report.markdown import render
    from logdoc.report.terminal import print_report
    from logdoc.read.source import Source

    if _RULES is None:
        _RULES = load_rules()

    def parse(reduce=False):
        return parse_sources([Source(name, stream=io.BytesIO(data))], reduce=reduce)

    key = lambda r: ([(e.kind, e.line, e.end_line, e.template, e.rank, e.host, e.text) for e in r.events],  # noqa: E731
                     r.stats.to_dict())
    res = parse()
    parsed = key(res) if deep else None  # before the analysis, which fills ranks in
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant, f"lines: {s}"
    assert s.relevant == s.understood + s.not_understood, f"relevant: {s}"
    assert s.events == len(res.events), "event count"
    for ev in res.events:
        assert 1 <= ev.line <= ev.end_line <= max(1, s.lines_read), f"event lines {ev.line}-{ev.end_line}"
    report = build_report(res, _RULES)
    json.dumps(report)
    render(report)
    print_report(report, Console(file=io.StringIO(), width=100, no_color=True, color_system=None))
    Redactor.for_events(res.events).value(report)
    if deep:
        fast.set_enabled(False)
        try:
            plain = parse()
        finally:
            fast.set_enabled(True)
        assert key(plain) == parsed, "fast and plain paths disagree"
        folded = build_report(parse(reduce=True), _RULES)
        assert [(d["id"], d["ranks"]) for d in folded["diagnoses"]] == \
            [(d["id"], d["ranks"]) for d in report["diagnoses"]], "folding changed the diagnoses"
    return {"lines": s.lines_read, "events": s.events}


def worker(conn) -> None:
    while True:
        msg = conn.recv()
        if msg is None:
            return
        name, data, deep = msg
        t0 = time.perf_counter()
        try:
            out = check(name, data, deep)
            conn.send(("ok", out, time.perf_counter() - t0))
        except BaseException as exc:  # noqa: BLE001 - everything is a finding
            conn.send(("fail", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}", time.perf_counter() - t0))


class Worker:
    def __init__(self):
        self.start()

    def start(self):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, name, data, deep, hang):
        self.conn.send((name, data, deep))
        if not self.conn.poll(hang):
            self.proc.kill()
            self.proc.join()
            self.start()
            return "hang", f"no answer within {hang} s", hang
        return self.conn.recv()

    def stop(self):
        try:
            self.conn.send(None)
            self.proc.join(5)
        finally:
            if self.proc.is_alive():
                self.proc.kill()


def cli_check(name: str, data: bytes, timeout: float) -> str | None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
        try:
            res = subprocess.run([sys.executable, "-m", "logdoc", "explain", str(p), "--format", "json"],
                                 capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return f"CLI did not finish within {timeout} s"
    if res.returncode not in (0, 1, 2):
        return f"CLI exit status {res.returncode}: {res.stderr[-1000:]}"
    bad = [line for line in res.stderr.splitlines() if not line.startswith("logdoc: ")]
    if bad or "Traceback" in res.stderr:
        return f"CLI wrote something other than logdoc: lines: {bad[:5]}"
    return None


# --------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5, help="how long to run (default 5)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock, printed)")
    ap.add_argument("--out", default="fuzz-findings", help="where failing inputs are kept (default fuzz-findings/)")
    ap.add_argument("--slow", type=float, default=5.0, help="a case slower than this many seconds is kept")
    ap.add_argument("--hang", type=float, default=60.0, help="a case is killed after this many seconds")
    ap.add_argument("--cli-every", type=int, default=50, help="give every Nth case to the CLI too (0: never)")
    ap.add_argument("--deep-every", type=int, default=5, help="compare paths and folding on every Nth case")
    ap.add_argument("--regex", action="store_true", help="then run every attack on every pattern (tests/test_hostile_regex.py, full)")
    ap.add_argument("--replay", metavar="FILE", help="check one saved input and print what happens")
    args = ap.parse_args(argv)

    if args.replay:
        data = Path(args.replay).read_bytes()
        name = "case.log.gz" if data[:2] == b"\x1f\x8b" else "case.log"
        try:
            print(check(name, data, True))
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
            return 1
        problem = cli_check(name, data, args.hang)
        print(problem or "CLI: ok")
        return 1 if problem else 0

    seed = args.seed if args.seed is not None else int(time.time())
    rnd = random.Random(seed)
    print(f"fuzz: seed {seed}, {args.minutes} minutes, findings in {args.out}/", flush=True)
    lines = load_lines()
    out = Path(args.out)
    w = Worker()
    found = 0
    n = 0
    slowest = 0.0
    deadline = time.monotonic() + args.minutes * 60
    last_report = time.monotonic()
    try:
        while time.monotonic() < deadline:
            n += 1
            name, data = make_case(rnd, lines)
            deep = args.deep_every > 0 and n % args.deep_every == 0
            status, info, took = w.run(name, data, deep, args.hang)
            slowest = max(slowest, took)
            problem = None
            if status != "ok":
                problem = info
            elif took > args.slow:
                problem = f"slow: {took:.1f} s"
            elif args.cli_every and n % args.cli_every == 0:
                problem = cli_check(name, data, args.hang)
            if problem:
                found += 1
                out.mkdir(parents=True, exist_ok=True)
                stem = out / f"case-{seed}-{n:06d}"
                stem.with_suffix(".bin").write_bytes(data)
                stem.with_suffix(".txt").write_text(f"{name}\n{problem}\n")
                print(f"fuzz: case {n}: {problem.splitlines()[0]} -> {stem}.bin", flush=True)
            if time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                print(f"fuzz: {n} cases, {found} findings, slowest {slowest:.2f} s", flush=True)
    except KeyboardInterrupt:
        print("fuzz: interrupted", flush=True)
    finally:
        w.stop()
    print(f"fuzz: done: {n} cases (seed {seed}), {found} findings, slowest case {slowest:.2f} s")
    if args.regex:
        env = {**os.environ, "LOGDOC_FUZZ_FULL": "1", "PYTHONPATH": str(ROOT)}
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                str(ROOT / "tests" / "test_hostile_regex.py")], env=env, cwd=ROOT)
        found += code != 0
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
