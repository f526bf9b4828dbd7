"""Hostile input through the command line: ``python -m logdoc explain`` in a child process.

Whatever the input, the command ends by itself with status 0 (no failure found), 1 (the job failed:
an error) or 2 (bad usage, input that is only unreadable), never with a traceback or logdoc's "internal error"
(3); everything it skipped is named on one line of standard error; memory stays bounded.
"""
from __future__ import annotations

import gzip
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "nccl-socket-fallback" / "node0.log"
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1"}


def run(*args: str, timeout: float = 60, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """Run logdoc in a child; fail (not hang) after ``timeout`` seconds."""
    return subprocess.run([sys.executable, "-m", "logdoc", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or ENV, cwd=ROOT, **kw)


def check(res: subprocess.CompletedProcess, codes=(0, 1)) -> list[str]:
    """The contract: an allowed status, no traceback, every stderr line starts with `logdoc:`."""
    assert res.returncode in codes, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr[-2000:]
    lines = res.stderr.splitlines()
    assert all(line.startswith("logdoc: ") for line in lines), lines
    return lines


def skipped(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("logdoc: skipped ")]


def test_empty_file(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    res = run("explain", str(tmp_path / "empty.log"))
    lines = check(res, codes=(0,))
    assert "read 0 lines in 1 file" in lines[-1]
    assert "input is empty" in res.stdout and "No known failure signature" not in res.stdout


@pytest.mark.parametrize("name,data", [
    ("only-cr.log", b"\r" * 10_000),
    ("no-newline.log", b"h:1:2 [0] NCCL WARN Call to connect returned Connection refused, retrying"),
    ("nul.log", b"abc\x00def\n" * 3 + b"h:1:2 [0] NCCL WARN x\x00y\n"),
    ("ansi.log", b"\x1b[31mh:1:2 [0] NCCL WARN red\x1b[0m\n\x1b]0;title\x07\x1b[2K\x1b[1A\rtorch\x9b31m\n"),
    ("invalid-utf8.log", b"\xff\xfe\xc3(\xe2\x82 NCCL WARN \xed\xa0\x80 surrogate\n\x80\x81\n"),
    ("crlf-mixed.log", b"a\r\nb\rc\nRuntimeError: x\r\r\n"),
    ("controls.log", bytes(range(0, 32)) * 50 + b"\n"),
], ids=["only-cr", "no-newline", "nul", "ansi", "invalid-utf8", "crlf-mixed", "controls"])
def test_odd_bytes(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    if name == "controls.log":  # NULs beyond what text holds: a binary file, the only input: status 2
        lines = check(run("explain", str(p), "--format", "json"), codes=(2,))
        assert lines[-1].startswith("logdoc: error: nothing to read")
        return
    lines = check(run("explain", str(p), "--format", "json"))
    assert lines[-1].startswith("logdoc: read ")


def test_binary_file_is_skipped_with_one_line(tmp_path):
    (tmp_path / "core").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 5000 + os.urandom(3000))
    (tmp_path / "rank0.log").write_bytes(SAMPLE.read_bytes())
    lines = check(run("explain", str(tmp_path)))
    assert skipped(lines) == [f"logdoc: skipped {tmp_path / 'core'}: binary file"]


def test_gzip_truncated_corrupt_and_trailing_garbage(tmp_path):
    good = gzip.compress(SAMPLE.read_bytes())
    (tmp_path / "a-truncated.log.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "b-corrupt.log.gz").write_bytes(b"\x1f\x8b" + os.urandom(200))
    (tmp_path / "c-trailing.log.gz").write_bytes(good + b"garbage after the stream")
    (tmp_path / "d-empty.gz").write_bytes(b"\x1f\x8b")
    res = run("explain", str(tmp_path), "--format", "json")
    lines = check(res)
    text = "\n".join(lines)
    assert "a-truncated.log.gz: stopped reading at line" in text
    assert f"skipped {tmp_path / 'b-corrupt.log.gz'}: corrupt gzip" in text
    assert "c-trailing.log.gz" in text  # a warning: the lines before the garbage are read
    import json

    stats = json.loads(res.stdout)["stats"]
    assert stats["lines_read"] > 270  # the truncated half and the whole trailing one
    assert stats["lines_read"] == stats["irrelevant"] + stats["relevant"]


def test_folder_with_links_fifos_and_sockets(tmp_path):
    """Symlink loops, a link to the folder itself, a broken link, a FIFO nobody writes to and a
    socket: none may hang the run, each is named once."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "rank0.log").write_bytes(SAMPLE.read_bytes())
    os.symlink("loop-b", d / "loop-a")
    os.symlink("loop-a", d / "loop-b")
    os.symlink("..", d / "parent")            # a link to a folder: not followed
    os.symlink(str(d), d / "self")
    os.symlink("nowhere", d / "broken")
    os.mkfifo(d / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(d / "sock"))
    except OSError:  # pragma: no cover - path too long for a socket
        sock = None
    res = run("explain", str(d), timeout=60)
    lines = check(res)
    names = sorted(line.split(": ")[1].rsplit("/", 1)[1] for line in skipped(lines))
    want = ["broken", "fifo", "loop-a", "loop-b"] + (["sock"] if sock else [])
    assert names == sorted(want), lines
    assert any("fifo: not a regular file (a FIFO)" in line for line in lines)
    assert "read 270 lines in 1 file" in lines[-1]
    lines = check(run("explain", str(d / "*"), timeout=60))  # a glob is like a folder: the FIFO is skipped
    assert any("fifo: not a regular file (a FIFO)" in line for line in lines)
    if sock:
        sock.close()


def test_a_pipe_named_on_the_command_line_is_read(tmp_path):
    """`logdoc explain <(zcat job.log.gz)`: a path that is a pipe (not seekable) is read as a stream."""
    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "logdoc", "explain", f"/dev/fd/{r}", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT,
                            pass_fds=(r,))
    os.close(r)
    with os.fdopen(w, "wb") as fh:
        fh.write(gzip.compress(SAMPLE.read_bytes()))
    out, err = proc.communicate(timeout=60)
    lines = check(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "read 270 lines in 1 file" in lines[-1]


def test_a_file_that_fails_on_first_read():
    """A read error (EIO here, as for a vanished network file) skips the file with its reason."""
    if not Path("/proc/self/mem").exists():
        pytest.skip("needs Linux /proc")
    lines = check(run("explain", "/proc/self/mem"), codes=(2,))  # its only input unreadable
    assert lines[0] == "logdoc: skipped /proc/self/mem: Input/output error"


def test_unreadable_file(tmp_path):
    p = tmp_path / "locked.log"
    p.write_bytes(SAMPLE.read_bytes())
    p.chmod(0)
    try:
        if os.geteuid() == 0:
            # root reads anything: check the same path in process with the error open() gives
            from logdoc.pipeline import parse_sources
            from logdoc.read.source import Source

            class Locked(Source):
                def open(self):
                    raise PermissionError(13, "Permission denied", str(p))

            res = parse_sources([Locked(str(p), path=str(p))])
            assert res.stats.skipped_files == [(str(p), "Permission denied")]
            assert res.stats.lines_read == 0
        else:  # pragma: no cover - CI runs as root
            lines = check(run("explain", str(p)), codes=(2,))
            assert lines[0].startswith("logdoc: error: cannot read")
            lines = check(run("explain", str(tmp_path)))
            assert skipped(lines) == [f"logdoc: skipped {p}: Permission denied"]
    finally:
        p.chmod(0o644)


@pytest.mark.parametrize("args,needle", [
    (["explain", "/nonexistent/x.log"], "no such file or folder"),
    (["explain", "/nonexistent/*.log"], "no file matches"),
    (["explain", str(SAMPLE), "--format", "yaml"], "unknown --format"),
    (["explain", str(SAMPLE), "--rules", "/nonexistent"], "no such folder"),
])
def test_bad_usage_is_one_line_and_status_2(args, needle):
    res = run(*args)
    lines = check(res, codes=(2,))
    assert len(lines) == 1 and needle in lines[0], lines


def test_stdin_binary_and_empty():
    res = run("explain", "-", input="")
    check(res, codes=(0,))
    assert "input is empty" in res.stdout
    res = subprocess.run([sys.executable, "-m", "logdoc", "explain", "-"], input=b"\x00" * 10_000,
                         capture_output=True, timeout=60, env=ENV, cwd=ROOT)
    lines = check(subprocess.CompletedProcess(res.args, res.returncode, res.stdout.decode(), res.stderr.decode()),
                  codes=(2,))  # only unreadable input: bad input, one line per skip and one error
    assert skipped(lines) == ["logdoc: skipped <stdin>: binary file"]
    assert lines[-1].startswith("logdoc: error: nothing to read")


def test_only_binary_files_exit_2_and_a_dying_job_exits_1(tmp_path):
    (tmp_path / "core").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 5000)
    lines = check(run("explain", str(tmp_path / "core")), codes=(2,))
    assert lines[-1] == "logdoc: error: nothing to read: the input was skipped"
    # the straggler's own finding is a warning, but the ranks waiting for it died: the job failed
    check(run("explain", str(ROOT / "samples" / "gloo-straggler-rank-slows-down")), codes=(1,))


def _max_rss_of_children_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@pytest.fixture(scope="module")
def line_100mb(tmp_path_factory):
    p = tmp_path_factory.mktemp("big") / "one-line.log"
    with open(p, "wb") as fh:
        fh.write(b"h:1:2 [0] NCCL WARN before the long line\n")
        chunk = (b"NCCL INFO " + b"x" * 1014) * 1024  # 1 MiB of a line that looks relevant
        for _ in range(100):
            fh.write(chunk)
        fh.write(b"\nh:1:2 [0] NCCL WARN after the long line\n")
    return p


def _rss_of(args, env=None) -> tuple[subprocess.CompletedProcess, float]:
    """Run in a grandchild so that RUSAGE_CHILDREN measures only this run (and its helpers)."""
    code = ("import resource, subprocess, sys, json;"
            "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300);"
            "print(json.dumps([r.returncode, r.stdout[-3000:], r.stderr,"
            " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "logdoc", *args], capture_output=True,
                         text=True, timeout=320, env=env or ENV, cwd=ROOT)
    import json

    rc, stdout, stderr, rss = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, rc, stdout, stderr), rss


def test_a_100mb_line_is_cut_counted_and_memory_stays_bounded(line_100mb):
    res, rss = _rss_of(["explain", str(line_100mb), "--format", "json"], env={**ENV, "LOGDOC_NO_GREP": "1"})
    lines = check(res)
    assert "read 3 lines in 1 file" in lines[-1] and "1 over-long lines cut at 1 MiB" in lines[-1], lines
    assert rss < 150, f"max RSS {rss:.0f} MB for a 100 MB line"


def test_a_100mb_line_with_the_grep_helper(line_100mb):
    """Large files are pre-scanned by `grep -b` (logdoc.fast.grep.GrepHits); grep holds a whole
    line in memory, so it runs under an address-space limit and logdoc reads the file itself when
    grep gives up."""
    res, rss = _rss_of(["explain", str(line_100mb), "--format", "json"])
    lines = check(res)
    assert "read 3 lines in 1 file" in lines[-1], lines
    assert rss < 150, f"max RSS {rss:.0f} MB (logdoc and its grep helper) for a 100 MB line"
