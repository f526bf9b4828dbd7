"""Property-based tests of the whole pipeline: read, unwrap, parse, analyze, explain, report, redact.

For any input (random bytes, real sample lines mutated at random, hostile bytes spliced in, any
line ends, gzip cut anywhere):

* nothing raises, and the report renders as JSON, Markdown and on a terminal;
* every line read is counted once: ``lines_read == irrelevant + relevant`` and
  ``relevant == understood + not_understood``, and events point at lines that exist;
* the fast path and the plain path (``LOGDOC_NO_FASTPATH``) give the same events and counts.

The CI run is derandomized and sized to a few tens of seconds; ``tools/fuzz.py --minutes N`` runs
the same properties (and more) for longer with fresh randomness.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logdoc import fast
from logdoc.pipeline import parse_sources
from logdoc.read.source import Source

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
FULL = bool(os.environ.get("LOGDOC_FUZZ_FULL"))
EXAMPLES = int(os.environ.get("LOGDOC_FUZZ_EXAMPLES", "0")) or None

SETTINGS = dict(deadline=None, derandomize=not FULL, suppress_health_check=list(HealthCheck),
                print_blob=True)


def fuzz_settings(n: int):
    return settings(max_examples=EXAMPLES or n, **SETTINGS)


@lru_cache(maxsize=1)
def sample_lines() -> tuple[str, ...]:
    lines = []
    for p in sorted(SAMPLES.rglob("*")):
        if p.is_file() and p.suffix in (".log", ".txt", ".out", ".err", ".json") and "_reconstruct" not in p.parts:
            lines.extend(p.read_text(encoding="utf-8", errors="replace").splitlines())
    return tuple(lines)


@lru_cache(maxsize=1)
def rules():
    from logdoc.kb import load_rules

    return load_rules()


HOSTILE = ["\x00", "\r", "\r\r\r", "\x1b[31m", "\x1b[0m", "\x1b]0;title\x07", "\x1b[2K", "\t", "\ufffd", "\u202e",
           "\x7f", "\x0c", "\x85", "\u2028", "[", "]", ":", "[rank", "]:[E", "NCCL", " NCCL WARN ", "Traceback",
           "Traceback (most recent call last):", "=" * 60, "[Rank 0] ", "WorkNCCL(", "\n", "...", "> ", "```",
           "1" * 30, "(", ")", "%s", "{x}", "\\", '"', "frame #0: "]


@st.composite
def mutated_lines(draw) -> str:
    """A run of real sample lines, some of them mutated, joined by random line ends."""
    lines = sample_lines()
    start = draw(st.integers(0, len(lines) - 1))
    n = draw(st.integers(1, 60))
    chunk = list(lines[start:start + n])
    out = []
    for line in chunk:
        if draw(st.integers(0, 3)) == 0:
            for _ in range(draw(st.integers(1, 4))):
                op = draw(st.integers(0, 5))
                i = draw(st.integers(0, len(line)))
                if op == 0:
                    line = line[:i] + draw(st.sampled_from(HOSTILE)) + line[i:]
                elif op == 1:
                    j = draw(st.integers(i, min(len(line), i + 40)))
                    line = line[:i] + line[j:]
                elif op == 2:
                    line = line[:i]
                elif op == 3:
                    line = line[:i] + draw(st.text(max_size=20)) + line[i:]
                elif op == 4:
                    line = line + " " + draw(st.sampled_from(lines))           # two lines run together
                else:
                    line = line[:i] + line[i:i + 30] * draw(st.integers(2, 5)) + line[i + 30:]
        out.append(line)
    sep = draw(st.sampled_from(["\n", "\r\n", "\r", "\n\n"]))
    text = sep.join(out)
    if draw(st.booleans()):
        text += sep
    return text


def check_stats(res) -> None:
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant, s
    assert s.relevant == s.understood + s.not_understood, s
    assert s.events == len(res.events), (s.events, len(res.events))
    # every event stands on an understood line; one line may carry several events (records glued
    # on one line by a paste, a message nested in another), so lines, not events, are counted
    assert s.understood >= len({(ev.file, ev.line) for ev in res.events}), s
    for ev in res.events:
        assert 1 <= ev.line <= ev.end_line, ev
        assert ev.end_line <= max(1, s.lines_read), (ev.end_line, s.lines_read)
        assert ev.kind and isinstance(ev.fields, dict)


def explain(res) -> dict:
    from logdoc.api import build_report
    from logdoc.redact import Redactor
    from logdoc.report.markdown import render

    report = build_report(res, rules())
    json.dumps(report)                            # JSON-ready
    render(report)                                # Markdown
    _terminal(report)
    Redactor.for_events(res.events).value(report)
    return report


def _terminal(report: dict) -> None:
    from rich.console import Console

    from logdoc.report.terminal import print_report

    print_report(report, Console(file=io.StringIO(), width=100, no_color=True, color_system=None))


def parse_bytes(data: bytes, name: str = "fuzz.log"):
    return parse_sources([Source(name, stream=io.BytesIO(data))])


def events_key(res):
    return ([(e.kind, e.line, e.end_line, e.template, e.rank, e.host, e.pid, e.text) for e in res.events],
            res.stats.to_dict())


# ------------------------------------------------------------------------------------------------

@fuzz_settings(150)
@given(st.binary(max_size=4000))
def test_random_bytes(data):
    res = parse_bytes(data)
    check_stats(res)
    explain(res)


@fuzz_settings(250)
@given(mutated_lines())
def test_mutated_sample_lines(text):
    res = parse_sources([("fuzz.log", text)])
    check_stats(res)
    explain(res)


@fuzz_settings(100)
@given(mutated_lines(), st.sampled_from(["utf-8", "latin-1", "utf-16-le"]), st.integers(0, 50))
def test_mutated_lines_as_bytes_in_other_encodings_and_cut(text, encoding, cut):
    data = text.encode(encoding, "replace")
    data = data[: max(0, len(data) - cut)]
    res = parse_bytes(data)
    check_stats(res)
    explain(res)


@fuzz_settings(60)
@given(mutated_lines(), st.floats(0, 1), st.booleans())
def test_gzip_cut_or_corrupted_anywhere(text, where, corrupt):
    data = gzip.compress(text.encode("utf-8", "surrogateescape"))
    k = int(len(data) * where)
    if corrupt and k < len(data):
        data = data[:k] + bytes([data[k] ^ 0xFF]) + data[k + 1:]
    else:
        data = data[:k]
    res = parse_bytes(data, "fuzz.log.gz")
    check_stats(res)
    explain(res)


@fuzz_settings(40)
@given(st.lists(mutated_lines(), min_size=2, max_size=5))
def test_several_files(texts):
    res = parse_sources([(f"rank{i}.log", t) for i, t in enumerate(texts)])
    check_stats(res)
    report = explain(res)
    assert report["stats"]["lines_read"] == res.stats.lines_read


@fuzz_settings(80)
@given(mutated_lines())
def test_fast_and_plain_paths_agree(text):
    data = text.encode("utf-8", "surrogateescape")
    before = fast.enabled()
    try:
        fast.set_enabled(False)
        plain = events_key(parse_bytes(data))
        fast.set_enabled(True)
        quick = events_key(parse_bytes(data))
    finally:
        fast.set_enabled(before)
    assert quick == plain


@fuzz_settings(60)
@given(st.lists(st.sampled_from(["\r", "\n", "\r\n", "x", "\x00", "\x1b[1m", " ", "NCCL WARN", "é"]), max_size=300))
def test_line_ends_and_control_runs(parts):
    data = "".join(parts).encode("utf-8")
    res = parse_bytes(data)
    check_stats(res)
    if data[:16] == bytes(16):  # a hole (a log truncated while its writer held it open): dropped, and said
        assert any("NUL bytes at the start skipped" in w for w in res.stats.warnings)
        data = data.lstrip(b"\x00")
    # a file is read as CR-separated only when its first block has CRs and no LF
    if res.stats.skipped_files:
        assert res.stats.skipped_files[0][1].startswith("binary file") and res.stats.lines_read == 0
    elif b"\n" not in data and data:
        assert res.stats.lines_read == data.count(b"\r") + (not data.endswith(b"\r"))
    elif data:
        assert res.stats.lines_read == data.count(b"\n") + (not data.endswith(b"\n"))


def test_zlib_bomb_like_gzip_is_streamed():
    """A small .gz that inflates to 70 MB of one repeated NCCL line, read the way ``explain`` reads
    (bulk noise folded): constant memory, every line counted."""
    import resource
    import time

    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    line = b"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
    data = b"".join(comp.compress(line * 100_000) for _ in range(10)) + comp.flush()
    assert len(data) < 300_000
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    res = parse_sources([Source("bomb.log.gz", stream=io.BytesIO(data))], reduce=True)
    assert res.stats.lines_read == 1_000_000
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant and s.relevant == s.understood + s.not_understood
    assert len(res.events) < 10
    assert time.process_time() - t0 < 60
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 100_000  # KB


@fuzz_settings(60)
@given(st.lists(mutated_lines(), min_size=1, max_size=3))
def test_folding_bulk_noise_keeps_the_diagnoses(texts):
    """``explain`` folds bulk noise (reduce=True); the diagnoses are those of the full event list."""
    from logdoc.api import build_report

    def diagnoses(reduce):
        res = parse_sources([(f"rank{i}.log", t) for i, t in enumerate(texts)], reduce=reduce)
        s = res.stats
        assert s.lines_read == s.irrelevant + s.relevant and s.relevant == s.understood + s.not_understood
        return [(d["id"], d["ranks"]) for d in build_report(res, rules())["diagnoses"]]

    assert diagnoses(True) == diagnoses(False)


ABSURD = {
    "rank": '[rank999999999]: Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nRuntimeError: NCCL error',
    "clients": "[rank0]:[W1129 17:01:53.685814139 TCPStore.cpp:67] Timed out after 1 seconds waiting for clients. "
               "1/99999999999 clients joined.",
    "nranks": "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 99999999999 cudaDev 0 nvmlDev 0 busId 1 commId 0x1 - Init START\n"
              "h:1:1 [0] NCCL WARN Call to connect failed",
    "pg-rank": "[rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:67] [PG ID 0 PG GUID 0(default_pg) Rank 999999999] "
               "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
               "NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
}
# the analysis listed every rank from 0 to the largest number it was told (Job.members, progress.py's
# range(world)): one absurd rank or world size allocated gigabytes. Fixed in f27e975 (MAX_RANKS).


@pytest.mark.parametrize("case", sorted(ABSURD))
def test_absurd_numbers_do_not_exhaust_memory(case):
    """A rank or world size of 10^9 or 10^11 in one line must not make the run allocate gigabytes
    (run in a child limited to 1.5 GB of address space)."""
    import subprocess
    import sys

    code = ("import resource, sys, json; resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20));"
            "sys.path.insert(0, sys.argv[1]);"
            "from logdoc.api import build_report; from logdoc.kb import load_rules; from logdoc.pipeline import parse_text;"
            "r = build_report(parse_text(sys.argv[2]), load_rules()); json.dumps(r); print('ok')")
    res = subprocess.run([sys.executable, "-c", code, str(ROOT), ABSURD[case]], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-500:]


# Inputs found by tools/fuzz.py that crashed stages outside the parser (minimized; fixed in f27e975).
FIXED_CRASHES = {
    "anatomy-bus-id-list": (
        "3: gpu-a24:64412:64412 [1] NCCL INFO comm 0x56b34c2da800 rank 3 nranks 4 cudaDev 1 nvmlDev 1 busId f000 "
        "commId 0x7b19e04c2d8a3f65 - Init START\n"
        "ml-gpu-032:31878:31878 [1] NCCL INFO ncclCommInitRankConfig comm 0x562cb0088530 rank 3 nranks 4 cudaDev 1 "
        "nvmlDev 1 busId 2a000 commId 0x2f61a93d07e4c58b - Init START\n",
        "analysis/anatomy.py: a rank with two bus ids gives a list, added to a set (TypeError)"),
    "cascade-empty-pruned": (
        "=" * 60 + "\n_workers/train.py FAILED\n" + "-" * 60 + "\nFailures:\n" + "-" * 60 + "\n"
        "Root Cause (first observed failure):\n  time      : 2026-11-29_23:11:09\n"
        "  error_file: logs/none_qp45tbl7/attempt_0/3/error.json\n"
        "[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
        "Connection closed by peer [127.0.0.1]:21737. This is typically caused by a remote worker crashing.\n"
        "W1129 23:10:58.861000 30826 site-packages/torch/distributed/elastic/multiprocessing/api.py:1028] Sending "
        "process 30862 closing signal SIGTERM\n",
        "analysis/cascade.py first_failure: pruned is empty (IndexError)"),
    "glued-pieces-joined-in-a-record": (
        '    return f(*args, **kworker rank=0 pid=31006: step 0: all_reduce ok (sum=4)\n'
        'ntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer '
        '[127.0.0.1]\nror. GLHF! \\ud83c\\udfd6\\ufe0f", "extraInfo": {"py_callstack": "Traceback (most recent call '
        'last):\\n  File \\"/root/.pyenv\n/versions/3.11.7/lib/python3.11/site-packages/torch/distributed/elastic/'
        'multiprocessing/errors/__init__.py\\", line 367, \nin wrapper\\n    return f(*args, **kwargs)\\n           '
        '^^^^^^^^^^^^^^^^^^\\n  File \\"/tmp/logdoc-samples/_workers/train.py\nher/api.py", line 194, in __call__\n',
        "pipeline.Feeder._pay: a wrapped line decoded into glued pieces, two of them joined in one record (a frame "
        "line and its rest), was counted twice (lines_read < irrelevant + relevant)"),
    "range-overflow": (
        "[rank92233720368547758081]:[W106 10:41:07.083161205 ProcessGroupNCCL.cpp:1552] WARNING: "
        "destroy_process_group() was not called before program exit, which can leak resources. For more info, "
        "please see https://pytorch.org/docs/stable/distributed.html#shutdown\n",
        "analysis/job.py members(): range() of a 23-digit rank (OverflowError)"),
    "terminal-markup": (
        '[rank2]: RuntimeError: [/__w/pytnk2]:   File "/x/y.py", line 3252, in all_reduce\n',
        "report/terminal.py: a title filled from the log is read as rich markup (MarkupError)"),
}


@pytest.mark.parametrize("case", sorted(FIXED_CRASHES))
def test_crashes_found_by_fuzzing_stay_fixed(case):
    text, _what = FIXED_CRASHES[case]
    res = parse_sources([("fuzz.log", text)])
    check_stats(res)
    explain(res)
