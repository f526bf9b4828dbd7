"""The GPU driver stack refusing to start CUDA, in the words of the program that met it
(logdoc/classify/driver.py reads the lines; knowledge/cuda.yaml explains them)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.driver import classify_driver
from logdoc.pipeline import parse_sources

_WARN = ("/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
         "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
         "that might have already set an error? Error {code}: {text} (Triggered internally at "
         "../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0\n")
_RAISED = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
           "NumCudaDevices() that might have already set an error? Error {code}: {text}\n")


def _first(text: str) -> dict | None:
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return got[0] if got else None


@pytest.mark.parametrize("form", [_WARN, _RAISED])
@pytest.mark.parametrize("code, text, rule", [
    (802, "system not yet initialized", "LD804"),
    (803, "system has unsupported display driver / cuda driver combination", "LD840"),
    (804, "forward compatibility was attempted on non supported HW", "LD841"),
])
def test_cuda_initialisation_errors_name_their_cause(form, code, text, rule):
    d = _first(form.format(code=code, text=text))
    assert d is not None and d["id"] == rule


@pytest.mark.parametrize("line, rule, category", [
    ("Failed to initialize NVML: Driver/library version mismatch", "LD840", "fabric_manager_or_driver"),
    ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown",
     "LD840", "fabric_manager_or_driver"),
    ("Failed to initialize NVML: Unknown Error", "LD842", "container_missing_devices"),
    ("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
     "LD843", "container_missing_devices"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.", "LD809", "container_missing_devices"),
    ("RuntimeError: No CUDA GPUs are available", "LD809", "container_missing_devices"),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", "LD844", "fabric_manager_or_driver"),
    # the container toolkit's own start-up failures, bare and inside Docker's error (escaped as runc repeats it)
    ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
     "file: no such file or directory: unknown.", "LD856", "container_missing_devices"),
    ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:349: starting container process "
     "caused \"process_linux.go:449: container init caused \\\"process_linux.go:432: running prestart hook 1 caused "
     "\\\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: "
     "unsatisfied condition: cuda>=10.2, please update your driver to a newer version, or use an earlier cuda "
     "container\\\\\\\\n\\\\\\\"\\\"\": unknown", "LD857", "fabric_manager_or_driver"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0", "LD857", "fabric_manager_or_driver"),
])
def test_driver_stack_lines_name_their_cause(line, rule, category):
    d = _first(line + "\n")
    assert d is not None and (d["id"], d["category"]) == (rule, category)


@pytest.mark.parametrize("line, rule", [
    # cuda-samples' checkCudaErrors, as bandwidthTest, simpleP2P and p2pBandwidthLatencyTest print it
    ('CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"', "LD804"),
    ('CUDA error at p2pBandwidthLatencyTest.cu:112 code=217(cudaErrorPeerAccessUnsupported) '
     '"cudaDeviceEnablePeerAccess(j, 0)"', "LD832"),
    ('CUDA error at simpleP2P.cu:120 code=999(cudaErrorUnknown) "cudaMemcpy(g0, g1, buf_size, cudaMemcpyDefault)"', "LD896"),
])
def test_a_cuda_samples_check_is_read(line, rule):
    parsed = classify_driver(line)
    assert parsed is not None and parsed.kind == "cuda.error" and parsed.fields["error"].startswith("cudaError")
    d = _first(line + "\n")
    assert d is not None and d["id"] == rule


def test_the_gpu_of_a_lost_device_is_named_without_the_separator():
    d = _first("Unable to determine the device handle for GPU1: 0000:34:00.0: GPU is lost\n")
    assert d is not None and d["title"].startswith("The driver cannot open GPU 1: GPU is lost")


@pytest.mark.parametrize("line", [
    "NCCL INFO NVML initialized",                                      # a healthy INFO line's words
    "checked NVML: all 8 GPUs healthy",
    "Unexpected error from the data loader. Error 3: worker exited",   # not cudaGetDeviceCount's words
    "docker: Error response from daemon: Conflict. The container name \"/t\" is already in use.",
])
def test_near_misses_are_not_driver_failures(line):
    assert classify_driver(line) is None


def test_an_error_word_inside_another_word_is_not_a_gloo_io_failure():
    # "already set an error" holds "read" inside "already": not a failed read on a Gloo pair.
    text = _RAISED.format(code=804, text="forward compatibility was attempted on non supported HW")
    ids = [d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]]
    assert ids and "family:gloo_io_error" not in ids


def test_another_initialisation_error_is_a_cuda_error_not_silence():
    d = _first(_RAISED.format(code=999, text="unknown error"))
    assert d is not None and (d["id"], d["title"]) == ("LD816", "CUDA error: unknown error")


_NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


@pytest.mark.parametrize("warning", [
    "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:215: UserWarning: \n"
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU0 Tesla P100-PCIE-16GB "
    "which is of compute capability (CC) 6.0.\n",
    "Found GPU0 GeForce GTX 770 which is of cuda capability 3.0.\n    PyTorch no longer supports this GPU because it is too old.\n",
])
def test_a_build_without_the_gpus_architecture(warning):
    """torch.cuda's capability warning in each release's words: a warning alone (it can be cosmetic: PTX may run),
    the root cause of a `no kernel image` error beside it, which outranks the generic CUDA error."""
    alone = _first(warning)
    assert alone is not None and alone["id"] == "LD848" and alone["severity"] == "warning"
    both = _first(warning + _NO_KERNEL)
    assert both is not None and both["id"] == "LD849" and both["category"] == "cuda_error_other"


def test_no_kernel_image_alone_stays_the_generic_cuda_error():
    first = _first(_NO_KERNEL)
    assert first is not None and first["id"] != "LD849"


_FM_JOURNAL = (
    "Feb 24 09:28:18 node7 systemd[1]: Starting NVIDIA fabric manager service...\n"
    "Feb 24 09:28:28 node7 nv-fabricmanager[1507]: fabric manager NVIDIA GPU driver interface version 535.183.01 "
    "{dont} match with driver version 535.216.01. Please update with matching NVIDIA driver package.\n"
    "Feb 24 09:28:28 node7 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE\n"
    "Feb 24 09:28:28 node7 systemd[1]: Failed to start NVIDIA fabric manager service.\n")


@pytest.mark.parametrize("dont", ["don't", "doesn't", "don\u2019t"])
def test_the_fabric_managers_version_check_names_both_versions(dont):
    """The Fabric Manager's start-up check against the driver, in each release's spelling, is the root cause; systemd's
    failure of the unit is the same failure."""
    d = _first(_FM_JOURNAL.format(dont=dont))
    assert d is not None and (d["id"], d["category"]) == ("LD817", "fabric_manager_or_driver")
    assert "535.183.01" in d["title"] and "535.216.01" in d["title"]


@pytest.mark.parametrize("line, rule", [
    ("Nov 15 14:15:47 node1 nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver "
     "failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]", "LD818"),
    ("10.10.10.10: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value", "LD817"),
    ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: CUDA unknown error - "
     "this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program "
     "start. Setting the available devices to be zero. (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:109.)", "LD819"),
    ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable "
     "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.", "LD819"),
])
def test_fabric_manager_and_cuda_start_up_lines_are_read(line, rule):
    parsed = classify_driver(line)
    assert parsed is not None and parsed.kind == "cuda.error"
    d = _first(line + "\n")
    assert d is not None and (d["id"], d["category"]) == (rule, "fabric_manager_or_driver")


@pytest.mark.parametrize("line", [
    "Feb 24 09:28:18 node7 systemd[1]: Starting NVIDIA fabric manager service...",
    "Feb 24 09:28:28 node7 nv-fabricmanager[1507]: Successfully configured all the available NVSwitches to route GPU "
    "NVLink traffic.",
    "fabric manager NVIDIA GPU driver interface version 535.183.01",      # cut before the verdict
])
def test_a_healthy_fabric_manager_is_not_a_failure(line):
    assert classify_driver(line) is None


@pytest.mark.parametrize("line, rule", [
    ("[  612.338230] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", "LD828"),
    ("[   14.123456] NVRM: RmInitAdapter failed! (0x26:0x56:1474)", "LD828"),
    ("[   10.000000] NVRM: The NVIDIA probe routine failed for 1 device(s).", "LD828"),
    ("[  100.100000] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 30 LTSSM Fault Up", "LD829"),
])
def test_the_kernel_drivers_own_failures_beside_its_xids(line, rule):
    d = _first(line + "\n")
    assert d is not None and (d["id"], d["category"]) == (rule, "fabric_manager_or_driver")


# The resource manager prints a lost GPU as three lines (nv_printf with embedded newlines); dmesg indents the
# continuations under the time, journalctl repeats its prefix, a paste may join them. A GPU the driver release does not
# support, no GPU initialised at all, and a GPU the firmware gave no BAR window are the same family.
@pytest.mark.parametrize("text", [
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
    "               NVRM: fallen off the bus and is not responding to commands.\n",
    "Feb 14 05:03:45 node-1 kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
    "Feb 14 05:03:45 node-1 kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
    "Feb 14 05:03:45 node-1 kernel: NVRM: fallen off the bus and is not responding to commands.\n",
    "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2d04) installed in this system has\n"
    "NVRM: fallen off the bus and is not responding to commands.\n",
    "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1e07) installed in this system has fallen off the bus and is not "
    "responding to commands.\n",
    "[    8.299192] NVRM: The NVIDIA GPU 0000:3c:00.0 (PCI ID: 10de:2d04)\n"
    "               NVRM: installed in this system is not supported by the\n"
    "               NVRM: NVIDIA 550.163.01 driver release.\n",
    "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:0b:00.0)\nnvidia: probe of 0000:0b:00.0 failed with error -1\n",
    "[    8.299262] NVRM: None of the NVIDIA devices were initialized.\n",
])
def test_a_gpu_the_kernel_driver_lost_or_could_not_take(text):
    d = _first(text)
    assert d is not None and (d["id"], d["category"]) == ("LD828", "fabric_manager_or_driver")


@pytest.mark.parametrize("line", [
    "[  612.338221] NVRM: GPU at PCI:0000:3b:00: GPU-8e6a0a0c-1d2f-4b5c-9a7e-1234567890ab",
    "[   10.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05",
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
    "NVRM: (PCI ID: 10de:26b5) installed in this system has",
    "NVRM: BAR1 is 256M @ 0x38000000000 (PCI:0000:0b:00.0)",
    "a GPU that has fallen off the bus and is not responding to commands is a hardware fault",   # no NVRM
])
def test_the_kernel_drivers_healthy_lines_are_not_failures(line):
    assert classify_driver(line) is None


def test_a_non_fatal_sxid_is_no_root_cause():
    parsed = classify_driver("[  100.1] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress "
                             "non-posted PRIV error")
    assert parsed is not None and parsed.level == "WARN"
    assert _first("[  100.1] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted "
                  "PRIV error\n") is None


@pytest.mark.parametrize("text, rule", [
    ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
     "cudaGetDeviceCount returned 802\n-> system not yet initialized\nResult = FAIL\n", "LD804"),
    ("cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected\nResult = FAIL\n", "LD809"),
    ("cudaGetDeviceCount returned 3\n-> initialization error\nResult = FAIL\n", "LD837"),
    ("E tensorflow/stream_executor/cuda/cuda_driver.cc:390] failed call to cuInit: CUDA_ERROR_NOT_INITIALIZED:"
     " initialization error\n", "LD837"),
    ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: CUDA driver"
     " initialization failed, you might not have a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)\n",
     "LD809"),
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n\t Link 0: <inactive>\n\t Link 1: <inactive>\n", "LD838"),
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is "
     "properly installed and present in your system.\nPlease also try adding directory that contains libnvidia-ml.so to "
     "your system PATH.\n", "LD809"),
    ("Failed to initialize NVML: Insufficient Permissions\n", "LD8072"),
    ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:367: starting container process "
     "caused: process_linux.go:495: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , "
     "stderr: nvidia-container-cli: initialization error: nvml error: insufficient permissions: unknown.\n", "LD8072"),
])
def test_other_tools_words_for_a_driver_that_did_not_start(text, rule):
    d = _first(text)
    assert d is not None and d["id"] == rule


def test_device_query_names_the_code_and_leaves_active_links():
    p = classify_driver("cudaGetDeviceCount returned 35")
    assert p is not None and p.fields["error"] == "cudaErrorInsufficientDriver" and p.fields["code"] == 35
    assert classify_driver("\t Link 0: 26.562 GB/s") is None


@pytest.mark.parametrize("line, error", [
    ("nvidia-container-cli: initialization error: load library failed: libcuda.so.1: cannot open shared object file: "
     "no such file or directory: unknown.", "load library failed: libcuda.so.1: cannot open shared object file"),
    ("stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver",
     "unsatisfied condition: cuda>=12.8"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0\\\\n\\\"", "unsatisfied condition: cuda >= 9.0"),
])
def test_the_container_toolkits_failures_are_read(line, error):
    parsed = classify_driver(line)
    assert parsed is not None and parsed.fields["error"] == error and parsed.fields["context"] == "nvidia-container-cli"


def test_a_library_that_python_cannot_load_is_not_the_toolkits():
    assert classify_driver("ImportError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory") is None


def test_an_xid_45_that_names_a_hardware_xid_is_that_hardware_event():
    """Xid 45 is the driver's cleanup of a process's channels; drivers since the 5xx releases say what made it
    (`caused by previous Xid 149`). A hardware cause is the root cause (LD8070), not "a GPU program fault" (LD807);
    a program-fault cause, or none named, stays LD807."""
    hw = ("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n"
          "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145\n")
    d = _first(hw)
    assert d is not None and (d["id"], d["category"]) == ("LD8070", "fabric_manager_or_driver")
    assert "Xid 149" in d["title"]
    for line in ("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 13",
                 "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001"):
        d = _first(line + "\n")
        assert d is not None and d["id"] == "LD807"


@pytest.mark.parametrize("line, device, access", [
    ("[  512.123456] nvidia 0000:41:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0027 address=0x7f2a00000 "
     "flags=0x0020]", "0000:41:00.0", "write"),
    ("AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x001d address=0x000000000637c000 flags=0x0000]",
     "41:00.0", "read"),
    ("[  600.000000] DMAR: [DMA Read NO_PASID] Request device [41:00.0] fault addr 0x7f2a00000 [fault reason 0x06] PTE "
     "Read access is not set", "41:00.0", "read"),
])
def test_an_iommu_fault_of_either_vendor_is_a_blocked_peer_to_peer_dma(line, device, access):
    """The AMD IOMMU's page-fault report (drivers/iommu/amd/iommu.c) is read like Intel's DMAR fault: a DMA the
    IOMMU blocked, LD877; its flags say a write (EVENT_FLAG_RW). In a long log too, where only the prefilter's
    keywords let a line through (Intel's through " fault", AMD's through "_FAULT")."""
    d = _first(line + "\n")
    assert d is not None and (d["id"], d["category"]) == ("LD877", "p2p_acs_iommu_hang")
    assert device in d["title"] and access in d["title"]
    filler = "".join(f"step {i} | loss 2.{i % 97:02d} | lr 3e-4\n" for i in range(30000))
    evs = parse_sources([("job.log", filler + line + "\n" + filler)]).events
    faults = [e for e in evs if e.kind == "kernel.iommu_fault"]
    assert len(faults) == 1 and faults[0].fields["device"] == device and faults[0].line == 30001


@pytest.mark.parametrize("line", [
    "[Thu Jan  4 23:12:54 2024] ahci 0000:28:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0035 "
    "address=0x7fffff00000 flags=0x0000]",
    "xhci_hcd 0000:02:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000f address=0xff00ffffffefe000 flags=0x0000]",
    "AMD-Vi: Interrupt remapping enabled",
])
def test_an_iommu_fault_of_a_disk_or_usb_controller_is_not_the_jobs(line):
    assert _first(line + "\n") is None


def test_an_uncorrected_pcie_error_on_a_gpus_link_is_a_hardware_fault():
    """The kernel's AER report for a device of the nvidia driver (drivers/pci/pcie/aer.c): an uncorrected error is
    the GPU's link failing (LD8071); a corrected one, or one of another device or of the root port, is not."""
    text = ("[ 1234.567890] pcieport 0000:00:01.1: AER: Uncorrected (Fatal) error received: 0000:41:00.0\n"
            "[ 1234.567900] nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
            "(Receiver ID)\n")
    d = _first(text)
    assert d is not None and (d["id"], d["category"]) == ("LD8071", "fabric_manager_or_driver")
    assert "0000:41:00.0" in d["explanation"]
    for line in ("nvidia 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
                 "nvme 0000:02:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)"):
        assert _first(line + "\n") is None
