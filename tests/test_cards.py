"""One card per cause (logdoc/cards.py) and card titles that name every rank they cover."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from logdoc.api import build_report
from logdoc.cards import merge_cards
from logdoc.kb import load_rules
from logdoc.pipeline import parse_paths
from logdoc.textlint import check_title

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@lru_cache(maxsize=None)
def report(name: str) -> dict:
    return build_report(parse_paths([str(SAMPLES / name)]), _rules())


@lru_cache(maxsize=1)
def _rules():
    return load_rules()


def card(id, category, ranks, role="root_cause", confidence=0.8, evidence=(), severity="error"):
    return {"id": id, "title": id, "category": category, "role": role, "severity": severity, "ranks": list(ranks),
            "hosts": [], "count": 1, "confidence": confidence, "symptoms": [],
            "evidence": [{"file": f, "line": n} for f, n in evidence]}


def test_same_category_and_nested_ranks_merge_into_the_first():
    out = merge_cards([card("A", "duplicate_gpu", [0, 1, 2, 3]), card("B", "duplicate_gpu", [0, 1]),
                       card("C", "wrong_network_interface", [0, 1])])
    assert [c["id"] for c in out] == ["A", "C"]
    assert out[0]["symptoms"][0]["id"] == "B" and out[0]["symptoms"][0]["same_cause"] is True


def test_same_evidence_line_merges_and_unrelated_causes_stay():
    out = merge_cards([card("A", "shm_exhausted", [2], evidence=[("r2.log", 10)]),
                       card("B", "bad_nccl_env_config", [5], evidence=[("r2.log", 10)]),
                       card("C", "shm_exhausted", [7])])
    assert [c["id"] for c in out] == ["A", "C"]


def test_a_death_card_folds_into_the_cause_that_blames_the_same_ranks_only():
    out = merge_cards([card("HANG", "collective_timeout_hung_rank", [2]), card("KILL", "peer_process_died", [2]),
                       card("KILL3", "peer_process_died", [3])])
    assert [c["id"] for c in out] == ["HANG", "KILL3"]


def test_order_is_first_failure_then_root_causes_by_confidence():
    out = merge_cards([card("FIRST", "a", [0], confidence=0.5), card("CTX", "b", [1], role="symptom"),
                       card("LOW", "c", [2], confidence=0.4), card("HIGH", "d", [3], confidence=0.9)])
    assert [c["id"] for c in out] == ["FIRST", "HIGH", "LOW", "CTX"]


@pytest.mark.parametrize("name", ["nccl-peer-oom-killed", "torchrun-worker-sigkill"])
def test_one_sigkill_gives_one_root_cause_card(name):
    r = report(name)
    roots = [d for d in r["diagnoses"] if d["role"] == "root_cause"]
    assert len(roots) == 1, [d["id"] for d in roots]
    same = {s["id"] for s in roots[0]["symptoms"] if s.get("same_cause")}
    assert {"LD701", "LD702"} <= same


def test_a_card_title_names_every_rank_it_covers():
    r = report("nccl-dgx-spark-mesh-pp-truncated")
    ld704 = [s for d in r["diagnoses"] for s in d["symptoms"] if s["id"] == "LD704"]
    assert ld704 and ld704[0]["ranks"] == [0, 1]
    assert ld704[0]["title"].startswith("Ranks 0, 1 aborted"), ld704[0]["title"]


@pytest.mark.parametrize("sample", sorted(p.parent.name for p in SAMPLES.glob("*/sample.yaml")))
def test_every_card_title_of_every_sample_reads_clean(sample):
    r = report(sample)
    titles = [d["title"] for d in r["diagnoses"] + r["notes"]]
    titles += [s["title"] for d in r["diagnoses"] for s in d.get("symptoms") or ()]
    bad = {t: check_title(t) for t in titles if check_title(t)}
    assert not bad, bad


def test_another_category_on_the_same_line_is_kept_as_an_alternative_reading():
    out = merge_cards([card("A", "container_missing_devices", [0], evidence=[("r0.log", 4)]),
                       card("B", "ib_unavailable_fallback_socket", [0], evidence=[("r0.log", 4)]),
                       card("C", "container_missing_devices", [0, 1])])
    assert [c["id"] for c in out] == ["A"]
    by_id = {s["id"]: s for s in out[0]["symptoms"]}
    assert by_id["B"]["alternative"] is True and by_id["B"]["same_cause"] is True
    assert "alternative" not in by_id["C"]  # the same category over more ranks: the same failure


def test_a_generic_card_on_the_same_line_is_the_same_failure_not_a_reading():
    generic = card("LD710", "user_code_exception", [0], evidence=[("r0.log", 9)])
    generic["_generic"] = True
    family = card("FAM", "nccl_internal_bug", [0], evidence=[("r0.log", 9)])
    family["family"] = True
    out = merge_cards([card("A", "port_in_use", [0], evidence=[("r0.log", 9)]), generic, family])
    assert [c["id"] for c in out] == ["A"]
    assert all(s["same_cause"] and "alternative" not in s for s in out[0]["symptoms"])


def test_the_reports_show_an_alternative_apart_from_the_same_failure():
    from io import StringIO

    from rich.console import Console

    from logdoc.report import markdown, terminal

    lead = card("A", "container_missing_devices", [0], evidence=[("r0.log", 4)])
    cards = [lead, card("B", "ib_unavailable_fallback_socket", [0], evidence=[("r0.log", 4)]),
             card("C", "container_missing_devices", [0, 1])]
    for c in cards:
        for e in c["evidence"]:
            e["text"] = "node:1:1 [0] NCCL INFO NET/IB : No device found."
    rep = {"diagnoses": merge_cards(cards), "notes": [], "job": {}, "stats": {}}
    md = markdown.render(rep)
    alt = md.index("Another reading of the same lines")
    assert "`B`" in md[alt:] and "`B`" not in md[:alt]
    assert "`C`" in md[md.index("The same failure, as other messages show it"):alt]
    buf = StringIO()
    terminal.print_report(rep, Console(file=buf, width=120, color_system=None))
    text = buf.getvalue()
    assert "? B B" in text and "= C C" in text


@pytest.mark.parametrize("line, rule", [
    ("node1:1234:1300 [0] graph/topo.h:230 NCCL WARN Could not find NET with id 0", "LD481"),
    ("node1:1234:1300 [0] transport/net_ib.cc:1855 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.0.0.2<43211> posted incorrect"
     " receive info: size 4096 addr 7f3a00000000 rkeys[0]=1a2b", "LD282"),
    ("node1:1234:1234 [0] gin/gin_host.cc:102 NCCL WARN No GIN-capable devices found.", "LD295"),
    ("node1:1234:1234 [0] init.cc:912 NCCL WARN nLocals = 3 should be a diviser of the number of ranks in node 0 = 8", "LD492"),
    ("node1:1234:1234 [0] enqueue.cc:2861 NCCL WARN ncclPutSignal: srcBuff is NULL", "LD587"),
    ("node1:1234:1234 [0] enqueue.cc:2216 NCCL WARN Unknown pattern for collective 2 algorithm 6", "LD589"),
    ("node1:1234:1234 [0] group.cc:61 NCCL WARN Blocking and nonblocking communicators are not allowed in the same group.",
     "LD590"),
    ("node1:1234:1234 [0] dev_runtime.cc:881 NCCL WARN Window address must be suitably aligned.", "LD594"),
])
def test_a_title_that_quotes_the_warn_quotes_its_message_not_its_header(line, rule):
    """The rules that name an NCCL WARN by its whole message took it from the event's text, which holds the
    header: the title read 'inconsistent: node1:1234:1300 [0] graph/topo.h:230 NCCL WARN Could not find ...'."""
    from logdoc import kb
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources
    top = build_report(parse_sources([("rank0.log", line + "\n")]), kb.load_rules())["diagnoses"][0]
    message = line.split(" NCCL WARN ", 1)[1].rstrip(".")
    title = top["title"]
    assert top["id"] == rule and "NCCL WARN" not in title and "node1:1234" not in title, title
    # the message whole, or its head when the title is fitted to one line of 120 characters (kb.render.render_title)
    assert message in title or (len(title) <= 120 and "\u2026" in title and message[:40] in title), title
