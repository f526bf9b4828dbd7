"""nccl-tests' own lines, read where no NCCL header is: its NCCLCHECK / CUDACHECK failures (and the NCCL user
guide's copies of those checks in programs), its device list, result table and rows, its verdict lines and the NCCL it
was built with. :func:`logdoc.classify.bare.classify_bare` calls :func:`classify_tests` for a record that no header
reads."""
from __future__ import annotations

from typing import Any

from ..grammar import Parsed
from ..lazyre import lazy_re
from .torch.transformers import nccl_result_of

# nccl-tests' own lines (NVIDIA/nccl-tests src/common.h, common.cu, util.cu, every release):
# CUDACHECK / NCCLCHECK failures, `# Out of bounds values : N FAILED|OK`, `# Avg bus bandwidth : X`,
# `# NCCL Tests compiled with NCCL M.m` (2017-2019; `1.0` stands for any NCCL 1.x) and
# `# nccl-tests version V nccl-headers=CODE nccl-library=CODE` (2025-).
# The NCCL user guide's examples print the same checks as `Failed, NCCL error file:line 'error'` and
# `Failed: Cuda error file:line 'error'` (their NCCLCHECK / CUDACHECK macros, copied into many
# programs, which keep the wording and put their own source paths in it); a paste may lose the closing quote.
_TESTS_NCCL_FAILURE = lazy_re(
    r"^(?:(?P<host>[^\s:']+): )?(?:(?:Test )?NCCL failure|Failed, NCCL error) (?P<loc>[\w./+-]+:\d+) "
    r"'(?P<error>[^'/]*?)(?: / (?P<last>[^']*))?(?:'|$)")
_TESTS_CUDA_FAILURE = lazy_re(
    r"^(?:(?P<host>[^\s:']+): )?(?:Cuda failure|Failed: Cuda error) (?P<loc>[\w./+-]+:\d+) '(?P<error>[^']*)(?:'|$)")
# nccl-tests' device list (rank 0 prints one line per rank of the whole run, src/common.cu):
# `#  Rank  0 Group  0 Pid  70918 on node1 device  0 [0x01] NVIDIA A100-SXM4-80GB`
# (nccl-tests before the Group column: `#   Rank  0 Pid   1688 on    node1 device  0 [0x18] <gpu>`)
# (the single-process nccl-tests of 2016-2017: `#   Rank  0 uses device  0 [0x05] Tesla M40 24GB`, no pid nor host);
# rccl-tests prints the full PCI address: `[0000:2f:00.0]`. A paste may turn the leading `#` into `>`.
_TESTS_DEVICE = lazy_re(r"^[#>]?\s*Rank\s+(?P<rank>\d+) (?:(?:Group\s+(?P<group>\d+) )?Pid\s+(?P<pid>\d+) on\s+(?P<host>\S+)\s+"
                           r"device|uses device)\s+(?P<device>\d+) \[(?P<bus>0x[0-9a-fA-F]+|[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
                           r"[0-9a-fA-F]{2}\.[0-9a-fA-F])\]\s*(?P<gpu>.*?)\s*$")
# nccl-tests' result table header, printed once before the first row (src/common.cu): the newer
# `#       size         count      type   redop    root     time   algbw   busbw #wrong ...` and the
# older `#      bytes             N    type      op     time  algbw  busbw      res ...`.
_TESTS_TABLE = lazy_re(r"^[#>]?\s*(?:size\s+count|bytes\s+N)\s+type\s+.*\btime\s+algbw\s+busbw\b")
# nccl-tests' result rows (src/common.cu): size, count, type, [redop, [root,]] then per placement (out of place,
# in place) time, algbw, busbw and the check: the largest absolute error as `%6.0e` (2017-2021) or the
# number of wrong values, `#wrong` (2022-); `N/A` where the test skips the check.
_TESTS_ROW = lazy_re(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<dtype>[a-z][a-z0-9_]*)\s+(?:(?P<redop>sum|prod|max|min|avg|none|"
    r"mulsum|premulsum)\s+)?(?:(?P<root>-?\d+)\s+)?(?P<t1>\d+(?:\.\d+)?)\s+(?P<alg1>\d+\.\d+|N/A)\s+"
    r"(?P<bus1>\d+\.\d+|N/A)\s+(?P<err1>\d(?:\.\d+)?e[+-]\d+|\d+|N/A)\s+(?P<t2>\d+(?:\.\d+)?)\s+"
    r"(?P<alg2>\d+\.\d+|N/A)\s+(?P<bus2>\d+\.\d+|N/A)\s+(?P<err2>\d(?:\.\d+)?e[+-]\d+|\d+|N/A)\s*$")


def _tests_error(text: str) -> float | None:
    return None if text == "N/A" else float(text)


_TESTS_CHECK = lazy_re(r"^#?\s*Out of bounds values\s*:\s*(?P<wrong>\d+)\s+(?P<verdict>OK|FAILED)\b")
_TESTS_BUSBW = lazy_re(r"^#?\s*Avg bus bandwidth\s*:\s*(?P<busbw>[-+\d.eE]+|nan|inf)\s*(?P<verdict>OK|FAILED)?\s*$")
_TESTS_COMPILED = lazy_re(r"^#\s*NCCL Tests compiled with NCCL (?P<v>\d+\.\d+)\s*$")
_TESTS_VERSION = lazy_re(r"^#\s*nccl-tests version (?P<tests>\S+) nccl-headers=(?P<headers>\d+) nccl-library=(?P<library>\d+)")


def _code_version(code: str) -> str:
    """NCCL_VERSION_CODE as printed (22703, or 2403 before 2.9) as `2.27.3`."""
    n = int(code)
    if n >= 10000:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def classify_tests(line: str) -> Parsed | None:
    """A line that nccl-tests prints itself (its failure checks, its verdict lines, the NCCL it was
    built with); None otherwise (NCCL 1.x WARN lines are :mod:`logdoc.classify.bare`'s)."""
    if "NCCL failure" in line or "NCCL error" in line:
        m = _TESTS_NCCL_FAILURE.match(line)
        if m is not None:
            f: dict[str, Any] = {"source_location": m["loc"], "error": m["error"].strip()}
            if (result := nccl_result_of(f["error"])) is not None:  # ncclGetErrorString's text, in any capitals
                f["nccl_result"] = result
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
    if " Pid " in line and "device" in line or "uses device" in line:
        m = _TESTS_DEVICE.match(line)
        if m is not None:
            f = {"test_rank": int(m["rank"]), "group": int(m["group"] or 0), "device": int(m["device"]),
                 "bus": m["bus"], "gpu": m["gpu"]}
            if m["pid"] is not None:
                f.update(test_pid=int(m["pid"]), test_host=m["host"])
            return Parsed("nccltests.device", "INFO", "nccltests.device", f)
    if "algbw" in line:
        m = _TESTS_TABLE.match(line)
        if m is not None:
            return Parsed("nccltests.table", "INFO", "nccltests.table", {})
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
    return None
