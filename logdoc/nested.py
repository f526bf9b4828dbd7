"""Messages nested inside other messages become events of their own.

PyTorch, NCCL and Gloo quote each other: a ``DistBackendError`` carries NCCL's result string and,
after ``Last error:``, the text of NCCL's last WARN; ``terminate called after throwing ...`` carries
the exception's ``what():``, which may be a watchdog failure that carries the collective's timeout;
a watchdog or an async error carries ``exception: <message>``; a Python exception chain carries the
exceptions it was raised from; an exception's message may be any known message (``RuntimeError:
[enforce fail at ...]``, ``RuntimeError: Error while creating shared memory segment ...``).

The classifiers read the carrier whole (its kind, template and fields) and keep the quoted text in
a field. The fields that hold a whole message are the nesting forms, one list here
(:data:`NESTING`), each named after the catalog wording that prints it. :func:`children` reads
each such text again, as a message in its own right (the NCCL header or none, then the PyTorch /
Gloo catalogs, then NCCL's WARN catalog for a bare message), and returns one event per message
that says more than its carrier: same rank, host and process, the line where the text stands, and
``fields.nested_in`` (the carrier's template, else its kind), ``fields.nested_kind`` and
``fields.nested_line`` (the carrier's line), so that rules and the analysis see it.
"""
from __future__ import annotations

from typing import Any

from . import nccl
from .classify.bare import classify_bare, last_warning_quote
from .classify.torch import WORK_OPEN, join_work_breaks
from .classify.torch import classify as classify_torch
from .classify.torch.exceptions import EXC_LINE
from .events import Envelope, Event
from .grammar import Parsed
from .lazyre import lazy_re

# field of the carrier -> the wording that puts a whole message there (torch_templates.tsv,
# grammars/torch_nccl_error.lark, grammars/torch_terminate.lark, grammars/torch_traceback.lark)
NESTING: dict[str, str] = {
    "last_error": "NCCL error in: ..., <result>, NCCL version V\\n<ncclResult>: ...\\nLast error:\\n{last_error}",
    "nccl_last_error": "... Last error:\\n{nccl_last_error}",
    "what": "terminate called after throwing an instance of '{cxx_exception_type}'\\n  what():  {message}",
    "exception": "... terminated with exception: {exception} / raised the following async exception: {exception}",
    "original_exception": "... Original exception: \\n{original_exception}",
    "gloo_error": "<c10d message>\\n Original exception: \\n{gloo_error} (ProcessGroupGloo's logAndThrow)",
    "exc_message": "<ExceptionType>: {exc_message} (a Python exception or a C++ exception's message)",
    "reason": "NCCL communicator was aborted on rank {rank}.  Original reason for failure was: {reason} / ... encountered "
              "error set by ProcessGroupNCCL: {reason} / Aborting ncclComm_ ... with reason: {reason}",
    "last_warning": "<file>:<line>: NCCL operation <call> failed: <result>{last_warning} (XLA's ToStatus; the tail holds "
                    "`. Last NCCL warning(error) log entry (may be unrelated) '<WARN message>'.`)",
    "chain": "The above exception was the direct cause of the following exception: / During handling of ...",
}
MAX_DEPTH = 4      # a message quoting a message quoting ... (hostile input nests without end)
MAX_CHILDREN = 8   # per carrier
MAX_TEXT = 8192    # characters of a nested text that are read
# readings of a text that say no more than any carrier of it: a gRPC status alone (``UNAVAILABLE: Socket closed``)
# quoted by an exception (``XlaRuntimeError: UNAVAILABLE: ...``) is that exception's message, read with it
_SAYS_NO_MORE = ("framework.grpc_status",)


# the fields that hold NCCL's last WARN text (ncclGetLastError: debug.cc keeps every WARN's formatted
# text as the last error), read as a WARN of no known format when no catalog reads them
LAST_WARN = ("last_error", "nccl_last_error")


def _texts(ev: Event) -> list[tuple[str, str]]:
    """The nested message texts an event carries, outermost first, with the field that holds each."""
    f = ev.fields or {}
    out: list[tuple[str, str]] = []
    for key in NESTING:
        if key == "chain":
            for link in f.get("chain") or ():
                if isinstance(link, dict) and link.get("exc_message"):
                    etype = link.get("exc_type")
                    msg = str(link["exc_message"])
                    out.append((key, f"{etype}: {msg}" if etype else msg))
            continue
        v = f.get(key)
        if isinstance(v, str) and v.strip():
            if key == "last_warning":  # XLA's tail: the WARN is the quoted text, not the words around it
                v = last_warning_quote(v) or v
            out.append((key, v))
    if not any(key in LAST_WARN for key, _ in out):
        # a message that quotes NCCL's last error as PyTorch prints it (`\nLast error:\n<WARN text>`,
        # NCCLUtils' getNcclErrorDetailStr) where no wording of the carrier was read: its first line cut
        # by a viewer (`NCCL error in: .../c10d/Pro`), or a framework's exception that copies it
        for _, v in out:
            i = v.find(_LAST_ERROR)
            if i >= 0:
                out.append(("nccl_last_error", v[i + len(_LAST_ERROR):]))
                break
    return out


_LAST_ERROR = "\nLast error:\n"


def _read(text: str) -> tuple[Any, Envelope] | None:
    """The reading of a nested text; a message that a paste or the printer wrapped over lines
    (``[enforce fail at ...]`` / ``  ifa != nullptr. ...``) is read again with the lines joined, and
    one that quotes an exception after words of its own (``the worker failed with RuntimeError:
    <message>``, an exception's repr as a paste's repair wrote it out) is read from that exception on."""
    if WORK_OPEN in text:  # a ProcessGroupNCCL record that a paste wrapped inside its WorkNCCL(...)
        work = join_work_breaks(text)
        if work != text:
            got = _read_one(work)
            if got is not None and got[0].template is not None:
                return got
    got = _read_one(text)
    if (got is None or got[0].kind == "torch.exception") and "\n" in text:
        joined = _read_one(_SOFT_WRAP.sub(" ", text))
        if joined is not None and joined[0].kind != "torch.exception":
            return joined
    if got is None or got[0].kind == "torch.exception" and not (got[0].fields or {}).get("cause"):
        m = _QUOTED_EXC.search(text, 1, min(len(text), MAX_QUOTE_AT))
        if m is not None:
            inner = _read_one(text[m.start(1):])
            if inner is not None and (inner[0].kind != "torch.exception" or (inner[0].fields or {}).get("cause")):
                return inner
    return got


# an exception line quoted inside a message, after a blank, a colon or an opening bracket
_QUOTED_EXC = lazy_re(r"(?<=[\s:(\[])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure):[ \t])")
MAX_QUOTE_AT = 400


_SOFT_WRAP = lazy_re(r"[ \t]*\n[ \t]*")


def _read_one(text: str) -> tuple[Any, Envelope] | None:
    env = Envelope()
    p = nccl.classify(text, env)
    if p is None:
        p = classify_torch(text, env)
    if p is None or (p.kind == "torch.exception" and not (p.fields or {}).get("cause")):
        bare = classify_bare(text) or classify_bare(_message_of(text))
        if bare is not None:
            p = bare
    return (p, env) if p is not None else None


def _last_warn(text: str) -> tuple[Any, Envelope] | None:
    """NCCL's last WARN text that no catalog format reads (a ``%s`` alone, a plugin's own words): still
    a WARN of NCCL's, without a template (its first line: a WARN is one line)."""
    line = text.split("\n", 1)[0].strip()
    if not line:
        return None
    return Parsed("nccl.warn", "WARN", None, {"header": "none", "message": line}), Envelope()


def _cause_reading(p, text: str) -> tuple[Any, Envelope] | None:
    """The reading of the message an exception line carries (``RuntimeError: <catalog message>``), when
    the classifier named it (the exception's ``cause``); None otherwise."""
    cause = (p.fields or {}).get("cause")
    if not isinstance(cause, dict) or cause.get("kind") in (None, "torch.exception"):
        return None
    env = Envelope()
    inner = classify_torch(_message_of(text), env)
    if inner is None or inner.kind == "torch.exception":
        return None
    return inner, env


def _message_of(text: str) -> str:
    """``RuntimeError: <message>`` -> the message (a bare NCCL text quoted by an exception)."""
    m = EXC_LINE.match(text, 0, min(len(text), 400))
    return text[m.end():] if m else text


def children(ev: Event, depth: int = 0) -> list[Event]:
    """The events of the messages nested in ``ev`` (and in them), in order; [] when none."""
    if depth >= MAX_DEPTH or ev.kind.startswith(("nccl.", "analysis.")):
        return []  # NCCL's own lines quote nothing
    out: list[Event] = []
    seen = {(ev.kind, ev.template, ev.text.strip())}
    for field, text in _texts(ev):
        text = text.strip()[:MAX_TEXT]
        if not text or len(out) >= MAX_CHILDREN:
            break
        got = _read(text)
        if got is None and field in LAST_WARN:
            got = _last_warn(text)
        if got is None:
            continue
        p, env = got
        if p.kind == ev.kind and p.template == ev.template or p.kind in _SAYS_NO_MORE:
            continue  # the carrier already says it (an exception named by its message)
        if p.kind == "torch.exception":
            # an exception whose message is a catalog message (its `cause`) is that message; one whose
            # message is no known one says nothing its carrier does not
            inner = _cause_reading(p, text)
            if inner is None:
                continue
            p, env = inner
            if p.kind == ev.kind and p.template == ev.template:
                continue
        key = (p.kind, p.template, text)
        if key in seen:
            continue
        seen.add(key)
        child = _event(ev, p, env, text)
        out.append(child)
        out.extend(children(child, depth + 1))
    version = _quoted_version(ev, out)
    if version is not None:
        out.append(version)
    return out[:MAX_CHILDREN]


def _quoted_fact(ev: Event) -> bool:
    """A version its carrier quotes (:func:`_quoted_version`): a fact about the carrier, never a message
    that explains it (no link from the carrier to it)."""
    return ev.kind == "nccl.version" and bool(ev.fields) and ev.fields.get("nested_kind") is not None


def _quoted_version(ev: Event, found: list[Event]) -> Event | None:
    """The NCCL version a PyTorch error quotes (ProcessGroupNCCL's ``..., NCCL version 2.20.5``, its field
    ``nccl_version``, the release itself where PyTorch up to 1.10 misprinted it) as an ``nccl.version``
    event: the version of the library that failed, as the banner would have given it, for the rules
    gated on a version and for the comparison of versions across ranks."""
    v = (ev.fields or {}).get("nccl_version")
    if not v or any(c.kind == "nccl.version" for c in found):
        return None
    version = str(v).split("+", 1)[0]
    return _event(ev, Parsed("nccl.version", "INFO", "nccl.version", {"version": version, "suffix": None, "cuda": None}),
                  Envelope(), f"NCCL version {version}")


# a warning's quoted message is said at the warning's level: ProcessGroupNCCL's heartbeat monitor warns
# `Failed to check the "should dump" flag on TCPStore, ..., with error: <the store's error>` at every
# shutdown where the store's host leaves first; the store error it quotes is no error of the job's
_WARNINGS = ("WARN", "WARNING")
_ERRORS = ("ERROR", "FATAL")


def _level(carrier: Event, level: str | None) -> str | None:
    """The level of a message its carrier quotes: the carrier's when the carrier is a warning and the
    message would be an error by its own wording."""
    if carrier.level in _WARNINGS and level in _ERRORS:
        return carrier.level
    return level


def _event(carrier: Event, p, env: Envelope, text: str) -> Event:
    head = text.split("\n", 1)[0][:80]
    at = carrier.text.find(head) if head else -1
    line = carrier.line + (carrier.text.count("\n", 0, at) if at > 0 else 0)
    fields = dict(p.fields)
    fields["nested_in"] = carrier.template or carrier.kind
    fields["nested_kind"] = carrier.kind
    fields["nested_line"] = carrier.line
    ev = Event(p.kind, _level(carrier, p.level), carrier.file, line, text, line + text.count("\n"), carrier.rank,
               carrier.local_rank, carrier.node_rank, env.host or carrier.host, env.pid or carrier.pid,
               env.time or carrier.time, p.template, fields)
    ev.process = env.process or carrier.process
    return ev


# ------------------------------------------------------------------------------------------------
# which event carries which: the links the report's ranking reads (logdoc/diagnose.py)

# Python exceptions whose message only says that another process failed: its own output holds why
# (the standard library's subprocess: "Command '...' returned non-zero exit status N.").
MESSENGERS = ("CalledProcessError",)
_FRAME_HEAD = lazy_re(r"[ \t]*File \"[^\"\n]{1,1024}\", line \d+")


def key(ev: Event) -> tuple[str, int, str]:
    return (ev.file, ev.line, ev.kind)


def _unnamed(ev: Event) -> bool:
    return ev.kind == "torch.exception" and bool((ev.fields or {}).get("exc_type"))


# lines between an exception printed without a message and the error line its message ends with
# (PaddlePaddle's C++ traceback of up to a few dozen frames, its dashed headers)
MESSAGE_AFTER = 120
# exceptions that say all there is without a message (a bare `assert`, Ctrl-C, sys.exit())
_SAYS_ALL = frozenset(("AssertionError", "KeyboardInterrupt", "SystemExit", "StopIteration"))


def _message_after(events, unnamed: list[Event], links: dict) -> None:
    """The links of :func:`carrier_links` from an exception without a message to the error after it."""
    empty = [ev for ev in unnamed if not str(ev.fields.get("exc_message") or "").strip()
             and str(ev.fields["exc_type"]).rsplit(".", 1)[-1] not in _SAYS_ALL]
    if not empty:
        return
    by_file: dict[str, list[Event]] = {}
    for ev in empty:
        by_file.setdefault(ev.file, []).append(ev)
    best: dict[int, Event] = {}
    for ev in events:
        carriers = by_file.get(ev.file)
        if carriers is None or ev.kind.startswith("analysis.") or _quoted_fact(ev):
            continue
        f = ev.fields or {}
        if ev.level not in ("ERROR", "FATAL") or f.get("nested_line") is not None or f.get("traceback"):
            continue  # (a traceback is an exception of its own, not the message of one before it)
        for c in carriers:
            if c.end_line < ev.line <= c.end_line + MESSAGE_AFTER and (id(c) not in best or ev.line < best[id(c)].line):
                best[id(c)] = ev
    for c in empty:
        ev = best.get(id(c))
        if ev is not None and not (_unnamed(ev) and not str(ev.fields.get("exc_message") or "").strip()):
            _link(links, key(c), (key(ev),))


def carrier_links(events) -> dict[tuple[str, int, str], set[tuple[str, int, str]] | tuple]:
    """carrier -> the events it carries (keys ``(file, line, kind)``, closed over several levels; a set, or
    a 1-tuple for a carrier of one):

    * a nested message (:func:`children`) and its carrier (``fields.nested_line`` / ``nested_kind``);
    * the records of one line of the log: an exception's repr or a quoted string decoded by the paste
      repair (:mod:`logdoc.paste`) stands on its carrier's line, whose exception (``ValueError: the worker
      failed with``) carries it;
    * an exception whose message goes on with a traceback without its header (Ray's task and actor
      errors print the cause's frames and exception line under their own): the record that starts
      with those frames on the next line;
    * an exception printed without a message on its line (``OSError: `` and nothing after it: its message
      starts with a line break, as PaddlePaddle's errors do, whose C++ traceback and ``Error Message
      Summary`` come next): the first error that starts within :data:`MESSAGE_AFTER` lines after it in
      its file, the error line its message ends with;
    * an exception that only reports another process's failure (:data:`MESSENGERS`): every other
      error of the same file.
    """
    links: dict[tuple, set[tuple]] = {}
    messengers: list[Event] = []
    unnamed: list[Event] = []
    for ev in events:
        if ev.kind.startswith("analysis.") or _quoted_fact(ev):
            continue
        f = ev.fields
        if f and f.get("nested_line") is not None and f.get("nested_kind"):
            _link(links, (ev.file, f["nested_line"], f["nested_kind"]), (key(ev),))
        if _unnamed(ev):
            unnamed.append(ev)
            if str(f["exc_type"]).rsplit(".", 1)[-1] in MESSENGERS:
                messengers.append(ev)
    if unnamed:
        # the events on the lines of an unnamed exception and the first one right after it: the
        # lines of these few, not every line of the job
        by_line: dict[tuple[str, int], list[Event]] = {(ev.file, ev.line): [] for ev in unnamed}
        starts: dict[tuple[str, int], Event | None] = {(ev.file, ev.end_line + 1): None for ev in unnamed}
        for ev in events:
            if ev.kind.startswith("analysis.") or _quoted_fact(ev):
                continue
            at = (ev.file, ev.line)
            got = by_line.get(at)
            if got is not None:
                got.append(ev)
            if at in starts and starts[at] is None:
                starts[at] = ev
        done: set[int] = set()
        for ev in unnamed:
            if id(ev) in done:
                continue
            evs = by_line[(ev.file, ev.line)]
            for one in evs:  # (in the order of the events, as every event of the line is looked at)
                if not _unnamed(one) or id(one) in done:
                    continue
                done.add(id(one))
                same = [key(o) for o in evs if o is not one and o.kind != "torch.exception"]
                if same and one.end_line == one.line:
                    _link(links, key(one), same)
                nxt = starts.get((one.file, one.end_line + 1))
                if nxt is not None and nxt is not one and _FRAME_HEAD.match(nxt.text) is not None:
                    _link(links, key(one), (key(nxt),))
    _message_after(events, unnamed, links)
    if messengers:
        errors_by_file: dict[str, list[Event]] = {ev.file: [] for ev in messengers}
        for ev in events:
            if ev.kind.startswith("analysis.") or ev.file not in errors_by_file:
                continue
            if ev.level in ("ERROR", "FATAL") or ev.kind == "nccl.warn":
                if not (_unnamed(ev) and str(ev.fields["exc_type"]).rsplit(".", 1)[-1] in MESSENGERS):
                    errors_by_file[ev.file].append(ev)
        for ev in messengers:
            carried = {key(o) for o in errors_by_file.get(ev.file, ()) if o is not ev}
            if carried:
                _link(links, key(ev), carried)
    # closed: a carrier carries what the messages it carries carry
    for _ in range(MAX_DEPTH):
        grew = False
        for k, vs in links.items():
            more = set().union(*(links.get(v, ()) for v in vs))
            if more:
                more.difference_update(vs)
                more.discard(k)
            if more:
                if vs.__class__ is tuple and len(vs) + len(more) <= _FEW:
                    links[k] = vs + tuple(more)  # (a few keys: a tuple, 64 bytes for two against a set's 216)
                else:
                    if vs.__class__ is tuple:
                        links[k] = vs = set(vs)
                    vs |= more
                grew = True
        if not grew:
            break
    return links


_FEW = 4  # a carrier of up to this many keys after the closure holds them as a tuple (its readers union them)


def _link(links: dict, k: tuple, carried) -> None:
    """``k`` carries the keys ``carried`` too: a carrier of one key holds it as a 1-tuple (a job of many
    ranks has a nested message per rank and line of its failure), of more a set."""
    got = links.get(k)
    if got is None:
        carried = tuple(carried)
        if len(carried) == 1:
            links[k] = carried
            return
        links[k] = got = set()
    elif got.__class__ is tuple:
        links[k] = got = set(got)
    got.update(carried)
