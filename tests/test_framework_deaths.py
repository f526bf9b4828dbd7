"""The frameworks' own words for a process, a node or a device of the job that failed (Ray's worker, actor and node
deaths in logdoc/stops.py and logdoc/classify/torch/exceptions.py; knowledge/processes.yaml LD741, LD742, LD765)."""
from __future__ import annotations

import pytest

from logdoc import kb, stops
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _diagnoses(text: str) -> list[dict]:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]


def _ids(text: str) -> list[str]:
    return [d["id"] for d in _diagnoses(text)]


@pytest.mark.parametrize("text, rule", [
    # Ray's exceptions: a death is all they know; its OutOfMemoryError is the node's host memory, not CUDA's
    ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n", "LD742"),
    ("RayActorError: The actor died unexpectedly before finishing this task.\n", "LD742"),
    ("ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check"
     " python-core-worker-*.log files for more information.\n", "LD742"),
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n", "LD741"),
    ("ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check raylet.out for more information.\n", "LD765"),
    # the node lost, in the GCS's and the dashboard agent's words, under Ray's process prefix
    ("(raylet) 2022-09-02 12:53:00,741 WARNING worker.py:1829 -- The node with node id: 5ad7fa5dd64f and address:"
     " 10.0.0.7 and node name: 10.0.0.7 has been marked dead because the detector has missed too many heartbeats"
     " from it.\n", "LD765"),
    ("2022-10-05 10:30:47,443 ERROR agent.py:217 -- Raylet is terminated: ip=10.0.0.7, id=d2a5c564. Termination is"
     " unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer\n", "LD765"),
])
def test_ray_deaths_are_named(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_a_ray_oom_is_not_a_cuda_oom():
    d = _diagnoses("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    ray.get(refs)\n"
                   "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n")
    assert d and d[0]["id"] == "LD741" and all(x["category"] != "cuda_oom" for x in d)


def test_the_death_cause_ray_gives_leads():
    # the actor's base message, then the cause the GCS recorded: the memory monitor's kill is the finding
    ids = _ids("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
               "\tclass_name: RayWorkerWrapper\n\tpid: 4242\n"
               "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit"
               " detail: Task was killed due to the node running low on memory.\n")
    assert ids and ids[0] == "LD741" and "LD742" not in ids


def test_ray_deaths_cut_after_their_head_are_named():
    # a viewer's or a terminal's width cut the message; what is left is a head of Ray's own words
    assert _ids("2023-10-30 06:14:35,574\tWARNING worker.py:2037 -- A worker died or was killed while executing a ta"
                "\u2026 [truncated]\n")[:1] == ["LD742"]
    p = stops.classify("(raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due \u2026 [truncated]")
    assert p is not None and p.fields == {"source": "ray", "reason": "oom", "count": 1, "cut": True}
    # a head too short to name the message, or text after where the message would go on, is none
    assert stops.classify("WARNING -- A worker died or w\u2026") is None
    assert stops.classify("A worker died or was killed while executing a job we wrote") is None


def test_ray_memory_monitors_summary_cut_after_its_head_is_named():
    # Ray's OOM summary (`Memory on the node (IP: ..., ID: ...) where the task (...) was running was ... which exceeds
    # the memory usage threshold of 0.95. Ray killed this worker ...`) cut by a viewer's width after its head
    head = "Memory on the node (IP: 169.254.181.2, ID: 708c7baf966d) where the task (act\u2026 [truncated]"
    p = stops.classify(head)
    assert p is not None and p.template == "stop:ray-memory-monitor" and p.fields["reason"] == "oom"
    for text in ("Memory on the node (IP: 10.244.1.4) was 1.99GB / 2.00GB (0.997005)",
                 "Memory on the node (IP: 10.17.118.239, ID: 5e63) where the lease (lease ID: f599, name=A.__init__"):
        assert stops.classify(text) is not None, text
    # the words alone, without the summary's shape, are none
    assert stops.classify("Memory on the node is low, consider a larger instance") is None
    assert stops.classify("Memory on the node (IP: 10.0.0.7) is fine") is None


def test_ray_node_fields():
    p = stops.classify("The node with node id: 5ad7 and address: 10.0.0.7 and node name: n1 has been marked dead because"
                       " the detector has missed too many heartbeats from it.")
    assert p is not None and p.fields == {"source": "ray", "reason": "node_fail", "node": "10.0.0.7"}
    assert stops.classify("Raylet is terminated: ip=10.0.0.7, id=d2a5. Termination is graceful.") is None
    assert stops.classify("The actor died because of an error raised in its creation task, ray::A.__init__()") is None


@pytest.mark.parametrize("text, rule", [
    # vLLM's executors on a worker process that is gone (V1 multiprocessing and Ray executors, V0 workers)
    ("(EngineCore_DP0 pid=265) ERROR 02-27 10:31:24 [multiproc_executor.py:231] Worker proc VllmWorker-0 died"
     " unexpectedly, shutting down executor.\n", "LD766"),
    ("ERROR 05-06 16:54:45 [ray_executor_v2.py:464] RayWorkerProc rank=[3] died unexpectedly, shutting down"
     " executor.\n", "LD766"),
    ("ERROR 08-22 06:24:42 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4242 died, exit code: -9\n",
     "LD766"),
    # the engine relaying a failure of another of its processes, and the executor giving up on a stuck worker
    ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the"
     " root cause.\n", "LD767"),
    ("TimeoutError: RPC call to execute_model timed out.\n", "LD768"),
])
def test_vllm_executor_lines(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_vllm_worker_fields():
    from logdoc.classify.frameworks import classify_framework
    p = classify_framework("Worker VllmWorkerProcess pid 4242 died, exit code: -9")
    assert p is not None and p.fields == {"framework": "vllm", "task": "VllmWorkerProcess", "pid": 4242,
                                          "exitcode": -9, "signal": "SIGKILL"}
    p = classify_framework("RayWorkerProc rank=[3] died unexpectedly, shutting down executor.")
    assert p is not None and p.fields == {"framework": "vllm", "task": "rank 3", "exited_rank": 3}
    assert classify_framework("Worker proc VllmWorker-0 started.") is None


def test_the_dead_workers_own_error_leads_and_the_relays_follow():
    # the worker's error, then the executor's line and the engine's relay: the error is the card, the rest its symptoms
    d = _diagnoses(
        "(VllmWorker rank=1 pid=4242) ERROR 05-06 16:54:40 [multiproc_executor.py:527] WorkerProc hit an exception.\n"
        "(VllmWorker rank=1 pid=4242) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has"
        " a total capacity of 79.15 GiB of which 1.02 GiB is free.\n"
        "ERROR 05-06 16:54:45 [multiproc_executor.py:123] Worker proc VllmWorker-1 died unexpectedly, shutting down"
        " executor.\n"
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n")
    assert d and d[0]["category"] == "cuda_oom"
    assert "LD710" not in [x["id"] for x in d]


@pytest.mark.parametrize("text, rule", [
    # SGLang's launcher relaying a failed child process
    ("[2025-09-07 06:10:23] Received sigquit from a child process. It usually means the child failed.\n", "LD770"),
    ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common"
     " cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.\n", "LD770"),
    # vLLM's start-up memory checks: another process holds the GPU; the KV cache does not fit
    ("ValueError: Free memory on device cuda:0 (2.6/121.63 GiB) on startup is less than desired GPU memory utilization"
     " (0.08, 9.73 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n", "LD771"),
    ("(EngineCore_DP0 pid=3709) ValueError: To serve at least one request with the models's max seq len (196608),"
     " (11.62 GiB KV cache is needed, which is larger than the available KV cache memory (9.38 GiB). Try increasing"
     " `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n", "LD717"),
])
def test_serving_engines_start_up_failures(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_the_kv_cache_cause_leads_the_engines_relay():
    d = _diagnoses("(EngineCore_DP0 pid=3709) ValueError: No available memory for the cache blocks. Try increasing"
                   " `gpu_memory_utilization` when initializing the engine.\n"
                   "(APIServer pid=3653) RuntimeError: Engine core initialization failed. See root cause above. Failed core"
                   " proc(s): {}\n")
    assert [x["id"] for x in d][:1] == ["LD717"] and d[0]["category"] == "cuda_oom"


@pytest.mark.parametrize("text, rule", [
    # Lightning's check of devices / num_nodes against the processes SLURM or torchrun started
    ("ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM"
     " `--ntasks-per-node=1` does not match. HINT: Set `devices=1`.\n", "LD718"),
    ("[rank1]: ValueError: You set `devices=2` and `num_nodes=1` in Lightning, but the product (2 * 1) does not match"
     " the world size (4).\n", "LD718"),
    # DeepSpeed's launcher relaying a worker's own exit status
    ("[2024-05-15 13:14:32,960] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python', '-u', 'train.py',"
     " '--local_rank=0'] exits with return code = 1\n", "LD719"),
    # launcher failures named, not left to the generic exception (LD710)
    ("RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via ssh. If you are running with a"
     " single node please remove /job/hostfile or setup passwordless ssh.\n", "LD746"),
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the"
     " 'spawn' start method\n", "LD754"),
])
def test_launcher_checks(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_vllm_message_queue_wait_is_a_note():
    # vLLM's shared-memory queue waiting on a worker: context (start-up work or a stuck worker), never a finding
    from logdoc.classify.frameworks import classify_framework
    for line, secs in [("No available shared memory broadcast block found in 60 seconds. This typically happens when some"
                        " processes are hanging or doing some time-consuming work (e.g. compilation).", 60),
                       ("No available shared memory broadcast block foundin 60 second.", 60),
                       ("No available shared memory broadcast block found in 120 second.", 120)]:
        p = classify_framework(line)
        assert p is not None and p.kind == "framework.stalled" and p.fields == {"framework": "vllm", "seconds": secs}
    assert classify_framework("No available memory for the cache blocks.") is None
    log = ("(EngineCore_DP0 pid=812) INFO 09-30 11:00:13 [shm_broadcast.py:466] No available shared memory broadcast block"
           " found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work"
           " (e.g. compilation).\n")
    report = build_report(parse_sources([("x.log", log)]), kb.load_rules())
    assert report["diagnoses"] == [] and [n["id"] for n in report["notes"]] == ["LD744"]
    report = build_report(parse_sources([("x.log", log + "(EngineCore_DP0 pid=812) ERROR 09-30 11:02:13 [core.py:710]"
                                          " TimeoutError: RPC call to sample_tokens timed out.\n")]), kb.load_rules())
    assert [d["id"] for d in report["diagnoses"]] == ["LD768"] and "LD744" in [n["id"] for n in report["notes"]]


@pytest.mark.parametrize("line", [
    "(RayWorkerWrapper pid=1234, ip=10.0.0.2) The actor died unexpectedly before finishing this task.",
    "(VllmWorker rank=0 pid=4242) No available shared memory broadcast block found in 60 seconds.",
])
def test_framework_lines_pass_the_prefilter(line):
    # a bare framework line with no error word is still a candidate (the fast path's keywords: logdoc/read/prefilter.py)
    from logdoc.read import prefilter
    assert prefilter.candidate(line)


@pytest.mark.parametrize("line, fields", [
    # Horovod's stall inspector (stall_inspector.cc; operations.cc before 0.19, the same first line)
    ("[1,0]<stderr>:[2020-07-04 19:23:57.817885: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted"
     " to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60"
     " seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is"
     " submitting tensors, which will cause deadlock.", {"framework": "horovod", "seconds": 60}),
    # vLLM's custom all-reduce turned off for want of GPU peer access; Accelerate's kernel check
    ("WARNING 06-05 10:11:12 custom_all_reduce.py:166] Custom allreduce is disabled because your platform lacks GPU P2P"
     " capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
     {"framework": "vllm", "check": "p2p"}),
    ("Detected kernel version 4.18.0, which is below the recommended minimum of 5.5.0; this can cause the process to hang.",
     {"framework": "accelerate", "check": "kernel", "value": "4.18.0", "required": "5.5.0"}),
])
def test_framework_checks_and_stalls_are_read(line, fields):
    from logdoc.read import prefilter
    assert prefilter.candidate(line)
    events = [e for e in parse_sources([("x.log", line + "\n")]).events if e.kind.startswith("framework.")]
    assert len(events) == 1 and events[0].fields == fields


def test_vllm_custom_allreduce_notes_other_than_p2p_are_not_read():
    # the world size and PCIe-only reasons say nothing about the machine's health
    for line in ["Custom allreduce is disabled due to an unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. To"
                 " silence this warning, specify disable_custom_all_reduce=True explicitly.",
                 "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this"
                 " warning, specify disable_custom_all_reduce=True explicitly."]:
        assert _diagnoses(line + "\n") == []


def test_a_horovod_stall_stands_under_the_failure_of_a_rank():
    ids = _ids("[1,1]<stderr>:RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "[1,0]<stderr>:[2021-03-02 10:11:12.345678: W horovod/common/stall_inspector.cc:107] One or more tensors were"
               " submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for"
               " more than 60 seconds. This may indicate that different ranks are trying to submit different tensors.\n")
    assert ids and ids[0] == "LD803"  # the rank's own failure leads; the stall it caused is its consequence


def test_horovodrun_exit_banner_stands_under_the_process_error():
    # the Gloo runner's banner only reports the exit; the process's own error leads (LD753 explained_by)
    ids = _ids("[1]<stderr>:RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job"
               " to be terminated. The first process to do so was:\nProcess name: 1\nExit code: 1\n")
    assert ids and ids[0] == "LD803"


# TensorFlow's OpKernelContext::allocate_tensor (op_kernel.cc): ResourceExhausted("OOM when allocating tensor with shape[...]
# and type T on <device> by allocator A"), as op_kernel.cc logs it (bubbliiiing/yolo3-tf2#7), in a root-error list with the
# hint TensorFlow appends (UKPLab/controlled-argument-generation#16), and after TF 2.8's node stacks
_TF_OOM = ("OOM when allocating tensor with shape[255,256,256,69] and type float on /job:localhost/replica:0/task:0/"
           "device:GPU:0 by allocator GPU_0_bfc")
_TF_HINT = ("Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom"
            " to RunOptions for current allocation info.")


@pytest.mark.parametrize("text", [
    "2022-01-30 10:37:36.926021: W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed at cwise_ops_common.cc:82"
    " : Resource exhausted: " + _TF_OOM + "\n",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.\n(0) Resource exhausted: "
    + _TF_OOM + "\n[[node encoder/layer_normalization/moments/variance (defined at /tmp/tmpxfTS75.py:8) ]]\n" + _TF_HINT
    + "\n(1) Resource exhausted: " + _TF_OOM + "\n",
    "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    model.fit(ds)\n"
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n\n"
    "Detected at node 'model/conv2d/Conv2D' defined at (most recent call last):\n    File \"train.py\", line 9, in <module>\n"
    "      model.fit(ds)\nNode: 'model/conv2d/Conv2D'\n" + _TF_OOM + "\n\t [[{{node model/conv2d/Conv2D}}]]\n" + _TF_HINT
    + "\n [Op:__inference_train_function_1234]\n",
])
def test_tensorflows_gpu_oom_is_named(text):
    d = _diagnoses(text)
    assert d and d[0]["id"] == "LD8060" and "LD710" not in [x["id"] for x in d], d[:1]


def test_tensorflows_oom_on_a_cpu_is_no_gpu_oom():
    d = _diagnoses("tensorflow.python.framework.errors_impl.ResourceExhaustedError: " + _TF_OOM.replace("GPU", "CPU")
                   .replace("CPU_0_bfc", "cpu") + "\n")
    assert all(x["category"] != "cuda_oom" for x in d)


# TensorFlow before 1.5: ResourceExhausted("OOM when allocating tensor with shape", shape.DebugString()), no device and
# no allocator (tensorflow/models#1993, TF 1.2); the shape ends the line, so the newer CPU form is not read as it
@pytest.mark.parametrize("text", [
    "2017-07-20 13:58:20.791379: W c:\\tf_jenkins\\home\\workspace\\release-win\\m\\windows-gpu\\py\\35\\tensorflow\\core"
    "\\framework\\op_kernel.cc:1158] Resource exhausted: OOM when allocating tensor with shape[2304,384]\n",
    "Traceback (most recent call last):\n  File \"D:\\Anaconda3\\lib\\site-packages\\tensorflow\\python\\client\\session.py\","
    " line 1139, in _do_call\n    return fn(*args)\n"
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[2304,384]\n",
])
def test_tensorflow_1x_oom_without_its_device_is_named(text):
    d = _diagnoses(text)
    assert d and d[0]["id"] == "LD8061" and d[0]["category"] == "cuda_oom", d[:1]


def test_tensorflow_1x_oom_form_does_not_take_the_newer_cpu_form():
    d = _diagnoses("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with"
                   " shape[2988,5312,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n")
    assert all(x["id"] != "LD8061" and x["category"] != "cuda_oom" for x in d)
