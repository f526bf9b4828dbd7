"""NCCL lines: the ``host:pid:tid [dev] NCCL LEVEL`` header, then the message.

The header is found anywhere in the line, so an unknown prefix cannot hide an NCCL line. The
message is read by ``grammars/nccl.lark`` when it is one of the structured init and topology lines,
and recognised against NCCL's message catalog (:mod:`logdoc.templates`) otherwise.

Layouts by version (``shared/reference/nccl-log-format.md``):

* INFO   ``host:pid:tid [dev] NCCL INFO msg``
* WARN   ``host:pid:tid [dev] file.cc:line NCCL WARN msg``; from 2.26 a ``[YYYY-MM-DD HH:MM:SS] `` stamp
  before it, from 2.30.7 ``file.cc:line (function)``
* TRACE  ``host:pid:tid [dev] 12.345 function:line NCCL TRACE msg``
* CALL   ``host:pid:tid NCCL CALL msg``
* VERSION the banner ``NCCL version 2.21.5+cuda12.4``, bare or as an INFO line
"""
from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer
from lark.exceptions import LarkError

from .envelope import has_huge_number
from .events import Envelope
from .grammar import Parsed, fastpath_enabled, parser
from .templates import nccl_catalog

HEADER = re.compile(
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\] )?"
    # The host starts where a run of host characters starts: without the look-behind, a search
    # over a long line rescans the rest of the run from every position (quadratic time). The
    # leftmost match is the same either way.
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?:(?P<pid>\d+|[Xx*#?]+|<[\w-]+>):(?P<tid>\d+|[Xx*#?]+|<[\w-]+>)|(?P<mpid>[Xx*#?]{3,}|<[\w-]+>)) "
    r"(?:\[(?P<dev>-?\d+)\] )?"
    r"(?:(?P<ms>\d+\.\d+) (?P<tfunc>[^\s:]+):(?P<tline>\d+) )?"
    r"(?:(?P<loc>[\w./+-]+:\d+)(?: \((?P<func>[^()\s]*)\))? )?"
    r"NCCL (?P<level>INFO|WARN|TRACE|CALL)(?: |$)"
)
# The header cut or left out (a paste that lost the start of the line, a logger that prints NCCL's
# text under its own prefix, an exception that quotes the line): what is left of it before
# `NCCL WARN` / `NCCL INFO`, on the first line of the text, after a blank, a bracket or the start.
HEADLESS = re.compile(
    r"(?:^|(?<=[\s\]:|]))(?:\[(?P<dev>-?\d+)\] )?"
    r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+)(?: \((?P<func>[^()\s]*)\))? )?"
    r"NCCL (?P<level>INFO|WARN)(?: |$)"
)
# NCCL before 2.3 printed the level without the word NCCL: `host:pid:tid [0] INFO Ring 00 : ...`,
# `host:pid:tid [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]`.
OLD_HEADER = re.compile(
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\] "
    r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+) )?(?P<level>INFO|WARN) "
)
_MASKED = re.compile(r"[Xx*#?]+|<[\w-]+>")

# The bare banner (<= 2.21 printf, or the VERSION level): the whole message, nothing else. A
# torch error that quotes "NCCL version 2.x" mid-text is not a banner.
BANNER = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+\S*)\s*$")

RESULT_NAMES = {
    0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
    4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress",
    8: "ncclTimeout",
}

_LEVEL = {"INFO": "INFO", "WARN": "WARN", "TRACE": "TRACE", "CALL": "TRACE"}
_KIND = {"INFO": "nccl.info", "WARN": "nccl.warn", "TRACE": "nccl.trace_level", "CALL": "nccl.call"}
_IFACE = re.compile(r"\[(?P<index>\d+)\](?P<name>[^:]+):(?P<addr>.+)<(?P<port>\d+)>$")
_IBDEV = re.compile(r"\[(?P<index>\d+)\](?P<name>[^:]+):(?P<port>\d+)(?::[^/]*)?/(?P<link>\w+)$")
_OOB = re.compile(r"(?P<name>[^:]+):(?P<addr>.+)<(?P<port>\d+)>$")


def _int(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


class _Fields(Transformer):
    """Turn a tree of ``grammars/nccl.lark`` into ``(kind, fields)``."""

    def backtrace(self, items: list[Token]) -> tuple[str, dict]:
        f: dict[str, Any] = {}
        for tok in items:
            t = tok.type
            if t == "LOCATION":
                f["code_location"] = str(tok)
            elif t == "FUNC":
                f["function"] = tok[1:-1]
            elif t == "SIGNED":
                f["code"] = int(tok)
                f["code_name"] = RESULT_NAMES.get(int(tok))
            elif t == "ERRTEXT":
                f["errno_text"] = tok[1:-1]
            elif t == "THREAD":
                f["thread"] = tok[1:-1]
        return "nccl.trace", f

    def pair(self, items: list[Token]) -> tuple[str, str]:
        return str(items[0]), str(items[1])

    def tail(self, items: list[Token]) -> tuple[str, str]:
        return str(items[0]), str(items[1])

    _COMM_KEYS = {"rank": "rank", "nranks": "nranks", "nRanks": "nranks", "cudaDev": "cuda_dev",
                  "nvmlDev": "nvml_dev", "busId": "bus_id", "commId": "comm_id", "parent": "parent",
                  "color": "color", "key": "key", "nNodes": "nnodes", "localRanks": "local_ranks",
                  "localRank": "local_rank", "MNNVL": "mnnvl", "splitCount": "split_count",
                  "childCount": "child_count", "localSize": "local_size"}
    _STR_KEYS = {"bus_id", "comm_id", "parent"}

    def comm(self, items: list) -> tuple[str, dict] | None:
        f: dict[str, Any] = {}
        words = []
        phase = None
        for it in items:
            if isinstance(it, Token):
                if it.type == "RANKTAG":
                    f["rank_tag"] = int(it[6:-1])
                elif it.type == "KEY":
                    words.append(str(it))
                elif it.type == "HEX":
                    f["comm"] = str(it)
            elif it[0] == "Init":
                phase = it[1]
            else:
                key = self._COMM_KEYS.get(it[0].rstrip("-"))
                val = it[1].rstrip("-")
                if key:
                    f[key] = val if key in self._STR_KEYS else _int(val)
        if not words or words[-1] != "comm":
            return None
        if len(words) > 1:
            f["func"] = words[-2]
        if phase in ("START", "COMPLETE"):
            f["phase"] = phase
            return "nccl.comm_init", f
        if "nnodes" in f:
            return "nccl.comm_info", f
        return None

    def ring(self, items: list[Token]) -> dict:
        return {"ranks": [int(t) for t in items if t.type == "INT"], "truncated": any(t.type == "ELLIPSIS" for t in items)}

    def conn(self, items: list[Token]) -> dict:
        ints = [t for t in items if t.type == "INT"]
        devs = [t for t in items if t.type == "PEERDEV"]
        transport = next(str(t) for t in items if t.type == "TRANSPORT")
        direction = next((t[1:-1] for t in items if t.type == "DIRECTION"), None)
        net = None
        if transport.startswith("NET/"):
            net = transport.split("/")[1]
        return {"src_rank": int(ints[0]), "src_dev": str(devs[0]), "dst_rank": int(ints[1]),
                "dst_dev": str(devs[1]), "direction": direction, "transport": transport, "net": net,
                "gdr": "GDRDMA" in transport}

    def channel(self, items: list) -> tuple[str, dict]:
        nums = [int(t) for t in items if isinstance(t, Token) and t.type == "INT"]
        body = items[-1]
        second = nums[1] if len(nums) > 1 else None
        if "transport" in body:  # `Channel 00/1 :` on a connection line is the connection index
            f = {"channel": nums[0], "conn_index": second, **body}
            return "nccl.connection", f
        return "nccl.channel", {"channel": nums[0], "nchannels": second, **body}

    def net_socket(self, items: list[Token]) -> tuple[str, dict]:
        ifaces = []
        for t in items:
            m = _IFACE.match(t)
            if m:
                ifaces.append({"index": int(m["index"]), "name": m["name"], "addr": m["addr"], "port": int(m["port"])})
        return "nccl.net_socket", {"interfaces": ifaces}

    def net_ib(self, items: list[Token]) -> tuple[str, dict]:
        devs = []
        f: dict[str, Any] = {"relaxed_ordering": False}
        for t in items:
            if t.type == "IBDEV":
                m = _IBDEV.match(t)
                if m:
                    devs.append({"index": int(m["index"]), "name": m["name"], "port": int(m["port"]), "link": m["link"]})
            elif t.type == "RELAXED":
                f["relaxed_ordering"] = True
            elif t.type == "OOBIF":
                m = _OOB.match(t)
                if m:
                    f["oob_if"], f["oob_addr"] = m["name"], m["addr"]
        f["devices"] = devs
        return "nccl.net_ib", f

    def bootstrap(self, items: list[Token]) -> tuple[str, dict]:
        text = str(items[-1])
        m = _OOB.match(text)
        if m:
            return "nccl.bootstrap", {"name": m["name"], "addr": m["addr"]}
        name, _, rest = text.partition(":")
        return "nccl.bootstrap", {"name": name, "addr": rest}

    def using_network(self, items: list[Token]) -> tuple[str, dict]:
        return "nccl.using_network", {"network": str(items[-1])}

    def env_set(self, items: list[Token]) -> tuple[str, dict]:
        name = str(items[0])
        val = next((str(t) for t in items if t.type == "ENVVAL"), "")
        if val.endswith(".") and val[:-1].lstrip("-").isdigit():
            val = val[:-1]
        return "nccl.env", {"name": name, "value": val, "from_environment": any(t.type == "BY" for t in items)}

    def connected(self, items: list[Token]) -> tuple[str, dict]:
        f: dict[str, Any] = {"what": str(items[0])}
        if len(items) > 1:
            words = str(items[1]).split()
            for k, v in zip(words, words[1:]):
                if k in ("PXN", "GDR") and v.isdigit():
                    f[k.lower()] = int(v)
        return "nccl.connected_all_rings" if f["what"] == "rings" else "nccl.connected_all", f

    def version(self, items: list[Token]) -> tuple[str, dict]:
        return "nccl.version", split_version(str(items[0]))


_TRANSFORMER = _Fields(visit_tokens=False)  # the callbacks read tokens themselves


def split_version(text: str) -> dict:
    ver, _, cuda = text.partition("+cuda")
    m = re.match(r"(\d+\.\d+\.\d+)(.*)", ver)
    return {"version": m.group(1) if m else ver, "suffix": (m.group(2) if m else "") or None, "cuda": cuda or None}


def _family(msg: str) -> str | None:
    """Which start symbol of ``grammars/nccl.lark`` can read this message, by its first words."""
    c = msg[:1]
    if c == "C":
        if msg.startswith("Channel "):
            return "channel"
        if msg.startswith("Connected all "):
            return "connected"
    elif c == "N":
        if msg.startswith("NET/Socket : Using ["):
            return "net_socket"
        if msg.startswith("NET/IB : Using ["):
            return "net_ib"
        if msg.startswith("NCCL version "):
            return "version"
        if msg.startswith("NCCL_") and (" set by environment to" in msg or " set to " in msg and msg.count(" ") == 3):
            return "env_set"
    elif c == "B":
        if msg.startswith("Bootstrap") and "Using" in msg[:20]:
            return "bootstrap"
    elif c == "U":
        if msg.startswith("Using network "):
            return "using_network"
    return _family_rest(msg)


def _family_rest(msg: str) -> str | None:
    """``_family`` of a message whose first character is not C, N, B or U."""
    if msg.startswith("comm 0x"):
        return "comm"
    return _family_comm_arrow(msg) if ":" in msg.split(" ", 1)[0] else _family_comm(msg)


def _family_comm(msg: str) -> str | None:
    at = msg.find(" comm 0x")
    if at > 0 and msg.count(" ", 0, at) <= 2:  # `[Rank 0] ncclCommInitRank comm 0x...`, not `AllReduce: ... comm 0x...`
        return "comm"
    return None


def _family_comm_arrow(msg: str) -> str | None:
    """_family_comm, then a backtrace `file:line -> N` (for a first word with a colon)."""
    at = msg.find(" comm 0x")
    if at > 0 and msg.count(" ", 0, at) <= 2:
        return "comm"
    return "backtrace" if " -> " in msg else None


def family_for(word: str):
    """A function equal to :func:`_family` on every message whose first word (``msg.split(" ",
    1)[0]``) is ``word``, doing only the checks that word leaves open."""
    if word[:1] in ("C", "N", "B", "U") or word == "comm":
        return _family
    if ":" in word:  # the first character leads to _family_rest, which does not start with "comm 0x"
        return _family_comm_arrow
    return _family_comm


_MEMO: dict[str, tuple[str, dict, bool] | None] = {}  # exact message -> what read_message gave (fast path)
MAX_MEMO = 16384


def _copy_fields(f: dict) -> dict:
    out = dict(f)
    for k, v in out.items():
        if isinstance(v, list):
            out[k] = [dict(x) if isinstance(x, dict) else x for x in v]
    return out


def _is_flat(f: dict) -> bool:
    return not any(isinstance(v, (list, dict)) for v in f.values())


def read_message(msg: str) -> tuple[str, dict] | None:
    """Parse a structured NCCL message with the grammar; None when it is not one of them."""
    family = _family(msg)
    if family is None:
        return None
    memo = fastpath_enabled()
    if memo:
        hit = _MEMO.get(msg, _NO)
        if hit is not _NO:
            if hit is None:
                return None
            return hit[0], (dict(hit[1]) if hit[2] else _copy_fields(hit[1]))
    try:
        out = parser("nccl", start=family).transform(msg.strip(), _TRANSFORMER)
    except LarkError:
        out = None
    if memo and (out is None or isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict)):
        if len(_MEMO) >= MAX_MEMO:
            _MEMO.clear()
        _MEMO[msg] = None if out is None else (out[0], _copy_fields(out[1]), _is_flat(out[1]))
    return out


_NO = object()


def _num(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None  # a pid masked with X letters is not a number


def classify(text: str, env: Envelope) -> Parsed | None:
    """An NCCL line, or None. Fills ``env.host``/``env.pid`` and time from the header.

    The header may be whole (``host:pid:tid [dev] file.cc:line NCCL WARN``), masked (X letters
    for the pid), or cut down to what follows the host (``file.cc:line NCCL WARN``, ``NCCL INFO``:
    :data:`HEADLESS`, on the first line of the text only)."""
    if "NCCL" not in text:
        if (" WARN " not in text and " INFO " not in text) or has_huge_number(text):
            return None
        h = OLD_HEADER.search(text)
        return _from_header(h, text, env, False) if h is not None else None
    if has_huge_number(text):
        return None
    h = HEADER.search(text) if " NCCL " in text or text.endswith(" NCCL") or "NCCL INFO" in text or "NCCL WARN" in text else None
    headless = False
    if h is None and ("NCCL WARN" in text or "NCCL INFO" in text):
        nl = text.find("\n")
        h = HEADLESS.search(text, 0, nl if nl >= 0 else len(text))
        if h is not None and nl >= 0 and h.end() >= nl:
            h = None  # the level word ends the line: nothing of the message is on it
        headless = h is not None
    if h is None:
        b = BANNER.match(text.strip())
        if b is None:
            return None
        return Parsed("nccl.version", "INFO", "nccl.version", split_version(b["v"]))
    return _from_header(h, text, env, headless)


def _from_header(h: re.Match, text: str, env: Envelope, headless: bool) -> Parsed:
    level_word = h["level"]
    msg = text[h.end():]
    fields: dict[str, Any] = {}
    if headless:
        fields["header"] = "cut"
    else:
        groups = h.re.groupindex
        tid = _num(h["tid"])
        if tid is not None:
            fields["tid"] = tid
        if "tfunc" in groups and h["tfunc"]:
            fields["trace_function"] = f"{h['tfunc']}:{h['tline']}"
        env.host = h["host"] if h["host"] else env.host
        pid = _num(h["pid"] or (h["mpid"] if "mpid" in groups else None))
        if pid is None:
            fields["header"] = "masked"
        else:
            env.pid = pid
        if "ts" in groups and h["ts"]:
            env.time = h["ts"].replace(" ", "T")
        if h.re is OLD_HEADER:
            fields["header"] = "old"
    if h["dev"] is not None:
        fields["dev"] = int(h["dev"])
    if h["loc"]:
        fields["code_location"] = h["loc"]
    if "func" in h.re.groupindex and h["func"]:
        fields["function"] = h["func"]
    if h.start() > 0:
        fields["prefix"] = text[: h.start()].rstrip()
    fields["message"] = msg
    level = _LEVEL[level_word]
    kind = _KIND[level_word]
    template = None
    if level_word in ("INFO", "WARN"):
        read = read_message(msg)
        if read is not None:
            kind, extra = read
            fields.update(extra)
            template = kind
    if template is None or kind in ("nccl.trace",) and level_word == "WARN":
        hit = nccl_catalog().match(msg)
        if msg.startswith("NET/") and (hit is None or hit[0].specificity < BARE_MIN_LITERAL):
            hit = match_net_variant(msg, fields) or hit
        if hit is not None:
            tpl, args = hit
            template = template or tpl.id
            fields["args"] = list(args)
            fields["format"] = tpl.format
            if tpl.where and "code_location" not in fields and level_word == "WARN":
                fields["catalog_location"] = tpl.where
    if kind == "nccl.trace" and level_word == "WARN":
        kind = "nccl.warn"
    return Parsed(kind, level, template, fields)


# A bare message (no header at all) is taken for NCCL's only when a catalog format that NCCL prints
# as a WARN reads it whole and says enough: its literal text (format without conversions) is at
# least this long, or it starts with a literal word (``Duplicate GPU detected : rank %d ...``).
BARE_MIN_LITERAL = 24
_BARE_HEAD = re.compile(r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+) )?WARN ")
BARE_MIN_LED = 12


# nccl-tests' own lines (NVIDIA/nccl-tests src/common.h, common.cu, util.cu, every release):
# CUDACHECK / NCCLCHECK failures, `# Out of bounds values : N FAILED|OK`, `# Avg bus bandwidth : X`,
# `# NCCL Tests compiled with NCCL M.m` (2017-2019; `1.0` stands for any NCCL 1.x) and
# `# nccl-tests version V nccl-headers=CODE nccl-library=CODE` (2025-).
# The NCCL user guide's examples print the same checks as `Failed, NCCL error file:line 'error'` and
# `Failed: Cuda error file:line 'error'` (their NCCLCHECK / CUDACHECK macros, copied into many
# programs, which keep the wording and put their own source paths in it); a paste may lose the closing quote.
_TESTS_NCCL_FAILURE = re.compile(
    r"^(?:(?P<host>[^\s:']+): )?(?:(?:Test )?NCCL failure|Failed, NCCL error) (?P<loc>[\w./+-]+:\d+) "
    r"'(?P<error>[^'/]*?)(?: / (?P<last>[^']*))?(?:'|$)")
_TESTS_CUDA_FAILURE = re.compile(
    r"^(?:(?P<host>[^\s:']+): )?(?:Cuda failure|Failed: Cuda error) (?P<loc>[\w./+-]+:\d+) '(?P<error>[^']*)(?:'|$)")
# nccl-tests' device list (rank 0 prints one line per rank of the whole run, src/common.cu):
# `#  Rank  0 Group  0 Pid  70918 on node1 device  0 [0x01] NVIDIA A100-SXM4-80GB`
_TESTS_DEVICE = re.compile(r"^#\s*Rank\s+(?P<rank>\d+) Group\s+(?P<group>\d+) Pid\s+(?P<pid>\d+) on\s+(?P<host>\S+)\s+device\s+"
                           r"(?P<device>\d+) \[(?P<bus>0x[0-9a-fA-F]+)\]\s*(?P<gpu>.*?)\s*$")
# nccl-tests' result rows (src/common.cu): size, count, type, [redop, [root,]] then per placement (out of place,
# in place) time, algbw, busbw and the check: the largest absolute error as `%6.0e` (2017-2021) or the
# number of wrong values, `#wrong` (2022-); `N/A` where the test skips the check.
_TESTS_ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<dtype>[a-z][a-z0-9_]*)\s+(?:(?P<redop>sum|prod|max|min|avg|none|"
    r"mulsum|premulsum)\s+)?(?:(?P<root>-?\d+)\s+)?(?P<t1>\d+(?:\.\d+)?)\s+(?P<alg1>\d+\.\d+|N/A)\s+"
    r"(?P<bus1>\d+\.\d+|N/A)\s+(?P<err1>\d(?:\.\d+)?e[+-]\d+|\d+|N/A)\s+(?P<t2>\d+(?:\.\d+)?)\s+"
    r"(?P<alg2>\d+\.\d+|N/A)\s+(?P<bus2>\d+\.\d+|N/A)\s+(?P<err2>\d(?:\.\d+)?e[+-]\d+|\d+|N/A)\s*$")


def _tests_error(text: str) -> float | None:
    return None if text == "N/A" else float(text)


_TESTS_CHECK = re.compile(r"^#?\s*Out of bounds values\s*:\s*(?P<wrong>\d+)\s+(?P<verdict>OK|FAILED)\b")
_TESTS_BUSBW = re.compile(r"^#?\s*Avg bus bandwidth\s*:\s*(?P<busbw>[-+\d.eE]+|nan|inf)\s*(?P<verdict>OK|FAILED)?\s*$")
_TESTS_COMPILED = re.compile(r"^#\s*NCCL Tests compiled with NCCL (?P<v>\d+\.\d+)\s*$")
_TESTS_VERSION = re.compile(r"^#\s*nccl-tests version (?P<tests>\S+) nccl-headers=(?P<headers>\d+) nccl-library=(?P<library>\d+)")
# NCCL 1.x printed `WARN file:line msg` (the location after the level: src/core.h's WARN macro);
# NCCL 2.0-2.2 put it before (`misc/ibvwrap.cu:60 WARN ...`, :data:`_BARE_HEAD`).
_NCCL1_WARN = re.compile(r"^WARN (?P<loc>(?:src/)?[\w./+-]+\.(?:cu|h|cc|cpp):\d+) (?P<msg>\S.*)$")


# An ibverbs call that failed, as RDMA libraries other than NCCL print it (UCX `uct/ib`,
# `ucs_error("ibv_create_cq(cqe=%d) failed: %m")`; rdma-core users `mlx5_0: ibv_create_cq() failed: ...`):
# no NCCL header, the verbs call and the errno text.
_VERBS_FAILED = re.compile(
    r"^(?:\[[^\]]*\]\s*)*(?:[\w./-]+\.c\w*:\d+\s+)?(?:(?P<lib>UCX|ucx)\s+)?(?:ERROR|WARN|error)?:?\s*(?:(?P<dev>[\w-]+):\s+)?"
    r"(?P<call>ibv_\w+|mlx5dv_\w+|rdma_\w+)\((?P<args>[^()]*)\)\s+failed:\s+(?P<errno_text>[A-Za-z][^.]*?)\.?\s*$")


def classify_verbs(line: str) -> Parsed | None:
    """A failed ibverbs call printed by an RDMA library other than NCCL (UCX, rdma-core users):
    ``verbs.error``, or None."""
    if "ibv_" not in line and "mlx5dv_" not in line and "rdma_" not in line:
        return None
    m = _VERBS_FAILED.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"call": m["call"], "errno_text": m["errno_text"].strip()}
    if m["dev"]:
        f["device"] = m["dev"]
    if m["lib"]:
        f["library"] = "UCX"
    if m["args"]:
        f["call_args"] = m["args"]
    return Parsed("verbs.error", "ERROR", "verbs.error", f)


def _code_version(code: str) -> str:
    """NCCL_VERSION_CODE as printed (22703, or 2403 before 2.9) as `2.27.3`."""
    n = int(code)
    if n >= 10000:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def classify_tests(line: str) -> Parsed | None:
    """A line that nccl-tests prints itself (its failure checks, its verdict lines, the NCCL it was
    built with), or an NCCL 1.x WARN line; None otherwise."""
    if "NCCL failure" in line or "NCCL error" in line:
        m = _TESTS_NCCL_FAILURE.match(line)
        if m is not None:
            f: dict[str, Any] = {"source_location": m["loc"], "error": m["error"].strip()}
            if m["last"] is not None and m["last"].strip():
                f["last_error"] = m["last"].strip()
            if m["host"]:
                f["host"] = m["host"]
            return Parsed("nccltests.nccl_failure", "ERROR", "nccltests.nccl_failure", f)
    if "Cuda failure" in line or "Cuda error" in line:
        m = _TESTS_CUDA_FAILURE.match(line)
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"source_location": m["loc"], "error": m["error"].strip()})
    if " Group " in line and "device" in line:
        m = _TESTS_DEVICE.match(line)
        if m is not None:
            return Parsed("nccltests.device", "INFO", "nccltests.device",
                          {"test_rank": int(m["rank"]), "group": int(m["group"]), "test_pid": int(m["pid"]),
                           "test_host": m["host"], "device": int(m["device"]), "bus": m["bus"], "gpu": m["gpu"]})
    if line[:1].isdigit() and "." in line:
        m = _TESTS_ROW.match(line)
        if m is not None:
            errs = [e for e in (_tests_error(m["err1"]), _tests_error(m["err2"])) if e is not None]
            f = {"size": int(m["size"]), "count": int(m["count"]), "dtype": m["dtype"],
                 "wrong": any(e > 0 for e in errs)}
            if m["redop"]:
                f["redop"] = m["redop"]
            return Parsed("nccltests.row", "INFO", "nccltests.row", f)
    if "Out of bounds" in line:
        m = _TESTS_CHECK.match(line)
        if m is not None:
            return Parsed("nccltests.check", "ERROR" if m["verdict"] == "FAILED" else "INFO", "nccltests.check",
                          {"wrong": int(m["wrong"]), "verdict": m["verdict"]})
    if "bus bandwidth" in line:
        m = _TESTS_BUSBW.match(line)
        if m is not None:
            f = {"busbw": m["busbw"]}
            if m["verdict"]:
                f["verdict"] = m["verdict"]
            return Parsed("nccltests.bandwidth", "INFO", "nccltests.bandwidth", f)
    if "compiled with NCCL" in line:
        m = _TESTS_COMPILED.match(line)
        if m is not None:
            return Parsed("nccl.version", "INFO", "nccl.version",
                          {"version": m["v"], "suffix": "nccl-tests build"})
    if "nccl-tests version" in line:
        m = _TESTS_VERSION.match(line)
        if m is not None:
            headers, library = _code_version(m["headers"]), _code_version(m["library"])
            return Parsed("nccltests.version", "INFO", "nccltests.version",
                          {"tests_version": m["tests"], "headers": headers, "library": library,
                           "same_release": headers.rsplit(".", 1)[0] == library.rsplit(".", 1)[0]})
    if line.startswith("WARN "):
        m = _NCCL1_WARN.match(line)
        if m is not None:
            return Parsed("nccl.warn", "WARN", "nccl.warn",
                          {"header": "nccl1", "code_location": m["loc"], "message": m["msg"]})
    return None


def classify_bare(text: str) -> Parsed | None:
    """:func:`_classify_bare`, and when no NCCL message reads the line, a failed ibverbs call
    printed by another RDMA library (:func:`classify_verbs`), or a CUDA runtime error text standing
    alone (:func:`classify_cuda_text`)."""
    parsed = _classify_bare(text)
    if parsed is None and ("ibv_" in text or "mlx5dv_" in text or "rdma_" in text):
        parsed = classify_verbs(text.split("\n", 1)[0].strip())
    if parsed is None:
        first = text.split("\n", 1)[0].strip()
        parsed = classify_cuda_text(first)
        if parsed is None and "Caught signal" in first:
            parsed = classify_caught_signal(first)
        if parsed is None and "distributed_c10d.py:" in first:
            parsed = classify_stack_frame(first)
        if parsed is None and "exceeds memory available in" in first:
            parsed = classify_ray_store(first)
        if parsed is None and ("envoy" in first or "][source/" in first or "] [source/" in first):
            parsed = classify_envoy(first)
    return parsed


# Ray's object store (raylet, store_runner.cc) asks /dev/shm for its size at start and warns when /dev/shm
# holds less: `System memory request exceeds memory available in /dev/shm. The request is for N bytes, and
# the amount available is M bytes.` (it then shrinks the store to what is there).
_RAY_STORE_SHM = re.compile(r"System memory request exceeds memory available in (?P<dir>\S+?)\.?\s+The request is for "
                            r"(?P<requested>\d+) bytes, and the amount available is (?P<available>\d+) bytes")


def classify_ray_store(line: str) -> Parsed | None:
    """``ray.store_shm`` for the raylet's /dev/shm warning; None otherwise."""
    m = _RAY_STORE_SHM.search(line)
    if m is None:
        return None
    return Parsed("ray.store_shm", "WARN", "ray.store_shm",
                  {"dir": m["dir"], "requested": int(m["requested"]), "available": int(m["available"])})


# Envoy's own log (the Istio sidecar `istio-proxy` of a pod, and Envoy alone): the Istio format
# `2022-07-19T18:01:59.173713Z<TAB>debug<TAB>envoy connection<TAB>[C72] remote early close` and Envoy's default
# `[2022-07-19 18:01:59.173][23][debug][connection] [source/common/network/connection_impl.cc:133] [C72] ...`.
# Where such lines are in a training job's logs, a proxy stands between its processes and the network.
_ENVOY_ISTIO = re.compile(r"^(?:\S*\d\d:\d\d:\d\d(?:\.\d+)?Z?\t)?(?P<level>[a-z]+)\tenvoy (?P<logger>[\w.]+)\t(?P<msg>.*)$")
_ENVOY_DEFAULT = re.compile(r"^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.\d]*\]\[\d+\]\[(?P<level>[a-z]+)\]\[(?P<logger>[\w.]+)\] "
                            r"\[[^\]]*(?:envoy|source/(?:common|server|extensions))[^\]]*\] (?P<msg>.*)$")
_ENVOY_PORT = re.compile(r"\b(?:inbound|outbound)\|(?P<port>\d+)\|")


def classify_envoy(line: str) -> Parsed | None:
    """``proxy.envoy`` for a line of Envoy's own log (Istio's format or Envoy's default); None otherwise."""
    m = _ENVOY_ISTIO.match(line) or _ENVOY_DEFAULT.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"proxy": "envoy", "proxy_level": m["level"], "logger": m["logger"]}
    p = _ENVOY_PORT.search(m["msg"])
    if p is not None:
        f["port"] = int(p["port"])
    return Parsed("proxy.envoy", "INFO", "proxy.envoy", f)


# A frame of a sampled Python stack (`py-spy dump`: `    all_reduce (torch/distributed/distributed_c10d.py:3075)`,
# innermost first) in one of torch.distributed's collectives: where that process is blocked.
_PYSPY_FRAME = re.compile(r"^(?P<function>[A-Za-z_]\w*) \((?P<path>[^\s()]*distributed_c10d\.py):(?P<line>\d+)\)$")


def classify_stack_frame(line: str) -> Parsed | None:
    """``stack.collective`` for a py-spy frame in torch/distributed/distributed_c10d.py; None otherwise."""
    m = _PYSPY_FRAME.match(line)
    if m is None or m["function"].startswith("_"):
        return None
    return Parsed("stack.collective", "INFO", "stack.collective",
                  {"function": m["function"], "frame_file": m["path"], "frame_line": int(m["line"]), "format": "py-spy"})


# UCX's signal handler (ucs/debug, loaded with NCCL's UCX and IB plugins, HPC-X, Open MPI) reports the
# signal that kills the process before its backtrace: `[host:pid:thread:tid] Caught signal 7 (Bus error:
# nonexistent physical address)` and `==== backtrace (tid: N) ====`.
_CAUGHT_SIGNAL = re.compile(
    r"^(?:\[(?P<host>[^\s:\]]+):(?P<pid>\d+)\s*:\s*\d+:(?P<tid>\d+)\]\s*)?Caught signal (?P<signal>\d+) "
    r"\((?P<name>[^:()]+)(?::\s*(?P<reason>[^()]*))?\)")


def classify_caught_signal(line: str) -> Parsed | None:
    """``process.signal`` for UCX's `Caught signal N (Name: reason)` line; None otherwise."""
    m = _CAUGHT_SIGNAL.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"signal": int(m["signal"]), "signal_name": m["name"].strip(), "printer": "UCX"}
    if m["reason"]:
        f["reason"] = m["reason"].strip()
    if m["host"]:
        f["signal_host"] = m["host"]
        f["signal_pid"] = int(m["pid"])
    return Parsed("process.signal", "ERROR", "process.signal", f)


# The texts of cudaGetErrorString (CUDA runtime API, "Error Handling") that name one failure and are
# never ordinary output: a program that checks its CUDA calls often prints just that text on a line
# of its own (NCCL's `Cuda failure '%s'` quotes the same texts).
CUDA_ERROR_TEXTS = frozenset((
    "CUDA driver version is insufficient for CUDA runtime version",
    "no CUDA-capable device is detected",
    "all CUDA-capable devices are busy or unavailable",
    "system has unsupported display driver / cuda driver combination",
    "forward compatibility was attempted on non supported HW",
    "system not yet initialized",
    "an illegal memory access was encountered",
    "an illegal instruction was encountered",
    "device-side assert triggered",
    "unspecified launch failure",
    "the launch timed out and was terminated",
    "uncorrectable ECC error encountered",
    "invalid device ordinal",
    "peer access is not supported between these two devices",
    "misaligned address",
))


def classify_cuda_text(line: str) -> Parsed | None:
    """A line that is one CUDA runtime error text (:data:`CUDA_ERROR_TEXTS`), nothing else but a
    final full stop: ``cuda.error`` with ``error``; None otherwise."""
    text = line.rstrip(".").strip()
    if text not in CUDA_ERROR_TEXTS:
        return None
    return Parsed("cuda.error", "ERROR", "cuda.error", {"error": text})


def _classify_bare(text: str) -> Parsed | None:
    """A WARN message of NCCL's catalog standing without any header (pasted alone, quoted after
    ``Last error:``, inside an exception): ``nccl.warn`` with ``header: none``, or None.
    Only the first line is read (a WARN is one line). nccl-tests' own lines and NCCL 1.x WARN
    lines are read here too (:func:`classify_tests`), and so is an INFO message whose header was
    cut down to its level word (``INFO NET/IB : ...``: ``nccl.info`` with ``header: none``)."""
    line = text.split("\n", 1)[0].strip()
    if len(line) < BARE_MIN_LED or has_huge_number(line):
        return None
    if "Last NCCL warning" in line:
        q = _LAST_NCCL_WARNING.search(line)
        inner = _classify_bare(q["msg"]) if q is not None else None
        if inner is not None:
            inner.fields["nested_in"] = "Last NCCL warning(error)"
            return inner
    tests = classify_tests(line)
    if tests is not None:
        return tests
    if " -> " in line and " via " in line:
        conn = _bare_connection(line)
        if conn is not None:
            return conn
    head = _BARE_HEAD.match(line)  # NCCL 2.0-2.2 printed `file.h:line WARN msg` without the word NCCL
    loc = None
    info = False
    if head is not None:
        loc, line = head["loc"], line[head.end():]
    elif line.startswith("INFO ") and "NCCL" not in line:
        info, line = True, line[5:].lstrip()
    hit = nccl_catalog().match(line)
    net_fields: dict[str, Any] = {}
    if line.startswith("NET/") and (hit is None or hit[0].specificity < BARE_MIN_LITERAL):
        hit = match_net_variant(line, net_fields) or hit
    cut = False
    if hit is not None and not info and (
            "WARN" not in hit[0].levels
            or hit[0].specificity < (BARE_MIN_LED if _lead_word(hit[0].format) else BARE_MIN_LITERAL)):
        hit = None
    if hit is None and not info:  # the paste cut the message's start or end as well (logdoc.templates.match_cut)
        from .templates import match_cut

        hit = match_cut(nccl_catalog(), line)
        cut = hit is not None
    abridged = False
    if hit is None and not info:
        hit = match_abridged(line)
        abridged = hit is not None
    if hit is None:
        return None
    tpl, args = hit
    if info:
        if "INFO" not in tpl.levels or tpl.specificity < BARE_MIN_LITERAL:
            return None
        return Parsed("nccl.info", "INFO", tpl.id, {"header": "none", "message": line, "args": list(args),
                                                     "format": tpl.format})
    fields: dict[str, Any] = {"header": "none", "message": line, "args": list(args), "format": tpl.format}
    fields.update(net_fields)
    if abridged:
        fields["abridged"] = True
    if cut:
        fields["cut"] = True
    if loc:
        fields["code_location"] = loc
    if tpl.where:
        fields["catalog_location"] = tpl.where
    return Parsed("nccl.warn", "WARN", tpl.id, fields)


# A message retold in short: the poster (or a tool that relays NCCL's error) kept the WARN's long
# opening words and dropped the values after them (``Failed to bind NVLink SHARP (NVLS) Multicast
# memory: CUDA error 401`` for ``... Multicast memory of size %ld : CUDA error %d '%s'.``). Read as that
# WARN when the line starts with at least ABRIDGED_MIN characters of the format's first literal
# piece, ending at a word boundary of both, and that piece is the only WARN format's that long.
ABRIDGED_MIN = 40
_WORD_END = " :,.;([/"


def match_abridged(line: str):
    """The WARN format whose opening words ``line`` repeats (:data:`ABRIDGED_MIN`) before it goes its
    own way, with no arguments; None when no format, or formats of more than one message, fit."""
    from .templates import _CONV

    if len(line) < ABRIDGED_MIN:
        return None
    probe = line[:ABRIDGED_MIN]
    found: dict[str, Any] = {}
    for t in nccl_catalog().templates.values():
        if "WARN" not in t.levels or not t.format.startswith(probe):
            continue
        fmt = t.format.split("\\n")[0]
        m = _CONV.search(fmt)
        lit0 = fmt[: m.start()] if m else fmt
        k = ABRIDGED_MIN
        while k < len(lit0) and k < len(line) and lit0[k] == line[k]:
            k += 1
        if k < len(line) and line[k] not in _WORD_END and line[k - 1] not in _WORD_END:
            continue
        if k < len(lit0) and lit0[k] not in _WORD_END and lit0[k - 1] not in _WORD_END:
            continue
        found.setdefault(lit0, t)  # one message (every release that words its opening alike)
    if len(found) != 1:
        return None
    return next(iter(found.values())), ()


# A channel connection line pasted without its header, and often without its `Channel NN/M :` lead
# (`9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA`): the connection and its transport are all there.
_BARE_CONN = re.compile(r"(?:Channel (?P<ch>\d+(?:/\d+)?) ?: ?)?(?P<conn>\d+\[[0-9a-fA-F]+\] ?-> ?\d+\[[0-9a-fA-F]+\]"
                        r"(?: \[(?:send|receive)\])? via \S+.*)$")


def _bare_connection(line: str) -> Parsed | None:
    """``nccl.connection`` with ``header: none`` for a bare connection line; None otherwise."""
    m = _BARE_CONN.match(line)
    if m is None:
        return None
    read = read_message(f"Channel {m['ch'] or '00/0'} : {m['conn']}")
    if read is None or read[0] != "nccl.connection":
        return None
    fields = dict(read[1])
    fields["header"] = "none"
    fields["message"] = line
    if m["ch"] is None:
        fields.pop("channel", None)
        fields.pop("conn_index", None)
    return Parsed("nccl.connection", "INFO", "nccl.connection", fields)


# XLA (JAX) reports a failed NCCL call as a status whose text ends with the last WARN NCCL printed
# (ncclGetLastError): `<file>:<line>: NCCL operation <call> failed: <result>. Last NCCL warning(error)
# log entry (may be unrelated) '<WARN message>'.`; pastes shorten the middle. The quoted message is
# read as the bare WARN it is.
_LAST_NCCL_WARNING = re.compile(r"Last NCCL warning\(error\)[^']{0,60}'(?P<msg>[^']{8,})'")


# A network plugin prints the IB transport's messages under its own name (``NET/IBext : ...`` of the
# rdma-sharp plugins, ``NET/IBext_v8``, other forks), and pastes lose or add the space before the
# colon (``NET/IB: `` is the 2.22+ wording, ``NET/IB : `` the older one): a ``NET/<name> :`` message
# that no format reads is read again as the built-in transport's, under both spellings.
_NET_NAME = re.compile(r"NET/(?P<net>[A-Za-z][\w.-]*?)\s*:\s*(?=\S)")
_NET_CANON = ("NET/IB : ", "NET/IB: ", "NET/Socket : ")


def match_net_variant(msg: str, fields: dict[str, Any]):
    """The catalog reading of ``msg`` with its ``NET/<name> :`` lead put in the built-in spellings
    (``fields['net_name']`` is set to the printed name when it was not the built-in one); None."""
    m = _NET_NAME.match(msg)
    if m is None:
        return None
    rest = msg[m.end():]
    cat = nccl_catalog()
    for lead in _NET_CANON:
        if lead.startswith("NET/Socket") and m["net"] != "Socket":
            continue
        cand = lead + rest
        if cand == msg:
            continue
        hit = cat.match(cand)
        if hit is not None and hit[0].specificity >= BARE_MIN_LITERAL:
            if m["net"] not in ("IB", "Socket"):
                fields["net_name"] = m["net"]
            return hit
    return None


def _lead_word(fmt: str) -> str:
    from .templates import _lead_word as lead

    return lead(fmt)
