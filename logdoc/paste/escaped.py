"""Log lines inside JSON records (docker's json-file, journald's JSON, a JSON logger, torchrun's error
file) and messages inside escaped strings (an exception's repr, a bytes repr, a JSON string), read as
the lines they hold.
"""
from __future__ import annotations

import json

from ..envelope import leading_end, unwrap
from ..lazyre import lazy_re
from ..read.prefilter import candidate
from .common import _EXC_START, LONG, MAX_WRAP_JOIN, Paste

# ------------------------------------------------------------------------------------------------
# log lines inside JSON records

# A log shipper's or a collector's file, or a structured logger's: one JSON object per line that holds
# the line (docker's json-file driver `{"log": "...\\n", "stream": "stderr", "time": "..."}`, journald's
# `journalctl -o json` `{"MESSAGE": ..., "_HOSTNAME": ..., "_PID": ...}`, a JSON logger's `message` /
# `msg` with its traceback under `exc_info`, torchrun's error file `{"message": {"message": ...,
# "extraInfo": {"py_callstack": ...}}}`). The line is read from the object; a docker record without
# its newline is a part of a line longer than the driver's buffer, joined to the parts that follow it.
# A text of several lines (a traceback) is read as that many lines, each with the record's number
# (Paste.pieces).
_JSON_KEYS = ("log", "MESSAGE", "message", "msg", "error", "exception", "textPayload")
_JSON_TRACE_KEYS = ("exc_info", "exception", "traceback", "stack_trace", "stack")
# where a structured logger (structlog, zap, logrus, bunyan, a service's own JSON) keeps the failure apart from
# its one-line message: `{"msg": "worker failed", "error": "Traceback ...\nRuntimeError: ..."}`
_JSON_FAILURE_KEYS = ("error", "err", "exception", "exc_info", "traceback", "stack_trace", "stack", "error_message",
                      "reason", "stderr")


def _json_failure(d: dict, key: str, v: str) -> str | None:
    """The failure text that a record keeps under another key than its message ``v`` (a traceback, an
    exception line, a text of several lines), or None."""
    for tk in _JSON_FAILURE_KEYS:
        tv = d.get(tk)
        if tk == key or not isinstance(tv, str) or not tv.strip() or tv in v:
            continue
        if tv.startswith("Traceback") or "\n" in tv.strip() or _EXC_START.match(tv) is not None:
            return tv
    return None


def _json_text(d: dict) -> str | None:
    """The log text a JSON record holds (with its traceback or error when it keeps one apart), or None."""
    for key in _JSON_KEYS:
        v = d.get(key)
        if isinstance(v, dict) and isinstance(v.get("message"), str):
            extra = v.get("extraInfo")  # torchrun's error file: the traceback ends in the message
            stack = extra.get("py_callstack") if isinstance(extra, dict) else None
            return stack if isinstance(stack, str) and "Traceback" in stack else v["message"]
        if isinstance(v, str):
            failure = _json_failure(d, key, v)
            return v if failure is None else v.rstrip("\n") + "\n" + failure
    return None


def _json_record(t: str) -> dict | None:
    if len(t) > 4 * LONG or not t.startswith('{"') or not t.rstrip().endswith("}"):
        return None
    try:
        d = json.loads(t)
    except ValueError:
        return None
    if not isinstance(d, dict) or _json_text(d) is None:
        return None
    return d


def _set_text(out: list[str], paste: "Paste", i: int, text: str) -> None:
    """Line ``i`` holds ``text``; a text of several lines is read as its lines (Paste.pieces)."""
    parts = [p.rstrip("\r") for p in text.rstrip("\r\n").split("\n")][:MAX_PIECES]
    out[i] = " ".join(parts) if len(parts) > 1 else parts[0]
    if len(parts) > 1:
        paste.pieces[i + 1] = [p for p in parts if p.strip()] or [""]


MAX_PIECES = 256


def _decode_json_lines(out: list[str], paste: "Paste") -> bool:
    changed = False
    i = 0
    while i < len(out):
        d = _json_record(out[i])
        if d is None:
            i += 1
            continue
        text = _json_text(d) or ""
        j = i + 1
        while isinstance(d.get("log"), str) and not text.endswith("\n") and j < len(out) and j - i < MAX_WRAP_JOIN:
            nxt = _json_record(out[j])
            if nxt is None or not isinstance(nxt.get("log"), str):
                break
            text += nxt["log"]
            out[j] = ""
            paste.joined.add(j + 1)
            j += 1
        _set_text(out, paste, i, text)
        ident: dict = {}
        if isinstance(d.get("time"), str):
            ident["time"] = d["time"]
        if isinstance(d.get("_HOSTNAME"), str):
            ident["host"] = d["_HOSTNAME"]
        if isinstance(d.get("_PID"), str) and d["_PID"].isdigit():
            ident["pid"] = int(d["_PID"])
        if ident:
            paste.ids[i + 1] = ident
        changed = True
        i = j
    return changed


# ------------------------------------------------------------------------------------------------
# log lines inside logfmt records

# A Go program's logfmt record (logrus's text formatter, as containerd, dockerd, the NVIDIA container toolkit and
# Kubernetes' Go daemons write it; go-kit's log): `time="..." level=error msg="..." error="..."`, alone or after a
# collector's envelope (journald's `containerd[812]: `). The message is read from `msg=` (Go's quoting undone), and
# an error the record keeps apart (logrus's WithError, `error="..."`) after it, as Go prints a wrapped error:
# `msg: error`. A record holds a level and a message, and nothing but key=value pairs.
_LOGFMT_GATE = lazy_re(r'(?:^|[\s\]:])(?:time|ts|level|lvl)=')
_LOGFMT_PAIR = lazy_re(r'(?P<key>[A-Za-z_][\w.-]{0,40})=(?P<val>"(?:[^"\\\n]|\\.){0,8192}"|[^\s"=]{0,512})(?: +|$)')
_LOGFMT_MESSAGE = ("msg", "message")
_LOGFMT_ERROR = ("error", "err")


def _logfmt_fields(t: str, pos: int) -> dict[str, str] | None:
    """The key=value pairs of a logfmt record that fills ``t`` from ``pos`` (quoted values decoded), or None."""
    got: dict[str, str] = {}
    while pos < len(t):
        m = _LOGFMT_PAIR.match(t, pos)
        if m is None or m.end() == pos:
            return None
        val = m["val"]
        if val.startswith('"'):
            try:
                val = json.loads(val)  # (Go's %q quoting: JSON's escapes, but for the rare \x and \a)
            except ValueError:
                return None
        got[m["key"]] = val
        pos = m.end()
    if not any(k in got for k in ("level", "lvl")) or not any(isinstance(got.get(k), str) for k in _LOGFMT_MESSAGE):
        return None
    return got


def logfmt_record(t: str) -> tuple[int, dict[str, str]] | None:
    """(where the record starts, its fields) of a line that is a logfmt record after its envelopes, or None."""
    if len(t) > 4 * LONG or "=" not in t or _LOGFMT_GATE.search(t) is None:
        return None
    start = leading_end(t)
    fields = _logfmt_fields(t, start)
    return None if fields is None else (start, fields)


# The level words of the Go and Python loggers that write logfmt (logrus, zap, go-kit, slog, log15, syslog's
# names), as logdoc's levels: zap's `dpanic` is an error in production, log15 writes four-letter words.
_LOGFMT_LEVEL = {
    "panic": "FATAL", "fatal": "FATAL", "crit": "FATAL", "critical": "FATAL", "alert": "FATAL", "emerg": "FATAL",
    "dpanic": "ERROR", "error": "ERROR", "err": "ERROR", "eror": "ERROR",
    "warning": "WARN", "warn": "WARN", "info": "INFO", "notice": "INFO",
    "debug": "DEBUG", "dbug": "DEBUG", "trace": "DEBUG", "trce": "DEBUG",
}


def _decode_logfmt_lines(out: list[str], paste: "Paste") -> bool:
    changed = False
    for i, t in enumerate(out):
        got = logfmt_record(t)
        if got is None:
            continue
        start, d = got
        text = next(d[k] for k in _LOGFMT_MESSAGE if k in d)
        err = next((d[k] for k in _LOGFMT_ERROR if d.get(k)), None)
        if err and err not in text:  # (a traceback or an exception on a line of its own; other errors as Go wraps them)
            apart = "\n" in err.strip() or err.startswith("Traceback") or _EXC_START.match(err) is not None
            text = text.rstrip("\n") + ("\n" if apart else ": ") + err
        if start:  # (each line of the message under the envelope, as the collector prints one of several lines)
            text = "\n".join(t[:start] + part for part in text.rstrip("\n").split("\n"))
        _set_text(out, paste, i, text)
        level = _LOGFMT_LEVEL.get((d.get("level") or d.get("lvl") or "").lower())
        ident: dict = {"level": level} if level else {}
        if d.get("time") or d.get("ts"):
            ident["time"] = d.get("time") or d.get("ts")
        if ident:
            paste.ids.setdefault(i + 1, {}).update(ident)
        changed = True
    return changed


# ------------------------------------------------------------------------------------------------
# control characters that a syslog daemon wrote out as text

# rsyslog (and what exports its files: SageMaker's and CloudWatch's agents, journald's forward to syslog) writes each
# control character of a message as `#` and its three octal digits: a tab as `#011`, a line end inside one message as
# `#012`, a carriage return as `#015` (the escape byte of a colour code, `#033[`, is read by logdoc.read.source). A
# traceback logged as one message arrives as one line, `...: Traceback (most recent call last):#012  File ...`, and
# a frame's or an NCCL line's tab as `#011`. The escapes are undone; a message of several lines is read as its lines
# (Paste.pieces), each under the line's envelope, as the daemon would have written them one by one.
# (a line holds one not followed by a digit, `#0123` alone may be a number; in such a line every escape is undone)
_SYSLOG_ESCAPE = lazy_re(r"#0(?:1[12]|15)")
_SYSLOG_SURE = lazy_re(r"#0(?:1[12]|15)(?!\d)")
_SYSLOG_CHAR = {"#011": "\t", "#012": "\n", "#015": ""}


def syslog_escaped(t: str) -> bool:
    """The line holds a tab, a line end or a carriage return that a syslog daemon wrote out as text."""
    return "#01" in t and len(t) <= 4 * LONG and _SYSLOG_SURE.search(t) is not None


def _decode_syslog(out: list[str], paste: "Paste") -> bool:
    changed = False
    for i, t in enumerate(out):
        if (i + 1) in paste.pieces or not syslog_escaped(t):
            continue
        start = leading_end(t)
        text = _SYSLOG_ESCAPE.sub(lambda m: _SYSLOG_CHAR[m[0]], t[start:])
        if "\n" in text:  # (each line of the message under the envelope)
            text = "\n".join(t[:start] + part for part in text.rstrip("\n").split("\n"))
        else:
            text = t[:start] + text
        _set_text(out, paste, i, text)
        changed = True
    return changed


# ------------------------------------------------------------------------------------------------
# a message inside an escaped string

# A message quoted with its line ends escaped: an exception's repr (`RuntimeError('NCCL error in:
# ...\\nLast error:\\n...')`), a bytes repr of a child's output (`b'...\\n...'`, as a
# CalledProcessError's output is logged), a JSON string inside a line (`"error": "...\\n..."`). The
# string is decoded and read as the lines it holds, each with the line's number (Paste.pieces); what
# stands before it stays a line of its own, and an exception's repr reads `Type: message`.
_QUOTED = lazy_re(r"""(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt)\()?"""
                     r"""(?P<b>b?)(?P<q>['"])(?P<body>(?:[^\\'"\n]|\\.|(?!(?P=q))['"]){0,8192}?)(?P=q)""")


# the next of adjacent string literals (`"... NCCL " "built in"`), after the one `_QUOTED` read
_NEXT_LITERAL = lazy_re(r"""[ \t]*(?P<lit>(?P<q>['"])(?:[^\\'"\n]|\\.|(?!(?P=q))['"]){0,8192}?(?P=q))""")

# what a line holding a message in an escaped string shows (cheap, before the quoted strings are read)
_ESCAPED_GATE = lazy_re(r"""\\n|\(['"]|['"](?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Interrupt|Exit): """)
_GATE_WORDS = ("Error: ", "Exception: ", "Failure: ", "Interrupt: ", "Exit: ")


def may_hold_escaped(t: str) -> bool:
    """``_ESCAPED_GATE.search(t) is not None``, the literals it needs looked for first: a pattern
    that starts with an alternation is tried at every character, ``in`` finds a literal at C speed
    (the paste screen asks it of every file of a job folder)."""
    if "\\n" in t or "('" in t or '("' in t:
        return True
    return any(w in t for w in _GATE_WORDS) and _ESCAPED_GATE.search(t) is not None


def _escaped_text(t: str) -> tuple[str, str, str] | None:
    """(what stands before, the decoded text, what follows) of the first quoted string in ``t`` that
    holds a line end, an exception line, or is an exception's repr; None when there is none or it
    does not decode."""
    if len(t) > 4 * LONG or not may_hold_escaped(t):
        return None
    for m in _QUOTED.finditer(t):
        if m.start() > 0 and (m["type"] or "\\n" in m["body"] or _EXC_START.match(m["body"]) is not None):
            break  # (a line that is one quoted string is a value, not a message in one)
    else:
        return None
    lit = m["b"] + m["q"] + m["body"] + m["q"]
    try:
        if m["q"] == '"' and not m["b"]:
            text = json.loads(lit)
        else:
            import ast

            text = ast.literal_eval(lit)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or ("\n" not in text and not m["type"] and _EXC_START.match(text) is None):
        return None
    after = t[m.end():]
    if m["type"]:
        # a message that a raise line splits into adjacent literals (`RuntimeError("... NCCL " "built in")`):
        # Python joins them, so are they here
        while True:
            nxt = _NEXT_LITERAL.match(after)
            if nxt is None:
                break
            try:
                import ast

                more = json.loads(nxt["lit"]) if nxt["lit"][0] == '"' else ast.literal_eval(nxt["lit"])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                break
            if not isinstance(more, str):
                break
            text += more
            after = after[nxt.end():]
        text = m["type"][:-1] + ": " + text
        after = after[1:] if after.startswith(")") else after
    return t[:m.start()], text, after


def _decode_escaped(out: list[str], paste: "Paste") -> bool:
    changed = False
    for i, t in enumerate(out):
        if (i + 1) in paste.pieces or not may_hold_escaped(t) or not candidate(t):
            continue
        got = _escaped_text(t)
        if got is None:
            continue
        before, text, after = got
        lines = text.split("\n")
        if len(lines) == 1 and before.strip() and _EXC_START.match(unwrap(before)[1]) is not None:
            lines[0] = before + lines[0]  # the carrier is an exception: its message holds the quoted one
        elif before.strip():
            lines.insert(0, before.rstrip())
        if after.strip(" \t)\"',}"):
            lines.append(after.strip())
        _set_text(out, paste, i, "\n".join(lines))
        changed = True
    return changed
