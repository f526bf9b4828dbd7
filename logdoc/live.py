"""Live use: follow a job's output while it is written, run a job and explain it when it fails, and
explain a distributed exception as it escapes.

* :class:`LiveParser` is the parse pipeline of :func:`logdoc.parse.iter_source_events` fed with
  bytes as they arrive (``feed`` / ``close``). It keeps events, never lines, so memory does not grow
  with the length of the output; at ``close`` its result equals the parse of the same bytes read as
  a file (the tests hold it to that).
* :class:`EarlyDiagnoser` re-runs the diagnosis on the events so far (debounced, rate-limited)
  when a new warning- or error-level event arrives, and reports each *certain* root cause once.
* :func:`follow` drives ``logdoc explain - --follow``: input bytes go through to an output file
  descriptor unchanged, as they arrive.
* :func:`run_command` drives ``logdoc run -- CMD``: the command runs in its own process group
  (with the terminal handed to it when logdoc has it), both streams go through unchanged, signals
  are forwarded, and the output is parsed as it goes.
* :func:`exception_diagnosis` is the body of ``logdoc.install_excepthook()``.

A core module: standard library only; the CLI renders the reports.
"""
from __future__ import annotations

import copy
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
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .events import Event
from .parse import MAX_UNRECOGNIZED, Feeder, ParseResult, Stats, Unrecognized, parse_sources, region_reader
from .read.lines import MAX_LINE, LineSplitter
from .source import SNIFF, ReadStats, Source, looks_binary

CHUNK = 64 * 1024           # bytes a pump reads from a pipe at a time
QUEUE_CHUNKS = 256          # at most 256 chunks (16 MiB) between the reader and the parser
ALARM_LEVELS = frozenset({"WARN", "ERROR", "FATAL"})

# What makes a root cause "certain" enough to announce before the end of the output.
CERTAIN_CONFIDENCE = 0.8
# Findings about what is *absent* (a rank that stops, a rank that never joined) are only true at
# the end of the output.
ABSENCE_KINDS = frozenset({"analysis.hung_rank", "analysis.missing_ranks", "analysis.straggler"})


# ---------------------------------------------------------------------------------------------
# incremental parsing

class LiveParser:
    """Parse one stream of bytes fed in pieces, by the rules of reading a file or stdin.

    ``feed(data)`` any number of times, then ``close()``; ``result()`` gives the
    :class:`~logdoc.parse.ParseResult`. Lines are split and cut as :func:`logdoc.source.read_blocks`
    does and handed to the parse layer's :class:`~logdoc.parse.Feeder`, so the result equals the
    parse of the same bytes read from a pipe. Only events are kept, never lines. ``peek()`` gives
    the events as if the input ended now, without disturbing the parse.
    """

    def __init__(self, name: str = "<stdin>") -> None:
        self.name = name
        self.stats = Stats()
        self.unrecognized: list[Unrecognized] = []
        self.events: list[Event] = []
        self.feeder = Feeder(name, self.stats, self.unrecognized, self.events)
        self.rstats = ReadStats()
        self._region = region_reader()
        self._head = b""           # sniff: the first bytes, until the kind of stream is known
        self._mode = "sniff"       # sniff | tentative | text | gzip | binary | dead
        self._seen = b""           # tentative: the first SNIFF bytes, for the binary rule
        self._gz: Any = None
        self._lines = LineSplitter(self.rstats)   # the line rules of the file reader
        self._lineno = 0
        self._alarm_scan = 0
        self._alarms = 0
        self._closed = False

    # --- bytes in
    def feed(self, data: bytes) -> None:
        if not data or self._closed:
            return
        if self._mode == "sniff":
            self._head += data
            if len(self._head) >= SNIFF:
                self._start(final=False)
            elif len(self._head) >= 2 and not self._head.startswith(b"\x1f\x8b") and b"\n" in self._head:
                # A pipe gives its first bytes slowly: read them as text now (the line end is LF
                # already) and apply the binary rule once the first SNIFF bytes are known.
                head, self._head = self._head, b""
                self._seen = head
                self._mode = "tentative"
                self.rstats.files += 1
                self._text(head)
            return
        if self._mode == "tentative":
            self._seen += data[: SNIFF - len(self._seen)]
            self._text(data)
            if len(self._seen) >= SNIFF:
                self._settle_tentative()
            return
        self._route(data)

    def _settle_tentative(self) -> None:
        seen, self._seen = self._seen, b""
        if looks_binary(seen[:SNIFF]):
            # what the file reader does: skip it all (very rare: NULs in a job's output)
            name = self.name
            self.__init__(name)  # type: ignore[misc]
            self._mode = "binary"
            self.rstats.skipped_files.append((name, "binary file"))
        else:
            self._mode = "text"

    def close(self) -> None:
        if self._closed:
            return
        if self._mode == "sniff":
            self._start(final=True)
        if self._mode == "tentative":
            self._settle_tentative()
        if self._mode == "gzip" and self._gz is not None and not self._gz.eof:
            self.rstats.warnings.append(f"{self.name}: stopped reading at line {self._lineno + 1}: "
                                        "Compressed file ended before the end-of-stream marker was reached")
        if self._mode in ("text", "gzip", "dead"):
            for region in self._lines.close():
                self._region_of(region)
            self.feeder.finish()
        self._closed = True

    def _start(self, final: bool) -> None:
        head, self._head = self._head, b""
        if not head:
            self._mode = "text"                   # empty input: an empty text (as open_text)
            self.rstats.files += 1
            return
        if head[:2] == b"\x1f\x8b":
            self._mode = "gzip"
            self._gz = zlib.decompressobj(wbits=31)
            try:
                text = self._gunzip(head)
            except zlib.error as exc:
                self.rstats.skipped_files.append((self.name, f"corrupt gzip ({exc})"))
                self._mode = "binary"
                return
            if looks_binary(text[:SNIFF]):
                self.rstats.skipped_files.append((self.name, "binary file"))
                self._mode = "binary"
                return
            self.rstats.files += 1
            self._text(text)
            return
        if looks_binary(head[:SNIFF]):
            self.rstats.skipped_files.append((self.name, "binary file"))
            self._mode = "binary"
            return
        self._mode = "text"
        self.rstats.files += 1
        self._text(head)

    def _route(self, data: bytes) -> None:
        if self._mode in ("text", "tentative"):
            self._text(data)
        elif self._mode == "gzip":
            try:
                self._text(self._gunzip(data))
            except zlib.error as exc:
                self.rstats.warnings.append(f"{self.name}: stopped reading at line {self._lineno + 1}: {exc}")
                self._mode = "dead"
        # binary, dead: nothing to parse

    def _gunzip(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._gz.eof:                         # a multi-member .gz: the next member
                if not data.startswith(b"\x1f\x8b"):
                    return b"".join(out)             # trailing bytes after the last member
                self._gz = zlib.decompressobj(wbits=31)
            out.append(self._gz.decompress(data))
            data = self._gz.unused_data if self._gz.eof else b""
        return b"".join(out)

    # --- text in: the line rules, shared with the file reader
    def _text(self, data: bytes) -> None:
        for region in self._lines.feed(data):
            self._region_of(region)

    def _region_of(self, region) -> None:
        buf, start, end, sep, _ = region
        self._lineno = self._region(self.feeder, buf, start, end, sep, self._lineno)

    # --- events out
    @property
    def alarms(self) -> int:
        """Events so far at WARN level or above."""
        ev = self.events
        for i in range(self._alarm_scan, len(ev)):
            if ev[i].level in ALARM_LEVELS:
                self._alarms += 1
        self._alarm_scan = len(ev)
        return self._alarms

    @property
    def record_open(self) -> bool:
        return self.feeder.asm.has_open_block

    @property
    def record_progress(self) -> int:
        """Changes whenever an open record takes a line."""
        return self.feeder.until

    def _all_stats(self) -> Stats:
        stats = Stats()
        stats.merge(self.stats)
        stats.files += self.rstats.files
        stats.lines_read += self.rstats.lines
        stats.cut_lines += self.rstats.cut_lines
        stats.skipped_files.extend(self.rstats.skipped_files)
        stats.warnings.extend(self.rstats.warnings)
        return stats

    def sorted_events(self) -> list[Event]:
        # records of interleaved streams settle out of order: file order, as parse_sources gives
        return sorted(self.events, key=lambda e: e.line)

    def peek(self) -> list[Event]:
        """The events as if the input ended now (a partial last line, records still open, bytes
        still sniffed), in file order; the parse itself goes on undisturbed."""
        if self._closed:
            return self.sorted_events()
        c = LiveParser.__new__(LiveParser)
        c.__dict__.update(self.__dict__)
        c.stats, c.unrecognized, c.events, c.rstats = Stats(), [], [], ReadStats()
        c.feeder = self.feeder.fork(c.stats, c.unrecognized, c.events)
        c._lines = copy.copy(self._lines)
        c._lines.stats = c.rstats
        c._lines._held, c._lines._pending = list(self._lines._held), list(self._lines._pending)
        c._gz = self._gz.copy() if self._gz is not None else None
        c.close()
        return sorted(self.events + c.events, key=lambda e: e.line)

    def snapshot(self) -> ParseResult:
        """The parse so far, with :meth:`peek`'s events."""
        return ParseResult(self.peek(), self._all_stats(), list(self.unrecognized), [self.name])

    def result(self) -> ParseResult:
        return ParseResult(self.sorted_events(), self._all_stats(), list(self.unrecognized), [self.name])


def merge_results(results: Sequence[ParseResult]) -> ParseResult:
    stats = Stats()
    events: list[Event] = []
    unrecognized: list[Unrecognized] = []
    files: list[str] = []
    for r in results:
        stats.merge(r.stats)
        events.extend(r.events)
        unrecognized.extend(r.unrecognized[: max(0, MAX_UNRECOGNIZED - len(unrecognized))])
        files.extend(r.files)
    return ParseResult(events, stats, unrecognized, files)


# ---------------------------------------------------------------------------------------------
# early diagnoses

def is_certain(diagnosis: dict, rules) -> bool:
    """A root cause worth announcing before the output ends: an error-severity root-cause rule with
    confidence >= CERTAIN_CONFIDENCE, no ``without`` clause (a later line could still rule it out)
    and no finding about something absent (only true at the end)."""
    if diagnosis.get("role") != "root_cause" or diagnosis.get("severity") != "error":
        return False
    rule = rules.get(diagnosis.get("id", "")) if rules is not None else None
    if rule is None:
        return False
    match = rule.data.get("match") or {}
    if not isinstance(match, dict) or match.get("without"):
        return False
    kinds = match.get("kind") or []
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    if any(k in ABSENCE_KINDS for k in kinds):
        return False
    return rule.confidence >= CERTAIN_CONFIDENCE


class EarlyDiagnoser:
    """Re-run the diagnosis on the events so far and report each new certain root cause once.

    Call :meth:`poke` often (after every chunk and when idle). A run happens when there is news (a
    new WARN/ERROR/FATAL event, or lines added to a record still open) and either the input has
    been quiet for ``debounce`` seconds or the news is ``max_wait`` seconds old; runs are spaced so
    that they take at most about a fifth of the time.
    """

    def __init__(self, parser: LiveParser, rules, emit: Callable[[dict], None], *,
                 debounce: float = 0.3, max_wait: float = 2.0, redact: bool = False):
        self.parser = parser
        self.rules = rules
        self.redact = redact
        self.emit = emit
        self.debounce = debounce
        self.max_wait = max_wait
        self.seen: set[str] = set()
        self.runs = 0
        self._state = (0, 0)
        self._news_since: float | None = None
        self._last_input = time.monotonic()
        self._not_before = 0.0

    def input(self) -> None:
        self._last_input = time.monotonic()

    def _news(self) -> bool:
        """A new WARN/ERROR/FATAL event, or a line taken by a record still open, since last asked."""
        p = self.parser
        state = (p.alarms, p.record_progress)
        news = state[0] != self._state[0] or (state[1] != self._state[1] and p.record_open)
        self._state = state
        return news

    def poke(self) -> None:
        now = time.monotonic()
        if self._news() and self._news_since is None:
            self._news_since = now
        if self._news_since is None or now < self._not_before:
            return
        if now - self._last_input < self.debounce and now - self._news_since < self.max_wait:
            return
        self._news_since = None
        self.run()
        took = time.monotonic() - now
        self._not_before = time.monotonic() + 4 * took

    def timeout(self) -> float | None:
        """How long the caller may block waiting for input before calling :meth:`poke` again."""
        if self._news_since is None:
            return None
        now = time.monotonic()
        due = max(self._not_before, min(self._last_input + self.debounce, self._news_since + self.max_wait))
        return max(0.01, due - now)

    def run(self) -> list[dict]:
        from .api import build_report

        self.runs += 1
        p = self.parser
        try:
            report = build_report(p.snapshot(), self.rules, redact=self.redact)
        except Exception:  # noqa: BLE001 - an early look must never stop the pass-through
            return []
        new = []
        for d in report.get("diagnoses", []):
            if d.get("id") in self.seen or not is_certain(d, self.rules):
                continue
            self.seen.add(d["id"])
            new.append(d)
            try:
                self.emit(d)
            except Exception:  # noqa: BLE001 - e.g. stderr closed: the pass-through goes on
                pass
        return new


def evidence_line(e: dict) -> str:
    """The telling line of an evidence record: the highlighted one, else the first."""
    text = e.get("text") or ""
    hl = e.get("highlight")
    if hl and isinstance(hl, (list, tuple)) and 0 <= hl[0] < len(text):
        start = text.rfind("\n", 0, hl[0]) + 1
        end = text.find("\n", hl[0])
        return text[start: end if end >= 0 else len(text)].strip()
    return text.split("\n", 1)[0].strip()


def format_notice(d: dict, prefix: str = "logdoc: ") -> str:
    """A few plain lines for a diagnosis found while the job runs."""
    where = ""
    ranks = d.get("ranks") or []
    if ranks:
        where = (" rank " if len(ranks) == 1 else " ranks ") + ", ".join(map(str, ranks[:8]))
    if d.get("hosts"):
        where += " on " + ", ".join(d["hosts"][:4])
    lines = [f"{prefix}root cause{' (' + where.strip() + ')' if where else ''}: [{d['id']}] {d['title']}"]
    for e in (d.get("evidence") or [])[:1]:
        lines.append(f"{prefix}  at {e['file']}:{e['line']}: {evidence_line(e)[:200]}")
    for f in (d.get("fix") or [])[:1]:
        lines.append(f"{prefix}  fix: {f.strip()}")
    lines.append(f"{prefix}  (logdoc rules show {d['id']} for the whole page)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# follow: pass a stream through and parse it

def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def follow(in_fd: int, out_fd: int | None, *, rules=None, name: str = "<stdin>",
           emit: Callable[[dict], None] | None = None, debounce: float = 0.3,
           redact: bool = False, note: Callable[[str], None] | None = None) -> tuple[ParseResult, EarlyDiagnoser | None]:
    """Read ``in_fd`` to its end; every byte goes to ``out_fd`` (unless None) as soon as it is read;
    the bytes are parsed as they come; with ``emit``, certain root causes are reported on the way.
    ``rules`` may be a function returning the rule set: it is called once the pass-through runs.

    A broken pass-through (the reader of ``out_fd`` went away) does not stop the reading: the job
    upstream must not die of SIGPIPE because of logdoc. For the same reason the first Ctrl-C (which
    the terminal sends to the job too) does not stop logdoc: it reads on while the job shuts down,
    and ``note`` says so; a second Ctrl-C stops it.
    """
    q: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
    errors: list[BaseException] = []

    def pump() -> None:
        through = out_fd is not None
        try:
            while True:
                try:
                    chunk = os.read(in_fd, CHUNK)
                except InterruptedError:
                    continue
                if not chunk:
                    break
                if through:
                    try:
                        _write_all(out_fd, chunk)  # type: ignore[arg-type]
                    except OSError:
                        through = False
                q.put(chunk)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)
        finally:
            q.put(None)

    interrupts = []

    def on_sigint(signum, frame):
        interrupts.append(signum)
        if len(interrupts) > 1:
            raise KeyboardInterrupt
        if note is not None:
            note("interrupted: reading the job's output to its end (Ctrl-C again to stop now)")

    old_sigint = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        old_sigint = signal.signal(signal.SIGINT, on_sigint)
    parser = LiveParser(name)
    t = threading.Thread(target=pump, name="logdoc-follow", daemon=True)
    t.start()
    try:
        if callable(rules):            # loaded while the input already flows through
            rules = rules()
        early = (EarlyDiagnoser(parser, rules, emit, debounce=debounce, redact=redact)
                 if emit is not None and rules is not None else None)
        while True:
            try:
                item = q.get(timeout=early.timeout() if early else None)
            except queue.Empty:
                early.poke()  # type: ignore[union-attr]
                continue
            if item is None:
                break
            parser.feed(item)
            if early:
                early.input()
                early.poke()
    finally:
        if old_sigint is not None:
            signal.signal(signal.SIGINT, old_sigint)
    t.join(timeout=1.0)
    parser.close()
    if errors and isinstance(errors[0], OSError):
        parser.stats.warnings.append(f"{name}: stopped reading: {errors[0]}")
    return parser.result(), early


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
                    _write_all(dst_fd, chunk)  # type: ignore[arg-type]
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
                    if left <= 0:     # something the command started still holds its output open
                        parser.stats.warnings.append(
                            f"the command exited, but processes it started still hold its output open; "
                            f"stopped reading {exit_grace:g} s later (they are still running in its process group {pgid})")
                        break
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


# ---------------------------------------------------------------------------------------------
# the excepthook

_DIST_TYPES = {"DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "DistQueueEmptyError",
               "ChildFailedError", "RendezvousError", "RendezvousTimeoutError", "RendezvousClosedError",
               "RendezvousConnectionError", "RendezvousStateError", "SignalException"}
_DIST_TEXT = re.compile(r"NCCL|nccl[A-Z]\w*Error|\bGloo\b|\bgloo\b|c10d|ProcessGroup|TCPStore|torch\.distributed|"
                        r"rendezvous|Rendezvous|connectFullMesh|watchdog|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|"
                        r"collective operation timeout")


def looks_distributed(exc: BaseException | None) -> bool:
    """Whether an exception (or one it was raised from) comes from distributed training."""
    seen = 0
    while exc is not None and seen < 8:
        seen += 1
        t = type(exc)
        mod = getattr(t, "__module__", "") or ""
        if t.__name__ in _DIST_TYPES or mod.startswith(("torch.distributed", "torch._C._distributed")):
            return True
        try:
            text = str(exc)
        except Exception:  # noqa: BLE001
            text = ""
        if _DIST_TEXT.search(text[:20000]):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def exception_diagnosis(etype, value, tb, *, logs: Sequence[str] | None = None, max_diagnoses: int = 2) -> str | None:
    """Plain text to print before the traceback of a distributed exception, or None."""
    if value is None or not looks_distributed(value):
        return None
    import traceback

    text = "".join(traceback.format_exception(etype, value, tb))
    rank = os.environ.get("RANK")
    if rank is not None and rank.isdigit():
        # so the diagnosis names the rank, as torchrun --tee would
        text = "".join(f"[rank{rank}]: {line}\n" for line in text.splitlines())
    sources: list[Any] = [Source("<exception>", text=text)]
    if logs is None:
        env_logs = os.environ.get("LOGDOC_LOGS", "")
        logs = [p for p in env_logs.split(os.pathsep) if p]
    warnings = []
    if logs:
        from .source import InputError, expand

        for p in logs:
            try:
                sources.extend(expand([p]))
            except InputError as exc:
                warnings.append(str(exc))
    from .api import _rules, build_report

    report = build_report(parse_sources(sources), _rules())
    diags = [d for d in report.get("diagnoses", []) if d.get("severity") in ("error", "warning")]
    lines = []
    for w in warnings:
        lines.append(f"logdoc: LOGDOC_LOGS: {w}\n")
    if not diags:
        if lines:
            return "".join(lines)
        return None
    lines.append("logdoc: this looks like a distributed training failure; what logdoc makes of it:\n")
    for d in diags[:max_diagnoses]:
        lines.append(format_notice(d).replace("logdoc: root cause", "logdoc: " + d.get("role", "").replace("_", " "), 1))
    lines.append("logdoc: (set LOGDOC_LOGS to the other ranks' log files or folders for a fuller diagnosis)\n"
                 if not logs else "")
    return "".join(lines)
