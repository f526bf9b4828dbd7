"""An NCCL WARN that no rule or annotation explains gets the family card of an unknown warning
(logdoc/differential/card.py). It is an error while nothing shows the run went past it; when its own
process went on (its communicator's `Init COMPLETE` after it, nccl-tests' correct results) and nothing
in the log failed, it is only a warning: a successful run is not a failed one."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources

_WARN = "node1:402:402 [0] /opt/rccl/build/hipify/src/graph/tuning.cc:1502 NCCL WARN LL cutoff points not detected for a supported arch gfx942\n"
_COMPLETE = "node1:402:402 [0] NCCL INFO ncclCommInitRank comm 0x5580 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
_OK = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 95.1\n"
_BAD = "# Out of bounds values : 12 FAILED\n"
_ERROR = ("node1:402:410 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43651> failed : "
          "Software caused connection abort\n")


def _first(files: dict[str, str]) -> dict:
    r = build_report(parse_sources(list(files.items())), kb.load_rules())
    return r["diagnoses"][0]


def test_an_unknown_warn_alone_is_an_error():
    d = _first({"rank0.log": _WARN})
    assert (d["id"], d["severity"]) == ("family:nccl_warn", "error")


@pytest.mark.parametrize("after", [_COMPLETE, _OK])
def test_a_warn_the_run_went_past_is_a_warning(after):
    d = _first({"rank0.log": _WARN + after})
    assert (d["id"], d["severity"]) == ("family:nccl_warn", "warning")


@pytest.mark.parametrize("files", [
    {"rank0.log": _COMPLETE + _WARN},                 # the sign is before the warning, not after it
    {"rank0.log": _WARN, "rank1.log": _COMPLETE},     # another process went on, not this one
    {"rank0.log": _WARN + _BAD},                      # the test found wrong results
])
def test_a_warn_without_its_process_going_on_stays_an_error(files):
    d = _first(files)
    assert d["severity"] == "error"


def test_a_failure_elsewhere_keeps_the_warn_an_error():
    r = build_report(parse_sources([("rank0.log", _WARN + _COMPLETE + _ERROR)]), kb.load_rules())
    warn_card = [d for d in r["diagnoses"] if d["id"] == "family:nccl_warn"]
    assert r["diagnoses"][0]["severity"] == "error"
    assert all(d["severity"] == "error" for d in warn_card)
