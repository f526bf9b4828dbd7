"""`logdoc run -- CMD`: real child processes (and a real failing multi-process Gloo job), no mocks.

Every child is bounded by a timeout, and every test kills what it started (by process group)."""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

if sys.platform == "emscripten":
    pytest.skip("not in the browser build: needs subprocesses, signals and a terminal", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
WORKERS = ROOT / "samples" / "_workers"
LOGDOC = [sys.executable, "-m", "logdoc"]
PY = sys.executable

NCCL_SHM_WARN = ("a7f3c2d91b04:203:260 [2] misc/shmutils.cc:129 NCCL WARN Error while creating shared memory "
                 "segment /dev/shm/nccl-Lx0vTe (size 9637888), error: No space left on device (28)\n")


def _env(**extra):
    drop = ("LOGDOC_", "NCCL_", "TORCH", "MASTER_", "GLOO_", "TORCHELASTIC")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k not in ("RANK", "WORLD_SIZE")}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _run(args, timeout=60, **kw):
    """logdoc run in its own session, so a test failure can kill everything it started."""
    p = subprocess.Popen(LOGDOC + ["run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=kw.pop("env", None) or _env(), start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        _kill_session(p)
    return p.returncode, out, err


def _kill_session(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    if p.poll() is None:
        p.kill()
        p.wait(10)


def test_success_is_quiet_and_streams_stay_apart():
    code = ("import sys\nfor i in range(3000):\n"
            " sys.stdout.write(f'out {i} \\u00e9\\n'); sys.stderr.write(f'err {i}\\r\\n')\n"
            "sys.stdout.buffer.write(b'\\xff raw tail no newline'); sys.stderr.write('err tail')\n")
    rc, out, err = _run(["--", PY, "-c", code])
    assert rc == 0
    exp_out = "".join(f"out {i} \u00e9\n" for i in range(3000)).encode() + b"\xff raw tail no newline"
    exp_err = "".join(f"err {i}\r\n" for i in range(3000)).encode() + b"err tail"
    assert out == exp_out                   # every byte, in order, on its own stream
    assert err == exp_err                   # nothing from logdoc on success


@pytest.mark.parametrize("status", [1, 7, 255])
def test_exit_status_is_the_commands(status):
    rc, out, err = _run(["--", "sh", "-c", f"echo before; echo oops >&2; exit {status}"])
    assert rc == status
    assert out == b"before\n"
    assert err.startswith(b"oops\n")
    assert f"exited with status {status}".encode() in err


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV])
def test_signal_death_is_128_plus_n(sig):
    rc, out, err = _run(["--", PY, "-c", f"import os; print('x', flush=True); os.kill(os.getpid(), {int(sig)})"])
    assert rc == 128 + int(sig)
    assert out == b"x\n"
    assert f"was killed by {sig.name}".encode() in err


def test_command_not_found_and_usage():
    rc, out, err = _run(["--", "/nonexistent/definitely-not-a-command"])
    assert rc == 127 and b"command not found" in err
    rc, out, err = _run([])
    assert rc == 2


def test_without_double_dash_and_options_of_the_command():
    rc, out, err = _run([PY, "-c", "import sys; print(sys.argv[1:])", "--format", "x", "-q"])
    assert rc == 0 and out == b"['--format', 'x', '-q']\n"


CHILD = """
import os, signal, subprocess, sys, time
marks = sys.argv[1]
def handler(signum, frame):
    open(os.path.join(marks, f"{os.getpid()}.{signum}"), "w").close()
    os._exit(3)
signal.signal(signal.SIGTERM, handler)
signal.signal(signal.SIGINT, handler)
if len(sys.argv) > 2:           # the grandchild
    print("grandchild ready", flush=True)
    time.sleep(30)
    os._exit(9)
g = subprocess.Popen([sys.executable, __file__, marks, "g"])
time.sleep(0.3)
print(f"leader ready {os.getpgrp() == os.getpid()}", flush=True)
g.wait()
time.sleep(30)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_reach_the_whole_process_group(tmp_path, sig):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    marks = tmp_path / "marks"
    marks.mkdir()
    p = subprocess.Popen(LOGDOC + ["run", "--", PY, str(script), str(marks)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=_env(), start_new_session=True)
    try:
        seen = b""
        end = time.monotonic() + 30
        while not (b"leader ready" in seen and b"grandchild ready" in seen and seen.endswith(b"\n")) and time.monotonic() < end:
            r, _, _ = select.select([p.stdout], [], [], 1)
            if r:
                seen += os.read(p.stdout.fileno(), 4096)
        assert b"leader ready True" in seen, seen          # the command leads its own process group
        os.kill(p.pid, sig)                               # to logdoc only
        rest, err = p.communicate(timeout=30)
    finally:
        _kill_session(p)
    got = sorted(f.name.split(".")[1] for f in marks.iterdir())
    assert got == [str(int(sig))] * 2, (got, err)         # child and grandchild both got it
    assert p.returncode == 3, err                         # the child's own status, logdoc was not killed
    assert b"exited with status 3" in err


def test_reads_nccl_debug_file_and_log_dir_written_during_the_run(tmp_path):
    old = tmp_path / "logs" / "old_run" / "rank0.log"
    old.parent.mkdir(parents=True)
    old.write_text("[rank0]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))   # an earlier run in the same folder: ignored
    code = textwrap.dedent(f"""
        import os, socket, json
        path = os.environ["NCCL_DEBUG_FILE"].replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
        open(path, "w").write({NCCL_SHM_WARN!r})
        os.makedirs("{tmp_path}/logs/run1/attempt_0/2", exist_ok=True)
        open("{tmp_path}/logs/run1/attempt_0/2/error.json", "w").write(json.dumps({{"message": {{
            "message": "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
            "extraInfo": {{"py_callstack": "Traceback ...", "timestamp": "1764451200"}}}}}}))
        print("training...")
        raise SystemExit(1)
    """)
    env = _env(NCCL_DEBUG_FILE=f"{tmp_path}/nccl.%h.%p.log", NCCL_DEBUG="WARN")
    rc, out, err = _run(["--log-dir", str(tmp_path / "logs"), "--format", "json", "--report",
                         str(tmp_path / "report.json"), "--", PY, "-c", code], env=env)
    assert rc == 1 and out == b"training...\n"
    assert b"also read 2 files" in err, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["diagnoses"][0]["id"] in ("LD301", "LD302")
    files = {e["file"] for d in report["diagnoses"] for e in d["evidence"]}
    assert any("nccl." in f for f in files)
    assert not any("old_run" in f for f in report["files"])


def test_save_keeps_a_copy_the_report_points_into(tmp_path):
    saved = tmp_path / "job.log"
    # lines of the two streams are saved in arrival order (the pauses make that order certain)
    code = (f"import sys, time; print('step 1', flush=True); time.sleep(1); sys.stderr.write({NCCL_SHM_WARN!r}); "
            "sys.stderr.flush(); time.sleep(1); print('step 2'); sys.exit(4)")
    rc, out, err = _run(["--save", str(saved), "--no-early", "--", PY, "-c", code])
    assert rc == 4 and out == b"step 1\nstep 2\n"
    assert saved.read_bytes().splitlines() == [b"step 1", NCCL_SHM_WARN.rstrip("\n").encode(), b"step 2"]
    assert f"{saved}:2".encode() in err
    assert b"[LD30" not in err.split(b"exited with status 4")[0]   # --no-early: nothing before the end


def test_early_notice_while_the_command_still_runs(tmp_path):
    code = (f"import sys, time; sys.stderr.write({NCCL_SHM_WARN!r}); sys.stderr.flush(); "
            "time.sleep(30); sys.exit(5)")
    p = subprocess.Popen(LOGDOC + ["run", "--", PY, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=_env(), start_new_session=True)
    try:
        err = b""
        end = time.monotonic() + 25
        while b"logdoc: root cause" not in err and time.monotonic() < end:
            r, _, _ = select.select([p.stderr], [], [], 1)
            if r:
                err += os.read(p.stderr.fileno(), 4096)
        assert b"logdoc: root cause" in err and b"[LD301]" in err, err
        assert p.poll() is None                          # the command is still running
    finally:
        _kill_session(p)


def test_pty_hands_the_terminal_to_the_command_and_ctrl_c_reaches_it():
    """In a terminal the command gets the foreground: it can read the keyboard, and Ctrl-C reaches it."""
    import pty

    code = "x = input('name? '); print('got', x, flush=True); import time; time.sleep(30)"
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.execvpe(PY, LOGDOC + ["run", "--no-early", "--", PY, "-c", code], _env())
        finally:
            os._exit(99)
    try:
        buf = b""

        def read_until(needle, timeout=25):
            nonlocal buf
            end = time.monotonic() + timeout
            while needle not in buf and time.monotonic() < end:
                r, _, _ = select.select([fd], [], [], 0.5)
                if r:
                    try:
                        buf += os.read(fd, 4096)
                    except OSError:
                        break
            return needle in buf

        assert read_until(b"name? "), buf
        os.write(fd, b"pty-user\n")
        assert read_until(b"got pty-user"), buf
        os.write(fd, b"\x03")                            # Ctrl-C
        assert read_until(b"was killed by SIGINT"), buf
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 130
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# a real multi-process Gloo job under torchrun

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_real_gloo_job_killed_rank_under_torchrun():
    pytest.importorskip("torch", reason="torch is not installed (CPU build: pip install torch==2.13.0 "
                                        "--index-url https://download.pytorch.org/whl/cpu)")
    port = _free_port()
    cmd = [PY, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2", "--master-addr=127.0.0.1",
           f"--master-port={port}", str(WORKERS / "train.py"), "--steps", "3", "--fault", "sigkill",
           "--fault-ranks", "1", "--fault-step", "1", "--timeout", "10"]
    env = _env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    rc, out, err = _run(["--format", "json", "--", *cmd], env=env, timeout=90)
    text = err.decode("utf-8", "replace")
    assert rc == 1, text[-3000:]                    # torchrun's own status (ChildFailedError)
    assert b"worker rank=1" in out and b"killing myself with SIGKILL" in out      # the job's stdout, passed through
    assert "ChildFailedError" in text and "exitcode  : -9" in text                  # its stderr, passed through
    assert "exited with status 1" in text
    report = json.loads(text[text.index("\n{") + 1: text.rindex("\n}") + 2])
    ids = [d["id"] for d in report["diagnoses"]]
    assert {"LD701", "LD702"} & set(ids), ids
    sigkill = [d for d in report["diagnoses"] if d["id"] in ("LD701", "LD702")][0]
    assert sigkill["category"] == "peer_process_died"
    # nothing left behind: torchrun and its workers were one process group, now gone
    time.sleep(0.2)
    leftover = subprocess.run(["pgrep", "-f", f"master-port={port}"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""
