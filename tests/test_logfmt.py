"""Log lines inside logfmt records (logrus's text formatter, go-kit's log): the message read from
``msg=`` with Go's quoting undone, an error kept apart under ``error=`` read after it, the collector's
envelope in front kept (logdoc/paste/escaped.py)."""
from __future__ import annotations

from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.paste.escaped import logfmt_record
from logdoc.paste.screen import as_written
from logdoc.pipeline import parse_sources

import pytest


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _report(text: str, rules) -> dict:
    return build_report(parse_sources([("daemon.log", text + "\n")]), rules)


CONTAINERD = (
    'Dec 01 10:11:12 gpu-node-3 containerd[812]: time="2026-12-01T10:11:12.1Z" level=info msg="CreateContainer within '
    'sandbox \\"4f2a\\" for container &ContainerMetadata{Name:trainer,Attempt:0,}"\n'
    'Dec 01 10:11:12 gpu-node-3 containerd[812]: time="2026-12-01T10:11:12.5Z" level=error msg="StartContainer for '
    '\\"9ab1\\" failed" error="failed to create shim task: OCI runtime create failed: error running hook #0: error '
    "running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\\nnvidia-container-cli: "
    'initialization error: nvml error: driver not loaded: unknown"')


def test_an_error_kept_apart_is_read_after_the_message_under_the_daemons_envelope(rules):
    report = _report(CONTAINERD, rules)
    first = report["diagnoses"][0]
    assert first["category"] == "container_missing_devices"
    ev = first["evidence"][0]
    assert ev["line"] == 2 and ev["host"] == "gpu-node-3"  # journald's host, not a word of the record
    assert ev["text"].startswith("nvidia-container-cli: initialization error")


def test_an_nccl_line_relayed_in_a_record_keeps_its_own_header(rules):
    text = ('time="2026-12-01T10:11:12Z" level=error msg="gpu-node-07:1234:1290 [3] transport/net_ib.cc:1695 NCCL WARN '
            'NET/IB : Got completion from peer 10.0.0.8<50231> with status=12 opcode=0 len=0 vendor err 129 (Recv) '
            'localGid ::ffff:10.0.0.7 remoteGidsfe80::1 hca mlx5_2"')
    report = _report(text, rules)
    assert report["diagnoses"][0]["category"] == "ib_transport_error"
    assert report["diagnoses"][0]["hosts"] == ["gpu-node-07"]  # (before: the host read as `msg="gpu-node-07`)


def test_what_is_a_record_and_what_is_not():
    start, fields = logfmt_record('time="2026-12-01T10:11:12Z" level=warning msg="a \\"quoted\\" word\\tand a tab" n=3')
    assert start == 0 and fields["msg"] == 'a "quoted" word\tand a tab' and fields["n"] == "3"
    got = logfmt_record('Dec 01 10:11:12 host dockerd[9]: level=error msg=failed')
    assert got is not None and got[1]["msg"] == "failed" and got[0] > 0
    # near misses: no level, no message, pairs inside prose, an unterminated quote
    assert logfmt_record("step=10 loss=2.31 lr=0.0001 msg=ok") is None
    assert logfmt_record('time="2026-12-01T10:11:12Z" level=info step=10') is None
    assert logfmt_record('RuntimeError: failed with level=error msg="boom"') is None
    assert logfmt_record('level=error msg="cut in the middle') is None


def test_the_screen_sends_a_source_of_records_to_the_repair():
    lines = CONTAINERD.split("\n")
    assert not as_written(lines)
    assert as_written(["step=10 loss=2.31 level=info msg=ok trailing words"])


@pytest.mark.parametrize("word, level", [("panic", "FATAL"), ("fatal", "FATAL"), ("crit", "FATAL"),
                                         ("dpanic", "ERROR"), ("eror", "ERROR"), ("warning", "WARN"),
                                         ("trace", "DEBUG"), ("dbug", "DEBUG")])
def test_the_loggers_level_words_read_as_logdocs_levels(word, level):
    # logrus, zap and log15 write levels that are not logdoc's own words: a panic is fatal, a trace is debug
    text = f'time="2026-12-01T10:11:12Z" level={word} msg="RuntimeError: NCCL communicator was aborted on rank 3."\n'
    events = parse_sources([("daemon.log", text)]).events
    assert events and {e.level for e in events} == {level}

