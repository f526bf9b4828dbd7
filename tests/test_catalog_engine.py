"""The one catalog engine (logdoc/classify/catalog.py): its order (specificity, the dialect's tier,
the table's order), its index, and, for the NCCL front-end, the same choice as the two lists it
replaced (formats filed under a first word, then those starting with a conversion). The PyTorch
front-end is held to its full-table scan by tests/test_torchlines.py
(test_token_index_picks_what_the_full_table_scan_picks); `python tools/catalog_choices.py` writes
every reading of both catalogs on the samples and field cases, to compare two versions whole."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from logdoc.classify.catalog import AnchorIndex
from logdoc.classify.formats import BoundedPattern, printf_has_text
from logdoc.classify.formats import printf_lead_word as lead_word
from logdoc.templates import nccl_catalog

from nccl_render import render_message

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class T:
    id: str
    pattern: str
    anchor: str
    specificity: int
    key: str | None = None
    tier: int = 0

    @property
    def rx(self) -> BoundedPattern:
        return BoundedPattern(self.pattern)


def _index(rows):
    return AnchorIndex(rows, key=lambda t: t.key, tier=lambda t: t.tier)


def test_most_specific_first_then_tier_then_table_order():
    rows = [T("loose", r"a .*", "a", 1), T("tight", r"a b .*", "a b", 3), T("tie-row-1", r"a b c", "c", 3, tier=1),
            T("tie-row-2", r"a b c", "b", 3, tier=1)]
    idx = _index(rows)
    assert [t.id for t in idx.candidates(())] == ["tight", "tie-row-1", "tie-row-2", "loose"]
    assert [t.id for t, _ in idx.matches("a b c", ())] == ["tight", "tie-row-1", "tie-row-2", "loose"]
    assert idx.first("a x", ())[0].id == "loose"
    assert idx.first("b", ()) is None


def test_a_filed_template_is_tried_only_for_its_key_and_the_anchor_is_required():
    rows = [T("net", r"NET/IB : .*", "NET/IB", 8, key="NET/IB"), T("any", r".* failed", "failed", 6),
            T("sock", r"NET/Socket : .* failed", "NET/Socket", 12, key="NET/Socket")]
    idx = _index(rows)
    assert [t.id for t in idx.candidates(("NET/IB",))] == ["net", "any"]
    assert [t.id for t in idx.candidates({"NET/IB", "NET/Socket", "x"})] == ["sock", "net", "any"]
    assert [t.id for t in idx.candidates(("other",))] == ["any"]
    assert idx.first("NET/Socket : connect failed", ("NET/Socket",))[0].id == "sock"
    assert idx.first("NET/Socket : connect failed", ("NET/IB",))[0].id == "any"  # the key decides
    assert idx.first("NET/IB : x fail", ("NET/IB",))[0].id == "net"
    assert idx.first("NET/IB : x failed", ("NET/IB",))[0].id == "net"
    # a pattern that would match is not tried without its anchor in the text
    loose = _index([T("needs", r".*", "zzz", 5)])
    assert loose.first("anything", ()) is None and loose.first("a zzz", ())[0].id == "needs"


def _two_lists(cat):
    """The NCCL search before the engine: the formats of the message's first word, most specific
    first, then those starting with a conversion, taken only when more specific."""
    by_word: dict[str, list] = {}
    generic: list = []
    for t in sorted(cat.templates.values(), key=lambda t: -t.specificity):
        if not printf_has_text(t.format):
            continue  # a format that is all conversions (`%s`) is offered by neither
        key = lead_word(t.format)
        (by_word.setdefault(key, []) if key else generic).append(t)

    def search(msg):
        best = None
        for group in (by_word.get(msg.split(" ", 1)[0], ()), generic):
            for t in group:
                if best is not None and t.specificity <= best[0].specificity:
                    break
                if t.anchor and t.anchor not in msg:
                    continue
                m = t.rx.match(msg)
                if m is not None:
                    best = (t, m.groups())
                    break
        return best
    return search


def test_nccl_front_end_chooses_what_the_two_lists_chose():
    cat = nccl_catalog()
    msgs = []
    for t in cat.templates.values():
        m = render_message(t.format)
        msgs.append(m)
        first, _, rest = m.partition(" ")
        if rest:
            msgs.append(rest)  # its first word lost: the unfiled formats decide
    for p in sorted((ROOT / "samples").glob("*/*.log")):
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            h = re.search(r"NCCL (?:WARN|INFO) ", line)
            if h:
                msgs.append(line[h.end():])
    before = _two_lists(cat)
    checked = 0
    for msg in msgs:
        msg = msg.rstrip()
        want = before(msg)
        got = cat._search(msg)
        assert (got and (got[0].id, got[1])) == (want and (want[0].id, want[1])), msg
        checked += 1
    assert checked > 4000
