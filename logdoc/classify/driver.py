"""Lines of the GPU driver stack refusing to start CUDA, read where no NCCL or PyTorch header reads them.

A rank that cannot start CUDA often says so only through another program's words, before any NCCL
or torch.distributed line: PyTorch's CUDA initialisation (``c10/cuda/CUDAFunctions.cpp``: a warning
``CUDA initialization: Unexpected error from cudaGetDeviceCount(). ... Error 802: system not yet
initialized (Triggered internally at ...)``, or the same words raised), NVML as ``nvidia-smi`` and the
NVIDIA container runtime print its failures (``Failed to initialize NVML: Driver/library version
mismatch``, ``nvidia-container-cli: initialization error: nvml error: driver/library version mismatch``),
``nvidia-smi``'s own "couldn't communicate with the NVIDIA driver" and "No devices were found", and Docker refusing ``--gpus``
without the NVIDIA runtime (``could not select device driver "" with capabilities: [[gpu]]``) or the container toolkit
refusing a GPU the host does not have (``nvidia-container-cli: device error: 2: unknown device``), cuda-samples'
checkCudaErrors (``CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(dev)"``), and
torch.cuda's warning that the build has no kernels for the GPU's architecture (``... with CUDA capability
sm_120 is not compatible with the current PyTorch installation``, ``Found GPU0 ... which is of compute
capability (CC) 12.0``), torch.cuda's ``CUDA unknown error - this may be due to an incorrectly set up environment``
(cudaErrorUnknown at CUDA initialisation), and the NVSwitch Fabric Manager's own failures as its service log
(journalctl, /var/log/fabricmanager.log) prints them: its version check against the driver (``fabric manager NVIDIA
GPU driver interface version 530.30.02 don't match with driver version 530.41.03``), no NVSwitch answering
(``request to query NVSwitch device information from NVSwitch driver failed with error:...``), a bad setting of
its config file, and systemd's ``Failed to start NVIDIA fabric manager service``; and the kernel driver's
own failures beside its Xid lines (``NVRM: ... GPU has fallen off the bus``, ``RmInitAdapter failed!``, a failed probe)
and the NVSwitch driver's SXid errors; cuda-samples' deviceQuery (``cudaGetDeviceCount returned 802`` then
``-> system not yet initialized``: the code is named by the runtime's enum, :data:`_RUNTIME_ERRORS`), torch.cuda's
``CUDA driver initialization failed, you might not have a CUDA gpu`` (cudaErrorInitializationError), and
``nvidia-smi nvlink --status`` listing a GPU's NVLink links as ``Link 0: <inactive>``; the container toolkit's own
start-up failures (``nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: ...``: no
driver library on the host; ``requirement error: unsatisfied condition: cuda>=12.8``: the image's CUDA needs a newer
host driver).

Each becomes ``cuda.error`` with ``error`` (the failure's own words, as the CUDA runtime, NVML or
Docker wrote them) and ``context`` (who printed it). What the words mean is the knowledge base's
(knowledge/cuda.yaml); this module only finds them.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

# c10/cuda/CUDAFunctions.cpp (device_count_impl): `Unexpected error from cudaGetDeviceCount(). Did you run some
# cuda functions before calling NumCudaDevices() that might have already set an error? Error <code>: <text>`,
# raised by torch.cuda's lazy init or, from device_count(), warned with `CUDA initialization: ` before it and
# c10's ` (Triggered internally at <file>:<line>.)` after it.
_DEVICE_COUNT = lazy_re(r"cudaGetDeviceCount\(\)[^\n]{0,200}?\bError (?P<code>\d{1,4}): (?P<text>[^\n(]{3,200}?)"
                        r"\.?\s*(?:\(Triggered internally at [^\n]*)?$")
# NVML's failures: nvidia-smi's `Failed to initialize NVML: <nvmlErrorString>` and libnvidia-container's
# `nvidia-container-cli: initialization error: nvml error: <nvmlErrorString>: unknown` (the OCI hook's
# words, which Docker and containerd repeat inside their own error).
_NVML = lazy_re(r"(?P<who>Failed to initialize NVML|nvml error|NVML (?:error|failure))\s*:\s*"
                r"(?P<text>[A-Za-z][\w /.'-]{2,80}?)(?::\s*unknown)?\s*[.\"']?\s*(?:$|\\n|[\"'])", flags=0)
# torch.cuda's capability check (torch/cuda/__init__.py, _check_capability), a UserWarning when no kernel of the
# build runs on a GPU: `<name> with CUDA capability sm_120 is not compatible with the current PyTorch installation.`
# (1.8-2.7), `Found GPU0 <name> which is of compute capability (CC) 12.0.` (2.8 on), `Found GPU0 <name> which is
# of cuda capability 3.0.` / `PyTorch no longer supports this GPU because it is too old.` (before 1.8).
# (A viewer's cut after `is not compatible` keeps all the check needs.)
_CAPABILITY = lazy_re(r"(?:(?P<name>[A-Za-z][^\n]{0,80}?) with CUDA capability (?P<sm>sm_\d{2,3}) is not compatible(?: with the current "
                      r"PyTorch installation)?|Found GPU(?P<index>\d{1,3}) (?P<name2>[^\n]{1,80}?) which is of (?:compute|cuda) "
                      r"capability (?:\(CC\) )?(?P<cc>\d{1,2}\.\d{1,2}))")
# nvidia-smi when no NVIDIA kernel driver answers (not loaded, or a container without the devices).
_SMI_NO_DRIVER = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
# nvidia-smi where the driver's user-space library is not there (a container started without the NVIDIA runtime's
# mounts, a driver not installed, or its library not on the loader's path)
_SMI_NO_NVML = "NVIDIA-SMI couldn't find libnvidia-ml.so library"
# nvidia-smi when the driver is loaded but initialised no GPU (its whole output; the kernel log says why:
# `NVRM: ... RmInitAdapter failed!`, a GPU fallen off the bus, a VM without the GPU passed through)
_SMI_NO_DEVICES = "No devices were found"
# nvidia-smi for a GPU that the driver lists but cannot open (`Unable to determine the device handle for
# GPU0000:3B:00.0: Unknown Error`, `... for GPU1: 0000:34:00.0: GPU is lost`).
_SMI_HANDLE = lazy_re(r"Unable to determine the device handle for GPU ?(?P<gpu>[0-9A-Fa-f:.]{1,16})(?:: [0-9A-Fa-f:.]{7,16})?: "
                      r"(?P<text>[A-Za-z][\w .'-]{2,60}?)\.?\s*$")
# cuda-samples' checkCudaErrors (Common/helper_cuda.h, check()), which the samples people run to test a node
# (bandwidthTest, p2pBandwidthLatencyTest, simpleP2P) and programs built on it print:
# `CUDA error at <file>:<line> code=<n>(<cudaError enum name>) "<call>"`.
_HELPER_CUDA = lazy_re(r"CUDA error at (?P<file>[\w./+-]{1,200}):(?P<line>\d{1,6}) code=(?P<code>\d{1,4})\("
                       r"(?P<name>\w{1,60})\) \"(?P<call>[^\"\n]{0,200})\"")
# libnvidia-container's check of the GPUs a container asks for (NVIDIA_VISIBLE_DEVICES, `--gpus device=...`) against
# those NVML enumerates: `nvidia-container-cli: device error: 2: unknown device: unknown` (the OCI hook's words; the
# envelope may have taken the program name)
# libnvidia-container's start-up when the host's driver libraries cannot be loaded or the image's CUDA requirement
# (NVIDIA_REQUIRE_CUDA) is above what the host driver supports, as the OCI hook prints them to stderr and Docker,
# containerd and Kubernetes repeat them inside their own (often escaped) error.
_CLI_LOAD = lazy_re(r"initialization error: load library failed: (?P<lib>[\w.+-]{1,80}): (?P<text>[^\n\\\"':]{3,120})")
_CLI_REQUIRE = lazy_re(r"requirement error: unsatisfied condition: (?P<cond>[^\n\\\"',]{2,120}?)\s*(?:,|:|\\|\"|'|$)")
_CLI_DEVICE = lazy_re(r"(?:nvidia-container-cli(?:\.real)?: )?device error: (?P<device>[^\s:]{1,200}): unknown device\b")
# torch.cuda's initialisation when cudaGetDeviceCount gives cudaErrorUnknown (c10/cuda/CUDAFunctions.cpp), warned with
# `CUDA initialization: ` before it or raised: `CUDA unknown error - this may be due to an incorrectly set up environment,
# e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.`
_CUDA_UNKNOWN = "CUDA unknown error - this may be due to an incorrectly set up environment"
# The NVSwitch Fabric Manager (nv-fabricmanager) and its systemd unit: the version check of its start-up (`don't`,
# `don’t` or `doesn't` by release), an NVSwitch driver that finds no switch, its config file, the unit's failure.
_FM_VERSION = lazy_re(r"fabric manager NVIDIA GPU driver interface version (?P<fm>\d[\w.-]{0,20}) do(?:n['\u2019]?t|esn['\u2019]?t) "
                      r"match with driver version (?P<drv>\d[\w.-]{0,20}?)\.?(?:\s|$)")
_FM_NVSWITCH = lazy_re(r"request to query NVSwitch device information from NVSwitch driver failed with error:\s?"
                       r"(?P<text>[^\n]{1,120})")
_FM_CONFIG = lazy_re(r"fabric manager config file item: (?P<item>\w{1,60}) has an invalid value")
_FM_SERVICE = "Failed to start NVIDIA fabric manager service"
# The kernel driver's own failures beside its Xid lines (dmesg, journalctl -k): a GPU the driver lost
# (`NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.`), one it could not initialise (`NVRM: RmInitAdapter failed!
# (0x26:0x56:1474)`), one its probe rejected (`NVRM: The NVIDIA probe routine failed for 1 device(s).`), and the
# NVSwitch driver's SXid errors (`nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 30 LTSSM Fault Up`).
# A line cut after `GPU has fallen off` is still that GPU lost. The module's start-up (kernel-open/nvidia/nv.c) ends with
# `NVRM: None of the NVIDIA devices were initialized.` when no GPU came up, after a GPU whose BAR the firmware left
# unassigned (`NVRM: BAR1 is 0M @ 0x0 (PCI:0000:0b:00.0)`).
_NVRM = lazy_re(r"NVRM: (?:GPU [0-9A-Fa-f:.]{7,16}: )?(?P<text>GPU has fallen off(?: the bus)?|RmInitAdapter failed!(?: \([0-9a-fx:]{1,40}\))?"
                r"|The NVIDIA probe routine failed for \d{1,4} device\(s\)|None of the NVIDIA devices were initialized"
                r"|BAR\d is 0M @ 0x0(?: \(PCI:[0-9A-Fa-f:.]{7,16}\))?)")
# The resource manager's message for a GPU that reads back all ones (nv_printf: `NVRM: The NVIDIA GPU %04x:%02x:%02x.%x\n`
# `NVRM: (PCI ID: %04x:%04x) installed in this system has\n` `NVRM: fallen off the bus and is not responding to
# commands.\n`), and the probe's for a GPU this driver does not support (`NVRM: The NVIDIA GPU ... (PCI ID: ...)\n NVRM:
# installed in this system is not supported by the\n NVRM: NVIDIA 550.163.01 driver release.`, or `... by open nvidia.ko
# because it does not include the required GPU System Processor (GSP).`). dmesg prints them as three lines or one, so any
# NVRM line that holds the verdict is the GPU's; the lines before it name the GPU only.
_NVRM_GPU = lazy_re(r"NVRM: (?:The NVIDIA GPU (?P<pci>[0-9A-Fa-f:.]{7,16}) )?[^\n]{0,60}?"
                    r"(?P<verdict>fallen off the bus and is not responding|installed in this system is not supported by)")
# The kernel's PCIe Advanced Error Reporting for an NVIDIA GPU's own link (drivers/pci/pcie/aer.c, aer_print_error:
# `nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)`;
# kernels before 5.x say `Uncorrectable`). Corrected errors are the link retrying, not a failure.
_AER_GPU = lazy_re(r"\bnvidia (?P<pci>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): PCIe Bus Error: "
                   r"severity=(?P<sev>Uncorrect(?:ed|able) \((?:Non-)?Fatal\))(?:, type=(?P<type>[\w ]{1,40}))?")
_SXID = lazy_re(r"nvidia-nvswitch\d{0,3}: SXid \(PCI:(?P<pci>[0-9A-Fa-f:.]{7,16})\): (?P<sxid>\d{1,6}), (?P<sev>Non-fatal|Fatal)"
                r"(?P<detail>[^\n]{0,200})")
# cuda-samples' deviceQuery (Samples/1_Utilities/deviceQuery/deviceQuery.cpp): `printf("cudaGetDeviceCount returned %d\n->
# %s\n", (int)error_id, cudaGetErrorString(error_id))`. The number is named by the runtime's cudaError_t (driver_types.h),
# for the codes that mean the driver stack could not start; others keep the number.
_DEVICE_QUERY = lazy_re(r"cudaGetDeviceCount returned (?P<code>\d{1,4})\b")
_RUNTIME_ERRORS = {3: "cudaErrorInitializationError", 35: "cudaErrorInsufficientDriver", 100: "cudaErrorNoDevice",
                   802: "cudaErrorSystemNotReady", 803: "cudaErrorSystemDriverMismatch",
                   804: "cudaErrorCompatNotSupportedOnDevice", 999: "cudaErrorUnknown"}
# torch.cuda's initialisation when cudaGetDeviceCount gives cudaErrorInitializationError (c10/cuda/CUDAFunctions.cpp).
_DRIVER_INIT = "CUDA driver initialization failed"
# nvidia-smi nvlink --status (-s): one line per link, `Link 3: 26.562 GB/s` when up, `Link 3: <inactive>` when down.
_NVLINK_INACTIVE = lazy_re(r"^\s*Link (?P<link>\d{1,2}): <inactive>\s*$")
# Docker's answer to `--gpus` when no NVIDIA runtime / container toolkit is configured (daemon/devices.go).
_DOCKER_NO_GPU = lazy_re(r"could not select device driver \"[^\"]*\" with capabilities: \[\[gpu\]\]")


def classify_driver(line: str) -> Parsed | None:
    """``cuda.error`` for a GPU driver-stack failure printed by PyTorch's CUDA initialisation, NVML
    (nvidia-smi, nvidia-container-cli), nvidia-smi or Docker; None otherwise."""
    if "cudaGetDeviceCount" in line:
        m = _DEVICE_COUNT.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": m["text"].strip(), "context": f"cudaGetDeviceCount() returned error {m['code']}"})
    if "NVML" in line or "nvml error" in line:
        m = _NVML.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": m["text"].strip(), "context": f"NVML ({m['who']})"})
    if "device handle" in line:
        m = _SMI_HANDLE.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": m["text"].strip(), "context": f"nvidia-smi could not open GPU {m['gpu']}"})
    if "capability" in line:
        m = _CAPABILITY.search(line, 0, min(len(line), 2048))
        if m is not None:
            arch = m["sm"] or "sm_" + m["cc"].replace(".", "")
            return Parsed("cuda.error", "WARN", "cuda.error",
                          {"error": f"no kernel of this PyTorch build runs on {(m['name'] or m['name2']).strip()} ({arch})",
                           "context": "torch.cuda's capability check"})
    if "CUDA error at " in line:
        m = _HELPER_CUDA.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": m["name"], "source_location": f"{m['file']}:{m['line']}",
                           "context": f"{m['call'].strip()} returned {m['code']} (cuda-samples' checkCudaErrors)"})
    if "cudaGetDeviceCount returned" in line:
        m = _DEVICE_QUERY.search(line, 0, min(len(line), 2048))
        if m is not None:
            code = int(m["code"])
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": _RUNTIME_ERRORS.get(code, f"CUDA error {code}"), "code": code,
                           "context": f"cudaGetDeviceCount returned {code} (cuda-samples' deviceQuery)"})
    if _DRIVER_INIT in line:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": _DRIVER_INIT, "context": "torch.cuda's initialisation"})
    if "<inactive>" in line:
        m = _NVLINK_INACTIVE.search(line, 0, min(len(line), 256))
        if m is not None:
            return Parsed("cuda.error", "WARN", "cuda.error",
                          {"error": f"NVLink link {m['link']} inactive", "context": "nvidia-smi nvlink --status"})
    if line == _SMI_NO_DEVICES:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": _SMI_NO_DEVICES, "context": "nvidia-smi"})
    if _SMI_NO_DRIVER in line:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": _SMI_NO_DRIVER, "context": "nvidia-smi"})
    if _SMI_NO_NVML in line:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": _SMI_NO_NVML, "context": "nvidia-smi"})
    if "unknown device" in line:
        m = _CLI_DEVICE.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": f"unknown device {m['device']}", "context": "nvidia-container-cli"})
    if "load library failed" in line or "unsatisfied condition" in line:
        parsed = _container_cli(line)
        if parsed is not None:
            return parsed
    if _CUDA_UNKNOWN in line:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": "CUDA unknown error", "context": "torch.cuda's initialisation"})
    if "fabric" in line or "NVSwitch" in line:
        parsed = _fabric_manager(line)
        if parsed is not None:
            return parsed
    if "NVRM: " in line:
        m = _NVRM.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error", {"error": m["text"], "context": "the NVIDIA kernel driver (NVRM)"})
        m = _NVRM_GPU.search(line, 0, min(len(line), 2048))
        if m is not None:
            gpu = f"GPU {m['pci']}" if m["pci"] else "a GPU"
            error = (f"{gpu} has fallen off the bus" if m["verdict"].startswith("fallen")
                     else f"{gpu} is not supported by this driver")
            return Parsed("cuda.error", "ERROR", "cuda.error", {"error": error, "context": "the NVIDIA kernel driver (NVRM)"})
    if "PCIe Bus Error" in line:
        m = _AER_GPU.search(line, 0, min(len(line), 2048))
        if m is not None:
            layer = f", {m['type'].strip()}" if m["type"] else ""
            return Parsed("cuda.error", "ERROR", "cuda.error",
                          {"error": f"PCIe bus error, severity {m['sev']}{layer}", "context": f"the PCIe link of GPU {m['pci']} (AER)"})
    if "SXid" in line:
        m = _SXID.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR" if m["sev"] == "Fatal" else "WARN", "cuda.error",
                          {"error": f"NVSwitch SXid {m['sxid']} ({m['sev']}){m['detail'].rstrip()}",
                           "context": f"the NVSwitch driver (PCI {m['pci']})"})
    if "with capabilities" in line:
        m = _DOCKER_NO_GPU.search(line, 0, min(len(line), 2048))
        if m is not None:
            return Parsed("cuda.error", "ERROR", "cuda.error", {"error": m[0], "context": "docker"})
    return None


def _container_cli(line: str) -> Parsed | None:
    """``cuda.error`` for nvidia-container-cli's load or requirement failure; None otherwise."""
    m = _CLI_LOAD.search(line, 0, min(len(line), 4096))
    if m is not None:
        return Parsed("cuda.error", "ERROR", "cuda.error",
                      {"error": f"load library failed: {m['lib']}: {m['text'].strip()}", "library": m["lib"],
                       "context": "nvidia-container-cli"})
    m = _CLI_REQUIRE.search(line, 0, min(len(line), 4096))
    if m is not None:
        return Parsed("cuda.error", "ERROR", "cuda.error",
                      {"error": f"unsatisfied condition: {m['cond'].strip()}", "requirement": m["cond"].strip(),
                       "context": "nvidia-container-cli"})
    return None


def _fabric_manager(line: str) -> Parsed | None:
    """``cuda.error`` for a failure the NVSwitch Fabric Manager or its service unit printed; None otherwise."""
    m = _FM_VERSION.search(line, 0, min(len(line), 2048))
    if m is not None:
        return Parsed("cuda.error", "ERROR", "cuda.error",
                      {"error": f"fabric manager {m['fm']} does not match driver {m['drv']}", "context": "fabric manager"})
    m = _FM_NVSWITCH.search(line, 0, min(len(line), 2048))
    if m is not None:
        return Parsed("cuda.error", "ERROR", "cuda.error",
                      {"error": f"no NVSwitch answered: {m['text'].strip()}", "context": "fabric manager"})
    m = _FM_CONFIG.search(line, 0, min(len(line), 2048))
    if m is not None:
        return Parsed("cuda.error", "ERROR", "cuda.error",
                      {"error": f"config item {m['item']} has an invalid value", "context": "fabric manager"})
    if _FM_SERVICE in line:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": _FM_SERVICE, "context": "systemd"})
    return None
