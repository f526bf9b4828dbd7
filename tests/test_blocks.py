"""logdoc.blocks: multi-line record assembly, per stream; every line in exactly one record."""
from __future__ import annotations

from logdoc.blocks import BlockAssembler, Record
from logdoc.events import Envelope
from logdoc.classify.torch import classify

B = Envelope()


def run(lines, **kw):
    ba = BlockAssembler(**kw)
    recs: list[Record] = []
    for i, item in enumerate(lines, 1):
        env, text = item if isinstance(item, tuple) else (B, item)
        recs.extend(ba.feed(i, env, text))
    recs.extend(ba.flush())
    # never drop a line, never duplicate one
    assert sum(r.nlines for r in recs) == len(lines)
    got = sorted(t for r in recs for t in r.text.split("\n"))
    want = sorted((x[1] if isinstance(x, tuple) else x) for x in lines)
    assert got == want
    return sorted(recs, key=lambda r: r.line)


def test_plain_lines_pass_through():
    recs = run(["epoch 1", "loss 0.3", "", "done"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_traceback_is_one_record_with_rank_prefix_peeled():
    r0 = Envelope(rank=0)
    lines = [(r0, "Traceback (most recent call last):"),
             (r0, '  File "/home/u/worker.py", line 41, in main'),
             (r0, "    dist.all_reduce(t)"),
             (r0, "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed "
                  "by peer [127.0.0.1]:7606. This is typically caused by a remote worker crashing."),
             (r0, "next thing")]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 4), (5, 5)]
    p = classify(recs[0].text, recs[0].env)
    assert p.kind == "gloo.error" and p.fields["frames"] == 1


def test_chained_traceback():
    lines = ["Traceback (most recent call last):", '  File "a.py", line 1, in f', "    g()", "KeyError: 'x'", "",
             "During handling of the above exception, another exception occurred:", "",
             "Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "    f()",
             "ValueError: bad", "", "after"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 11), (12, 12), (13, 13)]
    p = classify(recs[0].text)
    assert (p.fields["exc_type"], [x["exc_type"] for x in p.fields["chain"]]) == ("ValueError", ["KeyError", "ValueError"])


def test_interleaved_ranks_do_not_mix():
    r0, r1 = Envelope(rank=0), Envelope(rank=1)
    lines = [(r1, "Traceback (most recent call last):"), (r0, "Traceback (most recent call last):"),
             (r1, '  File "w.py", line 4, in main'), (r0, '  File "w.py", line 5, in main'),
             (r1, "    x()"), (r0, "    y()"),
             (r1, "RuntimeError: one"), (r0, "RuntimeError: two"),
             (r1, "plain 1"), (r0, "plain 0")]
    recs = run(lines)
    tbs = [r for r in recs if r.text.startswith("Traceback")]
    assert {r.env.rank: r.text.splitlines()[-1] for r in tbs} == {0: "RuntimeError: two", 1: "RuntimeError: one"}
    assert all(r.text.count("\n") == 3 for r in tbs)


def test_seed_003_wrapped_worknccl_and_pg_prefix():
    e1 = Envelope(rank=0, level="E", time="--01-01T21:57:19", source="ProcessGroupNCCL.cpp:617")
    e2 = Envelope(rank=0, level="E", time="--01-01T21:57:19", source="ProcessGroupNCCL.cpp:2290")
    lines = [(e1, "[Rank 0] Collective"),
             "WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=0, NumelOut=0, Timeout(ms)=600000)",
             "raised the following async exception: NCCL error: invalid usage",
             "",
             (e2, "[PG ID 1 PG GUID 1(mesh_pp)"),
             "",
             "Rank 0] failure detected by watchdog at work sequence id: 1",
             "",
             "What works:"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 4), (5, 7), (8, 8), (9, 9)]
    p = classify(recs[0].text, recs[0].env)
    assert (p.kind, p.fields["seq"], p.fields["nccl_result"]) == ("torch.async_exception", 1, "ncclInvalidUsage")
    p = classify(recs[2].text, recs[2].env)
    assert (p.kind, p.fields["pg_desc"], p.fields["seq"]) == ("torch.watchdog_failure", "mesh_pp", 1)
    assert recs[2].env.rank == 0


def test_child_failed_block_and_in_traceback():
    block = ["=" * 60, "worker.py FAILED", "-" * 60, "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60,
             "Root Cause (first observed failure):", "[0]:", "  time      : 2026-11-29_17:06:38",
             "  host      : localhost", "  rank      : 1 (local_rank: 1)", "  exitcode  : 1 (pid: 21747)",
             "  error_file: <N/A>",
             "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html", "=" * 60]
    recs = run(["before"] + block + ["after"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 16), (17, 17)]
    assert classify(recs[1].text).kind == "torchrun.child_failed"
    tb = ["Traceback (most recent call last):", '  File "/usr/bin/torchrun", line 8, in <module>', "    sys.exit(main())",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "] + block
    recs = run(tb + ["after"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 19), (20, 20)]
    p = classify(recs[0].text)
    assert p.kind == "torchrun.child_failed" and p.fields["failures"][0]["rank"] == 1


def test_a_separator_line_is_not_a_child_failed_block():
    recs = run(["=" * 40, "epoch 1 summary", "=" * 40])
    assert len(recs) == 3


def test_nccl_error_tail_and_cxx_frames():
    e = Envelope(rank=1, level="W", source="TCPStore.cpp:340")
    lines = ["torch.distributed.DistBackendError: NCCL error in: /pytorch/x/ProcessGroupNCCL.cpp:1970, unhandled system "
             "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
             "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
             "Last error:",
             "socketStartConnect: Connect to 10.0.0.2<43521> failed : Software caused connection abort",
             (e, "[c10d] TCP client failed to connect/validate to host 127.0.0.1:29619 - retrying (try=0, timeout=10000ms, "
                 "delay=4805ms): The client socket has timed out after 10000ms while trying to connect to (127.0.0.1, 29619)."),
             "Exception raised from throwTimeoutError at /__w/pytorch/pytorch/torch/csrc/distributed/c10d/socket.cpp:1030 "
             "(most recent call first):",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<...>) + 0x9d (0x7f4a86596b8d in .../torch/lib/libc10.so)",
             "<omitting python frames>",
             "frame #38: _start + 0x21 (0x561b05ce2081 in .../bin/python)",
             "unrelated"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 4), (5, 9), (10, 10)]
    p = classify(recs[0].text)
    assert p.fields["last_error"].startswith("socketStartConnect")
    p = classify(recs[1].text, recs[1].env)
    assert p.kind == "store.connect_retry"


def test_orphan_cxx_frames_form_a_record():
    recs = run(["plain", "Exception raised from foo at x.cpp:1 (most recent call first):", "frame #0: a + 0x1 (0x1 in b.so)",
                "frame #1: c + 0x2 (0x2 in d.so)", "plain again"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 4), (5, 5)]
    p = classify(recs[1].text)
    assert (p.kind, p.fields["cxx_frames"]) == ("torch.cxx_backtrace", 2)


def test_terminate_what():
    lines = ["terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: "
             "NCCL error: unhandled system error",
             "Exception raised from checkTimeout at x.cpp:1 (most recent call first):",
             "frame #0: a + 0x1 (0x1 in libc10.so)",
             "Fatal Python error: Aborted"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 4), (5, 5)]
    p = classify(recs[0].text)
    assert (p.kind, p.fields["cxx_type"], p.fields["cxx_frames"]) == ("torch.terminate", "c10::DistBackendError", 1)


def test_spawn_process_raised():
    lines = ["Traceback (most recent call last):", '  File "main.py", line 20, in <module>', "    mp.spawn(run, nprocs=2)",
             "torch.multiprocessing.spawn.ProcessRaisedException: ", "",
             "-- Process 1 terminated with the following error:",
             "Traceback (most recent call last):", '  File "spawn.py", line 90, in _wrap', "    fn(i, *args)",
             "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.1]:1234",
             "", "bye"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 10), (11, 11), (12, 12)]
    p = classify(recs[0].text)
    assert (p.kind, p.fields["spawn_process"], p.fields["code_location"]) == \
        ("gloo.error", 1, "gloo/transport/tcp/pair.cc:598")


def test_desync_report_continuation():
    e = Envelope(rank=0, level="E", source="ProcessGroupNCCL.cpp:1455")
    lines = [(e, "Rank 0"),
             "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:",
             "\t   - [1] joined but didn't finish collective #5 (count from 1)",
             (Envelope(rank=0, level="E"), "next c10 line")]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 4)]
    assert classify(recs[0].text, recs[0].env).fields["lagging_ranks"] == [1]


def test_bounds_and_unterminated_block():
    lines = ["Traceback (most recent call last):"] + ['  File "x.py", line %d, in f' % i for i in range(30)]
    recs = run(lines, max_lines=10)
    assert recs[0].end_line == 10 and len(recs) > 1
    recs = run(["Traceback (most recent call last):", '  File "x.py", line 1, in f'])
    assert [(r.line, r.end_line) for r in recs] == [(1, 2)]
    big = "x" * 200_000
    recs = run(["Traceback (most recent call last):", "  " + big, "  " + big])
    assert len(recs) == 2


def test_tee_prefix_continuation_joins_c10_record():
    # `[default0]:[rank0]:[E...] [Rank 0] Collective` then `[default0]:WorkNCCL(...` (the c10 part only on line 1)
    first = Envelope(rank=0, local_rank=0, level="E", source="ProcessGroupNCCL.cpp:617")
    cont = Envelope(local_rank=0)
    other = Envelope(local_rank=1)
    lines = [(first, "[Rank 0] Collective"), (other, "[rank1] step 10"),
             (cont, "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000)"),
             (cont, "raised the following async exception: NCCL error: remote process exited or there was a network error"),
             (cont, "training continues")]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 4), (2, 2), (5, 5)]
    p = classify(recs[0].text, recs[0].env)
    assert (p.kind, p.fields["seq"], p.fields["nccl_result"]) == ("torch.async_exception", 3, "ncclRemoteError")


# TensorFlow's StatusGroup raised as the exception: its root errors listed after the exception line (status_group.cc)
_TF_ROOTS = ["tensorflow.python.framework.errors_impl.InternalError: 2 root error(s) found.",
             "  (0) Resource exhausted: OOM when allocating tensor with shape[6040,32] and type float on "
             "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
             "\t [[node dense/MatMul (defined at train.py:9) ]]",
             "  (1) Internal:  internal error",
             "\t [[node Adam/NcclAllReduce_8 (defined at <ipython-input-14-b87e02e8ae0a>:1) ]]",
             "0 successful operations.", "0 derived errors ignored."]


def test_tensorflows_root_errors_are_the_exceptions_message():
    head = ["Traceback (most recent call last):", '  File "train.py", line 10, in <module>', "    model.fit(x)"]
    recs = run(head + _TF_ROOTS + ["epoch 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 10), (11, 11)]
    p = classify(recs[0].text)
    assert p.fields["exc_message"].endswith("0 derived errors ignored.")
    assert "(0) Resource exhausted: OOM" in p.fields["exc_message"]
    # the exception line pasted without its traceback, and with a rank's prefix
    recs = run(_TF_ROOTS + ["epoch 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 7), (8, 8)]
    r1 = Envelope(rank=1)
    recs = run([(r1, t) for t in _TF_ROOTS] + [(r1, "epoch 2")])
    assert [(r.line, r.end_line) for r in recs] == [(1, 7), (8, 8)]
    # the list ends at the first other line; an exception line that lists no root errors takes none
    recs = run(_TF_ROOTS[:3] + ["epoch 2", "0 successful operations."])
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 4), (5, 5)]
    recs = run(["ValueError: 2 roots found.", "  (0) x", "0 successful operations."])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 2), (3, 3)]
    # the hint TensorFlow appends to an OOM (executor.cc) and a blank line after it, between the root errors
    hint = ("Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to "
            "RunOptions for current allocation info.")
    recs = run(_TF_ROOTS[:3] + [hint, ""] + _TF_ROOTS[3:] + ["epoch 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 9), (10, 10)]


# TensorFlow >= 2.8 (error_interpolation.py, interpolate_graph): `Graph execution error:`, each node's definition stack
# (`Detected at node 'n' defined at (most recent call last):`, frames indented two more spaces, `Node: 'n'`), then the status
_TF_NODE = ["Detected at node 'NcclAllReduce' defined at (most recent call last):",
            '    File "train.py", line 73, in <module>', "      model.fit(x, y, epochs=1)",
            '    File "keras/utils/traceback_utils.py", line 65, in error_handler', "      return fn(*args, **kwargs)",
            "Node: 'NcclAllReduce'"]
_TF_STATUS = ["2 root error(s) found.", "  (0) UNKNOWN:  Error invoking NCCL: unhandled cuda error",
              "\t [[{{node NcclAllReduce}}]]", "\t [[div_no_nan/ReadVariableOp_3/_56]]",
              "  (1) UNKNOWN:  Error invoking NCCL: unhandled cuda error", "\t [[{{node NcclAllReduce}}]]",
              "0 successful operations.", "0 derived errors ignored. [Op:__inference_train_function_2538]"]


def test_tensorflows_node_stacks_and_status_after_graph_execution_error_are_the_exceptions_message():
    head = ["Traceback (most recent call last):", '  File "train.py", line 73, in <module>', "    model.fit(x, y, epochs=1)",
            "tensorflow.python.framework.errors_impl.UnknownError: Graph execution error:", ""]
    lines = head + _TF_NODE * 4 + _TF_STATUS + ["epoch 2"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, len(lines) - 1), (len(lines), len(lines))]
    p = classify(recs[0].text)
    assert p.fields["exc_message"].endswith("0 derived errors ignored. [Op:__inference_train_function_2538]")
    # 2.13+: `<stack traces unavailable>` where the frames and `Node:` were
    unavailable = ["Detected at node NcclAllReduce defined at (most recent call last):", "<stack traces unavailable>"]
    lines = head + unavailable * 2 + _TF_STATUS + ["epoch 2"]
    assert [(r.line, r.end_line) for r in run(lines)] == [(1, len(lines) - 1), (len(lines), len(lines))]
    # one status, no list: its message and node line after the last stack
    oom = ["OOM when allocating tensor with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0"
           " by allocator GPU_0_bfc", "\t [[{{node NcclAllReduce}}]]"]
    lines = head + _TF_NODE + oom + ["epoch 2"]
    assert [(r.line, r.end_line) for r in run(lines)] == [(1, len(lines) - 1), (len(lines), len(lines))]
    # the exception line pasted without its traceback
    lines = head[3:] + _TF_NODE * 2 + _TF_STATUS + ["epoch 2"]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, len(lines) - 1), (len(lines), len(lines))]
    assert classify(recs[0].text).fields["nccl_result"] == "ncclUnhandledCudaError"


def test_an_exception_line_that_ends_with_its_contexts_separator_takes_the_message_on_the_next_line():
    # `RuntimeError: work = default_pg.broadcast([tensor], opts): ` / `NCCL error in: ...` (XiaohangZhan/deocclusion#45)
    exc = "RuntimeError: work = default_pg.broadcast([tensor], opts): "
    nccl = ["NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.7.8",
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (such as too many async ops, too many "
            "collectives at once, mixing streams in a group, etc)."]
    recs = run([exc] + nccl + ["epoch 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 4)]
    head = ["Traceback (most recent call last):", '  File "t.py", line 15, in main', "    work = default_pg.broadcast([tensor], opts)"]
    recs = run(head + [exc] + nccl + ["epoch 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 6), (7, 7)]
    # not another record's head, not a blank, not a message that only contains a colon in its words
    recs = run([exc, "node1:12:34 [0] NCCL INFO comm 0x1 rank 0 nranks 2", "x"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 2), (3, 3)]
    recs = run([exc, "", "x"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 2), (3, 3)]
    recs = run(["RuntimeError: a: b", "x"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 1), (2, 2)]


def test_has_open_block():
    ba = BlockAssembler()
    assert not ba.has_open_block
    ba.feed(1, B, "Traceback (most recent call last):")
    assert ba.has_open_block
    ba.flush()
    assert not ba.has_open_block


def test_flight_recorder_stack_lines_join():
    e = Envelope(rank=0, level="E", source="ProcessGroupNCCL.cpp:2037")
    lines = [(e, "Stack trace of the failed collective: "),
             "#0 batch_isend_irecv from /usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py:2863",
             "#1 _batch_p2p from /w/pipeline.py:120",
             (Envelope(rank=0, level="E"), "next")]
    recs = run(lines)
    assert [(r.line, r.end_line) for r in recs] == [(1, 3), (4, 4)]
    assert classify(recs[0].text, recs[0].env).kind == "torch.flight_recorder"


def test_an_exception_whose_message_starts_on_the_next_line_takes_it():
    # Python prints `Type: ` + str(exc): a message that begins with a line break leaves `Type:` alone on its line
    # (accelerate's debug mode raises DistributedOperationException("\n\nCannot apply ...")); an empty message
    # prints the type without a colon, so `Type:` alone always means the message follows
    head = ["Traceback (most recent call last):", '  File "t.py", line 15, in main', "    b = broadcast(t)",
            '  File "/x/accelerate/utils/operations.py", line 303, in wrapper']
    msg = ["accelerate.utils.operations.DistributedOperationException:", "",
           "Cannot apply desired operation due to shape mismatches. All shapes across devices must be valid.", "",
           "Operation: `accelerate.utils.operations.broadcast`", "Input shapes:", "  - Process 0: [1, 5]",
           "  - Process 1: [1, 2, 5]"]
    recs = run(head + msg + ["", "", "epoch 2"])
    assert [(r.line, r.end_line) for r in recs][0] == (1, 12)
    p = classify(recs[0].text)
    assert p.fields["exc_message"].startswith("Cannot apply desired operation due to shape mismatches.")
    assert p.fields["exc_message"].endswith("  - Process 1: [1, 2, 5]")
    # a message on the exception's own line: the lines after it stay their own
    recs = run(head + ["ValueError: bad", "", "Cannot apply this"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 5), (6, 6), (7, 7)]
    # the message ends at another record's head (an NCCL line, a c10 prefix) and within MAX_OPEN_MESSAGE lines
    recs = run(head + ["RuntimeError:", "  the reason", "node1:12:34 [0] NCCL INFO comm 0x1 rank 0 nranks 2"])
    assert [(r.line, r.end_line) for r in recs] == [(1, 6), (7, 7)]
    recs = run(head + ["RuntimeError:"] + [f"line {i}" for i in range(40)])
    assert recs[0].end_line < 5 + 26
