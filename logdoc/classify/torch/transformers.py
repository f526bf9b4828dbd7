"""The Lark transformers of the structured PyTorch formats and the readers built on them: the
ProcessGroup prefix (``grammars/torch_prefix.lark``), ProcessGroupNCCL's WorkNCCL watchdog records,
desync report and monitored barrier (``torch.lark``), ``NCCL error in: ...`` (``torch_nccl_error.lark``)
and the collective-fingerprint mismatch of ProcessGroupWrapper (``torch_mismatch.lark``)."""
from __future__ import annotations

from typing import Any

from ...grammar import LazyTransformer, Parsed
from .common import UNREAD, Read, cause, read
from ...kb.versions import nccl_release

# ncclGetErrorString text -> ncclResult name (for async errors printed without the interpretation).
NCCL_STRINGS = {
    "unhandled cuda error": "ncclUnhandledCudaError", "unhandled system error": "ncclSystemError",
    "internal error": "ncclInternalError", "invalid argument": "ncclInvalidArgument",
    "invalid usage": "ncclInvalidUsage", "remote process exited or there was a network error": "ncclRemoteError",
    "NCCL operation in progress": "ncclInProgress",
    "system error": "ncclSystemError",  # NCCL 1.x's text (src/core.cu ncclGetErrorString; 2.x added `unhandled`)
}
_LOWER = {k.lower(): v for k, v in NCCL_STRINGS.items()}
_CUT_HEAD = 8  # characters of a text's head that name it (as logdoc.cuttail.MIN_PREFIX)


def nccl_result_of(error_string: str, ends: bool = False) -> str | None:
    """The ncclResult whose ncclGetErrorString text ``error_string`` starts with; a text one or two
    letters off (a typo or a damaged paste: `unhanled system error`) is that same text, as long as
    no other of these texts is as close. When the message ``ends`` with the text (a viewer's width cut
    it there: `NCCL error: unhandled sys`), a head of one text only, of at least _CUT_HEAD characters,
    is that text."""
    low = error_string.lower()  # the same words in any capitals (`unhandled CUDA error`, retyped or a fork's)
    for k, v in _LOWER.items():
        if low.startswith(k):
            return v
    if ends and len(error_string) >= _CUT_HEAD:
        heads = {v for k, v in NCCL_STRINGS.items() if k.startswith(error_string)}
        if len(heads) == 1:
            return heads.pop()
    from difflib import SequenceMatcher  # (only for a text that is none of them)
    close = []
    for k, v in NCCL_STRINGS.items():
        words = " ".join(error_string.split()[:len(k.split())])
        if abs(len(words) - len(k)) <= 2 and SequenceMatcher(None, words, k).ratio() >= 0.9:
            close.append(v)
    return close[0] if len(close) == 1 else None


# The catalog rows (grammars/torch_templates.tsv) of the messages the grammars read: an event carries
# its row's id as its template, whichever release's wording it was printed in (1.x's WorkNCCL without
# SeqNum or NumelIn, the `NCCL watchdog thread` of <= 2.2, a record wrapped by a paste), so rules,
# annotations and the coverage tool see the same message as the catalog.
_PGNCCL = "torch:ProcessGroupNCCL:"
_PGGLOO = "torch:ProcessGroupGloo:"
WATCHDOG_TIMEOUT_ID = _PGNCCL + "watchdog-caught-collective-operation-timeout-worknccl-seqnum"
DESYNC_REPORT_ID = _PGNCCL + "rank"
MISMATCH_ID = "torch:ProcessGroupWrapper:detected-mismatch-between-collectives-on-ranks-rank"


class PrefixT:
    def p_rank(self, c):
        return {"pg_rank": int(c[0]), "pg_prefix": "rank"}

    def p_pg(self, c):
        out = {"pg_id": int(c[0]), "pg_rank": int(c[-1]), "pg_prefix": "pg"}
        if len(c) > 2 and isinstance(c[1], dict) and c[1].get("pg_desc"):
            out["pg_desc"] = c[1]["pg_desc"]
        return out

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


class _TorchT:
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
        return "torch.watchdog_timeout", WATCHDOG_TIMEOUT_ID, "ERROR", {**c[0], "elapsed_ms": c[1]}

    def blocking_wait_timeout(self, c):
        return "torch.watchdog_timeout", _PGNCCL + "work-worknccl-seqnum-optype-numelin-numelout-timeout", "ERROR", {**c[0], "blocking_wait": True}

    def async_exception(self, c):
        f = dict(c[0])
        if len(c) > 1:
            f["exception"] = c[1]
        return "torch.async_exception", _PGNCCL + "collective-worknccl-seqnum-optype-numelin-numelout-timeout", "ERROR", f

    def async_exception_old(self, c):
        return "torch.async_exception", _PGNCCL + "found-async-exception-when-checking-for-nccl", "INFO", {"exception": c[0] if c else ""}

    def pg_status(self, c):
        return {"last_enqueued": c[0], "last_completed": c[1]}

    def watchdog_failure(self, c):
        f = {"seq": c[0]}
        if len(c) > 1:
            f.update(c[1])
        return "torch.watchdog_failure", _PGNCCL + "failure-detected-by-watchdog-at-work-sequence", "ERROR", f

    def nccl_status(self, c):
        return {"last_enqueued": c[0], "last_completed": c[1]}

    def watchdog_timeout_status(self, c):
        kind, tid, level, f = self.watchdog_failure(c)
        return kind, tid, level, {**f, "timed_out": True}

    def work_progress(self, c):
        return "torch.work_progress", _PGNCCL + "nccl-work-update-periodically-last-enqueued-nccl", "INFO", {"last_enqueued": c[0], "last_completed": c[1]}

    def thread_exception(self, c):
        exc = c[1] if len(c) > 1 else ""
        if str(c[0]) == "NCCL":  # the wording up to 2.2
            tid = _PGNCCL + "nccl-watchdog-thread-terminated-with-exception"
        elif exc == "unknown":  # catch (...): an exception of no std type
            tid = _PGNCCL + "process-group-watchdog-thread-terminated-with-exception-2"
        else:
            tid = _PGNCCL + "process-group-watchdog-thread-terminated-with-exception"
        return "torch.watchdog_failure", tid, "ERROR", {"thread_died": True, "exception": exc}

    def int_seq(self, c):
        return list(c)

    def original_exception(self, c):
        return {"original_exception": c[0] if c else ""}

    def monitored_barrier(self, c):
        c = [x for x in c if x is not None]
        f = {"failed_ranks": c[0], "timeout_ms": c[1]}
        if len(c) > 2:
            f.update(c[2])
        if len(c[0]) != 1:
            tid = _PGGLOO + "ranks-failed-to-pass-monitoredbarrier-in-ms"
        elif len(c) > 2:  # the thrown form, `\n Original exception: \n<gloo error>`
            tid = _PGGLOO + "rank-failed-to-pass-monitoredbarrier-in-ms-2"
        else:
            tid = _PGGLOO + "rank-failed-to-pass-monitoredbarrier-in-ms"
        return "torch.monitored_barrier", tid, "ERROR", f

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
        return "torch.desync_report", DESYNC_REPORT_ID, "ERROR", f

    def start(self, c):
        if isinstance(c[0], dict):  # a bare WorkNCCL(...) record
            return "torch.message", "torch.worknccl", "ERROR", c[0]
        return c[0]


class _NcclErrorT:
    def version(self, c):
        return ("nccl_version", nccl_release(str(c[0])))

    def version_cut(self, c):
        return None

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
        ends = False
        if items and getattr(items[0], "type", None) == "ERRSTR":  # a token (a rule's result has no type)
            f["error_string"] = str(items.pop(0)).strip()
            ends = not items
        for key, val in filter(None, items):
            f[key] = val
        interp = f.get("interpretation")
        if interp and interp.startswith("nccl"):
            f["nccl_result"] = interp.split(":", 1)[0]
        else:
            result = nccl_result_of(f.get("error_string", ""), ends)
            if result:
                f["nccl_result"] = result
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


class _MismatchT:
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
        return "torch.collective_mismatch", MISMATCH_ID, f

    def wrapper_barrier(self, c):
        f: dict[str, Any] = {"fingerprint": c[0], "seq": c[0]["seq"], "op_type": c[0]["op_type"], "detail": True}
        if len(c) > 1:
            f["error"] = str(c[1]).strip()
        return ("torch.monitored_barrier",
                "torch:ProcessGroupWrapper:processgroupwrapper-monitored-barrier-encountered-error-running-collective", f)

    def start(self, c):
        return c[0]


# One instance of each (stateless) transformer: the grammar's cache keeps a compiled plan per
# shape and transformer instance (logdoc.grammar.CachedParser.transform). The classes above are
# their callbacks; each Lark Transformer is made on first use (logdoc.grammar.LazyTransformer).
PREFIX_T = LazyTransformer(PrefixT)
_TORCH_T = LazyTransformer(_TorchT)
_NCCL_ERROR_T = LazyTransformer(_NcclErrorT)
_MISMATCH_T = LazyTransformer(_MismatchT)


def torch_body(body: str) -> tuple[str, str, str, dict] | None:
    got = read("torch", body, _TORCH_T)
    return None if got is UNREAD else got


def nccl_error(text: str) -> Parsed | None:
    got = read("torch_nccl_error", text, _NCCL_ERROR_T)
    if got is UNREAD:
        return None
    tid, fields = got
    return Parsed("torch.nccl_error", "ERROR", tid, fields)


def mismatch(text: str, read_message: Read) -> Parsed | None:
    got = read("torch_mismatch", text, _MISMATCH_T)
    if got is UNREAD:
        return None
    kind, tid, fields = got
    err = fields.get("error")
    if err:
        inner = read_message(err, None)
        if inner is not None:
            fields["cause"] = cause(inner)
    return Parsed(kind, "ERROR", tid, fields)
