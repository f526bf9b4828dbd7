"""logdoc.blocks: the indexed lookup of the block a bare line continues gives the records of the
full scan (every open block, most recently touched first), on interleaved streams of every sample,
on a generated job log and on hand-made interleavings of tracebacks and wrapped records."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from logdoc.blocks import BlockAssembler, _bare, _compatible, at_traceback_head
from logdoc.envelope import unwrap

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_dir() and not p.name.startswith("_"))


class FullScan(BlockAssembler):
    """The reference: every open block is asked, most recently touched first."""

    asked = 0

    def feed(self, lineno, env, text):
        text, self._head = at_traceback_head(text, 0)
        key = env.stream_key()
        if not self._open:
            return super().feed(lineno, env, text)
        block = self._open.get(key)
        target_key = key
        if _bare(env):
            for k in reversed(list(self._open)):
                self.asked += 1
                if _compatible(k, key) and self._wants(self._open[k], text, env):
                    block, target_key = self._open[k], k
                    break
        try:
            return self._feed(lineno, env, text, key, block, target_key)
        finally:
            self._note(key)
            if target_key != key:
                self._note(target_key)


def records(asm, lines):
    out = []
    for n, text in enumerate(lines, 1):
        env, msg = unwrap(text)
        out.extend(asm.feed(n, env, msg))
    out.extend(asm.flush())
    return sorted((r.line, r.end_line, r.text) for r in out)


def interleave(files, seed):
    """The lines of several files merged in a random order that keeps each file's own order."""
    rng = random.Random(seed)
    queues = [list(reversed(f)) for f in files if f]
    out = []
    while queues:
        q = rng.choice(queues)
        out.append(q.pop())
        if not q:
            queues.remove(q)
    return out


def _read(p: Path) -> list[str]:
    return p.read_text(encoding="utf-8", errors="replace").splitlines()


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_samples_interleaved(sample):
    files = [_read(f) for f in sorted(sample.rglob("*.log"))]
    if not files:
        pytest.skip("no .log file")
    for seed in (1, 2):
        lines = interleave(files, seed) if len(files) > 1 else files[0]
        assert records(BlockAssembler(), lines) == records(FullScan(), lines)


def test_generated_job_log(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "perf"))
    try:
        import gen_job_logs
    finally:
        sys.path.pop(0)
    path = tmp_path / "job.log"
    gen_job_logs.generate("mixed", str(path), 0.4)
    lines = _read(path)
    ref = FullScan()
    want = records(ref, lines)
    assert records(BlockAssembler(), lines) == want
    assert ref.asked > len(lines) // 10     # the case the index is for: many open blocks at a time


def test_tracebacks_wrapped_and_messages_of_many_ranks_interleaved():
    tb = ["[rank{r}]:Traceback (most recent call last):", '[rank{r}]:  File "t.py", line 3, in <module>',
          "[rank{r}]:    main()", "[rank{r}]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
          "[rank{r}]:ncclSystemError: System call failed", "[rank{r}]:Last error:", "[rank{r}]:socket closed"]
    wrapped = ["[rank{r}]:[E1129 12:31:07.118000 1 ProcessGroupNCCL.cpp:617] [Rank {r}] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE,", " NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
               " ran for 600019 milliseconds before timing out."]
    bare = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>', "ValueError: bad",
            "", "Exception raised from run at x.cpp:1 (most recent call first):", "frame #0: f + 0x1",
            "terminate called after throwing an instance of 'c10::Error'", "  what():  boom", "step 1 loss 2.0",
            "[2026-11-29 13:35:06,018][train.py:234][INFO] [rank{r}] step 38720/500000 | loss 2.1", "\tdesync detail",
            "[rank{r}]:[W1129 12:31:07.118000 1 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}]  using GPU"]
    files = []
    for r in range(6):
        files.append([t.format(r=r) for t in tb] + [t.format(r=r) for t in wrapped])
    files.append([t.format(r=7) for t in bare] * 3)
    for seed in range(20):
        lines = interleave(files, seed)
        assert records(BlockAssembler(), lines) == records(FullScan(), lines), seed
