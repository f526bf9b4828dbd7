"""Live use without a child job: the incremental parser, `explain -` from a pipe, `explain - --follow`,
the excepthook, --help texts and shell completion. Real subprocesses, bounded by timeouts."""
from __future__ import annotations

import bz2
import gzip
import lzma
import io
import json
import os
import random
import re
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from logdoc.live import LiveParser, format_notice, is_certain, looks_distributed, torchrun_log_dirs
from logdoc.pipeline import parse_sources
from logdoc.read.source import Source

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SHM_LOG = SAMPLES / "nccl-shm-exhausted-container" / "console.log"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("LOGDOC_LOGS", "NCCL_DEBUG_FILE", "LOGDOC_DEBUG")}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"})
    env.update(extra)
    return env


LOGDOC = [sys.executable, "-m", "logdoc"]


def _sample_logs():
    out = []
    for p in sorted(SAMPLES.rglob("*")):
        rel = p.relative_to(SAMPLES).parts
        if p.is_file() and not rel[0].startswith("_") and p.name not in ("sample.yaml", "README.md") \
                and not p.name.endswith("error.json"):
            out.append(p)
    return out


def _stdin_parse(data: bytes, name="<stdin>"):
    return parse_sources([Source(name, stream=io.BytesIO(data))])


def _live_parse(data: bytes, rng: random.Random, name="<stdin>"):
    lp = LiveParser(name)
    i = 0
    while i < len(data):
        n = rng.choice([1, 3, 80, 4096, 8191, 65536])
        lp.feed(data[i:i + n])
        i += n
    lp.close()
    return lp.result()


def _same(a, b):
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert a.stats.to_dict() == b.stats.to_dict()
    assert [(u.line, u.text) for u in a.unrecognized] == [(u.line, u.text) for u in b.unrecognized]


# ---------------------------------------------------------------------------------------------
# the incremental parser is the file parser


def test_live_parser_equals_stdin_parse_on_every_sample_file():
    # paste layer included (logdoc/paste/): a short source has every line read, a paste is repaired
    rng = random.Random(9)
    files = _sample_logs()
    assert len(files) > 30
    for p in files:
        data = p.read_bytes()
        _same(_live_parse(data, rng), _stdin_parse(data))


ODD = {
    "crlf_and_cr_residue": b"a\r\nprogress 10%\rprogress 99%\r\nNCCL WARN x\r\n",
    "lone_cr_only": b"one\rtwo\rthree NCCL WARN y\r",
    "invalid_utf8_ansi_nul": b"\xff\xfe bad \x00 byte\n\x1b[31mred NCCL WARN\x1b[0m\n\x80\n",
    "no_trailing_newline": b"line 1\nTraceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: boom",
    "empty": b"",
    "only_newlines": b"\n\n\n",
    "over_long_line": b"x" * (3 << 20) + b"\nNCCL WARN after\n" + b"z" * (3 << 20),
    "just_over_1mib": b"x" * (1 << 20) + b"y" * 5000 + b"\nNCCL WARN after\n" + b"w" * ((1 << 20) + 1) + b"\n",
    "progress_bar_without_lf": b"start\n" + b"".join(b"\r %d%%|####" % i for i in range(100000)) + b"\nNCCL WARN x\n",
    "binary": b"\x7fELF\x02\x01\x01" + b"\x00" * 9000 + b"NCCL WARN hidden\n",
    "hole_then_text": b"\x00" * 9000 + b"NCCL WARN after a hole\n",
    "hole_in_pieces": b"\x00" * 70000 + SHM_LOG.read_bytes(),
    "few_nuls_then_text": b"\x00" * 5 + b"NCCL WARN x\n" * 3,
    "only_a_hole": b"\x00" * 100,
    "text_between_holes": b"gpu-node-1:812:812 [0] NCCL INFO Bootstrap : Using eth0\n" + b"\x00" * 9000 + b"more\n",
    "utf16_with_mark": SHM_LOG.read_text().replace("\n", "\r\n").encode("utf-16"),
    "utf16_be_without_mark": SHM_LOG.read_text().encode("utf-16-be"),
    "utf16_in_gzip": gzip.compress(SHM_LOG.read_text().encode("utf-16")),
    "bzip2_two_streams": bz2.compress(SHM_LOG.read_bytes()[:5000]) + bz2.compress(SHM_LOG.read_bytes()[5000:]),
    "xz": lzma.compress(SHM_LOG.read_bytes()),
    "xz_truncated": lzma.compress(SHM_LOG.read_bytes())[:-60],
    "xz_then_junk": lzma.compress(SHM_LOG.read_bytes()) + b"junk after the stream",
    "zstd": b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 40,
    "tar": b"logs/rank0.log".ljust(257, b"\x00") + b"ustar\x0000" + SHM_LOG.read_bytes(),
    "gzip_two_members": gzip.compress(SHM_LOG.read_bytes()[:5000]) + gzip.compress(SHM_LOG.read_bytes()[5000:]),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_live_parser_odd_inputs(name):
    data = ODD[name]
    rng = random.Random(len(data))
    _same(_live_parse(data, rng), _stdin_parse(data))


def test_a_hole_before_the_text_is_dropped_and_said():
    # logrotate's copytruncate under a writer that keeps its offset: the old length as NULs, then the new lines
    data = b"\x00" * 70000 + SHM_LOG.read_bytes()
    want = _stdin_parse(SHM_LOG.read_bytes())
    for got in (_live_parse(data, random.Random(2)), _stdin_parse(data)):
        assert [e.to_dict() for e in got.events] == [e.to_dict() for e in want.events]
        assert any("70,000 NUL bytes at the start skipped" in w for w in got.stats.to_dict()["warnings"])


def test_utf16_text_gives_the_events_of_its_utf8_text():
    # (Windows PowerShell 5's `>` writes UTF-16LE with its mark): the same events, live and from a pipe
    text = SHM_LOG.read_text()
    want = _stdin_parse(text.encode())
    assert want.events
    for data in (text.encode("utf-16"), text.encode("utf-16-le")):
        for got in (_live_parse(data, random.Random(5)), _stdin_parse(data)):
            assert [e.to_dict() for e in got.events] == [e.to_dict() for e in want.events]


def test_peek_shows_an_open_traceback_without_changing_the_result():
    text = (b"[rank1]: Traceback (most recent call last):\n"
            b"[rank1]:   File \"train.py\", line 3, in <module>\n"
            b"[rank1]: RuntimeError: [/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:4012\n")
    lp = LiveParser()
    lp.feed(text)
    assert lp.events == []                      # the record may still continue
    peeked = lp.peek()
    assert len(peeked) == 1 and "Traceback" in peeked[0].text and "Connection closed by peer" in peeked[0].text
    assert lp.events == []
    lp.feed(b"[rank1]: more")                   # a partial line: peek sees it as if the input ended
    assert len(lp.peek()) == 1
    lp.close()
    _same(lp.result(), _stdin_parse(text + b"[rank1]: more"))


def test_torchrun_log_dir_detection():
    assert torchrun_log_dirs(["torchrun", "--nproc-per-node", "2", "--log-dir", "L", "train.py", "--log-dir", "X"]) == ["L"]
    assert torchrun_log_dirs(["srun", "-N2", "torchrun", "--standalone", "--log_dir=L2", "t.py"]) == ["L2"]
    assert torchrun_log_dirs(["python", "-m", "torch.distributed.run", "--log-dir", "L3", "-m", "pkg"]) == ["L3"]
    assert torchrun_log_dirs(["python", "train.py", "--log-dir", "tb"]) == []


def test_looks_distributed():
    class DistBackendError(RuntimeError):
        pass

    assert looks_distributed(DistBackendError("x"))
    assert looks_distributed(RuntimeError("NCCL error in: ... ncclSystemError"))
    assert looks_distributed(RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer"))
    try:
        try:
            raise RuntimeError("Gloo connectFullMesh failed")
        except RuntimeError as inner:
            raise ValueError("wrapped") from inner
    except ValueError as exc:
        assert looks_distributed(exc)
    assert not looks_distributed(KeyError("labels"))
    assert not looks_distributed(None)


# ---------------------------------------------------------------------------------------------
# explain - : a pipe gives the same diagnosis as the file


def _key(report):
    return [(d["id"], d["role"], d["ranks"], [(e["line"], e["text"]) for e in d["evidence"]]) for d in report["diagnoses"]]


@pytest.mark.parametrize("sample", ["nccl-shm-exhausted-container", "torchrun-worker-python-exception",
                                    "torchrun-worker-sigkill"])
def test_pipe_gives_the_same_diagnosis_as_the_file(sample):
    if not (SAMPLES / sample).is_dir():
        pytest.skip(f"sample {sample} is not in this checkout")
    (log,) = [p for p in (SAMPLES / sample).iterdir() if p.name != "sample.yaml"]
    data = log.read_bytes()
    on_file = subprocess.run(LOGDOC + ["explain", str(log), "--format", "json"], capture_output=True, env=_env(),
                             timeout=60)
    # a real pipe, written in pieces by another process
    writer = subprocess.Popen([sys.executable, "-c",
                               "import sys,time\nd=open(sys.argv[1],'rb').read()\n"
                               "for i in range(0,len(d),777):\n sys.stdout.buffer.write(d[i:i+777]); sys.stdout.flush()",
                               str(log)], stdout=subprocess.PIPE)
    on_pipe = subprocess.run(LOGDOC + ["explain", "-", "--format", "json"], stdin=writer.stdout, capture_output=True,
                             env=_env(), timeout=60)
    writer.stdout.close()
    assert writer.wait(timeout=30) == 0
    assert on_file.returncode == on_pipe.returncode == 1, on_pipe.stderr
    a, b = json.loads(on_file.stdout), json.loads(on_pipe.stdout)
    assert a["diagnoses"], "the sample has a diagnosis"
    assert _key(a) == _key(b)
    assert {e["file"] for d in b["diagnoses"] for e in d["evidence"]} == {"<stdin>"}
    assert a["stats"]["lines_read"] == b["stats"]["lines_read"] == data.count(b"\n") + (not data.endswith(b"\n"))


def test_follow_reads_a_short_paste_as_explain_reads_it():
    # A short source has every line read (logdoc/paste/), so a bare message without a prefilter
    # keyword is still found; --follow used to miss what explain - found.
    data = (b"epoch 1 step 10 loss 2.1\n"
            b"No interface found in the same subnet as remote address\n"
            b"epoch 1 step 11 loss 2.0\n")
    plain = subprocess.run(LOGDOC + ["explain", "-", "--format", "json"], input=data, capture_output=True,
                           env=_env(), timeout=60)
    follow = subprocess.run(LOGDOC + ["explain", "-", "--follow", "--format", "json"], input=data,
                            capture_output=True, env=_env(), timeout=60)
    assert plain.returncode == follow.returncode == 1, follow.stderr
    assert follow.stdout.startswith(data)  # the pass-through comes first
    a = json.loads(plain.stdout)
    b = json.loads(follow.stderr[follow.stderr.index(b"{"):follow.stderr.rindex(b"}") + 1])
    assert [d["id"] for d in a["diagnoses"]] == [d["id"] for d in b["diagnoses"]] == ["LD102"]
    assert _key(a) == _key(b)


# ---------------------------------------------------------------------------------------------
# explain - --follow


FOLLOW_CEILING = 180  # seconds: an upper bound for a loaded machine, never a wait (the waits end on the event)


class _Collector(threading.Thread):
    """Read a pipe to its end in the background, remembering when each piece arrived; a waiter is
    woken by each piece and by the end of the pipe (:meth:`wait_for`)."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe = pipe
        self.chunks: list[tuple[float, bytes]] = []
        self.lock = threading.Condition()
        self.ended = False

    def run(self):
        fd = self.pipe.fileno()
        try:
            while True:
                data = os.read(fd, 65536)
                if not data:
                    break
                with self.lock:
                    self.chunks.append((time.monotonic(), data))
                    self.lock.notify_all()
        finally:
            with self.lock:
                self.ended = True
                self.lock.notify_all()

    def data(self) -> bytes:
        with self.lock:
            return b"".join(c for _, c in self.chunks)

    def wait_for(self, needle: bytes, timeout: float) -> bool:
        """Whether ``needle`` arrives before ``timeout`` seconds pass or the pipe ends: woken by
        every piece read, so it returns as soon as the needle is there (a ceiling, not a wait)."""
        with self.lock:
            self.lock.wait_for(lambda: needle in b"".join(c for _, c in self.chunks) or self.ended, timeout)
            return needle in b"".join(c for _, c in self.chunks)


def test_follow_passes_every_byte_through_and_warns_before_the_end():
    shm = SHM_LOG.read_bytes().splitlines(keepends=True)
    first = (b"plain job output\n"
             b"\xff\xfe invalid utf-8 \x80 and a NUL \x00 here\n"
             b"progress 10%\rprogress 50%\rprogress 100%\n"
             b"\x1b[32mcoloured\x1b[0m line\r\n"
             b"\n" + b"".join(shm[:105]))          # through the /dev/shm root cause (lines 101-103)
    rest = b"".join(shm[105:]) + b"more output\n" + b"last line without a newline \xe2\x82"
    p = subprocess.Popen(LOGDOC + ["explain", "-", "--follow", "--no-color"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    out, err = _Collector(p.stdout), _Collector(p.stderr)
    out.start()
    err.start()
    try:
        for i in range(0, len(first), 1000):
            p.stdin.write(first[i:i + 1000])
            p.stdin.flush()
        # the pass-through does not wait for the end of input (the ceilings are for a loaded machine:
        # each wait ends when what it waits for arrives)
        assert out.wait_for(shm[104], timeout=FOLLOW_CEILING), out.data()[-300:]
        assert out.data() == first
        # the root cause is announced while the input is still open
        assert err.wait_for(b"[LD30", timeout=FOLLOW_CEILING), err.data()
        early = err.data()
        assert b"root cause" in early and b"/dev/shm" in early
        assert b"Read " not in early                 # the full report has not started
        p.stdin.write(rest)
        p.stdin.close()
        rc = p.wait(timeout=FOLLOW_CEILING)
    finally:
        if p.poll() is None:
            p.kill()
    out.join(5)
    err.join(5)
    assert out.data() == first + rest                # byte for byte, in order
    stderr = err.data().decode("utf-8", "replace")
    assert rc == 1
    # each certain root cause is announced once; the full report follows
    announced = re.findall(r"^logdoc: root cause[^\n]*?: \[(LD\d+)\]", stderr, re.M)
    assert announced and len(announced) == len(set(announced)) and set(announced) <= {"LD301", "LD302"}
    assert stderr.index("[LD30") < stderr.index("Read ")
    assert "logdoc: read " in stderr.splitlines()[-1]


def test_follow_keeps_reading_when_its_stdout_goes_away():
    """`job | logdoc explain - --follow | head -1`: the job must not die of SIGPIPE because of logdoc."""
    p = subprocess.Popen(LOGDOC + ["explain", "-", "--follow", "--format", "json"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        p.stdin.write(b"first line\n")
        p.stdin.flush()
        r, _, _ = select.select([p.stdout], [], [], 20)
        assert r and p.stdout.readline() == b"first line\n"
        p.stdout.close()                                 # the reader went away
        chunk = SHM_LOG.read_bytes()
        for _ in range(20):                              # far more than a pipe buffer
            p.stdin.write(chunk)
        p.stdin.close()
        err = p.stderr.read()
        rc = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 1, err[-500:]
    report = json.loads(err[err.index(b"{"): err.rindex(b"}") + 1])
    assert report["stats"]["lines_read"] == 1 + 20 * chunk.count(b"\n")


def test_follow_reads_on_after_the_first_ctrl_c():
    """Ctrl-C reaches the job and logdoc alike: logdoc reads on while the job shuts down (so the job
    does not die of SIGPIPE mid-teardown); a second Ctrl-C stops it."""
    import signal

    p = subprocess.Popen(LOGDOC + ["explain", "-", "--follow"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env())
    out, err = _Collector(p.stdout), _Collector(p.stderr)
    out.start()
    err.start()
    try:
        p.stdin.write(b"training step 1\n")
        p.stdin.flush()
        assert out.wait_for(b"step 1", FOLLOW_CEILING)
        p.send_signal(signal.SIGINT)
        assert err.wait_for(b"Ctrl-C again", FOLLOW_CEILING), err.data()
        p.stdin.write(b"job shutting down after SIGINT\n")
        p.stdin.flush()
        assert out.wait_for(b"shutting down", FOLLOW_CEILING)
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)  # (it writes its report first: slow on a loaded machine)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 130
    assert out.data() == b"training step 1\njob shutting down after SIGINT\n"


def test_follow_needs_stdin():
    r = subprocess.run(LOGDOC + ["explain", str(SHM_LOG), "--follow"], capture_output=True, env=_env(), timeout=60)
    assert r.returncode == 2
    assert r.stderr.decode().startswith("logdoc: error: --follow reads standard input")


def test_is_certain_and_notice_text():
    from logdoc import kb

    rules = kb.load_rules()
    d = {"id": "LD301", "role": "root_cause", "severity": "error", "title": "t", "ranks": [2], "hosts": ["h"],
         "evidence": [{"file": "<stdin>", "line": 3, "text": "a\nthe line\nc", "highlight": [3, 6]}], "fix": ["do x"]}
    assert is_certain(d, rules)
    assert not is_certain({**d, "role": "symptom"}, rules)
    assert not is_certain({**d, "id": "LD503"}, rules)        # a hung rank is only known at the end
    text = format_notice(d)
    assert "root cause (rank 2 on h): [LD301] t" in text and "<stdin>:3: the line" in text and "fix: do x" in text


# ---------------------------------------------------------------------------------------------
# logdoc.install_excepthook()

HOOK = """
import sys, logdoc
logdoc.install_excepthook()
logdoc.install_excepthook()          # twice: one diagnosis
assert 'rich' not in sys.modules and 'typer' not in sys.modules
def all_reduce():
    raise {exc}
all_reduce()
"""


def _hook(exc: str, **env):
    return subprocess.run([sys.executable, "-c", HOOK.format(exc=exc)], capture_output=True, text=True,
                          env=_env(**env), timeout=60, cwd=ROOT)


def test_excepthook_explains_a_distributed_error_before_the_traceback():
    r = _hook("RuntimeError('[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
              "Connection closed by peer [127.0.0.1]:4012')", RANK="3")
    assert r.returncode == 1
    assert r.stderr.count("logdoc: this looks like a distributed training failure") == 1
    assert "[LD901]" in r.stderr and "rank 3" in r.stderr
    assert r.stderr.index("[LD901]") < r.stderr.index("Traceback (most recent call last)")
    assert r.stderr.rstrip().endswith("Connection closed by peer [127.0.0.1]:4012")


def test_excepthook_reads_logdoc_logs(tmp_path):
    (tmp_path / "rank2.log").write_bytes(SHM_LOG.read_bytes())
    r = _hook("RuntimeError('NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error')",
              LOGDOC_LOGS=str(tmp_path))
    assert r.returncode == 1
    assert "[LD30" in r.stderr and "/dev/shm" in r.stderr
    assert r.stderr.index("[LD30") < r.stderr.index("Traceback")


def test_excepthook_is_silent_on_other_errors_and_never_fails():
    r = _hook("KeyError('labels')")
    assert r.returncode == 1 and "logdoc" not in r.stderr and r.stderr.rstrip().endswith("KeyError: 'labels'")
    # a bad LOGDOC_LOGS entry does not hide the traceback
    r = _hook("RuntimeError('Gloo connectFullMesh failed with [x] no error')", LOGDOC_LOGS="/nonexistent/x.log")
    assert r.returncode == 1 and "Traceback" in r.stderr and "no such file" in r.stderr


def test_excepthook_on_a_real_torch_distributed_error():
    pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0 --index-url "
                                        "https://download.pytorch.org/whl/cpu)")
    code = ("import socket, datetime, logdoc\n"
            "logdoc.install_excepthook()\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
            "import torch.distributed as dist\n"
            "dist.TCPStore('127.0.0.1', port, is_master=False, timeout=datetime.timedelta(seconds=1))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert r.returncode == 1
    assert "logdoc: this looks like a distributed training failure" in r.stderr, r.stderr[-2000:]
    assert "Dist" in r.stderr.split("Traceback")[-1]        # DistNetworkError / DistStoreError
    assert r.stderr.index("logdoc:") < r.stderr.index("Traceback")


# ---------------------------------------------------------------------------------------------
# --help and shell completion

COMMANDS = [[], ["parse"], ["explain"], ["run"], ["summary"], ["rules"], ["rules", "list"], ["rules", "show"],
            ["rules", "lint"], ["rules", "test"], ["web"], ["web", "build"], ["web", "serve"]]


def test_every_command_has_examples_in_its_help():
    from typer.testing import CliRunner

    from logdoc.cli.commands import app

    runner = CliRunner()
    for cmd in COMMANDS:
        res = runner.invoke(app, cmd + ["--help"], env={"COLUMNS": "120"})
        assert res.exit_code == 0, (cmd, res.output)
        assert "Example" in res.output, cmd
        examples = res.output.split("Example", 1)[1]
        if cmd:
            assert f"logdoc {' '.join(cmd)}" in examples or f"logdoc {cmd[0]}" in examples, (cmd, examples)


def _script(tmp_path):
    """An executable named logdoc, so completion sees the program name users have."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "logdoc"
    exe.write_text(f"#!{sys.executable}\nfrom logdoc.cli import main\nmain()\n")
    exe.chmod(0o755)
    return exe


def test_shell_completion(tmp_path):
    exe = _script(tmp_path)
    # typer detects the shell from the process tree unless told not to; under a launcher that is not a
    # shell (a CI runner, a background job) detection fails, so the shell is named, as typer's own tests do
    show = subprocess.run([str(exe), "--show-completion", "bash"], capture_output=True, text=True,
                          env=_env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"), timeout=60)
    assert show.returncode == 0 and "complete -o default -F _logdoc_completion logdoc" in show.stdout

    def complete(words: str, cword: int):
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                           env=_env(_LOGDOC_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword)))
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    assert complete("logdoc ex", 1) == ["explain"]
    assert "run" in complete("logdoc r", 1) and "rules" in complete("logdoc r", 1)
    assert {"--follow", "--format"} <= set(complete("logdoc explain --f", 2))
    assert complete("logdoc explain -f j", 3) == ["json"]
    assert "LD301" in complete("logdoc rules show LD3", 3)
    home = tmp_path / "home"
    home.mkdir()
    inst = subprocess.run([str(exe), "--install-completion", "bash"], capture_output=True, text=True, timeout=60,
                          env=_env(HOME=str(home), SHELL="/bin/bash", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"))
    assert inst.returncode == 0, inst.stderr
    assert "_logdoc_completion" in (home / ".bash_completions" / "logdoc.sh").read_text()
    assert ".bash_completions/logdoc.sh" in (home / ".bashrc").read_text()
