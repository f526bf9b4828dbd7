"""A failed connection to an address on Docker's default bridge (172.17.0.0/16) is the containers' network
mode (LD108), ahead of the generic unreachable peer (LD112), on every program's wording of the connect."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _ids(text: str) -> list[str]:
    return [d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]]


@pytest.mark.parametrize("line", [
    "node2:5:5 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<35541> failed : Connection timed out",
    "node2:5:5 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<35541> failed : No route to host",
])
def test_a_failed_connect_to_the_default_bridge_is_the_container_network(line):
    assert _ids("node2:5:5 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>\n" + line + "\n")[0] == "LD108"


def test_a_store_connect_retry_to_the_bridge_is_read_the_same_way():
    # a retry warning (the client tries again): a warning card, beside the bridge address NCCL bootstrapped on
    ids = _ids("[W socket.cpp:601] [c10d] The client socket has failed to connect to [172.17.0.2]:29500 "
               "(errno: 110 - Connection timed out).\n")
    assert ids[:1] == ["LD108"]


def test_another_private_range_stays_an_unreachable_peer():
    ids = _ids("node2:5:5 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.18.0.2<35541> failed : "
               "Connection timed out\n")
    assert ids[0] == "LD112" and "LD108" not in ids


def test_one_host_is_not_a_bridge_problem():
    ids = _ids("c1:77:77 [0] NCCL INFO comm 0x55d0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
               "c1:77:77 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<35541> failed : "
               "Connection timed out\n")
    assert "LD108" not in ids
