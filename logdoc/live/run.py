"""``logdoc run -- CMD``: a command in its own process group, its output passed through and parsed."""

import glob
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..pipeline import parse_sources
from ..results import ParseResult
from ..read.lines import MAX_LINE
from ..read.source import Source
from .early import EarlyDiagnoser
from .follow import CHUNK, QUEUE_CHUNKS, write_all
from .stream import LiveParser, merge_results

# ---------------------------------------------------------------------------------------------
# run: a command in its own process group

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
EXIT_GRACE = 3.0     # seconds to wait for the pipes after the command exited (a grandchild may hold them)
MAX_PENDING = 64 * 1024


@dataclass
class RunResult:
    returncode: int | None          # Popen style: -N for a signal death, None if it never started
    exit_status: int                # what a shell would report: 128+N for a signal death
    result: ParseResult | None = None
    extra_files: list[str] = field(default_factory=list)
    signals_forwarded: list[int] = field(default_factory=list)
    started: float = 0.0
    rules: Any = None               # the rule set used (loaded once the command started)


def exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _line_pump(src_fd: int, dst_fd: int | None, q: queue.Queue, tag: str) -> None:
    """Copy ``src_fd`` to ``dst_fd`` as it comes; hand complete lines to the parser queue."""
    pending = b""
    through = dst_fd is not None
    try:
        while True:
            try:
                chunk = os.read(src_fd, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                break
            if not chunk:
                break
            if through:
                try:
                    write_all(dst_fd, chunk)  # type: ignore[arg-type]
                except OSError:
                    through = False
            data = pending + chunk if pending else chunk
            cut = data.rfind(b"\n")
            if cut >= 0:
                q.put((tag, data[: cut + 1]))
                pending = data[cut + 1 :]
            else:
                pending = data
            if len(pending) > MAX_PENDING:
                cr = pending.rfind(b"\r")
                if cr >= 0:       # progress-bar residue: the reader drops it anyway
                    pending = pending[cr:]
                if len(pending) > MAX_LINE:
                    q.put((tag, pending + b"\n"))
                    pending = b""
    finally:
        if pending:
            q.put((tag, pending + b"\n"))   # a last line without LF stays one line of its own
        q.put((tag, None))
        try:
            os.close(src_fd)
        except OSError:
            pass


def _tty_fd() -> int | None:
    """Standard input's terminal when logdoc is in its foreground process group, else None."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _tcsetpgrp(fd: int, pgrp: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN) if threading.current_thread() is threading.main_thread() else None
    try:
        os.tcsetpgrp(fd, pgrp)
    except OSError:
        pass
    finally:
        if old is not None:
            signal.signal(signal.SIGTTOU, old)


_TORCHRUN_NO_VALUE = {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path"}


def torchrun_log_dirs(cmd: Sequence[str]) -> list[str]:
    """``--log-dir`` / ``--log_dir`` given to torchrun (before its script) anywhere in ``cmd``
    (``srun torchrun ...``, ``python -m torch.distributed.run ...``)."""
    start = None
    for i, a in enumerate(cmd):
        if os.path.basename(a) == "torchrun" or (a == "torch.distributed.run" and i > 0 and cmd[i - 1] == "-m"):
            start = i + 1
            break
    if start is None:
        return []
    out: list[str] = []
    i = start
    while i < len(cmd):
        a = cmd[i]
        if not a.startswith("-") or a in ("-m", "--module"):
            break                                   # the script or module: its own options follow
        if a.startswith(("--log-dir=", "--log_dir=")):
            out.append(a.split("=", 1)[1])
        elif a in ("--log-dir", "--log_dir") and i + 1 < len(cmd):
            out.append(cmd[i + 1])
        if "=" not in a and a not in _TORCHRUN_NO_VALUE:
            i += 1                                  # the option's value
        i += 1
    return out


def nccl_debug_patterns(cmd: Sequence[str], env: dict[str, str]) -> list[str]:
    """NCCL_DEBUG_FILE values from the environment and from ``NCCL_DEBUG_FILE=...`` words of the command."""
    values = []
    if env.get("NCCL_DEBUG_FILE"):
        values.append(env["NCCL_DEBUG_FILE"])
    for a in cmd:
        for part in a.split(","):    # also srun --export=ALL,NCCL_DEBUG_FILE=...
            part = part.split("--export=", 1)[-1]
            if part.startswith("NCCL_DEBUG_FILE=") and len(part) > len("NCCL_DEBUG_FILE="):
                values.append(part.split("=", 1)[1])
    return list(dict.fromkeys(values))


def _debug_file_glob(value: str) -> str:
    # NCCL expands %h (hostname) and %p (pid) in NCCL_DEBUG_FILE
    parts = re.split(r"(%[hp])", value)
    return "".join("*" if p in ("%h", "%p") else glob.escape(p) for p in parts)


def collect_files(cmd: Sequence[str], env: dict[str, str], log_dirs: Iterable[str], since: float) -> tuple[list[Source], list[str]]:
    """Files the job wrote next to its output: NCCL_DEBUG_FILE outputs and torchrun --log-dir trees,
    modified since ``since`` (older runs in the same folder are not this job). Returns (sources, warnings)."""
    sources: list[Source] = []
    warnings: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return
        try:
            st = os.stat(path)
        except OSError:
            return
        if st.st_mtime + 1.0 < since or not os.path.isfile(path):
            return
        seen.add(real)
        sources.append(Source(path, path=path))

    for pattern in nccl_debug_patterns(cmd, env):
        for p in sorted(glob.glob(_debug_file_glob(pattern))):
            add(p)
    dirs = list(dict.fromkeys([*log_dirs, *torchrun_log_dirs(cmd)]))
    for d in dirs:
        if not os.path.isdir(d):
            warnings.append(f"--log-dir {d}: no such folder after the command ended")
            continue
        for root, subdirs, files in os.walk(d, followlinks=False):
            subdirs.sort()
            for name in sorted(files):
                add(os.path.join(root, name))
    return sources, warnings


class _Signals:
    """Forward signals to the child's process group while it runs (first ones before it exists too)."""

    def __init__(self) -> None:
        self.pgid: int | None = None
        self.pending: list[int] = []
        self.forwarded: list[int] = []
        self._old: dict[int, Any] = {}

    def __enter__(self) -> "_Signals":
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in FORWARDED:
            try:
                old = signal.getsignal(sig)
                if old == signal.SIG_IGN:        # nohup and friends: the child inherits it ignored
                    continue
                self._old[sig] = old
                signal.signal(sig, self._handle)
            except (OSError, ValueError):
                pass
        self._old_ttou = signal.signal(signal.SIGTTOU, signal.SIG_IGN)   # write and give back the tty
        return self

    def _handle(self, signum, frame) -> None:
        if self.pgid is None:
            self.pending.append(signum)
            return
        self.send(signum)

    def send(self, signum: int) -> None:
        self.forwarded.append(signum)
        try:
            os.killpg(self.pgid, signum)  # type: ignore[arg-type]
        except OSError:
            pass

    def started(self, pgid: int) -> None:
        self.pgid = pgid
        for s in self.pending:
            self.send(s)
        self.pending.clear()

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            try:
                signal.signal(sig, old)
            except (OSError, ValueError, TypeError):
                pass
        if hasattr(self, "_old_ttou"):
            signal.signal(signal.SIGTTOU, self._old_ttou)


def run_command(cmd: Sequence[str], *, log_dirs: Sequence[str] = (), save: str | None = None,
                rules: Any = None, emit: Callable[[dict], None] | None = None, name: str = "<output>",
                out_fd: int | None = 1, err_fd: int | None = 2, env: dict[str, str] | None = None,
                exit_grace: float = EXIT_GRACE, redact: bool = False) -> RunResult:
    """Run ``cmd``; pass its stdout and stderr through to ``out_fd`` / ``err_fd`` unchanged; parse
    both (as lines, in arrival order) as one source named ``save`` or ``name``; forward signals to
    its process group; at the end also parse the files it wrote (NCCL_DEBUG_FILE, ``log_dirs``).

    ``rules`` may be a rule set or a function returning one, called once the command has started
    (loading the knowledge base then costs the command no start-up time). With ``emit``, certain
    root causes are reported while the command runs.

    Raises ``FileNotFoundError`` / ``PermissionError`` when the command cannot be started.
    """
    env = dict(os.environ if env is None else env)
    # the command writes into pipes now, not a terminal: keep Python from holding its prints back
    env.setdefault("PYTHONUNBUFFERED", "1")
    tty = _tty_fd()
    stdin = None
    if tty is None:
        try:
            if os.isatty(sys.stdin.fileno()):
                stdin = subprocess.DEVNULL      # a background job must not stop on tty input
        except (OSError, ValueError, AttributeError):
            pass

    def preexec() -> None:
        os.setpgid(0, 0)
        if tty is not None:
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            try:
                os.tcsetpgrp(tty, os.getpgrp())
            except OSError:
                pass
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)

    parser = LiveParser(save or name)
    early: EarlyDiagnoser | None = None
    copy_fh = open(save, "wb") if save else None
    q: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
    status: dict[str, Any] = {}
    started = time.time()
    with _Signals() as sigs:
        try:
            proc = subprocess.Popen(list(cmd), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, preexec_fn=preexec, bufsize=0, close_fds=True)
        except BaseException:
            if copy_fh:
                copy_fh.close()
            raise
        pgid = proc.pid
        try:
            os.setpgid(proc.pid, proc.pid)
        except OSError:
            pass
        if tty is not None:
            _tcsetpgrp(tty, pgid)
        sigs.started(pgid)
        assert proc.stdout is not None and proc.stderr is not None
        out_r, err_r = os.dup(proc.stdout.fileno()), os.dup(proc.stderr.fileno())
        proc.stdout.close()
        proc.stderr.close()

        def waiter() -> None:
            while True:
                try:
                    _, st = os.waitpid(proc.pid, os.WUNTRACED if tty is not None else 0)
                except ChildProcessError:
                    status.setdefault("code", 0)
                    break
                except InterruptedError:
                    continue
                if os.WIFSTOPPED(st) and tty is not None:
                    # Ctrl-Z: stop ourselves too, so the shell sees its job stopped; on `fg`, hand
                    # the terminal back and continue the command
                    _tcsetpgrp(tty, os.getpgrp())
                    os.kill(os.getpid(), signal.SIGSTOP)
                    try:
                        if os.tcgetpgrp(tty) == os.getpgrp():
                            _tcsetpgrp(tty, pgid)
                    except OSError:
                        pass
                    try:
                        os.killpg(pgid, signal.SIGCONT)
                    except OSError:
                        pass
                    continue
                if os.WIFSTOPPED(st):
                    continue
                status["code"] = os.waitstatus_to_exitcode(st)
                break
            status["at"] = time.monotonic()
            q.put(("exit", None))

        threads = [threading.Thread(target=_line_pump, args=(out_r, out_fd, q, "out"), daemon=True, name="logdoc-out"),
                   threading.Thread(target=_line_pump, args=(err_r, err_fd, q, "err"), daemon=True, name="logdoc-err"),
                   threading.Thread(target=waiter, daemon=True, name="logdoc-wait")]
        for t in threads:
            t.start()
        if callable(rules):
            try:
                rules = rules()
            except Exception as exc:  # noqa: BLE001 - the command runs on; the report says why it is missing
                parser.stats.warnings.append(f"could not load the rules: {exc}")
                rules = None
        if emit is not None and rules is not None:
            early = EarlyDiagnoser(parser, rules, emit, redact=redact)
        open_streams = 2
        exited = False
        try:
            while open_streams or not exited:
                timeout = early.timeout() if early else None
                if exited and open_streams:
                    left = status["at"] + exit_grace - time.monotonic()
                    if -exit_grace < left <= 0 and not q.empty():
                        # lines already queued (behind a slow parse) are read first, for one more grace at most
                        timeout = 0
                    elif left <= 0:   # something the command started still holds its output open
                        parser.stats.warnings.append(
                            f"the command exited, but processes it started still hold its output open; "
                            f"stopped reading {exit_grace:g} s later (they are still running in its process group {pgid})")
                        break
                    else:
                        timeout = left if timeout is None else min(timeout, left)
                try:
                    tag, data = q.get(timeout=timeout)
                except queue.Empty:
                    if early:
                        early.poke()
                    continue
                if tag == "exit":
                    exited = True
                    continue
                if data is None:
                    open_streams -= 1
                    continue
                parser.feed(data)
                if copy_fh:
                    copy_fh.write(data)
                if early:
                    early.input()
                    early.poke()
        finally:
            if copy_fh:
                copy_fh.close()
            if tty is not None:
                _tcsetpgrp(tty, os.getpgrp())
        proc.returncode = status.get("code", 0)
    parser.close()
    sources, warnings = collect_files(cmd, env, log_dirs, started)
    results = [parser.result()]
    if sources:
        results.append(parse_sources(sources))
    merged = merge_results(results)
    merged.stats.warnings.extend(warnings)
    rc = proc.returncode
    return RunResult(rc, exit_status(rc), merged, [s.name for s in sources], list(sigs.forwarded), started,
                     rules=rules)


def describe_command(cmd: Sequence[str], limit: int = 120) -> str:
    """The command as one shell-quoted line, shortened to ``limit`` characters."""
    text = re.sub(r"\s+", " ", " ".join(shlex.quote(a) for a in cmd))
    return text if len(text) <= limit else text[: limit - 3] + "..."
