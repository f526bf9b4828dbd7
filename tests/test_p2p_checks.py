"""The peer-to-peer checks of a node, in the words of the programs that make them: cuda-samples'
simpleP2P reading back wrong data (logdoc/classify/p2ptest.py) and RCCL's start-up warnings about the
host's IOMMU setting (knowledge/cuda.yaml LD890, LD891)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.p2ptest import classify_p2p_test
from logdoc.pipeline import parse_sources

_SIMPLE_P2P = """[./simpleP2P] - Starting...
Checking for multiple GPUs...
CUDA-capable device count: 2

Checking GPU(s) for support of peer to peer memory access...
> Peer access from NVIDIA RTX A6000 (GPU0) -> NVIDIA RTX A6000 (GPU1) : Yes
> Peer access from NVIDIA RTX A6000 (GPU1) -> NVIDIA RTX A6000 (GPU0) : Yes
Enabling peer access between GPU0 and GPU1...
Allocating buffers (64MB on GPU0, GPU1 and CPU Host)...
Creating event handles...
cudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: 24.21GB/s
Preparing host buffer and memcpy to GPU0...
Run kernel on GPU1, taking source data from GPU0 and writing to GPU1...
Run kernel on GPU0, taking source data from GPU1 and writing to GPU0...
Copy data back to host from GPU0 and verify results...
Verification error @ element 1: val = 0.000000, ref = 4.000000
Verification error @ element 2: val = 0.000000, ref = 8.000000
Verification error @ element 3: val = nan, ref = 12.000000
Disabling peer access...
Shutting down...
Test failed!
"""


def _report(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())


@pytest.mark.parametrize("line, want", [
    ("Verification error @ element 1: val = 0.000000, ref = 4.000000", (1, "0.000000", "4.000000")),
    ("Verification error @ element 0: val = nan, ref = 0.000000", (0, "nan", "0.000000")),
    ("Verification error @ element 12: val = -inf, ref = 48.000000", (12, "-inf", "48.000000")),
])
def test_simplep2p_lines_are_read(line, want):
    p = classify_p2p_test(line)
    assert p is not None and p.kind == "p2ptest.verify_error"
    assert (p.fields["element"], p.fields["value"], p.fields["expected"]) == want


@pytest.mark.parametrize("line", [
    "Copy data back to host from GPU0 and verify results...",
    "Verification error: output mismatch in layer 3",
    "verification error @ element 1: val = 0.0, ref = 4.0",  # not the sample's words
    "Test failed!",
])
def test_other_lines_are_not(line):
    assert classify_p2p_test(line) is None


@pytest.mark.parametrize("wrap", [
    lambda t: t,
    lambda t: "".join("> " + line + "\n" for line in t.splitlines()),        # quoted in a forum post
    lambda t: "".join("[1,0]<stdout>:" + line + "\n" for line in t.splitlines()),  # under mpirun --tag-output
])
def test_a_failed_simplep2p_names_the_peer_path(wrap):
    r = _report(wrap(_SIMPLE_P2P))
    first = r["diagnoses"][0]
    assert (first["id"], first["category"]) == ("LD890", "p2p_acs_iommu_hang")


def test_a_passing_simplep2p_says_nothing():
    text = _SIMPLE_P2P.replace("Test failed!", "Test passed").split("Verification error")[0] + "Disabling peer access...\nTest passed\n"
    assert _report(text)["diagnoses"] == []


_RCCL = "node1:402:402 [0] /opt/rccl/build/hipify/src/init.cc:179 NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to system instablity or hang!\n"


def test_rccl_iommu_warning_is_the_lead_of_a_silent_hang():
    first = _report(_RCCL)["diagnoses"][0]
    assert (first["id"], first["category"], first["severity"]) == ("LD891", "p2p_acs_iommu_hang", "warning")


def test_rccl_iommu_warning_gives_way_to_an_error():
    text = _RCCL + ("node1:402:410 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43651> "
                    "failed : Software caused connection abort\n")
    r = _report(text)
    assert r["diagnoses"][0]["id"] != "LD891"
    assert r["diagnoses"][0]["severity"] == "error"


# ---- p2pBandwidthLatencyTest's peer-access lines (p2ptest.no_peer_access, LD862) ----

P2P_BANDWIDTH = """\
[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA GeForce RTX 4090, pciBusID: 1, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA GeForce RTX 4090, pciBusID: 41, pciDeviceID: 0, pciDomainID:0
Device=0 CANNOT Access Peer Device=1
Device=1 CANNOT Access Peer Device=0

***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.
So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.

P2P Connectivity Matrix
     D\\D     0     1
     0\t     1     0
     1\t     0     1
"""


def test_no_peer_access_lines_are_read():
    from logdoc.classify.p2ptest import classify_p2p_test
    p = classify_p2p_test("Device=3 CANNOT Access Peer Device=12")
    assert p is not None and p.kind == "p2ptest.no_peer_access" and p.fields == {"device": 3, "peer": 12}
    for line in ("Device=0 CAN Access Peer Device=1", "Device: 0, NVIDIA GeForce RTX 4090, pciBusID: 1, pciDeviceID: 0, pciDomainID:0",
                 "Device=0 CANNOT Access Peer Device=1 (see above)"):
        assert classify_p2p_test(line) is None, line


@pytest.mark.parametrize("text", [
    P2P_BANDWIDTH,
    "```\n$ ./p2pBandwidthLatencyTest\n" + P2P_BANDWIDTH + "```\n",            # a markdown code block
    "".join("gpu-node-3: " + ln + "\n" for ln in P2P_BANDWIDTH.splitlines()),   # pdsh's host prefix
])
def test_the_test_without_peer_access_is_a_warning(text):
    from logdoc.api import explain
    d = explain(text)["diagnoses"]
    assert d and d[0]["id"] == "LD862" and d[0]["severity"] == "warning"
    assert not [x for x in d if x["severity"] == "error"]


def test_pairs_with_peer_access_say_nothing():
    from logdoc.api import explain
    text = P2P_BANDWIDTH.replace("CANNOT", "CAN")
    assert not explain(text)["diagnoses"]
