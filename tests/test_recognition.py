"""A message is recognised wherever it stands: bare, after a cut or masked header, nested in another.

The NCCL cases are checked on every WARN format of the catalog (grammars/nccl_messages.tsv): each
is rendered (tests/nccl_render.py) and read with its whole header, with the header cut, masked or
gone, and quoted after ``Last error:`` by a PyTorch exception; every reading names the same
catalog template as the whole line does.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from nccl_render import render_message  # noqa: E402

from logdoc import diagnose, kb, nccl, nested  # noqa: E402
from logdoc.classify import bare as nccl_bare, nccltests, neighbours  # noqa: E402
from logdoc.classify import torch as torchlines  # noqa: E402
from logdoc.api import build_report  # noqa: E402
from logdoc.envelope import unwrap  # noqa: E402
from logdoc.events import Envelope, Event  # noqa: E402
from logdoc.pipeline import parse_sources  # noqa: E402
from logdoc.templates import nccl_catalog  # noqa: E402


def _warn_formats():
    seen = set()
    for t in nccl_catalog().templates.values():
        if "WARN" not in t.levels:
            continue
        msg = render_message(t.format)
        if msg in seen or not msg.strip():
            continue
        seen.add(msg)
        loc = t.where.split(",")[0].split(" ")[0]
        yield (loc[4:] if loc.startswith("src/") else loc), msg


WARNS = list(_warn_formats())


def _whole(loc: str, msg: str):
    return nccl.classify(f"gpu-node-07:2345:2400 [1] {loc} NCCL WARN {msg}", Envelope())


def _events(text: str) -> list[Event]:
    return parse_sources([("x.log", text)]).events


def test_the_catalog_has_warn_formats():
    assert len(WARNS) > 500


def test_every_warn_format_after_a_cut_or_masked_header():
    """The same template as with the whole header: host cut, pid masked, header gone."""
    missed = []
    for loc, msg in WARNS:
        whole = _whole(loc, msg)
        assert whole is not None and whole.kind == "nccl.warn"
        for line in (f"-node-07:2345:2400 [1] {loc} NCCL WARN {msg}",
                     f"gpu-node-07.example.com:XXXXXX [1] {loc} NCCL WARN {msg}",
                     f"gpu-node-07:XXXX:XXXX [1] {loc} NCCL WARN {msg}",
                     f"{loc} NCCL WARN {msg}",
                     f"[trainer0|0]: {loc} NCCL WARN {msg}"):
            env, text = unwrap(line)
            p = nccl.classify(text, env)
            if p is None or p.kind != "nccl.warn" or p.template != whole.template:
                missed.append(line)
    assert not missed, missed[:5]


def test_masked_header_keeps_the_host():
    env = Envelope()
    p = nccl.classify("host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with "
                      "110 Connection timed out, QP 0x1a", env)
    assert p.kind == "nccl.warn" and p.fields["header"] == "masked" and p.fields["code_location"] == "ibvwrap.c:262"
    assert env.host == "host-01.example.com" and env.pid is None


def _bare_eligible(template_id: str) -> bool:
    t = nccl_catalog().templates[template_id]
    lead = bool(nccl_bare._lead_word(t.format))
    return t.specificity >= (nccl_bare.BARE_MIN_LED if lead else nccl.BARE_MIN_LITERAL)


def test_every_specific_warn_format_bare_and_nested():
    """Pasted alone, or quoted after `Last error:` by a DistBackendError: the same template, and the
    quoted one is an event of its own linked to its carrier."""
    checked = 0
    missed = []
    for loc, msg in WARNS:
        whole = _whole(loc, msg)
        if (whole.template not in nccl_catalog().templates or not _bare_eligible(whole.template)
                or len(msg.strip()) < nccl_bare.BARE_MIN_LED):
            continue
        checked += 1
        bare = nccl_bare.classify_bare(msg)
        if bare is None or bare.template != whole.template:
            missed.append(("bare", msg))
            continue
        text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
                "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
                "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
                f"Last error:\n{msg}")
        p = torchlines.classify(text, Envelope())
        carrier = Event(p.kind, p.level, "x.log", 10, text, 13, 3, None, None, None, None, None, p.template, p.fields)
        kids = [c for c in nested.children(carrier) if c.kind == "nccl.warn"]
        if not kids or kids[0].template != whole.template:
            missed.append(("nested", msg))
            continue
        k = kids[0]
        assert k.rank == 3 and k.line == 13 and k.fields["nested_line"] == 10
        assert k.fields["nested_kind"] == "torch.nccl_error" and k.fields["nested_in"] == p.template
    assert checked > 400
    assert not missed, missed[:5]


@pytest.mark.parametrize("line", [
    "Hello world, this is my training script",
    "epoch 3 step 200 loss 0.123 error rate 0.4",
    "RuntimeError: shapes do not match",
    "ValueError: invalid literal for int() with base 10: 'x'",
])
def test_ordinary_lines_are_not_bare_nccl(line):
    assert nccl_bare.classify_bare(line) is None


def test_bare_message_in_a_log():
    evs = _events("Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n")
    assert [(e.kind, e.fields.get("header")) for e in evs] == [("nccl.warn", "none")]
    evs = _events("Duplicate GPU detected : rank 7 and rank 5 both on CUDA device 10000\n")
    assert evs[0].kind == "nccl.warn" and evs[0].fields["args"] == ["7", "5", "10000"]


def test_result_string_and_last_error_under_an_unknown_prefix():
    text = ("[trainer0|0]:ncclInternalError: Internal check failed.\n"
            "[trainer0|0]:Last error:\n"
            "[trainer0|0]:Proxy Call to rank 0 failed (Connect)\n")
    evs = _events(text)
    assert [e.kind for e in evs] == ["torch.nccl_error", "nccl.warn"]
    assert evs[0].fields["nccl_result"] == "ncclInternalError"
    assert evs[1].line == 3 and evs[1].fields["nested_kind"] == "torch.nccl_error" and evs[1].local_rank == 0


def test_terminate_what_holds_a_watchdog_timeout():
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: "
            "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=1) ran for 1034 milliseconds before timing out.\n"
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):\n")
    evs = _events(text)
    kinds = [e.kind for e in evs]
    assert kinds == ["torch.terminate", "torch.watchdog_failure", "torch.watchdog_timeout"]
    assert evs[2].fields["timeout_ms"] == 1 and evs[2].fields["nested_kind"] == "torch.watchdog_failure"
    assert evs[1].fields["nested_kind"] == "torch.terminate" and evs[1].line == 2


def test_nesting_is_bounded():
    text = "RuntimeError: " * 50 + "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000"
    p = torchlines.classify(text, Envelope())
    carrier = Event(p.kind, p.level, "x.log", 1, text, 1, None, None, None, None, None, None, p.template, p.fields)
    assert len(nested.children(carrier)) <= nested.MAX_CHILDREN


def test_a_programs_own_rank_print_is_not_a_desync_report():
    assert torchlines.classify("Rank 0: RuntimeError: Expected all tensors to be on the same device", Envelope()) is None
    p = torchlines.classify("Rank 0\n\t - To our best knowledge, ranks [1] are the lagging ranks that caused this "
                            "timeout. They never joined any collectives", Envelope())
    assert p.kind == "torch.desync_report"


def test_vllm_logger_envelope():
    env, msg = unwrap("(VllmWorkerProcess pid=221) ERROR 04-06 20:46:48 [multiproc_worker_utils.py:238] "
                      "torch.distributed.DistBackendError: NCCL error")
    assert msg == "torch.distributed.DistBackendError: NCCL error"
    assert env.pid == 221 and env.level == "ERROR" and env.time == "--04-06T20:46:48"
    env, msg = unwrap("ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]   File \"/a.py\", line 5, in f")
    assert msg == '  File "/a.py", line 5, in f' and env.source == "v1/executor/multiproc_executor.py:597"


def _report(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())


SPAWN_OOM = """Traceback (most recent call last):
  File "train.py", line 10, in <module>
    mp.spawn(main, nprocs=2)
  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 160, in join
    raise ProcessRaisedException(msg, error_index, failed_process.pid)
torch.multiprocessing.spawn.ProcessRaisedException:

-- Process 0 terminated with the following error:
Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap
    fn(i, *args)
  File "train.py", line 5, in main
    x = torch.empty(10**12, device="cuda")
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3725.29 GiB. GPU 0 has a total capacity of 79.15 GiB of which 78.5 GiB is free.
"""


def test_spawned_oom_is_the_top_card():
    r = _report(SPAWN_OOM)
    assert r["diagnoses"][0]["category"] == "cuda_oom"
    assert all(d["category"] != "user_code_exception" for d in r["diagnoses"])


def test_a_named_cause_outranks_an_unnamed_exception_before_it():
    text = ("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    f()\n"
            "KeyError: 'labels'\n" + SPAWN_OOM)
    r = _report(text)
    cats = [d["category"] for d in r["diagnoses"]]
    assert cats[0] == "cuda_oom" and "user_code_exception" in cats


def test_a_quoted_cause_outranks_its_carrier():
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
            "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.17.1\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
            "Last error:\n"
            "Duplicate GPU detected : rank 3 and rank 2 both on CUDA device e2000\n")
    r = _report(text)
    assert r["diagnoses"][0]["category"] == "duplicate_gpu"


def test_vague_needs_another_root():
    assert diagnose._vague({}) == set()


def test_old_nccl_header_without_the_word_nccl():
    env = Envelope()
    p = nccl.classify("e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]", env)
    assert p.kind == "nccl.warn" and p.fields["header"] == "old" and env.host == "e66aa18dc444" and env.pid == 3171
    p = nccl.classify("learngpu060:3728579:3730441 [0] INFO Ring 00 :    0   1   2   3", Envelope())
    assert p.kind == "nccl.channel" and p.fields["ranks"] == [0, 1, 2, 3]  # the ring of a release before 2.5
    assert nccl.classify("2024-01-01 12:00:00 INFO starting epoch 3", Envelope()) is None


def test_old_nccl_header_with_its_host_masked():
    # NVIDIA/nccl#111 (NCCL 2.0): the poster hid host:pid:tid behind words; the device and the location are left
    p = nccl.classify("*server name* [0] include/socket.h:185 WARN Call to connect failed : Connection refused", Envelope())
    assert p.kind == "nccl.warn" and p.fields["header"] == "cut" and p.fields["code_location"] == "include/socket.h:185"
    r = _report("*server name* [0] include/socket.h:185 WARN Call to connect failed : Connection refused\n")
    assert r["diagnoses"][0]["category"] == "firewall_or_unreachable_peer"
    assert nccl.classify("[0] worker started WARN low memory", Envelope()) is None  # no source location
    assert nccl.classify("[12:00:01] INFO loading shard 3", Envelope()) is None


def test_inline_code_residue_is_peeled():
    text = ("`torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "Last error:\n"
            "Error while creating shared memory segment /dev/shm/nccl-F9ffgB (size 9637888)`\n")
    evs = [e for e in _events(text) if e.kind != "nccl.version"]  # (the version it quotes: nested in it)
    assert [e.kind for e in evs] == ["torch.nccl_error", "nccl.warn"]
    assert evs[1].fields["args"][-1] == "9637888"
    assert unwrap("call `foo` now")[1] == "call `foo` now"


FIELD = Path(__file__).parent / "field" / "cases"
PASTES = [SPAWN_OOM,
          "> [7 similar log lines] [W1008 23:40:22.836678340 socket.cpp:767] [c10d] The client socket has failed to "
          "connect to [job-01.internal]:50745 (errno: 22 - Invalid argument).\n",
          "`gpu-1:12:13 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
          "gpu-1:12:13 [0] NCCL INFO Using network Socket`\n"
          "gpu-1:12:13 [0] NCCL INFO Using network Socket\n"
          "gpu-1:XXXX:XXXX [0] misc/shmutils.cc:82 NCCL WARN Error while creating shared memory segment /dev/shm/x (size 1)\n"]


def test_fast_and_plain_paths_agree_on_pastes():
    """The fast path (NCCL lane) reads the new shapes (masked, cut and old headers, quote and code
    residue, nested messages) as the plain path does, on the field corpus and on pastes."""
    from logdoc import fast

    sources = [[(p.name, p.read_text(encoding="utf-8", errors="replace"))]
               for d in sorted(FIELD.iterdir()) if d.is_dir() for p in sorted(d.iterdir()) if p.name != "case.yaml"]
    sources += [[("paste.log", t)] for t in PASTES]
    before = fast.enabled()
    try:
        for src in sources:
            out = []
            for on in (False, True):
                fast.set_enabled(on)
                r = parse_sources(src)
                out.append(([e.to_dict() for e in r.events], r.stats.to_dict()))
            assert out[0] == out[1], src[0][0]
    finally:
        fast.set_enabled(before)


@pytest.mark.parametrize("line,error", [
    (" Test CUDA failure common.cu:1045 'CUDA driver version is insufficient for CUDA runtime version'",
     "CUDA driver version is insufficient for CUDA runtime version"),
    ("dell03: Test CUDA failure common.cu:941 'system not yet initialized'", "system not yet initialized"),
    ("Failed: Cuda error a.cu:12 'invalid device ordinal'", "invalid device ordinal"),
    # rccl-tests' HIPCHECK, with and without the host (ROCm/rccl-tests src/common.h)
    ("Test HIP failure common.cu:1129 'hipErrorInvalidDevice'", "hipErrorInvalidDevice"),
    ("smc01: Test HIP failure common.cu:1004 'no ROCm-capable device is detected'", "no ROCm-capable device is detected"),
])
def test_cudacheck_of_nccl_tests_and_examples(line, error):
    p = torchlines.classify(line, Envelope())
    assert p.kind == "cuda.error" and p.fields["error"] == error


def test_logged_head_of_a_log_and_throw_message():
    """ProcessGroupGloo logs `Rank 2 successfully reached monitoredBarrier, ...` and throws it with
    `\\n Original exception: \\n<gloo error>`: both are the catalog's message (no longer the loose
    `Rank {rank}{desync_report}`)."""
    head = ("Rank 2 successfully reached monitoredBarrier, but received errors while waiting for send/recv from "
            "rank 0. Please check rank 0 logs for faulty rank.")
    p = torchlines.classify(head, Envelope())
    assert p.kind == "torch.monitored_barrier" and p.fields["rank"] == 2
    p = torchlines.classify(head + "\n Original exception: \n[../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
                            "Connection closed by peer [10.0.0.1]:1234", Envelope())
    assert p.kind == "torch.monitored_barrier" and "Connection closed" in p.fields["gloo_error"]
    carrier = Event(p.kind, p.level, "x.log", 1, head, 3, 2, None, None, None, None, None, p.template, p.fields)
    assert [c.kind for c in nested.children(carrier)] == ["gloo.error"]


def test_notices_alone_are_warnings():
    """c10d's IPv6 lookup warning while nothing failed is a warning, not an error; with an exception
    in the log, the same rule stays an error."""
    warn = ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (trainer-0.svc, 8514) cannot be retrieved "
            "(gai error: -2 - Name or service not known).\n")
    r = _report(warn)
    assert r["diagnoses"] and all(d["severity"] != "error" for d in r["diagnoses"])
    r = _report(warn + "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while "
                "trying to connect to (trainer-0.svc, 8514).\n")
    assert any(d["severity"] == "error" for d in r["diagnoses"])


def test_thc_cuda_runtime_error():
    p = torchlines.classify("RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/work/aten/src/THC/"
                            "generic/THCStorage.cu:58", Envelope())
    assert p.kind == "cuda.oom"
    p = torchlines.classify("RuntimeError: cuda runtime error (59) : device-side assert triggered at "
                            "/pytorch/aten/src/THC/generic/THCTensorMath.cu:26", Envelope())
    assert p.kind == "cuda.error" and p.fields["code"] == 59 and p.fields["error"] == "device-side assert triggered"


# --- NCCL-side lines pasted without their header, nccl-tests' own lines, NCCL 1.x (r-nccl)

@pytest.mark.parametrize("line, template", [
    # the network family and the function-named messages hold no other keyword once the header is gone
    ("Could not find NET with id 3", "nccl.36259d28"),
    ("NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, opcode 0, len 0, vendor err 129", None),
    ("ncclSocketInit: connecting to address 10.0.0.2<1234> with family 7 is neither AF_INET(2) nor AF_INET6(10)",
     "nccl.8a290653"),
])
def test_bare_network_messages_reach_the_classifier(line, template):
    evs = _events(line + "\n")
    assert evs and evs[0].kind == "nccl.warn" and evs[0].fields["header"] == "none", evs
    if template:
        assert evs[0].template == template


def test_an_empty_string_conversion_with_its_spaces_collapsed():
    """` %s ` printed with an empty string leaves two spaces; a paste collapses them into one."""
    for text in ("ncclSocketInit: connecting to address  with family 0 is neither AF_INET(2) nor AF_INET6(10)",
                 "ncclSocketInit: connecting to address with family 0 is neither AF_INET(2) nor AF_INET6(10)"):
        p = nccl_bare.classify_bare(text)
        assert p is not None and p.template == "nccl.8a290653" and p.fields["args"][:2] == ["", "0"], text
    p = nccl_bare.classify_bare("ncclSocketInit: connecting to address 10.1.2.3<99> with family 0 is neither AF_INET(2) nor AF_INET6(10)")
    assert p.fields["args"][0] == "10.1.2.3<99>"


def test_info_line_whose_header_was_cut_to_its_level():
    evs = _events("INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n")
    assert [(e.kind, e.template, e.fields.get("header")) for e in evs] == [("nccl.info", "nccl.aa56324f", "none")]
    assert nccl_bare.classify_bare("INFO epoch 3 done") is None


@pytest.mark.parametrize("line, kind, fields", [
    ("node1: Test NCCL failure common.cu:1012 'internal error - please report this issue to the NCCL developers / '",
     "nccltests.nccl_failure", {"source_location": "common.cu:1012", "error": "internal error - please report this issue to the NCCL developers"}),
    ("node1: Test NCCL failure all_reduce.cu:47 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / Cuda failure 2'",
     "nccltests.nccl_failure", {"last_error": "Cuda failure 2"}),
    ("NCCL failure all_reduce.cu:95 'unhandled cuda error'", "nccltests.nccl_failure",
     {"error": "unhandled cuda error", "nccl_result": "ncclUnhandledCudaError"}),
    # ncclGetErrorString's words in other capitals name the same result
    ("node1: Test NCCL failure common.cu:393 'unhandled CUDA error'", "nccltests.nccl_failure",
     {"error": "unhandled CUDA error", "nccl_result": "ncclUnhandledCudaError"}),
    ("node1: Test NCCL failure common.cu:393 'Unhandled System Error'", "nccltests.nccl_failure",
     {"nccl_result": "ncclSystemError"}),
    ("Cuda failure common.cu:733 'CUDA driver version is insufficient for CUDA runtime version'", "cuda.error",
     {"error": "CUDA driver version is insufficient for CUDA runtime version"}),
    ("# Out of bounds values : 12 FAILED", "nccltests.check", {"wrong": 12, "verdict": "FAILED"}),
    (" Out of bounds values : 0 OK", "nccltests.check", {"wrong": 0, "verdict": "OK"}),
    ("# Avg bus bandwidth    : 84.5 ", "nccltests.bandwidth", {"busbw": "84.5"}),
    ("# NCCL Tests compiled with NCCL 2.4", "nccl.version", {"version": "2.4"}),
    ("# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22603", "nccltests.version",
     {"headers": "2.28.3", "library": "2.26.3", "same_release": False}),
    ("WARN src/core.cu:225 failed to allocate 4096 byte device buffer", "nccl.warn",
     {"header": "nccl1", "code_location": "src/core.cu:225"}),
])
def test_nccl_tests_lines_and_nccl1_warns(line, kind, fields):
    evs = _events(line + "\n")
    assert evs and evs[0].kind == kind, (line, evs)
    for k, v in fields.items():
        assert evs[0].fields[k] == v, (k, evs[0].fields)


def test_nccl2_old_header_is_not_nccl1():
    p = nccl_bare.classify_bare("misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]")
    assert p is not None and p.fields.get("header") != "nccl1"


@pytest.mark.parametrize("text, category", [
    ("WARN src/core.cu:596 rank 2 failed to allocate device buffer\n", "nccl_bug_or_version_specific"),
    ("# NCCL Tests compiled with NCCL 1.0\n# Using devices\nNCCL failure all_reduce.cu:95 'unhandled cuda error'\n",
     "nccl_bug_or_version_specific"),
    ("node1: Test NCCL failure common.cu:1012 'internal error - please report this issue to the NCCL developers / '\n",
     "nccl_bug_or_version_specific"),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid "
     "argument, NCCL version 2.15.5\nncclInvalidArgument: Invalid value for an argument.\nLast error:\n"
     "Invalid config blocking attribute value -2147483648\n", "nccl_version_mismatch"),
    ("ncclSocketInit: connecting to address with family 0 is neither AF_INET(2) nor AF_INET6(10)\n", "nccl_version_mismatch"),
    ("Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'\n", "fabric_manager_or_driver"),
    ("node1:1:2 [0] transport/net_ib.cc:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, len 64, vendor err 81\n",
     "p2p_acs_iommu_hang"),
    ("INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n", "gpu_direct_rdma_issue"),
    ("#       size    count   type   redop    root     time   algbw   busbw  #wrong\n# Out of bounds values : 3 FAILED\n",
     "p2p_acs_iommu_hang"),
    # ncclUnhandledCudaError without its WARN: the driver and CUDA pairing first (LD815)
    ("node1: Test NCCL failure common.cu:777 'unhandled cuda error'\n", "fabric_manager_or_driver"),
    ("[1700000000.123456] [node1:1234:0]        ib_iface.c:695  UCX  ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory\n",
     "container_missing_devices"),
    ("mlx5_1: ibv_reg_mr() failed: Cannot allocate memory.\n", "container_missing_devices"),
])
def test_nccl_side_mechanisms_name_their_category(text, category):
    r = _report(text)
    assert r["diagnoses"] and r["diagnoses"][0]["category"] == category, [d["title"] for d in r["diagnoses"]]


@pytest.mark.parametrize("line", ["train step failed: loss is nan", "ibv_devinfo output follows", "rdma_cm event failed"])
def test_not_a_verbs_failure(line):
    assert neighbours.classify_verbs(line) is None
# --- r-torch (issue 13): errno and launcher wordings, Gloo loopback peers, Ray kills, cut mismatch reports

@pytest.mark.parametrize("text, category", [
    ("RuntimeError: Address already in use", "port_in_use"),
    ("OSError: [Errno 98] Address already in use", "port_in_use"),
    ("OSError: [Errno 24] Too many open files", "fd_limit_exhausted"),
    ("RuntimeError: received 0 items of ancdata", "fd_limit_exhausted"),
    # a Rust server's panic on EMFILE
    ("called `Result::unwrap()` on an `Err` value: Os { code: 24, kind: Uncategorized, "
     "message: \"Too many open files\" }", "fd_limit_exhausted"),
    ("socket.gaierror: [Errno -2] Name or service not known", "hostname_resolution"),
    ("ValueError: host not found: Name or service not known", "hostname_resolution"),
])
def test_errno_wordings_of_any_program(text, category):
    assert _report(text)["diagnoses"][0]["category"] == category


def test_ssh_resolution_failure_outranks_the_launchers_exception():
    """The launcher's CalledProcessError / RuntimeError is vague beside ssh's reason, before or after it."""
    tb = ("Traceback (most recent call last):\n  File \"/usr/bin/launcher\", line 6, in <module>\n    main()\n"
          "subprocess.CalledProcessError: Command 'ssh node1 hostname -I' returned non-zero exit status 255.\n")
    ssh = "ssh: Could not resolve hostname node1: Name or service not known\n"
    for text in (ssh + tb, tb + ssh):
        r = _report(text)
        assert r["diagnoses"][0]["category"] == "hostname_resolution", r["diagnoses"][0]["title"]


@pytest.mark.parametrize("text", [
    # pre-2019 Gloo wording, with the source path masked by the poster
    "[<path>/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:41000: Connection refused",
    "RuntimeError: Gloo connectFullMesh failed with [/opt/gloo/gloo/transport/tcp/pair.cc:152] timed out "
    "connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:41000",
    "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. "
    "Unable to find address for: node1.example",
    # ProcessGroupGloo's loopback warning cut after its first sentence
    "[rank3] Warning: Unable to resolve hostname to a (local) address. Using the loopback",
])
def test_gloo_hostname_and_loopback(text):
    r = _report(text)
    assert r["diagnoses"] and r["diagnoses"][0]["category"] == "hostname_resolution", r["diagnoses"][:1]


def test_gloo_interface_lookup_stays_an_interface_problem():
    text = ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:84] "
            "ifa != nullptr. Unable to find address for: eth9")
    assert _report(text)["diagnoses"][0]["category"] == "wrong_network_interface"


@pytest.mark.parametrize("text, source, reason", [
    ("(raylet) node_manager.cc:3040: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
     "crashed due to other reasons at node (ID: ab12, IP: 10.0.0.7) over the last time period.", "ray", "oom"),
    # a hard-wrapped summary: the second piece alone still says it
    (" actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: ab", "ray", "oom"),
    ("Memory on the node (IP: 10.0.0.7, ID: ab12) where the task (actor ID: cd34, name=W.__init__, pid=77, memory "
     "used=9.00GB) was running was 12.40GB / 13.00GB (0.953846), which exceeds the memory usage threshold of 0.95. "
     "Ray killed this worker (ID: ef56) because it was the most recently scheduled task", "ray", "oom"),
    ("WARNING worker.py:2037 -- A worker died or was killed while executing a task by an unexpected system error. "
     "Worker exit type: SYSTEM_ERROR", "ray", "killed"),
])
def test_ray_kills(text, source, reason):
    evs = [e for e in _events(text) if e.kind == "job.stopped"]
    assert evs and evs[0].fields["source"] == source and evs[0].fields["reason"] == reason
    assert _report(text)["diagnoses"][0]["category"] == "peer_process_died"


def test_ray_summary_with_no_kill_is_not_a_kill():
    text = ("(raylet) node_manager.cc:3040: 0 Workers (tasks / actors) killed due to memory pressure (OOM), "
            "3 Workers crashed due to other reasons at node (ID: ab12, IP: 10.0.0.7) over the last time period.")
    assert not [e for e in _events(text) if e.kind == "job.stopped"]


@pytest.mark.parametrize("text", [
    # torch 1.10-1.12 name one side only
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
    "CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(",
    # a newer report cut inside the first fingerprint
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=21, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDevice",
    "RuntimeError: All tensor operands to scatter/gather must have the same number of elements",
    "RuntimeError: All tensor operands to scatter/gather must have the same size",
])
def test_mismatch_reports_cut_or_old(text):
    assert _report(text)["diagnoses"][0]["category"] == "collective_mismatch"


def test_child_failed_table_with_mangled_whitespace():
    """A ChildFailedError summary whose rows lost their line breaks and separators still names the worker."""
    text = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
            "train.py FAILED\nFailures:\n<NO_OTHER_FAILURES>\nRoot Cause (first observed failure):\n[0]:\n"
            "time\nhost\n2026-11-29_17:06:38\nnode3\n"
            "rank5 (local rank: 1)exitcode: -9 (pid: 21812)error file: <N/A>\n"
            "traceback : signal 9 (SIGKILL) received by PID 21812\n")
    r = _report(text)
    assert r["diagnoses"][0]["id"] == "LD701", r["diagnoses"][0]["title"]
    assert r["diagnoses"][0]["ranks"] == [5]


# --- r-torch (issue 13): a busy rank vs a hung one, short timeouts, watchdog frames, cut tracebacks

BAR = "Tokenizing:  35%|██████████          | 7000/20000 [{elapsed}<57:14, 3.88 examples/s]"
WATCHDOG = ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800328 milliseconds before timing out.")


@pytest.mark.parametrize("text", [
    BAR.format(elapsed="30:01") + "\n" + WATCHDOG + "\n",
    # the timeout printed by another rank lands glued after the bar that is redrawn with \r
    BAR.format(elapsed="29:55") + WATCHDOG + "\n",
])
def test_a_progress_bar_through_the_timeout_is_a_busy_rank(text):
    r = _report(text)
    assert r["diagnoses"][0]["category"] == "timeout_misconfigured", r["diagnoses"][0]["title"]
    assert r["diagnoses"][0]["id"] == "LD544"


def test_a_short_progress_bar_is_no_evidence():
    r = _report(BAR.format(elapsed="02:01") + "\n" + WATCHDOG + "\n")
    assert all(d["id"] != "LD544" for d in r["diagnoses"])


def test_a_glued_bar_leaves_the_message_readable():
    # a short source (a paste): the bar and the message glued after it are read as two pieces of the line
    # (logdoc.paste.repair._unglue_bars), the bar's own event keeps its elapsed time
    evs = _events(BAR.format(elapsed="29:55") + WATCHDOG + "\n")
    wd = [e for e in evs if e.kind == "torch.watchdog_timeout"]
    bars = [e for e in evs if e.kind == "app.progress"]
    assert wd and wd[0].fields["seq"] == 2 and wd[0].line == 1
    assert bars and bars[0].line == 1 and bars[0].fields["elapsed_s"] == 29 * 60 + 55
    # a long log as written keeps its lines: the message is read with the bar's fields
    filler = "".join(f"step {i} loss 2.5\n" for i in range(1200))
    evs = _events(filler + BAR.format(elapsed="29:55") + WATCHDOG + "\n")
    wd = [e for e in evs if e.kind == "torch.watchdog_timeout"]
    assert wd and wd[0].fields["seq"] == 2 and wd[0].fields["bar_elapsed_s"] == 29 * 60 + 55


def test_old_worknccl_without_seqnum_wrapped():
    text = ("[E ProcessGroupNCCL.cpp:485] [Rank 6] Watchdog caught collective operation timeout: "
            "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802246 milliseconds before timing\nout.\n")
    evs = [e for e in _events(text) if e.kind == "torch.watchdog_timeout"]
    assert evs and evs[0].fields["op_type"] == "ALLREDUCE" and evs[0].fields["timeout_ms"] == 1800000


def test_a_minute_long_timeout_is_too_short():
    text = WATCHDOG.replace("Timeout(ms)=1800000", "Timeout(ms)=60000").replace("1800328", "60044")
    assert _report(text)["diagnoses"][0]["category"] == "timeout_misconfigured"


def test_watchdog_check_timeout_frames_alone():
    text = ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
            "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f01 in /opt/torch/lib/libtorch_cuda.so)\n"
            "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f02 in /opt/torch/lib/libtorch_cuda.so)\n")
    assert _report(text)["diagnoses"][0]["category"] == "collective_timeout_hung_rank"


def test_a_traceback_cut_before_its_exception_line():
    text = ("Traceback (most recent call last):\n  File \"/opt/app/engine.py\", line 10, in handle\n    run()\n"
            "  File \"/opt/app/engine.py\", line 20, in run\n    return self.call(method)\n")
    evs = [e for e in _events(text) if e.kind == "torch.exception"]
    assert evs and evs[0].fields.get("cut") and evs[0].fields["frames"] == 2
    assert _report(text)["diagnoses"][0]["category"] == "user_code_exception"


def test_error_file_json_logged_by_the_error_handler():
    text = ('ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n'
            '  "message": {\n    "message": "RendezvousClosedError: ",\n')
    assert any(e.kind == "torchrun.rendezvous" for e in _events(text))


@pytest.mark.parametrize("text", [
    # torch 2.0/2.1 spelled it `retreiving`; a paste may cut the `[N] is ` head
    "RuntimeError: [6] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Socket Timeout",
    "setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but "
    "store->get('0') got error: Socket Timeout",
])
def test_unique_id_wait_timing_out_means_rank_0_was_late(text):
    r = _report(text)
    assert r["diagnoses"][0]["category"] == "timeout_misconfigured", r["diagnoses"][0]["title"]


def test_unique_id_wait_on_a_closed_store_is_not_a_short_timeout():
    text = ("RuntimeError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
            "key-value store by key '0', but store->get('0') got error: Connection reset by peer")
    assert all(d["category"] != "timeout_misconfigured" for d in _report(text)["diagnoses"])


@pytest.mark.parametrize("text, first", [
    # the scalable init's multiGet failure as c10d logs it: the `[N] is ` head read as a rank prefix
    ("[rank3]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:2318] [3] is setting up NCCL communicators and "
     "retrieving ncclUniqueId from roots via TCPStore by key '[\"0\"]', but got error: Connection reset by peer. "
     "This may indicate a possible application crash on rank 0 or a network set up issue.", "rendezvous_store_failure"),
    # cut by a paste before its head, the store called by its other name, a timeout inside
    ("setting up NCCL communicators and retrieving ncclUniqueId from roots via c10d key-value store by key "
     "'[\"0\"]', but got error: wait timeout after 1800000ms, keys: /default_pg//cuda//0", "timeout_misconfigured"),
])
def test_unique_ids_multiget_failure_is_read_in_each_form(text, first):
    assert any(e.kind == "store.nccl_unique_id" for e in _events(text))
    assert _report(text)["diagnoses"][0]["category"] == first


@pytest.mark.parametrize("text, seq, first", [
    # a barrier (one-element ALLREDUCE) among the group's first collectives: a rank still in its start-up
    # work (LD550), with the hung rank as the next candidate
    ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, ...) "
     "ran for 645901 milliseconds", 1, "timeout_misconfigured"),
    ("Watchdog caught collective operation timeout: WorkNCCL(... OpType=BROADCAST ...)", None,
     "collective_timeout_hung_rank"),
])
def test_an_abbreviated_watchdog_timeout_is_still_one(text, seq, first):
    evs = [e for e in _events(text) if e.kind == "torch.watchdog_timeout"]
    assert evs and evs[0].fields.get("seq") == seq
    cats = [d["category"] for d in _report(text)["diagnoses"]]
    assert cats[0] == first
    assert {"collective_timeout_hung_rank", "timeout_misconfigured"} <= set(cats[:3])


# --- r-sys: reader and envelope damage, Ray's own kills (issue 13) ---------------------------------

def test_escape_written_out_as_text_is_removed():
    from logdoc.read.source import _clean

    assert _clean(b"#033[2m#033[33m(raylet)#033[0m hello") == "(raylet) hello"
    assert _clean(b"^[[31mRuntimeError: boom^[[0m") == "RuntimeError: boom"
    assert _clean(b"x \\u001b[1;31mERROR\\u001b[0m y") == "x ERROR y"
    assert _clean(b"issue #0334 [open]") == "issue #0334 [open]"


def test_ray_envelopes():
    env, msg = unwrap("(raylet) [2026-01-02 03:04:05,678 E 4242 4242] (raylet) node_manager.cc:3040: text")
    assert msg == "text" and env.level == "ERROR" and env.pid == 4242 and env.source == "node_manager.cc:3040"
    env, msg = unwrap("(raylet, ip=10.0.0.2) text")
    assert msg == "text" and env.host == "10.0.0.2"
    env, msg = unwrap("2026-01-02 03:04:05,678\tWARNING worker.py:2037 -- A worker died")
    assert msg == "A worker died" and env.level == "WARN" and env.source == "worker.py:2037"


RAY_KILLS = [
    ("(raylet) [2026-01-02 03:04:05,678 E 4242 4242] (raylet) node_manager.cc:3040: 2 Workers (tasks / actors) "
     "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 0123abcd, IP: 10.0.0.2) "
     "over the last time period.", "oom"),
    ("Memory on the node (IP: 10.0.0.2, ID: 0123abcd) where the task (actor ID: 4567ef, name=Worker.__init__, pid=77, "
     "memory used=11.2GB) was running was 12.5GB / 13.1GB (0.95), which exceeds the memory usage threshold of 0.95. "
     "Ray killed this worker (ID: 89ab) because it was the most recently scheduled task.", "oom"),
    ("2026-01-02 03:04:05,678\tWARNING worker.py:2037 -- A worker died or was killed while executing a task by an "
     "unexpected system error. To troubleshoot the problem, check the logs for the dead worker.", "killed"),
]


@pytest.mark.parametrize("line,reason", RAY_KILLS)
def test_ray_kills_its_workers(line, reason):
    evs = [e for e in _events(line + "\n") if e.kind == "job.stopped"]
    assert len(evs) == 1 and evs[0].fields["source"] == "ray" and evs[0].fields["reason"] == reason
    assert _report(line + "\n")["diagnoses"][0]["category"] == "peer_process_died"


def test_ray_oom_summary_wrapped_and_coloured():
    text = ("#033[2m#033[33m(raylet)#033[0m [DATE] (raylet) node_manager.cc:3040: 2 Workers (tasks /\n"
            " actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 0123\n")
    assert _report(text)["diagnoses"][0]["category"] == "peer_process_died"


def test_nccl_before_2_3_info_lines_are_read():
    text = "".join(f"node1:210:230 [0] INFO NET : Using interface {i}\n"
                   for i in ("eth0:10.0.0.1<0>", "docker0:172.17.0.1<0>"))
    r = _report(text)
    assert r["diagnoses"][0]["category"] == "wrong_network_interface"


def test_a_short_paste_has_every_line_read():
    # a bare catalog message holds no prefilter keyword; in a short paste it is read all the same
    text = "step 10 loss 2.1\nCould not find NET with id 3\n"
    evs = _events(text)
    assert [e.kind for e in evs] == ["nccl.warn"] and evs[0].fields["header"] == "none"


WRAPPED_EXCEPTIONS = [
    ("RuntimeError: DataLoader worker (pid 4321) is killed by signal: Bus\n"
     "error. It is possible that dataloader's workers are out of shared\n"
     "memory. Please try to raise your shared memory limit.\n", "shm_exhausted", 3),
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84]\n"
     "  ifa != nullptr. Unable to find address for: eth9\n", "wrong_network_interface", 2),
]


@pytest.mark.parametrize("text,category,lines", WRAPPED_EXCEPTIONS)
def test_a_hard_wrapped_exception_message_is_joined(text, category, lines):
    res = parse_sources([("x.log", text)])
    assert len(res.events) == 1 and res.events[0].end_line == lines and "\n" not in res.events[0].text
    assert res.stats.lines_read == res.stats.relevant == lines
    assert build_report(res, kb.load_rules())["diagnoses"][0]["category"] == category
    tb = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n' + text
    assert _report(tb)["diagnoses"][0]["category"] == category


def test_an_ended_sentence_is_not_joined():
    text = "RuntimeError: something failed.\nepoch 3 step 10 loss 2.1\n"
    evs = _events(text)
    assert evs[0].end_line == 1


_STEPS = "".join(f"step {i} | loss 2.{i:04d} | lr 3.0e-04 | tokens/s 118000\n" for i in range(1200))


def test_a_log_as_written_is_never_hard_wrapped():
    # a log too long to be a paste is a program's output: the lines after an exception line are the
    # program's next lines, not the rest of its message, and the message keeps its reading
    text = _STEPS + "RuntimeError: unable to write to file </torch_18692_1954506624>\n" + _STEPS
    res = parse_sources([("x.log", text)])
    assert [(e.line, e.end_line) for e in res.events] == [(1201, 1201)]
    assert build_report(res, kb.load_rules())["diagnoses"][0]["category"] == "shm_exhausted"


def test_a_paste_with_room_on_its_lines_was_not_wrapped_there():
    # the paste holds a line longer than the exception line and the next word: no wrap cut it there
    long = "[2024-01-01 10:00:00] INFO train: " + "x" * 120 + "\n"
    text = long + "RuntimeError: unable to write to file </torch_18692_1954506624>\nstep 5 | loss 2.3 | lr 3e-4\n"
    evs = _events(text)
    exc = [e for e in evs if e.line == 2]
    assert exc and exc[0].end_line == 2
    assert _report(text)["diagnoses"][0]["category"] == "shm_exhausted"


def test_a_wrap_counts_the_prefix_of_each_line():
    # every line of the paste carries a logger's prefix, which the envelope peels: the wrap cut the
    # lines with their prefix, and the message is joined all the same
    p = "2026-12-03 01:02:03,456 - train - INFO - "
    text = (p + "RuntimeError: The server socket has failed to listen on any local network\n"
            + p + "address. The server socket has failed to bind to [::]:29600 (errno: 98 - Address\n"
            + p + "already in use). The server socket has failed to bind to 0.0.0.0:29600 (errno:\n"
            + p + "98 - Address already in use).\n")
    evs = _events(text)
    assert evs[0].line == 1 and evs[0].end_line == 3  # (a piece that starts with a digit is not joined)
    assert _report(text)["diagnoses"][0]["category"] == "port_in_use"


def test_only_full_pieces_of_a_wrap_are_joined():
    # after a piece that ended well short of the paste's width, the next line starts a line of its own
    text = ("RuntimeError: DataLoader worker (pid 4321) is killed by signal: Bus\n"
            "error. It is possible that\n"
            "step 5 | loss 2.3 | lr 3e-4\n")
    evs = _events(text)
    assert evs[0].end_line == 2


_CUT_TOP = (
    "    self.nccl_comm = torch.classes.trtllm.NcclCommunicatorOp(\n"
    "                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: NCCL error in: ../comm.cpp:90, invalid usage (run with NCCL_DEBUG=WARN for details)\n")


@pytest.mark.parametrize("text", [
    _CUT_TOP,
    _CUT_TOP.replace("                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n", ""),  # before Python 3.11
    "[rank1]:" + _CUT_TOP.replace("\n", "\n[rank1]:").rstrip("[rank1]:"),
])
def test_a_traceback_cut_above_its_code_line_keeps_it(text):
    # a paste that starts at a frame's code line (its `File` line cut): the code line is the exception's
    # context, so a communicator's construction is not read as a running collective
    evs = _events(text)
    exc = [e for e in evs if e.level == "ERROR"]
    assert len(exc) == 1 and exc[0].line == 1 and "NcclCommunicatorOp(" in exc[0].text
    assert exc[0].fields.get("traceback") is True and exc[0].fields.get("frames") == 0
    assert _report(text)["diagnoses"][0]["category"] == "duplicate_gpu"


def test_code_lines_without_an_exception_stay_lines_of_their_own():
    text = ("    self.model = build(cfg)\n    x = y.z(1)\ntraining started\n"
            "    dist.all_reduce(t)\nRuntimeError: NCCL error in: ../a.cpp:1, unhandled system error\n")
    res = parse_sources([("x.log", text)])
    assert [(e.line, e.end_line) for e in res.events] == [(4, 5)]
    assert res.stats.lines_read == 5


def test_a_log_as_written_reads_no_cut_traceback():
    # a program's own output keeps its tracebacks whole: an indented line before an exception line
    # there is the program's print, not a frame
    text = _STEPS + "    dist.all_reduce(t)\nRuntimeError: NCCL error in: ../a.cpp:1, unhandled system error\n"
    evs = _events(text)
    assert [(e.line, e.end_line) for e in evs if e.level == "ERROR"] == [(1202, 1202)]


CUT_MESSAGES = [  # (a catalog WARN format, the piece of it a paste kept)
    ("Net : No interface found in the same subnet as remote address %s", "No interface found in the same subnet as remote address"),
    ("Net : Socket creation failed : %s", "Socket creation failed : Address family not supported by protocol"),
]


@pytest.mark.parametrize("fmt,piece", CUT_MESSAGES)
def test_a_message_cut_at_either_end(fmt, piece):
    p = nccl_bare.classify_bare(piece)
    assert p is not None and p.fields["format"] == fmt and p.fields["cut"]


@pytest.mark.parametrize("line", ["the same subnet as before", "Address family not supported by protocol",
                                  "found in the same subnet as remote addresses"])
def test_ordinary_pieces_are_not_cut_messages(line):
    assert nccl_bare.classify_bare(line) is None


def test_no_interface_in_a_container_is_the_containers_network():
    text = "0a1b2c3d4e5f:210:210 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol\n"
    assert _report(text)["diagnoses"][0]["category"] == "container_network_isolation"
    assert _report(text.replace("0a1b2c3d4e5f", "node1"))["diagnoses"][0]["category"] == "wrong_network_interface"


def test_two_writes_of_one_exception_interleaved_in_chunks():
    from logdoc.paste import interleaved_writes

    assert interleaved_writes("    torch.distributed.barrier()torch.distributed.barrier()") == "    torch.distributed.barrier()"
    assert interleaved_writes("Epoch 1 Epoch 2 Epoch 3 loss 0.5 loss 0.4") is None
    text = ("torch.distributedtorch.distributed.DistBackendError.: DistBackendErrorNCCL error in: "
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1287, invalid usage, NCCL version 2.17.1\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
            "Last error:\n"
            "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000\n")
    assert _report(text)["diagnoses"][0]["category"] == "duplicate_gpu"


# --- session 5: wordings and forms of messages that stood bare and were not read

def test_an_ib_message_under_a_plugins_net_name():
    """A network plugin prints the IB transport's WARN under its own name, with or without the blank
    before the colon: the catalog format of the built-in transport reads it, the name is kept."""
    for lead in ("NET/IBext : ", "NET/IBext_v8:", "NET/IB:"):
        line = (lead + "Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 "
                "vendor err 129 (Send)")
        p = nccl_bare.classify_bare(line)
        assert p is not None and p.fields["format"].startswith("NET/IB : Got completion from peer")
        assert (p.fields.get("net_name") is None) == (lead == "NET/IB:")
        with_header = nccl.classify(f"node1:10:20 [0] transport/net_ib.cc:1909 NCCL WARN {line}", Envelope())
        assert with_header.template == p.template
    assert _report("NET/IBext : Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 "
                   "vendor err 129 (Recv)\n")["diagnoses"][0]["category"] == "ib_transport_error"
    assert nccl_bare.classify_bare("NET/Foo : the weather is fine today in every datacenter") is None


def test_a_warn_retold_in_short():
    """The long opening words of a WARN format, then the poster's own short ending: read as that
    WARN (abridged); a line that shares fewer words, or the opening of several messages, is not."""
    fmt_head = "Failed to bind NVLink SHARP (NVLS) Multicast memory"
    p = nccl_bare.classify_bare(fmt_head + ": CUDA error 1")
    assert p is not None and p.fields["abridged"] and p.fields["format"].startswith(fmt_head)
    assert _report(fmt_head + ": CUDA error 1\n")["diagnoses"][0]["category"] == "fabric_manager_or_driver"
    assert nccl_bare.classify_bare("Failed to bind NVLink bridges on this board") is None
    assert nccl_bare.match_abridged(fmt_head[:30] + " and more") is None


def test_the_user_guide_check_macros():
    """The NCCL user guide's NCCLCHECK / CUDACHECK wording, copied into programs with their own paths,
    reads as nccl-tests' check does; a paste that lost the closing quote too."""
    p = nccl_bare.classify_bare("Failed, NCCL error src/app/comm.cc:88 'unhandled system error'")
    assert p.kind == "nccltests.nccl_failure" and p.fields["error"] == "unhandled system error"
    p = nccl_bare.classify_bare("Failed, NCCL error /src/comm_utils.cc:12 'remote process exited or there was a network error")
    assert p.kind == "nccltests.nccl_failure" and p.fields["error"].startswith("remote process exited")
    p = nccl_bare.classify_bare("Failed: Cuda error main.cu:40 'out of memory'")
    assert p.kind == "cuda.error" and p.fields["error"] == "out of memory"
    card = _report("Failed, NCCL error main.cc:60 'invalid usage'\n")["diagnoses"][0]
    assert card["id"] == "family:nccl_invalid_usage"


def test_a_cuda_runtime_error_text_alone():
    """A cudaGetErrorString text on a line of its own is a CUDA error; other text is not."""
    p = nccl_bare.classify_bare("CUDA driver version is insufficient for CUDA runtime version")
    assert p.kind == "cuda.error"
    assert _report("Failed, NCCL error comm.cc:296 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
                   "CUDA driver version is insufficient for CUDA runtime version\n")["diagnoses"][0]["category"] \
        == "fabric_manager_or_driver"
    assert nccl_bare.classify_bare("the CUDA driver version is insufficient for our needs, we think") is None


def test_xla_quotes_the_last_nccl_warning():
    """XLA's status for a failed NCCL call ends with NCCL's last WARN in quotes: read as that WARN."""
    line = ("external/xla/xla/backends/gpu/collectives/nccl_communicator.cc:100: NCCL operation "
            "ncclCommInitRankConfig(...) failed: invalid usage. Last NCCL warning(error) log entry "
            "(may be unrelated) 'Bootstrap : no socket interface found'.")
    p = nccl_bare.classify_bare(line)
    assert p is not None and p.kind == "nccl.warn" and p.fields["nested_in"] == "Last NCCL warning(error)"
    assert _report(line + "\n")["diagnoses"][0]["category"] == "wrong_network_interface"


def test_a_channel_connection_without_header_or_channel():
    """`a[bus] -> b[bus] [send|receive] via NET/...`, the `Channel NN/M :` lead and the header lost."""
    p = nccl_bare.classify_bare("12[3d000] -> 4[1a000] [receive] via NET/IB/1")
    assert p.kind == "nccl.connection" and p.fields["direction"] == "receive" and p.fields["gdr"] is False
    assert "channel" not in p.fields and p.fields["src_rank"] == 12 and p.fields["dst_rank"] == 4
    p = nccl_bare.classify_bare("Channel 03/1 : 12[3d000] -> 4[1a000] [send] via NET/IB/0/GDRDMA")
    assert p.kind == "nccl.connection" and p.fields["gdr"] is True and p.fields["channel"] == 3
    assert nccl_bare.classify_bare("step 12 -> 4 via the fast path") is None
    # a receive without GDR beside a send with it: the receiving node lacks GPUDirect RDMA
    text = "12[3d000] -> 4[1a000] [send] via NET/IB/0/GDRDMA\n12[3d000] -> 4[1a000] [receive] via NET/IB/0\n"
    assert _report(text)["diagnoses"][0]["category"] == "gpu_direct_rdma_issue"
    # PCIe platforms' default (sends without GDR, receives with it) is no finding
    healthy = "12[3d000] -> 4[1a000] [send] via NET/IB/0\n12[3d000] -> 4[1a000] [receive] via NET/IB/0/GDRDMA\n"
    assert not [d for d in _report(healthy)["diagnoses"] if d["category"] == "gpu_direct_rdma_issue"]


def test_a_signal_caught_by_ucx():
    """UCX's signal handler line before its backtrace: the signal is an event; SIGBUS reads as /dev/shm."""
    p = nccl_bare.classify_bare("[node1:4100:0:4120] Caught signal 7 (Bus error: nonexistent physical address)")
    assert p.kind == "process.signal" and p.fields["signal"] == 7 and p.fields["signal_host"] == "node1"
    p = nccl_bare.classify_bare("Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)")
    assert p.kind == "process.signal" and p.fields["signal"] == 11
    text = ("[node1:4100:0:4120] Caught signal 7 (Bus error: nonexistent physical address)\n"
            "==== backtrace (tid:   4120) ====\n 0 0x0000000000043090 killpg()  ???:0\n")
    assert _report(text)["diagnoses"][0]["category"] == "shm_exhausted"


def test_nccl_tests_device_list_counts_the_run():
    """nccl-tests' device list names every rank: a run of one process whose loopback peer closed the
    connection had no peer to lose; with two ranks listed the peer is the other rank."""
    p = nccl_bare.classify_bare("#  Rank  3 Group  0 Pid   4103 on node1 device  3 [0x31] NVIDIA H100 80GB HBM3")
    assert p.kind == "nccltests.device" and p.fields["test_rank"] == 3 and p.fields["bus"] == "0x31"
    one = ("#  Rank  0 Group  0 Pid   4100 on node1 device  0 [0x17] NVIDIA A100-SXM4-80GB\n"
           "node1:4100:4120 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer localhost<41000>\n")
    assert _report(one)["diagnoses"][0]["category"] == "firewall_or_unreachable_peer"
    two = one.replace("\nnode1:", "\n#  Rank  1 Group  0 Pid   4101 on node1 device  1 [0x31] NVIDIA A100-SXM4-80GB\nnode1:", 1)
    assert _report(two)["diagnoses"][0]["category"] != "firewall_or_unreachable_peer"


def test_py_spy_stacks_of_ranks_in_different_collectives():
    """py-spy dumps, one per rank: the innermost torch.distributed frame is where each rank waits;
    different collectives on different ranks are a mismatch, send against recv is not."""
    p = nccl_bare.classify_bare("    all_gather_into_tensor (torch/distributed/distributed_c10d.py:3710)")
    assert p.kind == "stack.collective" and p.fields["function"] == "all_gather_into_tensor"
    assert nccl_bare.classify_bare("    _check_single_tensor (torch/distributed/distributed_c10d.py:900)") is None
    dump = 'Thread 4100 (idle): "MainThread"\n    {op} (torch/distributed/distributed_c10d.py:2501)\n    step (train.py:9)\n'

    def report(a, b):
        return build_report(parse_sources([("rank0.log", dump.format(op=a)), ("rank1.log", dump.format(op=b))]),
                            kb.load_rules())["diagnoses"]

    got = report("all_reduce", "barrier")
    assert got and got[0]["category"] == "collective_mismatch"
    assert not [d for d in report("all_reduce", "all_reduce") if d["category"] == "collective_mismatch"]
    assert not [d for d in report("send", "recv") if d["category"] == "collective_mismatch"]


NCCL_TESTS_ROWS = [  # (a result row in each release's columns, its size, whether its check found wrong values)
    ("  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00", 4294967296, True),
    ("        8             2   float     sum    36.33    0.00    0.00  0e+00    35.23    0.00    0.00  0e+00", 8, False),
    ("  1073741824     268435456     float     sum      -1   9104.1  117.94  220.63      0   9101.3  117.98  220.70      0",
     1073741824, False),
    ("     1048576        262144     float    none       0    120.5    8.70    8.70     12    119.9    8.75    8.75    N/A",
     1048576, True),
]


@pytest.mark.parametrize("line,size,wrong", NCCL_TESTS_ROWS)
def test_nccl_tests_result_rows(line, size, wrong):
    p = nccl_bare.classify_bare(line)
    assert p.kind == "nccltests.row" and p.fields["size"] == size and p.fields["wrong"] is wrong


def test_wrong_values_only_from_2_gib_are_the_release():
    """Wrong values at 2 GiB and above only: a size overflow of the release; wrong below too: the path."""
    head = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    small = "    1073741824     268435456     float     sum      -1   9104.1  117.94  220.63      {w}   9101.3  117.98  220.70      {w}\n"
    big = "    4294967296    1073741824     float     sum      -1  36310.5  118.28  221.28      8  36302.8  118.31  221.33      8\n"
    verdict = "# Out of bounds values : 16 FAILED\n"
    assert _report(head + small.format(w=0) + big + verdict)["diagnoses"][0]["category"] == "nccl_bug_or_version_specific"
    assert _report(head + small.format(w=4) + big + verdict)["diagnoses"][0]["category"] != "nccl_bug_or_version_specific"


def test_init_that_stops_in_pcie_p2p_setup():
    """NCCL INFO output that ends while GPUs connect peer to peer, with no error and no completion: the
    P2P path (ACS/IOMMU); not when init completed, and not on NVLink (P2P read, many channels)."""
    lines = ["node1:200:210 [0] NCCL INFO Channel 00/02 :    0   1",
             "node1:200:210 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
             "node1:201:211 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC"]
    text = "\n".join(lines) + "\n"
    assert _report(text)["diagnoses"][0]["category"] == "p2p_acs_iommu_hang"
    done = text + "node1:200:210 [0] NCCL INFO Connected all rings\n"
    assert not [d for d in _report(done)["diagnoses"] if d["category"] == "p2p_acs_iommu_hang"]
    nvlink = text.replace("via P2P/IPC", "via P2P/IPC/read")
    assert not [d for d in _report(nvlink)["diagnoses"] if d["category"] == "p2p_acs_iommu_hang"]


def test_envoy_sidecar_lines():
    """Envoy's own log lines (Istio's tab-separated form, after the stamp is peeled, and Envoy's default form)."""
    p = nccl_bare.classify_bare("debug\tenvoy upstream\tmembership update for TLS cluster inbound|29500|| added 0 removed 1")
    assert p.kind == "proxy.envoy" and p.fields["port"] == 29500
    p = nccl_bare.classify_bare("[2026-11-29 17:01:59.173][23][debug][connection] [source/common/network/connection_impl.cc:133] "
                           "[C12] closing socket: 0")
    assert p.kind == "proxy.envoy" and p.fields["logger"] == "connection"
    assert nccl_bare.classify_bare("debug\tmy envoy of the app\tsomething") is None
    text = "2026-11-29T17:01:59.173796Z\tdebug\tenvoy connection\t[C12] remote early close\n"
    assert _report(text)["diagnoses"][0]["category"] == "container_network_isolation"


def test_ray_object_store_larger_than_dev_shm():
    line = ("[2026-11-29 17:01:50,001 W 40 40] (raylet) store_runner.cc:83: System memory request exceeds memory "
            "available in /dev/shm. The request is for 8000000000 bytes, and the amount available is 67108864 bytes.")
    evs = [e for e in _events(line + "\n") if e.kind == "ray.store_shm"]
    assert evs and evs[0].fields["requested"] == 8000000000 and evs[0].fields["available"] == 67108864
    assert _report(line + "\n")["diagnoses"][0]["category"] == "shm_exhausted"
    benign = ("2026-11-29 17:01:50,001\tWARNING services.py:2022 -- WARNING: The object store is using /tmp instead of "
              "/dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!\n")
    assert not [d for d in _report(benign)["diagnoses"] if d["category"] == "shm_exhausted"]


def test_lightning_start_up_lines_and_two_ranks_on_one_gpu():
    """Lightning's rank/world and visible-GPU lines are events; two members in one output with one visible
    GPU, then invalid usage: ranks share the device. Two visible GPUs: no such finding. (NCCL 2.14.3: before
    2.12.10 a bare invalid usage leans to a shared GPU by itself, LD476.)"""
    from logdoc.classify import torch as torch_classify

    p = torch_classify.classify("initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8")
    assert p.kind == "app.lightning" and p.fields == {"global_rank": 3, "world_size": 8}
    p = torch_classify.classify("Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8")  # Lightning 2.x
    assert p.kind == "app.lightning" and p.fields == {"global_rank": 3, "world_size": 8}
    p = torch_classify.classify("LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1,2,3]")
    assert p.kind == "app.lightning" and p.fields["device_count"] == 4
    text = ("LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [{d}]\ninitializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
            "initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, invalid usage, "
            "NCCL version 2.14.3\n")
    assert _report(text.format(d="2"))["diagnoses"][0]["category"] == "duplicate_gpu"
    assert _report(text.format(d="0,1"))["diagnoses"][0]["category"] != "duplicate_gpu"


def test_nccl_records_glued_on_one_line_are_read_one_by_one():
    """A paste that lost its line ends: several NCCL records, each with its header (full, masked or only
    `[dev]`), one after another on one line. Each is an event of its own, on that line."""
    from logdoc import paste

    line = ("[0] NCCL INFO NCCL_IB_DISABLE set by environment to 0. [0] NCCL INFO NET/IB : No device found. "
            "node1:XXXXXX:12 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0> [0] NCCL INFO Using network Socket")
    parts = paste.split_glued(line)
    assert parts == ["[0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.", "[0] NCCL INFO NET/IB : No device found.",
                     "node1:XXXXXX:12 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>",
                     "[0] NCCL INFO Using network Socket"]
    evs = _events("before\n" + line + "\n")
    kinds = [(e.kind, e.line) for e in evs]
    assert ("nccl.env", 2) in kinds and ("nccl.using_network", 2) in kinds and ("nccl.net_socket", 2) in kinds
    # one record, or a ring that names ranks with their devices, is not split
    assert paste.split_glued("node1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC") is None
    assert paste.split_glued("node1:1:2 [0] NCCL INFO NCCL_DEBUG set by environment to INFO. NCCL INFO is on") is None


def test_torch_records_glued_after_a_sentence_are_read_each_on_its_own():
    """A paste that lost its line ends: c10's records and the C++ runtime's `terminate called` follow one another
    after a sentence's end on one line; each is read, so the exception's `Last error:` names the cause."""
    from logdoc import paste

    line = ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
            "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. [E ProcessGroupNCCL.cpp:460] To "
            "avoid data inconsistency, we are taking the entire process down. terminate called after throwing an instance of "
            "'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 "
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. Last "
            "error: NET/IB : Got completion from peer 10.0.0.2<4000> with error 12, opcode 0, len 0, vendor err 129")
    parts = paste.split_glued_torch(line)
    assert [p[:30] for p in parts] == ["[E ProcessGroupNCCL.cpp:455] S", "[E ProcessGroupNCCL.cpp:460] T",
                                       "terminate called after throwin"]
    kinds = [e.kind for e in _events(line + "\n")]
    assert "torch.terminate" in kinds and kinds.count("torch.teardown") == 2
    assert _report(line + "\n")["diagnoses"][0]["id"] == "LD201"
    glog = ("[E1129 10:11:12.123456789 ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. "
            "[E1129 10:11:12.123456789 ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.")
    assert len(paste.split_glued_torch(glog)) == 2
    # a header after a prefix's bracket or a process's parenthesis is that prefix's record, not a second one
    assert paste.split_glued_torch("[node-3] [E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out.") is None
    assert paste.split_glued_torch("(worker pid=12) terminate called after throwing an instance of 'c10::Error'") is None


def test_torchrun_agent_start_lines_and_a_rendezvous_closed_at_the_first_join():
    """The agent's start (log directory, entrypoint, Rendezvous'ing) are events; RendezvousClosedError at
    the first join, before any worker group started, is an earlier run's closed state (the run id)."""
    head = ("INFO:torch.distributed.elastic.agent.server.local_elastic_agent:log directory set to: "
            "/tmp/torchelastic_ab12cd34/none_x1y2z3w4\n"
            "INFO:torch.distributed.elastic.agent.server.api:[default] starting workers for entrypoint: python\n"
            "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n")
    evs = _events(head)
    assert [e.kind for e in evs] == ["torchrun.info", "torchrun.info", "torchrun.rendezvous"]
    closed = head + "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n"
    d = _report(closed)["diagnoses"][0]
    assert d["id"] == "LD672" and 'run id "none"' in d["explanation"]
    later = head.replace("Rendezvous'ing worker group", "Starting worker group")
    assert _report(later + "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n")["diagnoses"][0]["id"] != "LD672"


def test_an_nccl_call_that_failed_in_a_framework_check():
    """`<nccl call> failed: <ncclGetErrorString>` (Horovod's NCCL_CHECK), in any release's wording."""
    for text, want in (("UnknownError (see above for traceback): ncclCommInitRank failed: unhandled cuda error", "ncclUnhandledCudaError"),
                       ("ncclAllReduce failed: unhandled system error (run with NCCL_DEBUG=INFO for details)", "ncclSystemError")):
        evs = _events(text + "\n")
        assert evs and evs[0].kind == "torch.nccl_error", text
        assert _report(text + "\n")["diagnoses"], text
    assert not [e for e in _events("download failed: unhandled cuda error in the app\n") if e.kind == "torch.nccl_error"]


def test_the_job_shape_decides_a_bare_system_error():
    """analysis.context: one node (NCCL's nNodes, a one-node launcher) puts shared memory first for an
    ncclSystemError without its WARN; several nodes keep the network first."""
    err = ("[rank0]:[E1129 10:00:00.000000000 ProcessGroupNCCL.cpp:617] [Rank 0] Collective WorkNCCL(SeqNum=1, "
           "OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) raised the following async exception: NCCL error: "
           "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n")
    one = "node1:12:12 [0] NCCL INFO comm 0x55 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n"
    assert _report(one + err)["diagnoses"][0]["category"] == "shm_exhausted"
    two = one.replace("nNodes 1 localRanks 4", "nNodes 2 localRanks 2")
    assert _report(two + err)["diagnoses"][0]["category"] == "firewall_or_unreachable_peer"
    vllm = ('Traceback (most recent call last):\n  File "/opt/vllm/v1/executor/multiproc_executor.py", line 571, in worker_main\n'
            "    worker = WorkerProc(*args, **kwargs)\nRuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    assert _report(vllm)["diagnoses"][0]["category"] == "shm_exhausted"


def test_container_hints_and_ranks_of_several_nodes_taken_for_one_host():
    from logdoc.analysis import analyze

    def ctx(text):
        res = parse_sources([("rank0.log", text)])
        return {e.fields["aspect"]: e for e in analyze(res.events, res.files).synthetic if e.kind == "analysis.context"}

    sock = "node1:12:12 [0] NCCL INFO NET/Socket : Using [0]eth0:{}<0>\n"
    assert "container" in ctx(sock.format("172.17.0.3"))
    assert "container" not in ctx(sock.format("10.1.2.3"))  # eth0 alone: bare metal and VMs too
    ring = "".join(f"node1:{100 + r}:{200 + r} [{r}] NCCL INFO Channel 00/0 : {r}[{r}] -> {r + 1}[{(r + 1) % 4}] via P2P/IPC\n"
                   for r in range(4))
    got = ctx(ring)["same_host"]
    assert got.fields["ranks"] == [0, 4] and got.fields["wrap"] is True and got.fields["devices"] == 4
    assert "same_host" not in ctx(ring.replace("4[0] via P2P/IPC", "4[0] via NET/IB/0"))


def test_argparse_usage_errors_and_the_launchers_local_rank():
    for line, rule in (("train.py: error: unrecognized arguments: --local-rank=1", "LD774"),
                       ("main.py: error: unrecognized arguments: --local_rank=0", "LD774"),
                       ("train.py: error: the following arguments are required: --data", "LD773")):
        evs = _events(line + "\n")
        assert evs and evs[0].kind == "app.usage_error", line
        d = _report(line + "\n")["diagnoses"][0]
        assert d["id"] == rule and d["category"] == "user_code_exception", line


def test_hosts_with_different_nccl_network_plugins():
    a = "node1:11:21 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
    b = "node2:12:22 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v7 (v7)\n"
    res = build_report(parse_sources([("node1.log", a), ("node2.log", b)]), kb.load_rules())
    assert res["diagnoses"][0]["id"] == "LD474"
    res = build_report(parse_sources([("node1.log", a), ("node2.log", a.replace("node1", "node2"))]), kb.load_rules())
    assert not [d for d in res["diagnoses"] if d["id"] == "LD474"]


def test_an_nccl_trace_without_its_warn_gets_a_card_by_its_result_code():
    """`file.cc:NN -> 2` lines (NCCL_DEBUG=INFO's error trace) name ncclSystemError; a trace through the
    bootstrap on hosts with IB puts the socket interface first (NCCL's sockets prefer ib* interfaces)."""
    trace = ("node1:10:20 [0] NCCL INFO misc/socket.cc:567 -> 2\n"
             "node1:10:20 [0] NCCL INFO bootstrap.cc:270 -> 2\n")
    ib = "node1:10:20 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.9.0.1<0>\n"
    d = _report(ib + trace)["diagnoses"][0]
    assert d["id"] == "family:nccl_trace_system_error" and d["category"] == "wrong_network_interface"
    d = _report("node1:10:20 [0] NCCL INFO transport/shm.cc:99 -> 2\n")["diagnoses"][0]
    assert d["id"] == "family:nccl_trace_system_error" and d["category"] == "shm_exhausted"


def test_releases_before_2_5_name_a_channel_ring_and_old_nccl_tests_device_rows():
    evs = _events("node1:10:20 [2] NCCL INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC\n"
                  "node1:10:20 [2] INFO Ring 01 : 2[2] -> 3[3] via P2P/IPC\n"
                  "node1:10:20 [0] NCCL INFO Ring 00 :    0   1   2   3\n")
    conns = [e for e in evs if e.kind == "nccl.connection"]
    assert len(conns) == 2 and conns[0].fields["transport"] == "P2P/IPC" and conns[0].fields["dst_rank"] == 3
    assert [e.kind for e in evs][-1] == "nccl.channel"
    dev = _events("#   Rank  1 Pid   1688 on    node1 device  1 [0x3b] Tesla V100\n")
    assert dev and dev[0].kind == "nccltests.device" and dev[0].fields["test_host"] == "node1"


def test_the_job_shape_reorders_a_family_card():
    """The same system-error trace through NCCL's socket code: the network first for a job on several
    nodes, shared memory first when NCCL's communicator summary says one node."""
    trace = "node1:10:20 [0] NCCL INFO misc/socket.cc:567 -> 2\n"
    d = _report(trace)["diagnoses"][0]
    assert d["id"] == "family:nccl_trace_system_error" and d["category"] == "firewall_or_unreachable_peer"
    one = "node1:10:20 [0] NCCL INFO comm 0x55 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n"
    d = _report(one + trace)["diagnoses"][0]
    assert d["category"] == "shm_exhausted"
    assert any("one node" in s for s in d["differential"][0]["for"])
    assert any("one node" in s for c in d["differential"][1:] for s in c["against"])


def test_glog_check_around_an_nccl_call_and_a_chain_from_a_stack_message():
    line = "F1201 10:11:12.123456 4242 parallel.cpp:249] Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error\n"
    evs = _events(line)
    assert evs and evs[0].kind == "torch.nccl_error"
    assert _report(line)["diagnoses"][0]["id"] == "LD815"  # the result text decides: a CUDA call in NCCL failed
    chain = ('Traceback (most recent call last):\n  File "t.py", line 1, in f\n    g()\n'
             "RuntimeError: remote error detected from rank: 3\n\n"
             "The above exception was the direct cause of the following exception:\n\n"
             'Traceback (most recent call last):\n  File "t.py", line 2, in <module>\n    f()\n'
             "RuntimeError: the step failed\n")
    ids = [d["id"] for d in _report(chain)["diagnoses"]]
    assert "LD710" not in ids and ids


# --- recog7: paste emphasis, other programs' lines, the process a prefix names (issue 13) ----------

def test_markdown_bold_around_a_message_is_stripped():
    from logdoc.paste import _strip_markdown

    out, changed = _strip_markdown([
        "[rank0]: **RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:288] "
        "ss1.ss_family == ss2.ss_family. 2 vs 10**",
        "    return f(*args, **kwargs)",
        "  File \"x.py\", line 3, in __init__",
    ])
    assert changed and out[0].endswith("2 vs 10") and "**" not in out[0]
    assert out[1] == "    return f(*args, **kwargs)" and out[2].endswith("__init__")
    text = ("[rank0]: **RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:288] "
            "ss1.ss_family == ss2.ss_family. 2 vs 10**\n")
    assert any(e.kind in ("gloo.error", "torch.exception") and "ss_family" in e.text for e in _events(text))


def test_markdown_italics_on_single_words_are_stripped():
    from logdoc.paste import _strip_markdown

    out, changed = _strip_markdown(["_Check_ failed: result == ncclSuccess (1 vs. 0)  unhandled cuda _error_",
                                    "OpType=_ALLGATHER_BASE NCCL_P2P_LEVEL=NVL __init__ /dev/shm/nccl-_x_"])
    assert changed and out[0] == "Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error"
    assert out[1] == "OpType=_ALLGATHER_BASE NCCL_P2P_LEVEL=NVL __init__ /dev/shm/nccl-_x_"
    evs = _events("_Check_ failed: result == ncclSuccess (1 vs. 0)  unhandled cuda _error_\n")
    assert evs and evs[0].fields.get("error_string") == "unhandled cuda error"


@pytest.mark.parametrize("line, kind", [
    ("[2024-05-15 13:14:32,960] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
     "'--local_rank=0'] exits with return code = -9", "torchrun.worker_failed"),
    ("libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0",
     "verbs.no_provider"),
    ("[1700000000.123456] [node1:1234:0]      mm_iface.c:123  UCX  ERROR mm_iface failed to allocate receive FIFO",
     "ucx.error"),
    ("mm_iface failed to allocate receive FIFO", "ucx.error"),
    ("connect error caused by: Too many open files (os error 24)", "os.error"),
])
def test_other_programs_lines_of_a_failure(line, kind):
    assert [e.kind for e in _events(line + "\n")] == [kind]


def test_a_plain_line_is_no_other_programs_failure():
    for line in ("the model has too many open files to list", "exits with return code = 0",
                 "Warning: this is not a driver message"):
        assert not _events(line + "\n")


def test_a_vllm_worker_prefix_names_the_process_and_its_node():
    """`(VllmWorker rank=N pid=N)` / `(VllmWorkerProcess pid=N)`: the rank and the process stay with the
    event after the prefix is peeled, and vLLM's multiprocessing workers run on one node."""
    env, msg = unwrap("(VllmWorker rank=1 pid=4242) INFO 08-14 11:33:20 [gpu_model_runner.py:1892] loaded")
    assert (env.process, env.rank, env.pid) == ("VllmWorker", 1, 4242) and msg == "loaded"
    text = ("(VllmWorkerProcess pid=221) ERROR 04-06 20:46:48 [multiproc_worker_utils.py:238] "
            "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n")
    evs = _events(text)
    assert evs and evs[0].process == "VllmWorkerProcess" and evs[0].to_dict()["process"] == "VllmWorkerProcess"
    rep = _report(text)
    assert rep["diagnoses"][0]["category"] == "shm_exhausted"  # one node: shared memory before the network


@pytest.mark.parametrize("line,host,bus", [
    ("#  Rank  0 Group  0 Pid  1234 on node1 device  0 [0x1b] NVIDIA A100-SXM4-80GB", "node1", "0x1b"),
    ("#   Rank  1 Pid   1688 on    node1 device  1 [0x18] Tesla V100-SXM2-16GB", "node1", "0x18"),
    ("#   Rank  0 Pid  2128 on node1 device  0 [0000:2f:00.0] AMD Instinct MI100", "node1", "0000:2f:00.0"),  # rccl-tests
    ("#   Rank  2 uses device  2 [0x0d] Tesla M40 24GB", None, "0x0d"),  # the single-process nccl-tests of 2016-2017
    ("   Rank  2 uses device  2 [0x0d] Tesla M40 24GB", None, "0x0d"),  # the `#` lost in a paste
])
def test_nccl_tests_device_lines_of_every_release(line, host, bus):
    p = nccltests.classify_tests(line)
    assert p is not None and p.kind == "nccltests.device"
    assert p.fields.get("test_host") == host and p.fields["bus"] == bus


@pytest.mark.parametrize("line,kind", [
    ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
     "nccltests.table"),
    ("#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res",
     "nccltests.table"),
    ("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)", None),
    ("step 12 | time 0.31 s | algbw is not a word here", None),
])
def test_nccl_tests_table_header(line, kind):
    p = nccltests.classify_tests(line)
    assert (p.kind if p is not None else None) == kind


# --------------------------------------------------------------------------------------------
# Older releases' wordings: each is recognised bare and with its release's header, and gets the rule
# the newest wording gets (lines built from the catalogs' formats, every release that printed one).

_NCCL_HDR = "node1:1234:1300 [0] {loc} NCCL WARN {msg}"
_IB_PEER = "10.0.0.2<43210>"
_WORDINGS = {
    # NET/IB completion errors: 2.10-2.17, 2.18-2.19, 2.20-2.21, 2.22-2.28, 2.29+ (transport/net_ib/p2p.cc;
    # its optional GID parts printed empty leave two blanks that a paste collapses)
    "ib_completion": [
        ("transport/net_ib.cc:1261", f"NET/IB : Got completion from peer {_IB_PEER} with error 12, opcode 0, len 0, vendor err 129"),
        ("transport/net_ib.cc:1333", f"NET/IB : Got completion from peer {_IB_PEER} with error 12, opcode 0, len 0, vendor err 129 (Send)"),
        ("transport/net_ib.cc:1909", f"NET/IB : Got completion from peer {_IB_PEER} with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2"),
        ("transport/net_ib.cc:2121", f"NET/IB: Got completion from peer {_IB_PEER} with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2"),
        ("transport/net_ib/p2p.cc:688", f"NET/IB: Got completion from peer {_IB_PEER} with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  hca mlx5_0"),
        ("transport/net_ib/p2p.cc:688", f"NET/IB: Got completion from peer {_IB_PEER} with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0"),
    ],
    # a refused connect: 2.10-2.15 (`Net :`), 2.16-2.23 (socketStartConnect), 2.24+ (`%s: Connect to`)
    "socket_connect": [
        ("misc/socket.cc:456", "Net : Connect to 10.0.0.2<43210> failed : Connection refused"),
        ("misc/socket.cc:485", "socketStartConnect: Connect to 10.0.0.2<43210> failed : Connection refused"),
        ("misc/socket.cc:556", "socketPollConnect: Connect to 10.0.0.2<43210> failed : Connection refused"),
    ],
}
_TORCH_WORDINGS = {
    # the watchdog's report of the work it found failed: 2.2-2.6 (timeout, error) and 2.7+
    "watchdog_failure": [
        "[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 1] Timeout at NCCL work: 8, last enqueued NCCL work: 8, last completed NCCL work: 7.",
        "[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 8, last enqueued NCCL work: 8, last completed NCCL work: 7.",
        "[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 8 PG status: last enqueued work: 8, last completed work: 7",
    ],
    # the TCPStore client's connect timeout, printed as a std::chrono duration: seconds or minutes (2.0 - 2.2), ms
    "store_client_timeout": [
        "[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to connect to (10.0.0.1, 29500).",
        "[E socket.cpp:922] [c10d] The client socket has timed out after 30min while trying to connect to (10.0.0.1, 29500).",
        "[E1201 10:11:12.000000000 socket.cpp:1028] [c10d] The client socket has timed out after 600000ms while trying to connect to (10.0.0.1, 29500).",
    ],
    # the watchdog timeout: 1.9-1.13 (no SeqNum numels), 2.x; the watchdog thread's death, <= 2.2 and 2.3+
    "watchdog_timeout": [
        "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800320 milliseconds before timing out.",
        "[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800320 milliseconds before timing out.",
    ],
}


def _first_rule(text: str) -> str | None:
    rep = _report(text)
    return rep["diagnoses"][0]["id"] if rep["diagnoses"] else None


@pytest.mark.parametrize("family", sorted(_WORDINGS))
def test_older_nccl_wordings_get_the_newest_wordings_rule(family):
    want = None
    for loc, msg in reversed(_WORDINGS[family]):  # the newest first
        for text in (_NCCL_HDR.format(loc=loc, msg=msg), msg):
            got = _first_rule(text)
            assert got is not None and got.startswith("LD"), (text, got)
            want = want or got
            assert got == want, (family, text, got, want)


@pytest.mark.parametrize("family", sorted(_TORCH_WORDINGS))
def test_older_torch_wordings_get_the_newest_wordings_rule(family):
    lines = _TORCH_WORDINGS[family]
    newest = _report(lines[-1])["diagnoses"][0]
    for line in lines:
        bare = line.split("] ", 1)[1]  # without the c10 prefix
        for text in (line, bare):
            d = _report(text)["diagnoses"]
            assert d and (d[0]["id"], d[0]["category"]) == (newest["id"], newest["category"]), (text, d[:1])


@pytest.mark.parametrize("quoted", [
    '"RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.',
    '"RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one."',
    "'torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5',",
    "\u201cValueError: Default process group has not been initialized, please make sure to call init_process_group.\u201d",
])
def test_an_exception_line_a_post_quotes_is_read(quoted):
    """The quote marks around an exception line a post quotes are the poster's: the line is read as
    the exception it quotes (not silent)."""
    evs = _events(quoted)
    assert evs and evs[0].fields.get("exc_type", "").endswith(("RuntimeError", "DistBackendError", "ValueError")), \
        [(e.kind, e.fields) for e in evs]
    assert not evs[0].fields.get("exc_message", "").endswith(("\"", "'", "\u201d", ","))


@pytest.mark.parametrize("line, error", [
    ("llm_init: failed to initialize CUDA: system not yet initialized", "system not yet initialized"),
    ("cuda_check: CUDA call failed: an illegal memory access was encountered.", "an illegal memory access was encountered"),
])
def test_a_cuda_error_text_after_the_programs_own_words(line, error):
    """A program that prints ``<what>: cudaGetErrorString(err)``: the CUDA runtime's text after its words."""
    (ev,) = _events(line + "\n")
    assert ev.kind == "cuda.error" and ev.fields["error"] == error


@pytest.mark.parametrize("line", ["step 3: device-side assert triggered in my notes", "cache: invalid device ordinal",
                                  "loss: 0.25"])
def test_a_cuda_error_text_needs_words_about_cuda_before_it(line):
    assert not [e for e in _events(line + "\n") if e.kind == "cuda.error"]


@pytest.mark.parametrize("printed, release", [
    ("21.0.3", "2.10.3"), ("20.9.6", "2.9.6"), ("21.1.4", "2.11.4"), ("21.2.10", "2.12.10"), ("2.7.8", "2.7.8"),
    ("2.21.5", "2.21.5"),
])
def test_the_nccl_version_pytorch_misprinted_is_read_as_the_release(printed, release):
    """PyTorch up to 1.10 decoded NCCL's version code with the pre-2.9 scheme (major = code / 1000): NCCL
    2.10.3 (code 21003) printed as 21.0.3. The event carries the release, so that rules and the version
    comparison across ranks see 2.10.3."""
    line = (f"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, "
            f"unhandled system error, NCCL version {printed}")
    ev, *quoted = _events(line + "\n")
    assert ev.kind == "torch.nccl_error" and ev.fields["nccl_version"] == release
    assert [(q.kind, q.fields["version"]) for q in quoted] == [("nccl.version", release)]  # nested in it


@pytest.mark.parametrize("masked", ["xxxx ms", "XXXXXXms", "**** ms", "1800000ms"])
def test_a_gloo_timeout_with_its_milliseconds_masked_is_the_timeout(masked):
    """A poster masks the number of Gloo's "Timed out waiting <N>ms for recv operation to complete": the
    line is still the timeout (a peer that did not post the matching operation), not a generic Gloo card."""
    line = f"[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting {masked} for recv operation to complete"
    d = _report(line)["diagnoses"]
    assert d and d[0]["id"] == "LD903", d[:1]
    assert "peer_process_died" not in [x["category"] for x in d[:3]]


def test_invalid_usage_before_nccl_2_12_10_is_not_read_as_a_collective_mismatch():
    """NCCL's transports returned ncclInternalError for a mismatched collective until 2.12.10 and
    ncclInvalidUsage from then on: the release in PyTorch's message decides which reading leads."""
    old = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.7.8"
    new = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.14.3"
    assert _report(old)["diagnoses"][0]["category"] == "duplicate_gpu"
    assert _report(new)["diagnoses"][0]["category"] == "collective_mismatch"

# ------------------------------------------------------------------------------------------------
# a PyTorch message quoted up to its first sentence: the literal sentences that end its format are missing

@pytest.mark.parametrize("text, template", [
    ("The connection to the C10d store has failed.", "torch:elastic-rendezvous:the-connection-to-the-c10d-store-has"),
    ("The rendezvous state is corrupt.", "torch:elastic-rendezvous:the-rendezvous-state-is-corrupt-see-inner"),
])
def test_a_message_quoted_up_to_its_first_sentence_is_read(text, template):
    from logdoc.classify.torch import classify as classify_torch
    from logdoc.events import Envelope

    for t in (text, text + " See inner exception for details."):
        p = classify_torch(t, Envelope())
        assert p is not None and p.template == template, t
    # the first sentence with other words after it is not that message (only its own sentences may follow)
    assert classify_torch(text + " Something else happened here.", Envelope()) is None


def test_a_sentence_stop_inside_brackets_or_after_e_g_cuts_nothing():
    from logdoc.classify.torch.catalog import _dropped_tail

    assert _dropped_tail("ncclSystemError: System call (e.g. socket, malloc) or external library call failed.") == -1
    head = "The connection to the C10d store has failed. See inner exception for details."
    assert head[:_dropped_tail(head)] == "The connection to the C10d store has failed."
    assert _dropped_tail("Failed to bind {addr}. See the log.") == -1   # too little literal text left to name it


# A network plugin's own failure, pasted without NCCL's header: its `NET/<plugin>` lead and a failure
# word make it the WARN it was printed as; the plugin's INFO lines and NCCL's own formats are not.
@pytest.mark.parametrize("line, family", [
    # a completion-queue error entry: LD2041 reads every release's wording (the family card's reading, a rule's now)
    ("NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. Error: Input/output error. Completed length: 0",
     "LD2041"),
    ("NET/OFI aws-ofi-nccl initialization failed", "ofi_init_failed"),
    # the plugin's other start-up failures (aws-ofi-nccl src/nccl_ofi_net.cpp, nccl_ofi_rdma.cpp, 1.3's wording),
    # each read by the rule of its cause: no usable provider (LD2035), fi_fabric (LD2025), a step below failed (LD2033)
    ("NET/OFI OFI fi_getinfo() call failed: No data available", "LD2035"),
    ("NET/OFI Unable to find a protocol that worked.  Failing initialization.", "LD2033"),
    ("NET/OFI Couldn't open a fabric provider using ofiutils helper. RC: -61, ERROR: No data available", "LD2025"),
    ("NET/OFI Couldn't find any optimal provider", "LD2035"),
    ("NET/OFI Failed to initialize rdma protocol", "LD2033"),
    # a start-up failure that a rule names (LD2001: the libfabric it loaded is too old) gets the rule, not the card
    ("NET/OFI EFA provider requires at least libfabric version 1.22.0.", "LD2001"),
])
def test_a_network_plugins_failure_pasted_alone(line, family):
    evs = _events(line + "\n")
    assert [(e.kind, e.fields.get("header")) for e in evs] == [("nccl.warn", "none")]
    top = _report(line + "\n")["diagnoses"][0]
    assert top["id"] == (family if family.startswith("LD") else f"family:{family}")


@pytest.mark.parametrize("line", [
    "NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)",
    "NET/OFI Could not find any optimal provider supporting GPUDirect RDMA",   # the plugin's INFO (`Could not`)
    "NET/OFI Will not use DMA-BUF, requires Libfabric 1.20 or greater.",
    "NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.",   # NCCL's own INFO format, read as such or not at all
    "NET/IB : No device found.",
    "the NET/OFI docs say an error here is fine",
])
def test_plugin_lines_that_report_no_failure_are_not_warnings(line):
    assert all(e.level != "WARN" for e in _events(line + "\n"))


@pytest.mark.parametrize("line, kind", [
    ("NET/IB : No device found.", "nccl.info"),
    ("NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", "nccl.info"),
    ("NCCL_SOCKET_IFNAME set by environment to eth0", "nccl.info"),
    ("Using network Socket", None),        # too short a format to say it is NCCL's on its own
    ("Connected all rings", None),
])
def test_an_info_message_pasted_without_its_header(line, kind):
    evs = _events(line + "\n")
    assert [e.kind for e in evs] == ([kind] if kind else [])
    if kind:
        assert evs[0].level == "INFO" and evs[0].fields["header"] == "none" and evs[0].template


def test_abridged_openings_index_equals_a_pass_over_the_catalog():
    """match_abridged looks formats up by their opening (speed); a pass over every WARN format finds the same."""
    warn = [t for t in nccl_catalog().templates.values() if "WARN" in t.levels and len(t.format) >= nccl_bare.ABRIDGED_MIN]
    assert warn
    for t in warn[::7]:
        probe = t.format[:nccl_bare.ABRIDGED_MIN]
        linear = [u for u in nccl_catalog().templates.values() if "WARN" in u.levels and u.format.startswith(probe)]
        assert nccl_bare._warn_openings()[probe] == linear
        line = t.format.split("%")[0].rstrip() + " and then the poster's own words"
        if len(line) >= nccl_bare.ABRIDGED_MIN:
            nccl_bare.match_abridged(line)  # (runs; which format it names is test_every_specific_warn_format's)


@pytest.mark.parametrize("line, rule, category", [
    # no EFA provider: the EFA devices are not in the container (the plugin's start-up found no NIC)
    ("ip-10-0-1-5:1234:1300 [0] nccl_net_ofi_create_plugin:1012 NCCL WARN NET/OFI Couldn't open a fabric provider "
     "using ofiutils helper. RC: -61, ERROR: No data available", "LD2025", "container_missing_devices"),
    ("ip-10-0-1-5:1234:1300 [0] nccl_net_ofi_init:1441 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available",
     "LD2035", "container_missing_devices"),
])
def test_the_ofi_plugins_start_up_failure_ranks_its_cause(line, rule, category):
    top = _report(line + "\n")["diagnoses"][0]
    assert (top["id"], top["category"]) == (rule, category)


def test_the_ofi_plugins_start_up_failure_that_a_rule_names():
    # the libfabric it loaded is too old for the plugin: rule LD2001 says so (the family would rank the same cause)
    top = _report("ip-10-0-1-5:1234:1300 [0] int nccl_net_ofi_query_provider_capabilities(const fi_info*, unsigned int):651 "
                  "NCCL WARN NET/OFI EFA provider requires at least libfabric version 1.22.0.\n")["diagnoses"][0]
    assert (top["id"], top["category"]) == ("LD2001", "nccl_version_mismatch")


def test_an_ofi_plugin_failure_that_is_not_its_start_up_stays_generic():
    top = _report("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Unable to retrieve completion queue entries. "
                  "RC: -5, ERROR: Input/output error\n")["diagnoses"][0]
    assert top["id"] != "family:ofi_init_failed"


@pytest.mark.parametrize("line, category", [
    # a post that failed with EHOSTUNREACH: the security group's case ranks first (LD2026 leaves 113 to the card)
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Unable to post request; RC: -113 (Host is unreachable)",
     "firewall_or_unreachable_peer"),
])
def test_the_ofi_plugins_other_warnings_get_its_own_candidates(line, category):
    # not the generic NCCL WARN card: the plugin's failures rank versions, the EFA setup and a dead peer
    top = _report(line + "\n")["diagnoses"][0]
    assert (top["id"], top["category"]) == ("family:ofi_warn", category)


@pytest.mark.parametrize("line, rule, category", [
    # a plugin built against libfabric headers without the EFA option (LD2010's kind of mismatch): a provider feature
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI FI_OPT_EFA_EMULATED_WRITE not declared when the communication "
     "protocol is RDMA write.", "LD2024", "nccl_version_mismatch"),
    ("ip-10-0-1-5:1234:1300 [0] nccl_net_ofi_sendrecv_listen:1642 NCCL WARN NET/OFI Couldn't allocate listen_comm "
     "for dev 0", "LD2014", "cuda_oom"),
    ("ip-10-0-1-5:1234:1300 [0] nccl_net_ofi_isend:2100 NCCL WARN NET/OFI Invalid comm object provided",
     "LD2016", "nccl_bug_or_version_specific"),
    ("ip-10-0-1-5:1234:1300 [0] nccl_ofi_topo_create:738 NCCL WARN NET/OFI Unable to load hardware topology.",
     "LD2018", "container_missing_devices"),
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
     "LD2025", "container_missing_devices"),
    # ENOMEM from the same call stays the locked-memory rule's
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Couldn't enable endpoint. RC: -12, ERROR: Cannot allocate memory",
     "LD2004", "container_missing_devices"),
    # session 31's groups: GDRCopy, NCCL and the plugin not matching, the two ends disagreeing, setenv
    ("ip-10-0-1-5:1234:1300 [0] register_region:139 NCCL WARN NET/OFI gdr_pin_buffer failed: 22",
     "LD2029", "gpu_direct_rdma_issue"),
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Request for group recv size of 9, greater than maximum of 8",
     "LD2031", "nccl_version_mismatch"),
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Received an invalid communicator ID 300000 for device 0",
     "LD2032", "nccl_version_mismatch"),
    ("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Unable to set NCCL_NVLS_ENABLE", "LD2034", "cuda_oom"),
])
def test_the_ofi_plugins_warnings_grouped_by_cause(line, rule, category):
    top = _report(line + "\n")["diagnoses"][0]
    assert (top["id"], top["category"]) == (rule, category)


@pytest.mark.parametrize("cut", ["NET/OFI Request 0x7fbb944", "NET/OFI Request 0x7fbb944701b8 completed with… [truncated]"])
def test_an_ofi_completion_error_cut_after_its_request_pointer_is_still_one(cut):
    # `Request %p` starts no other WARN of aws-ofi-nccl
    top = _report(f"ip-10-0-1-5:1234:1300 [0] process_err_completion:1562 NCCL WARN {cut}\n")["diagnoses"][0]
    assert top["id"] == "family:ofi_completion_error"
    other = _report("ip-10-0-1-5:1234:1300 [0] NCCL WARN NET/OFI Request for group recv size of 9, greater than maximum of 8\n")
    assert other["diagnoses"][0]["id"] != "family:ofi_completion_error"
