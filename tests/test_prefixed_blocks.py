"""A multi-line failure block keeps its diagnosis under every prefix a launcher or a log collector
puts before each of its lines (issue 13).

tests/test_envelope_matrix.py wraps one catalog message at a time; here the block is the whole
record a rank prints: a traceback whose exception is followed by NCCL's ``ncclSystemError`` and
``Last error:`` lines, a c10d store timeout, the watchdog's ``what():``, Gloo's connectFullMesh, a
CUDA OOM and a DataLoader's Bus error. Each is read under each shape of tests/envelope_shapes.py
(Open MPI's ``--tag-output`` and SageMaker's ``[1,mpirank:N,algo-K]<stderr>:``, Slurm, pdsh, Ray,
SkyPilot, vLLM, torchrun, CloudWatch, Compose, journald, ...) and two ranks' streams interleaved.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logdoc.envelope import unwrap

sys.path.insert(0, str(Path(__file__).parent))

import envelope_shapes as S  # noqa: E402
from test_envelope_matrix import _first, rules  # noqa: E402,F401  (the rules fixture and the first diagnosis of a text)

_TB = ('Traceback (most recent call last):\n  File "/workspace/train.py", line 120, in <module>\n    dist.barrier()\n'
       '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3696, in barrier\n'
       '    work = default_pg.barrier(opts=opts)\n')
_WATCHDOG = ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
             "NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.")

# (block, the rule its clean text gets)
BLOCKS = {
    "nccl last error": (_TB + "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                        "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                        "version 2.18.1\nncclSystemError: System call (e.g. socket, malloc) or external library call "
                        "failed or device error.\nLast error:\nError while creating shared memory segment "
                        "/dev/shm/nccl-QnAJtn (size 9637888)", "LD301"),
    "store timeout": ('Traceback (most recent call last):\n  File "/workspace/train.py", line 20, in <module>\n'
                      '    dist.init_process_group("nccl")\n  File "/opt/conda/lib/python3.10/site-packages/torch/'
                      'distributed/rendezvous.py", line 194, in _create_c10d_store\n    return TCPStore(\n'
                      "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients "
                      "joined.", "LD603"),
    "watchdog what": (f"[rank0]:[E1204 12:00:00.000000000 ProcessGroupNCCL.cpp:616] {_WATCHDOG}\n"
                      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
                      f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with "
                      f"exception: {_WATCHDOG}\nException raised from checkTimeout at ../torch/csrc/distributed/c10d/"
                      "ProcessGroupNCCL.cpp:618 (most recent call first):\nframe #0: c10::Error::Error(c10::SourceLocation, "
                      "std::string) + 0x96 (0x7f0c in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)", "LD501"),
    "gloo connectFullMesh": (_TB + "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/"
                             "tcp/pair.cc:144] no error", "LD907"),
    "cuda oom": (_TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                 "capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 "
                 "GiB memory in use.", "LD801"),
    "bus error": ('Traceback (most recent call last):\n  File "/workspace/train.py", line 50, in <module>\n'
                  '    for batch in loader:\n  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/'
                  'dataloader.py", line 1133, in _try_get_data\n    data = self._data_queue.get(timeout=timeout)\n'
                  "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that "
                  "dataloader is running out of shared memory. Please try to raise your shared memory limit.", "LD305"),
}




def test_the_clean_blocks_get_their_rule(rules):
    assert {name: _first(text, rules) for name, (text, _) in BLOCKS.items()} == {
        name: want for name, (_, want) in BLOCKS.items()}


@pytest.mark.parametrize("shape", sorted(S.SHAPES))
def test_a_block_keeps_its_diagnosis_under_a_prefix(shape, rules):
    got = {name: _first(S.SHAPES[shape](text, 3), rules) for name, (text, _) in BLOCKS.items()}
    assert got == {name: want for name, (_, want) in BLOCKS.items()}


def _interleave(a: str, b: str) -> str:
    xs, ys = a.split("\n"), b.split("\n")
    out = []
    for i in range(max(len(xs), len(ys))):
        out += xs[i:i + 1] + ys[i:i + 1]
    return "\n".join(out)


@pytest.mark.parametrize("shape", ["openmpi", "openmpi sagemaker", "srun padded", "skypilot", "ray pid", "torchrun tee",
                                   "pdsh"])
def test_two_ranks_streams_interleaved_line_by_line(shape, rules):
    fn = S.SHAPES[shape]
    got = {name: _first(_interleave(fn(text, 0), fn(text, 1)), rules) for name, (text, _) in BLOCKS.items()}
    assert got == {name: want for name, (_, want) in BLOCKS.items()}


@pytest.mark.parametrize("line, rank, host, time", [
    ("[1,mpirank:0,algo-1]<stderr>:Last error:", 0, "algo-1", None),
    ("[1,mpirank:10,algo-2]<stdout>:Last error:", 10, "algo-2", None),
    ("[1,3]<stddiag>:Last error:", 3, None, None),
    ("Fri Dec  4 12:00:03 2026[1,3]<stderr>:Last error:", 3, None, "2026-12-04T12:00:03"),
    ("Mon Nov 30 09:10:11 2026<stdout>:Last error:", None, None, "2026-11-30T09:10:11"),
])
def test_open_mpi_tags_are_peeled(line, rank, host, time):
    env, msg = unwrap(line)
    assert msg == "Last error:" and env.layers == ("openmpi",)
    assert (env.rank, env.host, env.time) == (rank, host, time)


def test_a_ctime_stamp_without_a_tag_is_not_peeled():
    env, msg = unwrap("Fri Dec  4 12:00:03 2026 Last error:")
    assert msg.startswith("Fri Dec") and "openmpi" not in env.layers


# A logger's own words before the head, on its line (SGLang's `Scheduler hit an exception: ` + the traceback a
# `logger.error(f"...: {get_exception_traceback()}")` prints; any logger that formats a traceback into its message)
_LEADS = ["Scheduler hit an exception: ", "ERROR:trainer:Training failed: ",
          "2025-03-11 15:02:50,123 - worker - ERROR - step 41 crashed: "]


@pytest.mark.parametrize("lead", _LEADS)
def test_a_traceback_opened_mid_line_is_one_record(lead, rules):
    from logdoc.pipeline import parse_sources
    for name, (text, want) in BLOCKS.items():
        if not text.startswith("Traceback"):
            continue
        got = parse_sources([("rank0.log", lead + text + "\n")])
        first = min(got.events, key=lambda e: e.line)
        assert first.line == 1 and first.text.startswith("Traceback (most recent call last):\n  File "), name
        assert not got.unrecognized, name   # the head's line is read with its traceback
        assert _first(lead + text, rules) == want, name


def test_the_message_a_logger_prints_before_its_traceback_is_read():
    """`"%s, %s" % (e, traceback.format_exc())` on one line (vLLM's multiprocessing worker,
    vllm/executor/multiproc_worker_utils.py, as vllm-project/vllm#6732 shows it): the exception's message before the
    head is read as well as the traceback, and the line is counted once."""
    from logdoc.pipeline import parse_sources
    lead = "(VllmWorkerProcess pid=839) ERROR 08-19 19:03:55 multiproc_worker_utils.py:226] "
    text = (lead + "Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: unhandled cuda"
            " error (run with NCCL_DEBUG=INFO for details), Traceback (most recent call last):\n"
            + lead + '  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker.py", line 132, in init_device\n'
            + lead + "    init_worker_distributed_environment(self.parallel_config, self.rank,\n")
    got = parse_sources([("x.log", text)])
    assert [(e.line, e.kind, e.fields.get("error_string")) for e in got.events] == [
        (1, "torch.nccl_error", "unhandled cuda error"), (1, "torch.exception", None)]
    assert got.stats.lines_read == got.stats.relevant == got.stats.understood == 3
    # a logger's own words before the head (no message of the exception's) stay the traceback's
    got = parse_sources([("x.log", "Scheduler hit an exception: Traceback (most recent call last):\n"
                                   '  File "a.py", line 1, in f\n    g()\nRuntimeError: boom\n')])
    assert [e.kind for e in got.events] == ["torch.exception"]
