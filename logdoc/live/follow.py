"""``logdoc explain - --follow``: pass a stream through unchanged and parse it as it goes."""

import os
import queue
import signal
import threading
from typing import Callable

from ..results import ParseResult
from .early import EarlyDiagnoser
from .stream import LiveParser

CHUNK = 64 * 1024           # bytes a pump reads from a pipe at a time
QUEUE_CHUNKS = 256          # at most 256 chunks (16 MiB) between the reader and the parser


# ---------------------------------------------------------------------------------------------
# follow: pass a stream through and parse it

def write_all(fd: int, data: bytes) -> None:
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
                        write_all(out_fd, chunk)  # type: ignore[arg-type]
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
