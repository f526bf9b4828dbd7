"""A lane message's reading learned by shape (issue 18); plain twin: the classifier itself.

The ranks of a job print the same NCCL messages with other numbers (``ncclCommInitRank comm 0x..
rank N nranks N cudaDev N ...``, ``Channel NN/NN : a[b] -> c[d] via P2P/CUMEM/read``), so the
lane's memo by exact message (:func:`logdoc.fast.messages.message_event`) misses, and each is read by
the grammar or the catalog again. A message's number runs (:data:`_RUNS`) are its ``0x`` hex runs,
its hex words with a digit (a bus id, ``1a000``) and its decimal runs not inside a word (``P2P``,
``enp1s0`` are words). The reading of a message (kind, level, template and the fields after the
header's) is learned per *structure* (the literal text between the runs: an expression with a
group per run; the text without hex digits, :func:`logdoc.fast.shape`, finds the few structures
of a shape) as a function of the runs:

* the first message of a structure is read again with every run replaced by a value seen nowhere
  else in it (probe A): a field whose value changed is mapped to the runs it shows (an int equal
  to a run's value, a text made of literal pieces and runs), one that did not is a constant; a
  value that changed and is not made of runs refuses the structure;
* the plan must give back the reading of the message, of probe A, and of probe B (every run a
  small number: a value that depends on a number other than by copying it, as a result code's
  name, shows there), and then of the next :data:`CHECKS` messages of the structure, read by the
  classifier as before; any difference refuses the structure for good. Only then is it used.

``tests/test_fastpath.py::test_message_readings_equal_the_classifier`` compares plan and classifier
on random messages of the catalog's INFO formats and of the grammar's families with varied numbers.
"""
from __future__ import annotations

import re
from typing import Callable

from . import shape
from ..lazyre import lazy_re

# A number run: `0x` and hex digits; a word of hex digits with a letter and a digit (a bus id,
# `1a000`); or decimal digits that do not stand between letters or digits on both sides of a word
# (`P2P`, `enp1s0` are words; `mlx5_0`, `eth0`, `cuda12.4` end in numbers). Possessive: a run is
# always taken whole. Used when a structure is learned only: its expression has a group per run.
_RUNS = lazy_re(r"(?<![A-Za-z0-9])(?:0x[0-9a-fA-F]++|(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])"
                   r"[0-9a-fA-F]++(?![A-Za-z0-9])|[0-9]++)|(?<![0-9])[0-9]++(?![A-Za-z])")
_SLOT = {"0x": "(0x[0-9a-fA-F]+)", "w": "((?=[0-9a-fA-F]*[0-9])[0-9]*[a-fA-F][0-9a-fA-F]*)", "d": "([0-9]+)"}


def _kind(run: str) -> str:
    return "d" if run.isdigit() else "0x" if run.startswith("0x") else "w"


_PIECES = lazy_re(r"0x[0-9a-fA-F]+|[0-9]+")  # the numbers of a literal text


def _pieces(slots: dict) -> re.Pattern:
    """A field's text cut at probe A's values (longest first)."""
    return re.compile("(" + "|".join(re.escape(v) for v in sorted(slots, key=len, reverse=True)) + ")")

CHECKS = 2          # messages of a structure read both ways before its plan is used
MAX_RUNS = 96
MAX_SHAPES = 4096
MAX_STRUCTURES = 4  # per shape


class _Plan:
    """One structure of a shape: ``rx`` (its literal text, a group per run) and what it reads as;
    ``build`` is None for a structure whose reading is not learned (refused)."""

    __slots__ = ("rx", "kind", "level", "template", "build", "checks")

    def __init__(self, rx, kind=None, level=None, template=None, build=None) -> None:
        self.rx, self.kind, self.level, self.template, self.build = rx, kind, level, template, build
        self.checks = CHECKS


_PLANS: dict[bytes, list[_Plan]] = {}


def reading(msg: str):
    """The learned reading of ``msg`` (``(kind, level, template, fields)``, new objects), or None."""
    plans = _PLANS.get(shape(msg))
    if plans is None:
        return None
    for plan in plans:
        m = plan.rx.fullmatch(msg)
        if m is not None:
            if plan.build is None or plan.checks:
                return None
            try:
                return plan.kind, plan.level, plan.template, plan.build(m.groups())
            except (ValueError, IndexError):
                return None
    return None


def observe(msg: str, got: tuple, probe: Callable[[str], tuple | None]) -> None:
    """The classifier read ``msg`` as ``got`` (kind, level, template, fields): check the plan of its
    structure against it, or learn one (``probe(text)``: the reading of another message under the
    same header, or None)."""
    key = shape(msg)
    plans = _PLANS.get(key)
    if plans is None:
        if len(_PLANS) >= MAX_SHAPES:
            _PLANS.clear()
        plans = _PLANS[key] = []
    for plan in plans:
        m = plan.rx.fullmatch(msg)
        if m is not None:
            if plan.build is not None and plan.checks:
                plan.checks -= 1
                if not _agrees(plan, m.groups(), got):
                    plan.build = None
            return
    if len(plans) < MAX_STRUCTURES:
        plan = _learn(msg, got, probe)
        if plan is not None:
            plans.append(plan)


def _agrees(plan: _Plan, runs, got: tuple | None) -> bool:
    if got is None or plan.build is None or (plan.kind, plan.level, plan.template) != got[:3]:
        return False
    try:
        return same(plan.build(runs), got[3])
    except (ValueError, IndexError):
        return False


def same(a, b) -> bool:
    """``a == b`` with the same types everywhere (``1 == True``, ``1 == 1.0`` are not the same
    field) and dicts in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    return a == b


def _with(lits: list[str], runs: list[str]) -> str:
    out = [lits[0]]
    for r, lit in zip(runs, lits[1:]):
        out.append(r)
        out.append(lit)
    return "".join(out)


def _probe_runs(runs: list[str], lits: list[str]) -> list[str]:
    """A value per run, all different from each other, from the runs and from any number of the
    literal text, of the run's kind (hex or decimal)."""
    taken = set(runs)
    for lit in lits:
        taken.update(_PIECES.findall(lit))
    out, n = [], 0
    for r in runs:
        while True:
            n += 1
            k = _kind(r)
            v = str(70000 + 7 * n) if k == "d" else f"{'0x' if k == '0x' else ''}{0xe7a5000 + n:x}"
            if v not in taken:
                break
        taken.add(v)
        out.append(v)
    return out


def _learn(msg: str, got: tuple, probe) -> _Plan | None:
    runs = _RUNS.findall(msg)
    if not runs or len(runs) > MAX_RUNS:
        return None  # nothing varies (the memo by text has it), or too long to be worth it
    lits = _RUNS.split(msg)
    try:
        rx = re.compile("".join(re.escape(lit) + ("" if i == len(runs) else _SLOT[_kind(runs[i])])
                                for i, lit in enumerate(lits)))
    except (re.error, RecursionError, OverflowError):
        return None
    plan = _Plan(rx)  # refused until every check below passes
    m = rx.fullmatch(msg)
    if m is None or list(m.groups()) != runs:
        return plan
    runs_a = _probe_runs(runs, lits)
    got_a = probe(_with(lits, runs_a))
    if got_a is None or got_a[:3] != got[:3]:
        return plan
    slots = {v: i for i, v in enumerate(runs_a)}
    ints = {int(v): i for i, v in enumerate(runs_a) if v.isdigit()}
    try:
        src = _spec(got[3], got_a[3], runs, slots, ints)
        build = eval(compile("lambda r: " + src, "<reading>", "eval"), {"__builtins__": {}, "int": int})  # noqa: S307 - reprs and indices only
    except (_Refused, SyntaxError, ValueError, RecursionError, MemoryError):
        return plan
    plan.kind, plan.level, plan.template, plan.build = got[0], got[1], got[2], build
    runs_b = [{"d": "3", "0x": "0x3", "w": "3b"}[_kind(r)] for r in runs]
    if not (_agrees(plan, runs, got) and _agrees(plan, runs_a, got_a) and _agrees(plan, runs_b, probe(_with(lits, runs_b)))):
        plan.build = None
    return plan


class _Refused(Exception):
    pass


def _spec(o, p, runs: list[str], slots: dict, ints: dict) -> str:
    """The source of an expression of ``r`` (the runs) that gives ``o`` for ``runs`` and ``p`` for
    probe A's runs (``slots``: a probe value -> its run; ``ints``: its int value -> its run)."""
    if type(o) is not type(p):
        raise _Refused
    if isinstance(o, dict):
        if list(o) != list(p) or not all(type(k) is str for k in o):
            raise _Refused
        return "{" + ", ".join(f"{k!r}: {_spec(o[k], p[k], runs, slots, ints)}" for k in o) + "}"
    if isinstance(o, list):
        if len(o) != len(p):
            raise _Refused
        return "[" + ", ".join(_spec(a, b, runs, slots, ints) for a, b in zip(o, p)) + "]"
    if o is None or isinstance(o, bool):
        if o != p:
            raise _Refused
        return repr(o)
    if isinstance(o, int):
        i = ints.get(p)
        if i is not None and runs[i].isdigit() and int(runs[i]) == o:
            return f"int(r[{i}])"
        i = ints.get(-p)
        if i is not None and runs[i].isdigit() and -int(runs[i]) == o:
            return f"-int(r[{i}])"
        if o == p:
            return repr(o)
        raise _Refused
    if isinstance(o, str):
        if o == p:
            return repr(o)
        parts = []
        for j, piece in enumerate(_pieces(slots).split(p)):
            if not piece:
                continue
            i = slots.get(piece) if j % 2 else None
            parts.append(f"r[{i}]" if i is not None else repr(piece))
        src = " + ".join(parts) if parts else "''"
        if not parts or all(not s.startswith("r[") for s in parts):
            raise _Refused  # it changed, and not by a run
        return "(" + src + ")"
    raise _Refused
