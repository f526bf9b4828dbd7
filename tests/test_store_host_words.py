"""A store message's `(host, port)` names the store's host; the words "on <host>" of a diagnosis name the process's.

c10d's and TCPStore's templates read the store's name into the field `host`, which a placeholder `{host}` takes
before the host the log line's envelope gave the event; the rules of such lines say where the process ran with
`{log.host}` (the event's own host, logdoc/kb/rule.py `_event_values`)."""
from __future__ import annotations

import pytest

import logdoc

CASES = [
    ("LD620", "node3: [rank3]:[E1201 10:11:12.000000000 socket.cpp:957] [c10d] The client socket has failed to "
              "connect to any network address of (node1, 29500)."),
    ("LD690", "node3: [rank3]:[E1201 10:11:12.000000000 socket.cpp:1028] [c10d] The client socket has timed out "
              "after 10000ms while trying to connect to (12345, 29500)."),
    ("LD108", "node3: [rank3]:[W1201 10:11:12.000000000 TCPStore.cpp:358] [c10d] TCP client failed to "
              "connect/validate to host 172.17.0.2:29500 - timed out (try=3, timeout=1800000ms): The client socket "
              "has timed out after 1800000ms while trying to connect to (172.17.0.2, 29500)."),
]


@pytest.mark.parametrize("rule_id,line", CASES, ids=[c[0] for c in CASES])
def test_the_process_host_is_the_envelopes_not_the_stores(rule_id, line):
    report = logdoc.explain(line)
    found = [d for d in report["diagnoses"] if d["id"] == rule_id]
    assert found, [d["id"] for d in report["diagnoses"]]
    text = found[0]["explanation"]
    assert "Rank 3 on node3 " in text
    assert " on node1 " not in text and " on 12345 " not in text and " on 172.17.0.2 " not in text
