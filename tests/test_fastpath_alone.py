"""The alone lane (logdoc/fast/alone.py) and the quiet runs of the block scan (scan._quiet_run) give
what the plain path gives: a candidate line that opens no record, settled without the assembler and
counted from its bytes once they gave nothing; a candidate line that opens the record of the lines
without an envelope, which the next line ends, counted with that line from their bytes once the
record gave nothing (alone.opener); a run of lines without a keyword under Gate.QUIET
counted at once; a dense region told plain by a rare first byte of the escapes written out as text
(scan._region_is_plain)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from logdoc import fast, paste, pipeline
from logdoc.fast import alone, grep, scan
from logdoc.read import prefilter
from logdoc.read.source import Source

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


fastpath = fast.switched  # the fast paths on or off for a block


def _result(path: Path, reduce: bool):
    res = pipeline.parse_sources([Source(str(path), path=str(path), every_line=False)], reduce=reduce)
    return [e.to_dict() for e in res.events], res.stats.to_dict(), res.folded


# Candidate lines that open no record (warnings printed again and again, a `torch` path or call in a
# print), the same text as a traceback's code line, lines that open records (c10 warnings waiting
# for `Exception raised from`, tracebacks), their continuation lines, and blank or marked noise.
_POOL = [
    ["/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader "
     "will create 16 worker processes in total.", "  warnings.warn(_create_warning_msg("],
    ["/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: the use_reentrant "
     "parameter should be passed explicitly; an exception is raised if it is not."],
    ["[default0]:/opt/conda/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:600: UserWarning: pass it."],
    ["    torch.distributed.barrier()"],
    ["loading torch checkpoint shard 3"],
    ["[rank3]:[W1126 06:01:11.482611 ProcessGroupNCCL.cpp:4115] Warning: barrier()"],
    ["[W1129 10:04:04.583603845 socket.cpp:697] [c10d] The client socket has failed to connect."],
    ["[rank3]:[E1126 06:01:11.482611 ProcessGroupNCCL.cpp:4115] barrier failed",
     "Exception raised from barrier at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:4115 (most "
     "recent call first):", "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in /x/libc10.so)"],
    ["Traceback (most recent call last):", '  File "/w/train.py", line 3, in <module>',
     "    torch.distributed.barrier()", "RuntimeError: boom"],
    ["[rank1]: Traceback (most recent call last):", '[rank1]:   File "/w/train.py", line 3, in <module>'],
    ["[rank1]:     torch.distributed.barrier()", "[rank1]: RuntimeError: boom"],
    [""], ["  "], ["# a comment"], ["\t"], ["ran for 600019 milliseconds"],
    ["Epoch 3:  45%|####5     | 450/1000 [05:55<07:14,  1.27it/s]"],
]


def _log(rng: random.Random, n: int) -> bytes:
    noise = ["step 5 | loss 2.31", "{'loss': 2.3, 'epoch': 0.4}", "saved shard 3"]
    out: list[str] = []
    while len(out) < n:
        if rng.random() < 0.3:
            out += rng.choice(_POOL)
        else:
            out.append(rng.choice(noise))
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("seed", range(4))
def test_alone_lane_and_quiet_runs_same_events(seed, tmp_path, monkeypatch):
    rng = random.Random(seed)
    p = tmp_path / "job.log"
    p.write_bytes(_log(rng, 6000))
    monkeypatch.setattr(pipeline, "BLOCK_SIZE", rng.choice([1 << 12, 1 << 16, 1 << 22]))
    if seed % 2:
        monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    else:
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    plain, quick, again = _plain_quick_again(p, seed < 2, alone._NOTHING, "no line was counted from its bytes")
    for got in (quick, again):
        assert len(got[0]) == len(plain[0])
        for a, b in zip(plain[0], got[0]):
            assert a == b
        assert got[1:] == plain[1:]


def _job_log(tmp_path, lines: list[str], grep_on: bool, monkeypatch):
    """The lines as a job log that the paste repair leaves alone (so the fast path reads it), grep beside the
    parse on or off."""
    p = tmp_path / "job.log"
    p.write_bytes(("\n".join(lines) + "\n").encode())
    assert paste.prepare(Source(str(p), path=str(p), every_line=False))[1] is None  # (its repair: no fast path)
    if grep_on:
        monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    else:
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    return p


def _plain_quick_again(p, reduce: bool, memo, why: str):
    """The plain path's result, the fast path's with its memos empty (``memo`` filled by it: ``why``
    otherwise), and the fast path's again with them full."""
    with fastpath(False):
        plain = _result(p, reduce)
    alone._NOTHING.clear()
    alone._OPENERS.clear()
    alone._EVENT_OPENERS.clear()
    alone._CLOCKED.clear()
    with fastpath(True):
        quick = _result(p, reduce)
        assert memo, why
        again = _result(p, reduce)
    return plain, quick, again


@pytest.mark.parametrize("grep_on,dense", [(False, False), (True, False), (False, True)])
def test_opener_pairs_same_events(grep_on, dense, tmp_path, monkeypatch):
    """A warning that opens the record of the lines without an envelope (its text says ``exception``),
    printed again and again, each time followed by a line that ends that record, or by a line that
    continues it, or by another candidate (a progress bar, a warning: alone.opener_before_bar); among them ranked c10 warnings that open quiet records
    (whose window the opener moves), one with its ``Exception raised from`` line: what the plain path
    gives, the pairs counted from their bytes; in a dense region (more than a quarter of the lines
    candidates: read line by line, scan._dense) too."""
    rng = random.Random(5)
    warn = _POOL[1][0]
    lines: list[str] = []
    while len(lines) < 8000:
        x = rng.random()
        x -= 0.25 if dense else 0.0  # (dense: more than a quarter of the lines are candidates)
        if x < 0.1:
            lines.append(warn)
        elif x < 0.11:
            lines.append("  warnings.warn(")
        elif x < 0.13:
            lines.append(f"[rank{rng.randrange(4)}]:[W1126 06:01:11.482611 ProcessGroupNCCL.cpp:4115] barrier()")
        elif x < 0.135:
            lines += _POOL[7]
        elif x < 0.14:
            lines.append("")
        elif x < 0.145:  # an opener within the window of a ranked c10 warning, a marked line after that window
            lines += (["[rank2]:[W1126 06:01:11.482611 ProcessGroupNCCL.cpp:4115] barrier()"] + ["step 1 | loss 2.3"] * 14
                      + [warn] + ["step 2 | loss 2.3"] * 9 + ["<omitting python frames>"])
        elif x < 0.2:  # (wider than the warning: the paste repair takes it for no cut at a width)
            lines.append(str({f"metric_{i}": rng.random() for i in range(rng.randrange(12, 16))}))
        elif x < 0.22:  # a bar after the warning ends its record (fast.alone.opener_before_bar), a bar alone
            lines += [warn, f"Epoch 3:  {rng.randrange(100)}%|####5     | 450/1000 [05:55<07:14,  1.27it/s]"][rng.randrange(2):]
        elif x < 0.235:  # another warning after it, of the lines without an envelope or of a tee's rank
            lines += [warn, rng.choice([warn, _POOL[0][0], _POOL[2][0]])]
        else:
            lines.append(f"step {rng.randrange(1000)} | loss 2.31")
    p = _job_log(tmp_path, lines, grep_on, monkeypatch)
    dense_reads = []
    real_dense = scan._dense
    monkeypatch.setattr(scan, "_dense", lambda *a: dense_reads.append(1) or real_dense(*a))
    for reduce in (False, True):
        plain, quick, again = _plain_quick_again(p, reduce, alone._OPENERS, "no pair was counted from its bytes")
        assert quick == plain and again == plain
    assert bool(dense_reads) == dense


def _clock(rng: random.Random) -> str:
    """A c10 clock, now and then one of no date (month 13, day 0, day 32) or of another length."""
    md = rng.choice(["1129", "1130", "0101", "1231", "1329", "1100", "1132", "929", "101"] + ["1129"] * 10)
    frac = "".join(rng.choice("0123456789") for _ in range(rng.choice([6, 9, 9, 9, 12])))
    return f"{md} {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{frac}"


@pytest.mark.parametrize("grep_on", [False, True])
def test_event_openers_same_events(grep_on, tmp_path, monkeypatch):
    """A c10 warning of no process printed again at other times (its clock's digits and length vary, some
    of no date), each opening the record of the lines without an envelope that the next line ends and
    giving an event (alone.event_opener_raw), among ranked c10 warnings that open quiet records (unwrapped from
    their bytes but the clock's once seen: alone.clocked_raw), some with their ``Exception raised from`` line,
    a warning of no process followed by a line that continues it, and other candidates: what the plain path
    gives, the repeats made from their bytes."""
    rng = random.Random(13)
    sock = "[W{} socket.cpp:697] [c10d] The client socket has failed to connect to [node-7]:29500 (errno: 111 - Connection refused)."
    lines: list[str] = []
    while len(lines) < 8000:
        x = rng.random()
        if x < 0.06:
            lines.append(sock.format(_clock(rng)))
        elif x < 0.07:
            lines.append(f"[E{_clock(rng)} socket.cpp:697] [c10d] The server socket has failed to listen on any local network address.")
        elif x < 0.075:
            lines += [sock.format(_clock(rng)), "Exception raised from connect at /pytorch/torch/csrc/distributed/c10d/socket.cpp:697 "
                      "(most recent call first):"]
        elif x < 0.09:
            lines.append(f"[rank{rng.randrange(4)}]:[W{_clock(rng)} ProcessGroupNCCL.cpp:4115] barrier()")
        elif x < 0.093:  # a ranked c10 error again at other times, its frames after it (fast.alone.clocked_raw)
            r = rng.randrange(4)
            lines += [f"[rank{r}]:[E{_clock(rng)} ProcessGroupNCCL.cpp:1970] [Rank {r}] NCCL watchdog thread terminated",
                      "Exception raised from ncclCommWatchdog at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970 "
                      "(most recent call first):"][:rng.choice([1, 2])]
        elif x < 0.095:
            lines += _POOL[7]
        elif x < 0.1:
            lines += [sock.format(_clock(rng)), sock.format(_clock(rng))]
        elif x < 0.105:
            lines.append(_POOL[1][0])
        elif x < 0.16:  # (wider than the warnings: the paste repair takes it for no cut at a width)
            lines.append(str({f"metric_{i}": rng.random() for i in range(rng.randrange(12, 16))}))
        else:
            lines.append(f"step {rng.randrange(1000)} | loss 2.31")
    p = _job_log(tmp_path, lines, grep_on, monkeypatch)
    for reduce in (False, True):
        plain, quick, again = _plain_quick_again(p, reduce, alone._EVENT_OPENERS, "no c10 warning was made from its bytes")
        assert quick == plain and again == plain
        assert alone._CLOCKED, "no c10 line was unwrapped from its bytes"
    assert any(e["kind"] == "store.connect_retry" and e["time"] is None for e in plain[0])  # (a clock of no date)


def test_c10_clock_is_the_c10_envelopes():
    """``envelope.C10_CLOCK`` finds the clock where the c10 envelope reads it: on every sample line and on lines
    whose clock was changed, the line unwraps as c10 first, and two lines that differ in their clock's digits
    unwrap alike but for the time, which ``c10_time`` reads."""
    from logdoc.envelope import C10_CLOCK, c10_time, unwrap

    rng = random.Random(17)
    lines = [raw for p in sorted(SAMPLES.glob("*/*.log")) for raw in p.read_bytes().splitlines()]
    found = changed = 0
    for raw in lines:
        m = C10_CLOCK.match(raw)
        if m is None or not raw.isascii():
            continue
        found += 1
        text = raw.decode()
        env, msg = unwrap(text)
        assert env.layers[:1] == ("c10",), text
        assert env.time == c10_time(m[1], m[2]), text
        clock = bytes(rng.choice(b"0123456789") if c in b"0123456789" else c for c in raw[m.start(1):m.end() - 1])
        other = raw[:m.start(1)] + clock + raw[m.end() - 1:]  # (the same clock's shape, other digits)
        m2 = C10_CLOCK.match(other)
        assert m2 is not None and m2.span(1) == m.span(1)
        env2, msg2 = unwrap(other.decode())
        changed += env2.time != env.time
        assert msg2 == msg and env2.time == c10_time(m2[1], m2[2])
        env2.time = env.time
        assert env2 == env, text
    assert found > 50 and changed > 10


def test_quiet_run_is_quiet_skip_of_every_line():
    """``_quiet_run`` on a run of whole lines is true exactly when ``_quiet_skip`` is true of each."""
    r = random.Random(7)
    lines = [raw for p in sorted(SAMPLES.glob("*/*.log")) for raw in p.read_bytes().splitlines()]
    pieces = [b"x", b" ", b"  ", b"#", b"\x01", b"\x7f", b"\t", b"\r", b"ran for", b"what():", b"frame #",
              "\u00e9".encode(), b"step 1", b"loss", b"Successfully processed ranks:", b"\x1b[0m"]
    lines += [b"".join(r.choice(pieces) for _ in range(r.randrange(0, 5))) for _ in range(5000)]
    agreed = 0
    for _ in range(20000):
        run = [r.choice(lines) for _ in range(r.randrange(1, 6))]
        buf = b"noise\n" + b"".join(x + b"\n" for x in run)
        start = len(b"noise\n")
        expect = all(scan._quiet_skip(x) for x in run)
        assert scan._quiet_run(buf, start, len(buf)) == expect, run
        agreed += expect
    assert agreed > 1000


def test_quiet_run_by_shape_is_quiet_run():
    """``_quiet_run_by_shape`` (each line's class by shape) says what ``_quiet_run`` says of a run of lines
    without a keyword (the block scan's runs), and is true only when it is on any run, the same lines
    asked again once their shapes are known."""
    r = random.Random(9)
    lines = [raw for p in sorted(SAMPLES.glob("*/*.log")) for raw in p.read_bytes().splitlines()]
    pieces = [b"x", b" ", b"  ", b"#", b"\x01", b"\x7f", b"\t", b"\r", b"ran for", b"what():", b"frame #",
              "\u00e9".encode(), b"step 1", b"loss 0.25", b"Successfully processed ranks:", b"\x1b[0m", b"NCCL"]
    lines += [b"".join(r.choice(pieces) for _ in range(r.randrange(0, 5))) for _ in range(5000)]
    plain = [x for x in lines if prefilter.CANDIDATE_BYTES.search(x) is None]
    agreed = 0
    for _ in range(2):
        for _ in range(10000):
            run = [r.choice(plain if r.random() < 0.8 else lines) for _ in range(r.randrange(1, 6))]
            buf = b"noise\n" + b"".join(x + b"\n" for x in run)
            start = len(b"noise\n")
            expect = scan._quiet_run(buf, start, len(buf))
            got = scan._quiet_run_by_shape(buf, start, len(buf))
            assert got <= expect, run
            if all(prefilter.CANDIDATE_BYTES.search(x) is None for x in run):
                assert got == expect, run
                agreed += got
    assert agreed > 1000


def test_region_is_plain_is_its_scan():
    """``scan._region_is_plain`` (a rare first byte looked for, then its escapes at each place) says what
    one search per control byte and escape says, on random regions of every sample's bytes and of the
    escapes' pieces, many places of a first byte included, and on regions cut inside an escape."""
    r = random.Random(11)
    data = b"\n".join(p.read_bytes() for p in sorted(SAMPLES.glob("*/*.log")))
    pieces = [b"x", b"#", b"#0", b"#033[", b"^", b"^[", b"^[[", b"\\", b"\\e", b"\\e[", b"\\x1b[", b"\\u001B[",
              b"\\033[", b"\r", b"\x1b", b"\x01", b"\n", b"NCCL INFO ", b"[0] "]
    said = set()
    for _ in range(3000):
        if r.random() < 0.5:
            buf = b"".join(r.choice(pieces) for _ in range(r.randrange(0, 300)))
        else:
            at = r.randrange(0, len(data))
            buf = data[at:at + r.randrange(0, 5000)]
        start = r.randrange(0, len(buf) + 1)
        end = r.randrange(start, len(buf) + 1)
        got = scan._region_is_plain(buf, start, end)
        assert got == scan._region_is_plain_scan(buf, start, end), (buf, start, end)
        said.add(got)
    assert said == {True, False}
