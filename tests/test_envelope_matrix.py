"""Every catalog message survives every prefix a real paste puts before it (issue 13, 3 and 4).

The messages (tests/envelope_shapes.py): each NCCL WARN format with its header, each PyTorch / Gloo
catalog row of a failure or warning level as it is printed (a c10 log line, a torchrun agent's
Python log line in both layouts, a Python traceback ending in the message, and that traceback's
last line alone). The shapes: the prefixes of launchers (torchrun, Open MPI, MPICH, Slurm, pdsh,
DeepSpeed, Ray, vLLM), log shippers and viewers (kubectl, docker's json-file, Compose, journald,
CRI, GitHub Actions, CloudWatch, a viewer's table), Python loggers (stdlib, loguru, transformers,
accelerate, Lightning, rich, glog) and paste damage (ANSI colours, quotes, line numbers, a shell's
prompt or trace, CRLF), alone and two or three stacked.

Each message is wrapped in shapes that rotate over the catalog per kind of message (so every shape
meets every kind of message, and the test stays light), and the wrapped text must give the same
first diagnosis (the same rule) as the clean text. The one exception is a diagnosis that argues from
what the prefix itself said about the process (:data:`FROM_THE_PREFIX`).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_sources

sys.path.insert(0, str(Path(__file__).parent))

import envelope_shapes as S  # noqa: E402

# Diagnoses that stand on what a prefix says about the process, and so may differ from the clean
# line's: a rank number makes the job's other ranks known members without output (a rank that never
# reached the collective, LD503; a peer that exited, LD715), and vLLM's multiprocessing workers run
# on one node (the ncclSystemError of a one-node job: shared memory first, LD172).
FROM_THE_PREFIX = {"LD503", "LD715", "LD172"}
NAMES_THE_PROCESS = {"rank", "tee rank", "openmpi", "mpich", "ray actor tee", "srun + tee + rank", "lightning",
                     "vllm worker", "vllm worker tp", "openmpi sagemaker", "openmpi timestamp", "skypilot",
                     "skypilot + openmpi"}


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _first(text: str, rules) -> str | None:
    report = build_report(parse_sources([("rank0.log", text + "\n")]), rules)
    found = (report.get("diagnoses") or []) or (report.get("notes") or [])
    return found[0]["id"] if found else None


def _kind(label: str) -> str:
    if label.startswith("nccl "):
        return "nccl"
    for tag in ("[glog]", "[stdlib]", "[last line]"):
        if label.endswith(tag):
            return tag
    return "torch"


def _plan():
    """(label, text, shape names): the shapes rotate per kind of message; a kind with fewer messages
    than there are shapes gives each message several, so that every shape meets every kind."""
    items = list(S.nccl_items()) + list(S.torch_items())
    names = list(S.SHAPES)
    by_kind: dict[str, list] = {}
    for label, text in items:
        by_kind.setdefault(_kind(label), []).append((label, text))
    plan = []
    for kind, group in by_kind.items():
        per = max(1, math.ceil(len(names) / len(group)))
        turn = 0
        for label, text in group:
            plan.append((label, text, [names[(turn + j) % len(names)] for j in range(per)]))
            turn += per
    return plan


def test_every_message_keeps_its_diagnosis_under_every_prefix(rules):
    plan = _plan()
    problems = []
    checked = 0
    met: dict[str, set] = {}
    for k, (label, text, shapes) in enumerate(plan):
        want = _first(text, rules)
        if want is None:
            continue
        for name in shapes:
            wrapped = S.SHAPES[name](text, k % 6 + 1)
            got = _first(wrapped, rules)
            checked += 1
            met.setdefault(name, set()).add(_kind(label))
            if got == want or (got in FROM_THE_PREFIX and name in NAMES_THE_PROCESS):
                continue
            problems.append(f"{label} [{name}]: {got} where the clean text gets {want}: {wrapped[-160:]!r}")
    assert checked >= 2000
    kinds = {_kind(label) for label, _, _ in plan}
    assert all(met.get(name) == kinds for name in S.SHAPES), {n: kinds - met.get(n, set()) for n in S.SHAPES}
    assert not problems, f"{len(problems)} of {checked}:\n" + "\n".join(problems[:30])


def test_the_shapes_are_the_tools_own():
    line = "RuntimeError: boom"
    assert S.SHAPES["openmpi"](line, 3) == "[1,3]<stderr>:RuntimeError: boom"
    assert S.SHAPES["srun padded"](line, 3) == "  3: RuntimeError: boom"
    assert S.SHAPES["docker json-file"](line, 1) == (
        '{"log":"RuntimeError: boom\\n","stream":"stderr","time":"2026-12-02T09:00:00.123456789Z"}')
    assert S.SHAPES["syslog"](line, 1) == "Dec  2 09:00:00 gpu-node-01 python[4001]: RuntimeError: boom"
    assert S.SHAPES["cat -n"](line, 11) == "    12\tRuntimeError: boom"
    # a launcher or a shipper prefixes every line; a logger only a record's first
    two = "Traceback (most recent call last):\nRuntimeError: boom"
    assert S.SHAPES["compose"](two, 1) == "trainer-2  | Traceback (most recent call last):\ntrainer-2  | RuntimeError: boom"
    assert S.SHAPES["loguru"](two, 1).endswith(" - Traceback (most recent call last):\nRuntimeError: boom")


def _top3(text: str, rules) -> list[str]:
    """The first three diagnoses and every note (a message that is a note alone stays one nested)."""
    report = build_report(parse_sources([("rank0.log", text + "\n")]), rules)
    return [d["id"] for d in (report.get("diagnoses") or [])[:3]] + [d["id"] for d in report.get("notes") or []]


# What the nested forms still lose (both read: the nested message is an event of its own, linked to its
# carrier): a Gloo check's strerror quoted in a one-line repr that the paste repair joins into its carrier's
# message (`ValueError: ... RuntimeError: [...device.cc:161] rv == 0 ... Address already in use`), whose words
# a pattern rule of the carrier's kind reads (the Gloo message alone is a context note); and spawn's
# `-- Process N terminated with the following error:` with no traceback after it, which under a
# `RuntimeError: ` line is an exception with a type (LD710) where the header alone is a traceback cut
# before its exception line (LD772); the same for a catalog line with no exception type of its own (a Rust
# `called \`Result::unwrap()\` on an \`Err\` value`), which a `RuntimeError('...')` repr gives one. The count
# may only go down.
KNOWN_NESTED_GAPS = 3


def test_a_nested_message_keeps_its_diagnosis_in_every_nesting_form(rules):
    """A catalog message inside an exception's repr (line ends escaped), a JSON record or a JSON string,
    a Ray task or actor error, torchrun's error file, a launcher's CalledProcessError output (bytes) or an
    ExceptionGroup: the message's own first diagnosis leads or follows the carrier's (top 3)."""
    forms = list(S.NESTINGS)
    problems = []
    checked = 0
    met: dict[str, set] = {}
    for k, (label, clean, message) in enumerate(S.nested_items()):
        if k % 2:
            continue  # (every other message: the forms still meet every kind of message)
        want = _first(clean, rules)
        if want is None:
            continue
        form = forms[(k // 2) % len(forms)]
        text = S.NESTINGS[form](message)
        got = _top3(text, rules)
        checked += 1
        met.setdefault(form, set()).add(_kind(label))
        if want not in got:
            problems.append(f"{label} [{form}]: {got} where the message alone gets {want}: {text[-160:]!r}")
    assert checked >= 800
    assert all(met.get(f) == {"nccl", "torch", "[last line]"} for f in forms), met
    print(f"nested: {len(problems)} of {checked} lose the message's diagnosis")
    assert len(problems) <= KNOWN_NESTED_GAPS, f"{len(problems)} of {checked}:\n" + "\n".join(problems[:30])
