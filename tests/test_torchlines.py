"""logdoc.classify.torch: one test per kind with real-looking lines (torch 2.13 real-run lines quoted
verbatim from the reference notes), plus the catalog coverage test."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from logdoc.events import Envelope
from logdoc.classify.torch import catalog as torch_catalog
from logdoc.classify.torch import classify

DATA = Path(__file__).parent / "data" / "torch"
E = Envelope(level="E", rank=0, source="ProcessGroupNCCL.cpp:617")
NONE = Envelope()


def c(text, env=NONE):
    p = classify(text, env)
    assert p is not None, text
    return p


# --------------------------------------------------------------------------------------------
# ProcessGroupNCCL watchdog

_PG = "torch:ProcessGroupNCCL:"

def test_watchdog_timeout():
    p = c("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, "
          "NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.", E)
    assert (p.kind, p.level, p.template) == ("torch.watchdog_timeout", "ERROR", _PG + "watchdog-caught-collective-operation-timeout-worknccl-seqnum")
    f = p.fields
    assert (f["seq"], f["op_type"], f["numel_in"], f["numel_out"], f["timeout_ms"], f["elapsed_ms"], f["pg_rank"]) == \
        (1, "BROADCAST", 131072000, 131072000, 600000, 600081, 0)


def test_watchdog_timeout_wrapped_and_old_record():
    p = c("[Rank 3] Watchdog caught collective operation timeout:\nWorkNCCL(SeqNum=7, OpType=ALLREDUCE,\n"
          "NumelIn=10, NumelOut=10, Timeout(ms)=1800000)\nran for 1800104 milliseconds before timing out.")
    assert p.kind == "torch.watchdog_timeout" and p.fields["elapsed_ms"] == 1800104 and p.fields["pg_rank"] == 3
    p = c("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, "
          "Timeout(ms)=1800000) ran for 1800519 milliseconds before timing out.")
    assert p.fields["seq"] == 4 and "numel_in" not in p.fields
    # 1.x's record (no SeqNum, NumelIn) is the same catalog message
    assert p.template == _PG + "watchdog-caught-collective-operation-timeout-worknccl-seqnum"
    p = c("[Rank 0] Work WorkNCCL(SeqNum=9, OpType=ALLGATHER, NumelIn=4, NumelOut=8, Timeout(ms)=60000) timed out in blocking wait.")
    assert p.kind == "torch.watchdog_timeout" and p.fields["blocking_wait"] is True
    assert p.template == _PG + "work-worknccl-seqnum-optype-numelin-numelout-timeout"


def test_async_exception_seed_wrapped():
    # /work/shared/seeds/003 (DGX Spark forum post), as the block assembler joins it
    p = c("[Rank 0] Collective\nWorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, Timeout(ms)=600000)\n"
          "raised the following async exception: NCCL error: invalid usage", E)
    assert p.kind == "torch.async_exception" and p.template == _PG + "collective-worknccl-seqnum-optype-numelin-numelout-timeout"
    f = p.fields
    assert (f["seq"], f["op_type"], f["numel_in"], f["timeout_ms"]) == (1, "COALESCED", 0, 600000)
    assert f["exception"] == "NCCL error: invalid usage"
    assert f["nccl_result"] == "ncclInvalidUsage"


def test_async_exception_full_nccl_text_and_old_wording():
    p = c("[Rank 1] Collective WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) "
          "raised the following async exception: NCCL error: remote process exited or there was a network error, "
          "NCCL version 2.21.5\nncclRemoteError: A call failed possibly due to a network error or a remote process "
          "exiting prematurely.\nLast error:\nsocketProgress: Connection closed by remote peer node2<51234>", E)
    f = p.fields
    assert f["nccl_result"] == "ncclRemoteError" and f["nccl_version"] == "2.21.5"
    assert f["last_error"].startswith("socketProgress: Connection closed by remote peer")
    p = c("[Rank 0] found async exception when checking for NCCL errors: NCCL error: unhandled system error, NCCL version 2.14.3")
    assert p.kind == "torch.async_exception" and p.level == "INFO" and p.fields["nccl_result"] == "ncclSystemError"


def test_watchdog_failure():
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 2635 "
          "PG status: last enqueued work: 2635, last completed work: 2634", E)
    f = p.fields
    assert p.kind == "torch.watchdog_failure"
    assert (f["pg_id"], f["pg_guid"], f["pg_desc"], f["pg_rank"], f["seq"], f["last_enqueued"], f["last_completed"]) == \
        (0, "0", "default_pg", 1, 2635, 2635, 2634)
    # wrapped with a blank line inside the prefix (seed 003)
    p = c("[PG ID 1 PG GUID 1(mesh_pp)\n\nRank 0] failure detected by watchdog at work sequence id: 1", E)
    assert (p.fields["pg_desc"], p.fields["pg_rank"], p.fields["seq"]) == ("mesh_pp", 0, 1)
    p = c("[PG ID 1 PG GUID 1 Rank 0]  failure detected by watchdog at work sequence id: 1 PG status: "
          "last enqueued work: 1, last completed work: -1")
    assert "pg_desc" not in p.fields and p.fields["last_completed"] == -1
    p = c("[PG 0 Rank 2] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered")
    assert p.kind == "torch.watchdog_failure" and p.fields["pg_id"] == 0 and p.fields["cause"]["kind"] == "cuda.error"


def test_work_progress():
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 0] NCCL Work update periodically: last enqueued NCCL work: 120, "
          "last completed NCCL work: 119.", Envelope(level="I"))
    assert (p.kind, p.level, p.fields["last_enqueued"], p.fields["last_completed"]) == ("torch.work_progress", "INFO", 120, 119)


def test_heartbeat():
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making "
          "progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) "
          "hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api "
          "(for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually "
          "stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) "
          "to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned "
          "helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, "
          "please attempt to debug the hang. ", E)
    assert p.kind == "torch.heartbeat" and p.fields["heartbeat_timeout_s"] == 480 and p.fields["pg_rank"] == 3
    p = c("[PG 0 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=3")
    assert p.kind == "torch.heartbeat" and p.fields["pg_id"] == 0


def test_flight_recorder():
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from this local "
          "rank and we will try our best to dump the debug info. Last enqueued NCCL work: 5, last completed NCCL work: 4."
          "This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order "
          "of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
          "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the "
          "communications library (e.g. NCCL), etc. ", E)
    assert p.kind == "torch.flight_recorder"
    assert (p.fields["source"], p.fields["last_enqueued"], p.fields["last_completed"]) == ("this local rank", 5, 4)
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 1] Observed flight recorder dump signal from another rank via TCPStore.")
    assert p.kind == "torch.flight_recorder"
    p = c("Finished writing Flight Recorder debug info to /tmp/nccl_trace_rank_0", Envelope(level="I"))
    assert p.kind == "torch.flight_recorder" and p.fields["path"] == "/tmp/nccl_trace_rank_0"
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 0] Terminating the process after attempting to dump debug info, due to "
          "collective timeout or exception.", Envelope(level="F"))
    assert (p.kind, p.level, p.fields["reason"]) == ("torch.teardown", "FATAL", "collective timeout or exception")


def test_desync_report():
    p = c("Rank 0\n\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
          "\t   - [1] joined but didn't finish collective #5 (count from 1)\n"
          "\t     [2, 3] finished collective #5, but didn't join collective #6 (count from 1)", E)
    assert p.kind == "torch.desync_report"
    assert p.fields["joined_not_finished"] == [{"ranks": [1], "seq": 5}]
    assert p.fields["finished_not_joined"] == [{"ranks": [2, 3], "seq": 5, "next_seq": 6}]
    assert p.fields["lagging_ranks"] == [1, 2, 3]
    p = c("Rank 2\n\t - To our best knowledge, ranks [0, 3] are the lagging ranks that caused this timeout. "
          "They never joined any collectives", E)
    assert p.fields["never_joined"] == [0, 3]


def test_pg_info():
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL initialization options: size: 8, global rank: 0, "
          "TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0", Envelope(level="I"))
    assert p.kind == "torch.pg_info" and p.fields["size"] == 8 and p.fields["timeout_ms"] == 600000
    p = c("[PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL environments: NCCL version: 2.21.5, "
          "TORCH_NCCL_ASYNC_ERROR_HANDLING: 3, TORCH_NCCL_ENABLE_TIMING: 0, TORCH_NCCL_BLOCKING_WAIT: 0, "
          "TORCH_DISTRIBUTED_DEBUG: OFF, TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK: 0, TORCH_NCCL_TRACE_BUFFER_SIZE: 2000, "
          "TORCH_NCCL_NAN_CHECK: 0, TORCH_NCCL_CUDA_EVENT_CACHE: 1", Envelope(level="I"))
    assert p.kind == "torch.pg_info" and p.fields["nccl_version"] == "2.21.5"


# --------------------------------------------------------------------------------------------
# NCCL error texts, DETAIL mismatch, monitored barrier

def test_nccl_error():
    p = c("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
          "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
          "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
          "Last error:\nsocketStartConnect: Connect to 10.0.0.2<43521> failed : Software caused connection abort")
    assert (p.kind, p.level) == ("torch.nccl_error", "ERROR")
    f = p.fields
    assert f["source_location"] == "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970"
    assert f["error_string"] == "unhandled system error (run with NCCL_DEBUG=INFO for details)"
    assert (f["nccl_result"], f["nccl_version"]) == ("ncclSystemError", "2.21.5")
    assert f["last_error"] == "socketStartConnect: Connect to 10.0.0.2<43521> failed : Software caused connection abort"
    assert f["exc_type"] == "torch.distributed.DistBackendError"
    p = c("NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid usage (run with NCCL_DEBUG=WARN for "
          "details), NCCL version 2.19.3\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
          "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000")
    assert p.fields["nccl_result"] == "ncclInvalidUsage" and p.fields["last_error"].startswith("Duplicate GPU detected")


def test_collective_mismatch_detail():
    fp = ("TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), "
          "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")
    p = c("torch.distributed.DistBackendError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
          f"CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[10], {fp}), but Rank 1 is running "
          f"collective: CollectiveFingerPrint(SequenceNumber=1, OpType=ALLREDUCE, TensorShape=[20], {fp})."
          "Collectives differ in the following aspects:   Tensor Tensor shapes: 10vs 20")
    f = p.fields
    assert p.kind == "torch.collective_mismatch"
    assert (f["rank"], f["other_rank"], f["seq"], f["other_seq"]) == (0, 1, 1, 1)
    assert (f["shape"], f["other_shape"], f["dtype"]) == ([10], [20], "Float")
    assert f["differs"] == ["shapes"] and f["diffs"]["shapes"] == ["10", "20"]
    p = c("Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint("
          f"SequenceNumber=3, OpType=BROADCAST, TensorShape=[4], {fp}), but Rank 0 is running collective: "
          f"CollectiveFingerPrint(SequenceNumber=2, OpType=ALLREDUCE, TensorShape=[4], {fp}).Collectives differ in the "
          "following aspects: \t Sequence number: 3vs 2  Op type: BROADCASTvs ALLREDUCE")
    assert p.fields["differs"] == ["sequence number", "op type"]
    assert p.fields["diffs"]["op type"] == ["BROADCAST", "ALLREDUCE"]
    p = c("Detected mismatch between collectives on ranks. Rank 0 is running collective: "
          "CollectiveFingerPrint(SequenceNumber=1649OpType=BARRIER), but Rank 1 is running collective: "
          "CollectiveFingerPrint(SequenceNumber=1650OpType=BARRIER).")
    assert (p.fields["seq"], p.fields["other_seq"], p.fields["differs"]) == (1649, 1650, ["sequence number"])


def test_monitored_barrier():
    # real run monitored-barrier-rank-missing (envelope already peeled)
    p = c("[Rank 0]: Rank 1 failed to pass monitoredBarrier in 5000 ms",
          Envelope(level="E", rank=0, source="ProcessGroupGloo.cpp:67"))
    assert (p.kind, p.fields["failed_ranks"], p.fields["timeout_ms"], p.fields["rank"]) == \
        ("torch.monitored_barrier", [1], 5000, 0)
    p = c("torch.distributed.DistBackendError: [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in 5000 ms\n"
          " Original exception: \n[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] "
          "Timed out waiting 5000ms for recv operation to complete")
    assert p.fields["failed_ranks"] == [1, 3]
    assert p.fields["cause"]["template"] == "gloo:transport/tcp/unbound_buffer.cc:78"


_GLOO_PG = "torch:ProcessGroupGloo:"


@pytest.mark.parametrize("line,tid", [
    ("[rank0]:[E1201 10:11:12.000000000 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 1 failed to pass monitoredBarrier in 5000 ms",
     _GLOO_PG + "rank-failed-to-pass-monitoredbarrier-in-ms"),
    ("[E ProcessGroupGloo.cpp:2793] [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in 30000 ms",
     _GLOO_PG + "ranks-failed-to-pass-monitoredbarrier-in-ms"),
    ("RuntimeError: [Rank 0]: Rank 2 failed to pass monitoredBarrier in 1000 ms\n Original exception: \n"
     "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out waiting 1000ms for send operation to complete",
     _GLOO_PG + "rank-failed-to-pass-monitoredbarrier-in-ms-2"),
    ("[rank3]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group "
     "watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
     _PG + "process-group-watchdog-thread-terminated-with-exception"),
    ("[E ProcessGroupNCCL.cpp:1182] [PG 0 Rank 3] Process group watchdog thread terminated with exception: unknown",
     _PG + "process-group-watchdog-thread-terminated-with-exception-2"),
    ("[E ProcessGroupNCCL.cpp:737] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800520 milliseconds "
     "before timing out.", _PG + "nccl-watchdog-thread-terminated-with-exception"),
    ("[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.",
     _PG + "watchdog-caught-collective-operation-timeout-worknccl-seqnum"),
    # the watchdog's report of the failed work in 2.2 - 2.6's words, under each release's PG prefix
    ("[rank7]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 7] Timeout at NCCL work: 1, last enqueued NCCL work: 1, "
     "last completed NCCL work: 0.", _PG + "failure-detected-by-watchdog-at-work-sequence"),
    ("[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 1] Timeout at NCCL work: 9, "
     "last enqueued NCCL work: 9, last completed NCCL work: 8.", _PG + "failure-detected-by-watchdog-at-work-sequence"),
    ("[rank2]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 2] Exception (either an error "
     "or timeout) detected by watchdog at work: 20, last enqueued NCCL work: 20, last completed NCCL work: 19.",
     _PG + "failure-detected-by-watchdog-at-work-sequence"),
])
def test_grammar_read_messages_carry_their_catalog_ids(line, tid):
    """A message a grammar reads carries its catalog row's id in every release's wording, with its c10
    and ProcessGroup prefixes (which the catalog's formats lack), so rules by template and the
    annotations find it."""
    from logdoc.annotations import catalog_ids
    from logdoc.pipeline import parse_text

    assert tid in catalog_ids().known
    evs = parse_text(line).events
    assert evs and evs[0].template == tid, [(e.kind, e.template) for e in evs]
    if "NCCL work:" in line:
        f = evs[0].fields
        assert (f["seq"], f["last_enqueued"] - f["last_completed"], f["pg_id"]) == (f["last_enqueued"], 1, 0)


def test_dump_signal_messages_read_whole():
    """Every release's wording of the flight-recorder dump message gives the work counters, whatever
    sentence holds them (2.3's `{details}`, 2.4's own words, `from  rank N` with two blanks)."""
    from logdoc.pipeline import parse_text

    tail = ("This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the "
            "order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
            "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the "
            "communications library (e.g. NCCL), etc. ")
    lines = [
        "[rank0]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1284] [PG 0 Rank 0] Received a dump signal from this "
        "local rank and will start to dump the debug info. Last enqueued NCCL work: 5, last completed NCCL work: 4.",
        "[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1284] [PG 0 Rank 1] Received a global timeout from "
        "another rank and will start to dump the debug info. Last enqueued NCCL work: 5, last completed NCCL work: 4.",
        "[rank0]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1413] [PG 0 (default_pg) Rank 0] Received a dump signal "
        "due to a collective timeout from this local rank and we will try our best to dump the debug info. Last "
        "enqueued NCCL work: 5, last completed NCCL work: 4." + tail,
        "[rank1]:[E1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a "
        "dump signal due to a collective timeout from  rank 0 and we will try our best to dump the debug info. Last "
        "enqueued NCCL work: 5, last completed NCCL work: 4." + tail,
    ]
    evs = parse_text("\n".join(lines) + "\n").events
    assert [e.kind for e in evs] == ["torch.flight_recorder"] * 4
    assert all((e.fields["last_enqueued"], e.fields["last_completed"]) == (5, 4) for e in evs), [e.fields for e in evs]
    assert evs[2].fields["pg_desc"] == "default_pg" and evs[3].fields["src_rank"] == 0


# --------------------------------------------------------------------------------------------
# TCPStore / c10d socket

def test_store_messages():
    env = Envelope(level="E", source="socket.cpp:1028", time="--11-29T17:02:34")
    p = c("[c10d] The client socket has timed out after 10000ms while trying to connect to (127.0.0.1, 29619).", env)
    assert (p.kind, p.fields["timeout_ms"], p.fields["host"], p.fields["port"]) == ("store.client_timeout", 10000, "127.0.0.1", 29619)
    p = c("[c10d] TCP client failed to connect/validate to host 127.0.0.1:29619 - retrying (try=0, timeout=10000ms, "
          "delay=4805ms): The client socket has timed out after 10000ms while trying to connect to (127.0.0.1, 29619).",
          Envelope(level="W"))
    assert (p.kind, p.level, p.fields["delay_ms"]) == ("store.connect_retry", "WARN", 4805)
    p = c("torch.distributed.DistStoreError: Timed out after 11 seconds waiting for clients. 2/3 clients joined.")
    assert (p.kind, p.fields["seconds"], p.fields["joined"], p.fields["world_size"]) == ("store.clients_joined", 11, 2, 3)
    p = c("torch.distributed.DistStoreError: wait timeout after 10000ms, keys: /default_pg/0//cpu//0/0")
    assert (p.kind, p.fields["timeout_ms"], p.fields["keys"]) == ("store.wait_timeout", 10000, ["/default_pg/0//cpu//0/0"])
    p = c("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
          "port: 29620, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")
    assert (p.kind, p.fields["port"], p.fields["errno_name"]) == ("store.listen_failed", 29620, "EADDRINUSE")
    p = c("[c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).", Envelope(level="W"))
    assert (p.kind, p.fields["errno_name"], p.fields["port"]) == ("store.listen_failed", "EADDRINUSE", 29500)
    p = c("torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. "
          "Did the remote server shutdown or crash?")
    assert p.kind == "store.recv_closed" and p.fields["exc_type"] == "torch.distributed.DistNetworkError"
    p = c("[c10d] The IPv6 network addresses of (nodeX, 29500) cannot be retrieved (gai error: -2 - Name or service not known).")
    assert (p.kind, p.fields["host"], p.fields["code"]) == ("store.resolve_failed", "nodeX", -2)
    p = c("torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 3, for "
          "key: store_based_barrier_key:1 (world_size=4, num_workers_joined=3, timeout=0:30:00 error=Socket Timeout)")
    assert (p.kind, p.fields["rank"], p.fields["world_size"], p.fields["joined"]) == ("store.barrier_timeout", 3, 4, 3)
    p = c("torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
          "via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: /default_pg//0. "
          "This may indicate a possible application crash on rank 0 or a network set up issue.")
    assert p.kind == "store.nccl_unique_id" and p.fields["rank"] == 1 and p.fields["cause"]["kind"] == "store.wait_timeout"


def test_c10d_debug_and_trace_tags_are_peeled():
    # C10D_DEBUG / C10D_TRACE write `[c10d - debug] ` / `[c10d - trace] ` where C10D_INFO writes `[c10d] `
    env = Envelope(level="I", source="TCPStore.cpp:342")
    for tag in ("[c10d] ", "[c10d - debug] ", "[c10d - trace] "):
        p = c(tag + "TCP client connected to host node1:29500", env)
        assert (p.kind, p.fields["host"], p.fields["port"]) == ("store.info", "node1", 29500), tag
    assert classify("[c10d - verbose] TCP client connected to host node1:29500", env) is None
    # a debug or trace message the catalog does not hold (it lists c10d's errors, warnings and infos) is still c10d's
    p = c("[c10d - debug] The client socket will attempt to connect to an IPv6 address of (10.0.0.1, 2222).", env)
    assert (p.kind, p.level) == ("torch.message", "DEBUG")
    assert c("[c10d - trace] Uv main loop running", env).level == "TRACE"


# --------------------------------------------------------------------------------------------
# Python exceptions, terminate, torchrun, spawn

def test_traceback_one_event():
    tb = ("Traceback (most recent call last):\n"
          '  File "/home/u/worker.py", line 41, in main\n'
          "    dist.all_reduce(t)\n"
          '  File "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py", line 81, in wrapper\n'
          "    return func(*args, **kwargs)\n"
          "           ^^^^^^^^^^^^^^^^^^^^^\n"
          "ValueError: something went wrong in user code")
    p = c(tb, Envelope(rank=0))
    f = p.fields
    assert (p.kind, p.level, p.template) == ("torch.exception", "ERROR", "py:traceback")
    assert (f["exc_type"], f["exc_message"], f["frames"]) == ("ValueError", "something went wrong in user code", 2)
    assert f["last_frame"] == "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py:81 in wrapper"


def test_traceback_known_message_and_chain():
    tb = ("Traceback (most recent call last):\n"
          '  File "/w/worker.py", line 30, in main\n'
          "    x = load()\n"
          "KeyError: 'x'\n"
          "\n"
          "During handling of the above exception, another exception occurred:\n"
          "\n"
          "Traceback (most recent call last):\n"
          '  File "/w/worker.py", line 41, in main\n'
          "    dist.all_reduce(t)\n"
          "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
          "[127.0.0.1]:7606. This is typically caused by a remote worker crashing. Check the logs of the remote worker "
          "before reporting an error. GLHF! 🏖️")
    p = c(tb, Envelope(rank=0))
    f = p.fields
    assert p.kind == "gloo.error" and p.template == "gloo:transport/tcp/pair.cc:553"
    assert f["exc_type"] == "RuntimeError" and f["traceback"] is True and f["frames"] == 1
    assert [x["exc_type"] for x in f["chain"]] == ["KeyError", "RuntimeError"]
    assert f["chain"][1]["relation"] == "context"
    assert (f["peer_addr"], f["peer_port_printed"], f["peer_port"]) == ("127.0.0.1", 7606, 0xB61D)


def test_spawn_process_raised_and_exited():
    tb = ("Traceback (most recent call last):\n"
          '  File "/w/main.py", line 20, in <module>\n'
          "    mp.spawn(run, nprocs=2)\n"
          '  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 215, in join\n'
          "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
          "torch.multiprocessing.spawn.ProcessRaisedException: \n"
          "\n"
          "-- Process 1 terminated with the following error:\n"
          "Traceback (most recent call last):\n"
          '  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 90, in _wrap\n'
          "    fn(i, *args)\n"
          '  File "/w/main.py", line 12, in run\n'
          "    x = torch.empty(10**12, device='cuda')\n"
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3725.29 GiB. GPU 1 has a total capacity of "
          "79.15 GiB of which 78.00 GiB is free. Including non-PyTorch memory, this process has 1.14 GiB memory in use.")
    p = c(tb)
    f = p.fields
    assert p.kind == "cuda.oom" and f["spawn_process"] == 1 and f["exc_type"] == "torch.OutOfMemoryError"
    assert (f["size"], f["gpu"], f["last_frame"]) == ("3725.29 GiB", 1, "/w/main.py:12 in run")
    p = c("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL")
    assert (p.kind, p.fields["local_rank"], p.fields["signal"], p.fields["launcher"]) == \
        ("torchrun.worker_failed", 1, "SIGKILL", "spawn")
    # torch <= 1.5 raised the base class: the line pasted alone is the same worker's death
    p = c("Exception: process 1 terminated with signal SIGKILL")
    assert (p.kind, p.fields["local_rank"], p.fields["signal"], p.fields["exc_type"]) == \
        ("torchrun.worker_failed", 1, "SIGKILL", "Exception")
    p = c("Exception: process 0 terminated with exit code 1")
    assert (p.kind, p.fields["exitcode"]) == ("torchrun.worker_failed", 1)
    # the base class's name alone is an exception line only with its colon (c10's backtrace head is not one)
    assert classify("Exception raised from foo at bar.cpp:1 (most recent call first):", NONE).kind == "torch.cxx_backtrace"


def test_terminate():
    p = c("terminate called after throwing an instance of 'c10::DistBackendError'\n"
          "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: "
          "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
          "NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n"
          "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):\n"
          "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f0c in /x/libc10.so)")
    f = p.fields
    assert (p.kind, p.level, f["cxx_type"], f["cxx_frames"]) == ("torch.terminate", "FATAL", "c10::DistBackendError", 1)
    assert f["what"].endswith("ran for 600010 milliseconds before timing out.")
    assert f["cause"]["kind"] == "torch.watchdog_failure" and f["cause"]["cause"]["kind"] == "torch.watchdog_timeout"


CHILD_FAILED = """============================================================
worker.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_17:06:38
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 21746)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 21746
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_17:06:38
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 21747)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""


def test_child_failed_block():
    p = c(CHILD_FAILED)
    f = p.fields
    assert p.kind == "torchrun.child_failed" and f["script"] == "worker.py"
    root, other = f["failures"]
    assert root == {"root_cause": True, "index": 0, "time": "2026-11-29T17:06:38", "host": "localhost", "rank": 1,
                    "local_rank": 1, "exitcode": 1, "pid": 21747, "signal": None, "error_file": None,
                    "traceback": "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"}
    assert (other["root_cause"], other["rank"], other["exitcode"], other["signal"], other["pid"]) == \
        (False, 0, -15, "SIGTERM", 21746)
    assert f["root_cause"]["rank"] == 1


def test_child_failed_inside_traceback():
    tb = ("Traceback (most recent call last):\n"
          '  File "/usr/bin/torchrun", line 8, in <module>\n'
          "    sys.exit(main())\n"
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + CHILD_FAILED.replace(
              "Failures:\n[1]:\n  time      : 2026-11-29_17:06:38\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
              "  exitcode  : -15 (pid: 21746)\n  error_file: <N/A>\n  traceback : Signal 15 (SIGTERM) received by PID 21746",
              "Failures:\n  <NO_OTHER_FAILURES>"))
    p = c(tb)
    assert p.kind == "torchrun.child_failed" and len(p.fields["failures"]) == 1
    assert p.fields["exc_type"].endswith("ChildFailedError") and p.fields["failures"][0]["rank"] == 1


def test_child_failed_without_its_failures_section():
    # a summary pasted without its `Failures:` section: title, dashes, then the root cause at once
    text = CHILD_FAILED[:CHILD_FAILED.index("Failures:")] + CHILD_FAILED[CHILD_FAILED.index("Root Cause"):]
    tb = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + text
    for p in (c(text), c(tb)):
        assert p.kind == "torchrun.child_failed", p
        assert [(f["rank"], f["exitcode"], f["root_cause"]) for f in p.fields["failures"]] == [(1, 1, True)]


def test_torchrun_agent_lines():
    env = Envelope(level="E", pid=21743, source="torch/distributed/elastic/multiprocessing/api.py:874")
    p = c("failed (exitcode: -9) local_rank: 0 (pid: 21812) of binary: /usr/bin/python3", env)
    assert (p.kind, p.fields["exitcode"], p.fields["local_rank"], p.fields["pid"], p.fields["signal"]) == \
        ("torchrun.worker_failed", -9, 0, 21812, "SIGKILL")
    p = c("Sending process 21746 closing signal SIGTERM", Envelope(level="W"))
    assert (p.kind, p.level, p.fields["pid"], p.fields["signal"]) == ("torchrun.sigterm", "WARN", 21746, "SIGTERM")
    p = c("[default] Worker group FAILED. 2/3 attempts left; will restart worker group", Envelope(level="I"))
    assert (p.kind, p.fields["remaining"], p.fields["max_restarts"], p.fields["role"]) == ("torchrun.restart", 2, 3, "default")
    p = c("Received 15 death signal, shutting down workers", Envelope(level="W"))
    assert p.kind == "torchrun.signal" and p.fields["signal"] == "15"
    p = c("The node 'node1_1234_0' has joined round 0 of the rendezvous 'job42' as rank 1 in a world of size 2.")
    assert p.kind == "torchrun.rendezvous" and p.fields["world_size"] == 2
    p = c("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError")
    assert p.kind == "torchrun.rendezvous"


# --------------------------------------------------------------------------------------------
# CUDA, Xid, Gloo

def test_cuda():
    p = c("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB "
          "of which 6.94 MiB is free. Process 12345 has 79.14 GiB memory in use.")
    assert (p.kind, p.fields["size"], p.fields["gpu"], p.fields["free"]) == ("cuda.oom", "20.00 MiB", 0, "6.94 MiB")
    p = c("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 12.34 GiB already "
          "allocated; 1.23 GiB free; 13.00 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try "
          "setting max_split_size_mb to avoid fragmentation.")
    assert p.kind == "cuda.oom" and p.fields["total_capacity"] == "15.78 GiB"
    p = c("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously "
          "reported at some other API call, so the stacktrace below might be incorrect.\n"
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
    assert (p.kind, p.fields["error"]) == ("cuda.error", "an illegal memory access was encountered")


def test_kernel_xid():
    p = c("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.")
    assert (p.kind, p.fields["xid"], p.fields["pci"], p.fields["xid_pid"], p.fields["message"]) == \
        ("kernel.xid", 79, "0000:3b:00", 1234, "GPU has fallen off the bus.")
    p = c("[12345.678901] NVRM: Xid (PCI:0000:07:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0)")
    assert p.kind == "kernel.xid" and p.fields["xid"] == 13


def test_gloo_errors():
    p = c("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
          "[127.0.0.1]:43749. This is typically caused by a remote worker crashing. Check the logs of the remote worker "
          "before reporting an error. GLHF! 🏖️", Envelope(rank=0))
    f = p.fields
    assert (p.kind, p.template, f["code_location"]) == ("gloo.error", "gloo:transport/tcp/pair.cc:553", "gloo/transport/tcp/pair.cc:553")
    assert (f["peer_addr"], f["peer_port_printed"], f["peer_port"]) == ("127.0.0.1", 43749, 58794)  # checked on a real run
    p = c("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.42]:53121")
    assert p.fields["code_location"] == "gloo/transport/tcp/pair.cc:598" and p.fields["srcdir"] == "../third_party/gloo/"
    p = c("[../third_party/gloo/gloo/transport/tcp/pair.cc:525] Read error [127.0.0.1]:55523: Connection reset by peer")
    assert (p.fields["errno_text"], p.fields["errno_name"]) == ("Connection reset by peer", "ECONNRESET")
    p = c("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for "
          "recv operation to complete")
    assert p.fields["timeout_ms"] == 5000 and p.template == "gloo:transport/tcp/unbound_buffer.cc:78"
    p = c("RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:84] "
          "ifa != nullptr. Unable to find address for: eth9nonexist")
    assert (p.fields["condition"], p.fields["iface"], p.fields["enforce"]) == ("ifa != nullptr", "eth9nonexist", True)
    p = c("[enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/socket.cc:24] rv != -1. -1 vs -1. "
          "socket: Too many open files")
    assert (p.fields["lhs"], p.fields["rhs"], p.fields["errno_name"]) == ("-1", "-1", "EMFILE")
    p = c("[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:288] ss1.ss_family == ss2.ss_family. 2 vs 10")
    assert (p.fields["lhs"], p.fields["rhs"], p.template) == ("2", "10", "gloo:transport/tcp/device.cc:288")
    p = c("[enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 6232 vs 4. "
          "Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?")
    assert p.template == "gloo:transport/tcp/pair.cc:456"


def test_gloo_connect_full_mesh_and_debug():
    p = c("Gloo connectFullMesh failed with [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152] timed out "
          "connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:18306$1",
          Envelope(level="E", source="ProcessGroupGloo.cpp:67"))
    f = p.fields
    assert p.kind == "gloo.connect_full_mesh"
    assert (f["code_location"], f["errno_text"], f["errno_name"]) == ("gloo/transport/tcp/pair.cc:152", "Connection refused", "ECONNREFUSED")
    assert (f["peer_addr"], f["peer_port_printed"], f["peer_seq"]) == ("127.0.0.1", 18306, 1)
    p = c("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/debug_logger.cc:9] ERROR failed to connect, willRetry=1, "
          "retry=1, retryLimit=3, rank=1, size=2, local=[127.0.0.1]:9377, remote=[127.0.0.1]:18306$1, "
          "error=SO_ERROR: Connection refused, remote=[127.0.0.1]:18306$1")
    f = p.fields
    assert (p.kind, p.level, p.template) == ("gloo.debug", "ERROR", "gloo:transport/tcp/debug_logger.cc:9")
    assert (f["will_retry"], f["retry_count"], f["retry_limit"], f["gloo_rank"], f["gloo_size"]) == (1, 1, 3, 1, 2)
    assert (f["peer_port_printed"], f["local_port_printed"], f["errno_name"]) == (18306, 9377, "ECONNREFUSED")


def test_not_torch():
    assert classify("epoch 3 step 100 loss 0.25", NONE) is None
    assert classify("", NONE) is None
    assert classify("some Error happened here", NONE) is None


def test_long_message_is_cheap():
    import time
    big = "[Rank 0] Collective WorkNCCL(SeqNum=1, OpType=X, NumelIn=0, NumelOut=0, Timeout(ms)=1) " \
          "raised the following async exception: " + "x" * (1 << 20)
    t0 = time.process_time()
    assert c(big).kind == "torch.async_exception"
    assert classify("The client socket has " + "a " * 300000, NONE) is None or True
    assert time.process_time() - t0 < 5


# --------------------------------------------------------------------------------------------
# coverage of the catalogs

VALUES = {
    "rank": "1", "global_rank": "0", "seq": "12", "seq2": "13", "pg_id": "0", "pg_guid": "0", "pg_desc": "default_pg",
    "op_type": "ALLREDUCE", "op_type2": "BROADCAST", "numel_in": "1024", "numel_out": "1024", "timeout_ms": "600000",
    "elapsed_ms": "600081", "last_enqueued": "12", "last_completed": "11", "exception": "Socket Timeout",
    "traceback": "#0 all_reduce from /x/distributed_c10d.py:2501", "src_rank": "2", "signal_key": "should_dump",
    "nccl_error_string": "unhandled system error (run with NCCL_DEBUG=INFO for details)", "nccl_version": "2.21.5",
    "nccl_error_interpretation": "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    "nccl_last_error": "socketStartConnect: Connect to 10.0.0.2<43521> failed : Connection refused",
    "reason": "NCCL error: unhandled system error", "key": "0", "keys_json": '["0"]', "description": "NCCL abort",
    "heartbeat_timeout_s": "480", "n": "3", "details": "Last enqueued NCCL work: 5", "exit_reason": "collective timeout",
    "writer_target": "/tmp/nccl_trace_rank_1", "path": "/tmp/nccl_trace_rank_1", "desync_report":
    "\n\t - To our best knowledge, ranks [2] are the lagging ranks that caused this timeout. They never joined any collectives",
    "ranks": "1, 2", "store_key": "store_based_barrier_key:1", "size": "8", "ptr": "0", "color": "0", "pg_name": "0",
    "ms": "12", "s": "480", "device": "cuda:0", "comm_repr": "0x55d2c3a0", "device_index": "0", "value": "INFO",
    "bound_device": "cuda:1", "advice": "Specify device_ids in barrier() to force use of a particular device.",
    "dtype": "ComplexHalf", "source_path": "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", "line": "1970",
    "code": "2", "comm_prefix": "[PG 0]", "mode": "blocking", "gloo_error":
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for recv operation to complete",
    "failed_rank": "1", "failed_ranks": "1, 3", "shape": "10", "shape2": "20", "tensor_options": "TensorOptions(dtype=float)",
    "tensor_options2": "TensorOptions(dtype=float)", "other_rank": "0", "differences": "  Tensor Tensor shapes: 10vs 20",
    "other_seq": "13", "other_op_type": "BROADCAST", "other_shape": "20", "other_dtype": "Half", "other_device": "cuda",
    "fingerprint": "CollectiveFingerPrint(SequenceNumber=1, OpType=BARRIER)", "error": "Connection reset by peer",
    "host": "127.0.0.1", "port": "29500", "fd": "4", "local_addr": "[::ffff:127.0.0.1]:49268",
    "remote_addr": "[::ffff:127.0.0.1]:29500", "socket": "SocketImpl(fd=4)", "res": "-1", "err": "Connection reset by peer",
    "addr": "[::]:29500", "errno": "98", "strerror": "Address already in use", "gai_strerror": "Name or service not known",
    "uv_code": "-98", "uv_name": "EADDRINUSE", "uv_message": "address already in use", "seconds": "11", "joined": "2",
    "world_size": "3", "delay_ms": "4805", "expected": "1", "got": "0", "name": "EOF", "desc": "end of file",
    "line_of_uncaught_python_traceback": "Traceback (most recent call last):", "timeout": "0:30:00",
    "exitcode": "-9", "local_rank": "0", "pid": "21812", "binary": "/usr/bin/python3", "fn_name": "run",
    "start_method": "spawn", "SIGNAME": "SIGKILL", "kill_signal": "SIGKILL", "role": "default", "remaining": "2",
    "max_restarts": "3", "addr_": "x", "group_rank": "0", "list": "[0, 1]", "node": "node1_1234_0", "round": "0",
    "run_id": "job42", "function": "throwTimeoutError", "cxx_exception_type": "c10::DistBackendError",
    "message": "boom", "uv": "x", "worker_output_line": "hello", "script_or_fn": "worker.py", "idx": "0",
    "hostname": "node1", "signal_name": "(SIGKILL)", "signum": "9", "counter": "1", "fragments": "x",
    "peer": "[127.0.0.1]:43749", "iface": "eth9", "num_connected": "1", "size_minus_1": "3",
    "srcdir": "/__w/pytorch/pytorch/third_party/gloo/", "YYYY-MM-DD_HH:MM:SS": "2026-11-29_17:06:38",
    "root_failure": "[0]:\n  time      : 2026-11-29_17:06:38\n  host      : node1\n  rank      : 1 (local_rank: 1)\n"
                    "  exitcode  : 1 (pid: 21747)\n  error_file: <N/A>\n  traceback : boom",
}


def _value(name: str) -> str:
    name = name.strip()
    if name in VALUES:
        return VALUES[name]
    if name.startswith("=*"):
        return "=" * 60
    if name.startswith("-*"):
        return "-" * 60
    if name.startswith("fragments:") or name == "empty message":
        return ""
    if "|" in name:
        return name.split("|")[0]
    if re.search(r"(^|_)(rv|nfds|n|rank|size|offset|length|slot|sz|retry|count|limit|family|errno)\b", name) or \
            any(ch in name for ch in "()+-.%") or name.startswith(("op.", "sizeof", "context.", "data.")):
        return "7"
    if name in ("YYYY-MM-DD_HH:MM:SS",):
        return "2026-11-29_17:06:38"
    return "value"


def render(fmt: str) -> str:
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "{":
            depth, j = 1, i + 1
            while j < len(fmt) and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            inner = fmt[i + 1:j - 1]
            if "|" in inner and "{" not in inner:
                alts = inner.split("|")
                if alts[0] == "other_failures":
                    out.append(alts[1])
                else:
                    out.append(alts[0] if alts[0] not in ("reason", "value", "error_file") else _value(alts[0]))
            else:
                out.append(_value(re.sub(r":\d+$", "", inner)) if "{" not in inner else _value(inner))
            i = j
            continue
        out.append(ch)
        i += 1
    text = "".join(out).replace("\\n", "\n").replace("\\t", "\t")
    return text.replace("{srcdir}", "/__w/pytorch/pytorch/third_party/gloo/")


def _level_env(level: str) -> Envelope:
    lv = level.replace("(old)", "")
    letter = {"ERROR": "E", "WARNING": "W", "INFO": "I", "FATAL": "F", "VLOG": "V"}.get(lv)
    return Envelope(level=letter) if letter else Envelope()


def catalog_rows():
    rows = []
    with open(DATA / "torch-messages.tsv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            rows.append((f"torch {r['component']} {r['level']}", r["format"], _level_env(r["level"])))
    with open(DATA / "gloo-messages.tsv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            if r["file"].startswith("gloo/transport/tcp/"):
                rows.append((f"gloo {r['file']}:{r['line']}", r["format"], Envelope()))
    return rows


def test_catalog_coverage():
    rows = catalog_rows()
    misses = []
    hit = 0
    for label, fmt, env in rows:
        text = render(fmt)
        if label.startswith("torch c10-logging") or (" PREFIX" in label):
            # envelope formats: the message inside is what classify() sees
            text = text.split("] ", 1)[-1] if "] " in text else text
            if text.startswith("[{"):
                text = "value"
        p = classify(text, env)
        if p is not None and p.template is not None:
            hit += 1
        else:
            misses.append((label, text[:160].replace("\n", "\\n")))
    ratio = hit / len(rows)
    # quiet when it passes; on failure the coverage and every miss are the assertion's message
    assert ratio >= 0.90, (f"torch/gloo catalog coverage: {hit}/{len(rows)} = {ratio:.1%} rows get a template; misses:\n"
                           + "\n".join(f"  miss: {label}: {text}" for label, text in misses))


@pytest.mark.parametrize("wrapper", ["RuntimeError: ", "torch.distributed.DistBackendError: ", "[rank0]: "])
def test_exception_wrappers_keep_kind(wrapper):
    text = "The client socket has timed out after 10000ms while trying to connect to (127.0.0.1, 29619)."
    if wrapper == "[rank0]: ":
        p = classify(text, Envelope(rank=0))
    else:
        p = classify(wrapper + text, NONE)
    assert p.kind == "store.client_timeout"


def test_child_failed_without_index_lines():
    # as seen after a prefix peeler removed the `[1]:` lines (real run torchrun-worker-python-exception)
    text = re.sub(r"\n\[\d+\]:", "", CHILD_FAILED)
    p = c(text)
    assert p.kind == "torchrun.child_failed" and len(p.fields["failures"]) == 2
    assert p.fields["failures"][0]["root_cause"] and p.fields["failures"][0]["index"] is None
    assert p.fields["failures"][1]["signal"] == "SIGTERM"


@pytest.mark.parametrize("start,roots,others", [
    ("Failures:", [1], [0]),                          # the border and the title cut
    ("[1]:", [1], [0]),                               # cut at the first entry
    ("  host      : localhost\n  rank      : 0", [1], [0]),   # cut inside the first entry (its [1]: and time lost)
    ("  exitcode  : -15", [1], [None]),               # ... down to its exit code: rank and host gone
    ("Root Cause (first observed failure):", [1], []),
    ("[0]:", [1], []),                                # only the root cause's entry, before the closing border
    ("  error_file: <N/A>\n  traceback : To enable", [None], []),
])
def test_child_failed_summary_cut_before_its_head(start, roots, others):
    """A paste that starts inside torchrun's summary (elastic's format) is one record and one event with
    every worker's failure, each in its section: the entries after `Root Cause` or just before the
    closing border are the root cause."""
    from logdoc.pipeline import parse_text

    text = CHILD_FAILED[CHILD_FAILED.rindex(start) if start.startswith(("[0]", "  error")) else CHILD_FAILED.index(start):]
    evs = parse_text("some training output\n" + text + "\nafter the summary\n").events
    assert [e.kind for e in evs] == ["torchrun.child_failed"], [(e.kind, e.text) for e in evs]
    ev = evs[0]
    assert ev.line == 2 and ev.end_line == 1 + text.count("\n") + 1
    fails = ev.fields["failures"]
    assert [f["rank"] for f in fails if f["root_cause"]] == roots
    assert [f["rank"] for f in fails if not f["root_cause"]] == others
    assert {f["exitcode"] for f in fails} == ({1, -15} if others else {1} if "error_file" not in start else {None})
    assert fails[0]["traceback"].startswith("To enable traceback")


def test_child_failed_summary_body_alone_needs_an_exit_code():
    """Field-like lines that hold no exit code and no traceback are not a failure summary."""
    from logdoc.pipeline import parse_text

    assert not parse_text("  time      : 2026-11-29_17:06:38\n  host      : node1\n  rank      : 3\n").events


def _match_templates_reference(text, wheres, file=None, line=None):
    """The table scan _match_templates did before its token index: every template in order (with a
    location, none of another file when a row of that file makes the check the text names)."""
    text = text[:torch_catalog.MAX_MATCH]
    table = torch_catalog.templates()
    best = None
    for where in wheres:
        cond = text.split(". ", 1)[0].strip()
        own = any(t.file == file and t.format.strip().startswith(cond + ". ") for t in table[where])
        for t in table[where]:
            if file is not None and own and t.file != file:
                continue
            if t.anchor and t.anchor not in text:
                continue
            fields = t.match(text)
            if fields is None:
                continue
            if file is None:
                return t, fields
            score = 0
            if t.file and t.file == file:
                score = 2 if (line is not None and t.id.endswith(f":{line}")) else 1
            if best is None or score > best[0]:
                best = (score, t, fields)
            if score == 2:
                break
    return (best[1], best[2]) if best else None


def test_token_index_picks_what_the_full_table_scan_picks():
    """_match_templates tries only the templates whose anchor is a whole token of the message (or
    that cannot be indexed so): on every rendered catalog line, every sample line, and those lines
    with their blanks changed (tabs, doubled, non-breaking), it returns what the scan of the whole
    table returns."""
    import random
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_fastpath_prefilter import rendered_lines

    texts = [ln for _, ln in rendered_lines()]
    for p in sorted((Path(__file__).resolve().parents[1] / "samples").glob("*/*.log")):
        texts += p.read_text(encoding="utf-8", errors="replace").splitlines()
    r = random.Random(5)
    more = []
    for t in texts:
        if " " in t and r.random() < 0.3:
            more.append(t.replace(" ", r.choice(["\t", "  ", "\u00a0", " \n "]), r.randrange(1, 4)))
    texts += more
    tried = 0
    for text in texts:
        for body in (text, text.split("] ", 1)[-1], "RuntimeError: " + text):
            for wheres, file, line in ((("body", "line"), None, None), (("gloo",), "gloo/transport/tcp/pair.cc", 1)):
                got = torch_catalog.match_templates(body, wheres, file, line)
                want = _match_templates_reference(body, wheres, file, line)
                assert (got and (got[0].id, got[1])) == (want and (want[0].id, want[1])), body
                tried += 1
    assert tried > 20000


@pytest.mark.parametrize("line, note", [
    ("[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use "
     "TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)", "logdoc:c10d:env-deprecated"),
    ("[W ProcessGroupNCCL.cpp:1692] Warning: 0NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives. "
     "(function operator())", "logdoc:pg:avoid-record-streams-p2p"),
    ("[W127 18:33:23.970348032 ProcessGroupNCCL.cpp:981] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, "
     "this environment variable is thus deprecated. (function operator())", "logdoc:pg:avoid-record-streams-default"),
    ("[rank0]:[W207 01:57:35.912382100 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed "
     "before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to "
     "ensure that any pending NCCL operations have finished in this process. (function operator())",
     "logdoc:pg:not-destroyed-before-destruct"),
    ("No device id is provided via `init_process_group` or `barrier `. Using the current device set by the user.",
     "logdoc:c10d:no-device-id"),
])
def test_distributed_advice_warnings_are_explained_as_harmless(line, note):
    """The distributed package's deprecation and advice warnings are read and explained as notes (never
    listed as not understood, never a diagnosis)."""
    from logdoc import kb
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    report = build_report(parse_sources([("x.log", line + "\n")]), kb.load_rules())
    assert not report["diagnoses"] and not report.get("unrecognized")
    assert [n["id"] for n in report["notes"]] == [f"note:{note}"]


def test_the_device_guess_of_newer_releases_is_the_barrier_guess():
    from logdoc import kb
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    line = ("[rank1]:[W508 15:19:59.517997423 ProcessGroupNCCL.cpp:4715] [PG ID 0 PG GUID 0 Rank 1]  using GPU 1 as "
            "device used by this process is currently unknown. This can potentially cause a hang if this rank to GPU "
            "mapping is incorrect. You can pecify device_id in init_process_group() to force use of a particular device.\n")
    report = build_report(parse_sources([("x.log", line)]), kb.load_rules())
    assert [n["id"] for n in report["notes"]] == ["LD455"] and "GPU 1" in report["notes"][0]["title"]


def test_the_store_based_barriers_count_above_the_world_size_is_its_excess():
    # ultralytics/yolov5#4574: `world_size=4, worker_count=8` never comes down to 4 (LD6081)
    from logdoc.pipeline import parse_sources

    line = ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
            "(world_size=4, worker_count=8, timeout=0:30:00)")
    (ev,) = [e for e in parse_sources([("log.txt", line + "\n")]).events if e.kind == "store.barrier_wait"]
    assert ev.fields["excess"] == 4
    below = line.replace("worker_count=8", "worker_count=3")
    (ev,) = [e for e in parse_sources([("log.txt", below + "\n")]).events if e.kind == "store.barrier_wait"]
    assert "excess" not in ev.fields
