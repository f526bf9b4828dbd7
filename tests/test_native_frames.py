"""A native crash inside NCCL, in the words of the program that printed its backtrace (logdoc/classify/native.py
reads the lines; knowledge/versions_config.yaml LD435/LD436 explain them)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.native import classify_native
from logdoc.pipeline import parse_sources


def _ids(text: str) -> list[str]:
    return [d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]]


@pytest.mark.parametrize("line, fmt, library, symbol", [
    (" 1 0x00000000000a1b2c ncclProxyProgress()  ???:0", "ucx", None, "ncclProxyProgress"),
    (" 3  /opt/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]", "backtrace_symbols", "libnccl.so", None),
    ("[node2:00956] [ 4] /usr/local/nccl/lib/libnccl.so.2(ncclGroupEnd+0x2c)[0x7d1d0c8f372c]", "backtrace_symbols",
     "libnccl.so.2", "ncclGroupEnd"),
    ("#0  0x00007ffff7a1b2c3 in ncclProxyProgress () from /usr/lib/x86_64-linux-gnu/libnccl.so.2", "gdb", "libnccl.so.2",
     "ncclProxyProgress"),
    ("PC: @     0xe1e2567f5014  (unknown)  ncclLocalOpAppend()", "abseil", None, "ncclLocalOpAppend"),
    ("    @     0x7f1234567890 ncclProxyService()", "abseil", None, "ncclProxyService"),
    ("    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)", "py-spy", None, "ncclLaunchKernelBefore_NoUncapturedCuda"),
    # a function of NCCL's RAS subsystem (ras<Name>) on a line that names nccl
    (" 1 0x0000000000122927 rasMsgHandlePeersUpdate()  /opt/nccl/src/ras/ras.cc:1010", "ucx", None,
     "rasMsgHandlePeersUpdate"),
])
def test_a_frame_in_nccl_is_read(line, fmt, library, symbol):
    p = classify_native(line)
    assert p is not None and p.kind == "process.native_frame"
    assert (p.fields["frame_format"], p.fields.get("library"), p.fields.get("symbol")) == (fmt, library, symbol)


@pytest.mark.parametrize("line", [
    " 1 0x00000000000a1b2c at::native::copy_()  ???:0",
    " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2d4) [0x7fedc925c274]",
    "#1  0x00007ffff7a1c000 in start_thread () from /lib/x86_64-linux-gnu/libpthread.so.0",
    "node1:12:12 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
    "    all_reduce (torch/distributed/distributed_c10d.py:2050)",
    "    sched_yield (libc.so.6)",
    " 1 0x0000000000122927 rasterizeTile()  /opt/nccl/src/x.cc:10",   # ras + lower case: not RAS's naming
])
def test_other_frames_and_lines_are_not_read_as_nccls(line):
    assert classify_native(line) is None


def test_the_kernels_segfault_report_names_the_library():
    p = classify_native("[ 12.5] pt_main_thread[12345]: segfault at 8 ip 00007f1a2b3c4d5e sp 00007f1a2b3c4000 error 4 "
                        "in libnccl.so.2.18.1[7f1a2b000000+1c00000]")
    assert p is not None and p.kind == "process.signal"
    assert (p.fields["signal"], p.fields["library"], p.fields["command"], p.fields["signal_pid"]) == (
        11, "libnccl.so.2.18.1", "pt_main_thread", 12345)


def test_a_crash_with_nccl_frames_is_read_as_nccls_and_one_without_is_not():
    crash = ("[node1:123:0:456] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)\n"
             "==== backtrace (tid:    456) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n")
    assert _ids(crash + " 1 0x00000000000a1b2c ncclProxyProgress()  ???:0\n")[0] == "LD435"
    assert _ids(crash + " 1 0x00000000000a1b2c at::native::copy_()  ???:0\n")[0] == "LD760"


def test_a_stack_waiting_in_nccls_work_fifo_is_read_unless_the_release_rewrote_it():
    stack = ("Thread 1302975 (active): \"MainThread\"\n    sched_yield (libc.so.6)\n"
             "    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)\n    ncclAllReduce (collectives.cc:49)\n")
    assert _ids(stack)[:1] == ["LD437"]
    assert "LD437" not in _ids("node1:7:7 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\n" + stack)


def test_a_crash_in_ncclS_ras_thread_is_read_as_that_and_a_crash_elsewhere_in_nccl_is_not():
    crash = ("[node1:123:0:456] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x48)\n"
             "==== backtrace (tid:    456) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n")
    assert _ids(crash + " 1 0x0000000000122927 rasMsgHandlePeersUpdate()  /opt/nccl/src/ras/ras.cc:1010\n")[0] == "LD441"
    assert _ids(crash + " 1 0x00000000000a1b2c ncclProxyProgress()  ???:0\n")[0] == "LD435"


@pytest.mark.parametrize("line, fmt, symbol", [
    # gdb's stop: the frame it stopped in, without its number
    ("gloo::transport::tcp::UnboundBuffer::send (this=0x5555595cb2e0, dstRank=0, slot=0, offset=0, nbytes=24) at "
     "../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:163", "gdb", "gloo::transport::tcp::UnboundBuffer::send"),
    ("#2  0x00007fffe1c2d3a4 in gloo::transport::tcp::Pair::handleEvents (this=0x5, events=1) at "
     "../third_party/gloo/gloo/transport/tcp/pair.cc:420", "gdb", "gloo::transport::tcp::Pair::handleEvents"),
])
def test_a_frame_in_gloo_is_read_as_glooS(line, fmt, symbol):
    p = classify_native(line)
    assert p is not None and p.kind == "process.native_frame"
    assert (p.fields["frame_format"], p.fields["component"], p.fields["symbol"]) == (fmt, "gloo", symbol)


def test_a_frame_in_nccl_says_so():
    p = classify_native("#0  0x00007ffff7a1b2c3 in ncclProxyProgress () from /usr/lib/x86_64-linux-gnu/libnccl.so.2")
    assert p is not None and p.fields["component"] == "nccl"


@pytest.mark.parametrize("line", [
    "at::native::copy_ (self=..., src=...) at ../aten/src/ATen/native/Copy.cpp:250",
    "main (argc=2, argv=0x7ffe) at gloo_bench.cc:12",
])
def test_a_stop_outside_nccl_and_gloo_is_not_read(line):
    assert classify_native(line) is None


def test_gdbS_report_of_the_signal_it_caught_is_read():
    p = classify_native('Thread 1 "python" received signal SIGSEGV, Segmentation fault.')
    assert p is not None and p.kind == "process.signal"
    assert (p.fields["signal"], p.fields["printer"]) == (11, "gdb")
    assert classify_native("Program received signal SIGABRT, Aborted.").fields["signal"] == 6


def test_a_crash_in_glooS_send_is_read_as_a_bad_peer_rank_not_as_ncclS():
    crash = ('Thread 1 "python" received signal SIGSEGV, Segmentation fault.\n'
             "gloo::transport::tcp::UnboundBuffer::send (this=0x5555595cb2e0, dstRank=0, slot=0, offset=0, nbytes=24) at "
             "../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:163\n")
    ids = _ids(crash)
    assert ids[0] == "LD922" and "LD435" not in ids
