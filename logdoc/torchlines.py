"""Stage 4 for PyTorch-distributed, torchrun, Gloo, CUDA and kernel Xid messages.

``classify(text, env)`` takes one message with its envelopes removed (a multi-line record from
:mod:`logdoc.blocks` is joined with ``\\n``) and returns a :class:`~logdoc.grammar.Parsed` or
``None`` when the text is none of those.

How a message is understood, cheapest test first:

1. a few literal tests on the start of the text pick the structure: Python traceback, torchrun
   failure summary, ``terminate called ...``, C++ backtrace, ``Type: message`` exception line;
2. the ProcessGroup prefix (``[Rank r]``, ``[PG 1 Rank r]``, ``[PG ID 1 PG GUID 1(desc) Rank r]``)
   is peeled by ``grammars/torch_prefix.lark``;
3. the body goes to a Lark grammar when it is one of the structured formats (``torch.lark``:
   WorkNCCL watchdog records, desync report, monitored barrier; ``torch_nccl_error.lark``;
   ``torch_mismatch.lark``; ``gloo.lark``);
4. anything else is named by the catalog table ``grammars/torch_templates.tsv`` (generated from
   the PyTorch and Gloo message catalogs by ``tests/data/torch/make_templates.py``).

Template ids: ``torch.<kind-like name>`` for the formats a grammar recognises,
``torch:<component>:<slug>`` and ``gloo:<file>:<line>`` for catalog rows, ``logdoc:<area>:<slug>``
for formats the catalogs lack (CUDA, Xid, spawn), ``py:traceback`` / ``py:exception`` for a Python
exception whose message is not otherwise known.
"""
from __future__ import annotations

import json
import re
import threading
from functools import lru_cache
from typing import Any

from lark import Token, Transformer, Tree
from lark.exceptions import LarkError

from . import kinds as _kinds
from .blocks import is_elision
from .envelope import has_huge_number
from .events import Envelope
from .grammar import Parsed, parser
from .resources import data_dir, grammar_text
from .templates import BoundedPattern

__all__ = ["classify", "templates", "KINDS"]

# Kinds this module emits: those of the one registry (logdoc/kinds.py) whose producer it is.
KINDS = tuple(k for k, spec in _kinds.KINDS.items() if spec.producer == "logdoc/torchlines.py")

_MAX_MATCH = 65536  # the catalog matcher looks at most at this many characters of a message

_LEVELS = {
    "E": "ERROR", "W": "WARN", "I": "INFO", "F": "FATAL", "V": "DEBUG", "C": "FATAL", "D": "DEBUG",
    "ERROR": "ERROR", "WARN": "WARN", "WARNING": "WARN", "INFO": "INFO", "FATAL": "FATAL",
    "CRITICAL": "FATAL", "DEBUG": "DEBUG", "TRACE": "TRACE", "VERBOSE": "DEBUG",
}

SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
           8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
           14: "SIGALRM", 15: "SIGTERM"}

ERRNO_NAMES = {
    "Address already in use": "EADDRINUSE", "Connection refused": "ECONNREFUSED",
    "Connection reset by peer": "ECONNRESET", "Connection timed out": "ETIMEDOUT",
    "No route to host": "EHOSTUNREACH", "Network is unreachable": "ENETUNREACH",
    "Too many open files": "EMFILE", "Broken pipe": "EPIPE", "Cannot assign requested address": "EADDRNOTAVAIL",
    "Software caused connection abort": "ECONNABORTED", "Name or service not known": "EAI_NONAME",
    "Temporary failure in name resolution": "EAI_AGAIN", "Permission denied": "EACCES",
    "No such device": "ENODEV", "Resource temporarily unavailable": "EAGAIN",
    "address already in use": "EADDRINUSE",
}
ERRNO_NUMBERS = {98: "EADDRINUSE", 111: "ECONNREFUSED", 104: "ECONNRESET", 110: "ETIMEDOUT",
                 113: "EHOSTUNREACH", 101: "ENETUNREACH", 24: "EMFILE", 32: "EPIPE", 99: "EADDRNOTAVAIL",
                 103: "ECONNABORTED", 13: "EACCES", 11: "EAGAIN"}

# ncclGetErrorString text -> ncclResult name (for async errors printed without the interpretation).
NCCL_STRINGS = {
    "unhandled cuda error": "ncclUnhandledCudaError", "unhandled system error": "ncclSystemError",
    "internal error": "ncclInternalError", "invalid argument": "ncclInvalidArgument",
    "invalid usage": "ncclInvalidUsage", "remote process exited or there was a network error": "ncclRemoteError",
    "NCCL operation in progress": "ncclInProgress",
}

_EXC_LINE = re.compile(
    r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure)|socket\.(?:gaierror|herror))"
    r"(?::[ \t]?|[ \t]*(?=\n)|[ \t]*\Z)")
_PEER = re.compile(r"\[[0-9A-Za-z:.%_\-]*\]:\d+(?:\$\d+)?")
_TABLE_ENTRY = re.compile(r"\[\d+\]:[ \t]*\n[ \t]+[a-z_]+[ \t]*:")
_RANK_LABEL = re.compile(r"\[rank\d+\][ \t]+(?=[A-Z\[])")
_JSON_MESSAGE = re.compile(r'"message":\s*"((?:[^"\\\n]|\\.){1,4000})",?\s*$')
_WATCHDOG_PARTS = (("seq", re.compile(r"\bSeqNum=(\d+)")), ("op_type", re.compile(r"\bOpType=([A-Za-z_]\w*)")),
                   ("timeout_ms", re.compile(r"\bTimeout\(ms\)=(\d+)")),
                   ("elapsed_ms", re.compile(r"\bran for (\d+) (?:milliseconds|ms)\b")))
_GLOO_LOC = re.compile(r"\[(?:enforce fail at )?[^\]\s]+\.(?:cc|h|cu|cpp|hpp):\d+\] ")
# a source path masked by the poster (`[<some path>/gloo/transport/tcp/pair.cc:761] ...`, `[<path>/...]`)
_MASKED_LOC = re.compile(r"\[(enforce fail at )?<[^<>\]\n]{1,40}>/?(?=[^\]\s]+\.(?:cc|h|cu|cpp|hpp):\d+\] )")

_NCCL_RESULTS = tuple(f"{name}: " for name in ("ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
                                               "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError",
                                               "ncclInProgress", "ncclTimeout"))
_TORCH_BODY_STARTS = ("Watchdog caught", "Collective", "found async exception", "Work WorkNCCL",
                      "failure detected by watchdog", "NCCL Work update", "Process group watchdog thread",
                      "NCCL watchdog thread", "WorkNCCL(")


# --------------------------------------------------------------------------------------------
# small helpers

def _level(env: Envelope | None, default: str) -> str:
    if env is not None and env.level:
        return _LEVELS.get(env.level.upper(), _LEVELS.get(env.level[:1].upper(), default))
    return default


def _int(v: Any) -> Any:
    if isinstance(v, str):
        s = v.strip()
        if re.fullmatch(r"-?\d{1,18}", s):
            return int(s)
    return v


def _swap16(port: int) -> int:
    return ((port & 0xFF) << 8) | ((port >> 8) & 0xFF)


def _errno_name(text: str | None) -> str | None:
    if not text:
        return None
    for k, v in ERRNO_NAMES.items():
        if k in text:
            return v
    return None


def _parse(grammar: str, text: str, start: str = "start") -> Tree | None:
    try:
        return parser(grammar, start).parse(text)
    except LarkError:
        return None


def _tok(t: Any) -> str:
    return str(t).strip() if t is not None else ""


def parse_peer(text: str) -> dict[str, Any]:
    """``[ip]:port$seq`` (Gloo) -> peer_addr, peer_port_printed, peer_port (byte-swapped back), peer_seq."""
    tree = _parse("gloo", text.strip(), "peer")
    if tree is None:
        return {}
    vals = {t.type: str(t) for t in tree.children if isinstance(t, Token)}
    printed = int(vals["PORT"])
    out: dict[str, Any] = {"peer_addr": vals["ADDR"], "peer_port_printed": printed, "peer_port": _swap16(printed)}
    if "SEQ" in vals:
        out["peer_seq"] = int(vals["SEQ"])
    return out


# --------------------------------------------------------------------------------------------
# the catalog template table

_ORIGINAL = "\n Original exception:"


class _Template:
    __slots__ = ("id", "kind", "level", "where", "file", "format", "regex", "anchor", "weight", "ints")

    def __init__(self, tid: str, kind: str, level: str, where: str, file: str, fmt: str) -> None:
        self.id, self.kind, self.level, self.where, self.file, self.format = tid, kind, level, where, file, fmt
        self.ints: set[str] = set()
        fmt_s = fmt.strip()
        # c10d's logAndThrow(log, error) logs the first part and throws it with `\n Original exception:
        # \n<what>` appended; the catalog lists the thrown text. The logged line is the head alone.
        cut = fmt_s.find(_ORIGINAL)
        head = fmt_s[:cut].rstrip() if cut > 0 else fmt_s
        body, literal = self._compile(head)
        # Messages gain tails across versions: c10's TORCH_WARN appends ` (function operator())`,
        # newer releases append the run id or detail. A template that ends in literal text accepts
        # a tail that starts after a blank or a quote; one that ends in a placeholder absorbs it anyway.
        tail = r"(?:[ \t]+\S[^\n]*)?" if head[-1:] not in "}" else ""
        if cut > 0:
            thrown, _ = self._compile(fmt_s[cut:])
            tail = rf"(?:\s*{thrown}|{tail})" if tail else rf"(?:\s*{thrown})?"
        # bounded: a hostile 64 KB message must not make the lazy placeholders backtrack for minutes
        self.regex = BoundedPattern(r"\s*" + body + tail + r"\s*\Z", re.DOTALL)
        words = re.findall(r"\S+", literal)
        self.anchor = max(words, key=len) if words else ""
        self.weight = len(literal.replace(" ", ""))

    def _compile(self, fmt: str) -> tuple[str, str]:
        out: list[str] = []
        lit: list[str] = []
        i, n = 0, len(fmt)
        after_int = False
        while i < n:
            c = fmt[i]
            if c == "{":
                depth, j = 1, i + 1
                while j < n and depth:
                    depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                    j += 1
                inner = fmt[i + 1:j - 1]
                if after_int and re.fullmatch(r"[a-z_][a-z0-9_]*", inner):
                    # `Rank {rank:int}{desync_report}`: a message composed elsewhere is glued to the
                    # number; the catalog's pieces of it start on a new line (`\n\t - To our best
                    # knowledge`, `\n\t     [1, 2] finished`), so `Rank 0: RuntimeError: ...` (a
                    # program's own print) or `Rank 3 has no transport ...` (NCCL's) is not one.
                    out.append(r"(?=[ \t]*\n|\s+[-\[])")
                out.append(self._placeholder(inner))
                after_int = inner.endswith(":int")
                lit.append(" ")
                i = j
                continue
            after_int = False
            j = i
            while j < n and fmt[j] != "{":
                j += 1
            chunk = fmt[i:j]
            lit.append(chunk)
            pieces = re.split(r"(\s+)", chunk)
            for p in pieces:
                if not p:
                    continue
                out.append(r"\s+" if p.isspace() else re.escape(p))
            i = j
        return "".join(out), "".join(lit)

    def _placeholder(self, inner: str) -> str:
        m = re.fullmatch(r"([a-z_][a-z0-9_]*)(?::(int|word|line|rest))?", inner)
        if m:
            name, typ = m.group(1), m.group(2)
            if typ == "int":
                self.ints.add(name)
                return rf"(?P<{name}>-?\d+)"
            if typ == "word":
                return rf"(?P<{name}>\S+)"
            if typ == "line":
                return rf"(?P<{name}>[^\n]*)"
            if typ == "rest":
                return rf"(?P<{name}>.*)"
            return rf"(?P<{name}>.*?)"
        name = None
        m = re.match(r"([a-z_][a-z0-9_]*)=", inner)
        if m:
            name, inner = m.group(1), inner[m.end():]
        alts = _split_alts(inner)
        compiled = "|".join(self._compile(a)[0] if a else "" for a in alts)
        return rf"(?P<{name}>{compiled})" if name else rf"(?:{compiled})"

    def match(self, text: str) -> dict[str, Any] | None:
        m = self.regex.match(text)
        if m is None:
            return None
        fields: dict[str, Any] = {}
        for k, v in m.groupdict().items():
            if v is None:
                continue
            fields[k] = int(v) if k in self.ints else v.strip()
        return fields


def _split_alts(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for c in s:
        if c == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        cur.append(c)
    out.append("".join(cur))
    return out


@lru_cache(maxsize=1)
def templates() -> dict[str, list[_Template]]:
    """The catalog table, by where it applies ('body', 'gloo', 'line'), most specific first."""
    from .cache import load_table

    return load_table("torch", [__file__, data_dir("grammars") / "torch_templates.tsv"], _build_templates)


def _build_templates() -> dict[str, list[_Template]]:
    by: dict[str, list[_Template]] = {"body": [], "gloo": [], "line": []}
    for raw in grammar_text("torch_templates.tsv").splitlines():
        if not raw or raw.startswith("#") or raw.startswith("id\t"):
            continue
        tid, kind, level, where, file, fmt = raw.split("\t")
        fmt = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\"}.get(m.group(1), m.group(0)), fmt)
        by[where].append(_Template(tid, kind, level, where, file, fmt))
    for lst in by.values():
        lst.sort(key=lambda t: -t.weight)
    return by


_PLACEHOLDER = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


@lru_cache(maxsize=None)
def _token_index(where: str) -> tuple[dict[str, tuple[int, ...]], frozenset[str], tuple[tuple[int, str], ...]]:
    """Which templates of ``templates()[where]`` a message can match, by its blank-separated
    tokens: a template whose anchor stands between blanks (or at an end) in its format, not
    against a placeholder, matches only a message that holds the anchor as a whole token (the
    format's blanks are ``\\s+`` in its expression; ``str.split`` cuts at the same characters).
    Returns (anchor -> template positions, the anchors, (position, anchor) of the templates that
    are always tried when their anchor is in the message)."""
    by_token: dict[str, list[int]] = {}
    always: list[tuple[int, str]] = []
    for i, t in enumerate(templates()[where]):
        if t.anchor and _stands_alone(t.anchor, _PLACEHOLDER.sub("\x00", t.format.strip())):
            by_token.setdefault(t.anchor, []).append(i)
        else:
            always.append((i, t.anchor))
    return {k: tuple(v) for k, v in by_token.items()}, frozenset(by_token), tuple(always)


def _stands_alone(word: str, text: str) -> bool:
    """Whether ``word`` occurs in ``text`` between blanks or ends (``(?<!\\S)word(?!\\S)``)."""
    n = len(word)
    i = text.find(word)
    while i >= 0:
        j = i + n
        if (i == 0 or text[i - 1].isspace()) and (j == len(text) or text[j].isspace()):
            return True
        i = text.find(word, i + 1)
    return False


def _match_templates(text: str, wheres: tuple[str, ...], file: str | None = None,
                     line: int | None = None) -> tuple[_Template, dict[str, Any]] | None:
    text = text[:_MAX_MATCH]
    table = templates()
    best: tuple[int, _Template, dict[str, Any]] | None = None
    tokens = set(text.split())
    for where in wheres:
        lst = table[where]
        by_token, anchors, always = _token_index(where)
        order = [i for i, a in always if not a or a in text]
        for tok in anchors & tokens:
            order.extend(by_token[tok])
        order.sort()  # the table's own order: the same first match and the same best score
        for i in order:
            t = lst[i]
            if t.anchor and t.anchor not in text:
                continue
            fields = t.match(text)
            if fields is None:
                continue
            if file is None:
                return t, fields
            score = 0
            if t.file and t.file == file:
                score = 2 if (line is not None and t.id.endswith(f":{line}")) else 1
            if best is None or score > best[0]:
                best = (score, t, fields)
            if score == 2:
                break
    return (best[1], best[2]) if best else None


# --------------------------------------------------------------------------------------------
# Lark transformers

class _PrefixT(Transformer):
    def p_rank(self, c):
        return {"pg_rank": int(c[0]), "pg_prefix": "rank"}

    def p_pg(self, c):
        return {"pg_id": int(c[0]), "pg_rank": int(c[1]), "pg_prefix": "pg"}

    def p_guid(self, c):
        out = {"pg_id": int(c[0]), "pg_guid": str(c[1]), "pg_prefix": "guid"}
        rest = c[2:]
        if rest and isinstance(rest[0], dict):
            if rest[0].get("pg_desc"):
                out["pg_desc"] = rest[0]["pg_desc"]
            rest = rest[1:]
        out["pg_rank"] = int(rest[0])
        return out

    def desc(self, c):
        return {"pg_desc": str(c[0]) if c else ""}

    def start(self, c):
        fields = dict(c[0])
        body = str(c[1]) if len(c) > 1 else ""
        return fields, body


class _TorchT(Transformer):
    def INT(self, t):
        return int(t)

    def OPTYPE(self, t):
        return str(t)

    def REST(self, t):
        return str(t).strip()

    def numel(self, c):
        return {"numel_in": c[0], "numel_out": c[1]}

    def work(self, c):
        out = {"seq": c[0], "op_type": c[1]}
        if isinstance(c[2], dict):
            out.update(c[2])
        out["timeout_ms"] = c[-1]
        return out

    def work_noseq(self, c):
        return {"op_type": c[0], "timeout_ms": c[1]}

    def watchdog_timeout(self, c):
        return "torch.watchdog_timeout", "torch.watchdog_timeout", "ERROR", {**c[0], "elapsed_ms": c[1]}

    def blocking_wait_timeout(self, c):
        return "torch.watchdog_timeout", "torch.blocking_wait_timeout", "ERROR", {**c[0], "blocking_wait": True}

    def async_exception(self, c):
        f = dict(c[0])
        if len(c) > 1:
            f["exception"] = c[1]
        return "torch.async_exception", "torch.async_exception", "ERROR", f

    def async_exception_old(self, c):
        return "torch.async_exception", "torch.async_exception_old", "INFO", {"exception": c[0] if c else ""}

    def pg_status(self, c):
        return {"last_enqueued": c[0], "last_completed": c[1]}

    def watchdog_failure(self, c):
        f = {"seq": c[0]}
        if len(c) > 1:
            f.update(c[1])
        return "torch.watchdog_failure", "torch.watchdog_failure", "ERROR", f

    def work_progress(self, c):
        return "torch.work_progress", "torch.work_progress", "INFO", {"last_enqueued": c[0], "last_completed": c[1]}

    def thread_exception(self, c):
        owner = str(c[0])
        tid = "torch.watchdog_thread_exception" if owner != "NCCL" else "torch.watchdog_thread_exception_old"
        return "torch.watchdog_failure", tid, "ERROR", {"thread_died": True, "exception": c[1] if len(c) > 1 else ""}

    def int_seq(self, c):
        return list(c)

    def original_exception(self, c):
        return {"original_exception": c[0] if c else ""}

    def monitored_barrier(self, c):
        c = [x for x in c if x is not None]
        f = {"failed_ranks": c[0], "timeout_ms": c[1]}
        if len(c) > 2:
            f.update(c[2])
        return "torch.monitored_barrier", "torch.monitored_barrier", "ERROR", f

    def rank_list(self, c):
        return list(c)

    def count_from(self, c):
        return None

    def lagging(self, c):
        return ("never_joined", c[0])

    def desync_head(self, c):
        return ("head", None)

    def joined_not_finished(self, c):
        return ("joined_not_finished", {"ranks": c[0], "seq": c[1]})

    def finished_not_joined(self, c):
        return ("finished_not_joined", {"ranks": c[0], "seq": c[1], "next_seq": c[2]})

    def snapshot(self, c):
        return ("snapshot", c[0] if c else "")

    def desync_item(self, c):
        return c[0]

    def desync_report(self, c):
        f: dict[str, Any] = {"rank": c[0]}
        for key, val in c[1:]:
            if key == "never_joined":
                f["never_joined"] = val
            elif key in ("joined_not_finished", "finished_not_joined"):
                f.setdefault(key, []).append(val)
            elif key == "snapshot":
                f["snapshot"] = val
        culprits: list[int] = []
        for r in f.get("never_joined", []):
            culprits.append(r)
        for item in f.get("joined_not_finished", []) + f.get("finished_not_joined", []):
            culprits.extend(item["ranks"])
        f["lagging_ranks"] = sorted(set(culprits))
        return "torch.desync_report", "torch.desync_report", "ERROR", f

    def start(self, c):
        if isinstance(c[0], dict):  # a bare WorkNCCL(...) record
            return "torch.message", "torch.worknccl", "ERROR", c[0]
        return c[0]


class _NcclErrorT(Transformer):
    def version(self, c):
        return ("nccl_version", str(c[0]))

    def interpretation(self, c):
        return ("interpretation", str(c[0]).strip())

    def last_error(self, c):
        text = str(c[0]) if c else ""
        cut = text.find("\nException raised from ")
        if cut >= 0:
            text = text[:cut]
        return ("last_error", text.strip())

    def _build(self, c, located):
        f: dict[str, Any] = {}
        items = list(c)
        what = str(items.pop(0))
        f["timeout"] = what.startswith("timeout")
        if located:
            loc = str(items.pop(0))
            f["source_location"] = loc
        if items and isinstance(items[0], Token) and items[0].type == "ERRSTR":
            f["error_string"] = str(items.pop(0)).strip()
        for key, val in items:
            f[key] = val
        interp = f.get("interpretation")
        if interp and interp.startswith("nccl"):
            f["nccl_result"] = interp.split(":", 1)[0]
        else:
            es = f.get("error_string", "")
            for k, v in NCCL_STRINGS.items():
                if es.startswith(k):
                    f["nccl_result"] = v
                    break
        if not f["timeout"]:
            f.pop("timeout")
        return f

    def located(self, c):
        return "torch.nccl_error.in", self._build(c, True)

    def unlocated(self, c):
        return "torch.nccl_error", self._build(c, False)

    def interpreted(self, c):
        f = dict(c)
        interp = f.get("interpretation", "")
        f["nccl_result"] = interp.split(":", 1)[0]
        return "torch.nccl_error.result", f


class _GlooT(Transformer):
    def operands(self, c):
        return {"lhs": str(c[0]).strip(), "rhs": str(c[1]).strip()}

    def enforce(self, c):
        if isinstance(c[0], Token) and c[0].type == "LOCATION":
            loc, rest = c[0], c[1]
            return {"code_location_printed": str(loc), "enforce": True, **rest}
        f = {"condition": str(c[0]).strip()}
        for x in c[1:]:
            if isinstance(x, dict):
                f.update(x)
            else:
                f["message"] = str(x).strip()
        return f

    def plain(self, c):
        f = {"code_location_printed": str(c[0])}
        if len(c) > 1:
            f["message"] = str(c[1]).strip()
        return f

    def full_mesh(self, c):
        if not c:
            return {"full_mesh": True}
        if isinstance(c[0], dict):
            return {"full_mesh": True, **c[0]}
        return {"full_mesh": True, "message": str(c[0]).strip()}

    def start(self, c):
        return c[0]


class _MismatchT(Transformer):
    def INT(self, t):
        return int(t)

    def shape(self, c):
        return list(c)

    def inner(self, c):
        return "".join(x if isinstance(x, str) else str(x) for x in c)

    def vitem(self, c):
        return "".join(str(x) for x in c)

    def value(self, c):
        return " ".join(str(x).strip() for x in c)

    def fp_tensors(self, c):
        shape = c[0] if isinstance(c[0], list) else []
        rest = c[1:] if isinstance(c[0], list) else c
        return {"shape": shape, "dtype": rest[0], "devices": rest[1]}

    def fingerprint(self, c):
        f = {"seq": c[0], "op_type": str(c[1])}
        if len(c) > 2:
            f.update(c[2])
        return f

    def side(self, c):
        return {"rank": c[0], **c[1]}

    def diff(self, c):
        aspect = str(c[0]).rstrip(":").replace("Tensor Tensor ", "").lower()
        return aspect, str(c[1]).strip(), (str(c[2]).strip() if len(c) > 2 else "")

    def differences(self, c):
        return list(c)

    def mismatch(self, c):
        a, b = c[0], c[1]
        f: dict[str, Any] = {"rank": a["rank"], "other_rank": b["rank"]}
        for k in ("seq", "op_type", "shape", "dtype", "devices"):
            if k in a:
                f[k] = a[k]
            if k in b:
                f["other_" + k] = b[k]
        if len(c) > 2:
            f["differs"] = [d[0] for d in c[2]]
            f["diffs"] = {d[0]: [d[1], d[2]] for d in c[2]}
        else:
            names = {"seq": "sequence number", "op_type": "op type", "shape": "shapes", "dtype": "dtypes",
                     "devices": "devices"}
            f["differs"] = [names[k] for k in names if k in a and k in b and a[k] != b[k]]
        return "torch.collective_mismatch", "torch.collective_mismatch", f

    def wrapper_barrier(self, c):
        f: dict[str, Any] = {"fingerprint": c[0], "seq": c[0]["seq"], "op_type": c[0]["op_type"], "detail": True}
        if len(c) > 1:
            f["error"] = str(c[1]).strip()
        return "torch.monitored_barrier", "torch.wrapper_monitored_barrier", f

    def start(self, c):
        return c[0]


# --------------------------------------------------------------------------------------------
# structured parsers

def _torch_body(body: str) -> tuple[str, str, str, dict] | None:
    tree = _parse("torch", body)
    if tree is None:
        return None
    return _TorchT().transform(tree)


def _nccl_error(text: str) -> Parsed | None:
    tree = _parse("torch_nccl_error", text)
    if tree is None:
        return None
    tid, fields = _NcclErrorT().transform(tree)
    return Parsed("torch.nccl_error", "ERROR", tid, fields)


def _mismatch(text: str) -> Parsed | None:
    tree = _parse("torch_mismatch", text)
    if tree is None:
        return None
    kind, tid, fields = _MismatchT().transform(tree)
    err = fields.get("error")
    if err:
        inner = _message(err, None)
        if inner is not None:
            fields["cause"] = _cause(inner)
    return Parsed(kind, "ERROR", tid, fields)


def _gloo_location(printed: str) -> tuple[str, str | None, int | None]:
    path, _, line = printed.rpartition(":")
    i = path.rfind("gloo/")
    rel = path[i:] if i >= 0 else path
    return f"{rel}:{line}", rel, int(line) if line.isdigit() else None


def _gloo(text: str) -> Parsed | None:
    tree = _parse("gloo", text)
    if tree is None:
        return None
    f = _GlooT().transform(tree)
    full_mesh = f.pop("full_mesh", False)
    if "code_location_printed" not in f:          # connectFullMesh with an unbracketed inner error
        inner = _message(f.get("message", ""), None) if f.get("message") else None
        fields = {"message": f.get("message", "")}
        if inner is not None:
            fields.update(inner.fields)
        return Parsed("gloo.connect_full_mesh", "ERROR", "torch:ProcessGroupGloo:gloo-connectfullmesh-failed-with",
                      fields)
    loc, path, line = _gloo_location(f["code_location_printed"])
    fields: dict[str, Any] = {"code_location": loc}
    srcdir = f["code_location_printed"][: len(f["code_location_printed"]) - len(loc)]
    fields["srcdir"] = srcdir
    for k in ("condition", "lhs", "rhs", "message"):
        if k in f:
            fields[k] = f[k]
    if f.get("enforce"):
        fields["enforce"] = True
    # the text the catalog formats describe: everything after the bracket
    start = text.find("] ", text.find(f["code_location_printed"])) + 2
    body = text[start:] if start >= 2 else fields.get("message", "")
    level_word = None
    if body.startswith(("ERROR ", "INFO ", "WARN ", "WARNING ", "DEBUG ")):
        level_word, body = body.split(" ", 1)
    kind, level, tid = "gloo.error", "ERROR", None
    m = _match_templates(body, ("gloo",), path, line)
    if m is not None:
        t, tf = m
        kind, level, tid = t.kind, t.level, t.id
        for k, v in tf.items():
            if k in ("lhs", "rhs", "rest"):
                continue
            fields.setdefault(k, v)
    if level_word is not None:
        kind, level = "gloo.debug", _LEVELS[level_word]
    _gloo_enrich(fields)
    if full_mesh:
        inner_tid = tid
        fields["inner_template"] = inner_tid
        fields["inner_kind"] = kind
        return Parsed("gloo.connect_full_mesh", "ERROR", "torch:ProcessGroupGloo:gloo-connectfullmesh-failed-with",
                      fields)
    return Parsed(kind, level, tid, fields)


def _gloo_enrich(fields: dict[str, Any]) -> None:
    """Peer address (printed and byte-swapped port), errno text and name."""
    peer_src = None
    for key in ("peer", "remote", "address"):
        v = fields.get(key)
        if isinstance(v, str) and _PEER.search(v):
            peer_src = _PEER.search(v).group(0)
            break
    if peer_src is None:
        m = _PEER.search(fields.get("message", "") or "")
        if m:
            peer_src = m.group(0)
    if peer_src:
        fields.update(parse_peer(peer_src))
    local = fields.get("local")
    if isinstance(local, str) and _PEER.search(local):
        lp = parse_peer(_PEER.search(local).group(0))
        if lp:
            fields["local_addr"] = lp["peer_addr"]
            fields["local_port_printed"] = lp["peer_port_printed"]
            fields["local_port"] = lp["peer_port"]
    errno_text = fields.get("errno_text") or fields.get("strerror")
    err = fields.get("error")
    if not errno_text and isinstance(err, str):
        m = re.match(r"(?:SO_ERROR|connect): ([^,\n]*)", err)
        if m:
            errno_text = m.group(1)
        elif _errno_name(err):
            errno_text = err.split(",")[0].strip()
    if not errno_text:
        msg = fields.get("message", "") or ""
        m = re.search(r"(?:SO_ERROR|socket|accept|bind|listen|connect|pipe|epoll_create|setsockopt|fcntl"
                      r"|getsockname|getpeername|read|write|writev)?:? ?([A-Z][a-z]+(?: [a-z]+){1,5})", msg)
        if m and _errno_name(m.group(1)):
            errno_text = m.group(1)
    if errno_text:
        errno_text = errno_text.split(". This is", 1)[0].strip().rstrip(".")
        fields["errno_text"] = errno_text
        name = _errno_name(errno_text)
        if name:
            fields["errno_name"] = name
    for k in ("will_retry", "retry_count", "retry_limit", "gloo_rank", "gloo_size", "timeout_ms"):
        if k in fields:
            fields[k] = _int(fields[k])


def _terminate(text: str, env: Envelope | None) -> Parsed | None:
    tree = _parse("torch_terminate", text)
    if tree is None:
        return None
    f: dict[str, Any] = {}
    if tree.data == "thrown":
        f["cxx_type"] = str(tree.children[0])[1:-1]
        what = ""
        if len(tree.children) > 1:
            w = tree.children[1]
            what = str(w.children[0]) if w.children else ""
        cut = what.find("\nException raised from ")
        f["what"] = (what[:cut] if cut >= 0 else what).strip()
        if cut >= 0:
            f["cxx_frames"] = what.count("\nframe #")
        if f["what"]:
            inner = _message(f["what"], None)
            if inner is not None:
                f["cause"] = _cause(inner)
        tid = "torch:c10-exception:terminate-called-after-throwing-an-instance-of"
    else:
        f["what"] = str(tree.children[0]).strip()
        tid = "logdoc:cxx:terminate-called"
    return Parsed("torch.terminate", _level(env, "FATAL"), tid, f)


def _cause(p: Parsed) -> dict[str, Any]:
    return {"kind": p.kind, "template": p.template, **p.fields}


def _child_failed(text: str) -> dict[str, Any] | None:
    tree = _parse("torch_child_failed", text)
    if tree is None:
        return None
    out: dict[str, Any] = {"failures": []}
    for child in tree.children:
        if isinstance(child, Token) and child.type == "TITLE":
            title = str(child).strip()
            out["script"] = title[:-len(" FAILED")] if title.endswith(" FAILED") else title
        elif isinstance(child, Tree):
            root = child.data == "root"
            for entry in child.find_data("entry"):
                out["failures"].append(_failure_entry(entry, root))
    failures = out["failures"]
    failures.sort(key=lambda e: (not e["root_cause"]))
    roots = [e for e in failures if e["root_cause"]]
    if roots:
        out["root_cause"] = {k: roots[0].get(k) for k in ("rank", "local_rank", "host", "exitcode", "signal", "pid")}
    return out


def _failure_entry(entry: Tree, root: bool) -> dict[str, Any]:
    e: dict[str, Any] = {"root_cause": root, "index": None, "time": None, "host": None, "rank": None,
                         "local_rank": None, "exitcode": None, "pid": None, "signal": None, "error_file": None}
    fields = []
    for child in entry.children:
        if isinstance(child, Token):                # the `[i]:` line
            m = re.search(r"\[(\d+)\]", str(child))
            if m:
                e["index"] = int(m.group(1))
        else:
            fields.append(child)
    for field in fields:
        line = str(field.children[0]).strip()
        name, _, value = line.partition(":")
        name, value = name.strip(), value.strip()
        cont = [str(t)[1:] for t in field.children[1:]]
        if name == "time":
            e["time"] = value.replace("_", "T", 1) if re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d", value) else value
        elif name == "host":
            e["host"] = value
        elif name == "rank":
            m = re.match(r"(-?\d+)(?:\s*\(local_rank:\s*(-?\d+)\))?", value)
            if m:
                e["rank"] = int(m.group(1))
                if m.group(2) is not None:
                    e["local_rank"] = int(m.group(2))
        elif name == "exitcode":
            m = re.match(r"(-?\d+)(?:\s*\(pid:\s*(\d+)\))?\s*(?:\(?(SIG[A-Z0-9]+)\)?)?", value)
            if m:
                e["exitcode"] = int(m.group(1))
                if m.group(2):
                    e["pid"] = int(m.group(2))
                if m.group(3):
                    e["signal"] = m.group(3)
        elif name == "error_file":
            e["error_file"] = None if value in ("<N/A>", "") else value
        elif name == "traceback":
            tb = "\n".join([value] + cont).strip()
            e["traceback"] = tb
            m = re.match(r"Signal (\d+) \((SIG[A-Z0-9]+)\) received by PID (\d+)", tb)
            if m:
                e["signal"] = e["signal"] or m.group(2)
                e["pid"] = e["pid"] or int(m.group(3))
        else:
            e[name] = value
    if e["signal"] is None and isinstance(e["exitcode"], int) and e["exitcode"] < 0:
        e["signal"] = SIGNALS.get(-e["exitcode"])
    return e


def _traceback(text: str, env: Envelope | None) -> Parsed | None:
    if "..." in text or "…" in text or "omitted" in text or "snip" in text:
        # frames a paste left out (blocks.is_elision lines) are not read; the frames that are there are
        text = "\n".join(line for line in text.split("\n") if not is_elision(line))
    tree = _parse("torch_traceback", text)
    if tree is None:
        return _cut_traceback(text, env)
    top = tree.children[0]
    if top.data == "exception":  # no `Traceback (most recent call last):` head was read: not a traceback
        return None
    excs: list[dict[str, Any]] = []
    last_frames: list[str] = []
    if top.data == "exception":
        excs.append(_exc_from(top))
        relation = []
    else:
        relation = []
        for node in top.children:
            if node.data == "traceback":
                tb = node
                relation.append(None)
            else:
                tb = node.children[-1]
                relation.append("context" if node.data == "chained" and "During handling" in str(node.children[0])
                                else "cause" if node.data == "chained" else "nested")
            frames = [_frame(f) for f in tb.children if isinstance(f, Tree) and f.data == "frame"]
            exc = _exc_from(tb.children[-1])
            exc["frames"] = len(frames)
            exc["last_frame"] = frames[-1] if frames else None
            excs.append(exc)
            last_frames = frames
    final = excs[-1]
    fields: dict[str, Any] = {"exc_type": final["exc_type"], "exc_message": final["exc_message"]}
    if top.data != "exception":
        fields["traceback"] = True
        fields["frames"] = final.get("frames", 0)
        fields["last_frame"] = final.get("last_frame")
    if len(excs) > 1:
        fields["chain"] = [{"exc_type": e["exc_type"], "exc_message": e["exc_message"][:500],
                            "relation": r} for e, r in zip(excs, relation)]
        for prev in excs[:-1]:
            m = re.search(r"-- Process (\d+) terminated with the following error:", prev["exc_message"])
            if m:
                fields["spawn_process"] = int(m.group(1))
    return _exception_event(fields, env)


_TB_FRAME = re.compile(r'^[ \t]+File "([^"\n]*)", line (\d+)(?:, in ([^\n]*))?$', re.M)


def _cut_traceback(text: str, env: Envelope | None) -> Parsed | None:
    """A traceback whose exception line a paste cut off (only the head and frames are there): still a
    Python exception, whose type and message are not in the log."""
    if not text.startswith("Traceback (most recent call last):"):
        return None
    body = text.split("\n", 1)[1] if "\n" in text else ""
    frames = _TB_FRAME.findall(body)
    if not frames or any(line.strip() and not line[:1].isspace() for line in body.split("\n")):
        return None  # (a line of its own after the frames: not only cut, the grammar had a reason)
    path, line, func = frames[-1]
    return Parsed("torch.exception", _level(env, "ERROR"), "py:traceback",
                  {"exc_type": None, "exc_message": "", "traceback": True, "frames": len(frames),
                   "last_frame": f"{path}:{line}" + (f" in {func.strip()}" if func else ""), "cut": True})


def _frame(node: Tree) -> str:
    line = str(node.children[0]).strip()
    m = re.match(r'File "([^"]*)", line (\d+)(?:, in (.*))?', line)
    if not m:
        return line
    return f"{m.group(1)}:{m.group(2)}" + (f" in {m.group(3).strip()}" if m.group(3) else "")


def _exc_from(node: Tree) -> dict[str, Any]:
    first = str(node.children[0]).lstrip("\n")
    rest = "".join(str(t) for t in node.children[1:])
    m = _EXC_LINE.match(first)
    if m:
        etype, msg = m.group(1), first[m.end():]
    else:
        etype, msg = None, first
    message = (msg + rest)
    # ProcessRaisedException: drop the "-- Process N terminated ..." line (the nested traceback follows)
    return {"exc_type": etype, "exc_message": message.strip("\n").rstrip() if message.strip() else ""}


def _exception_event(fields: dict[str, Any], env: Envelope | None) -> Parsed:
    """Name a Python exception by its message when the message is a known format."""
    etype = fields.get("exc_type") or ""
    msg = fields.get("exc_message") or ""
    short = etype.rsplit(".", 1)[-1]
    inner: Parsed | None = None
    if short == "ChildFailedError":
        cf = _child_failed(msg.lstrip("\n"))
        if cf is not None:
            fields.update(cf)
            return Parsed("torchrun.child_failed", _level(env, "ERROR"), "torch:elastic-errors:child-failed-error", fields)
    if short == "ProcessRaisedException" and "spawn_process" not in fields:
        m = re.search(r"-- Process (\d+) terminated with the following error:", msg)
        if m:
            fields["spawn_process"] = int(m.group(1))
    if msg:
        inner = _message(msg, None)
    if short in ("OutOfMemoryError",) and (inner is None or inner.kind != "cuda.oom"):
        inner = Parsed("cuda.oom", "ERROR", "logdoc:cuda:oom-other", {})
    if short == "SignalException" and inner is None:
        m = re.match(r"Process (\d+) got signal: (\d+)", msg)
        if m:
            inner = Parsed("torchrun.signal", "ERROR", "torch:elastic-multiprocessing:process-got-signal",
                           {"pid": int(m.group(1)), "signal": int(m.group(2))})
    if inner is None and short.startswith("Rendezvous"):
        inner = Parsed("torchrun.rendezvous", "ERROR", f"logdoc:elastic:{short}", {"event": short})
    if inner is not None and inner.kind not in ("torch.message",):
        merged = dict(inner.fields)
        merged.update(fields)
        return Parsed(inner.kind, _level(env, "ERROR"), inner.template, merged)
    if inner is not None:
        fields["cause"] = _cause(inner)
    tid = "py:traceback" if fields.get("traceback") else "py:exception"
    return Parsed("torch.exception", _level(env, "ERROR"), tid, fields)


# --------------------------------------------------------------------------------------------
# messages (bodies)

def _templated(body: str, env: Envelope | None, pg: dict[str, Any] | None) -> Parsed | None:
    m = _match_templates(body, ("body", "line"))
    if m is None and body.startswith("Warning: "):  # TORCH_WARN's `Warning: msg (function f)`
        m = _match_templates(body[9:], ("body", "line"))
    if m is None:
        return None
    t, f = m
    fields = dict(pg or {})
    for k, v in f.items():
        if k == "rest" and not v:
            continue
        fields[k] = v
    _enrich(t.kind, fields)
    return Parsed(t.kind, _level(env, t.level), t.id, fields)


def _enrich(kind: str, f: dict[str, Any]) -> None:
    for k in list(f):
        if k in ("pid", "port", "exitcode", "local_rank", "rank", "xid", "remaining", "max_restarts", "seq"):
            f[k] = _int(f[k])
    if kind == "torchrun.child_failed" and "failures" not in f and ("signum" in f or "exitcode" in f):
        # one row of the summary table standing alone (its neighbours cut, wrapped or glued by a paste):
        # the failure it describes, so the rules on the table read it
        row: dict[str, Any] = {}
        if isinstance(f.get("signum"), int):
            row["exitcode"] = -f["signum"]
            row["signal"] = f.get("signal")
        elif isinstance(_int(f.get("exitcode")), int):
            row["exitcode"] = _int(f["exitcode"])
            if row["exitcode"] < 0:
                row["signal"] = SIGNALS.get(-row["exitcode"])
        if isinstance(f.get("pid"), int):
            row["pid"] = f["pid"]
        m = re.search(r"\brank:?\s*(\d+)\s*\(local[ _]rank:\s*(\d+)\)", f.get("head") or "")
        if m:
            row["rank"], row["local_rank"] = int(m.group(1)), int(m.group(2))
        f.pop("head", None)
        if row:
            f["failures"] = [row]
    if kind == "torchrun.worker_failed":
        ec = f.get("exitcode")
        if isinstance(ec, int) and ec < 0:
            f["signal"] = SIGNALS.get(-ec)
        if "process" in f:
            f["local_rank"] = f.pop("process")
            f["launcher"] = "spawn"
    elif kind == "kernel.xid":
        detail = f.get("detail", "")
        m = re.search(r"pid=(\d+|'<unknown>')", detail)
        if m and m.group(1).isdigit():
            f["xid_pid"] = int(m.group(1))
        m = re.search(r"name=([^,\s]+)", detail)
        if m:
            f["process_name"] = m.group(1)
        f["message"] = re.sub(r"^(?:pid=[^,]*,\s*)?(?:name=[^,]*,\s*)?", "", detail).strip()
        f.pop("detail", None)
    elif kind in ("store.listen_failed", "store.connect_retry", "store.connect_failed", "store.resolve_failed"):
        if "uv_name" in f:
            f["errno_name"] = f["uv_name"]
        elif isinstance(f.get("errno"), int) and f["errno"] in ERRNO_NUMBERS:
            f["errno_name"] = ERRNO_NUMBERS[f["errno"]]
        elif _errno_name(f.get("strerror") or f.get("gai_strerror")):
            f["errno_name"] = _errno_name(f.get("strerror") or f.get("gai_strerror"))
        addr = f.get("addr")
        if isinstance(addr, str) and "port" not in f:
            m = re.search(r":(\d+)\]?$", addr)
            if m:
                f["port"] = int(m.group(1))
    elif kind == "store.wait_timeout" and "keys" in f:
        f["keys"] = [k.strip() for k in re.split(r",\s*", f["keys"].strip("[] ")) if k.strip()]
    elif kind == "torchrun.sigterm" and "kill_signal" in f:
        f["escalated"] = True
    elif kind == "store.nccl_unique_id" and isinstance(f.get("exception"), str):
        inner = _message(f["exception"], None)
        if inner is not None:
            f["cause"] = _cause(inner)
    elif kind in ("torch.flight_recorder", "torch.heartbeat", "torch.teardown") and "src_rank" in f:
        f["src_rank"] = _int(f["src_rank"])


# An exception message may quote another one (`RuntimeError: ... NCCL error ...`), and each is read
# by _message again; hostile input can nest that without end (`E: E: E: ...`), so the depth is capped.
_MAX_NESTING = 6
_nesting = threading.local()


def _message(text: str, env: Envelope | None) -> Parsed | None:
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
    if c0 == "T" and s.startswith("Traceback (most recent call last)"):
        return _traceback(s, env)
    if c0 == "=" and s.startswith("==="):
        cf = _child_failed(s)
        if cf is not None:
            return Parsed("torchrun.child_failed", _level(env, "ERROR"), "torch:elastic-errors:child-failed-error", cf)
    if c0 == "[" and _TABLE_ENTRY.match(s):
        cf = _child_failed("=" * 3 + "\n" + "? FAILED\n" + "-" * 3 + "\nFailures:\n" + s + "\n" + "-" * 3
                           + "\nRoot Cause (first observed failure):")
        if cf is not None:
            cf.pop("script", None)
            cf.pop("root_cause", None)
            return Parsed("torchrun.child_failed", _level(env, "ERROR"), "torch:elastic-errors:child-failed-table", cf)
    if c0 == '"' and s.startswith('"message": "'):
        # torchelastic's error_handler logs the error file as JSON: `"message": "<Type>: <message>",`
        m = _JSON_MESSAGE.match(s)
        if m:
            try:
                quoted = json.loads('"' + m.group(1) + '"')
            except ValueError:
                quoted = None
            if quoted and _EXC_LINE.match(quoted):
                return _message(quoted, env)
    if c0 == "t" and s.startswith("terminate called"):
        return _terminate(s, env)
    if c0 in "Ef" and (s.startswith("Exception raised from ") or s.startswith("frame #")):
        return Parsed("torch.cxx_backtrace", _level(env, "ERROR"),
                      "torch:c10-exception:exception-raised-from-at-most-recent-call",
                      {"cxx_frames": s.count("frame #"), "raised_from": s.split("\n", 1)[0][len("Exception raised from "):]
                       if s.startswith("Exception raised from ") else None})
    if c0 == "<" and s.startswith("<omitting python frames>"):
        return Parsed("torch.cxx_backtrace", _level(env, "ERROR"),
                      "torch:c10-exception:exception-raised-from-at-most-recent-call", {"cxx_frames": s.count("frame #")})
    if c0 == "[" and s.startswith("[rank"):
        # a rank label without the colon of torch's `[rankN]:` (a launcher's or a paste's): peeled when
        # what follows is a message of its own
        m = _RANK_LABEL.match(s)
        if m and m.end() < len(s):
            s = s[m.end():]
            c0 = s[:1]
    if c0 == "[" and s.startswith("[c10d] "):
        s = s[7:]
        c0 = s[:1]
    pg: dict[str, Any] | None = None
    body = s
    if c0 == "[" and (s.startswith("[Rank") or s.startswith("[PG")):
        tree = _parse("torch_prefix", s)
        if tree is not None:
            pg, body = _PrefixT().transform(tree)
            if body.startswith(":"):
                body = body[1:].lstrip()
            if body.startswith("[c10d] "):
                body = body[7:]
    # a Python exception line: `Type: message`
    if body[:1].isalpha() and pg is None:
        m = _EXC_LINE.match(body, 0, min(len(body), 400))
        if m and m.end() <= len(body):
            etype = m.group(1)
            if "." in etype or etype[:1].isupper():
                rest = body[m.end():]
                return _exception_event({"exc_type": etype, "exc_message": rest.strip()}, env)
    p = _structured(body, env, pg)
    if p is not None:
        return p
    p = _templated(body, env, pg)
    if p is not None:
        return p
    if pg is not None:
        return Parsed("torch.message", _level(env, "ERROR"), None, dict(pg))
    return None


def _structured(body: str, env: Envelope | None, pg: dict[str, Any] | None) -> Parsed | None:
    b0 = body[:1]
    head = body[:200]
    if (body.startswith(_TORCH_BODY_STARTS) or "monitoredBarrier" in head
            or (b0 == "R" and body.startswith("Rank") and "\t" in body[:64] and "knowledge" in body)):
        r = _torch_body(body)
        if r is not None:
            kind, tid, level, fields = r
            out = dict(pg or {})
            out.update(fields)
            for key in ("exception", "original_exception"):
                exc = out.get(key)
                if isinstance(exc, str) and exc:
                    inner = _message(exc, None)
                    if inner is not None:
                        out["cause"] = _cause(inner)
                        for k in ("nccl_result", "error_string", "nccl_version", "last_error", "source_location"):
                            if k in inner.fields:
                                out.setdefault(k, inner.fields[k])
            if kind == "torch.monitored_barrier" and pg:
                out["rank"] = pg.get("pg_rank")
            return Parsed(kind, _level(env, level), tid, out)
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
            return Parsed("torch.watchdog_timeout", _level(env, "ERROR"), "torch.watchdog_timeout", out)
    if b0 == "n" and body.startswith(_NCCL_RESULTS):
        # ncclGetErrorString's `ncclXxx: <interpretation>` (+ `Last error:` and the reason), the tail
        # of a `NCCL error in: ...` message that a paste or an exception quotes without its head
        p = _nccl_error(body)
        if p is not None:
            p.level = _level(env, p.level)
            return p
    if b0 == "N" and body.startswith(("NCCL error", "NCCL timeout in")):
        p = _nccl_error(body)
        if p is not None:
            if pg:
                p.fields = {**pg, **p.fields}
            p.level = _level(env, p.level)
            return p
    if b0 in "DP" and body.startswith(("Detected mismatch between collectives", "ProcessGroupWrapper:")):
        p = _mismatch(body)
        if p is not None:
            p.level = _level(env, p.level)
            return p
    if b0 == "[" and body[1:2] == "<" or body.startswith("[enforce fail at <"):
        unmasked = _MASKED_LOC.sub(lambda m: "[" + (m.group(1) or ""), body, count=1)
        if unmasked != body and _GLOO_LOC.match(unmasked):
            body = unmasked
    if (b0 == "[" and _GLOO_LOC.match(body)) or (b0 == "G" and body.startswith("Gloo connectFullMesh")):
        p = _gloo(body)
        if p is not None:
            p.level = _level(env, p.level)
            return p
    if "NVRM: Xid" in head and not body.startswith("NVRM"):
        i = body.find("NVRM: Xid")
        return _templated(body[i:], env, pg)
    return None


# A tqdm progress bar (`desc: 35%|#####     | 700/2000 [30:01<57:14, 39.1it/s]`): the program's own
# work (tokenizing, downloading, loading, evaluating) and how long it has run. A message printed by
# another process while the bar is redrawn (with `\r` and no newline) lands glued after it.
_TQDM = re.compile(r"(?P<desc>[^\n|]{0,160}?)[ \t]*(?P<percent>\d{1,3})%\|[^|\n]{0,600}\|[ \t]*"
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
                from .envelope import unwrap  # (the glued message keeps its own header)
                renv, rmsg = unwrap(rest)
                q = classify(rmsg, renv)
                if q is not None:
                    q.fields.update({f"bar_{k}": v for k, v in bar.items()})
                    if renv.level and q.level == "ERROR" and renv.level != "ERROR":
                        q.level = _level(renv, q.level)
                    return q
            return Parsed("app.progress", "INFO", "logdoc:app:progress-bar", bar)
    p = _message(text, env)
    if (p is None or p.template is None) and "\n" in text and ("WorkNCCL" in text or "Watchdog caught" in text):
        # a ProcessGroupNCCL record wrapped by a paste (blocks.py joins its lines): read it again with
        # the breaks undone, a hard wrap (cut anywhere) first, then a soft one (at a blank). Only a
        # reading that the grammar accepts whole is taken; the event keeps the text as printed.
        for joined in (text.replace("\n", ""), text.replace("\n", " ")):
            q = _message(joined, env)
            if q is not None and q.template is not None:
                q.fields["rewrapped"] = True
                return q
    return p
