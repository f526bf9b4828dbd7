"""Stage 4 for PyTorch-distributed, torchrun, Gloo, CUDA and kernel Xid messages: the dispatcher.

``classify(text, env)`` takes one message with its envelopes removed (a multi-line record from
:mod:`logdoc.blocks` is joined with ``\\n``) and returns a :class:`~logdoc.grammar.Parsed` or
``None`` when the text is none of those. This module only decides which reader a message goes to;
the readers are its submodules:

- ``exceptions.py``: Python tracebacks, ``Type: message`` lines, ``terminate called ...``;
- ``torchrun.py``: the ChildFailedError failure summary;
- ``transformers.py``: the ProcessGroup prefix and the structured ProcessGroupNCCL formats;
- ``gloo.py``: Gloo's located errors;
- ``catalog.py``: everything else, by the catalog table ``grammars/torch_templates.tsv``;
- ``common.py``: the level, signal and errno tables they share.

How a message is understood, cheapest test first:

1. a few literal tests on the start of the text pick the structure: Python traceback, torchrun
   failure summary, ``terminate called ...``, C++ backtrace, ``Type: message`` exception line;
2. the ProcessGroup prefix (``[Rank r]``, ``[PG 1 Rank r]``, ``[PG ID 1 PG GUID 1(desc) Rank r]``)
   is peeled by ``grammars/torch_prefix.lark``;
3. the body goes to a Lark grammar when it is one of the structured formats (``torch.lark``:
   WorkNCCL watchdog records, desync report, monitored barrier; ``torch_nccl_error.lark``;
   ``torch_mismatch.lark``; ``gloo.lark``);
4. anything else is named by the catalog table ``grammars/torch_templates.tsv`` (generated from
   the PyTorch and Gloo message catalogs by ``python tools/make_catalog torch``).

A message may quote another (an exception in a watchdog record, the ``what()`` of a terminate): the
readers of those formats are handed :func:`read_message`, which reads the inner one through this
dispatcher again, to a bounded depth.

Template ids: ``torch.<kind-like name>`` for the formats a grammar recognises,
``torch:<component>:<slug>`` and ``gloo:<file>:<line>`` for catalog rows, ``logdoc:<area>:<slug>``
for formats the catalogs lack (CUDA, Xid, spawn), ``py:traceback`` / ``py:exception`` for a Python
exception whose message is not otherwise known.
"""
from __future__ import annotations

import json
import re
import threading
from typing import Any

from ... import kinds as _kinds
from ...blocks import FRAME_LINE, SUMMARY_BODY, is_code_head
from ...envelope import has_huge_number, unwrap
from ...events import Envelope
from ...grammar import Parsed
from .catalog import templated
from .common import UNREAD, cause, level_of, read
from .exceptions import EXC_LINE, QUALIFIED_EXC, exception_event, terminate, traceback
from .gloo import GLOO_LOC, MASKED_LOC, classify_gloo
from .torchrun import child_failed, cut_summary
from .transformers import PREFIX_T, WATCHDOG_TIMEOUT_ID, mismatch, nccl_error, torch_body
from ...lazyre import lazy_re

__all__ = ["classify", "KINDS"]

# Kinds this package emits: those of the one registry (logdoc/kinds.py) whose producer it is.
KINDS = tuple(k for k, spec in _kinds.KINDS.items() if spec.producer == "logdoc/classify/torch")

_RANK_LABEL = lazy_re(r"\[rank\d+\][ \t]+(?=[A-Z\[])")
# c10d's own logging macros put a tag before the message: `[c10d] ` (C10D_ERROR/WARNING/INFO),
# `[c10d - debug] ` and `[c10d - trace] ` (C10D_DEBUG/TRACE, torch/csrc/distributed/c10d/logging.h), with the
# level the tag says (None: the c10 header's)
_C10D_TAGS = (("[c10d] ", None), ("[c10d - debug] ", "DEBUG"), ("[c10d - trace] ", "TRACE"))


def _c10d_tag(s: str) -> tuple[str, str | None]:
    """`s` without c10d's logging tag, when it starts with one, and the level its tag says."""
    for tag, level in _C10D_TAGS:
        if s.startswith(tag):
            return s[len(tag):], level
    return s, None


_JSON_MESSAGE = lazy_re(r'"message":\s*"((?:[^"\\\n]|\\.){1,4000})",?\s*$')
# a value counts only with the delimiter after it: a line cut inside a number or a name says nothing of it
_WATCHDOG_PARTS = (("seq", lazy_re(r"\bSeqNum=(\d+)[,) ]")), ("op_type", lazy_re(r"\bOpType=([A-Za-z_]\w*)[,) ]")),
                   ("numel_in", lazy_re(r"\bNumelIn=(\d+)[,) ]")), ("numel_out", lazy_re(r"\bNumelOut=(\d+)[,) ]")),
                   ("timeout_ms", lazy_re(r"\bTimeout\(ms\)=(\d+)[,) ]")),
                   ("elapsed_ms", lazy_re(r"\bran for (\d+) (?:milliseconds|ms)\b")))
_NCCL_RESULTS = tuple(f"{name}: " for name in ("ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
                                               "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError",
                                               "ncclInProgress", "ncclTimeout"))
# what is left of `NCCL error in: <file>:<line>, ` when a paste cut the line inside the file's path: the tail of its
# name and its line, then the error string and `NCCL version` (which says it is NCCL's message)
_CUT_NCCL_ERROR_IN = lazy_re(r"[\w./+-]{1,200}:\d{1,6}, [^,\n]{1,200}, NCCL version \d")
_TORCH_BODY_STARTS = ("Watchdog caught", "Collective", "found async exception", "Work WorkNCCL",
                      "failure detected by watchdog", "NCCL Work update", "Process group watchdog thread",
                      "NCCL watchdog thread", "WorkNCCL(", "Timeout at NCCL work:",
                      "Exception (either an error or timeout) detected by watchdog")


_QUOTES = "\"'`\u201c\u2018"
_CLOSING = {"\u201c": "\u201d", "\u2018": "\u2019"}


# An exception message may quote another one (`RuntimeError: ... NCCL error ...`), and each is read
# by read_message again; hostile input can nest that without end (`E: E: E: ...`), so the depth is capped.
_MAX_NESTING = 6
_nesting = threading.local()


_OWN_LINE = lazy_re(r"\n([^\s\n])")  # a line that starts at its first column (no frame, no code line)
_WHAT_HEADS = lazy_re(r"(?:what\(\):[ \t]*)+")  # a terminate record's `what():`, once or run together
# an item of the desync report (TraceUtils.h, analyzeLaggingRanks) on its own line, its tail ` (count from 1)` and its
# tabs and dash lost or kept (a paste, a post that quotes the one line that names the ranks)
_DESYNC_ITEM = lazy_re(r"(?:-[ \t]+)?\[(?P<ranks>\d+(?:,[ \t]*\d+)*)\] (?:joined but didn't finish collective #(?P<seq>\d+)"
                       r"|finished collective #(?P<done>\d+), but didn't join collective #(?P<next>\d+))"
                       r"(?: \(count from 1\))?[ \t.]*$")
_DESYNC_IDS = ("torch:TraceUtils:joined-but-didn-t-finish-collective-count",
               "torch:TraceUtils:finished-collective-but-didn-t-join-collective")


def read_message(text: str, env: Envelope | None) -> Parsed | None:
    """A message body (no envelope; may still carry a PG prefix or an exception type)."""
    depth = getattr(_nesting, "depth", 0)
    if depth >= _MAX_NESTING:
        return None
    _nesting.depth = depth + 1
    try:
        return _message_body(text, env)
    finally:
        _nesting.depth = depth


def _message_body(text: str, env: Envelope | None) -> Parsed | None:
    s = text.lstrip(" \t\r\n")
    if not s:
        return None
    c0 = s[0]
    if c0 in _QUOTES and len(s) > 2 and s[1].isalpha() and EXC_LINE.match(s, 1, min(len(s), 400)):
        # an exception line a post quotes (`"RuntimeError: ..."`, `'ValueError: ...'`): the quote marks
        # are the poster's, the message is the program's
        s = s[1:]
        end = s.rstrip().rstrip(",.")
        if end.endswith(_CLOSING.get(c0, c0)):
            s = end[:-1]
        c0 = s[0]
    if c0 == "T" and s.startswith("Traceback (most recent call last)"):
        return traceback(s, env, read_message)
    if text[:2] == "  " and "\n" in s and is_code_head(text[:text.find("\n")]):
        # a traceback a paste cut above its last code lines (logdoc.blocks: ``code_heads``): the code lines,
        # then the exception line
        got = traceback("Traceback (most recent call last):\n" + text.lstrip("\r\n"), env, read_message)
        if got is not None:
            return got
    if c0 == "F" and FRAME_LINE.match(s):
        # a traceback without its head (a paste that starts inside it, or the cause's frames a message
        # goes on with): read as the traceback it is, else (frames garbled by interleaving) from the
        # first line that is no frame on, the exception line
        body = text.lstrip("\r\n")
        got = traceback("Traceback (most recent call last):\n" + body, env, read_message)
        if got is not None:
            return got
        at = _OWN_LINE.search(body)
        return classify(body[at.start(1):], env) if at is not None else None
    if c0 == "=" and s.startswith("==="):
        cf = child_failed(s)
        if cf is not None:
            return Parsed("torchrun.child_failed", level_of(env, "ERROR"), "torch:elastic-errors:child-failed-error", cf)
    if c0 in "[tTheRFr" and "\n" in s and SUMMARY_BODY.match(text.lstrip("\r\n")):
        # torchrun's summary pasted without its head: its body alone (blocks.py joins it)
        cf = cut_summary(text.lstrip("\r\n"))
        if cf is not None:
            return Parsed("torchrun.child_failed", level_of(env, "ERROR"), "torch:elastic-errors:child-failed-table", cf)
    if c0 == '"' and s.startswith('"message": "'):
        # torchelastic's error_handler logs the error file as JSON: `"message": "<Type>: <message>",`
        m = _JSON_MESSAGE.match(s)
        if m:
            try:
                quoted = json.loads('"' + m.group(1) + '"')
            except ValueError:
                quoted = None
            if quoted and EXC_LINE.match(quoted):
                return read_message(quoted, env)
    if c0 == "t" and s.startswith("terminate called"):
        return terminate(s, env, read_message)
    if c0 == "w" and s.startswith("what():"):
        # the `what():` of a terminate record whose `terminate called ...` head a paste cut, or several
        # threads' records run together (`what():    what():  <message>`): the message it carries
        return read_message(_WHAT_HEADS.sub("", s, count=1), env)
    if c0 in "Ef" and (s.startswith("Exception raised from ") or s.startswith("frame #")):
        return Parsed("torch.cxx_backtrace", level_of(env, "ERROR"),
                      "torch:c10-exception:exception-raised-from-at-most-recent-call",
                      {"cxx_frames": s.count("frame #"), "raised_from": s.split("\n", 1)[0][len("Exception raised from "):]
                       if s.startswith("Exception raised from ") else None})
    if c0 == "<" and s.startswith("<omitting python frames>"):
        return Parsed("torch.cxx_backtrace", level_of(env, "ERROR"),
                      "torch:c10-exception:exception-raised-from-at-most-recent-call", {"cxx_frames": s.count("frame #")})
    if c0 in "[-" and "collective #" in s[:200]:
        m = _DESYNC_ITEM.match(s)
        if m is not None:
            if m["seq"] is not None:
                return Parsed("torch.desync_report", level_of(env, "ERROR"), _DESYNC_IDS[0],
                              {"ranks": m["ranks"], "seq": int(m["seq"])})
            return Parsed("torch.desync_report", level_of(env, "ERROR"), _DESYNC_IDS[1],
                          {"ranks": m["ranks"], "seq": int(m["done"]), "seq_plus_1": int(m["next"])})
    if c0 == "[" and s.startswith("[rank"):
        # a rank label without the colon of torch's `[rankN]:` (a launcher's or a paste's): peeled when
        # what follows is a message of its own
        m = _RANK_LABEL.match(s)
        if m and m.end() < len(s):
            s = s[m.end():]
            c0 = s[:1]
    debug = None  # the level of c10d's debug or trace tag
    if c0 == "[" and s.startswith("[c10d"):
        s, debug = _c10d_tag(s)
        c0 = s[:1]
    pg: dict[str, Any] | None = None
    body = s
    if c0 == "[" and (s.startswith("[Rank") or s.startswith("[PG")):
        got = read("torch_prefix", s, PREFIX_T)
        if got is not UNREAD:
            pg, body = got
            if body.startswith(":"):
                body = body[1:].lstrip()
            if body.startswith("[c10d"):
                body, debug = _c10d_tag(body)
    # a Python exception line: `Type: message`
    if body[:1].isalpha() and pg is None:
        m = EXC_LINE.match(body, 0, min(len(body), 400)) or QUALIFIED_EXC.match(body, 0, min(len(body), 400))
        if m and m.end() <= len(body):
            etype = m.group(1)
            if "." in etype or etype[:1].isupper() or etype in ("gaierror", "herror"):  # (socket's, printed bare)
                rest = body[m.end():]
                return exception_event({"exc_type": etype, "exc_message": rest.strip()}, env, read_message)
    p = _structured(body, env, pg)
    if p is not None:
        return p
    p = templated(body, env, pg, read_message)
    if p is not None:
        return p
    if pg is not None:
        return Parsed("torch.message", debug or level_of(env, "ERROR"), None, dict(pg))
    if debug is not None:  # c10d's debug and trace messages are not in the catalog (only its errors, warnings, infos)
        return Parsed("torch.message", debug, None, {})
    return _quoted_by_program(body, env)


# The heads of PyTorch messages that nothing else starts with: a program that prints an exception
# after words of its own (`print("training failed, e=", e)`, `logger.error(f"step {i}: {e}")`) puts
# them mid-line, where no envelope or prefix reading finds them.
_EMBEDDED_HEADS = ("NCCL error in: ", "NCCL timeout in: ", "Gloo connectFullMesh failed", "[enforce fail at ")


def _quoted_by_program(body: str, env: Envelope | None) -> Parsed | None:
    """The message a program's own words stand before, read as the message alone."""
    head = body[:400]
    at = [i for i in (head.find(h) for h in _EMBEDDED_HEADS) if i > 0]
    if not at:
        return None
    return read_message(body[min(at):], env)


def _structured(body: str, env: Envelope | None, pg: dict[str, Any] | None) -> Parsed | None:
    b0 = body[:1]
    head = body[:200]
    if (body.startswith(_TORCH_BODY_STARTS) or "monitoredBarrier" in head
            or (b0 == "R" and body.startswith("Rank") and "\t" in body[:64] and "knowledge" in body)):
        r = torch_body(body)
        if r is not None:
            kind, tid, level, fields = r
            out = dict(pg or {})
            out.update(fields)
            for key in ("exception", "original_exception"):
                exc = out.get(key)
                if isinstance(exc, str) and exc:
                    inner = read_message(exc, None)
                    if inner is not None:
                        out["cause"] = cause(inner)
                        for k in ("nccl_result", "error_string", "nccl_version", "last_error", "source_location"):
                            if k in inner.fields:
                                out.setdefault(k, inner.fields[k])
            if kind == "torch.monitored_barrier" and pg:
                out["rank"] = pg.get("pg_rank")
            return Parsed(kind, level_of(env, level), tid, out)
        if body.startswith("Watchdog caught collective operation timeout") and "\n" not in body:
            # one line abbreviated or cut by a paste (`WorkNCCL(... OpType=BROADCAST ...)`, `NumelIn=1, ...)`,
            # the `ran for` part missing): still a watchdog timeout, with the values that are there. A
            # record of several lines that does not read whole is not guessed (wraps are joined by blocks)
            out = dict(pg or {})
            # another process's record spliced into the cut line is not read as this one's values
            ends = [i for i in (body.find("[rank", 1), body.find("[Rank ", 1), body.find("Watchdog caught", 1)) if i > 0]
            own = body[:min(ends)] if ends else body
            for key, rx in _WATCHDOG_PARTS:
                m = rx.search(own)
                if m:
                    out[key] = m.group(1) if key == "op_type" else int(m.group(1))
            out["cut"] = True
            return Parsed("torch.watchdog_timeout", level_of(env, "ERROR"), WATCHDOG_TIMEOUT_ID, out)
    if b0 == "n" and body.startswith(_NCCL_RESULTS):
        # ncclGetErrorString's `ncclXxx: <interpretation>` (+ `Last error:` and the reason), the tail
        # of a `NCCL error in: ...` message that a paste or an exception quotes without its head
        p = nccl_error(body)
        if p is not None:
            p.level = level_of(env, p.level)
            return p
    if b0 not in "Nn" and ", NCCL version " in head:
        # `NCCL error in: <file>:<line>, <error string>, NCCL version X` whose head a paste cut inside the file's
        # path (`GroupNCCL.cpp:1275, internal error, NCCL version 2.14.3`, then the result and `Last error:` lines)
        m = _CUT_NCCL_ERROR_IN.match(body)
        if m is not None:
            p = nccl_error("NCCL error in: " + body)
            if p is not None:
                p.fields["cut"] = True
                p.level = level_of(env, p.level)
                return p
    if b0 == "N" and body.startswith(("NCCL error", "NCCL timeout in")):
        p = nccl_error(body)
        if p is not None:
            if pg:
                p.fields = {**pg, **p.fields}
            p.level = level_of(env, p.level)
            return p
    if b0 in "DP" and body.startswith(("Detected mismatch between collectives", "ProcessGroupWrapper:")):
        p = mismatch(body, read_message)
        if p is not None:
            p.level = level_of(env, p.level)
            return p
    if b0 == "[" and body[1:2] == "<" or body.startswith("[enforce fail at <"):
        unmasked = MASKED_LOC.sub(lambda m: "[" + (m.group(1) or ""), body, count=1)
        if unmasked != body and GLOO_LOC.match(unmasked):
            body = unmasked
    if (b0 == "[" and GLOO_LOC.match(body)) or (b0 == "G" and body.startswith("Gloo connectFullMesh")):
        p = classify_gloo(body, read_message)
        if p is not None:
            p.level = level_of(env, p.level)
            return p
    if "NVRM: Xid" in head and not body.startswith("NVRM"):
        i = body.find("NVRM: Xid")
        return templated(body[i:], env, pg, read_message)
    return None


# A tqdm progress bar (`desc: 35%|#####     | 700/2000 [30:01<57:14, 39.1it/s]`): the program's own
# work (tokenizing, downloading, loading, evaluating) and how long it has run. A message printed by
# another process while the bar is redrawn (with `\r` and no newline) lands glued after it.
_TQDM = lazy_re(r"(?P<desc>[^\n|]{0,160}?)[ \t]*(?P<percent>\d{1,3})%\|[^|\n]{0,600}\|[ \t]*"
                   r"(?P<done>[\d.]+[kMGT]?)/(?P<total>[\d.]+[kMGT]?|\?)[ \t]*"
                   r"\[(?P<elapsed>(?:\d+:)?\d+:\d\d)<(?P<remaining>(?:\d+:)?\d+:\d\d|\?)(?:,[^\]\n]{0,60})?\]")


def _seconds(clock: str | None) -> int | None:
    if not clock or not clock[0].isdigit():
        return None
    n = 0
    for part in clock.split(":"):
        n = n * 60 + int(part)
    return n


def _progress(m: re.Match) -> dict[str, Any]:
    desc = m.group("desc").strip().rstrip(":").strip()
    return {"desc": desc or None, "percent": int(m.group("percent")), "done": m.group("done"),
            "total": m.group("total"), "elapsed_s": _seconds(m.group("elapsed")),
            "remaining_s": _seconds(m.group("remaining"))}


# PyTorch Lightning's own start-up lines (its DDP strategy and GPU accelerator): each process announces its
# rank and the world size, `initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2` (`initializing distributed:` in later
# 1.x releases, `Initializing distributed:` from 2.0: lightning/fabric/strategies/ddp.py and
# lightning/fabric/utilities/distributed.py, _init_dist_connection), and the GPUs it may use,
# `LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]`.
_PL_MEMBER = lazy_re(r"^[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK: (?P<rank>\d+), MEMBER: (?P<member>\d+)/(?P<world>\d+)\s*$")
_PL_DEVICES = lazy_re(r"^LOCAL_RANK: (?P<local>\d+) - CUDA_VISIBLE_DEVICES: \[(?P<devices>[^\]]*)\]\s*$")
# Lightning's signal connector (lightning/pytorch/trainer/connectors/signal_connector.py, _sigterm_notifier_fn) when the
# process receives SIGTERM, at INFO after its `[rank: N] ` prefix (the local rank): `Received SIGTERM: 15`
_PL_SIGTERM = lazy_re(r"^Received SIGTERM: (?P<n>\d{1,2})\s*$")
# rank 0's line once init_process_group returned on every rank (lightning/fabric/utilities/distributed.py,
# _init_dist_connection: `All distributed processes registered. Starting with {world_size} processes`)
_PL_REGISTERED = lazy_re(r"^All distributed processes registered\. Starting with (?P<world>\d+) processes\s*$")


def _lightning(text: str) -> Parsed | None:
    line = text.strip()
    m = _PL_MEMBER.match(line)
    if m is not None:
        return Parsed("app.lightning", "INFO", "logdoc:lightning:member",
                      {"global_rank": int(m["rank"]), "world_size": int(m["world"])})
    m = _PL_DEVICES.match(line)
    if m is not None:
        devices = [d.strip() for d in m["devices"].split(",") if d.strip()]
        return Parsed("app.lightning", "INFO", "logdoc:lightning:devices",
                      {"pl_local_rank": int(m["local"]), "visible_devices": devices, "device_count": len(devices)})
    m = _PL_REGISTERED.match(line)
    if m is not None:
        return Parsed("app.lightning", "INFO", "logdoc:lightning:registered", {"world_size": int(m["world"])})
    m = _PL_SIGTERM.match(line)
    if m is not None:
        return Parsed("app.lightning", "WARN", "logdoc:lightning:sigterm", {"signal": "SIGTERM", "signum": int(m["n"])})
    return None


BAR_TEMPLATE = "logdoc:app:progress-bar"


def bar_alone(text: str) -> bool:
    """Whether :func:`classify` reads ``text`` as a progress bar alone (``app.progress``, nothing
    glued after it): what the fast path's bar lane (:mod:`logdoc.fast.lane`) asks."""
    if not text or has_huge_number(text) or "%|" not in text[:800]:
        return False
    m = _TQDM.match(text)
    return m is not None and not text[m.end():].lstrip()


def classify(text: str, env: Envelope | None = None) -> Parsed | None:
    """Kind, level, template and fields of one PyTorch / torchrun / Gloo / CUDA / Xid message."""
    if not text or has_huge_number(text):
        return None
    env = env if env is not None else Envelope()
    if "%|" in text[:800]:
        m = _TQDM.match(text)
        if m is not None:
            bar = _progress(m)
            rest = text[m.end():].lstrip()
            if rest:
                renv, rmsg = unwrap(rest)  # (the glued message keeps its own header)
                q = classify(rmsg, renv)
                if q is not None:
                    q.fields.update({f"bar_{k}": v for k, v in bar.items()})
                    if renv.level and q.level == "ERROR" and renv.level != "ERROR":
                        q.level = level_of(renv, q.level)
                    return q
            return Parsed("app.progress", "INFO", BAR_TEMPLATE, bar)
    if ("GLOBAL_RANK: " in text or "CUDA_VISIBLE_DEVICES: [" in text or "Received SIGTERM: " in text
            or "processes registered" in text):
        q = _lightning(text)
        if q is not None:
            return q
    if WORK_OPEN in text and "\n" in text:
        # a ProcessGroupNCCL record that a paste wrapped inside its WorkNCCL(...), which torch prints on
        # one line: read with those breaks undone first (the rest of the record may have lines of its own)
        work = join_work_breaks(text)
        if work is not text:
            q = read_message(work, env)
            if q is not None and q.template is not None:
                q.fields["rewrapped"] = True
                return q
    p = read_message(text, env)
    if (p is None or p.template is None) and "\n" in text and ("WorkNCCL" in text or "Watchdog caught" in text):
        # a ProcessGroupNCCL record wrapped by a paste (blocks.py joins its lines): read it again with
        # the breaks undone, a hard wrap (cut anywhere) first, then a soft one (at a blank). Only a
        # reading that the grammar accepts whole is taken; the event keeps the text as printed.
        for joined in (text.replace("\n", ""), text.replace("\n", " ")):
            q = read_message(joined, env)
            if q is not None and q.template is not None:
                q.fields["rewrapped"] = True
                return q
    return p


WORK_OPEN = "WorkNCCL("
_WORK_BREAK = lazy_re(r"[ \t]*\n[ \t]*")


def join_work_breaks(text: str) -> str:
    """``text`` with the line breaks inside its ``WorkNCCL(...)`` undone. torch prints that record on one
    line, so a break inside its parentheses is a paste's wrap: after a comma it stands for the blank the
    wrap dropped, anywhere else for nothing (a cut inside a word or a number: ``Nu`` / ``melIn=1``).
    ``text`` as it is when it has no such record, or none whose parentheses close."""
    at = text.find(WORK_OPEN)
    if at < 0 or "\n" not in text:
        return text
    start = at + len(WORK_OPEN)
    depth = 1
    for end in range(start, min(len(text), start + 600)):
        c = text[end]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                inner = text[start:end]
                if "\n" not in inner:
                    return text
                joined = _WORK_BREAK.sub(lambda m: " " if inner[:m.start()].endswith(",") else "", inner)
                return text[:start] + joined + text[end:]
    return text
