"""Gloo's errors (``[path/gloo/...cc:line] message``, ``[enforce fail at ...]``, ``Gloo connectFullMesh
failed with ...``, ``grammars/gloo.lark``): the source location (a masked path included), the
catalog row of that file and line, the peer's address with its port byte-swapped back, errno text
and name."""
from __future__ import annotations

import re
from typing import Any

from ...grammar import LazyTransformer, Parsed
from .catalog import match_templates
from .common import LEVELS, UNREAD, Read, errno_name, parse, to_int
from .common import read as read_grammar
from ...lazyre import lazy_re

GLOO_LOC = lazy_re(r"\[(?:enforce fail at )?[^\]\s]+\.(?:cc|h|cu|cpp|hpp):\d+\] ")
# a source path masked by the poster (`[<some path>/gloo/transport/tcp/pair.cc:761] ...`, `[<path>/...]`)
MASKED_LOC = lazy_re(r"\[(enforce fail at )?<[^<>\]\n]{1,40}>/?(?=[^\]\s]+\.(?:cc|h|cu|cpp|hpp):\d+\] )")
PEER = lazy_re(r"\[[0-9A-Za-z:.%_\-]*\]:\d+(?:\$\d+)?")


def _swap16(port: int) -> int:
    return ((port & 0xFF) << 8) | ((port >> 8) & 0xFF)


def parse_peer(text: str) -> dict[str, Any]:
    """``[ip]:port$seq`` (Gloo) -> peer_addr, peer_port_printed, peer_port (byte-swapped back), peer_seq."""
    tree = parse("gloo", text.strip(), "peer")
    if tree is None:
        return {}
    from lark import Token  # (imported by the parse above)

    vals = {t.type: str(t) for t in tree.children if isinstance(t, Token)}
    printed = int(vals["PORT"])
    out: dict[str, Any] = {"peer_addr": vals["ADDR"], "peer_port_printed": printed, "peer_port": _swap16(printed)}
    if "SEQ" in vals:
        out["peer_seq"] = int(vals["SEQ"])
    return out


class _GlooT:  # a Lark Transformer's callbacks (made on first use: logdoc.grammar.LazyTransformer)
    def operands(self, c):
        return {"lhs": str(c[0]).strip(), "rhs": str(c[1]).strip()}

    def enforce(self, c):
        if getattr(c[0], "type", None) == "LOCATION":  # a token (a rule's result has no type)
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


_GLOO_T = LazyTransformer(_GlooT)  # one instance: the grammar's cache keeps its plans per shape and instance


def _gloo_location(printed: str) -> tuple[str, str | None, int | None]:
    path, _, line = printed.rpartition(":")
    path = path.replace("\\", "/")  # a Windows build's `C:\...\gloo\transport\uv\device.cc`
    i = path.rfind("gloo/")
    rel = path[i:] if i >= 0 else path
    return f"{rel}:{line}", rel, int(line) if line.isdigit() else None


def classify_gloo(text: str, read: Read) -> Parsed | None:
    f = read_grammar("gloo", text, _GLOO_T)
    if f is UNREAD:
        return None
    full_mesh = f.pop("full_mesh", False)
    if "code_location_printed" not in f:          # connectFullMesh with an unbracketed inner error
        inner = read(f.get("message", ""), None) if f.get("message") else None
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
    m = match_templates(body, ("gloo",), path, line)
    if m is not None:
        t, tf = m
        kind, level, tid = t.kind, t.level, t.id
        for k, v in tf.items():
            if k in ("lhs", "rhs", "rest"):
                continue
            fields.setdefault(k, v)
    if level_word is not None:
        kind, level = "gloo.debug", LEVELS[level_word]
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
        if isinstance(v, str) and PEER.search(v):
            peer_src = PEER.search(v).group(0)
            break
    if peer_src is None:
        m = PEER.search(fields.get("message", "") or "")
        if m:
            peer_src = m.group(0)
    if peer_src:
        fields.update(parse_peer(peer_src))
    local = fields.get("local")
    if isinstance(local, str) and PEER.search(local):
        lp = parse_peer(PEER.search(local).group(0))
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
        elif errno_name(err):
            errno_text = err.split(",")[0].strip()
    if not errno_text:
        msg = fields.get("message", "") or ""
        m = re.search(r"(?:SO_ERROR|socket|accept|bind|listen|connect|pipe|epoll_create|setsockopt|fcntl"
                      r"|getsockname|getpeername|read|write|writev)?:? ?([A-Z][a-z]+(?: [a-z]+){1,5})", msg)
        if m and errno_name(m.group(1)):
            errno_text = m.group(1)
    if errno_text:
        errno_text = errno_text.split(". This is", 1)[0].strip().rstrip(".")
        fields["errno_text"] = errno_text
        name = errno_name(errno_text)
        if name:
            fields["errno_name"] = name
    for k in ("will_retry", "retry_count", "retry_limit", "gloo_rank", "gloo_size", "timeout_ms"):
        if k in fields:
            fields[k] = to_int(fields[k])
