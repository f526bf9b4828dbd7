"""Ordinary training output in a dense region (logdoc/fast/scan.py ``_dense``): per-rank step lines,
dict prints, dataloader and checkpoint lines, warnings' source lines, read while only quiet records
are open (a c10 warning of a ranked stream, Gate.QUIET) or the record of the lines without an
envelope (Gate.BARE), are counted from their bytes, as the block scan's quiet skip counts them; the
parse is the plain path's on both generators' output, with grep naming the keyword lines and without."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from logdoc import fast, pipeline
from logdoc.fast import grep
from logdoc.read.source import Source

sys.path.insert(0, str(Path(__file__).resolve().parent / "perf"))

fastpath = fast.switched  # the fast paths on or off for a block


def _parse(paths, reduce):
    res = pipeline.parse_sources([Source(str(p), path=str(p)) for p in paths], reduce=reduce)
    return ([e.to_dict() for e in res.events], res.stats.to_dict(),
            [(u.file, u.line, u.text) for u in res.unrecognized], res.folded)


def _dense_with_quiet_records(path: Path, seed: int) -> None:
    """NCCL INFO lines (a dense region) among c10 warnings of ranked streams, python warnings and their
    source lines, and a rank's ordinary prints, some of which may continue a record (a mark, a tab, a
    blank line) or are not plain ASCII."""
    rng = random.Random(seed)
    ordinary = ["[2026-11-29 10:00:{s:02d},123][train.py:231][INFO] [rank{r}] step {i}/500000 | loss 2.{i} | lr 3e-4",
                "[default{r}]:{{'loss': 2.{i}, 'grad_norm': 0.77, 'learning_rate': 1.3e-04, 'epoch': 0.19}}",
                "[2026-11-29 10:00:{s:02d},591][checkpoint.py:142][INFO] [rank{r}] saved shard {r} of step_{i}",
                "  return fn(*args, **kwargs)", "  warnings.warn(", "[rank{r}]: step {i} tokens/s {i}7",
                "[rank{r}]: step {i} ran for 12 s", "#{i} all_reduce", "\tat train.py:{i}", "", "   ",
                "[rank{r}]: step {i} loss 2.{i} µs 3", "[rank{r}]:  what():  boom {i}"]
    heads = ["[rank{r}]:[W1129 10:00:01.{i:06d} ProcessGroupNCCL.cpp:1552] WARNING: destroy_process_group() was "
             "not called before program exit, which can leak resources.",
             "[W1129 10:00:03.{i:06d} socket.cpp:697] [c10d] The client socket has failed to connect to "
             "[gpu-1]:29500 (errno: 111 - Connection refused).",
             "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: an exception "
             "will be raised if use_reentrant is not passed"]
    out = []
    for i in range(4000):
        r = rng.randrange(8)
        pick = rng.random()
        if pick < 0.35:
            out.append(f"gpu-{r}:4000{r}:4000{r} [{r}] NCCL INFO AllReduce: opCount {i:x} sendbuff 0x7f00 recvbuff "
                       f"0x7f00 count {i} datatype 7 op 0 root 0 comm 0x55d4a09e377{r} [nranks=8] stream 0x55db")
        elif pick < 0.42:
            out.append(rng.choice(heads).format(r=r, i=i))
        else:
            out.append(rng.choice(ordinary).format(r=r, i=i, s=i % 60))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.parametrize("use_grep", [True, False])
@pytest.mark.parametrize("reduce", [False, True])
def test_ordinary_lines_in_a_dense_region_same_parse(tmp_path, monkeypatch, use_grep, reduce):
    import gen_job_logs
    import gen_logs

    if use_grep:
        monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    else:
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    made = tmp_path / "made.log"
    _dense_with_quiet_records(made, 3)
    job = tmp_path / "job.log"
    gen_job_logs.generate("mixed", str(job), 0.5, seed=11)
    mixed = tmp_path / "mixed.log"
    gen_logs.mixed(str(mixed), 0.5, seed=12)
    paths = [made, job, mixed]
    with fastpath(False):
        plain = _parse(paths, reduce)
    with fastpath(True):
        quick = _parse(paths, reduce)
        again = _parse(paths, reduce)
    assert plain[1] == quick[1] == again[1]
    assert plain[2] == quick[2] == again[2]
    assert plain[3] == quick[3] == again[3]
    assert len(plain[0]) == len(quick[0]) == len(again[0])
    for a, b, c in zip(*(x[0] for x in (plain, quick, again))):
        assert a == b == c


def test_ordinary_lines_under_quiet_records_not_fed(tmp_path, monkeypatch):
    """In a dense region with a quiet record open, a rank's ordinary print (no keyword, plain ASCII,
    no continuation mark) does not reach Feeder.line; the lines that may continue a record do."""
    monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    made = tmp_path / "made.log"
    _dense_with_quiet_records(made, 5)
    seen = []
    real = pipeline.Feeder.line
    monkeypatch.setattr(pipeline.Feeder, "line",
                        lambda self, n, text, cand, raw=None: seen.append(text) or real(self, n, text, cand, raw))
    with fastpath(True):
        pipeline.parse_sources([Source(str(made), path=str(made))], reduce=True)
    text = made.read_text(encoding="utf-8").splitlines()
    steps = sum(1 for t in text if "][train.py:231][INFO]" in t)
    assert steps > 150
    assert sum(1 for t in seen if "][train.py:231][INFO]" in t) < steps // 10
    assert any("what():" in t for t in seen) and any(t.startswith("\tat ") for t in seen)


def test_line_class_by_shape_is_its_plain_twin(tmp_path):
    """scan.line_class, remembered by the line's shape (digits made 0), says what its plain twin says of
    every line: sample lines, both generators' lines, lines of one shape that differ in a keyword made of
    digits (`c10d` / `c20d`), lines with marks, tabs, blanks, control bytes and UTF-8, in several orders."""
    import gen_job_logs
    import gen_logs

    from logdoc.fast import scan

    lines = [b"[rank1]: step 3 c10d x", b"[rank1]: step 3 c20d x", b"[rank1]: step 3 c10e x", b"c10d", b"c99d",
             b"step 12 ran for 3 s", b"step 12 ran  for 3 s", b"#12", b"12", b"  ", b"", b"\tstep 1", b"step 1\x1b[0m",
             b"step 1 \xc2\xb5s", b"step \xff 1", b"NC1CL", b"NCCL 1", b"[1]:[2]", b"1%|2", b"Xid 79", b"X1d 79"]
    samples = Path(__file__).resolve().parents[1] / "samples"
    for p in sorted(samples.glob("*/*.log")):
        lines += p.read_bytes().splitlines()
    job, mixed = tmp_path / "job.log", tmp_path / "mixed.log"
    gen_job_logs.generate("mixed", str(job), 0.2, seed=4)
    gen_logs.mixed(str(mixed), 0.2, seed=4)
    lines += job.read_bytes().splitlines() + mixed.read_bytes().splitlines()
    rng = random.Random(9)
    made = []
    for _ in range(5000):
        base = rng.choice(lines)
        cut = rng.randrange(len(base) + 1)
        made.append(base[:cut] + str(rng.randrange(10 ** rng.randrange(1, 6))).encode() + base[cut:])
    lines += made
    for order in range(3):
        scan._SHAPES.clear()
        seq = list(lines)
        random.Random(order).shuffle(seq)
        for raw in seq:
            assert scan.line_class(raw) == scan.line_class_plain(raw), raw
    assert len(scan._SHAPES) > 100


@pytest.mark.parametrize("sep", [b"\n", b"\r"])
def test_candidate_starts_by_shape_equal_the_find_passes(tmp_path, sep):
    """scan.candidate_starts (each line's class by shape) gives the find passes' line starts, or None
    past the same budget: sample logs, both generators' output, lines with ESC, keywords at a line's
    start and end, a region that starts inside the buffer."""
    import gen_job_logs
    import gen_logs

    from logdoc.fast import scan

    job, mixed = tmp_path / "job.log", tmp_path / "mixed.log"
    gen_job_logs.generate("mixed", str(job), 0.2, seed=6)
    gen_logs.mixed(str(mixed), 0.2, seed=6)
    samples = Path(__file__).resolve().parents[1] / "samples"
    texts = [p.read_bytes() for p in sorted(samples.glob("*/*.log"))] + [job.read_bytes(), mixed.read_bytes()]
    texts.append(b"NCCL\nx\n\x1b[0mstep 1\nstep 2 c10d\nNCCL INFO\n\nTraceback\nok 3\nrror")
    rng = random.Random(2)
    for text in texts:
        lines = [ln.replace(b"\r", b" ") for ln in text.split(b"\n") if ln]
        if not lines:
            continue
        head = b"head line NCCL" + sep
        buf = head + sep.join(lines) + sep
        start = len(head)
        want = scan.candidate_starts_find(buf, start, len(buf), sep, len(lines))
        assert scan.candidate_starts(buf, start, len(buf), sep, len(lines)) == want
        for budget in (0, len(want) - 1, len(want), rng.randrange(len(want) + 1)):
            assert (scan.candidate_starts(buf, start, len(buf), sep, budget)
                    == scan.candidate_starts_find(buf, start, len(buf), sep, budget))


def _launches_in_quiet_windows(path: Path, seed: int) -> None:
    """A sparse log (most lines a rank's ordinary prints): every few lines a c10 warning of a ranked
    stream (a quiet record, and the window of lines looked at after it) and collective launches of a few
    shapes within that window, some of them repeated byte for byte, a traceback now and then; over
    1 MB, so that it is read as a large input (logdoc.paste.EVERY_LINE_INPUT_MAX: a short one is read line by line)."""
    rng = random.Random(seed)
    out = []
    for i in range(14000):
        r = rng.randrange(8)
        pick = rng.random()
        if pick < 0.05:
            out.append(f"[rank{r}]:[W1129 10:00:01.{i:06d} ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}]  "
                       f"using GPU {r} to perform barrier as devices used by this process are currently unknown.")
        elif pick < 0.12:
            coll = rng.choice(["AllReduce", "Broadcast", "AllGather"])
            op = i if rng.random() < 0.8 else 7
            out.append(f"gpu-{r}:4000{r}:4000{r} [{r}] NCCL INFO {coll}: opCount {op:x} sendbuff 0x7f00 recvbuff "
                       f"0x7f00 count {4 ** rng.randrange(12)} datatype 7 op 0 root 0 comm 0x55d4a09e377{r} [nranks=8] stream 0")
        elif pick < 0.125:
            out += ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "    step()",
                    f"RuntimeError: boom {i}"]
        else:
            out.append(f"[2026-11-29 10:00:{i % 60:02d},123][train.py:231][INFO] [rank{r}] step {i}/500000 | loss 2.{i}")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.parametrize("use_grep", [True, False])
@pytest.mark.parametrize("reduce", [False, True])
def test_lane_lines_in_a_quiet_window_same_parse(tmp_path, monkeypatch, use_grep, reduce):
    """The block scan's lines within a quiet record's window (Feeder.needs_every_line): an NCCL line is
    read by the lanes from its bytes (Lane.hit, Lane.bulk) as outside the window, with the plain path's
    parse; with folding, the launches of a known shape there no longer reach Feeder.line."""
    if use_grep:
        monkeypatch.setattr(grep.GrepHits, "MIN_SIZE", 0)
    else:
        monkeypatch.setenv("LOGDOC_NO_GREP", "1")
    made = tmp_path / "made.log"
    _launches_in_quiet_windows(made, 8)
    with fastpath(False):
        plain = _parse([made], reduce)
    seen = []
    real = pipeline.Feeder.line
    monkeypatch.setattr(pipeline.Feeder, "line",
                        lambda self, n, text, cand, raw=None: seen.append(text) or real(self, n, text, cand, raw))
    with fastpath(True):
        quick = _parse([made], reduce)
        again = _parse([made], reduce)
    assert plain == quick == again
    launches = sum(1 for t in made.read_text(encoding="utf-8").splitlines() if " opCount " in t)
    assert made.stat().st_size > 1 << 20 and launches > 600
    if reduce:
        assert sum(1 for t in seen if " opCount " in t) < launches // 2
