"""Collective launches counted from their bytes (``Lane.launch``: the header read once per header's
bytes, the message by the template's plain pattern, the launch counted into its communicator's tail
without its event) give what the plain path gives (the classifier on every line, every event built
and appended): dense NCCL INFO logs of several processes and threads, several communicators per
process, opCounts that wrap, WARN lines that open records and their continuation lines, lines of a
launch's shape with other hex digits, a blank or a byte not ASCII at the end, a truncated last line,
CRLF line ends; read with grep naming the keyword lines and without, folded and not."""
from __future__ import annotations

import random

import pytest

from logdoc import fast, paste, pipeline
from logdoc.fast import lane, plans, runs
from logdoc.read.source import Source

OPS = ("AllReduce", "AllReduce", "AllGather", "ReduceScatter", "Broadcast")


fastpath = fast.switched  # the fast paths on or off for a block


def _folded_thrice(path, reduce=True):
    """The plain path, the fast path twice (its memos filled the second time), and the fast path without
    runs (``fast.runs``: every line through ``scan._dense``'s loop)."""
    out = []
    for on, with_runs in ((False, True), (True, True), (True, True), (True, False)):
        runs.ON[:] = [with_runs, with_runs]
        try:
            with fastpath(on):
                res = pipeline.parse_sources([Source(str(path), path=str(path))], reduce=reduce)
        finally:
            runs.ON[:] = [True, True]
        out.append(([e.to_dict() for e in res.events], res.stats.to_dict(), res.folded))
    return out


def _dense_job(seed: int, nlines: int) -> list[str]:
    """A dense NCCL INFO log: 12 processes (3 hosts, 2 threads each besides the main one), 3
    communicators each, launches of opCounts that wrap at 2^32, connection lines, WARNs with the
    lines that continue them, and launches damaged in their hex digits, their ends or their bytes."""
    r = random.Random(seed)
    procs = []
    for h in range(3):
        for d in range(4):
            pid = 4000 + 97 * h + d
            comms = [f"0x55d4a{r.randrange(1 << 28):07x}" for _ in range(3)]
            procs.append((f"dgx-b{h:02d}", pid, d, comms))
    ops = {}
    out = []
    for i in range(nlines):
        host, pid, dev, comms = r.choice(procs)
        tid = r.choice((pid, pid, pid + 51, pid + 77))
        head = f"{host}:{pid}:{tid} [{dev}]"
        x = r.random()
        if x < 0.6:
            comm = r.choice(comms)
            k = (pid, comm)
            ops[k] = (ops.get(k, 0xfffffff0 - r.randrange(4)) + 1) & 0xffffffff  # wraps within the log
            line = (f"{head} NCCL INFO {r.choice(OPS)}: opCount {ops[k]:x} sendbuff 0x7f{r.randrange(1 << 32):08x}00 "
                    f"recvbuff 0x7f{r.randrange(1 << 32):08x}00 count {r.choice((1, 4096, 1048576))} datatype 7 op 0 "
                    f"root 0 comm {comm} [nranks=12] stream 0x{r.randrange(1 << 40):x}")
            y = r.random()
            if y < 0.03:  # another hex digit somewhere: the shape is the same, the reading may not be
                at = r.choice([j for j, c in enumerate(line) if c in "0123456789abcdef"])
                line = line[:at] + r.choice("0123456789abcdef") + line[at + 1:]
            elif y < 0.04:
                line += r.choice((" ", "\t"))
            elif y < 0.045:
                line = line.replace("dgx-", "dgx\u00e9-", 1)
            elif y < 0.05:
                line = line.replace(" count ", " count 0x", 1)
            out.append(line)
        elif x < 0.85:
            c = r.randrange(32)
            out.append(f"{head} NCCL INFO Channel {c:02d}/0 : {dev}[{dev}] -> {(dev + 1) % 4}[{(dev + 1) % 4}] via P2P/CUMEM/read")
        elif x < 0.9:
            out.append(f"{head} NCCL INFO Connected all {r.choice(('rings', 'trees'))}")
        elif x < 0.93:
            out.append(f"{head} misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.{r.randrange(9)}<{r.randrange(30000, 60000)}> "
                       "failed : Software caused connection abort")
        elif x < 0.95:
            out.append(f"{head} transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.3<4321> with error 12")
            out.append("Traceback (most recent call last):")
            out.append('  File "train.py", line 7, in <module>')
            out.append("RuntimeError: NCCL communicator was aborted")
        elif x < 0.97:
            out.append(f"{head} NCCL INFO comm {r.choice(comms)} rank {dev} nranks 12 cudaDev {dev} busId 18000 - Destroy COMPLETE")
        else:
            out.append(f"step {i} loss {r.random():.3f}")
    return out


@pytest.mark.parametrize("eol,truncate,no_grep", [("\n", False, ""), ("\n", True, "1"), ("\r\n", True, ""), ("mixed", False, "1")])
def test_launches_from_bytes_same_folded_parse(tmp_path, monkeypatch, eol, truncate, no_grep):
    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)  # read as a large file is (no paste repair: the lanes)
    monkeypatch.setenv("LOGDOC_NO_GREP", no_grep)
    lines = _dense_job(len(eol) + truncate, 7000)
    if eol == "mixed":
        r = random.Random(3)
        text = "".join(line + ("\r\n" if r.random() < 0.2 else "\n") for line in lines)
    else:
        text = eol.join(lines) + eol
    if truncate:  # the last line a launch cut short, without its line end
        text = text + lines[0][: len(lines[0]) // 2 + 7]
    p = tmp_path / "dense.log"
    p.write_bytes(text.encode())
    counted = []
    orig = lane.Lane.launch

    def launch(self, n, raw, plan):
        got = orig(self, n, raw, plan)
        counted.append(got)
        return got

    monkeypatch.setattr(lane.Lane, "launch", launch)
    in_runs = []
    orig_run = runs.run

    def run(lane_, lines_, i, lineno, nothing, message=None):
        j = orig_run(lane_, lines_, i, lineno, nothing, message)
        in_runs.append(j - i)
        return j

    monkeypatch.setattr(runs, "run", run)
    by_message = []
    orig_message = runs.message_raw

    def message_raw(lane_, n, raw):
        got = orig_message(lane_, n, raw)
        by_message.append(got)
        return got

    monkeypatch.setattr(runs, "message_raw", message_raw)
    plans._HEADS.clear()
    out = _folded_thrice(p)
    assert out[0] == out[1] == out[2] == out[3]
    if eol == "\r\n":  # every line cleaned (a CR at its end): the lanes take none
        assert not counted and not any(in_runs)
    else:
        assert sum(counted) > 1500 and not all(counted)
    if eol == "\n":  # (a region that holds a CR is not plain: no runs)
        assert sum(in_runs) > 1500 and 0 in in_runs
        assert sum(by_message) > 50 and not all(by_message)  # (connection lines of other threads)
    unfolded = _folded_thrice(p, reduce=False)
    assert unfolded[0] == unfolded[1] == unfolded[2] == unfolded[3]


@pytest.mark.parametrize("limit", [1, 3, 1 << 10])
def test_launches_kept_per_communicator_same_folded_parse(tmp_path, monkeypatch, limit):
    """The launches a run keeps per communicator (``fast.runs._pending``) and counts later
    (``Lane.count_pending``, ``Reducer.count_launches``: once ``MAX_PENDING`` are kept, before ``Lane.launch`` counts another launch
    of the same tail, and when the source ends) give what the plain path gives: counted at once, by
    threes and by the thousand, grep on and off."""
    monkeypatch.setattr(paste, "REPAIR_MAX", 1 << 10)
    monkeypatch.setenv("LOGDOC_NO_GREP", "1" if limit == 3 else "")
    monkeypatch.setattr(runs, "MAX_PENDING", limit)
    lines = _dense_job(11 + limit, 6000)
    p = tmp_path / "dense.log"
    p.write_text("\n".join(lines) + "\n")
    flushed = []
    orig_flush = lane.Lane.count_pending

    def count_pending(self, q):
        flushed.append(len(q[2]))
        orig_flush(self, q)

    monkeypatch.setattr(lane.Lane, "count_pending", count_pending)
    before = []
    orig_count = lane.Lane.count_launch

    def count_launch(self, tk, t, n, coll, oc, text, build):
        q = self.pending.get(tk)
        before.append(bool(q and q[2]))
        return orig_count(self, tk, t, n, coll, oc, text, build)

    monkeypatch.setattr(lane.Lane, "count_launch", count_launch)
    out = _folded_thrice(p)
    assert out[0] == out[1] == out[2] == out[3]
    assert sum(flushed) > 1500  # (the launches runs kept)
    if limit == 1:
        assert max(flushed) == 1
    else:  # a launch counted by Lane.launch after launches of its tail that a run kept
        assert any(before)
    unfolded = _folded_thrice(p, reduce=False)
    assert unfolded[0] == unfolded[1] == unfolded[2] == unfolded[3]
