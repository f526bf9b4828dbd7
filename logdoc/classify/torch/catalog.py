"""The PyTorch and Gloo message catalog, the brace front-end of the catalog engine
(:mod:`logdoc.classify.catalog`).

``grammars/torch_templates.tsv`` (brace dialect: ``{name}``, ``{name:int|word|line|rest}``, ``{a|b}``
alternatives; built by ``python tools/make_catalog torch``): its templates as bounded patterns
(:func:`logdoc.classify.formats.brace_to_regex`), filed in the engine by their longest literal word
where that word stands between blanks (a message asks with its blank-separated tokens), tried in
specificity order (literal characters without blanks; the table's order at a tie); the three tables
(``body``, ``gloo``, ``line``) asked in the order a classifier gives, and a Gloo location preferring
the row of the printing file and line; what a catalog-named message's fields become (integers,
signals, errno names, Xid detail, a lone torchrun table row)."""
from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import Any

from ...blocks import OPTIONS_HEAD
from ...events import Envelope
from ...grammar import Parsed
from ...lazyre import lazy_re
from ...resources import data_dir, grammar_text
from .. import catalog as engine
from .. import cut, formats
from ..formats import BoundedPattern, brace_to_regex
from .common import ERRNO_NUMBERS, SIGNALS, Read, cause, errno_name, level_of, to_int
from .transformers import nccl_result_of

_WORK_STATUS = lazy_re(r"[Ll]ast enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+)")
_UNIT_MS = {"ms": 1, "s": 1000, "min": 60000, "h": 3600000}
# the ncclResult numbers that mean the same in every release (nccl.h; NCCL 1.x numbered its later results otherwise)
_RESULT_NUMBERS = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError"}
MAX_MATCH = 65536  # the catalog matcher looks at most at this many characters of a message
_ORIGINAL = "\n Original exception:"


class _Template:
    __slots__ = ("id", "kind", "level", "where", "file", "format", "rx", "anchor", "specificity", "ints")

    def __init__(self, tid: str, kind: str, level: str, where: str, file: str, fmt: str) -> None:
        self.id, self.kind, self.level, self.where, self.file, self.format = tid, kind, level, where, file, fmt
        fmt_s = fmt.strip()
        # c10d's logAndThrow(log, error) logs the first part and throws it with `\n Original exception:
        # \n<what>` appended; the catalog lists the thrown text. The logged line is the head alone.
        cut = fmt_s.find(_ORIGINAL)
        head = fmt_s[:cut].rstrip() if cut > 0 else fmt_s
        # A message quoted up to its first sentence (a post, a summary): literal sentences that end the
        # format say nothing a placeholder would, and may be missing (`The connection to the C10d store
        # has failed.` without `See inner exception for details.`).
        stop = _dropped_tail(head) if cut < 0 else -1
        # Messages gain tails across versions: c10's TORCH_WARN appends ` (function operator())`,
        # newer releases append the run id or detail. A template that ends in literal text accepts
        # a tail that starts after a blank or a quote; one that ends in a placeholder absorbs it anyway.
        tail = r"(?:[ \t]+\S[^\n]*)?" if head[-1:] not in "}" else ""
        if stop > 0:  # (the tail only after the whole format: the first sentence alone ends the text)
            body, literal, ints = brace_to_regex(head[:stop])
            rest, more, _ = brace_to_regex(head[stop:].strip())
            body = rf"{body}(?:\s+{rest}{tail})?"
            tail = ""
        else:
            body, literal, ints = brace_to_regex(head)
            more = ""
        if cut > 0:
            thrown, _, thrown_ints = brace_to_regex(fmt_s[cut:])
            ints = ints | thrown_ints
            tail = rf"(?:\s*{thrown}|{tail})" if tail else rf"(?:\s*{thrown})?"
        self.ints = ints
        # bounded: a hostile 64 KB message must not make the lazy placeholders backtrack for minutes
        self.rx = BoundedPattern(r"\s*" + body + tail + r"\s*\Z", re.DOTALL)
        words = re.findall(r"\S+", literal)
        self.anchor = max(words, key=len) if words else ""
        self.specificity = len((literal + more).replace(" ", ""))

    def match(self, text: str) -> dict[str, Any] | None:
        m = self.rx.match(text)
        return None if m is None else self.fields(m)

    def fields(self, m: re.Match) -> dict[str, Any]:
        """The fields of a match of :attr:`rx`: integers where the format says ``:int``."""
        fields: dict[str, Any] = {}
        for k, v in m.groupdict().items():
            if v is None:
                continue
            fields[k] = int(v) if k in self.ints else v.strip()
        return fields


_SENTENCE_STOP = lazy_re(r"[.!?] ")
MIN_KEPT = 24  # literal characters a message quoted up to its first sentence must still hold


def _dropped_tail(head: str) -> int:
    """Where the literal sentences that end a format start (after the first sentence end after which
    no placeholder stands), or -1 when the format ends in no such sentence or what stands before is
    too short to name the message alone."""
    for m in _SENTENCE_STOP.finditer(head):
        rest = head[m.end():]
        before = head[:m.start() + 1]
        if ("{" in rest or "}" in rest or before.count("(") > before.count(")")
                or "." in before[before.rfind(" ") + 1:-1]):
            continue  # (not after `e.g.`, inside brackets, or a dotted name: no sentence ends there)
        kept = _PLACEHOLDER.sub("", head[:m.start() + 1])
        return m.start() + 1 if len(kept.replace(" ", "")) >= MIN_KEPT and rest.strip() else -1
    return -1


@lru_cache(maxsize=1)
def templates() -> dict[str, list[_Template]]:
    """The catalog table, by where it applies ('body', 'gloo', 'line'), most specific first."""
    from ...cache import load_table

    return load_table("torch", [__file__, formats.__file__, engine.__file__, data_dir("grammars") / "torch_templates.tsv"],
                      build_templates)


def build_templates() -> dict[str, list[_Template]]:
    by: dict[str, list[_Template]] = {"body": [], "gloo": [], "line": []}
    for raw in grammar_text("torch_templates.tsv").splitlines():
        if not raw or raw.startswith("#") or raw.startswith("id\t"):
            continue
        tid, kind, level, where, file, fmt = raw.split("\t")
        fmt = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\"}.get(m.group(1), m.group(0)), fmt)
        by[where].append(_Template(tid, kind, level, where, file, fmt))
    for lst in by.values():
        lst.sort(key=lambda t: -t.specificity)
    return by


_PLACEHOLDER = lazy_re(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


@lru_cache(maxsize=None)
def index(where: str) -> engine.AnchorIndex[_Template]:
    """The engine over ``templates()[where]``: a template whose anchor stands between blanks (or at
    an end) in its format, not against a placeholder, is filed under it, and is tried only for a
    message that holds the anchor as a whole token (the format's blanks are ``\\s+`` in its
    expression; ``str.split`` cuts at the same characters); the others are tried for every message
    that holds their anchor."""
    return engine.AnchorIndex(templates()[where], key=_filed_under)


_PLACEHOLDER = lazy_re(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def _filed_under(t: _Template) -> str | None:
    if t.anchor and _stands_alone(t.anchor, _PLACEHOLDER.sub("\x00", t.format.strip())):
        return t.anchor
    return None


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


def match_templates(text: str, wheres: tuple[str, ...], file: str | None = None,
                    line: int | None = None) -> tuple[_Template, dict[str, Any]] | None:
    """The template of ``text`` in the first of the tables ``wheres`` that reads it; with a Gloo
    location (``file``, ``line``), the reading of the printing file and line before any other, and
    none of another file when that file makes the same check: a check's condition and errno text
    (``rv == 0. ...``) read alike in many files, and the location says which one printed it."""
    text = text[:MAX_MATCH]
    best: tuple[int, _Template, dict[str, Any]] | None = None
    tokens = set(text.split())
    for where in wheres:
        if file is None:
            hit = index(where).first(text, tokens)
            if hit is not None:
                return hit[0], hit[0].fields(hit[1])
            continue
        own = text.split(". ", 1)[0].strip() in _conditions(where).get(file, ())
        for t, m in index(where).matches(text, tokens):
            score = 0
            if t.file and t.file == file:
                score = 2 if (line is not None and t.id.endswith(f":{line}")) else 1
            elif own:
                continue
            if best is None or score > best[0]:
                best = (score, t, t.fields(m))
            if score == 2:
                break
    return (best[1], best[2]) if best else None


@lru_cache(maxsize=None)
def _conditions(where: str) -> dict[str, frozenset[str]]:
    """Per source file of the table ``where``, the conditions of its checks (a Gloo enforce's format up
    to its first full stop: ``rv == 0`` of ``rv == 0. {strerror:line}``)."""
    out: dict[str, set[str]] = {}
    for t in templates()[where]:
        head = t.format.strip().split(". ", 1)
        if t.file and len(head) == 2 and "{" not in head[0]:
            out.setdefault(t.file, set()).add(head[0])
    return {f: frozenset(c) for f, c in out.items()}


@lru_cache(maxsize=1)
def head_index() -> cut.CutIndex[_Template]:
    """The ``body`` and ``line`` tables as :func:`match_head` reads them (built once)."""
    ts = templates()
    return cut.CutIndex((t, partial(cut.iter_brace_tokens, t.format.strip()), t.kind)
                        for where in ("body", "line") for t in ts[where])


def match_head(text: str) -> tuple[_Template, dict[str, Any]] | None:
    """The template whose end a paste or a viewer cut off ``text`` (:mod:`logdoc.classify.cut`):
    the head of its format up to the cut, with the fields before it."""
    if "\n" in text or len(text) > cut.MAX_CUT_TEXT:
        return None
    msg, _ = cut.strip_mark(text)
    got = head_index().match(msg)
    return (got[0], got[0].fields(got[1])) if got is not None else None


# ProcessGroupNCCL's options as every release printed them: 1.10 - 2.0 one a line after `ProcessGroupNCCL
# initialized with following options:` (logdoc.blocks joins them), 2.1 on one line after `ProcessGroupNCCL
# initialization options:` (`NCCL_ASYNC_ERROR_HANDLING: 1, ...`), 2.2 on split between that line and
# `ProcessGroupNCCL environments:` (the `TORCH_NCCL_` names): each the same facts, whichever wording printed it
_OPTIONS_HEADS = (OPTIONS_HEAD, "ProcessGroupNCCL initialization options:")  # (the first: the block logdoc.blocks joins)
_OPTIONS_ID = "torch:ProcessGroupNCCL:processgroupnccl-initialization-options-size-global-rank-timeout"
# the environments line changed its list of names in almost every release (2.2 - 2.5 printed the dump,
# heartbeat and monitoring settings on it, later ones moved them to lines of their own): one wording
# of it is in the catalog, the others are read here by their names
_ENVIRONMENTS_HEAD = "ProcessGroupNCCL environments:"
_ENVIRONMENTS_ID = "torch:ProcessGroupNCCL:processgroupnccl-environments-nccl-version-torch-nccl-async"
_OPTION = lazy_re(r"(?:^|[\n,:])[ \t]*(?:TORCH_)?(NCCL_ASYNC_ERROR_HANDLING|NCCL_BLOCKING_WAIT|NCCL_DESYNC_DEBUG|"
                  r"TIMEOUT\(ms\)|USE_HIGH_PRIORITY_STREAM): (-?\d{1,12})\b")
_OPTION_FIELDS = {"NCCL_ASYNC_ERROR_HANDLING": "async_error_handling", "NCCL_BLOCKING_WAIT": "blocking_wait",
                  "NCCL_DESYNC_DEBUG": "desync_debug", "TIMEOUT(ms)": "timeout_ms",
                  "USE_HIGH_PRIORITY_STREAM": "high_priority_stream"}


_DEBUG = lazy_re(r"(?:^|[\n,:])[ \t]*TORCH_DISTRIBUTED_DEBUG: (OFF|INFO|DETAIL)\b")


def pg_options(body: str) -> dict[str, int]:
    """The options a ProcessGroupNCCL options / environments message states, by name (``timeout_ms``,
    ``async_error_handling``, ``blocking_wait``, ``desync_debug``, ``high_priority_stream``)."""
    return {_OPTION_FIELDS[m.group(1)]: int(m.group(2)) for m in _OPTION.finditer(body, 0, MAX_MATCH)}


def _options_block(body: str, env: Envelope | None, pg: dict[str, Any] | None) -> Parsed | None:
    """A ProcessGroupNCCL options message in a wording no catalog row has (1.10 - 2.1's, above)."""
    old, one_line = _OPTIONS_HEADS
    environments = body.startswith(_ENVIRONMENTS_HEAD) and "\n" not in body
    if not (body.startswith(old + "\n") or body.startswith(one_line) and "\n" not in body or environments):
        return None  # (the old wording's options are never on its header's line: a paste that joined them)
    found: dict[str, Any] = dict(pg_options(body))
    if not found:
        return None
    m = _DEBUG.search(body, 0, MAX_MATCH)
    if m is not None:
        found["debug"] = m.group(1)  # (2.0's ` TORCH_DISTRIBUTED_DEBUG: `: the later environments line's `debug`)
    return Parsed("torch.pg_info", level_of(env, "INFO"), _ENVIRONMENTS_ID if environments else _OPTIONS_ID,
                  {**(pg or {}), **found})


def templated(body: str, env: Envelope | None, pg: dict[str, Any] | None, read: Read) -> Parsed | None:
    m = match_templates(body, ("body", "line"))
    if m is None and body[:1] == "P":
        got = _options_block(body, env, pg)
        if got is not None:
            return got
    if m is None and body.startswith("Warning: "):  # TORCH_WARN's `Warning: msg (function f)`
        m = match_templates(body[9:], ("body", "line"))
    was_cut = False
    if m is None:
        m = match_head(body)
        was_cut = m is not None
    if m is None:
        return None
    t, f = m
    fields = dict(pg or {})
    if was_cut:
        fields["cut"] = True
    for k, v in f.items():
        if k == "rest" and not v:
            continue
        fields[k] = v
    enrich(t.kind, fields, read)
    if t.kind == "torch.pg_info" and "ProcessGroupNCCL" in body:
        for k, v in pg_options(body).items():
            fields.setdefault(k, v)
    return Parsed(t.kind, level_of(env, t.level), t.id, fields)


def enrich(kind: str, f: dict[str, Any], read: Read) -> None:
    for k in list(f):
        if k in ("pid", "port", "exitcode", "local_rank", "rank", "xid", "remaining", "max_restarts", "seq"):
            f[k] = to_int(f[k])
    if kind in ("store.barrier_wait", "store.barrier_timeout"):
        # the store-based barrier's count above the world size (`world_size=4, worker_count=8`): processes of
        # another job or attempt counted on the same key; its loop waits for equality, so it never ends
        joined, world = to_int(f.get("joined")), to_int(f.get("world_size"))
        if isinstance(joined, int) and isinstance(world, int) and joined > world:
            f["excess"] = joined - world
    if kind == "torchrun.child_failed" and "failures" not in f and ("signum" in f or "exitcode" in f):
        # one row of the summary table standing alone (its neighbours cut, wrapped or glued by a paste):
        # the failure it describes, so the rules on the table read it
        row: dict[str, Any] = {}
        if isinstance(f.get("signum"), int):
            row["exitcode"] = -f["signum"]
            row["signal"] = f.get("signal")
        elif isinstance(to_int(f.get("exitcode")), int):
            row["exitcode"] = to_int(f["exitcode"])
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
        # Xid 45 (the driver's cleanup of a process's channels) names the fault that made it since the 5xx drivers:
        # `Ch 00000001 caused by previous Xid 149`
        m = re.search(r"caused by previous Xid (\d{1,4})\b", detail)
        if m:
            f["caused_by_xid"] = int(m.group(1))
        f.pop("detail", None)
    elif kind in ("store.listen_failed", "store.connect_retry", "store.connect_failed", "store.resolve_failed"):
        if "uv_name" in f:
            f["errno_name"] = f["uv_name"]
        elif isinstance(f.get("errno"), int) and f["errno"] in ERRNO_NUMBERS:
            f["errno_name"] = ERRNO_NUMBERS[f["errno"]]
        elif errno_name(f.get("strerror") or f.get("gai_strerror")):
            f["errno_name"] = errno_name(f.get("strerror") or f.get("gai_strerror"))
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
        inner = read(f["exception"], None)
        if inner is not None:
            f["cause"] = cause(inner)
    elif kind == "torch.nccl_error" and "nccl_result" not in f and isinstance(f.get("error_string"), str):
        result = nccl_result_of(f["error_string"])  # a framework's own wording of the result's text
        if result:
            f["nccl_result"] = result
    elif kind == "torch.nccl_error" and "nccl_result" not in f and f.get("code") in _RESULT_NUMBERS:
        f["nccl_result"] = _RESULT_NUMBERS[f["code"]]  # a glog CHECK that printed the result's number only
    elif kind in ("torch.flight_recorder", "torch.heartbeat", "torch.teardown") and "src_rank" in f:
        f["src_rank"] = to_int(f["src_rank"])
    if kind == "store.client_timeout" and f.get("unit") in _UNIT_MS and isinstance(f.get("timeout_ms"), int):
        f["timeout_ms"] *= _UNIT_MS[f.pop("unit")]  # `1800s`, `30min` (2.0 - 2.2) in ms like `600000ms`
    if kind == "torch.flight_recorder" and isinstance(f.get("details"), str):
        # 2.3's `... will start to dump the debug info. {details}`: the work counters the later
        # wording prints in its own words (`Last enqueued NCCL work: 5, last completed NCCL work: 4.`)
        m = _WORK_STATUS.search(f["details"])
        if m:
            f.setdefault("last_enqueued", int(m.group(1)))
            f.setdefault("last_completed", int(m.group(2)))
