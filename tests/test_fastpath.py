"""The fast path gives the same events as the plain path.

Fast path: blocks scanned with ``bytes.find`` for the prefilter keywords (only candidate lines
decoded), shape caches in front of Lark and of the NCCL catalog, compiled transform plans, the
NCCL message memo. Plain path: every line looked at, Lark on every structured message, the catalog
searched in full (what ``LOGDOC_NO_FASTPATH=1`` gives). Both must agree on every sample, on every
rendered catalog line, and on generated and damaged input.
"""
from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest

from logdoc import fast, nccl, pipeline
from logdoc.fast import grep, lane
from logdoc.events import Envelope
from logdoc.read.source import Source

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "perf"))

from nccl_render import catalog_rows, render_line  # noqa: E402


fastpath = fast.switched  # the fast paths on or off for a block


def _result(sources):
    res = pipeline.parse_sources(sources)
    return ([e.to_dict() for e in res.events], res.stats.to_dict(),
            [(u.file, u.line, u.text) for u in res.unrecognized])


def _both(sources_fn):
    with fastpath(False):
        plain = _result(sources_fn())
    with fastpath(True):
        quick = _result(sources_fn())
        again = _result(sources_fn())        # warm caches give the same again
    return plain, quick, again


def _folded_thrice(sources_fn, reduce=True):
    """The plain path, the fast path, and the fast path again (warm caches), each reduced: events,
    stats and folded counts, for the caller to hold equal."""
    out = []
    for on in (False, True, True):
        with fastpath(on):
            res = pipeline.parse_sources(sources_fn(), reduce=reduce)
        out.append(([e.to_dict() for e in res.events], res.stats.to_dict(), res.folded))
    return out


def _same(plain, fast):
    pe, ps, pu = plain
    fe, fs, fu = fast
    assert len(pe) == len(fe)
    for a, b in zip(pe, fe):
        assert a == b
    assert ps == fs
    assert pu == fu


def _same_fast_and_plain(path, monkeypatch, use_grep: bool):
    """The file's parse, plain and fast (grep naming the keyword lines, or the find passes), held equal;
    the plain one."""
    if use_grep:
        monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    else:
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    plain, quick, again = _both(lambda: [Source(str(path), path=str(path))])
    _same(plain, quick)
    _same(plain, again)
    return plain


SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_every_sample_same_events(sample):
    from logdoc.read.source import expand

    plain, fast, again = _both(lambda: expand([str(sample)]))
    _same(plain, fast)
    _same(plain, again)


def _rendered_nccl_lines() -> list[str]:
    out = []
    for row in catalog_rows():
        for tag in sorted({row["first_tag"], row["last_tag"]}):
            out.append(render_line(row["level"], row["format"], tag, row["locations_in_last_tag"]))
    return out


def test_rendered_nccl_catalog_lines_same_events():
    lines = _rendered_nccl_lines()
    assert len(lines) > 3000
    text = "\n".join(lines) + "\n"
    plain, fast, again = _both(lambda: [Source("catalog.log", text=text)])
    _same(plain, fast)
    _same(plain, again)
    # and line by line through the classifier (no block assembly in between)
    with fastpath(False):
        want = [nccl.classify(ln, Envelope()) for ln in lines]
    with fastpath(True):
        for _ in range(2):
            got = [nccl.classify(ln, Envelope()) for ln in lines]
            assert got == want


def test_rendered_torch_and_gloo_lines_same_events():
    from test_fastpath_prefilter import rendered_lines

    lines = [ln for _, ln in rendered_lines() if not ln.startswith("gpu-node-07")]
    text = "\n".join(lines) + "\n"
    plain, fast, again = _both(lambda: [Source("torch.log", text=text)])
    _same(plain, fast)
    _same(plain, again)


def _sample_lines() -> list[bytes]:
    out = []
    for p in sorted(SAMPLES.rglob("*.log")):
        out.extend(p.read_bytes().splitlines())
    return out


NOISE = [b"step 1200 | loss 2.31 | lr 3e-4", b"{'loss': 2.3, 'epoch': 0.4}", b"", b"  ", b"\t",
         b"Epoch 3:  45%|####5     | 450/1000 [05:55<07:14,  1.27it/s]\rEpoch 3:  46%",
         b"\x1b[31mN\x1b[0mCCL colored", b"NC\x07CL bell", b"caf\xc3\xa9 \xff\xfe broken utf-8",
         b"[rank3]:[W1126 06:01:11.482611 ProcessGroupNCCL.cpp:4115] Warning: barrier()",
         b"frame #5: <unknown function> + 0x94ac3 (0x7f22009e5980 in /lib/x86_64-linux-gnu/libc.so.6)",
         b"    x = model(batch)", b"           ^^^^^^^^^^^^", b"====================", b"3: step 5",
         b"[default0]:step 7", b"Traceback (most recent call last):", b"RuntimeError: boom"]


def _mixed(rng: random.Random, n: int) -> bytes:
    pool = _sample_lines()
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.55:
            out.append(rng.choice(NOISE))
        elif r < 0.97:
            out.append(rng.choice(pool))
        elif r < 0.99:
            out.append(b"x" * rng.choice([10, 1000, 5000]))
        else:
            out.append(rng.choice(pool) + b"\r" + rng.choice(NOISE))
    # lines just under and just over the longest line read whole (logdoc.read.lines.MAX_LINE), a few
    # per input: each is a megabyte that every path reads three times
    for size in ((1 << 20) - 3, (1 << 20) + 7):
        out.insert(rng.randrange(len(out) + 1), b"x" * size)
    return b"\n".join(out) + (b"\n" if rng.random() < 0.5 else b"")


@pytest.mark.parametrize("seed", range(6))
def test_shuffled_and_damaged_input_same_events(seed, monkeypatch):
    rng = random.Random(seed)
    data = _mixed(rng, 4000)
    # small blocks put block ends everywhere: in long lines, next to candidates, inside records
    monkeypatch.setattr(pipeline, "BLOCK_SIZE", rng.choice([1 << 12, 1 << 16, 1 << 22]))
    plain, fast, again = _both(lambda: [Source("<stdin>", stream=io.BytesIO(data))])
    _same(plain, fast)
    _same(plain, again)


def test_generated_job_log_same_events(tmp_path):
    import gen_logs

    p = tmp_path / "mixed.log"
    gen_logs.mixed(str(p), 1, seed=5)
    plain, fast, again = _both(lambda: [Source(str(p), path=str(p))])
    _same(plain, fast)
    assert plain[1]["lines_read"] > 5000
    d = tmp_path / "dense.log"
    gen_logs.nccl_dense(str(d), 8000, seed=6)
    plain, fast, again = _both(lambda: [Source(str(d), path=str(d))])
    _same(plain, fast)
    _same(plain, again)


def test_scan_and_line_by_line_feed_the_same_lines(monkeypatch):
    """The block scan skips lines; the rule says which: check on input made to stress it (records
    that stay open for thousands of lines, continuation lines far from their head)."""
    rng = random.Random(11)
    lines = []
    for i in range(30000):
        r = rng.random()
        if r < 0.002:
            lines.append(b"[rank%d]:[E1126 07:28:44.204 ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective "
                         b"operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) "
                         b"ran for 2 milliseconds before timing out." % (i % 7, i % 7))
        elif r < 0.004:
            lines.append(b"\tcontinued %d" % i)
        elif r < 0.005:
            lines.append(b"Traceback (most recent call last):")
        elif r < 0.006:
            lines.append(b"ValueError: bad %d" % i)
        elif r < 0.007:
            lines.append(b"frame #3: foo + 0x1 (0x2 in /lib/libc.so.6)")
        else:
            lines.append(b"step %d loss 1.0" % i)
    data = b"\n".join(lines) + b"\n"
    plain, fast, again = _both(lambda: [Source("<stdin>", stream=io.BytesIO(data))])
    _same(plain, fast)


@pytest.mark.skipif(grep.grep_path() is None, reason="no grep on this machine")
@pytest.mark.parametrize("seed", range(3))
def test_grep_prefilter_same_events(seed, tmp_path, monkeypatch):
    """With grep finding the keyword lines (large plain files), the same as without it."""
    rng = random.Random(100 + seed)
    p = tmp_path / "job.log"
    p.write_bytes(_mixed(rng, 6000))
    monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    monkeypatch.setattr(pipeline, "BLOCK_SIZE", rng.choice([1 << 12, 1 << 16, 1 << 22]))
    used = []
    real_start = grep.GrepHits.start

    def spy(source, stream):
        h = real_start(source, stream)
        used.append(h is not None)
        return h

    monkeypatch.setattr(grep.GrepHits, "start", staticmethod(spy))
    with fastpath(True):
        with_grep = _result([Source(str(p), path=str(p))])
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
        without = _result([Source(str(p), path=str(p))])
    with fastpath(False):
        plain = _result([Source(str(p), path=str(p))])
    assert used and used[0] is True
    _same(plain, with_grep)
    _same(plain, without)


def test_grep_failure_reads_the_file_again(tmp_path, monkeypatch):
    p = tmp_path / "x.log"
    p.write_bytes(b"step 1\n" * 5000 + b"host:1:1 [0] NCCL INFO Using network IB\n" + b"step 2\n" * 5000)
    monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)

    def broken(self, lo, hi, base, limit=None):
        raise grep.GrepFailed("simulated")

    monkeypatch.setattr(grep.GrepHits, "take", broken)
    with fastpath(True):
        res = pipeline.parse_sources([Source(str(p), path=str(p))])
    assert [e.kind for e in res.events] == ["nccl.using_network"]
    assert res.stats.lines_read == 10001 and res.stats.irrelevant == 10000


def test_grep_output_heads_read_line_by_line():
    """``GrepHits._heads`` reads the offset and the line number from the head of every line of grep's output,
    whatever the line's text holds (digits and colons included), as the head pattern at each line
    start reads it; a line without a head fails (GrepFailed) wherever it is."""
    r = random.Random(5)
    pieces = [b"x", b":", b"1", b"12:", b"3:4:", b" ", b"\x1b", "\u2588".encode(), b"NCCL"]
    hits = grep.GrepHits.__new__(grep.GrepHits)
    for _ in range(300):
        lines = [b"%d:%d:" % (r.randrange(1, 10 ** 6), r.randrange(10 ** 9)) + b"".join(
            r.choice(pieces) for _ in range(r.randrange(0, 12))) for _ in range(r.randrange(1, 40))]
        chunk = b"".join(x + b"\n" for x in lines)
        found = grep._GREP_HEAD.findall(chunk)
        assert hits._heads(chunk) == ([int(o) for n, o in found], [int(n) for n, o in found])
        assert len(found) == len(lines)
        bad = list(lines)
        bad.insert(r.randrange(len(bad) + 1), r.choice([b"", b"x1:2:", b"12:34", b":1:2:", b"a"]))
        with pytest.raises(grep.GrepFailed):
            hits._heads(b"".join(x + b"\n" for x in bad))


def test_folded_parse_same_fast_and_plain(tmp_path):
    """With bulk noise folded (explain, digests) the fast path gives the same kept events and the
    same folded counts (the NCCL lane counts repeated lines without building their events)."""
    import gen_logs

    d = tmp_path / "dense.log"
    gen_logs.nccl_dense(str(d), 12000, seed=21)
    m = tmp_path / "mixed.log"
    gen_logs.mixed(str(m), 1, seed=22)
    srcs = lambda: [Source(str(d), path=str(d)), Source(str(m), path=str(m))] + \
        [Source(str(p), path=str(p)) for p in sorted((SAMPLES / "nccl-healthy-2node-16gpu-ib-gdr").glob("*.log"))]
    out = _folded_thrice(srcs)
    assert out[0] == out[1] == out[2]
    assert sum(g["count"] for g in out[0][2]) > 8000


@pytest.mark.parametrize("seed", [31, 32])
def test_bulk_lane_same_shape_other_hex_digits(tmp_path, monkeypatch, seed):
    """The bulk lane counts a line into its folded group from the line's shape (its bytes without
    hex digits) and the full path's own checks. Lines of one shape that differ in their hex digits,
    anywhere (the first word of the message, host names, formats' words: `AllReducf:`, `Trfes`,
    `dgx-0b`), must be read exactly as the plain path reads them, folded or not."""
    import gen_logs
    from logdoc import paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    lane._BULK_PLANS.clear()  # the assertion below sees only this test's plans

    d = tmp_path / "dense.log"
    gen_logs.nccl_dense(str(d), 8000, seed=seed)
    r = random.Random(seed)
    hexd = "0123456789abcdef"
    out = []
    for line in d.read_text().splitlines():
        renamed = r.random() < 0.1
        if renamed:  # host names holding lane_ok's words: such a line may start a record
            line = line.replace("gpu-h100-", r.choice(("Exception-", "xerror-", "Error-")), 1)
        if r.random() < 0.3:
            chars = list(line)
            spots = [i for i, c in enumerate(chars) if c in hexd]
            for i in r.sample(spots, min(len(spots), r.choice((1, 1, 2, 5)))):
                chars[i] = r.choice(hexd)
            line = "".join(chars)
        if r.random() < 0.03:  # a blank at the end: the template's own match on the stripped message
            line += r.choice((" ", "\t", "  "))
        out.append(line)
        if renamed and r.random() < 0.5:
            out.append("\tat the record's next line")  # a continuation line: joined to it if it started one
    m = tmp_path / "mutated.log"
    m.write_text("\n".join(out) + "\n")
    res = _folded_thrice(lambda: [Source(str(m), path=str(m))])
    assert res[0] == res[1] == res[2]
    assert lane._BULK_PLANS, "the bulk lane was not used"
    assert any(p.launch for p in lane._BULK_PLANS.values()), "no collective launch was counted without its event"
    assert any(p.quick for p in lane._BULK_PLANS.values()), "no launch was read by Lane.launch"
    assert any(e["kind"] == "nccl.progress" for e in res[0][0])


def test_pasted_nccl_lines_same_events():
    """Quote markers, bullets and code-block indentation (the paste envelope) in front of NCCL
    lines: the NCCL lane must leave those to unwrap, as the plain path does."""
    lines = []
    for p in sorted((SAMPLES / "nccl-ib-completion-error-12").glob("*.log")):
        for ln in p.read_text().splitlines():
            lines += [ln, ">" + ln, "> " + ln, ">>" + ln, "- " + ln, "    " + ln, "1. " + ln]
    text = "\n".join(lines) + "\n"
    plain, fast, again = _both(lambda: [Source("pasted.log", text=text)])
    _same(plain, fast)
    _same(plain, again)


def test_lane_hit_builds_the_event_the_classifier_gave():
    """A remembered lane line gives its event again, at its own line, with fields of its own. The
    pipeline and the lane build events positionally (faster): guard against a change of Event's
    field order."""
    from logdoc.events import EVENT_FIELDS

    names = list(EVENT_FIELDS)[:14]
    assert names == ["kind", "level", "file", "line", "text", "end_line", "rank", "local_rank", "node_rank",
                     "host", "pid", "time", "template", "fields"]
    hit = lane.LaneHit("nccl.info", "INFO", "t", {"a": [1]}, "h", 7, "2026")
    ev = hit.event("f.log", 3, "x")
    assert (ev.kind, ev.level, ev.file, ev.line, ev.end_line, ev.text, ev.host, ev.pid, ev.time, ev.template,
            ev.fields, ev.rank) == ("nccl.info", "INFO", "f.log", 3, 3, "x", "h", 7, "2026", "t", {"a": [1]}, None)
    ev.fields["a"].append(2)
    assert hit.fields == {"a": [1]}


def test_lane_first_characters_follow_the_assembler():
    """The lane asks blocks.may_start only of lines that begin with a character of MAY_START_FIRST or
    hold one of MAY_START_WORDS: every line may_start accepts must be among them (the starters, the
    continuation lines, and every line of the samples, with and without what precedes a starter)."""
    from logdoc import blocks
    from logdoc.events import Envelope

    texts = [blocks._TB_HEAD, *blocks._CHAIN, *blocks._CONT_PREFIXES, "=====", "[Rank 0] x", "[PG 1 x",
             "terminate called after throwing", "Rank 3 is", "Detected mismatch", "\tx", "ncclSystemError: x",
             "#0 all_reduce from x.py:2", "-- Process 1 terminated with the following error:"]
    root = Path(__file__).resolve().parents[1] / "samples"
    for p in sorted(root.rglob("*.log"))[:200]:
        texts += p.read_text(encoding="utf-8", errors="replace").splitlines()[:2000]
    env = Envelope()
    checked = 0
    for text in texts:
        for t in (text, text.lstrip()):
            if blocks.may_start(t, env) and not any(w in t for w in blocks.MAY_START_WORDS):
                checked += 1
                assert t[0] in blocks.MAY_START_FIRST, t
    assert checked > 20


def test_open_state_kept_equals_the_scan_of_every_open_record(tmp_path):
    """BlockAssembler.open_state is kept up to date as records open, change and close (O(1) a line),
    and close_idle finds idle records in a heap of last lines: they equal their plain twins, the look
    at every open record, after every line fed (close_idle every 7 lines, against a copy)."""
    import copy

    import gen_job_logs

    from logdoc.blocks import BlockAssembler
    from logdoc.envelope import unwrap

    g = tmp_path / "job.log"
    gen_job_logs.generate("mixed", str(g), 0.3)
    files = [g] + [p for d in SAMPLE_DIRS for p in sorted(d.glob("*.log"))]
    states = set()
    closed = bare = 0
    for path in files:
        asm = BlockAssembler()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            env, msg = unwrap(line)
            asm.feed(n, env, msg)
            if n % 7 == 0:
                twin = copy.deepcopy(asm)
                a = [(r.line, r.end_line, r.text) for r in asm.close_idle(n - 40)]
                b = [(r.line, r.end_line, r.text) for r in twin.close_idle_scan(n - 40)]
                assert a == b, (path.name, n)
                closed += len(a)
            got = asm.open_state()
            assert got == asm.open_state_scan(), (path.name, n, line)
            assert asm.bare_quiet() == asm.bare_quiet_scan(), (path.name, n, line)
            bare += asm.bare_quiet()
            states.add(got)
    assert len(states) >= 3 and closed > 100 and bare > 100


@pytest.mark.parametrize("seed", [41, 42])
def test_bar_lane_same_folded_parse(tmp_path, seed, monkeypatch):
    """The bar lane counts a progress bar into its stream's saturated app.progress group without
    assembling or classifying it. Bars of both generators, and bars under torchrun's --tee prefix
    next to c10 messages of the same and other streams (open quiet records it must not close or
    join), glued messages, bars that are continuation lines or open records: the folded parse is
    the plain path's."""
    import gen_job_logs
    import gen_logs

    r = random.Random(seed)
    job = tmp_path / "job.log"
    gen_job_logs.generate("mixed", str(job), 0.4, seed=seed)
    mixed = tmp_path / "mixed.log"
    gen_logs.mixed(str(mixed), 0.4, seed=seed)
    lines = []
    for i in range(6000):
        k = r.randrange(4)
        tee = r.choice((f"[default{k}]:", f"[rank{k}]: ", f"[default{k}]:[rank{k}]: "))
        bar = f"Epoch {i // 900}: {i % 100:3d}%|{'#' * (i % 10):10}| {i % 100}/100 [00:{i % 60:02d}<01:00, 7.5it/s]"
        pick = r.random()
        if pick < 0.5:
            lines.append(f"{tee}{bar}")
        elif pick < 0.6:
            lines.append(bar)
        elif pick < 0.7:
            tee = r.choice((f"[default{k}]:", ""))
            lines.append(f"{tee}[rank{k}]:[W1129 10:00:0{k}.000 ProcessGroupNCCL.cpp:{i}] Watchdog warning {i}")
        elif pick < 0.75:
            lines.append(f"{bar}[rank{k}]:[E1129 10:00:01.000 ProcessGroupNCCL.cpp:1] NCCL error {i}")
        elif pick < 0.8:
            lines.append(f"\t{bar}")
        elif pick < 0.85:
            lines.append(f"Error at {bar}")
        elif pick < 0.9:
            lines.append(f"[default{k}]:frame #{i % 7}: c10::fn() + 0x{i:x}")
        else:
            lines.append(f"[default{k}]:step {i} loss 2.5")
    made = tmp_path / "bars.log"
    made.write_text("\n".join(lines) + "\n")
    read, read_raw = _results_of(monkeypatch, "bar"), _results_of(monkeypatch, "bar_raw")
    out = _folded_thrice(lambda: [Source(str(p), path=str(p)) for p in (job, mixed, made)])
    assert out[0] == out[1] == out[2]
    used = read + read_raw
    assert sum(used) > 2000 and not all(used), "the bar lane was not used, or took every bar"


@pytest.mark.parametrize("use_grep", [True, False])
def test_bare_record_among_ranked_logger_lines(tmp_path, monkeypatch, use_grep):
    """A record of the lines without an envelope (Gate.BARE) among a logger's ranked lines: the first
    line that cannot continue it ends it, whichever stream that line is of, on both paths alike; the
    ranked prints without a keyword are not read in full."""
    rng = random.Random(43)
    heads = ["/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: an exception "
             "will be raised if use_reentrant is not passed", "[W1129 10:00:03.798512173 socket.cpp:697] [c10d] The "
             "client socket has failed to connect to [gpu-1]:29500 (errno: 111 - Connection refused).",
             "RuntimeError: NCCL communicator was aborted"]
    conts = ["  warnings.warn(", "Last error:", "  what():  boom", "frame #3: c10::x() + 0x12", "\tat train.py:3"]
    out = []
    for i in range(2500):
        r = rng.randrange(16)
        out.append(f"[2026-11-29 10:00:{i % 60:02d},{i % 1000:03d}][train.py:231][INFO] [rank{r}] step {i}/500000 | "
                   f"loss 2.{i % 97} | lr 3e-4")
        if rng.random() < 0.15:
            out.append(rng.choice(heads))
            for _ in range(rng.randrange(3)):
                out.append(rng.choice(conts) if rng.random() < 0.7 else
                           f"[2026-11-29 10:00:01,000][train.py:231][INFO] [rank{r}] step {i} tokens/s {i * 7}")
    p = tmp_path / "bare.log"
    p.write_text("\n".join(out) + "\n")
    plain = _same_fast_and_plain(p, monkeypatch, use_grep)
    fed = []
    real = pipeline.Feeder._feed
    monkeypatch.setattr(pipeline.Feeder, "_feed", lambda self, n, text, cand: fed.append(text) or real(self, n, text, cand))
    with fastpath(True):
        pipeline.parse_sources([Source(str(p), path=str(p))])
    steps = sum(1 for t in out if "] step " in t)
    assert sum(1 for t in fed if "] step " in t) < steps // 4  # (all but a few before Gate.BARE)


def test_bare_record_ends_at_the_first_line_that_cannot_continue_it():
    text = "\n".join([
        "RuntimeError: NCCL communicator was aborted",
        "[2026-11-29 10:00:01,000][train.py:231][INFO] [rank3] step 1 | loss 2.1",
        "Last error:",
        "[2026-11-29 10:00:02,000][train.py:231][INFO] [rank3] step 2 | loss 2.0",
    ]) + "\n"
    for on in (False, True):
        with fastpath(on):
            res = pipeline.parse_sources([Source("t.log", text=text)])
        first = [e for e in res.events if e.line == 1]
        assert first and first[0].end_line == 1, (on, [(e.line, e.end_line, e.text) for e in res.events])


@pytest.mark.parametrize("use_grep", [True, False])
def test_quiet_window_continuations_without_keywords(tmp_path, monkeypatch, use_grep):
    """While only quiet records are open (c10 messages of ranked streams), a line within the window
    that holds no keyword is skipped from its bytes unless it may continue one: every continuation
    mark without a keyword in it (`ran for`, `what():`, `<omitting python frames>`, `#`, a tab...)
    must still reach the assembler, with grep naming the keyword lines and without."""
    from logdoc.blocks import CONTINUATION_MARKS
    from logdoc.read import prefilter

    conts = ["ran for 600012 milliseconds before timing out.", "  what():  boom", "<omitting python frames>",
             "#0 all_reduce from /w/train.py:12", "\tat train.py:3", "timed out in blocking wait",
             "Successfully processed ranks: 0, 1", "No ranks successfully processed in monitoredBarrier",
             "Collectives differ in the following aspects: shapes", "frame #3: c10::x() + 0x12",
             "  [Hint: Expected x == y, but received 1 != 2.] (at /paddle/paddle/phi/core/ddim.cc:12)"]
    marks = [k.strip() for k in CONTINUATION_MARKS if not any(w in k for w in prefilter.KEYWORDS)]
    assert all(any(m in c for c in conts) for m in marks if m), "a continuation mark without a line here"
    rng = random.Random(7)
    out = []
    for i in range(3000):
        k = rng.randrange(3)
        out.append(f"[rank{k}]:[W1129 10:00:01.{i:06d} ProcessGroupNCCL.cpp:1552] WARNING: destroy_process_group() was "
                   f"not called before program exit, which can leak resources. {i}")
        for _ in range(rng.randrange(4)):
            other = (k + 1 + rng.randrange(2)) % 3
            if rng.random() < 0.5:
                out.append(f"[rank{other}]: step {i} loss 2.{i % 97} lr 3e-4 tokens/s {i * 7}")
            c = rng.choice(conts)
            out.append(f"[rank{k}]:{c}" if rng.random() < 0.8 else c)
        out.append(f"[rank{k}]: step {i} loss 2.{i % 97} lr 3e-4 tokens/s {i * 7}")
    p = tmp_path / "quiet.log"
    p.write_text("\n".join(out) + "\n")
    plain = _same_fast_and_plain(p, monkeypatch, use_grep)
    assert len(plain[0]) > 20  # continuation lines read as events (C++ frames): none if the window skipped them


def test_grammar_shape_learned_for_a_terminal_with_groups():
    """nccl.lark's DIRECTION terminal (`\\[(send|receive)\\]`) has a group of its own: the shape of a NET
    connection line is still learned (its group made non-capturing), and a line of that shape is read
    from it as Lark reads it."""
    from logdoc import grammar

    texts = ["Channel 02/0 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA",
             "Channel 05/1 : 9[1] -> 1[1] [receive] via NET/IB/1/GDRDMA"]
    with fastpath(True):
        p = grammar.parser("nccl", start="channel")
        for t in texts:
            p.parse(t)
        entry = p.shapes.get(fast.shape(texts[0]))
        assert entry is not None and entry.rx is not None
        hits = p.hits
        got = p.parse("Channel 07/1 : 12[4] -> 4[4] [send] via NET/IB/4/GDRDMA")
        assert p.hits == hits + 1
    assert got == p.lark.parse("Channel 07/1 : 12[4] -> 4[4] [send] via NET/IB/4/GDRDMA", start="channel")
    assert grammar._no_groups(r"\[(send|receive)\]") == r"\[(?:send|receive)\]"
    assert grammar._no_groups(r"[(]x\(y\)") == r"[(]x\(y\)"
    assert grammar._no_groups(r"(a)\1") == r"(a)\1"  # a back-reference: left as it is


def test_lane_message_memo_same_events_across_ranks(tmp_path):
    """Ranks print the same NCCL messages under their own headers: the lane reads a message once
    (``lane._MESSAGE_MEMO``) and applies each line's header (host, pid, tid, device) afresh. A
    generated 50-rank job, with its headers changed on some lines (other hosts, pids, devices, an
    empty host), and the field corpus, read fast and plain (folded and not) give the same events."""
    import gen_logs

    job = tmp_path / "job"
    gen_logs.job_folder(str(job), 50, 0.004, seed=7)
    r = random.Random(7)
    extra = tmp_path / "job" / "rank_mixed.log"
    lines = []
    for p in sorted(job.glob("rank_00[0-3]*.log")):
        for ln in p.read_text().splitlines():
            if " NCCL INFO " in ln and r.random() < 0.3:
                host, _, rest = ln.partition(":")
                ln = r.choice(("", "node-9", host + "x")) + ":" + str(r.randrange(1, 99999)) + ":" + \
                    str(r.randrange(1, 99999)) + " [" + str(r.randrange(0, 16)) + "]" + rest.split("]", 1)[1]
            lines.append(ln)
    extra.write_text("\n".join(lines) + "\n")
    lane._MESSAGE_MEMO.clear()
    srcs = lambda: [Source(str(p), path=str(p)) for p in sorted(job.glob("*.log"))]
    for reduce in (False, True):
        out = _folded_thrice(srcs, reduce=reduce)
        assert out[0] == out[1] == out[2]
    assert len(lane._MESSAGE_MEMO) > 5, "the message memo was not used"
    cases = sorted((ROOT / "tests" / "field" / "cases").glob("*/log.txt"))
    assert cases
    with fastpath(False):
        plain = _result([Source(str(p), path=str(p)) for p in cases])
    with fastpath(True):
        _same(plain, _result([Source(str(p), path=str(p)) for p in cases]))


def _lines_of_samples():
    for p in sorted(SAMPLES.glob("*/*.log")):
        yield from p.read_bytes().splitlines()


def test_byte_and_literal_tests_equal_their_patterns():
    """The literal tests that stand for a pattern led by no literal (tried at every character) give
    what the pattern gives: envelope._gate (_RESIDUE_GATE), scan._quiet_skip (_NOT_QUIET); and an
    envelope's first test (envelope._FIRST_TEST) is true wherever its pattern matches; on every
    sample line and on random lines built of the patterns' pieces."""
    from logdoc import envelope
    from logdoc.fast import scan
    from logdoc.read import source

    tested = [(rx, envelope._FIRST_TEST[fn]) for _c, rx, fn in envelope.ENVELOPES if fn in envelope._FIRST_TEST]
    assert len(tested) == len(envelope._FIRST_TEST)
    r = random.Random(5)
    texts = list(_lines_of_samples())
    pieces = [b"] ", b"1] ", "\u0663] ".encode(), b"Error", b"ERROR:", b"INFO:", b"Exit", b"Failur", b"DEBUG:", b"x",
              b" ", b"#", b"\x01", b"\x7f", b"\t", b"ran for", b"what():", b"frame #", "\u00e9".encode(), b"svc_2",
              b"web-1", b"  |", b"|", b".", b"INFO", b"WARNING x.py:1 -- ", b"DEBUG 11-29 10:20:41 [a.py:1] ",
              b"ERROR:root:", b"CRITICAL", b"^[[0m", b"#033[1m", b"\\x1b[K", b"\r", b"\x1b[31m", b"\\"]
    texts += [b"".join(r.choice(pieces) for _ in range(r.randrange(0, 8))) for _ in range(20000)]
    assert len(texts) > 20000
    for raw in texts:
        assert scan._quiet_skip(raw) == scan._quiet_skip_rx(raw), raw
        assert source._clean(raw) == source._clean_full(raw), raw
        line = raw.decode("utf-8", "replace")
        for pos in {0, len(line) // 3, r.randrange(0, len(line) + 1)}:
            assert envelope._gate(line, pos) == (envelope._RESIDUE_GATE.search(line, pos) is not None), (line, pos)
            for rx, test in tested:
                if rx.match(line, pos) is not None:
                    assert test(line, pos), (line, pos, rx.pattern)


@pytest.mark.parametrize("reduce", [False, True])
def test_dense_lines_with_an_escape_written_as_text(tmp_path, reduce):
    """A dense region's line is read from its bytes only when they are its clean text: an escape
    written out as text (`^[[0m`, `#033[1m`, `\\x1b[0m`), which cleaning removes, even inside a
    keyword (`NC^[[0mCL`), makes the line cleaned as the plain path cleans it."""
    import gen_logs

    d = tmp_path / "dense.log"
    gen_logs.nccl_dense(str(d), 3000, seed=3)
    r = random.Random(3)
    out = []
    for line in d.read_text().splitlines():
        if r.random() < 0.08:
            esc = r.choice(("^[[0m", "#033[1;31m", "\\x1b[0m", "\\e[K"))
            line = line.replace(" NCCL", f" NC{esc}CL", 1) if r.random() < 0.5 else line.replace("INFO ", f"INFO {esc}", 1)
        out.append(line)
    d.write_text("\n".join(out) + "\n")
    res = _folded_thrice(lambda: [Source(str(d), path=str(d))], reduce=reduce)
    assert res[0] == res[1] == res[2]


def _digit_values(parsed) -> list:
    """The parts of a parsed pattern that tell one digit from another (a literal digit, a class
    holding some digits but not all, a group reference)."""
    try:
        from re import _constants as sc
    except ImportError:  # Python < 3.11
        import sre_constants as sc
    digits = set(range(48, 58))
    out = []
    for op, av in parsed:
        if op in (sc.LITERAL, sc.NOT_LITERAL) and av in digits:
            out.append(chr(av))
        elif op is sc.IN:
            cover = set()
            for o, a in av:
                if o is sc.LITERAL:
                    cover.add(a)
                elif o is sc.RANGE:
                    cover |= set(range(a[0], a[1] + 1))
                elif o is sc.CATEGORY and a in (sc.CATEGORY_DIGIT, sc.CATEGORY_WORD):
                    cover |= digits
            if cover & digits and cover & digits != digits:
                out.append(sorted(map(chr, cover & digits)))
        elif op in (sc.MAX_REPEAT, sc.MIN_REPEAT) or op is getattr(sc, "POSSESSIVE_REPEAT", None):
            out += _digit_values(av[2])
        elif op is sc.SUBPATTERN or op is getattr(sc, "ATOMIC_GROUP", None):
            out += _digit_values(av[-1] if op is sc.SUBPATTERN else av)
        elif op is sc.BRANCH:
            for b in av[1]:
                out += _digit_values(b)
        elif op in (sc.ASSERT, sc.ASSERT_NOT):
            out += _digit_values(av[1])
        elif op in (sc.GROUPREF, sc.GROUPREF_EXISTS):
            out.append(op)
    return out


def test_bar_shape_patterns_read_no_digit_value():
    """``Lane.bar_raw`` counts a bar whose bytes, digits read as 0, are those of a bar read before
    without an envelope: that holds only while what ``Lane.bar`` asks of the text (unwrap and its
    residue, may_start, bar_alone, quiet_ok, LANE_HEAD) never tells one digit from another. Every
    pattern of those modules reads a digit as a digit only; their literals with digits are refused
    by the memo (``bars._BAR_REFUSED``); the envelopes filed by a first digit are the same for all."""
    import re as _re

    try:
        from re import _parser as sp
    except ImportError:  # Python < 3.11
        import sre_parse as sp
    from logdoc import blocks, envelope, residue
    from logdoc.classify import torch as torch_cls
    from logdoc.fast import bars, plans
    from logdoc.lazyre import Pattern

    found = []

    def collect(x, depth=0):
        if isinstance(x, (Pattern, _re.Pattern)):
            found.append(x)
        elif depth < 4 and isinstance(x, (list, tuple, set, frozenset, dict)):
            for y in (x.values() if isinstance(x, dict) else x):
                collect(y, depth + 1)

    for mod in (envelope, residue, blocks):
        for value in vars(mod).values():
            collect(value)
    found += [torch_cls._TQDM, plans.LANE_HEAD]
    assert len(found) > 60
    bad = {}
    for p in found:
        flags = p._source[1] if hasattr(p, "_source") else p.flags
        got = _digit_values(sp.parse(p.pattern, flags))
        if got:
            bad[p.pattern[:80]] = got
    assert not bad, bad
    firsts = {tuple(envelope._BY_FIRST.get(d, ())) for d in "0123456789"}
    assert len(firsts) == 1
    literals = set()
    for mod in (envelope, residue, blocks):
        for name, value in vars(mod).items():
            vals = [value] if isinstance(value, str) else list(value) if isinstance(value, (tuple, frozenset)) else []
            for v in vals:
                if isinstance(v, str) and any(c.isdigit() for c in v) and not name.startswith("__"):
                    literals.add((mod.__name__, name, v))
    # the regex sources (_TS, _HOST), the first digits of the envelope table, and residue's `[c10d`
    allowed = {("logdoc.envelope", "_TS"), ("logdoc.envelope", "_HOST"), ("logdoc.envelope", "ENVELOPES"),
               ("logdoc.residue", "_PROTECTED")}
    assert {(m, n) for m, n, _ in literals} <= allowed, literals
    assert all(v.encode().translate(bars._DIGIT0) in b"".join(bars._BAR_REFUSED) or m != "logdoc.residue"
               or not any(c.isdigit() for c in v) for m, n, v in literals)
    assert b"c00d" in bars._BAR_REFUSED and b"#000[" in bars._BAR_REFUSED


def _results_of(monkeypatch, method: str) -> list:
    """What ``lane.Lane.<method>`` returns at each call while the test runs (the method itself unchanged)."""
    got, orig = [], getattr(lane.Lane, method)

    def recording(self, *args, **kw):
        out = orig(self, *args, **kw)
        got.append(out)
        return out

    monkeypatch.setattr(lane.Lane, method, recording)
    return got


def test_bar_raw_counts_bars_from_their_bytes(tmp_path, monkeypatch):
    """Bars that differ only in their digits (CR-redrawn or not, with and without a tee prefix, the
    refused literals among them) are counted from their bytes, and the folded parse is the plain path's."""
    from logdoc import paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    r = random.Random(7)
    lines = []
    for i in range(4000):
        pct = r.randrange(101)
        bar = f"Epoch {r.randrange(200)}: {pct:3d}%|{'█' * (pct // 10):10}| {pct * 10}/1000 [0{r.randrange(10)}:{r.randrange(60):02d}<01:00, {r.random() * 9:.2f}it/s]"
        pick = r.random()
        if pick < 0.5:
            lines.append(bar)
        elif pick < 0.6:
            lines.append(f"{bar}\r{bar}")
        elif pick < 0.7:
            lines.append(f"[default{r.randrange(4)}]:{bar}")
        elif pick < 0.75:
            lines.append(f"[c{r.randrange(100)}d] {bar}")
        elif pick < 0.8:
            lines.append(f"#0{r.randrange(100)}[ {bar}")
        elif pick < 0.85:
            lines.append(f"/x/torch/y.py:{i}: UserWarning: step {i}")
        else:
            lines.append(f"step {i} loss {r.random():.3f}")
    made = tmp_path / "bars.log"
    made.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counted = _results_of(monkeypatch, "bar_raw")
    out = _folded_thrice(lambda: [Source(str(made), path=str(made))])
    assert out[0] == out[1] == out[2]
    assert sum(counted) > 1000


def test_unwrap_memo_is_unwrap():
    """``fast.memo.unwrap`` (a fed line unwrapped once per text) gives what ``envelope.unwrap`` gives,
    on every sample line, read first and again, and never the same envelope twice (it is changed)."""
    from logdoc.envelope import unwrap
    from logdoc.fast import memo

    memo._UNWRAP_MEMO.clear()
    seen = 0
    for path in sorted(SAMPLES.rglob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            want = unwrap(line)
            first, again = memo.unwrap(line), memo.unwrap(line)
            assert first == want and again == want, line
            assert again[0] is not first[0]
            seen += 1
    assert seen > 1000 and memo._UNWRAP_MEMO


def test_lane_message_fold_same_folded_parse(tmp_path, monkeypatch):
    """A process printing an NCCL message again from another thread (gen_job_logs' nccl mix): the
    lane counts it into its full group from the message memo without its event
    (``Lane._fold_message``); the folded parse is the plain path's."""
    import gen_job_logs
    from logdoc import paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    job = tmp_path / "nccl.log"
    gen_job_logs.generate("nccl", str(job), 0.5, seed=5)
    used = _results_of(monkeypatch, "_fold_message")
    out = _folded_thrice(lambda: [Source(str(job), path=str(job))])
    assert out[0] == out[1] == out[2]
    assert sum(used) > 100 and not all(used)


def test_lane_fact_of_a_full_family_same_folded_parse(tmp_path, monkeypatch):
    """NCCL init facts that one process prints again with a value that keeps changing (the memory an init used, a
    CPU core, a peer that closed a connection): past ``digest.FACT_KEEP`` distinct lines of a family, each is counted
    into the family's group (``Reducer.full_family``) by ``Lane._fold_message`` without its event; the folded
    parse is the plain path's (events, counts, the digest's folded groups), threads of one process and repeats
    among them."""
    from logdoc import digest, paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    r = random.Random(11)
    lines = []
    for i in range(3000):
        rank = r.randrange(8)
        head = f"node-{rank // 4}:{4000 + rank}:{4000 + rank + r.choice((0, 0, 51, 52))} [{rank % 4}] NCCL INFO "
        pick = r.random()
        if pick < 0.4:
            lines.append(head + f"ncclCommInitRank comm 0x55d4a{rank:07x} rank {rank} nranks 8 cudaDev {rank % 4} "
                                f"nvmlDev {rank % 4} busId {rank % 4}a000 commId 0x3f6a2b9c1d7e4058 localSize 296 "
                                f"used {r.randrange(10 ** 8, 10 ** 9)} bytes on core {r.randrange(96)} - Init COMPLETE")
        elif pick < 0.6:
            lines.append(head + f"[Proxy Service] Device {rank % 4} CPU core {r.randrange(8 if i % 2 else 96)}")
        elif pick < 0.7:
            lines.append(head + f"[Service thread] Connection closed by localRank {r.randrange(4)}")
        elif pick < 0.8:
            lines.append(head + f"Channel {r.randrange(32):02d}/0 : {rank}[{rank % 4}] -> {(rank + 1) % 8}[{(rank + 1) % 4}] via P2P/CUMEM")
        else:
            lines.append(f"step {i} loss {r.random():.3f}")
    made = tmp_path / "facts.log"
    made.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = []
    orig = digest.Reducer.full_family

    def recording(self, ev, key):
        got = orig(self, ev, key)
        found.append(got is not None)
        return got

    monkeypatch.setattr(digest.Reducer, "full_family", recording)
    out = _folded_thrice(lambda: [Source(str(made), path=str(made))])
    assert out[0] == out[1] == out[2]
    assert sum(found) > 500


_CONV_VALUES = {"d": ("0", "1", "3", "7", "8", "15", "31", "64", "255", "1000", "123456"),
                "x": ("0", "1a2b", "ff", "7", "1a000", "dead0"), "p": ("0x7f3a2c001200", "0x55d4a8a7089e", "0x1")}


def _varied_message(fmt: str, rng: random.Random) -> str:
    """A catalog format rendered with numbers drawn anew for each conversion."""
    from nccl_render import CONV, render_message

    def sub(m):
        conv = m.group(0)[-1:]
        if conv in "diu":
            return rng.choice(_CONV_VALUES["d"])
        if conv in "xX":
            return rng.choice(_CONV_VALUES["x"])
        if conv == "p":
            return rng.choice(_CONV_VALUES["p"])
        return render_message(m.group(0))

    return CONV.sub(sub, fmt.split("\\n")[0]).replace("\\t", "\t").replace("\\\\", "\\")


def _structured_messages(rng: random.Random) -> list[str]:
    """Messages of the grammar's families (nccl.lark) with drawn numbers, a result code among them."""
    n = lambda: rng.choice(_CONV_VALUES["d"])  # noqa: E731
    p = lambda: rng.choice(_CONV_VALUES["p"])  # noqa: E731
    return [
        f"Channel {rng.randrange(32):02d}/{rng.choice((0, 1, 32))} : {n()}[{n()}] -> {n()}[{n()}] via P2P/CUMEM/read",
        f"Channel {rng.randrange(32):02d}/0 : {n()}[{n()}] -> {n()}[{n()}] [send] via NET/IB/{n()}/GDRDMA",
        f"Channel {rng.randrange(32):02d}/0 : {n()}[{n()}] -> {n()}[{n()}] [recv] via NET/IB/{n()}/GDRDMA",
        f"Channel {rng.randrange(32):02d}/32 : " + " ".join(n() for _ in range(8)),
        f"ncclCommInitRank comm {p()} rank {n()} nranks {n()} cudaDev {n()} nvmlDev {n()} busId "
        f"{rng.choice(('1a000', '7000', 'ba000', '1d000'))} commId {p()} - Init START",
        f"comm {p()} rank {n()} nRanks {n()} nNodes {n()} localRanks {n()} localRank {n()} MNNVL {n()}",
        f"comm {p()} rank {n()} nranks {n()} cudaDev {n()} busId {n()}000 - Destroy COMPLETE",
        f"NET/IB : Using [0]mlx5_{n()}:1/IB [1]mlx5_{n()}:1/RoCE [RO]; OOB eth{n()}:10.{n()}.0.{n()}<0>",
        f"Bootstrap : Using eth0:10.1.{n()}.{n()}<0>",
        f"NCCL_IB_GID_INDEX set by environment to {n()}",
        f"Connected all trees, PXN {n()} GDR {n()}",
        f"init.cc:{n()} -> {rng.randrange(10)}",
        f"transport/net.cc:{n()} -> {rng.randrange(10)} (thread {n()})",
        f"NCCL version 2.{n()}.{n()}+cuda12.{n()}",
    ]


def test_message_readings_equal_the_classifier():
    """A lane message's reading learned by shape (``fast.readings``) equals the classifier's reading
    on every message it answers: the catalog's INFO formats and the grammar's families rendered
    again and again with other numbers (a format whose reading depends on a number other than by
    copying it, a result code's name, must be refused or give the same)."""
    from logdoc.fast import readings

    from logdoc.blocks import Record

    head = "gpu-node-07:2345:2400 [1] NCCL INFO "

    def classifier(msg: str):
        text = head + msg
        return lane._reading(pipeline.classify_record(Record(1, 1, Envelope(), text), "x"), text, msg,
                             "gpu-node-07", 2345, 2400, 1)

    rng = random.Random(18)
    formats = sorted({row["format"] for row in catalog_rows() if row["level"] == "INFO" and "%" in row["format"]})
    assert len(formats) > 500
    rounds = [[_varied_message(f, rng) for f in formats] + _structured_messages(rng) for _ in range(8)]
    readings._PLANS.clear()
    answered = refused_codes = 0
    with fastpath(True):
        for msgs in rounds:
            for msg in msgs:
                if len(head + msg) >= 640:
                    continue
                want = classifier(msg)
                got = readings.reading(msg)
                if got is not None:
                    answered += 1
                    assert want is not None and want[:3] == got[:3] and readings.same(got[3], want[3]), msg
                elif want is not None:
                    readings.observe(msg, want, classifier)
    assert answered > 1000, "the learned readings were not used"
    for plans in readings._PLANS.values():  # a result code's name is no copy of its number: refused
        refused_codes += sum(1 for p in plans if p.rx.pattern.startswith(r"init\.cc:") and p.build is not None)
    assert refused_codes == 0
    readings._PLANS.clear()


def test_job_log_with_learned_readings_same_events(tmp_path):
    """A generated job's NCCL INFO log (its ranks print the same messages with other numbers): the
    same events and folded counts fast (the learned readings in use) and plain."""
    import gen_job_logs
    from logdoc.fast import readings

    p = tmp_path / "jobnccl.log"
    gen_job_logs.generate("nccl", str(p), 1.5)
    readings._PLANS.clear()
    lane._MESSAGE_MEMO.clear()
    src = lambda: [Source(str(p), path=str(p))]  # noqa: E731
    for reduce in (False, True):
        out = _folded_thrice(src, reduce=reduce)
        assert out[0] == out[1] == out[2]
    assert sum(1 for plans in readings._PLANS.values() for q in plans if q.build is not None and not q.checks) > 10


def test_lane_message_fold_from_bytes_same_folded_parse(tmp_path, monkeypatch):
    """A dense NCCL INFO log whose processes print the same lines again (gen_logs' connections, rings
    and trees): a line ``Lane._fold_message`` counted into its full group twice is counted from its
    bytes the next time (``Lane._remember_raw``, ``_RAW_LANE``, ``Lane.fold``), in two files read in one
    parse (another source's reducer: the remembered hit read as a lane line read before), with and
    without grep; the folded parse is the plain path's."""
    import gen_logs
    from logdoc import paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    gen_logs.nccl_dense(str(a), 9000, seed=4)
    gen_logs.nccl_dense(str(b), 3000, seed=4)
    from_bytes = []
    orig = lane.Lane.fold

    def fold(self, n, seen):
        out = orig(self, n, seen)
        from_bytes.append(out and seen.hit.group_key is None)
        return out

    monkeypatch.setattr(lane.Lane, "fold", fold)
    from logdoc.fast import runs

    for no_grep, with_runs in (("1", False), ("", False), ("1", True)):
        monkeypatch.setenv("LOGDOC_NO_GREP", no_grep)
        monkeypatch.setattr(runs, "ON", [with_runs, with_runs])  # (fast.runs counts them inline, without Lane.fold)
        lane._RAW_LANE.clear()
        lane._RAW_ONCE.clear()
        del from_bytes[:]
        out = _folded_thrice(lambda: [Source(str(a), path=str(a)), Source(str(b), path=str(b))])
        assert out[0] == out[1] == out[2]
        assert sum(from_bytes) > 300 or with_runs
