"""Other frameworks' and launchers' words for a process of the job that is gone (logdoc/classify/frameworks.py reads
them; knowledge/processes.yaml LD723-LD725 explain them)."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.frameworks import classify_framework
from logdoc.pipeline import parse_sources

_JAX = ("F0926 17:26:32.075587  157988 client.h:77] Terminating process because the JAX distributed service detected"
        " fatal errors. This most likely indicates that another task died; see the other task logs for more details."
        " Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status:"
        " UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n/job:jax_worker/replica:0/task:3\n")
_ORTE = ("--------------------------------------------------------------------------\n"
         "ORTE has lost communication with a remote daemon.\n\n"
         "  HNP daemon   : [[16919,0],0] on node anode031\n  Remote daemon: [[16919,0],3] on node anode127\n\n"
         "This is usually due to either a failure of the TCP network\nconnection to the node, or possibly an internal"
         " failure of\nthe daemon itself. We cannot recover from this failure, and\ntherefore will terminate the job.\n")


def _ids(text: str) -> list[str]:
    return [d["id"] for d in build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]]


def test_framework_lines_are_read():
    p = classify_framework("Terminating process because the JAX distributed service detected fatal errors.")
    assert p is not None and p.kind == "framework.peer_lost" and p.fields == {"framework": "jax"}
    p = classify_framework("PRTE has lost communication with a remote daemon.")
    assert p is not None and p.fields == {"framework": "open-mpi", "launcher": "PRTE"}
    assert classify_framework("ORTE was unable to reliably start one or more daemons.") is None


@pytest.mark.parametrize("text, rule", [
    (_JAX, "LD723"),
    (_ORTE, "LD724"),
    ("[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an"
     " attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.\n", "LD725"),
])
def test_frameworks_name_a_lost_peer(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_the_exception_before_horovods_shutdown_leads():
    ids = _ids("[1,0]<stderr>:ValueError: shapes (3,) and (4,) not aligned\n"
               "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the"
               " ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished"
               " execution.\n")
    assert ids[0] == "LD710"


@pytest.mark.parametrize("text, rule", [
    ("E1204 10:00:00.000000 123 coordination_service_agent.cc:140] Coordination agent is set to be in error state:"
     " UNAVAILABLE: DNS resolution failed for node-0.svc:8476: C-ares status is not ARES_SUCCESS qtype=A name=node-0.svc"
     " is_balancer=0: Domain name not found\n", "LD623"),
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN:"
     " ipv4:10.0.0.1:1234: Failed to connect to remote host: Connection refused\n", "LD624"),
])
def test_coordination_service_failures(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule


def test_coordination_line_is_read():
    p = classify_framework("Coordination agent is set to be in error state: UNAVAILABLE: DNS resolution failed for a:1")
    assert p is not None and p.kind == "framework.coordination_error" and p.fields["status"] == "UNAVAILABLE"
    assert classify_framework("coordination service started on port 8476") is None


def test_mpi_abort_names_the_aborting_rank():
    text = ("--------------------------------------------------------------------------\n"
            "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n\n"
            "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n")
    d = build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]
    assert d and d[0]["id"] == "LD726"
    p = classify_framework("MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 1.")
    assert p is not None and p.fields == {"framework": "open-mpi", "aborted_rank": 3, "errorcode": 1}


def test_a_coordination_deadline_is_not_called_the_programs_error():
    ids = _ids("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n\nAdditional GRPC error"
               " information from remote target unknown_target_for_coordination_leader while calling"
               " /tensorflow.CoordinationService/RegisterTask:\n")
    assert ids and ids[0] == "LD625" and "LD710" not in ids
