"""perftest's failure lines (ib_write_bw, ib_send_lat ...) and Go's dial / lookup errors, pasted beside a job's
log or instead of it: each names its cause; healthy output of the same commands stays quiet."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.godial import classify_go_net
from logdoc.classify.perftest import classify_perftest
from logdoc.pipeline import parse_sources


def _top(text: str) -> dict | None:
    d = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    return d[0] if d else None


def _read_as(p, kind, fields):
    """``p`` is an event of ``kind`` whose fields hold ``fields``."""
    assert p is not None and p.kind == kind
    for k, v in fields.items():
        assert p.fields[k] == v


@pytest.mark.parametrize("line, fields", [
    ("Couldn't allocate MR with error=14", {"step": "register_mr", "errno": "14"}),
    ("Couldn't allocate MR", {"step": "register_mr"}),
    ("Unable to create QP.", {"step": "create_qp"}),
    ("Failed to modify QP 1234 to RTR", {"step": "modify_qp", "state": "RTR"}),
    ("Failed to modify QP to INIT, ret=22", {"step": "modify_qp", "state": "INIT", "ret": "22"}),
    ("Couldn't connect to node2:18515", {"step": "connect", "peer": "node2", "port": "18515"}),
])
def test_perftest_lines_are_read(line, fields):
    _read_as(classify_perftest(line), "perftest.error", fields)


@pytest.mark.parametrize("line", [
    " RDMA_Write BW Test",
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    " 65536      5000             11732.24            11729.62             0.187674",
    "Couldn't allocate PD",
    "Couldn't connect to the server, retrying",
    "Failed to modify QP to RTR in the docs",
])
def test_healthy_perftest_output_is_not_a_failure(line):
    assert classify_perftest(line.strip()) is None


@pytest.mark.parametrize("wrap", [
    lambda s: s,
    lambda s: "```\n$ ib_write_bw -d mlx5_0 --use_cuda=0 node2\n" + s + "\n```",
    lambda s: "node1: " + s,
    lambda s: "[1,0]<stderr>:" + s,
    lambda s: "2024-05-01 10:00:00,123 " + s,
])
@pytest.mark.parametrize("line, rule", [
    ("Couldn't allocate MR with error=14", "LD236"),
    ("Couldn't allocate MR with error=12", "LD235"),
    ("Failed to modify QP 1234 to RTR", "LD237"),
    ("Unable to create QP.", "LD238"),
    ("Couldn't connect to node2:18515", "LD239"),
])
def test_perftest_failures_name_their_cause(wrap, line, rule):
    top = _top(wrap(line) + "\n")
    assert top is not None and top["id"] == rule


@pytest.mark.parametrize("line, kind, fields", [
    ("Error: dial tcp: lookup pytorch-job-master-0 on 10.96.0.10:53: no such host", "net.resolve_failed",
     {"host": "pytorch-job-master-0", "gai_strerror": "no such host"}),
    ("dial tcp: lookup etcd-0 on 10.96.0.10:53: read udp 10.1.2.3:45678->10.96.0.10:53: i/o timeout", "net.resolve_failed",
     {"host": "etcd-0", "gai_strerror": "i/o timeout"}),
    ('Get "https://10.0.0.1:443/api": dial tcp 10.0.0.1:443: i/o timeout', "net.connect_failed",
     {"peer": "10.0.0.1", "port": 443, "strerror": "i/o timeout"}),
    ("dial tcp 10.0.0.5:29500: connect: connection refused", "net.connect_failed",
     {"peer": "10.0.0.5", "port": 29500, "strerror": "connection refused"}),
])
def test_go_dial_errors_are_read(line, kind, fields):
    _read_as(classify_go_net(line), kind, fields)


@pytest.mark.parametrize("line", [
    "dial tcp is what the client uses",
    "lookup table built in 3.2s",
    "dial tcp 10.0.0.5:29500: connected",
])
def test_other_dial_and_lookup_words_are_not_errors(line):
    assert classify_go_net(line) is None


@pytest.mark.parametrize("wrap", [
    lambda s: s,
    lambda s: "```\n" + s + "\n```",
    lambda s: "trainer-worker-0: " + s,
    lambda s: "2024-05-01T10:00:00.123Z " + s,
])
@pytest.mark.parametrize("line, rule", [
    ("Error: dial tcp: lookup pytorch-job-master-0 on 10.96.0.10:53: no such host", "LD643"),
    ("Error: failed to connect: dial tcp 10.0.0.5:29500: connect: connection refused", "LD644"),
])
def test_go_dial_errors_name_their_cause(wrap, line, rule):
    top = _top(wrap(line) + "\n")
    assert top is not None and top["id"] == rule
