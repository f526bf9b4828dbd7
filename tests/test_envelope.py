"""Every envelope of issue 2, alone and stacked, with a real-looking line."""
from __future__ import annotations

import pytest

from logdoc.envelope import unwrap

MSG = "Connection closed by peer [127.0.0.1]:7606"


@pytest.mark.parametrize(
    "line, expect, msg",
    [
        ("0: hello", {"node_rank": 0}, "hello"),
        (" 3: hello", {"node_rank": 3}, "hello"),
        ("12: hello", {"node_rank": 12}, "hello"),
        ("[1,3]<stdout>:hello", {"rank": 3}, "hello"),
        ("[1,0]<stderr>: hello", {"rank": 0}, "hello"),
        ("2024-05-01T10:00:00.123Z [1,2]<stderr>:hello", {"rank": 2, "time": "2024-05-01T10:00:00.123Z"}, "hello"),
        ("[0] hello", {"rank": 0}, "hello"),
        ("worker-0: hello", {"host": "worker-0"}, "hello"),
        ("gpu-a100-017: hello", {"host": "gpu-a100-017"}, "hello"),
        ("(RayWorkerWrapper pid=1061) hello", {"pid": 1061}, "hello"),
        ("(RayWorkerWrapper pid=1061, ip=10.0.0.5) hello [repeated 6x across cluster]", {"pid": 1061, "host": "10.0.0.5"}, "hello"),
        ("[pod/trainer-worker-3/pytorch] hello", {"host": "trainer-worker-3"}, "hello"),
        ("| 2024-05-01T10:00:00.000Z | hello", {"time": "2024-05-01T10:00:00.000Z"}, "hello"),
        ("2024-05-01T10:00:00+02:00 hello", {"time": "2024-05-01T10:00:00+02:00"}, "hello"),
        ("[default0]:hello", {"local_rank": 0}, "hello"),
        ("[trainer3]:hello", {"local_rank": 3}, "hello"),
        ("[trainer0|0]:hello", {"local_rank": 0}, "hello"),
        ("[rank0]: Traceback (most recent call last):", {"rank": 0}, "Traceback (most recent call last):"),
        ("[default0]:[rank0]: RuntimeError: x", {"local_rank": 0, "rank": 0}, "RuntimeError: x"),
        # the outer label names the process; a program's own label inside it does not change it
        ("[default1]:[trainer0|0]:ncclInternalError: x", {"local_rank": 1}, "ncclInternalError: x"),
        ("[rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:617] msg",
         {"rank": 0, "level": "ERROR", "time": "--11-29T17:01:53", "source": "ProcessGroupNCCL.cpp:617"}, "msg"),
        ("[rank0]:[E101 21:57:19.147805485 ProcessGroupNCCL.cpp:617] msg", {"rank": 0, "time": "--01-01T21:57:19"}, "msg"),
        ("[rank0]:[E ProcessGroupNCCL.cpp:523] msg", {"rank": 0, "level": "ERROR", "time": None}, "msg"),
        ("[E ProcessGroupNCCL.cpp:481] msg", {"rank": None, "level": "ERROR"}, "msg"),
        ("[W1129 17:02:34.306620559 TCPStore.cpp:340] [c10d] TCP client failed", {"level": "WARN"}, "[c10d] TCP client failed"),
        ("E0101 21:57:19.147805 12345 ProcessGroupNCCL.cpp:617] msg",
         {"level": "ERROR", "time": "--01-01T21:57:19.147805", "pid": 12345}, "msg"),
        ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3545430 closing signal SIGTERM",
         {"level": "WARN", "source": "torch.distributed.elastic.multiprocessing.api"}, "Sending process 3545430 closing signal SIGTERM"),
        ("[2024-07-25 06:36:18,293] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 179 closing signal SIGTERM",
         {"level": "WARN", "time": "2024-07-25T06:36:18.293"}, "Sending process 179 closing signal SIGTERM"),
        ("W0725 06:36:18.293000 140245678 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 1",
         {"level": "WARN", "pid": None, "time": "--07-25T06:36:18.293000"}, "Sending process 1"),
        ("W1129 17:06:38.629000 21743 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 21746 closing signal SIGTERM",
         {"level": "WARN", "pid": 21743}, "Sending process 21746 closing signal SIGTERM"),
        ("[rank1]:W1129 17:06:38.629000 21743 torch/distributed/distributed_c10d.py:100] hi", {"rank": 1, "pid": 21743}, "hi"),
        ("3: [default1]:[rank13]:[E1129 17:01:53.685814139 ProcessGroupGloo.cpp:67] msg",
         {"node_rank": 3, "local_rank": 1, "rank": 13, "level": "ERROR"}, "msg"),
        ("3: [default1]:[rank13]: RuntimeError: x", {"node_rank": 3, "local_rank": 1, "rank": 13}, "RuntimeError: x"),
        ("240it [05:55, 1.47s/it][rank0]:[E709 12:00:01.1 ProcessGroupNCCL.cpp:1] msg", {"rank": 0, "time": "--07-09T12:00:01"}, "msg"),
        ("worker-1: [2024-05-01 10:00:00,123] [INFO] [launch.py:351:main] Process 5 exits successfully.",
         {"host": "worker-1", "level": "INFO"}, "Process 5 exits successfully."),
        # torchrun's tee label as pasted with a blank after it: one blank goes with the envelope, an
        # indent of the program's own stays
        ("[trainer0|0]: Traceback (most recent call last):", {"local_rank": 0}, "Traceback (most recent call last):"),
        ("[trainer0|0]:   File \"train.py\", line 3, in <module>", {"local_rank": 0}, "   File \"train.py\", line 3, in <module>"),
        ("[default0]:  File \"train.py\", line 3, in <module>", {"local_rank": 0}, "  File \"train.py\", line 3, in <module>"),
        # Python logging's ` - `-separated formats (the cookbook's; Hugging Face examples' level-first order)
        ("2026-12-03 01:02:03,456 - train - ERROR - RuntimeError: x",
         {"level": "ERROR", "time": "2026-12-03T01:02:03.456", "source": "train"}, "RuntimeError: x"),
        ("12/03/2026 01:02:03 - WARNING - __main__ - hello", {"level": "WARN", "time": "2026-12-03T01:02:03"}, "hello"),
        ("2026-12-03 01:02:03 - INFO - Traceback (most recent call last):", {"level": "INFO"}, "Traceback (most recent call last):"),
        # grep's file names (`grep -r`, `-H`, `-n`), not a message that names a file
        ("LOG1.0.txt:learnfair062:32615:32615 [0] NCCL INFO Broadcast: opCount 0", {"process": "LOG1.0.txt"},
         "learnfair062:32615:32615 [0] NCCL INFO Broadcast: opCount 0"),
        ("logs/rank3.log:123:RuntimeError: boom", {"process": "logs/rank3.log"}, "RuntimeError: boom"),
        ("train.log: No such file or directory", {"process": None}, "train.log: No such file or directory"),
        # a program's own rank label, before an exception only (`[Rank 0] ` is also ProcessGroupNCCL's own prefix)
        ("Rank 0: RuntimeError: CUDA out of memory.", {"rank": 0}, "RuntimeError: CUDA out of memory."),
        ("[Rank 3] torch.OutOfMemoryError: CUDA out of memory.", {"rank": 3}, "torch.OutOfMemoryError: CUDA out of memory."),
        ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)", {"rank": None},
         "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"),
        ("Rank 1 failed to pass monitoredBarrier in 1000 ms", {"rank": None}, "Rank 1 failed to pass monitoredBarrier in 1000 ms"),
        # Hydra's and other bracketed logger formats; loguru's default
        ("[2026-12-03 01:02:03,456][__main__][ERROR] - boom", {"level": "ERROR", "source": "__main__"}, "boom"),
        ("[2026-11-29 13:35:06,018][train.py:234][INFO] [rank11] step 38720/500000",
         {"level": "INFO", "rank": 11, "source": "train.py:234"}, "step 38720/500000"),
        ("2026-12-03 01:02:03.456 | ERROR    | train:main:12 - RuntimeError: x",
         {"level": "ERROR", "source": "train:main:12", "time": "2026-12-03T01:02:03.456"}, "RuntimeError: x"),
        # torchelastic's launcher (`[LEVEL] time module: `) and its etcd rendezvous (`LEVEL time `)
        ("[INFO] 2020-08-04 23:33:44,430 api: [default] Starting worker group",
         {"level": "INFO", "source": "api", "time": "2020-08-04T23:33:44.430"}, "[default] Starting worker group"),
        ("INFO 2020-06-10 10:00:00,000 Rendezvous timeout occured in EtcdRendezvousHandler",
         {"level": "INFO", "time": "2020-06-10T10:00:00.000"}, "Rendezvous timeout occured in EtcdRendezvousHandler"),
        ("INFO 2020 was a good year", {"level": None}, "INFO 2020 was a good year"),
        # the same stdlib line with its `LEVEL:` cut by a paste's selection (the logger's name stays)
        ("torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 7) of binary: python",
         {"level": None, "source": "torch.distributed.elastic.multiprocessing.api"},
         "failed (exitcode: -9) local_rank: 0 (pid: 7) of binary: python"),
        ("ch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers",
         {"source": "ch.distributed.elastic.agent.server.api"}, "Received 15 death signal, shutting down workers"),
    ],
)
def test_envelopes(line, expect, msg):
    env, text = unwrap(line)
    for key, value in expect.items():
        assert getattr(env, key) == value, (key, env)
    assert text == msg


@pytest.mark.parametrize("line", [
    "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] " + MSG,
    "ValueError: bad",
    "torch.distributed.DistNetworkError: The client socket has timed out",
    "Traceback (most recent call last):",
    "dgx1:1007:1165 [0] NCCL INFO Using network Socket",
    "  File \"train.py\", line 3, in <module>",
    "KeyError: 'x'",
    "[Rank 0] Watchdog caught collective operation timeout",  # ProcessGroupNCCL's own prefix
    "mlx5: gpu-node-7: got completion with error:",  # rdma-core's provider name, not a pdsh host
    # systemd's unit names end like a host name with a dash: a unit's type is never a host's last label
    "nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
    "nvidia-persistenced.service: Failed with result 'exit-code'.",
    # a versioned Python interpreter's name leads its own message like a host name with a digit
    "python3: can't open file 'train.py': [Errno 2] No such file or directory",
    "python3.10: can't open file '/w/train.py': [Errno 2] No such file or directory",
    # a dotted name and a colon that are no cut logger line: an exception's module path, a host and port,
    # a name with upper case, two names only
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "node1.cluster.local:29500 refused the connection",
    "torch.distributed.DistStoreError:Socket Timeout",
    "torch.cuda:available",
])
def test_messages_are_not_mistaken_for_envelopes(line):
    env, text = unwrap(line)
    assert text == line
    assert env.layers == ()


@pytest.mark.parametrize(
    "line, expect, msg",
    [
        # Ray's worker without a name, vLLM's process names (rank= kept as the rank, not the name)
        ("(pid=4242) hello", {"pid": 4242, "process": None}, "hello"),
        ("(VllmWorker rank=1 pid=4001) hello", {"pid": 4001, "rank": 1, "process": "VllmWorker"}, "hello"),
        ("(VllmWorker TP1 pid=4001) hello", {"pid": 4001, "process": "VllmWorker TP1"}, "hello"),
        ("(EngineCore_DP0 pid=33) hello", {"pid": 33, "process": "EngineCore_DP0"}, "hello"),
        # Ray's prefix before an empty line of the process (the blank that ends a record), no space after it
        ("(RayWorkerVllm pid=5304)", {"pid": 5304, "process": "RayWorkerVllm"}, ""),
        ("(RayWorkerWrapper pid=1061, ip=10.0.0.5)", {"pid": 1061, "host": "10.0.0.5"}, ""),
        # syslog / journald, Compose, a container runtime's file, Lightning, rich
        ("Dec  2 09:00:00 node1 python[4001]: hello", {"host": "node1", "pid": 4001, "process": "python"}, "hello"),
        ("2026-12-02T09:00:00+0000 node1 python3[4001]: hello", {"host": "node1", "pid": 4001}, "hello"),
        ("trainer-2  | [default1]:hello", {"process": "trainer-2", "local_rank": 1}, "hello"),
        ("proj_trainer_1  | hello", {"process": "proj_trainer_1"}, "hello"),
        ("2026-12-02T09:00:00.123456789Z stderr F hello", {"time": "2026-12-02T09:00:00.123456789Z"}, "hello"),
        ("[rank: 1] Child process with PID 652 terminated with code 1.", {"rank": 1},
         "Child process with PID 652 terminated with code 1."),
        # the rank tag a program or its tee wrapper prints (`print(f"[rank{rank}] ...")`, `[Rank 3] `)
        ("[rank8] Warning: Unable to resolve hostname", {"rank": 8}, "Warning: Unable to resolve hostname"),
        ("[RANK 3] RuntimeError: boom", {"rank": 3}, "RuntimeError: boom"),
        ("[12/02/26 09:00:00] ERROR    RuntimeError: boom            train.py:12", {"level": "ERROR"}, "RuntimeError: boom"),
        # unknown residue before a logger header or an exception line
        ("svc 3 | ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)", {"level": "ERROR"},
         "failed (exitcode: 1)"),
        ("2026-12-02 09:00:00,123 - __main__ - ERROR - RuntimeError: boom", {"source": "__main__", "level": "ERROR"},
         "RuntimeError: boom"),  # (a known envelope now: Python logging's ` - `-separated format)
        ("2026-12-02 09:00:00.000 | ERROR    | train:main:12 - ValueError: bad", {"process": None, "level": "ERROR"},
         "ValueError: bad"),
        ("$ RuntimeError: boom", {}, "RuntimeError: boom"),
        # a c10 header (torch <= 2.1: no rank, no time) after a prefix no envelope knows, and in a code block
        ("[2024-05-01 10:00:00] [E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught x", {"level": "ERROR"},
         "[Rank 0] Watchdog caught x"),
        ("INFO 2024-05-01T10:00:00.123Z [W socket.cpp:663] [c10d] The IPv6 x", {"level": "WARN"},
         "[c10d] The IPv6 x"),
        ("\t[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught x", {"level": "ERROR"}, "[Rank 0] Watchdog caught x"),
        # DeepSpeed's logger line without its time
        ("[WARNING] [comm.py:152:init_deepspeed_backend] NCCL backend in DeepSpeed not yet implemented",
         {"level": "WARN", "source": "comm.py:152:init_deepspeed_backend"}, "NCCL backend in DeepSpeed not yet implemented"),
        # a c10 / glog header a paste cut at its left: its source and, when left, its level
        ("ProcessGroupNCCL.cpp:4715] [PG ID 0 PG GUID 0 Rank 0]  using GPU 0", {"source": "ProcessGroupNCCL.cpp:4715"},
         "[PG ID 0 PG GUID 0 Rank 0]  using GPU 0"),
        ("ocket.cpp:663] [c10d] The IPv6 x", {"source": "ocket.cpp:663"}, "[c10d] The IPv6 x"),
        ("01:53.685814139 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught x", {"source": "ProcessGroupNCCL.cpp:632"},
         "[Rank 1] Watchdog caught x"),
        ("E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught x", {"level": "ERROR"},
         "[Rank 1] Watchdog caught x"),
        # aws-ofi-nccl's test programs' own logger (tests/functional: `WARN: Function: %s Line: %d: `)
        ("WARN: Function: nccl_net_ofi_create Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
         {"level": "WARN", "source": "nccl_net_ofi_create:459"}, "NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument"),
        ("INFO: Function: main Line: 53: NET/OFI Received 1 network devices", {"level": "INFO"},
         "NET/OFI Received 1 network devices"),
        # zap's console encoder (the Kubeflow training-operator's events, kubeflow/trainer#2008): epoch or ISO time
        ("1.7085078566441019e+09\tDEBUG\tevents\tPod: kubeflow.pytorch-simple-worker-0 exited with code 1\t{}",
         {"source": "events", "time": "2024-02-21T09:30:56"}, "Pod: kubeflow.pytorch-simple-worker-0 exited with code 1\t{}"),
        ("2024-02-21T09:30:56.123Z\tERROR\tcontroller\tReconciler error", {"level": "ERROR", "source": "controller"},
         "Reconciler error"),
        # the Hugging Face test helper's stream label (`accelerate test`: `print("stderr:", line)`), the line's indent kept
        ("stderr: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 0 (pid: 1316)",
         {"level": "ERROR"}, "failed (exitcode: -7) local_rank: 0 (pid: 1316)"),
        ('stderr:   File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main', {},
         '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main'),
        ("stdout: ", {}, ""),
    ],
)
def test_more_envelopes(line, expect, msg):
    env, text = unwrap(line)
    for key, value in expect.items():
        assert getattr(env, key) == value, (key, env)
    assert text == msg


@pytest.mark.parametrize("line", [
    "Caught RuntimeError: boom",                 # prose before the exception: a sentence, not a prefix
    "step failed with ValueError: bad",
    "node1:1:2 [0] NCCL WARN foo RuntimeError: x",  # NCCL's own text quotes nothing
    "stderr F saving checkpoint",               # a stream word only after a stamp
    "gpu-node-01 python3[4001]: x",             # a syslog tail only after a stamp
    "Epoch 1 | loss 3",
    "see [E foo:475] for x",                    # a c10 header names a source file
    "main.c:12:5: error: x",                    # a compiler's location: no `] `
    "Error: foo.cpp:12] x",                     # a location inside a message
    "ransport/tcp/pair.cc:152] timed out",      # the rest of a wrapped `[/path/pair.cc:152]`: a folder
    "pair.cc:152]",                             # ... and nothing after it
    "[INFO] [a:b:c] x",                         # a level and a bracket that name no Python file
])
def test_residue_that_is_not_a_prefix_stays(line):
    env, text = unwrap(line)
    assert text == line and env.layers == ()


def test_a_collectors_stamp_leaves_an_indented_line_its_indentation():
    # GitHub Actions' raw log, `docker logs -t`, `kubectl logs --timestamps`: the stamp and one blank before the
    # program's line; a traceback's frame keeps its indentation (the assembler reads a frame by it)
    for stamp in ("2026-12-03T01:02:03.4567890Z", "2026-12-03T01:02:03.456789012Z", "2026-12-03T01:02:03+00:00"):
        env, msg = unwrap(stamp + '   File "train.py", line 11, in <module>')
        assert msg == '  File "train.py", line 11, in <module>' and env.time and env.layers == ("iso-time",)
        assert unwrap(stamp + " RuntimeError: x")[1] == "RuntimeError: x"
    # a logger's own stamp, aligned with blanks before its next column, gives them all up as before
    assert unwrap("2026-12-03 01:02:03,456   RuntimeError: x")[1] == "RuntimeError: x"


def test_rays_repeat_note_cut_by_a_viewer_is_peeled_like_the_whole_note():
    head = "(RayTrainWorker pid=954, ip=10.67.132.202) node-p5:954:3133 [6] NCCL INFO NET/IB : No device found."
    for tail in (" [re\u2026 [truncated]", " [repeated 8x acr", " [repeated 12x across clu...", " [repeated 8x across cluster]"):
        env, msg = unwrap(head + tail)
        assert msg == "node-p5:954:3133 [6] NCCL INFO NET/IB : No device found.", tail
        assert env.layers[-1].startswith("ray-repeat-")
    # other brackets at the end stay, and so does a cut note without Ray's prefix before it
    assert unwrap("(Worker pid=9) node:9:9 [0] NCCL INFO Using [0]eth0 [rank 3]")[1].endswith("[rank 3]")
    assert unwrap("node:9:9 [0] NCCL INFO NET/IB : No device found. [re")[1].endswith("[re")


def test_rays_empty_line_ends_the_record_before_a_cxx_backtrace():
    """``(Actor pid=N)`` alone is the process's blank line: the watchdog's record before it stays its
    own (its CUDA error read), not the message of the C++ backtrace that follows it."""
    from logdoc.pipeline import parse_text

    p = "(RayWorkerVllm pid=5304) "
    text = "\n".join([
        p + "[E ProcessGroupNCCL.cpp:916] [Rank 7] NCCL watchdog thread terminated with exception: CUDA error: unknown error",
        p + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        p.rstrip(),
        p + "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):",
        p + "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7fdc6810f617 in /usr/lib/libc10.so)",
    ]) + "\n"
    kinds = [(e.kind, e.line) for e in parse_text(text).events]
    assert ("cuda.error", 1) in kinds and ("torch.watchdog_failure", 1) in kinds
    assert ("torch.cxx_backtrace", 4) in kinds


def test_two_processes_under_one_program_label_stay_two_streams():
    """torchrun's `[defaultN]:` around a label the program prints the same in every process (`[trainer0|0]:`): the
    lines of the two processes, interleaved, are two records, each read (before, both took local rank 0 and the
    records of one stream ran into the other's)."""
    from logdoc.pipeline import parse_text

    body = ["ncclInternalError: Internal check failed.", "Last error:",
            "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)", ""]
    text = "".join(f"[default{k}]:[trainer0|0]:{t}\n" for t in body for k in (0, 1))
    res = parse_text(text, "job.log")
    assert sorted(e.local_rank for e in res.events if "Internal check failed" in e.text) == [0, 1]


def test_inline_codes_opening_with_a_blank_after_it_is_peeled():
    # huggingface/open-r1#620: a paste opened with a backtick and a blank before a c10 line whose head the copy cut
    # (markdown lets a code span start with a blank); its watchdog record is read like the other ranks'
    from logdoc.pipeline import parse_text

    line = ("` ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
            "OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.")
    env, msg = unwrap(line)
    assert env.layers[0] == "paste" and msg.startswith("[Rank 1] Watchdog caught")
    assert [e.kind for e in parse_text(line + "\n").events] == [e.kind for e in parse_text(line[2:] + "\n").events] != []
    # a backtick and two blanks, or a run of three (a fence), is no opening of inline code
    assert unwrap("`  x")[1] == "`  x" and unwrap("``` x")[1] == "``` x"


def test_a_host_name_with_python_in_it_is_still_a_pdsh_host():
    # near misses of the interpreter's name: a host that holds it with more, a host with a digit
    for line, host in (("python3-node1: bash: torchrun: command not found", "python3-node1"),
                       ("gpu3: bash: torchrun: command not found", "gpu3")):
        env, text = unwrap(line)
        assert env.host == host and text == "bash: torchrun: command not found", (env, text)


@pytest.mark.parametrize("line", [
    "[3] NCCL WARN Net : Connection closed by remote peer",
    "[3] misc/socket.cc:49 (socketProgress) NCCL WARN socketProgress: Connection closed by remote peer",
    "[3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-a (size 7)",
    "[3] NCCL INFO Channel 00/02 :    0   1",
    "[3] include/socket.h:185 WARN Call to connect failed : Connection refused",
    "[3] [FATAL ERROR]: Error while creating shared memory segment /dev/shm/nccl-a (size 7)",
])
def test_the_device_of_a_cut_nccl_header_is_not_a_rank_prefix(line):
    """`[N] ` before NCCL's level word (or a source location and it, or RCCL's fatal class) is the device of an
    NCCL header whose host:pid:tid was cut, not MPICH's `-prepend-rank` label: the line stays whole, no rank."""
    env, rest = unwrap(line)
    assert rest == line and env.rank is None


@pytest.mark.parametrize("line, rank", [
    ("[3] node1:12:40 [0] NCCL WARN Net : Connection closed by remote peer", 3),  # MPICH's label before a whole header
    ("[3] RuntimeError: NCCL WARN in the message", 3),
    ("[3] NCCL version 2.21.5+cuda12.4", 3),
])
def test_mpich_rank_label_still_peeled_before_other_text(line, rank):
    assert unwrap(line)[0].rank == rank
