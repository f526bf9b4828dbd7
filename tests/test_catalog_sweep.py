"""Every failure or warning message of the catalogs is recognised wherever it stands (issue 13, 3).

tools/catalog_coverage.py renders each NCCL WARN format (grammars: every release's wording, here in
the layout of the newest release that printed it) and each PyTorch / Gloo catalog row of level
ERROR, FATAL or WARN as a clean line. This sweep puts each message in the shapes people paste it in,
one shape per message in turn (the shapes rotate over the catalog, so every shape is exercised on
every kind of message while the test stays fast), and checks that logdoc still says something:

* NCCL: after a cut and masked header (``st-01:XXXXXX:33 [0] ...``: a truncated host, a masked
  pid), bare (the message with no header at all), under ``Last error:`` of a ``DistBackendError``,
  and inside ``terminate called after throwing ... what():`` around that error;
* PyTorch / Gloo: bare (without c10's ``[rank0]:[E... file:line]`` prefix), inside ``what():`` of a
  C++ exception, and as the cause of a Python exception chain (``The above exception was the direct
  cause of the following exception:``).

Where the clean line gets a category, the cut header and the bare message must get the same one
(the message is the same message); nested, the carrier's own diagnosis may lead, but the report is
never silent.
"""
from __future__ import annotations

import csv
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.pipeline import parse_sources

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

_HEADER = re.compile(r"^(?:\[\d{4}-[^\]]*\] )?(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+) (?P<dev>\[\d+\]) (?P<mid>.*?NCCL WARN )(?P<msg>.*)$",
                     re.S)
_C10 = re.compile(r"^\[rank0\]:\[[EWF]1201 10:11:12\.000000000 [^\]]+\] ")
_DIST = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
         "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
         "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
         "Last error:\n")
_TERMINATE = "terminate called after throwing an instance of '{t}'\n  what():  {m}"
_CHAIN = ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    main()\n"
          "RuntimeError: {m}\n\nThe above exception was the direct cause of the following exception:\n\n"
          "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    main()\n"
          "RuntimeError: the training step failed")

# A bare message is recognised by its words. A format that starts with a value (`%s : %s argument is
# NULL`, `%s : invalid root %d ...`) is read bare only when the rest of it says enough (its literal
# text reaches logdoc.templates.BARE_MIN_LITERAL, as logdoc/classify/bare.py asks); the others, and the
# lines of a multi-line report (the desync report's `- ...` lines), are exempt: alone, without header
# or report, nothing tells them from any other text. So are the formats whose leading value a
# launcher's envelope takes alone (`[%d] ...` reads as MPICH's `[rank] `, `%s: ...` with a value like
# `eth0` as pdsh's `host: `).
BARE_EXEMPT_NCCL = re.compile(r"^(?:%|\[%)")
_ENVELOPE_LIKE = re.compile(r"^(?:\[%|%s:)")
BARE_EXEMPT_TORCH = re.compile(r"^- ")


def _bare_exempt_nccl(fmt: str) -> bool:
    if not BARE_EXEMPT_NCCL.match(fmt.strip()):
        return False
    if _ENVELOPE_LIKE.match(fmt.strip()):
        return True
    from logdoc.nccl import BARE_MIN_LITERAL
    from logdoc.templates import nccl_catalog

    spec = _FORMAT_SPECIFICITY.get(fmt)
    if spec is None:
        spec = _FORMAT_SPECIFICITY[fmt] = max(
            (t.specificity for t in nccl_catalog().templates.values() if t.format == fmt), default=0)
    return spec < BARE_MIN_LITERAL


_FORMAT_SPECIFICITY: dict[str, int] = {}


def _tool():
    spec = importlib.util.spec_from_file_location("catalog_coverage", ROOT / "tools" / "catalog_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _nccl_items():
    """(label, clean line, format) for each NCCL WARN format, in its newest release's layout."""
    from nccl_render import render_line

    with open(ROOT / "tests" / "data" / "nccl-messages-by-version.tsv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["level"] == "WARN"]
    for row in rows:
        tag = row["last_tag"]
        yield (f"{tag} {row['locations_in_last_tag'].split(',')[0]}",
               render_line("WARN", row["format"], tag, row["locations_in_last_tag"]), row["format"])


def _shapes_nccl(line: str, fmt: str) -> list[tuple[str, str, bool]]:
    """(shape, text, same category as the clean line) for one rendered NCCL WARN line."""
    m = _HEADER.match(line)
    assert m is not None, line
    host, msg = m["host"], m["msg"]
    out = [("cut header", f"{host[len(host) // 2:]}:XXXXXX:{m['tid']} {m['dev']} {m['mid']}{msg}", True),
           ("Last error", _DIST + msg, False),
           ("what()", _TERMINATE.format(t="c10::DistBackendError", m=_DIST + msg), False)]
    if not _bare_exempt_nccl(fmt):
        out.append(("bare", msg, True))
    return out


def _shapes_torch(text: str) -> list[tuple[str, str, bool]]:
    msg = _C10.sub("", text)
    inner = msg[len("RuntimeError: "):] if msg.startswith("RuntimeError: ") else msg
    out = [("what()", _TERMINATE.format(t="c10::Error", m=inner), False),
           ("cause chain", _CHAIN.format(m=inner), False)]
    if not BARE_EXEMPT_TORCH.match(inner):
        out.append(("bare", msg, True))
    return out


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _categories(text: str, rules) -> list[str]:
    report = build_report(parse_sources([("rank0.log", text + "\n")]), rules)
    return [d["category"] for d in (report.get("diagnoses") or []) + (report.get("notes") or []) if d.get("category")]


def _sweep(items, rules) -> tuple[int, list[str]]:
    checked, problems = 0, []
    turn = 0
    for label, clean, shapes in items:
        if not shapes:
            continue
        shape, text, same = shapes[turn % len(shapes)]
        turn += 1
        got = _categories(text, rules)
        checked += 1
        if not got:
            problems.append(f"{label} [{shape}]: silent: {text[-160:]!r}")
            continue
        if same:
            want = _categories(clean, rules)
            if want and want[0] not in got[:3]:
                problems.append(f"{label} [{shape}]: {got[:3]} where the clean line gets {want[0]}: {text[-160:]!r}")
    return checked, problems


def test_nccl_warn_messages_are_recognised_in_every_shape(rules):
    items = [(label, line, _shapes_nccl(line, fmt)) for label, line, fmt in _nccl_items()]
    checked, problems = _sweep(items, rules)
    assert checked >= 1000
    assert not problems, f"{len(problems)} of {checked}:\n" + "\n".join(problems[:30])


def test_torch_and_gloo_messages_are_recognised_in_every_shape(rules):
    items = [(label, text, _shapes_torch(text)) for label, text, _ in _tool().torch_lines()]
    checked, problems = _sweep(items, rules)
    assert checked >= 600
    assert not problems, f"{len(problems)} of {checked}:\n" + "\n".join(problems[:30])


def test_the_shapes_are_the_pasted_ones():
    # the shapes themselves: a cut host and a masked pid, the nesting forms as PyTorch prints them
    line = "node-01.example.com:4242:4250 [3] misc/shmutils.cc:82 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)"
    shapes = dict((s, t) for s, t, _ in _shapes_nccl(line, "Error while creating shared memory segment %s (size %zu)"))
    assert shapes["cut header"].startswith("xample.com:XXXXXX:4250 [3] misc/shmutils.cc:82 NCCL WARN Error while")
    assert shapes["bare"] == "Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)"
    assert shapes["Last error"].endswith("Last error:\nError while creating shared memory segment /dev/shm/nccl-x (size 9637888)")
    assert "  what():  torch.distributed.DistBackendError: NCCL error in:" in shapes["what()"]
    t = dict((s, x) for s, x, _ in _shapes_torch("[rank0]:[E1201 10:11:12.000000000 TCPStore.cpp:100] RuntimeError: boom"))
    assert t["bare"] == "RuntimeError: boom" and "\nRuntimeError: boom\n\nThe above exception" in t["cause chain"]
