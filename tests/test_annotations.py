"""Catalog annotations (knowledge/annotations/), template-id rules and the family-level card.

The loader must report schema errors with file:line, duplicate and unknown ids; the real files must
pass; a rule's ``match.template`` matches every id of the annotation group; an error-level message
no rule explains gets a card with a ranked differential; benign messages become notes.
"""
from __future__ import annotations

import csv
import json
import shutil
import textwrap
from functools import lru_cache
from pathlib import Path

import pytest

from logdoc import annotations as A
from logdoc import kb
from logdoc.api import build_report
from logdoc.knowledge import lint_summary
from logdoc.pipeline import parse_sources
from logdoc.resources import data_dir

from nccl_render import render_line

KNOWLEDGE = data_dir("knowledge")


@lru_cache(maxsize=1)
def builtin():
    return kb.load_rules()


@lru_cache(maxsize=1)
def warn_rows() -> list[dict]:
    """NCCL WARN catalog rows whose rendered line the parser names by that very id."""
    from logdoc.events import Envelope
    from logdoc.nccl import classify

    out = []
    with open(data_dir("grammars") / "nccl_messages.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["levels"] != "WARN" or "%" in row["format"][:3]:
                continue
            line = render_line("WARN", row["format"], row["last"], row["where"])
            p = classify(line, Envelope())
            if p is not None and p.template == row["id"] and p.kind == "nccl.warn":
                out.append({**row, "line": line})
            if len(out) >= 3:
                break
    return out


def kb_dir(tmp_path: Path, annotations: str | None = None, rules: str | None = None, keep_rules=False) -> Path:
    """A knowledge folder: the built-in differentials, optionally the built-in rules, plus the given files."""
    d = tmp_path / "knowledge"
    d.mkdir()
    shutil.copytree(KNOWLEDGE / "differentials", d / "differentials")
    if keep_rules:
        for p in KNOWLEDGE.glob("*.yaml"):
            shutil.copy(p, d / p.name)
    (d / "annotations").mkdir()
    if annotations is not None:
        (d / "annotations" / "test.yaml").write_text(textwrap.dedent(annotations), encoding="utf-8")
    if rules is not None:
        (d / "test_rules.yaml").write_text(textwrap.dedent(rules), encoding="utf-8")
    return d


def problems_of(rs, name: str) -> list[str]:
    return [str(p) for p in rs.problems if Path(p.file).name == name]


# ---------------------------------------------------------------------------------------------
# loading and lint

def test_schema_errors_carry_file_and_line(tmp_path):
    a, b = warn_rows()[:2]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        description: test
        annotations:
          - ids: [{a['id']}]
            category: not_a_category
            role: root_cause
            meaning: Something.
          - ids: [{b['id']}]
            category: benign
            role: symptom
            meaning: Something else.
            colour: red
        """)
    rs = kb.load_rules([d])
    probs = problems_of(rs, "test.yaml")
    path = str(d / "annotations" / "test.yaml")
    assert any(p.startswith(f"{path}:5:") and "unknown category 'not_a_category'" in p for p in probs), probs
    assert any(p.startswith(f"{path}:10:") and "benign" in p for p in probs), probs
    assert any(p.startswith(f"{path}:12:") and "unknown key 'colour'" in p for p in probs), probs
    assert not rs.annotations.entries  # bad entries are left out


def test_duplicate_and_unknown_ids(tmp_path):
    a, b = warn_rows()[:2]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}, nccl.00000000]
            category: shm_exhausted
            role: root_cause
            meaning: One.
          - ids: [{b['id']}, {a['id']}]
            category: peer_process_died
            role: symptom
            meaning: Two.
        """)
    rs = kb.load_rules([d])
    probs = problems_of(rs, "test.yaml")
    assert any(":3:" in p and "nccl.00000000 is not in the message catalogs" in p for p in probs), probs
    assert any(":7:" in p and f"id {a['id']} annotated twice (first at" in p for p in probs), probs
    assert rs.annotations.get(a["id"]).category == "shm_exhausted"
    assert rs.annotations.get(b["id"]).ids == (b["id"],)
    assert any(p.level == "error" for p in rs.problems)


def test_wrong_source_is_reported(tmp_path):
    tid = next(r["id"] for r in csv.DictReader(
        (l for l in (data_dir("grammars") / "torch_templates.tsv").open(encoding="utf-8") if not l.startswith("#")),
        delimiter="\t") if r["level"] == "ERROR")
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{tid}]
            category: peer_process_died
            role: symptom
            meaning: A torch message in an NCCL file.
        """)
    probs = problems_of(kb.load_rules([d]), "test.yaml")
    assert any("in a nccl file" in p for p in probs), probs


def test_real_annotation_files_pass():
    rs = builtin()
    bad = [str(p) for p in rs.problems if "annotations" in Path(p.file).parts or "differentials" in Path(p.file).parts]
    assert bad == []
    assert rs.differentials is not None and len(rs.differentials.categories) == len(kb.CATEGORIES)
    lines = lint_summary(rs)
    assert any(l.strip().startswith("annotated: nccl WARN ") for l in lines), lines
    done, total = A.completeness(rs.annotations)["nccl WARN"]
    assert total == 1129 and 0 <= done <= total


def test_every_catalog_message_is_annotated():
    """Every NCCL WARN format of every release and every PyTorch/Gloo ERROR/FATAL/WARN row has its
    annotation: a new catalog row without one fails here (rules lint names it)."""
    rs = builtin()
    assert A.missing(rs.annotations) == []
    for what, (done, total) in A.completeness(rs.annotations).items():
        assert done == total, what


def test_compiled_copy_carries_annotations_and_differentials(tmp_path):
    a = warn_rows()[0]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}]
            category: shm_exhausted
            role: root_cause
            meaning: One.
            condition: when it fails
            differential: [fd_limit_exhausted]
        """)
    rs = kb.load_rules([d])
    back = kb.load_compiled(json.loads(json.dumps(kb.compile_rules(rs))))
    assert back.problems == []
    got = back.annotations.get(a["id"])
    assert (got.category, got.role, got.meaning, got.condition, got.differential) == (
        "shm_exhausted", "root_cause", "One.", "when it fails", ("fd_limit_exhausted",))
    assert set(back.differentials.categories) == set(rs.differentials.categories)
    assert [f.id for f in back.differentials.families] == [f.id for f in rs.differentials.families]


# ---------------------------------------------------------------------------------------------
# rules matching template ids

RULE = """\
    family: test
    rules:
      - id: LD199
        category: shm_exhausted
        severity: error
        role: root_cause
        title: "test rule on a template"
        match: {{template: [{tid}]}}
        explanation: x
        fix: [x]
        confirm: [x]
        examples:
          match: ["{line}"]
    """


def test_template_rule_matches_the_whole_group(tmp_path):
    a, b = warn_rows()[:2]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}, {b['id']}]
            category: shm_exhausted
            role: root_cause
            meaning: The same message in two wordings (for this test).
        """, RULE.format(tid=a["id"], line=a["line"].replace('"', '\\"')))
    rs = kb.load_rules([d])
    assert rs.errors == [], [str(p) for p in rs.errors]
    rule = rs.get("LD199")
    assert rule.templates == {a["id"]} and rule.kinds == ()
    for row in (a, b):
        evs = parse_sources([("r.log", row["line"] + "\n")]).events
        assert [m.rule.id for m in rs.match(evs)] == ["LD199"], row["line"]
    c = warn_rows()[2]
    evs = parse_sources([("r.log", c["line"] + "\n")]).events
    assert [m.rule.id for m in rs.match(evs)] == []
    assert kb.check_examples(rs, lambda src: parse_sources(src).events) == []


def test_unknown_template_id_in_a_rule_is_an_error(tmp_path):
    d = kb_dir(tmp_path, None, RULE.format(tid="nccl.deadbeef", line="x"))
    rs = kb.load_rules([d])
    assert any("nccl.deadbeef is not a catalog template id" in str(p) and p.level == "error" for p in rs.problems)


def test_template_key_validated(tmp_path):
    d = kb_dir(tmp_path, None, RULE.format(tid="", line="x").replace("template: []", "template: 3"))
    rs = kb.load_rules([d])
    assert rs.get("LD199") is None


# ---------------------------------------------------------------------------------------------
# the family-level card

def report(rs, text: str) -> dict:
    return build_report(parse_sources([("rank0.log", text)]), rs)


def test_unexplained_warn_gets_a_card_with_a_differential(tmp_path):
    a = warn_rows()[0]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}]
            category: peer_process_died
            role: symptom
            meaning: A test meaning for this message.
            differential: [firewall_or_unreachable_peer]
        """)
    rs = kb.load_rules([d])
    r = report(rs, a["line"] + "\nnode2:1:1 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n")
    assert r["diagnoses"], "a WARN nothing explains must not be silent"
    card = r["diagnoses"][0]
    assert card["id"] == f"catalog:{a['id']}" and card["meaning"] == "A test meaning for this message."
    assert card["severity"] == "error" and card["role"] == "symptom"
    cats = [x["category"] for x in card["differential"]]
    # two hosts speak for an unreachable peer, and nothing here for a dead one: it moves up
    assert cats[:2] == ["firewall_or_unreachable_peer", "peer_process_died"]
    assert "several hosts" in card["differential"][0]["for"][0]
    for x in card["differential"]:
        assert set(x) >= {"category", "for", "against", "check"} and x["check"]
    # on one host the prior order stands, and the single host is said against the unreachable peer
    alone = report(rs, a["line"] + "\n")["diagnoses"][0]["differential"]
    assert [x["category"] for x in alone][:2] == ["peer_process_died", "firewall_or_unreachable_peer"]
    assert "only one host" in alone[1]["against"][0]


def test_benign_warn_is_a_note(tmp_path):
    a = warn_rows()[0]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}]
            category: benign
            role: benign
            meaning: Harmless in healthy runs.
        """)
    r = report(kb.load_rules([d]), a["line"] + "\n")
    assert [x for x in r["diagnoses"] if x["severity"] == "error"] == []
    assert [n["title"] for n in r["notes"]] == ["Harmless in healthy runs."]


def test_evidence_for_and_against_is_quoted(tmp_path):
    d = kb_dir(tmp_path)
    rs = kb.load_rules([d])
    text = ("RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144]"
            " weird failure: Cannot assign requested address\n")
    card = report(rs, text)["diagnoses"][0]
    assert card["id"] == "family:gloo_connect_full_mesh"
    top = card["differential"][0]
    assert top["category"] == "port_in_use" and top["for"] and "Cannot assign requested address" in top["for"][0]
    one_host = report(rs, "RuntimeError: Gloo connectFullMesh failed\n")["diagnoses"][0]
    assert [x["category"] for x in one_host["differential"]][0] == "fd_limit_exhausted"


def test_seed_line_as_quoted_gets_the_full_mesh_card():
    r = report(builtin(), 'RuntimeError: Gloo connectFullMesh failed ...\n')
    card = r["diagnoses"][0]
    assert card["id"] == "family:gloo_connect_full_mesh" and card["severity"] == "error"
    assert "N-1 sockets per" in card["explanation"] and "Megatron" in card["explanation"]
    checks = " | ".join(x["check"] for x in card["differential"])
    for word in ("ulimit -n", "somaxconn", "tcp_max_syn_backlog", "ip_local_port_range", "ip -br addr show",
                 "conntrack", "timeout"):
        assert word in checks, word
    assert {"fd_limit_exhausted", "firewall_or_unreachable_peer", "port_in_use", "wrong_network_interface",
            "timeout_misconfigured"} <= {x["category"] for x in card["differential"]}
    assert all(d["url"].startswith("https://github.com/pytorch/") for d in card["docs"])


def test_reports_render_the_differential():
    from logdoc.report.markdown import render

    r = report(builtin(), 'RuntimeError: Gloo connectFullMesh failed ...\n')
    md = render(r)
    assert "Differential" in md and "ulimit -n" in md


@pytest.mark.parametrize("text", [
    "torch.distributed.DistNetworkError: failed to recv, got 0 bytes\n",
    "torch.distributed.DistStoreError: Invalid size for the timeout rank ID\n",
    "torch.distributed.DistBackendError: something no catalog knows\n",
])
def test_error_families_are_not_silent(text):
    """A torch Dist*Error that no rule explains gets a card: from its annotation when the catalog
    knows the message, else from its family."""
    r = report(builtin(), text)
    assert r["diagnoses"], "an error nothing explains must not be silent"
    card = r["diagnoses"][0]
    assert card["family"] and card["severity"] == "error" and card["category"] in kb.CATEGORIES
    assert card["differential"] and card["differential"][0]["check"]


def test_resolver_memo_is_blind_to_digits_only_where_the_catalog_is():
    """The ranks of a job print one message with their own numbers: one catalog look-up for all of
    them; a format with a digit in its literal text (``within 300 ms``) still tells numbers apart."""
    from logdoc import resolve as R
    from logdoc.events import Event

    def ev(text: str) -> Event:
        return Event(kind="torch.heartbeat", level="ERROR", file="r.log", line=1, text=text, template="torch.heartbeat")

    gil = "Could not acquire GIL within 300 ms on exit, possible GIL induced hang"
    assert R.digit_blind_key(gil) is None
    res = R.Resolver(builtin().annotations)
    assert res.catalog_id(ev(gil)) == "torch:ProcessGroupNCCL:could-not-acquire-gil-within-300-ms"
    assert res.catalog_id(ev(gil.replace("300", "400"))) != "torch:ProcessGroupNCCL:could-not-acquire-gil-within-300-ms"

    calls = []
    real = R._torch_lookup
    res = R.Resolver(builtin().annotations)
    texts = [f"[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183, OpType=ALLREDUCE, "
             f"NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for {600000 + r * 7} milliseconds "
             f"before timing out." for r in (1, 7, 9, 3)]
    try:
        R._torch_lookup = lambda text: calls.append(text) or real(text)
        got = {res.catalog_id(ev(t)) for t in texts}
    finally:
        R._torch_lookup = real
    assert len(got) == 1 and len(calls) == 1


@pytest.mark.parametrize("result, family", [
    ("unhandled system error", "family:nccl_system_error"),
    ("unhandled cuda error", "LD815"),  # rules explain these
    ("internal error", "LD133"),
])
def test_a_message_that_quotes_an_nccl_result_gets_that_results_card(result, family):
    # a framework's own check prints `<call> failed: <ncclGetErrorString>` (annotated `by_result`): the
    # result's family decides the card and its candidates, not the check's one annotation
    rs = kb.load_rules()
    got = report(rs, f"horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: {result}\n")
    lead = got["diagnoses"][0]
    if not family.startswith("family:"):
        assert lead["id"] == family
        return
    assert lead["id"] == family, [(d["id"], d["category"]) for d in got["diagnoses"]]
    fam = next(f for f in rs.differentials.families if f.id == family[len("family:"):])
    assert lead["category"] == fam.data["generic_causes"][0]


@pytest.mark.parametrize("result, family", [
    ("unhandled system error", "family:nccl_system_error"),
    ("unhandled cuda error", "LD815"),
])
def test_the_original_reason_of_an_abort_gets_its_results_card(result, family):
    # torch <= 1.13: `NCCL communicator was aborted on rank N.  Original reason for failure was: NCCL error:
    # <result>, NCCL version V` (NCCLUtils' getNcclErrorDetailStr nested in the abort): the abort is a
    # symptom rule's (LD514), the nested reason still gets the card of its result, which leads
    got = report(kb.load_rules(), "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure "
                 f"was: NCCL error: {result}, NCCL version 2.10.3\n")
    ids = [d["id"] for d in got["diagnoses"]]
    assert ids[0] == family, ids


def test_by_result_must_be_a_boolean(tmp_path):
    a = warn_rows()[0]
    d = kb_dir(tmp_path, f"""\
        source: nccl
        annotations:
          - ids: [{a['id']}]
            category: peer_process_died
            role: symptom
            meaning: Something.
            by_result: sometimes
        """)
    rs = kb.load_rules([d])
    assert any("by_result must be true or false" in p for p in problems_of(rs, "test.yaml"))
