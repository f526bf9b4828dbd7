"""ROCm's own failure lines, read where no NCCL (RCCL) or PyTorch header reads them.

A job on AMD GPUs wraps the same collectives in RCCL, whose lines keep NCCL's header, but the GPU runtime under
it speaks its own words. The HSA runtime (ROCr) and HIP's device layer (``rocdevice.cpp``) report a queue that a
kernel's fault aborted as ``:0:rocdevice.cpp :2673: 1263352162 us: 21870: [tid:0x7f..] Device::callbackQueue
aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the
largest legal address. code: 0x29`` (ROCm 6 and later: ``Callback: Queue 0x7fc2.. aborting with error : ...``),
and any failed HSA call as ``Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: <text>`` (rocminfo). The KFD driver's
page fault on a GPU reaches the program as ``Memory access fault by GPU node-2 (Agent handle: 0x38b6960) on
address 0x1000. Reason: Page not present or supervisor privilege.``. A process (or a container) that cannot open
the compute device says ``Unable to open /dev/kfd read-write: Permission denied`` (rocminfo) or, from Docker,
``error gathering device information while adding custom device "/dev/kfd": no such file or directory``.

Each becomes ``cuda.error`` with ``error`` (the runtime's own words) and ``context`` (who printed it). What the
words mean is the knowledge base's (knowledge/cuda.yaml); this module only finds them.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

# hsa_status_t names (hsa.h, hsa_ext_amd.h) with the text hsa_status_string gives them.
_HSA = lazy_re(r"\b(?P<name>HSA_STATUS_ERROR(?:_[A-Z0-9]{1,30}){0,6})\b(?:\s?:\s?(?P<text>[^\n]{1,200}?))?"
               r"(?:\.?\s*code: (?P<code>0x[0-9a-fA-F]{1,8}))?\s*$")
# The KFD page-fault report (ROCr's handler of HSA_AMD_GPU_MEMORY_FAULT_EVENT).
_FAULT = lazy_re(r"Memory access fault by GPU node-(?P<node>\d{1,4})(?: \(Agent handle: [0-9a-fA-Fx]{1,20}\))?"
                 r"(?: on address (?P<addr>\S{1,24}?)\.?)?(?:\s{1,4}Reason: (?P<reason>[^\n]{1,120}?)\.?)?\s*$")
# rocminfo's open of the compute device, Docker's device lookup for --device=/dev/kfd (or /dev/dri).
_KFD_OPEN = lazy_re(r"Unable to open /dev/kfd(?: read-write)?: (?P<text>[A-Za-z][^\n]{1,80}?)\.?\s*$")
_KFD_DOCKER = lazy_re(r"adding custom device \\?\"(?P<dev>/dev/(?:kfd|dri)[^\"\\\s]{0,40})\\?\": (?P<text>[A-Za-z][^\n\"]{1,80}?)\.?\s*$")


def classify_rocm(line: str) -> Parsed | None:
    """``cuda.error`` for an HSA runtime status error, a GPU memory access fault or a failed open of
    /dev/kfd; None otherwise."""
    if "HSA_STATUS_ERROR" in line:
        m = _HSA.search(line, 0, min(len(line), 2048))
        if m is not None:
            text = (m["text"] or "").strip()
            head = line[:m.start()].strip().rstrip(":").strip()
            f = {"error": f"{m['name']}: {text}" if text else m["name"], "context": head[-200:] or "the ROCm runtime (HSA)"}
            if m["code"]:
                f["code"] = m["code"]
            return Parsed("cuda.error", "ERROR", "cuda.error", f)
    if "access fault" in line:
        m = _FAULT.search(line, 0, min(len(line), 2048))
        if m is not None:
            f = {"error": "Memory access fault by GPU node-" + m["node"] + (f": {m['reason']}" if m["reason"] else ""),
                 "context": "the ROCm runtime (KFD page fault)", "gpu_node": int(m["node"])}
            if m["addr"]:
                f["address"] = m["addr"]
            return Parsed("cuda.error", "ERROR", "cuda.error", f)
    if "/dev/kfd" in line or "/dev/dri" in line:
        m = _KFD_OPEN.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error", {"error": f"Unable to open /dev/kfd: {m['text']}", "context": "rocminfo"})
        m = _KFD_DOCKER.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": f"cannot add device {m['dev']}: {m['text']}", "context": "docker"})
    return None
