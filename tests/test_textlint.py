"""The rule-text template language and the lint that renders every rule's texts."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.events import Event
from logdoc.textlint import check_pieces, lint_static, lint_texts, sample_dirs


def problems(template: str, values: dict, key: str = "explanation") -> list[str]:
    return check_pieces(key, kb.render_pieces(template, values))


# ------------------------------------------------------------------------------------------------
# the conditional construct

@pytest.mark.parametrize("template,values,expected", [
    ("memory{bytes?( ({} bytes))}", {"bytes": 16777216}, "memory (16777216 bytes)"),
    ("memory{bytes?( ({} bytes))}", {}, "memory"),
    ("memory{bytes?( ({} bytes))}", {"bytes": ""}, "memory"),
    ("{rank?(rank {})|a rank} died", {}, "a rank died"),
    ("{rank?(rank {})|(rank of {host|this host})} died", {"host": "n1"}, "rank of n1 died"),
    ("GPU{total?( (capacity {}{free?(, free {})}))}", {"total": "80 GiB", "free": "1 GiB"}, "GPU (capacity 80 GiB, free 1 GiB)"),
    ("GPU{total?( (capacity {}{free?(, free {})}))}", {"total": "80 GiB"}, "GPU (capacity 80 GiB)"),
    ("{detail?({}. )}Ranks wait", {"detail": "It stopped."}, "It stopped. Ranks wait"),
    ("{detail?({}. )}Ranks wait", {"detail": "it stopped"}, "it stopped. Ranks wait"),
    ("{{lit}} ${HOME} {1,2} {", {}, "{lit} $(HOME not in log) {1,2} {"),
])
def test_conditional_text(template, values, expected):
    assert kb.render_template(template, values) == expected


def test_unclosed_conditional_is_a_validation_error():
    with pytest.raises(kb.TemplateError):
        kb.parse_template("{a?(oops}")
    rule = {"id": "ACME001", "category": "peer_process_died", "severity": "error", "role": "root_cause",
            "title": "x{a?(oops}", "match": {"kind": "nccl.warn"}, "explanation": "e", "fix": ["f"],
            "confirm": ["c"], "examples": {"match": ["x"]}}
    built, probs = kb.build_rule(rule, origin="user")
    assert built is None and any("bad template" in p.message for p in probs)
    assert kb.render_template("x{a?(oops}", {}) == "x{a?(oops}"  # rendering never raises


# ------------------------------------------------------------------------------------------------
# each kind of broken text is caught

def test_lint_catches_question_mark_not_in_log_and_empty_placeholders_in_titles():
    assert any("'?'" in p for p in problems("Rank {rank|?} died", {}, "title"))
    assert any("not in log" in p for p in problems("{exc_type}: {exc_message}", {}, "title"))
    assert any("printed nothing" in p for p in problems("closed by peer {peer|}", {}, "title"))
    assert problems("closed by the peer{peer?( {})}", {}, "title") == []
    assert problems("closed by the peer{peer?( {})}", {"peer": "10.0.0.1"}, "title") == []


def test_lint_catches_doubled_values_and_glued_parts():
    old = "CUDA out of memory on rank {rank|?}{tried| (tried to allocate }{tried|}{tried|)}"
    got = problems(old, {"tried": "1024.00 MiB"}, "title")
    assert any("printed twice" in p for p in got) and any("glued" in p for p in got)
    assert any("glued" in p for p in problems("the same GPU{bus|}", {"bus": "1b000"}, "title"))
    assert any("glued" in p for p in problems("group {pg_desc|}{pg_id|}", {"pg_desc": "mesh_pp", "pg_id": 1}))
    assert problems("timeout {t}s", {"t": 30}) == []  # a number and its unit
    assert problems("The `[rank{rank}]:` prefix", {"rank": 3}) == []  # inside code


def test_lint_catches_a_missing_full_stop_and_a_doubled_one():
    got = problems("{detail|} Ranks {ranks} were waiting", {"detail": "rank 3 never enqueued 183", "ranks": "0, 1"})
    assert any("no full stop" in p for p in got)
    assert any("doubled full stop" in p for p in problems("{a}..", {"a": "x"}))
    assert any("doubled full stop" in p for p in problems("{a}.. Then", {"a": "x"}))
    assert problems('"{msg}" ({w}).', {"msg": "supports 0..3", "w": "init"}) == []  # a range in a quoted message


def test_placeholders_take_the_events_fields_before_its_log_attributes():
    rule, probs = kb.build_rule({
        "id": "ACME002", "category": "peer_process_died", "severity": "info", "role": "symptom",
        "title": "stopped worker {pid} (agent {log.pid})", "match": {"kind": "torchrun.sigterm"},
        "explanation": "e", "fix": ["f"], "confirm": ["c"], "examples": {"match": ["x"]}}, origin="user")
    assert rule is not None, probs
    ev = Event(kind="torchrun.sigterm", level="WARNING", file="a.log", line=1, text="Sending process 91402",
               pid=91383, fields={"pid": 91402, "signal": "SIGTERM"})
    m = kb.Match(rule=rule, event=ev)
    assert m.render()["title"] == "stopped worker 91402 (agent 91383)"


def test_a_pattern_group_that_did_not_match_is_absent_not_the_events_attribute():
    rule, probs = kb.build_rule({
        "id": "ACME003", "category": "shm_exhausted", "severity": "error", "role": "root_cause",
        "title": "could not size{file?( {})}", "match": {"kind": "nccl.warn",
                                                          "pattern": "extend (?P<file>\\S+)|Unable to allocate"},
        "explanation": "e", "fix": ["f"], "confirm": ["c"], "examples": {"match": ["x"]}}, origin="user")
    assert rule is not None, probs
    ev = Event(kind="nccl.warn", level="WARN", file="/logs/rank0.log", line=3, text="Unable to allocate shared memory")
    m = rule.match_event(ev, kb._Job([ev]))
    assert m is not None and m.render()["title"] == "could not size"


def test_lint_rejects_a_plural_hedge_in_rule_text():
    rs = kb.RuleSet()
    rule, probs = kb.build_rule({
        "id": "ACME004", "category": "peer_process_died", "severity": "error", "role": "root_cause",
        "title": "A rank died", "match": {"kind": "torch.message", "pattern": "died"},
        "explanation": "Rank(s) {rank} stopped.", "fix": ["Look at the key(s) it waited for."], "confirm": ["c"],
        "examples": {"match": ["x"]}}, origin="user")
    assert rule is not None, probs
    rs.add(rule)
    problems = lint_static(rs)
    assert any("explanation: 'Rank(s)'" in p and "Rank{s}" in p for p in problems), problems
    assert any("fix: 'key(s)'" in p for p in problems), problems


# ------------------------------------------------------------------------------------------------
# the knowledge base passes

def test_knowledge_base_titles_never_fall_back_to_question_marks():
    assert lint_static(kb.load_rules()) == []


def test_every_rule_renders_clean_against_its_examples_and_the_samples():
    rules = kb.load_rules()
    assert lint_texts(rules, samples=sample_dirs()) == []
