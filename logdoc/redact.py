"""Replace what identifies a cluster in a log by stable aliases, keeping what a diagnosis needs.

Replaced: hostnames (``host-1``, with a domain ``host-1.domain-1``), IPv4 and IPv6 addresses, MAC
addresses, InfiniBand GUIDs, user names in home paths (``/home/user-1/``) and e-mail addresses.
Kept: ranks, pids, ports, versions, interface names (``eth0``, ``enp1s0f0np0``, ``ib0``, ``bond4``),
NCCL device names (``mlx5_0``), PCI bus ids, pointers, timestamps and every error text.

An alias is stable: one :class:`Redactor` gives the same host the same alias in every file and the
same address one alias. Aliases keep what the analysis compares:

* IPv4: the /24 network is replaced and the host byte kept, so addresses that shared a /24 still do
  and different ones stay different (``10.50.0.11`` -> ``10.200.0.11``). Loopback (127/8), the
  unspecified and broadcast addresses and Docker's default bridge (172.17/16, the same on every
  machine) are kept; link-local 169.254/16 stays link-local. Alias networks never coincide with a
  network of the input the redactor has seen.
* IPv6: the /64 prefix and the interface id are replaced (``fd00:0:0:1::2``, link-local ``fe80::2``,
  IPv4-mapped ``::ffff:`` + the IPv4 alias); ``::1`` and ``::`` are kept; the written form (compressed
  or full) is kept.
* MAC ``02:00:00:00:00:01``, GUID ``0x0200000000000001`` / ``0200:0000:0000:0001``: same shape.

Hostnames cannot be told from words by their look, so they are learned first (:meth:`Redactor.learn_line`
on every line of every input, or :meth:`Redactor.learn_events` on parsed events): the NCCL prefix
``host:pid:tid``, torchrun's failure summary ``host : name``, pdsh and kubectl prefixes, Slurm
messages, ``Rank N on host X``, ``MASTER_ADDR=``. Then each learned name is replaced wherever it
stands as a word (also as the start of ``name-ib0`` or ``name.domain``), including inside the NCCL
prefix, so that logdoc still reads the redacted log the same way. Generic names (``localhost``,
``master``, ``ubuntu`` ...) are not identifying and are kept.

One module, over 500 lines: :class:`Redactor` learns every file's hosts and networks first and then
rewrites with the same alias tables, which are its whole state, and the file writers (``redact_paths``)
are its only callers.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Iterable

from .lazyre import lazy_re

__all__ = ["Redactor", "GENERIC_HOSTS"]

# names a learned "host" may have that identify nothing (and that replacing everywhere would damage)
GENERIC_HOSTS = frozenset({
    "localhost", "localhost.localdomain", "host", "hostname", "node", "master", "worker", "server", "client",
    "ubuntu", "debian", "centos", "fedora", "rhel", "rocky", "alpine", "linux", "gpu", "cpu", "none", "null",
    "unknown", "n/a", "<n/a>", "nan", "true", "false", "main", "head", "login", "compute", "default", "local",
    "container", "pod", "job", "train", "trainer", "rank", "self", "peer", "remote", "error", "warning", "info",
})

_IPV4 = lazy_re(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)")
# candidates only: each is checked with the ipaddress module
_IPV6 = lazy_re(r"(?<![\w:.%])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\w:])")
_MAC = lazy_re(r"(?<![\w:-])[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?![\w:-])")
_GUID_COLON = lazy_re(r"(?<![\w:])[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){3}(?![\w:])")
_GUID_HEX = lazy_re(r"(?i)((?<![a-z])guid\b[^0-9\n]{0,12}?)(0x[0-9a-f]{16})\b")
_EMAIL = lazy_re(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]*@[A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?)+")
_HOME = lazy_re(r"(?<![\w.-])(/(?:home|Users|scratch|u|export/home|nfs/home|mnt/home|data/home)/)([A-Za-z_][\w.-]{0,63})(?=/|\s|$|[\"':,)\]])")
_USER_KV = lazy_re(r"\b((?:User(?:Id)?|USER|LOGNAME|user)=)([A-Za-z_][\w.-]{0,63})\b")
# a name made of labels: letters, digits and hyphens, joined by dots (underscores separate names)
_NAME = lazy_re(r"(?<![A-Za-z0-9])[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*")
_SEP = lazy_re(r"[-.]")
_VERSIONISH = lazy_re(r"(?i)(?:version|ver\b|\bv|cudnn|cuda|driver|torch|nccl|python|[=<>~]=?)\s*[:=]?\s*$")

# where hostnames are printed (group "host"). A name from free text (`Rank 3 on X`) must have a
# digit, a hyphen or a dot, so that `on the` never makes "the" a host.
_LEARN: list[tuple[re.Pattern, bool]] = [
    (lazy_re(r"(?<![^\s:\[\]])(?P<host>[A-Za-z0-9][\w.-]*):\d{1,10}:\d{1,10} (?:\[-?\d+\] )?(?:\S+ ){0,3}?NCCL (?:INFO|WARN|TRACE|CALL)"), False),
    (lazy_re(r"^\s*host\s*:\s*(?P<host>[A-Za-z0-9][\w.-]*)\s*$"), False),                # torchrun failure summary
    (lazy_re(r"\bsrun: error: (?P<host>[A-Za-z0-9][\w.-]*): tasks? \d"), False),
    (lazy_re(r"\*\*\* (?:JOB|STEP) \S+ ON (?P<host>[A-Za-z0-9][\w.-]*) CANCELLED"), False),
    (lazy_re(r"\b(?:MASTER_ADDR|master_addr|rdzv_endpoint|RDZV_ENDPOINT)[\"']?\s*(?:=|:\s)\s*[\"']?(?P<host>[A-Za-z][\w.-]*?)(?::\d+)?(?=[\s\"',)]|$)"), False),
    (lazy_re(r"--(?:master[_-]addr|rdzv[_-]endpoint)[= ](?P<host>[A-Za-z][\w.-]*?)(?::\d+)?(?=\s|$)"), False),
    (lazy_re(r"\b(?:HOSTNAME|SLURMD_NODENAME|SLURM_TOPOLOGY_ADDR|SLURM_NODELIST|hostname)\s*[=:]\s*(?P<host>[A-Za-z0-9][\w.-]*[A-Za-z0-9])"), False),
    (lazy_re(r"\[pod/(?P<host>[^/\]\s]+)/"), False),                                        # kubectl --prefix
    (lazy_re(r"\b[Rr]ank \d+ (?:is )?on (?:host |node )?(?P<host>[A-Za-z0-9][\w.-]*[A-Za-z0-9])"), True),
    (lazy_re(r"\bon (?:host|node) (?P<host>[A-Za-z0-9][\w.-]*[A-Za-z0-9])"), True),
    (lazy_re(r"\bto host (?P<host>[A-Za-z][\w.-]*?)(?::\d+)?(?=[\s,;)]|\.(?:\s|$)|$)"), True),  # TCPStore client
]
# names that are ranks, interfaces or devices, not hosts (a `rank0: ` line looks like a pdsh prefix)
_NOT_HOST = lazy_re(
    r"(?i)(?:(?:global|local|node)?[_-]?rank|default|trainer|worker|proc(?:ess)?|task|gpu|cuda|cudnn|dev(?:ice)?|cpu|attempt"
    r"|step|epoch|pg|eth|ib|bond|en[ospx]\w*|em|wl\w*|lo|docker|veth\w*|virbr|br|hsn|hfi|bnxt\w*|cxi|mlx\d?|nvlink"
    r"|ibp\w*|ipoib|nccl|torch|python|sm)[_-]?\d+\w*")


def _usable_host(name: str, strict: bool = False) -> str | None:
    name = name.strip().strip(".").rstrip(":")
    if not name or len(name) > 253 or name.lower() in GENERIC_HOSTS or name.isdigit() or _NOT_HOST.fullmatch(name):
        return None
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and "_" in name:  # MASTER_PORT: a variable's name
        return None
    if strict and not re.search(r"[\d.-]", name):
        return None
    if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?", name):
        return None
    try:
        ipaddress.ip_address(name)
        return None  # an address: redacted as one
    except ValueError:
        pass
    if re.fullmatch(r"\d+(?:\.\d+)+", name):  # a version
        return None
    return name


class Redactor:
    """Learns hostnames, then replaces identifying text by stable aliases (see the module doc)."""

    def __init__(self, hosts: Iterable[str] = ()) -> None:
        self.aliases: dict[str, str] = {}        # "kind:original" -> alias
        self.counts: dict[str, int] = {}
        self.hosts: dict[str, None] = {}         # learned names, in order of learning
        self._names: dict[str, str] | None = None  # host or domain -> alias (built lazily)
        self._odd: re.Pattern | None = None
        self.seen_v4: set[str] = set()           # /24 networks of the input ("a.b.c")
        self.seen_v6: set[str] = set()
        for h in hosts:
            self.learn_host(h)

    # ------------------------------------------------------------------------------------------
    # learning

    def learn_host(self, name: str | None, strict: bool = False) -> None:
        if not name:
            return
        h = _usable_host(str(name), strict)
        if h is not None and h not in self.hosts:
            self.hosts[h] = None
            self._names = None

    def learn_line(self, line: str) -> None:
        """Learn hostnames (and the input's networks) from one line of a log. Envelope hosts
        (pdsh, kubectl, Ray) are learned from parsed events (:meth:`learn_events`)."""
        if len(line) > 65536:
            line = line[:65536]
        for rx, strict in _LEARN:
            for m in rx.finditer(line):
                self.learn_host(m.group("host"), strict)
        self._learn_networks(line)

    def _learn_networks(self, line: str) -> None:
        if "." in line:
            for m in _IPV4.finditer(line):
                self.seen_v4.add(m.group(0).rsplit(".", 1)[0])
        if "::" in line or line.count(":") >= 3:
            for m in _IPV6.finditer(line):
                ip = _v6(m.group(0))
                if ip is not None:
                    self.seen_v6.add(str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address))

    def learn_events(self, events: Iterable[Any]) -> "Redactor":
        """Learn from parsed events: their hosts, torchrun's failure table, store hosts, and the text."""
        for ev in events:
            self.learn_host(getattr(ev, "host", None))
            fields = getattr(ev, "fields", None) or {}
            for f in fields.get("failures") or ():
                if isinstance(f, dict):
                    self.learn_host(f.get("host"))
            if isinstance(fields.get("host"), str):
                self.learn_host(fields["host"])
            text = getattr(ev, "text", "") or ""
            for line in text.split("\n")[:200]:
                self.learn_line(line)
        return self

    @classmethod
    def for_events(cls, events: Iterable[Any]) -> "Redactor":
        return cls().learn_events(events)

    # ------------------------------------------------------------------------------------------
    # aliases

    def alias(self, kind: str, value: str) -> str:
        key = f"{kind}:{value}"
        got = self.aliases.get(key)
        if got is None:
            n = self.counts[kind] = self.counts.get(kind, 0) + 1
            got = self.aliases[key] = self._make(kind, n, value)
        return got

    def _make(self, kind: str, n: int, value: str) -> str:
        if kind == "host":
            return f"{self._host_prefix()}-{n}"
        if kind == "net4":
            while True:  # 10.200.0 .. 10.255.255, never a network of the input
                net = f"10.{200 + (n - 1) // 256}.{(n - 1) % 256}"
                if net not in self.seen_v4 and n <= 56 * 256:
                    return net
                n = self.counts[kind] = n + 1
                if n > 56 * 256:
                    return f"10.255.255"
        if kind == "ll4":
            return f"169.254.{(n - 1) % 254 + 1}"
        if kind == "net6":
            while True:
                net = f"fd00:0:0:{n:x}::"
                if net not in self.seen_v6:
                    return net
                n = self.counts[kind] = n + 1
        if kind == "iid6":
            return f"{n:x}"
        if kind == "mac":
            sep = "-" if "-" in value else ":"
            raw = f"0200{n:08x}"
            return sep.join(raw[i:i + 2] for i in range(0, 12, 2))
        if kind == "guid":
            raw = f"0200{n:012x}"
            if value.startswith(("0x", "0X")):
                return "0x" + raw
            return ":".join(raw[i:i + 4] for i in range(0, 16, 4))
        if kind == "email":
            return f"user-{n}@example.invalid"
        return f"{kind}-{n}"

    def _host_prefix(self) -> str:
        return "rhost" if any(re.fullmatch(r"host-\d+", h) for h in self.hosts) else "host"

    def _name_map(self) -> dict[str, str]:
        """Every learned host (and its short name and domain) -> its alias."""
        if self._names is None:
            names: dict[str, str] = {}
            for h in self.hosts:
                short, _, domain = h.partition(".")
                if domain and not re.fullmatch(r"\d+", short):
                    a = self.alias("host", short)
                    d = self.alias("domain", domain)
                    names.setdefault(short, a)
                    names.setdefault(domain, d)
                    names[h] = f"{a}.{d}"
                else:
                    names.setdefault(h, self.alias("host", h))
            odd = sorted((h for h in names if "_" in h), key=len, reverse=True)
            self._odd = re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, odd)) + r")(?![\w-])") if odd else None
            self._names = names
        return self._names

    def mapping(self) -> dict[str, dict[str, str]]:
        """What was replaced by what, by kind (the key to read a redacted log back; keep it private)."""
        self._name_map()
        out: dict[str, dict[str, str]] = {}
        for key, alias in self.aliases.items():
            kind, _, value = key.partition(":")
            out.setdefault(kind, {})[value] = alias
        return out

    # ------------------------------------------------------------------------------------------
    # applying

    def text(self, s: str) -> str:
        if not s:
            return s
        if "@" in s:
            s = _EMAIL.sub(self._email, s)
        if "." in s:  # first: IPv6 leaves the dotted tail of ::ffff:a.b.c.d to this
            s = _IPV4.sub(self._ipv4, s)
        if ":" in s or "-" in s:
            s = _MAC.sub(lambda m: self.alias("mac", m.group(0).lower()), s)
            if ":" in s:
                s = _GUID_COLON.sub(self._guid_colon, s)
                s = _IPV6.sub(self._ipv6, s)
        if "uid" in s or "UID" in s:
            s = _GUID_HEX.sub(lambda m: m.group(1) + self.alias("guid", m.group(2).lower()), s)
        if "/" in s:
            s = _HOME.sub(lambda m: m.group(1) + self.alias("user", m.group(2)), s)
        if "=" in s:
            s = _USER_KV.sub(lambda m: m.group(1) + self.alias("user", m.group(2)), s)
        names = self._name_map()
        if names:
            s = _NAME.sub(lambda m: self._name(m.group(0), names), s)
            if self._odd is not None:  # names with an underscore (container names): not single tokens
                s = self._odd.sub(lambda m: names[m.group(0)], s)
        return s

    def value(self, v: Any) -> Any:
        """A JSON-like value with every string (keys included) redacted."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        if isinstance(v, dict):
            return {(self.text(k) if isinstance(k, str) else k): self.value(x) for k, x in v.items()}
        return v

    def path(self, rel: str) -> str:
        """A relative output path with hostnames and addresses in its parts replaced."""
        return "/".join(self.text(p) for p in rel.split("/"))

    # --- the pieces
    @staticmethod
    def _name(token: str, names: dict[str, str]) -> str:
        got = names.get(token)
        if got is not None:
            return got
        if "-" not in token and "." not in token:
            return token
        # `node7-ib0`, `ssh-node7`, `node7.cluster.local`, `node7.log`: learned names among the
        # token's pieces (cut at - and .), the longest first, from the left
        cuts = [0] + [m.end() for m in _SEP.finditer(token)][:32]
        ends = [m.start() for m in _SEP.finditer(token)][:32] + [len(token)]
        out = []
        pos = 0
        i = 0
        while i < len(cuts):
            start = cuts[i]
            if start < pos:
                i += 1
                continue
            hit = None
            for end in reversed(ends):
                if end <= start:
                    break
                alias = names.get(token[start:end])
                if alias is not None:
                    hit = (end, alias)
                    break
            if hit is not None:
                out.append(token[pos:start])
                out.append(hit[1])
                pos = hit[0]
            i += 1
        if not out:
            return token
        out.append(token[pos:])
        return "".join(out)

    def _email(self, m: re.Match) -> str:
        return self.alias("email", m.group(0).lower())

    def _guid_colon(self, m: re.Match) -> str:
        return self.alias("guid", m.group(0).lower())

    def _ipv4(self, m: re.Match) -> str:
        text = m.group(0)
        start = m.start()
        if _VERSIONISH.search(m.string[max(0, start - 12):start]):
            return text  # `cudnn 9.1.0.70`, `version==1.2.3.4`
        return self.ipv4(text)

    def ipv4(self, text: str) -> str:
        a, b, c, d = text.split(".")
        if a in ("127", "0") or text == "255.255.255.255" or (a == "172" and b == "17"):
            return text
        if a == "169" and b == "254":
            return f"{self.alias('ll4', c)}.{d}"
        return f"{self.alias('net4', f'{a}.{b}.{c}')}.{d}"

    def _ipv6(self, m: re.Match) -> str:
        text = m.group(0)
        ip = _v6(text)
        if ip is None:
            return text
        if ip.is_loopback or ip.is_unspecified:
            return text
        if "." in text:  # ::ffff:a.b.c.d (and ::a.b.c.d): the IPv4 pass did the dotted part
            return text
        iid = self.alias("iid6", ip.exploded)
        if ip.is_link_local:
            new = ipaddress.IPv6Address(f"fe80::{iid}")
        else:
            net = str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
            new = ipaddress.IPv6Address(self.alias("net6", net) + iid)
        return new.compressed if "::" in text else new.exploded


def _v6(text: str):
    if text.count(":") < 2:
        return None
    try:
        ip = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    if "::" not in text and text.count(":") != 7 and "." not in text:
        return None
    return ip


# ------------------------------------------------------------------------------------------------
# redacted copies of log files (``logdoc redact``)

class RedactError(Exception):
    """Bad usage (one line, exit status 2)."""


def _roots(paths: list[str]) -> str:
    """The folder the output tree mirrors: the common folder of the arguments."""
    import glob
    import os

    dirs = []
    for p in paths:
        if p == "-":
            continue
        matches = glob.glob(p) if any(c in p for c in "*?[") and not os.path.exists(p) else [p]
        for m in matches:
            dirs.append(os.path.abspath(m if os.path.isdir(m) else os.path.dirname(m) or "."))
    if not dirs:
        return os.getcwd()
    try:
        return os.path.commonpath(dirs)
    except ValueError:  # pragma: no cover - different drives
        return os.getcwd()


def redact_paths(paths: list[str], out: str | None, *, stdin=None, stdout=None,
                 hosts: Iterable[str] = ()) -> tuple[Redactor, dict[str, Any]]:
    """Write redacted copies of the logs named by ``paths`` (as ``logdoc explain`` takes them).

    ``out``: a folder (the inputs' tree below their common folder is mirrored there, names
    redacted too), or ``"-"``/None for standard output (one input). Two passes: every input is read
    once to learn hostnames (lines and parsed events), then written. The copies hold the lines as
    logdoc reads them (ANSI colours and progress-bar residue dropped, invalid UTF-8 as U+FFFD, lines
    over 1 MiB cut there); a ``.gz`` input gives a ``.gz`` copy. Returns the redactor and a summary.
    """
    import gzip
    import os
    import shutil
    import sys
    import tempfile

    from .pipeline import parse_sources
    from .read.source import ReadStats, Source, expand, read_lines

    stdin = stdin if stdin is not None else sys.stdin.buffer
    sources = expand(paths, stdin=stdin)
    to_stdout = out in (None, "-")
    if to_stdout and len(sources) != 1:
        raise RedactError(f"{len(sources)} inputs: give a folder with -o/--out (- writes one input to standard output)")
    spool = None
    for i, src in enumerate(sources):
        if src.stream is not None:  # standard input: kept aside, it is read twice
            spool = tempfile.TemporaryFile()
            shutil.copyfileobj(src.stream, spool, 1 << 20)
            sources[i] = Source(src.name, stream=spool)
    r = Redactor(hosts)
    summary: dict[str, Any] = {"files": 0, "lines": 0, "cut_lines": 0, "skipped": [], "warnings": [], "written": []}
    try:
        # pass 1: learn hostnames and the input's networks
        for src in sources:
            if spool is not None and src.stream is spool:
                spool.seek(0)
            for _n, line in read_lines(src, ReadStats()):
                r.learn_line(line)
        if spool is not None:
            spool.seek(0)
        r.learn_events(parse_sources(sources).events)
        r._name_map()
        # pass 2: write
        base = _roots(paths)
        dests: dict[str, str] = {}
        for src in sources:
            if spool is not None and src.stream is spool:
                spool.seek(0)
            stats = ReadStats()
            from .flight_recorder import json_lines, load_source

            fr = load_source(src)  # a flight-recorder dump (pickle or JSON): written as JSON, redacted line by line
            if fr is not None:
                stats.files = 1
                lines = iter(enumerate(json_lines(fr), 1))
            else:
                lines = read_lines(src, stats)
            if to_stdout:
                sink = stdout if stdout is not None else sys.stdout.buffer
                n = _write_lines(r, lines, sink)
                dest = "-"
            else:
                if src.path is None:
                    rel = "stdin.log"
                else:
                    rel = os.path.relpath(os.path.abspath(src.path), base)
                    if rel.startswith(".."):
                        rel = os.path.basename(src.path)
                rel = r.path(rel.replace(os.sep, "/"))
                dest = os.path.join(out, *rel.split("/"))  # type: ignore[arg-type]
                if dest in dests:
                    raise RedactError(f"{src.name} and {dests[dest]} would both be written to {dest}")
                if src.path is not None and os.path.exists(dest) and os.path.samefile(dest, src.path):
                    raise RedactError(f"refusing to overwrite the input {src.path}: choose another --out folder")
                first = next(lines, None)
                if first is None and stats.skipped_files:
                    summary["skipped"].extend(stats.skipped_files)
                    continue
                dests[dest] = src.name
                os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
                gz = dest.endswith(".gz") or (src.path is not None and _is_gzip(src.path))
                tmp = dest + ".logdoc-tmp"
                with (gzip.open(tmp, "wb") if gz else open(tmp, "wb")) as fh:
                    n = _write_lines(r, _chain(first, lines), fh)
                os.replace(tmp, dest)
            summary["skipped"].extend(stats.skipped_files)
            summary["warnings"].extend(stats.warnings)
            if stats.files:
                summary["files"] += 1
                summary["lines"] += n
                summary["cut_lines"] += stats.cut_lines
                summary["written"].append((src.name, dest))
    finally:
        if spool is not None:
            spool.close()
    return r, summary


def _chain(first, rest):
    if first is not None:
        yield first
    yield from rest


def _is_gzip(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _write_lines(r: Redactor, lines, sink) -> int:
    n = 0
    buf: list[str] = []
    size = 0
    for _lineno, text in lines:
        t = r.text(text) + "\n"
        buf.append(t)
        size += len(t)
        n += 1
        if size >= 1 << 20:
            sink.write("".join(buf).encode("utf-8", "surrogateescape"))
            buf, size = [], 0
    if buf:
        sink.write("".join(buf).encode("utf-8", "surrogateescape"))
    return n
