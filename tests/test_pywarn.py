"""Python's ``warnings`` heads (``/path/to/file.py:123: UserWarning: message``, warnings.formatwarning) are an
envelope: the message is read as the warning it carries (a c10d / ProcessGroup warning, a TORCH_WARN
``(Triggered internally at ...)``), at level WARN, on the fast path as on the plain one; the line opens no
record (its next line is the source line that issued it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from logdoc import fast, pipeline
from logdoc.blocks import may_start
from logdoc.envelope import unwrap
from logdoc.fast import alone
from logdoc.read.source import Source

DESTROY = ("WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more "
           "info, please see https://pytorch.org/docs/stable/distributed.html#shutdown")
GLOO = ("Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the "
        "network interface to bind to with GLOO_SOCKET_IFNAME. (Triggered internally at "
        "../torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:747.)")
SOCKET = "[c10d] The client socket has failed to connect to [node-1]:29500 (errno: 111 - Connection refused)."


@pytest.mark.parametrize("head,source", [
    ("/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py:4807: UserWarning: ",
     "distributed_c10d.py:4807"),
    ("train.py:12: FutureWarning: ", "train.py:12"),
    ("mypkg/sub_mod/x.py:3: DeprecationWarning: ", "x.py:3"),
    ("C:\\Users\\me\\env\\Lib\\site-packages\\torch\\distributed\\c10d_logger.py:83: UserWarning: ", "c10d_logger.py:83"),
    ("/x/y.py:9: torch.jit.TracerWarning: ", "y.py:9"),
    ("/x/y.py:9: Warning: ", "y.py:9"),
])
def test_the_head_is_peeled(head, source):
    env, msg = unwrap(head + SOCKET)
    assert (msg, env.level, env.source, env.layers) == (SOCKET, "WARN", source, ("pywarn",))
    assert not may_start("step 1", env)  # a warning's line opens no record by its envelope


@pytest.mark.parametrize("line", [
    "/x/y.py:9: note: UserWarning: not a warnings head",   # (no category before the message)
    "/x/y.py: UserWarning: no line number",
    "  File \"/x/y.py\", line 9, in f",
    "RuntimeError: /x/y.py:9: UserWarning: an exception's message, not a warnings head",
    "/x/y.pyc:9: UserWarning: not a Python source file",
])
def test_near_misses_keep_their_text(line):
    env, msg = unwrap(line)
    assert "pywarn" not in env.layers


def test_a_tee_prefix_outside_the_warning_keeps_its_rank():
    env, msg = unwrap(f"[default3]:/x/torch/distributed/distributed_c10d.py:4807: UserWarning: {DESTROY}")
    assert (env.local_rank, env.layers, msg) == (3, ("tee", "pywarn"), DESTROY)


def _parse(p: Path, on: bool):
    with fast.switched(on):
        res = pipeline.parse_sources([Source(str(p), path=str(p), every_line=False)])
    return [e.to_dict() for e in res.events], res.stats.to_dict()


def test_the_warnings_it_carries_are_read_on_both_paths(tmp_path: Path):
    lines = []
    for n in range(300):
        lines += [f"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py:{4800 + n % 3}: "
                  f"UserWarning: {DESTROY}", "  warnings.warn(",
                  f"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2925: UserWarning: {GLOO}",
                  "  work = group.allreduce([tensor], opts)",
                  "/x/torch/utils/checkpoint.py:464: UserWarning: the use_reentrant parameter should be passed explicitly",
                  "  return fn(*args, **kwargs)", f"step {n} | loss 2.3"]
        if n % 50 == 0:
            lines += [f"/x/torch/distributed/c10d_logger.py:83: UserWarning: {SOCKET}", "  return func(*args, **kwargs)"]
    p = tmp_path / "job.log"
    p.write_text("\n".join(lines) + "\n")
    plain = _parse(p, False)
    alone._NOTHING.clear()
    alone._OPENERS.clear()
    quick = _parse(p, True)
    assert alone._NOTHING  # the warning nothing reads is counted from its bytes the next times
    again = _parse(p, True)
    assert quick == plain and again == plain
    kinds = {}
    for e in plain[0]:
        kinds[e["template"]] = kinds.get(e["template"], 0) + 1
    assert kinds["torch:ProcessGroupNCCL:warning-destroy-process-group-was-not-called"] == 300
    assert kinds["torch:ProcessGroupGloo:unable-to-resolve-hostname-to-a-local"] == 300
    assert sum(1 for e in plain[0] if e["kind"] == "store.connect_retry") == 6
    assert all(e["level"] == "WARN" for e in plain[0]) and plain[1]["not_understood"] == 0


@pytest.mark.parametrize("line,layers", [
    # logging.captureWarnings(True): the stdlib logger's `py.warnings` record holds the warnings head
    (f"WARNING:py.warnings:/x/torch/distributed/c10d_logger.py:83: UserWarning: {SOCKET}", ("pylog", "pywarn")),
    (f"2026-12-05 00:00:00,123 - py.warnings - WARNING - /x/c10d_logger.py:83: UserWarning: {SOCKET}", ("pylog", "pywarn")),
    (f"(RayWorkerWrapper pid=123) /x/c10d_logger.py:83: UserWarning: {SOCKET}", ("ray", "pywarn")),
])
def test_the_head_inside_other_envelopes(line, layers):
    env, msg = unwrap(line)
    assert (env.layers, env.level, msg) == (layers, "WARN", SOCKET)
