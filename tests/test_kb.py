"""The knowledge base: schema validation, the matcher, and every rule's examples as test cases."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logdoc import kb
from logdoc.events import Event

try:
    import regex
except ImportError:  # pragma: no cover
    regex = None

ROOT = Path(__file__).resolve().parents[1]

# Examples that fail only because the parser does not (yet) produce the event the rule expects.
# Each is reported to the parser's owner; the test turns into a pass as soon as the parser is fixed.
KNOWN_PARSER_GAPS = {
    **{
        (rid, "match", 0): "parser: a line containing 'NCCL version X.Y.Z' mid-text (async exception, "
        "DistBackendError) is classified as nccl.version instead of a torch event"
        for rid in ("LD131", "LD132", "LD133", "LD134", "LD135", "LD136", "LD815")
    },
    ("LD614", "match", 0): "parser: elastic dynamic_rendezvous 'Detected dead node' line yields no event",
    ("LD909", "match", 0): "parser: ProcessGroupGloo 'Unable to resolve hostname to a (local) address' warning "
    "yields no event",
}


@pytest.fixture(scope="module")
def rules() -> kb.RuleSet:
    return kb.load_rules()


def _builtin() -> kb.RuleSet:
    return kb.load_rules()


# ---------------------------------------------------------------------------------------------
# the pipeline used for examples: parser, then the analysis stage when it is there and works

def _analyze(events, files=None):
    from logdoc.analysis import analyze

    result = analyze(events, files=files)
    return list(result.events) + list(result.synthetic)


def _events_for(example, rule_id):
    evs = kb.example_events(example)
    if evs is not None:
        return evs
    from logdoc.pipeline import parse_sources

    res = parse_sources(kb.example_sources(example, rule_id))
    return _analyze(res.events, res.files)


def _example_cases():
    rs = _builtin()
    cases = []
    for rule in rs.active():
        ex = rule.data.get("examples") or {}
        for expect in ("match", "no_match"):
            for i, item in enumerate(ex.get(expect) or []):
                cases.append(pytest.param(rule.id, expect, i, id=f"{rule.id}-{expect}-{i}"))
    return cases


@pytest.mark.parametrize("rule_id,expect,index", _example_cases())
def test_rule_example(rules, rule_id, expect, index):
    """The example matches (or not), at the line it names, in the role it names (kb/examples.py)."""
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    rule = rules.get(rule_id)
    example = rule.data["examples"][expect][index]
    problems = kb.check_example(rules, rule, expect, index, example, lambda src: _events_for(example, rule_id),
                                lambda src: build_report(parse_sources(src), rules))
    if problems and (rule_id, expect, index) in KNOWN_PARSER_GAPS:
        pytest.xfail(KNOWN_PARSER_GAPS[(rule_id, expect, index)])
    assert problems == [], problems
    events = _events_for(example, rule_id)
    for m in [m for m in rules.match(events) if m.rule.id == rule_id]:  # rendering never fails
        out = m.render()
        assert out["id"] == rule_id and out["explanation"] and out["fix"] and out["confirm"]
        assert "{" not in out["title"].replace("{{", ""), out["title"]


# ---------------------------------------------------------------------------------------------
# the built-in knowledge base as a whole

def test_builtin_rules_validate_clean(rules):
    assert [str(p) for p in rules.problems] == []


def test_every_category_has_a_rule(rules):
    have = {r.category for r in rules.active()}
    assert set(kb.CATEGORIES) - have == set()


def test_rule_ids_follow_the_family_scheme(rules):
    family_file = {"1": "socket", "2": "infiniband", "3": "shm", "4": "versions_config", "5": "collectives",
                   "6": "rendezvous", "7": "processes", "8": "cuda", "9": "gloo"}
    for rule in rules:
        assert kb.BUILTIN_ID.match(rule.id), rule.id
        assert Path(rule.file).stem == family_file[rule.id[2]], (rule.id, rule.file)


def test_every_rule_is_complete(rules):
    for rule in rules.active():
        ex = rule.data["examples"]
        assert ex["match"] and ex["no_match"], f"{rule.id} needs match and no_match examples"
        assert rule.data.get("docs"), f"{rule.id} cites no documentation"
        assert rule.fix and rule.confirm and rule.explanation.strip()
        for d in rule.data["docs"]:
            assert d["url"].startswith("https://"), (rule.id, d)


# Root-cause rules written before every root cause had to say when it is NOT the cause, still without one:
# messages that name their own cause outright (a refused setting, a usage error, a release's limit), for which
# no look-alike was found yet. This list may only shrink: give a rule its `not_when` and take its id out;
# never add one (a new rule writes its own).
# LD401 names its own cause: NCCL (2.23.4+) prints it only when a peer's version code, all-gathered at init, differs
# from its own (src/init.cc), and no other cause gives the sentence.
NOT_WHEN_STILL_MISSING = frozenset({"LD401"})


def test_every_root_cause_says_when_it_is_not_the_cause(rules):
    """A diagnosis must teach what would make it wrong: the look-alike and how the log tells them apart."""
    missing = sorted(r.id for r in rules.active() if r.role == "root_cause" and not (r.not_when or []))
    new = [rid for rid in missing if rid not in NOT_WHEN_STILL_MISSING]
    assert new == [], (
        f"root-cause rules without `not_when`: {new}. Add `not_when:` to each: when this signature does NOT "
        "mean this cause (the look-alike, and what in the log tells them apart: another errno, another rank's "
        "earlier error, a version, a setting), naming the other rule's id where one exists (knowledge/README.md)")
    done = sorted(NOT_WHEN_STILL_MISSING - set(missing))
    assert done == [], f"these rules have `not_when` now (or are gone): take them out of NOT_WHEN_STILL_MISSING: {done}"
    assert len(NOT_WHEN_STILL_MISSING) <= 1, "the list only shrinks: lower this ceiling with it"


def test_every_issue_message_is_covered(rules):
    """The messages issue 3 lists each have a rule (by the rule's own examples)."""
    wanted = [
        "message truncated : receiving", "Message truncated : received", "Connection closed by remote peer",
        "Connection reset by peer", "No usable listening interface found", "Bootstrap : no socket interface found",
        "neither AF_INET(2) nor AF_INET6(10)", "remote process exited or there was a network error",
        "[Proxy Service", "unhandled system error", "unhandled cuda error", "internal error", "invalid usage",
        "Duplicate GPU detected", "Multiple Ranks are using the same GPU",
        "Multiple ranks detected using the same GPU", "Error while creating shared memory segment",
        "Unable to allocate shared memory", "ncclMaxSharedMem", "Got completion from peer",
        "ibv_modify_qp failed", "NET/IB : No device found", "ibv_reg_mr failed", "system not yet initialized",
        "NVLS", "out of memory", "illegal memory access", "Timeout(ms)=1)", "Watchdog caught collective",
        "raised the following async exception", "failure detected by watchdog", "Detected mismatch between collectives",
        "The client socket has timed out", "clients joined", "EADDRINUSE", "Failed to recv, got 0 bytes",
        "cannot be retrieved", "exitcode  : -9", "exitcode  : -15", "exitcode  : -6", "KeyError",
        "Connection closed by peer", "Timed out waiting", "Too many open files", "Connection refused",
        "timed out connecting", "no error", "Unable to find address for",
    ]
    corpus = []
    for rule in rules.active():
        for item in rule.data["examples"]["match"]:
            corpus.extend(text for _, text in kb.example_sources(item, rule.id))
    text = "\n".join(corpus)
    missing = [w for w in wanted if w not in text]
    assert missing == []


@pytest.mark.skipif(regex is None, reason="the regex module is not installed")
def test_patterns_behave_the_same_under_re_and_regex(rules):
    for rule in rules.active():
        patterns = list(_patterns(rule.data))
        texts = []
        for expect in ("match", "no_match"):
            for item in rule.data["examples"][expect]:
                for _, t in kb.example_sources(item, rule.id):
                    texts.append(t)
                    texts.extend(t.splitlines())
        for p in patterns:
            a, b = re.compile(p), regex.compile(p)
            assert list(a.groupindex) == list(b.groupindex), (rule.id, p)
            for t in texts:
                ma, mb = a.search(t), b.search(t)
                assert (ma is None) == (mb is None), (rule.id, p, t)
                if ma is not None:
                    assert ma.span() == mb.span() and ma.groupdict() == mb.groupdict(), (rule.id, p, t)


def _patterns(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("pattern", "matches", "not_matches") and isinstance(v, str):
                yield v
            elif k != "examples":
                yield from _patterns(v)
    elif isinstance(node, list):
        for v in node:
            yield from _patterns(v)


def test_matching_is_indexed_by_kind(rules):
    for kind in ("nccl.warn", "torch.exception", "kernel.xid", "no.such_kind"):
        for rule in rules.rules_for(kind):
            assert any(k == kind or (k.endswith("*") and kind.startswith(k[:-1])) for k in rule.kinds)
    assert rules.rules_for("no.such_kind") == []


# ---------------------------------------------------------------------------------------------
# compiled JSON (the browser build)

def test_compiled_json_round_trips(rules):
    data = json.loads(json.dumps(kb.compile_rules(rules)))
    assert data["schema"] == kb.SCHEMA
    again = kb.load_compiled(data)
    assert [str(p) for p in again.problems] == []
    assert [r.id for r in again] == [r.id for r in rules]
    for a, b in zip(again, rules):
        assert a.to_dict() == b.to_dict()
        assert Path(a.file).name == Path(b.file).name and a.line == b.line
    evs = [_ev("nccl.warn", "n1:1:2 [0] misc/socket.cc:58 NCCL WARN socketProgress: Connection closed by remote peer n2<1>")]
    assert [m.rule.id for m in again.match(evs)] == [m.rule.id for m in rules.match(evs)]


def test_kb_imports_and_loads_compiled_without_yaml_regex_rich_typer(rules, tmp_path):
    compiled = tmp_path / "kb.json"
    compiled.write_text(json.dumps(kb.compile_rules(rules)))
    code = textwrap.dedent(f"""
        import sys, json
        for name in ("yaml", "regex", "rich", "typer"):
            sys.modules[name] = None
        from logdoc import kb
        from logdoc.events import Event
        assert kb._yaml is None and kb._regex is None and kb.regex_engine() == "re"
        rs = kb.load_compiled(json.load(open({str(compiled)!r})))
        assert not rs.problems, rs.problems
        ev = Event(kind="nccl.warn", level="WARN", file="x", line=1,
                   text="n:1:1 [0] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4")
        print(sorted(m.rule.id for m in rs.match([ev])))
        assert "rich" not in sys.modules or sys.modules["rich"] is None
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "LD121" in out.stdout


# ---------------------------------------------------------------------------------------------
# user rules: validation with file, line and rule id; overrides; timeouts

GOOD_USER_RULE = """\
  - id: LD101
    category: wrong_network_interface
    severity: error
    role: root_cause
    title: "site rule: interface {env.value} missing"
    match:
      kind: nccl.warn
      pattern: 'no socket interface found'
      with: {kind: nccl.env, fields: {name: NCCL_SOCKET_IFNAME}, as: env}
    explanation: "Use ib0 on this cluster, not {env.value}."
    fix: ["export NCCL_SOCKET_IFNAME=ib0"]
    confirm: ["ip -br addr"]
    examples:
      match: ["x"]
"""


def _write(dirpath: Path, name: str, text: str) -> Path:
    dirpath.mkdir(parents=True, exist_ok=True)
    p = dirpath / name
    p.write_text(text)
    return p


def test_malformed_user_rules_are_reported_with_file_line_and_id(tmp_path):
    d = tmp_path / "rules"
    path = _write(d, "site.yaml", "rules:\n" + GOOD_USER_RULE + textwrap.indent(textwrap.dedent("""\
          - id: ACME101
            category: not_a_category
            severity: error
            role: root_cause
            title: "bad"
            match:
              kind: nccl.warn
              pattern: 'unbalanced (paren'
            explanation: "x"
            fix: ["x"]
            confirm: ["x"]
          - id: ACME102
            category: shm_exhausted
            severity: fatal
            role: root_cause
            title: "also bad"
            colour: red
            match: {kind: nccl.warn, fields: {size: {bigger: 3}}}
            explanation: "{nonexistent_field}"
            fix: ["x"]
            confirm: ["x"]
          - id: ACME103
            category: shm_exhausted
            severity: warning
            role: symptom
            title: "fine"
            match: {kind: nccl.warn, pattern: 'shared memory'}
            explanation: "fine"
            fix: ["x"]
            confirm: ["x"]
            examples: {match: ["shared memory"]}
        """), "  "))
    rs = kb.load_rules(extra_dirs=[d])
    msgs = [str(p) for p in rs.problems]
    lines = path.read_text().splitlines()

    def line_of(needle, after=0):
        for i, l in enumerate(lines[after:], after + 1):
            if needle in l:
                return i
        raise AssertionError(needle)

    cat_line = line_of("not_a_category")
    pat_line = line_of("unbalanced (paren")
    sev_line = line_of("severity: fatal")
    key_line = line_of("colour: red")
    op_line = line_of("bigger")
    assert f"{path}:{cat_line}: rule ACME101: unknown category 'not_a_category'" in msgs
    assert any(m.startswith(f"{path}:{pat_line}: rule ACME101: pattern does not compile") for m in msgs)
    assert any(m.startswith(f"{path}:{sev_line}: rule ACME102: severity must be") for m in msgs)
    assert f"{path}:{key_line}: rule ACME102: unknown key 'colour'" in msgs
    assert any(m.startswith(f"{path}:{op_line}: rule ACME102: unknown operator 'bigger'") for m in msgs)
    # the bad rules are left out, the others load, and the user's LD101 replaces the built-in one
    assert "ACME101" not in rs and "ACME102" not in rs and "ACME103" in rs
    assert rs.get("LD101").origin == "user" and rs.get("LD101").title.startswith("site rule")
    assert rs.get("LD301") is not None and rs.get("LD301").origin == "builtin"


def test_yaml_syntax_error_is_reported_and_other_files_load(tmp_path):
    d = tmp_path / "rules"
    bad = _write(d, "a_bad.yaml", "rules:\n  - id: ACME200\n    title: [unclosed\n")
    _write(d, "b_good.yaml", "rules:\n" + GOOD_USER_RULE)
    rs = kb.load_rules(extra_dirs=[d])
    assert any(str(p).startswith(f"{bad}:") and "YAML error" in str(p) for p in rs.problems)
    assert rs.get("LD101").origin == "user"


def test_duplicate_ids_and_duplicate_keys_are_reported(tmp_path):
    d = tmp_path / "rules"
    _write(d, "a.yaml", "rules:\n" + GOOD_USER_RULE + GOOD_USER_RULE)
    _write(d, "b.yaml", "rules:\n" + GOOD_USER_RULE.replace("    severity: error\n", "    severity: error\n    severity: info\n"))
    rs = kb.load_rules(extra_dirs=[d])
    msgs = [str(p) for p in rs.problems]
    assert any("rule LD101: duplicate id" in m for m in msgs)
    assert any("duplicate key 'severity'" in m for m in msgs)


def test_placeholder_that_can_never_be_filled_is_reported():
    rule, problems = kb.build_rule({
        "id": "LD999", "category": "cuda_oom", "severity": "error", "role": "root_cause",
        "title": "t {xid}", "match": {"kind": "kernel.xid", "pattern": "(?P<what>x)"},
        "explanation": "{what} {xid} {pci} {rank} {nope}", "fix": ["f"], "confirm": ["c"],
        "examples": {"match": ["x"]},
    }, file="r.yaml", line=3)
    assert rule is not None
    assert [p.message for p in problems if "nope" in p.message]
    assert not [p for p in problems if "{what}" in p.message or "{xid}" in p.message or "{rank}" in p.message]


def test_placeholder_of_a_rule_matched_by_template_is_checked_against_its_messages(tmp_path):
    """A rule matched by template alone may name what its catalog messages capture (a PyTorch row's
    placeholders, the fields of the kind it is read as; for an NCCL format, NCCL's fields), not
    anything: a field no message of its templates carries is reported."""
    d = tmp_path / "rules"
    _write(d, "t.yaml", textwrap.dedent("""\
        rules:
          - id: ACME310
            category: collective_timeout_hung_rank
            severity: error
            role: symptom
            title: "Watchdog timeout on rank {rank}"
            match: {template: 'torch:ProcessGroupNCCL:watchdog-caught-collective-operation-timeout-worknccl-seqnum'}
            explanation: "{op_type} {seq} ran {elapsed_ms} ms of {timeout_ms} ms on {pg_desc|the group}; {failed_ranks}; {log.pid}"
            fix: ["x"]
            confirm: ["x"]
            examples: {match: ["[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out."]}
          - id: ACME311
            category: ib_transport_error
            severity: error
            role: root_cause
            title: "IB error on {host}"
            match: {template: nccl.%s}
            explanation: "{code_location} {message} {nranks}"
            fix: ["x"]
            confirm: ["x"]
            examples: {match: ["x"]}
        """ % _nccl_warn_id()))
    rs = kb.load_rules(extra_dirs=[d])
    msgs = [str(p) for p in rs.problems if "ACME31" in str(p)]
    assert [m for m in msgs if "ACME310" in m and "{failed_ranks}" in m], msgs
    assert [m for m in msgs if "ACME311" in m and "{nranks}" in m], msgs
    assert not [m for m in msgs if any(f"{{{n}}}" in m for n in ("op_type", "seq", "elapsed_ms", "timeout_ms", "rank",
                                                                 "code_location", "message", "host", "log.pid"))], msgs
    assert not [m for m in msgs if "pg_desc" in m], msgs


def _nccl_warn_id():
    from logdoc.resources import grammar_text

    for raw in grammar_text("nccl_messages.tsv").splitlines()[1:]:
        tid, levels = raw.split("\t")[:2]
        if levels == "WARN":
            return tid.split(".", 1)[1]


@pytest.mark.skipif(regex is None, reason="the regex module is not installed")
def test_pathological_user_regex_times_out_and_is_disabled(tmp_path, rules):
    d = tmp_path / "rules"
    _write(d, "slow.yaml", textwrap.dedent("""\
        rules:
          - id: ACME300
            category: cuda_error_other
            severity: error
            role: root_cause
            title: "slow"
            match: {kind: nccl.warn, pattern: '(a|aa)+$'}
            explanation: "x"
            fix: ["x"]
            confirm: ["x"]
            examples: {match: ["aaaa"]}
        """))
    rs = kb.load_rules(extra_dirs=[d])
    assert not rs.errors
    slow = _ev("nccl.warn", "a" * 60 + "!")
    other = _ev("nccl.warn", "n1:1:2 [0] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4", line=2)
    ids = [m.rule.id for m in rs.match([slow, other, slow])]
    assert "LD121" in ids and "ACME300" not in ids
    probs = [p for p in rs.run_problems if p.rule == "ACME300"]
    assert len(probs) == 1 and "disabled for this run" in probs[0].message
    # the next run starts afresh
    assert [m.rule.id for m in rs.match([_ev("nccl.warn", "aaaa")])] == ["ACME300"]


def test_tombstones_never_match(tmp_path):
    d = tmp_path / "rules"
    _write(d, "old.yaml", textwrap.dedent("""\
        rules:
          - id: LD120
            retired: "replaced by a better rule"
            title: "old truncation rule"
          - id: ACME400
            retired: "x"
            match: {kind: nccl.warn}
        """))
    rs = kb.load_rules(extra_dirs=[d])
    assert rs.get("LD120").retired == "replaced by a better rule"
    assert "LD120" not in [r.id for r in rs.active()]
    ev = _ev("nccl.warn", "n:1:1 [0] net_socket.cc:1 NCCL WARN NET/Socket : message truncated : receiving 8 bytes instead of 4")
    assert "LD120" not in [m.rule.id for m in rs.match([ev])]
    assert any(p.rule == "ACME400" and "must not have 'match'" in p.message for p in rs.problems)


# ---------------------------------------------------------------------------------------------
# the matcher's pieces

def _ev(kind, text="", line=1, file="r0.log", rank=None, host=None, pid=None, **fields):
    return Event(kind=kind, level="INFO", file=file, line=line, text=text, rank=rank, host=host, pid=pid,
                 fields=fields)


def _rule(match, explanation="x", **extra):
    data = {"id": "LD998", "category": "cuda_oom", "severity": "error", "role": "root_cause", "title": "t",
            "match": match, "explanation": explanation, "fix": ["f"], "confirm": ["c"],
            "examples": {"match": ["x"]}, **extra}
    rule, problems = kb.build_rule(data)
    assert rule is not None, [str(p) for p in problems]
    rs = kb.RuleSet()
    rs.add(rule)
    return rs


def test_field_operators():
    rs = _rule({"kind": "torch.watchdog_timeout", "fields": {"timeout_ms": {"lt": 60000}, "op_type": {"in": ["ALLREDUCE", "BROADCAST"]},
                                                             "seq": {"exists": True}, "pg_desc": {"ne": "x"}}})
    assert rs.match([_ev("torch.watchdog_timeout", timeout_ms=1, op_type="ALLREDUCE", seq=3)])
    assert rs.match([_ev("torch.watchdog_timeout", timeout_ms="1", op_type="BROADCAST", seq=3)])  # "1" == 1
    assert not rs.match([_ev("torch.watchdog_timeout", timeout_ms=600000, op_type="ALLREDUCE", seq=3)])
    assert not rs.match([_ev("torch.watchdog_timeout", timeout_ms=1, op_type="SEND", seq=3)])
    assert not rs.match([_ev("torch.watchdog_timeout", timeout_ms=1, op_type="ALLREDUCE")])


def test_any_len_and_negative_operators_and_captures():
    rs = _rule({"kind": "torchrun.child_failed",
                "fields": {"failures": {"any": {"exitcode": -9}, "len": {"ge": 1}}, "script": {"not_matches": "^test_"}}},
               explanation="rank {failures.rank} on {failures.host} ({failures.nothing|?})")
    ev = _ev("torchrun.child_failed", failures=[{"rank": 0, "exitcode": -15, "host": "a"},
                                                {"rank": 5, "exitcode": -9, "host": "node3"}])
    (m,) = rs.match([ev])
    assert m.render()["explanation"] == "rank 5 on node3 (?)"
    assert not rs.match([_ev("torchrun.child_failed", failures=[{"rank": 0, "exitcode": 1}])])
    assert not rs.match([_ev("torchrun.child_failed", failures=[{"rank": 0, "exitcode": -9}], script="test_x.py")])


def test_with_and_without_scopes():
    rs = _rule({"kind": "nccl.warn", "pattern": "no socket interface",
                "with": {"kind": "nccl.env", "fields": {"name": "NCCL_SOCKET_IFNAME"}, "as": "env"},
                "without": {"kind": "cuda.oom", "scope": "job"}},
               explanation="{env.value} at {env.where} / {where}")
    warn = _ev("nccl.warn", "NCCL WARN Bootstrap : no socket interface found", line=5, host="h1", pid=7)
    env_same = _ev("nccl.env", line=1, host="h1", pid=7, name="NCCL_SOCKET_IFNAME", value="eth9")
    env_other = _ev("nccl.env", line=1, file="r1.log", host="h2", pid=8, name="NCCL_SOCKET_IFNAME", value="eth0")
    (m,) = rs.match([env_same, warn])
    assert m.render()["explanation"] == "eth9 at r0.log:1 / r0.log:5"
    assert [e["line"] for e in m.render()["evidence"]] == [5, 1]
    assert not rs.match([env_other, warn])  # another process: scope rank
    assert not rs.match([env_same, warn, _ev("cuda.oom", file="r3.log")])  # without, whole job


def test_job_wide_clause_tests_each_event_once_and_picks_the_nearest(monkeypatch):
    from logdoc.kb import rule as rule_mod

    rs = _rule({"kind": "store.connect_failed", "pattern": "failed to connect",
                "with": {"kind": "torch.exception", "pattern": "timed out", "scope": "job", "as": "exc"},
                "without": {"kind": "cuda.oom", "scope": "job"}},
               explanation="{exc.line}")
    retries = [_ev("store.connect_failed", "failed to connect to h:29500", line=10 * i, file=f"r{i % 3}.log") for i in range(40)]
    excs = [_ev("torch.exception", "RuntimeError: timed out", line=10 * i + 3, file=f"r{i % 3}.log") for i in range(40)]
    excs += [_ev("torch.exception", "ValueError: other", line=10 * i + 4) for i in range(40)]
    calls = []
    real = rule_mod._Clause.accepts
    monkeypatch.setattr(rule_mod._Clause, "accepts", lambda self, ev: calls.append(ev) or real(self, ev))
    matches = rs.match([*retries, *excs])
    assert len(matches) == 40
    # the nearest accepted event of the same file, whatever the order the clause read them in
    assert all(m.render()["explanation"] == str(m.event.line + 3) for m in matches)
    assert len(calls) == len(excs)  # each exception once (the oom clause has no event to test), not 40 times
    assert not rs.match([*retries, *excs, _ev("cuda.oom")])


def test_optional_with_clause():
    rs = _rule({"kind": "nccl.info", "pattern": "No device found",
                "with": {"kind": "nccl.net_socket", "as": "sock", "optional": True}},
               explanation="over {sock.interfaces|sockets}")
    alone = _ev("nccl.info", "NET/IB : No device found.")
    assert rs.match([alone])[0].render()["explanation"] == "over sockets"
    sock = _ev("nccl.net_socket", line=2, interfaces=[{"name": "eth0", "addr": "10.0.0.1"}])
    assert rs.match([alone, sock])[0].render()["explanation"] == "over eth0 (10.0.0.1)"


def test_render_never_crashes():
    vals = {"a": 1, "l": [1, 2], "d": {"x": [1]}, "empty": "", "none": None}
    assert kb.render_template("{a} {l} {d} {{lit}}", vals) == "1 1, 2 x: 1 {lit}"
    assert kb.render_template("{missing} {empty|dflt} {none}", vals) == "(missing not in log) dflt (none not in log)"
    assert kb.render_template("{a.b.c} {", vals) == "(a.b.c not in log) {"


def test_named_groups_feed_fields_conditions():
    rs = _rule({"kind": "nccl.warn", "pattern": r"status=(?P<status>\d+)", "fields": {"status": {"ge": 10}}},
               explanation="status {status}")
    assert rs.match([_ev("nccl.warn", "status=12")])[0].render()["explanation"] == "status 12"
    assert not rs.match([_ev("nccl.warn", "status=5")])


def test_version_ranges():
    assert kb.version_in_range("2.21.5", ">=2.12.10,<2.27")
    assert not kb.version_in_range("2.27.3", ">=2.12.10,<2.27")
    assert kb.version_in_range("2.28.9", "==2.28")
    assert kb.version_in_range("2.10.0a0+b558c98", ">=2.7")
    assert kb.version_in_range("garbage", ">=2.7")


# ---------------------------------------------------------------------------------------------
# examples say where (kb/examples.py)

def _one_rule(example, role="root_cause"):
    rule, probs = kb.build_rule({
        "id": "ACME100", "category": "shm_exhausted", "severity": "error", "role": role,
        "title": "shm", "match": {"kind": "nccl.warn", "pattern": "Error while creating shared memory segment"},
        "explanation": "e", "fix": ["f"], "confirm": ["c"], "examples": {"match": [example]}}, origin="user")
    rs = kb.RuleSet()
    if rule is not None:
        rs.add(rule)
    return rs, rule, probs


_SHM_LOG = ("n1:55:90 [2] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "n1:55:90 [2] misc/shmutils.cc:87 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Xa (size 96)\n")


def _check(rs, rule, example):
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    return kb.check_example(rs, rule, "match", 0, example, lambda src: parse_sources(src).events,
                            lambda src: build_report(parse_sources(src), rs))


def test_a_multi_line_example_must_say_where():
    _, _, probs = _one_rule(_SHM_LOG)
    assert any("says where" in p.message for p in probs), probs
    _, _, probs = _one_rule({"log": _SHM_LOG, "where": "Error while creating"})
    assert probs == []


def test_an_example_fails_when_the_evidence_is_another_line():
    rs, rule, _ = _one_rule({"log": _SHM_LOG, "where": "NCCL version 2.21.5"})
    problems = _check(rs, rule, rule.data["examples"]["match"][0])
    assert len(problems) == 1 and "not at the line with 'NCCL version 2.21.5'" in problems[0], problems
    rs, rule, _ = _one_rule({"log": _SHM_LOG, "where": "shared memory segment /dev/shm/nccl-Xa"})
    assert _check(rs, rule, rule.data["examples"]["match"][0]) == []


def test_an_example_fails_when_the_finding_plays_another_role():
    rs, rule, _ = _one_rule({"log": _SHM_LOG, "where": "Error while creating", "role": "context"})
    problems = _check(rs, rule, rule.data["examples"]["match"][0])
    assert len(problems) == 1 and "plays root_cause in the report, not context" in problems[0], problems
    rs, rule, _ = _one_rule("n1:55:90 [2] misc/shmutils.cc:87 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Xa (size 96)")
    assert _check(rs, rule, rule.data["examples"]["match"][0]) == []   # a one-line example: its line, the rule's role


def test_where_and_role_are_validated():
    _, _, probs = _one_rule({"log": _SHM_LOG, "where": "", "role": "villain"})
    msgs = " ".join(p.message for p in probs)
    assert "where is a piece" in msgs and "role must be one of" in msgs


def test_a_family_goes_on_with_four_digit_ids():
    assert kb.BUILTIN_ID.match("LD2000") and kb.BUILTIN_ID.match("LD299")
    assert not kb.BUILTIN_ID.match("LD20000") and not kb.BUILTIN_ID.match("LD0999")
    from logdoc.kb.schema import id_key
    assert sorted(["LD2000", "LD999", "LD101", "LD1000"], key=id_key) == ["LD101", "LD999", "LD1000", "LD2000"]
    data = {"id": "LD2001", "category": "cuda_oom", "severity": "error", "role": "root_cause", "title": "t",
            "match": {"kind": "nccl.warn"}, "explanation": "x", "fix": ["f"], "confirm": ["c"],
            "examples": {"match": ["x"]}}
    rule, problems = kb.build_rule(data)
    assert rule is not None and rule.family == kb.FAMILIES["2"], [str(p) for p in problems]
    _, problems = kb.build_rule(dict(data, id="LD20011"))
    assert any("bad id" in str(p) for p in problems)
