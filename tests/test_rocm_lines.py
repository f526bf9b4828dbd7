"""ROCm's own failure lines (logdoc/classify/rocm.py reads them; knowledge/cuda.yaml LD835/LD836 explain them), and
JAX's coordination-service barrier timeout (knowledge/rendezvous.yaml LD622)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.rocm import classify_rocm
from logdoc.pipeline import parse_sources


def _first(text: str) -> dict | None:
    got = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return got[0] if got else None


@pytest.mark.parametrize("line, error", [
    (":0:rocdevice.cpp            :2673: 1263352162 us: 21870: [tid:0x7f64e3eff640] Device::callbackQueue aborting with"
     " error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal"
     " address. code: 0x29", "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the"
     " largest legal address"),
    ("Memory access fault by GPU node-4 (Agent handle: 0x152e220) on address (nil). Reason: Page not present or supervisor"
     " privilege.", "Memory access fault by GPU node-4: Page not present or supervisor privilege"),
    ("Unable to open /dev/kfd read-write: No such file or directory", "Unable to open /dev/kfd: No such file or directory"),
    ('docker: Error response from daemon: error gathering device information while adding custom device "/dev/dri":'
     ' no such file or directory.', "cannot add device /dev/dri: no such file or directory"),
])
def test_rocm_lines_are_read(line, error):
    p = classify_rocm(line)
    assert p is not None and p.kind == "cuda.error" and p.fields["error"] == error


@pytest.mark.parametrize("line", [
    "Able to open /dev/kfd read-write",
    "ls -l /dev/kfd",
    "hsa_status_t status = HSA_STATUS_SUCCESS;",
])
def test_rocm_reader_leaves_other_lines(line):
    assert classify_rocm(line) is None


@pytest.mark.parametrize("text, rule", [
    ("[rank1]: RuntimeError: HIP error: no ROCm-capable device is detected\n", "LD835"),
    ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
     "Failed to get user name to check for video group membership\n", "LD835"),
    ("Memory access fault by GPU node-1 (Agent handle: 0x1f829860) on address 0x7a8a4be00000. Reason: Page not present"
     " or supervisor privilege.\nAborted (core dumped)\n", "LD836"),
    ("Traceback (most recent call last):\n  File \"train.py\", line 89, in main\n    jax.distributed.initialize()\n"
     "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect."
     " Timed out task names:\n/job:jax_worker/replica:0/task:1\n", "LD622"),
    ("[rank0]: RuntimeError: HIP error: out of memory\n", "LD839"),
    # rccl-tests' HIPCHECK as ROCm/rccl-tests#16 quotes it (no keyword but its own: logdoc/read/prefilter.py)
    ("Test HIP failure common.cu:1129 'hipErrorInvalidDevice'\n", "LD810"),
    ("smc01: Test HIP failure common.cu:1004 'no ROCm-capable device is detected'\n", "LD835"),
    ("[rank3]: torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of"
     " 191.98 GiB of which 1.02 GiB is free.\n", "LD839"),
])
def test_programs_name_the_cause(text, rule):
    d = _first(text)
    assert d is not None and d["id"] == rule


def test_out_of_resources_is_not_called_a_memory_fault():
    d = _first("hsa api call failure at: rocminfo.cc:1102\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime"
               " failed to allocate the necessary resources.\n")
    assert d is None or d["id"] != "LD836"


def test_rccl_tests_hipcheck_is_read_as_it_is_printed():
    """rccl-tests' `Test HIP failure` holds no other prefilter keyword: without its own the line was never parsed
    (only the reading of the silent log's residue found it)."""
    r = parse_sources([("x.log", "smc01: Test HIP failure common.cu:1129 'hipErrorInvalidDevice'\n")])
    assert [(e.kind, e.fields.get("error"), e.host) for e in r.events] == [
        ("cuda.error", "hipErrorInvalidDevice", "smc01")]


def test_rccl_messages_are_read_by_the_cuda_names_nccl_prints():
    """RCCL is NCCL's source through hipify, which renames the CUDA calls in the message texts too (ROCm/rccl#908:
    `transport/p2p.cc:220 NCCL WARN hipIpcGetMemHandle failed : invalid argument`): NCCL's format reads it."""
    from logdoc import nccl
    from logdoc.events import Envelope
    line = ("sharbox-ultra:204802:204836 [1] /home/elias/rccl/build/release/hipify/src/transport/p2p.cc:220 NCCL WARN "
            "hipIpcGetMemHandle failed : invalid argument")
    p = nccl.classify(line, Envelope())
    assert p.template == "nccl.3ee23366" and p.fields["args"] == ["invalid argument"]
    assert _first(line + "\n")["id"] == "LD883"
    # a word that only begins with `hip` is no HIP call
    assert nccl.match_hipified("hipster failed : x") is None


# RCCL 2.27.7 (ROCm 7.2) prints its fatal errors in a class of their own, at every debug level (ROCm/rccl#2002):
# `host:pid:tid [dev] [FATAL ERROR]: ` then the message, with no source location and no word NCCL (RCCL's debug.cc)
_FATAL_IB = ("node-1:2421:2428 [0] [FATAL ERROR]: NET/IB : Got completion from peer 10.0.0.3<43221> with status=12"
             " opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.3")
_WARN_IB = _FATAL_IB.replace("[FATAL ERROR]: ", "transport/net_ib.cc:1295 NCCL WARN ")


def test_rccl_fatal_error_class_is_an_nccl_line():
    from logdoc import nccl
    from logdoc.events import Envelope
    env = Envelope()
    p = nccl.classify(_FATAL_IB, env)
    assert p is not None and (p.kind, p.level, p.fields["dev"]) == ("nccl.warn", "ERROR", 0)
    assert (env.host, env.pid) == ("node-1", 2421)
    assert p.template == nccl.classify(_WARN_IB, Envelope()).template is not None  # the WARN's format reads it
    assert _first(_FATAL_IB + "\n")["id"] == "LD201"
    shm = "node-1:2421:2430 [3] [FATAL ERROR]: Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n"
    assert _first(shm)["id"] == "LD301"


@pytest.mark.parametrize("line", [
    "[FATAL ERROR]: DATABASE_URL environment variable is MISSING!",  # another program's words, no NCCL header
    "-- [FATAL ERROR]: cannot read from json.",
    "node-1:2421:2428 [0] [ERROR]: NET/IB : Got completion from peer 10.0.0.3<43221> with status=12",
])
def test_fatal_error_words_without_rccls_header_are_not_nccl(line):
    from logdoc import nccl
    from logdoc.events import Envelope
    assert nccl.classify(line, Envelope()) is None


# RCCL's fatal-error line whose host:pid:tid a paste or a viewer cut: the device and the class are left
_SHM = "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)"


@pytest.mark.parametrize("line", [f"[3] [FATAL ERROR]: {_SHM}", f"  [3] [FATAL ERROR]: {_SHM}", f":2430 [3] [FATAL ERROR]: {_SHM}"])
def test_rccl_fatal_error_with_its_host_cut_is_read(line):
    r = parse_sources([("x.log", line + "\n")])
    assert [(e.kind, e.level, e.fields.get("dev"), e.rank, e.host) for e in r.events] == [("nccl.warn", "ERROR", 3, None, None)]
    assert r.events[0].template == parse_sources([("x.log", f"n:1:2 [3] misc/shmutils.cc:112 NCCL WARN {_SHM}\n")]).events[0].template
    assert _first(line + "\n")["id"] == "LD301"


@pytest.mark.parametrize("line", [
    "[3] [FATAL ERROR]: DATABASE_URL environment variable is MISSING!",  # the cut form, a message no catalog holds
    "[3] [FATAL ERROR]: could not load config",
    f"[3] [ERROR]: {_SHM}",  # not RCCL's class
    f"[FATAL ERROR]: {_SHM}",  # no device
])
def test_cut_fatal_header_needs_device_and_an_nccl_message(line):
    from logdoc import nccl
    from logdoc.events import Envelope
    assert nccl.classify(line, Envelope()) is None
