"""Go's network errors, as the programs around a job print them (Kubernetes operators and controllers, etcd,
the scheduler's agents, container runtimes), read where no other reader takes the line.

Go's ``net`` package words a failed dial as ``*net.OpError``: the operation, the network, the address when there
is one, then the cause (``dial tcp 10.0.0.5:29500: connect: connection refused``, ``dial tcp 10.0.0.5:2379: i/o
timeout``); a name that does not resolve is a ``*net.DNSError`` inside it (``dial tcp: lookup
pytorch-job-master-0 on 10.96.0.10:53: no such host``, ``lookup etcd-0: no such host`` without the server). The
error is usually quoted inside the program's own message (``failed to list ...: Get "https://...": dial tcp ...``),
so it is searched along the line.

A lookup becomes ``net.resolve_failed`` with ``host``, ``gai_strerror`` (Go's words: ``no such host``, ``server
misbehaving``, ``i/o timeout``) and ``tool`` (``Go net``) and ``rest`` (the DNS server it asked); a dial that
failed becomes ``net.connect_failed`` with ``peer``, ``port``, ``proto``, ``how`` (``dial``) and ``strerror``.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

_LOOKUP = lazy_re(r"\blookup (?P<host>[A-Za-z0-9][\w.-]{0,252}?)(?: on (?P<server>[\d.:\[\]a-f]{3,60}))?: "
                  r"(?:(?:read|dial) udp[46]? [\w.:\[\]>%-]{3,140}: )?(?P<err>no such host|server misbehaving|i/o timeout)")
_DIAL = lazy_re(r"\bdial (?P<proto>tcp|udp)[46]? (?P<peer>[\w.%-]{1,253}|\[[\da-fA-F:.%\w]{2,80}\]):(?P<port>\d{1,5}): "
                r"(?:connect: )?(?P<err>connection refused|i/o timeout|no route to host|network is unreachable|connection timed out)")


def classify_go_net(line: str) -> Parsed | None:
    """``net.resolve_failed`` / ``net.connect_failed`` for Go's dial and lookup errors in a line; None otherwise."""
    end = min(len(line), 8192)
    if "lookup " in line:
        m = _LOOKUP.search(line, 0, end)
        if m is not None:
            return Parsed("net.resolve_failed", "ERROR", "net.resolve_failed",
                          {"host": m["host"], "gai_strerror": m["err"], "tool": "Go net",
                           **({"rest": f"DNS server {m['server']}"} if m["server"] else {})})
    if "dial " in line:
        m = _DIAL.search(line, 0, end)
        if m is not None:
            return Parsed("net.connect_failed", "ERROR", "net.connect_failed",
                          {"peer": m["peer"], "port": int(m["port"]), "proto": m["proto"], "how": "dial",
                           "strerror": m["err"]})
    return None
