"""The rank a finding blames: the rank that printed its evidence, unless the message names another
(a rule's ``origin:``), and the rank tag a program printed before the line."""
from __future__ import annotations

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _first(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"][0]


def test_a_rank_waiting_for_the_nccl_id_blames_rank_0_that_publishes_it():
    # ProcessGroupNCCL's message, printed by rank 6: rank 0 of the group had not published the id
    d = _first("RuntimeError: [6] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
               "key-value store by key '0', but store->get('0') got error: Socket Timeout\n")
    assert d["id"] == "LD642"
    assert d["ranks"] == [0]


def test_a_printed_rank_tag_names_the_rank_of_the_finding():
    d = _first("[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as "
               "fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.\n")
    assert d["category"] == "hostname_resolution"
    assert d["ranks"] == [8]
