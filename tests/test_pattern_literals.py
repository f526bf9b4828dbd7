"""kb.patterns.required_literals: the texts one of which every match of a rule's pattern holds. A
rule's search first asks whether the event's text holds one (a substring test); it must never
turn away a text the pattern matches."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from logdoc.kb.patterns import _Pattern, required_literals
from logdoc.kb.examples import example_sources

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("source, want", [
    ("Connection reset by peer", ("Connection reset by peer",)),
    ("invalid usage|ncclInvalidUsage", ("invalid usage", "ncclInvalidUsage")),
    (r"x?(?P<n>\d+) bytes instead of (?P<m>\d+)", (" bytes instead of ",)),
    (r"(?:ab)+cdef", ("cdef",)),
    (r"(?:abcdef)+cd", ("abcdef",)),
    (r"(?:abc)*de", ("de",)),
    (r"(?i)Connection Reset", ("connection reset",)),  # (looked for in the lower-cased text)
    ("(?i)\u212a", None),  # the Kelvin sign folds to an ASCII k: no ASCII literal
    (r"(?i:connection reset) by peer", (" by peer",)),
    (r"\d+|abc", None),                 # a branch without a literal: nothing is required
    (r"[Ee]rror", ("rror",)),
    (r"\w+", None),
])
def test_required_literals(source, want):
    assert required_literals(source) == want


def _rule_patterns():
    from logdoc.api import _rules

    rs = _rules()
    out = {}
    for rule in rs.active():
        for p in [rule._pattern] + [c.pattern for c in (*rule._with, *rule._without)]:
            if p is not None:
                out[p.source] = p
    return rs, out


def _texts(rs):
    texts = set()
    for rule in rs.active():
        for ex in (rule.data.get("examples") or {}).get("match") or ():
            for _name, text in example_sources(ex, rule.id):
                texts.update(text.splitlines())
                texts.add(text)
    from logdoc.read.prefilter import candidate

    for p in sorted((ROOT / "samples").rglob("*.log"))[:200]:
        for t in p.read_text(errors="replace").splitlines():
            if candidate(t):
                texts.add(t)
    return sorted(texts)


def test_every_rule_pattern_finds_what_it_found():
    rs, pats = _rule_patterns()
    texts = _texts(rs)
    assert len(pats) > 50 and len(texts) > 500
    known = sum(1 for p in pats.values() if p.needs)
    assert known > len(pats) // 2  # most patterns have a literal: the test is worth having
    hits = 0
    for src, p in pats.items():
        std = re.compile(src)
        for t in texts:
            a = std.search(t)
            b = p.search(t)
            assert (a is None) == (b is None), (src, t)
            hits += a is not None
    assert hits > 100


def test_case_folding_patterns():
    p = _Pattern(r"(?i)address already in use|\bEADDRINUSE\b", None)
    assert p.fold and p.needs == ("address already in use", "eaddrinuse")
    assert p.search("OSError: [Errno 98] Address Already In Use") is not None
    assert p.search("eaddrinuse!") is not None and p.search("nothing") is None
    k = _Pattern(r"(?i)k", None)
    assert k.search("\u212a") is not None  # a text beyond ASCII is searched: re folds the Kelvin sign to k


def test_a_pattern_without_the_literal_is_not_searched():
    p = _Pattern(r"Got completion from peer (?P<peer>\S+)", None)
    assert p.needs == ("Got completion from peer ",)
    assert p.search("nothing here") is None
    assert p.search("x Got completion from peer 10.0.0.1:4 y").group("peer") == "10.0.0.1:4"
