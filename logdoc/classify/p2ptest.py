"""The peer-to-peer copy test people run on a node, read where no NCCL or PyTorch header is.

cuda-samples' ``simpleP2P`` (Samples/0_Introduction/simpleP2P/simpleP2P.cu, and its HIP and SYCL ports,
which keep the words) enables peer access between two GPUs, lets a kernel on each GPU read the other's
buffer, copies the result back to the host and compares it with what it must be. Each wrong element
is printed, up to a dozen: ``Verification error @ element 1: val = 0.000000, ref = 4.000000``, then
``Test failed!``. The copy and the kernels themselves returned no error: the data was lost or changed
on the way between the GPUs.

Each such line becomes ``p2ptest.verify_error`` with ``element``, ``value`` and ``expected`` (the
printed numbers, as text: ``nan`` is common).

cuda-samples' ``p2pBandwidthLatencyTest`` (Samples/5_Domain_Specific/p2pBandwidthLatencyTest, its checkP2Paccess)
first asks CUDA whether each GPU can reach each other one peer-to-peer (``cudaDeviceCanAccessPeer``) and prints
``Device=0 CANNOT Access Peer Device=1`` for each pair that cannot (``CAN`` for the others); such a line becomes
``p2ptest.no_peer_access`` with ``device`` and ``peer``. What it means is the knowledge base's
(knowledge/cuda.yaml); this module only finds it.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

# printf("Verification error @ element %i: val = %f, ref = %f\n", ...) (%zu / %d in some ports)
_VERIFY = lazy_re(r"^Verification error @ element (?P<element>\d{1,12}): val = (?P<value>[-+]?(?:[\d.]{1,40}(?:e[-+]?\d+)?|nan|-?inf)),"
                  r" ref = (?P<expected>[-+]?(?:[\d.]{1,40}(?:e[-+]?\d+)?|nan|-?inf))")


# printf("Device=%d %s Access Peer Device=%d\n", i, can_access_peer ? "CAN" : "CANNOT", j)
_NO_PEER = lazy_re(r"^Device=(?P<device>\d{1,3}) CANNOT Access Peer Device=(?P<peer>\d{1,3})$")


def classify_p2p_test(line: str) -> Parsed | None:
    """``p2ptest.verify_error`` for simpleP2P's report of a wrong element after a peer copy,
    ``p2ptest.no_peer_access`` for p2pBandwidthLatencyTest's pair of GPUs without peer access; None otherwise."""
    if line.startswith("Device="):
        m = _NO_PEER.match(line)
        if m is None:
            return None
        return Parsed("p2ptest.no_peer_access", "WARN", "p2ptest.no_peer_access",
                      {"device": int(m["device"]), "peer": int(m["peer"])})
    if not line.startswith("Verification error @ "):
        return None
    m = _VERIFY.match(line)
    if m is None:
        return None
    return Parsed("p2ptest.verify_error", "ERROR", "p2ptest.verify_error",
                  {"element": int(m["element"]), "value": m["value"], "expected": m["expected"]})
