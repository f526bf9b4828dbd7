"""NCCL's messages standing without their header, and the entry point for a record no header reads.

A WARN message pasted alone, quoted after ``Last error:`` or in an exception, cut at either end,
retold in short, an INFO message whose header was cut down to its level word, a channel connection
line without its lead, NCCL 1.x and 2.0-2.2 WARN lines: each is read against NCCL's catalog and
taken only when the format says enough (:data:`BARE_MIN_LITERAL`, :data:`BARE_MIN_LED`). When no
NCCL message reads the line, :func:`classify_bare` asks the readers of other programs' lines
(:mod:`logdoc.classify.neighbours`). Lines with an NCCL header are :mod:`logdoc.nccl`'s."""
from __future__ import annotations

from typing import Any

from ..envelope import has_huge_number
from ..grammar import Parsed
from ..lazyre import lazy_re
from ..nccl import read_message
from ..templates import BARE_MIN_LITERAL, match_net_variant, nccl_catalog
from .neighbours import (classify_caught_signal, classify_cqe_dump, classify_cuda_driver_error, classify_cuda_text, classify_envoy,
                         classify_errno_line, classify_iommu_fault, classify_signal_report,
                         classify_launcher_exit, classify_ray_store, classify_stack_frame,
                         classify_ucx_error, classify_verbs, classify_verbs_provider)
from .nccltests import classify_tests
from .container import classify_container, classify_docker_run
from .hostcheck import classify_hostcheck
from .ompi import classify_ompi_signal
from .native import classify_native
from .driver import classify_driver
from .envinfo import classify_envinfo, classify_ldconfig
from .p2ptest import classify_p2p_test
from .perftest import classify_perftest
from .godial import classify_go_net
from .rocm import classify_rocm
from .frameworks import classify_framework


_BARE_HEAD = lazy_re(r"(?:(?P<loc>[\w./+-]+\.(?:cc|c|cu|cpp|h|hpp):\d+) )?WARN ")
BARE_MIN_LED = 12
# NCCL 1.x printed `WARN file:line msg` (the location after the level: src/core.h's WARN macro);
# NCCL 2.0-2.2 put it before (`misc/ibvwrap.cu:60 WARN ...`, :data:`_BARE_HEAD`).
_NCCL1_WARN = lazy_re(r"^WARN (?P<loc>(?:src/)?[\w./+-]+\.(?:cu|h|cc|cpp):\d+) (?P<msg>\S.*)$")


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
        if parsed is None:
            parsed = classify_signal_report(first)
        if parsed is None and "Signal: " in first:
            parsed = classify_ompi_signal(first)
        if parsed is None and ("nccl" in first or "gloo::" in first or "segfault at" in first or " received signal SIG" in first
                               or first.startswith("Program terminated with signal")):
            parsed = classify_native(first)
        if parsed is None and "distributed_c10d.py:" in first:
            parsed = classify_stack_frame(first)
        if parsed is None and "memory request exceeds" in first:
            parsed = classify_ray_store(first)
        if parsed is None and ("envoy" in first or "][source/" in first or "] [source/" in first):
            parsed = classify_envoy(first)
        if parsed is None and ("exits with return code" in first or "Exited with exit code" in first or "'] exits" in first):
            parsed = classify_launcher_exit(first)
        if parsed is None and "got completion with error" in first:
            parsed = classify_cqe_dump(first)
        if parsed is None and "device-specific driver" in first:
            parsed = classify_verbs_provider(first)
        if parsed is None and ("UCX" in first or first.startswith("mm_")):
            parsed = classify_ucx_error(first)
        if parsed is None and "open files" in first:
            parsed = classify_errno_line(first)
        if parsed is None and "CUDA_ERROR_" in first:
            parsed = classify_cuda_driver_error(first)
        if parsed is None and ("DMAR" in first or "AMD-Vi" in first):
            parsed = classify_iommu_fault(first)
        if parsed is None and (first.startswith("Verification error @ ") or first.startswith("Device=")):
            parsed = classify_p2p_test(first)
        if parsed is None and ("Couldn't " in first or " QP" in first):
            parsed = classify_perftest(first)
        if parsed is None and ("lookup " in first or "dial " in first):
            parsed = classify_go_net(first)
        if parsed is None:
            parsed = classify_driver(first)
        if parsed is None and ("HSA_STATUS_ERROR" in first or "access fault" in first or "/dev/kfd" in first or "/dev/dri" in first):
            parsed = classify_rocm(first)
        if parsed is None and ("JAX distributed service" in first or "remote daemon" in first or "oordination" in first
                               or "MPI_ABORT was invoked" in first or "non-zero status" in first
                               or "terminated normally, but" in first or first.startswith(("Process name: [[", "Container rank "))
                               or " died" in first or "Shard " in first or "sigquit from a child process" in first or "broadcast block" in first
                               or "remainder of ranks" in first or "Custom allreduce" in first or "recommended minimum" in first
                               or "Barrier timed out" in first or "heartbeat timeout" in first or "are unhealthy" in first
                               or "Shutdown barrier" in first or "Barrier failed" in first or "ID mismatch" in first
                               or "registration failed" in first or "check alive failed" in first or "has been shut down" in first
                               or "StartAbort" in first or "Aborting Ring" in first
                               or first.startswith("Additional GRPC error information from remote target /job:")
                               or first.lstrip().startswith(("DEADLINE_EXCEEDED: ", "UNAVAILABLE: "))):
            # (a stall report's rank lines, the tasks a heartbeat report names)
            parsed = classify_framework(text if "remainder of ranks" in first or "unhealthy" in first else first)
        if parsed is None and first.startswith("libnccl.so") and "\n" in text:
            parsed = classify_ldconfig(text.lstrip())  # (ldconfig's tab-indented lines are one record)
        if parsed is None:
            parsed = classify_envinfo(first)
        if parsed is None:
            parsed = classify_container(first)
        if parsed is None and " run " in first and "--gpus" in text:
            parsed = classify_docker_run(text)
        if parsed is None:
            parsed = classify_hostcheck(first)
        if parsed is None and "\n" in text:
            # a command's indented output joined as one record (ibstat's and ibv_devinfo's port lines are
            # tab-indented, which continues a record): a line of it that says something about the host
            for line in text.split("\n", 64)[1:64]:
                parsed = classify_hostcheck(line.strip())
                if parsed is not None:
                    break
    return parsed


# A line that a network plugin printed through NCCL's logger (`NET/<plugin> ...`, the lead every net
# plugin's messages carry: NET/OFI, NET/UCX, NET/IB, NET/Socket) and that says something failed. The
# catalog holds NCCL's own formats, not the plugins'; INFO lines a plugin prints while it loads
# (`NET/OFI Selected provider is efa`) say no such thing. aws-ofi-nccl's WARNs also say `Couldn't` (its INFO
# lines write `Could not`), `requires at least` (libfabric) and `Insufficient` (devices).
_PLUGIN_FAILURE = lazy_re(r"NET/[A-Za-z][\w-]*\s?:?\s.*?(?:\b(?:error|[Ff]ailed|[Ff]ailure|[Uu]nable to|[Cc]annot|"
                          r"[Aa]bort(?:ed|ing)?|[Cc]ouldn't|requires at least|[Ii]nsufficient)\b)")


def _classify_nccl1(line: str) -> Parsed | None:
    """An NCCL 1.x WARN line (``WARN file:line msg``): ``nccl.warn`` with ``header: nccl1``; None otherwise."""
    if line.startswith("WARN "):
        m = _NCCL1_WARN.match(line)
        if m is not None:
            return Parsed("nccl.warn", "WARN", "nccl.warn",
                          {"header": "nccl1", "code_location": m["loc"], "message": m["msg"]})
    return None


def _classify_bare(text: str) -> Parsed | None:
    """A WARN message of NCCL's catalog standing without any header (pasted alone, quoted after
    ``Last error:``, inside an exception): ``nccl.warn`` with ``header: none``, or None.
    Only the first line is read (a WARN is one line). nccl-tests' own lines and NCCL 1.x WARN
    lines are read here too (:func:`~logdoc.classify.nccltests.classify_tests`,
    :func:`_classify_nccl1`), and so is an INFO message whose header was cut down to its level word
    (``INFO NET/IB : ...``: ``nccl.info`` with ``header: none``)."""
    line = text.split("\n", 1)[0].strip()
    if len(line) < BARE_MIN_LED or has_huge_number(line):
        return None
    if "Last NCCL warning" in line:
        q = last_warning_quote(line)
        inner = _classify_bare(q) if q is not None else None
        if inner is not None:
            inner.fields["nested_in"] = "Last NCCL warning(error)"
            return inner
    tests = classify_tests(line)
    if tests is None:
        tests = _classify_nccl1(line)
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
    read = hit is not None and hit[0].specificity >= BARE_MIN_LITERAL  # a format of NCCL's says what it is
    net_fields: dict[str, Any] = {}
    if line.startswith("NET/") and (hit is None or hit[0].specificity < BARE_MIN_LITERAL):
        hit = match_net_variant(line, net_fields) or hit
    if (hit is not None and not info and head is None and "WARN" not in hit[0].levels and "INFO" in hit[0].levels
            and hit[0].specificity >= BARE_MIN_LITERAL):
        info = True  # an INFO message pasted without its header, whose format says enough on its own
    cut = False
    if hit is not None and not info and (
            "WARN" not in hit[0].levels
            or hit[0].specificity < (BARE_MIN_LED if _lead_word(hit[0].format) else BARE_MIN_LITERAL)):
        hit = None
    if hit is None and not info:  # the paste cut the message's start or end as well (logdoc.templates.match_cut)
        from ..templates import match_cut, match_head

        hit = (match_cut(nccl_catalog(), line) or match_head(nccl_catalog(), line)
               or (match_net_variant(line, net_fields, cut=True) if line.startswith("NET/") else None))
        cut = hit is not None
    abridged = False
    if hit is None and not info:
        hit = match_abridged(line)
        abridged = hit is not None
    if hit is None:
        if not info and not read and _PLUGIN_FAILURE.match(line) is not None:
            # a network plugin's own failure (aws-ofi-nccl's `NET/OFI ...`), printed under NCCL's WARN
            # header and read by the rules from its text, as with its header
            return Parsed("nccl.warn", "WARN", None, {"header": "none", "message": line})
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


_OPENINGS: dict[str, list] | None = None


def _warn_openings() -> dict[str, list]:
    """The WARN formats of the catalog by their first :data:`ABRIDGED_MIN` characters (in the catalog's
    order): the formats a line of that opening may repeat, found without a pass over the catalog."""
    global _OPENINGS
    if _OPENINGS is None:
        out: dict[str, list] = {}
        for t in nccl_catalog().templates.values():
            if "WARN" in t.levels and len(t.format) >= ABRIDGED_MIN:
                out.setdefault(t.format[:ABRIDGED_MIN], []).append(t)
        _OPENINGS = out
    return _OPENINGS


def match_abridged(line: str):
    """The WARN format whose opening words ``line`` repeats (:data:`ABRIDGED_MIN`) before it goes its
    own way, with no arguments; None when no format, or formats of more than one message, fit."""
    from ..templates import _CONV

    if len(line) < ABRIDGED_MIN:
        return None
    probe = line[:ABRIDGED_MIN]
    found: dict[str, Any] = {}
    for t in _warn_openings().get(probe, ()):
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
_BARE_CONN = lazy_re(r"(?:Channel (?P<ch>\d+(?:/\d+)?) ?: ?)?(?P<conn>\d+\[[0-9a-fA-F]+\] ?-> ?\d+\[[0-9a-fA-F]+\]"
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
# read as the bare WARN it is. The WARN may hold quotes of its own (`'Cuda failure 'out of memory''`,
# `'Call to ibv_create_cq failed with error 'Cannot allocate memory''`): the quote ends at the first `'`
# that ends the status (a `.`, the end, or `;` before XLA's own notes after it), not at the first `'`.
_LAST_NCCL_WARNING = lazy_re(r"Last NCCL warning\(error\)[^']{0,60}'")
_QUOTE_ENDS = lazy_re(r"'\.?[ \t]*(?:$|;|\n)")
MAX_QUOTED = 4096


def last_warning_quote(line: str) -> str | None:
    """The WARN text XLA's status quotes after ``Last NCCL warning(error) log entry (may be unrelated)``
    (at least 8 characters), or None."""
    q = _LAST_NCCL_WARNING.search(line)
    if q is None:
        return None
    end = _QUOTE_ENDS.search(line, q.end() + 8, min(len(line), q.end() + MAX_QUOTED))
    return line[q.end():end.start()] if end is not None else None


def _lead_word(fmt: str) -> str:
    from ..templates import _lead_word as lead

    return lead(fmt)
