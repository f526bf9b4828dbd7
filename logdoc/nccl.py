"""NCCL lines: the ``host:pid:tid [dev] NCCL LEVEL`` header, then the message.

The header is found anywhere in the line, so an unknown prefix cannot hide an NCCL line. The
message is read by ``grammars/nccl.lark`` when it is one of the structured init and topology lines,
and recognised against NCCL's message catalog (:mod:`logdoc.templates`) otherwise. NCCL's messages
without a header, and other programs' lines read where no header is, are
:mod:`logdoc.classify.bare`'s and :mod:`logdoc.classify.neighbours`'s.

Layouts by version (``shared/reference/nccl-log-format.md``):

* INFO   ``host:pid:tid [dev] NCCL INFO msg``
* WARN   ``host:pid:tid [dev] file.cc:line NCCL WARN msg``; from 2.26 a ``[YYYY-MM-DD HH:MM:SS] `` stamp
  before it, from 2.30.7 ``file.cc:line (function)``
* TRACE  ``host:pid:tid [dev] 12.345 function:line NCCL TRACE msg``
* CALL   ``host:pid:tid NCCL CALL msg``
* ERROR  RCCL's, from 2.27.7 (ROCm 7.2): ``host:pid:tid [dev] [FATAL ERROR]: msg``, a WARN's message at level
  ERROR (RCCL's ``debug.cc``); cut to ``[dev] [FATAL ERROR]: msg``, read when the message is the catalog's
* VERSION the banner ``NCCL version 2.21.5+cuda12.4``, bare or as an INFO line
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .envelope import has_huge_number
from .events import Envelope
from .fast import enabled as fastpath_enabled
from .grammar import LazyTransformer, Parsed, lark_error, parser
from .lazyre import lazy_re
from .templates import BARE_MIN_LITERAL, match_head, match_hipified, match_net_variant, nccl_catalog

if TYPE_CHECKING:
    from lark import Token

HEADER = lazy_re(
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\] )?"
    # The host starts where a run of host characters starts: without the look-behind, a search
    # over a long line rescans the rest of the run from every position (quadratic time). The
    # leftmost match is the same either way.
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?:(?P<pid>\d+|[Xx*#?]+|<[\w-]+>):(?P<tid>\d+|[Xx*#?]+|<[\w-]+>)|(?P<mpid>[Xx*#?]{3,}|<[\w-]+>)) "
    r"(?:\[(?P<dev>-?\d+)\] )?"
    r"(?:(?P<ms>\d+\.\d+) (?P<tfunc>[^\s:]+):(?P<tline>\d+) )?"
    # the location: file:line, or (a network / tuner plugin that hands NCCL's logger __PRETTY_FUNCTION__ as
    # the file, aws-ofi-nccl) a C++ signature `ncclResult_t nccl_ofi_tuner_init_v1(size_t, size_t):270`
    r"(?:(?P<loc>[\w./+-]+:\d+|(?:[\w:<>*&]{1,80} ){0,3}[\w:~]{1,120}\([^()\n]{0,240}\)(?: const)?:\d+)"
    r"(?: \((?P<func>[^()\s]*)\))? )?"
    r"(?:NCCL (?P<level>INFO|WARN|TRACE|CALL)(?: |$)"
    # RCCL's ERROR class (RCCL 2.27.7, ROCm 7.2: its fatal errors printed at every debug level, NCCL_DEBUG
    # unset included): `host:pid:tid [dev] [FATAL ERROR]: ` and the message, no location, no word NCCL
    r"|(?<=\] )(?P<fatal>\[FATAL ERROR\]: ))"
)
# The header cut or left out (a paste that lost the start of the line, a logger that prints NCCL's
# text under its own prefix, an exception that quotes the line): what is left of it before
# `NCCL WARN` / `NCCL INFO`, on the first line of the text, after a blank, a bracket or the start.
HEADLESS = lazy_re(
    r"(?:^|(?<=[\s\]:|]))(?:\[(?P<dev>-?\d+)\] )?"
    r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+)(?: \((?P<func>[^()\s]*)\))? )?"
    r"NCCL (?P<level>INFO|WARN)(?: |$)"
)
# ... and RCCL's fatal-error class so cut: `[3] [FATAL ERROR]: <msg>`, the host:pid:tid lost, the device left. The
# device is required, and the message must read against the catalog (:func:`classify`): `[FATAL ERROR]: ` alone is
# other programs' words too.
FATAL_HEADLESS = lazy_re(
    r"(?:^|(?<=[\s\]:|]))\[(?P<dev>-?\d+)\] (?P<loc>)(?P<level>)(?P<fatal>\[FATAL ERROR\]: )"
)
# NCCL before 2.3 printed the level without the word NCCL: `host:pid:tid [0] INFO Ring 00 : ...`,
# `host:pid:tid [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]`.
OLD_HEADER = lazy_re(
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\] "
    r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+) )?(?P<level>INFO|WARN) "
)
# ... and its host:pid:tid masked or cut (`*server name* [0] include/socket.h:185 WARN Call to connect failed :
# Connection refused`, a paste that hid the host with words): the device and the source location are left, and
# they alone say it is NCCL's line (the location is required: `[0] INFO` alone says too little).
OLD_HEADLESS = lazy_re(
    r"(?:^|(?<=\s))\[(?P<dev>-?\d+)\] (?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+) (?P<level>INFO|WARN) "
)
_MASKED = lazy_re(r"[Xx*#?]+|<[\w-]+>")

# The bare banner (<= 2.21 printf, or the VERSION level): the whole message, nothing else. A
# torch error that quotes "NCCL version 2.x" mid-text is not a banner.
BANNER = lazy_re(r"NCCL version (?P<v>\d+\.\d+\.\d+\S*)\s*$")

RESULT_NAMES = {
    0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
    4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress",
    8: "ncclTimeout",
}

_LEVEL = {"INFO": "INFO", "WARN": "WARN", "TRACE": "TRACE", "CALL": "TRACE"}
_KIND = {"INFO": "nccl.info", "WARN": "nccl.warn", "TRACE": "nccl.trace_level", "CALL": "nccl.call"}
_IFACE = lazy_re(r"\[(?P<index>\d+)\](?P<name>[^:]+):(?P<addr>.+)<(?P<port>\d+)>$")
_IBDEV = lazy_re(r"\[(?P<index>\d+)\](?P<name>[^:]+):(?P<port>\d+)(?::[^/]*)?/(?P<link>\w+)$")
_OOB = lazy_re(r"(?P<name>[^:]+):(?P<addr>.+)<(?P<port>\d+)>$")


def _int(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


class _Fields:
    """Turn a tree of ``grammars/nccl.lark`` into ``(kind, fields)`` (the callbacks of a Lark
    ``Transformer``, made on first use: :class:`logdoc.grammar.LazyTransformer`). It does not
    visit tokens, so an item that is a ``str`` is a token and any other is a rule's result."""

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
            if isinstance(it, str):
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
        nums = [int(t) for t in items if isinstance(t, str) and t.type == "INT"]
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


_TRANSFORMER = LazyTransformer(_Fields, visit_tokens=False)  # the callbacks read tokens themselves


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
    elif c == "R":
        if msg.startswith("Ring ") and msg[5:6].isdigit():
            return "channel"  # releases before 2.5 named a channel `Ring NN` (`Ring 00 : 0[0] -> 1[1] via P2P/IPC`)
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


# The first words that _family's checks of a first letter C, N, B or U may hold (as their words' starts:
# `Channel `, `Connected all `, `NET/Socket : Using [`, `NET/IB : Using [`, `NCCL version `, `NCCL_`,
# `Bootstrap`, `Using network `): a word that starts with none of them leaves _family to _family_rest.
_FAMILY_WORDS = ("Channel", "Connected", "NET/Socket", "NET/IB", "NCCL", "Bootstrap", "Using")


def family_for(word: str):
    """A function equal to :func:`_family` on every message whose first word (``msg.split(" ",
    1)[0]``) is ``word``, doing only the checks that word leaves open."""
    if word.startswith(_FAMILY_WORDS) or word in ("comm", "Ring"):
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
    except Exception as exc:  # noqa: BLE001 - only Lark's errors are read as "not one of them"
        if not lark_error(exc):
            raise
        out = None
    if memo and (out is None or isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict)):
        if len(_MEMO) >= MAX_MEMO:
            _MEMO.clear()
        _MEMO[msg] = None if out is None else (out[0], _copy_fields(out[1]), _is_flat(out[1]))
    return out


_NO = object()


def grammar_refused(msg: str) -> bool:
    """Whether :func:`read_message` is known to give None for ``msg`` without the grammar: the memo
    holds its failed parse (fast path only). The bulk lane (:mod:`logdoc.fast.lane`) reads such a
    message as the catalog would, as the full path then does."""
    return fastpath_enabled() and _MEMO.get(msg, _NO) is None


def _num(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None  # a pid masked with X letters is not a number


def classify(text: str, env: Envelope) -> Parsed | None:
    """An NCCL line, or None. Fills ``env.host``/``env.pid`` and time from the header.

    The header may be whole (``host:pid:tid [dev] file.cc:line NCCL WARN``), masked (X letters
    for the pid), or cut down to what follows the host (``file.cc:line NCCL WARN``, ``NCCL INFO``:
    :data:`HEADLESS`, on the first line of the text only)."""
    if "NCCL" not in text and "] [FATAL ERROR]: " not in text:
        if (" WARN " not in text and " INFO " not in text) or has_huge_number(text):
            return None
        h = OLD_HEADER.search(text)
        if h is not None:
            return _from_header(h, text, env, False)
        nl = text.find("\n")
        h = OLD_HEADLESS.search(text, 0, nl if nl >= 0 else len(text))
        return _from_header(h, text, env, True) if h is not None else None
    if has_huge_number(text):
        return None
    h = HEADER.search(text) if (" NCCL " in text or text.endswith(" NCCL") or "NCCL INFO" in text or "NCCL WARN" in text
                                or "] [FATAL ERROR]: " in text) else None
    headless = False
    if h is None and ("NCCL WARN" in text or "NCCL INFO" in text):
        nl = text.find("\n")
        h = HEADLESS.search(text, 0, nl if nl >= 0 else len(text))
        if h is not None and nl >= 0 and h.end() >= nl:
            h = None  # the level word ends the line: nothing of the message is on it
        headless = h is not None
    elif h is None and "] [FATAL ERROR]: " in text:
        nl = text.find("\n")
        h = FATAL_HEADLESS.search(text, 0, nl if nl >= 0 else len(text))
        if h is not None:
            p = _from_header(h, text, env, True)  # (a cut header names no host, pid or time)
            return p if p.template is not None else None
    if h is None:
        b = BANNER.match(text.strip())
        if b is None:
            return None
        return Parsed("nccl.version", "INFO", "nccl.version", split_version(b["v"]))
    return _from_header(h, text, env, headless)


def _from_header(h: re.Match, text: str, env: Envelope, headless: bool) -> Parsed:
    # (RCCL's `[FATAL ERROR]: `: the message of a WARN, read as one, at level ERROR)
    level_word = h["level"] or "WARN"
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
        if h.re is OLD_HEADER.compiled:
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
    level = _LEVEL[level_word] if h["level"] else "ERROR"
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
        if "hip" in msg and (hit is None or hit[0].specificity < BARE_MIN_LITERAL):
            hit = match_hipified(msg) or hit  # (a short format may read the HIP name as an argument: `%s failed : %s`)
        if msg.startswith("NET/") and (hit is None or hit[0].specificity < BARE_MIN_LITERAL):
            hit = match_net_variant(msg, fields) or hit
        if hit is not None and level_word == "WARN" and "WARN" not in hit[0].levels and hit[0].specificity < BARE_MIN_LITERAL:
            hit = None  # a short format NCCL prints only at INFO (`%s: %s`) says too little to read a WARN
        if hit is not None:
            tpl, args = hit
            template = template or tpl.id
            fields["args"] = list(args)
            fields["format"] = tpl.format
            if tpl.where and "code_location" not in fields and level_word == "WARN":
                fields["catalog_location"] = tpl.where
    if template is None and level_word == "WARN":
        # the message's end cut by a paste or a viewer (a fixed width, `...`): the format whose head it is
        hit = match_head(nccl_catalog(), msg) or (match_net_variant(msg, fields, cut=True) if msg.startswith("NET/") else None)
        if hit is None and fields.get("code_location"):
            hit = match_head(nccl_catalog(), msg, where=fields["code_location"])  # (a shorter head, the header's file)
        if hit is not None:
            tpl, args = hit
            template = tpl.id
            fields.update(args=list(args), format=tpl.format, cut=True)
            if tpl.where and "code_location" not in fields:
                fields["catalog_location"] = tpl.where
    if kind == "nccl.trace" and level_word == "WARN":
        kind = "nccl.warn"
    return Parsed(kind, level, template, fields)
