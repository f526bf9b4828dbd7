"""Replace hostnames, IP and MAC addresses, IB GUIDs, user names in paths and e-mail addresses by
stable aliases, keeping what a diagnosis needs (ranks, ports, versions, interface and device names,
error texts). The same host is ``host-1`` everywhere; the same address keeps one alias."""
from __future__ import annotations

import re
from typing import Any, Iterable

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{1,4}(?![\w:])|(?<![\w:])fe80::[0-9a-fA-F:]+")
_MAC = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}(?![\w:])")
_GUID = re.compile(r"\b0x[0-9a-fA-F]{16}\b|\b(?:[0-9a-fA-F]{4}:){3}[0-9a-fA-F]{4}\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_HOME = re.compile(r"(/(?:home|Users|scratch|u)/)([^/\s]+)")


class Redactor:
    def __init__(self, hosts: Iterable[str] = ()) -> None:
        self.aliases: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.hosts = sorted({h for h in hosts if h and not _IPV4.fullmatch(h)}, key=len, reverse=True)
        self._host_rx = re.compile(r"(?<![\w-])(" + "|".join(re.escape(h) for h in self.hosts) + r")(?![\w-])") if self.hosts else None

    def alias(self, kind: str, value: str) -> str:
        key = f"{kind}:{value}"
        if key not in self.aliases:
            n = self.counts[kind] = self.counts.get(kind, 0) + 1
            if kind == "ipv4":
                self.aliases[key] = f"10.255.{n // 250}.{n % 250 + 1}"
            else:
                self.aliases[key] = f"{kind}-{n}"
        return self.aliases[key]

    def text(self, s: str) -> str:
        s = _EMAIL.sub(lambda m: self.alias("email", m.group(0)) + "@example.invalid", s)
        s = _MAC.sub(lambda m: self.alias("mac", m.group(0)), s)
        s = _GUID.sub(lambda m: self.alias("guid", m.group(0)), s)
        s = _IPV6.sub(lambda m: self.alias("ipv6", m.group(0)), s)
        s = _IPV4.sub(lambda m: m.group(0) if m.group(0).startswith("127.") else self.alias("ipv4", m.group(0)), s)
        s = _HOME.sub(lambda m: m.group(1) + self.alias("user", m.group(2)), s)
        if self._host_rx is not None:
            s = self._host_rx.sub(lambda m: self.alias("host", m.group(1)), s)
        return s

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v
