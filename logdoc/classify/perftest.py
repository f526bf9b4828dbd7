"""What the RDMA bandwidth and latency tests printed when they failed, read where no NCCL header is.

perftest (linux-rdma/perftest: ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_write_lat``, ``ib_send_lat``
...) is what people run between two nodes to check the InfiniBand / RoCE fabric NCCL will use. Its failures are
``fprintf(stderr, ...)`` lines of src/perftest_resources.c and src/perftest_communication.c, each naming the step
that failed:

* ``Couldn't allocate MR`` / ``Couldn't allocate MR with error=12``: ``ibv_reg_mr`` refused to register the test's
  buffer (``errno`` 12 is the locked-memory limit or the memory itself, 14 a GPU buffer the RDMA driver cannot
  pin): ``step: register_mr``, with ``errno``;
* ``Unable to create QP.``: ``ibv_create_qp`` failed: ``step: create_qp``;
* ``Failed to modify QP to INIT``, ``Failed to modify QP 1234 to RTR``, ``Failed to modify QP to RTS``: the queue
  pair could not be moved to the next state: ``step: modify_qp``, with ``state``; RTR takes the remote side's
  address (its LID on InfiniBand, its GID on RoCE), so that is where a wrong GID index or an unreachable peer fails;
* ``Couldn't connect to node2:18515``: the client's TCP connection to the server, which exchanges the queue pairs'
  details before any RDMA, failed (no server listening, a firewall, a wrong name): ``step: connect``, with
  ``peer`` and ``port`` (18515 is perftest's default);

Each becomes ``perftest.error`` with ``step`` and its fields. What it means is the knowledge base's
(knowledge/infiniband.yaml); this module only finds it.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

_MR = lazy_re(r"^Couldn't allocate MR(?: with error=(?P<errno>\d{1,4}))?$")
_MODIFY = lazy_re(r"^Failed to modify QP (?:\d{1,10} )?to (?P<state>INIT|RTR|RTS)(?:, ret=(?P<ret>-?\d{1,4}))?$")
_CONNECT = lazy_re(r"^Couldn't connect to (?P<peer>[\w.:%\[\]-]{1,253}):(?P<port>\d{1,5})$")


def _error(step: str, **fields: str | None) -> Parsed:
    out = {"step": step}
    out.update({k: v for k, v in fields.items() if v})
    return Parsed("perftest.error", "ERROR", "perftest.error", out)


def classify_perftest(line: str) -> Parsed | None:
    """``perftest.error`` for a failure line of perftest (``line`` stripped); None otherwise."""
    if line.startswith("Couldn't "):
        m = _MR.match(line)
        if m is not None:
            return _error("register_mr", errno=m["errno"])
        m = _CONNECT.match(line)
        return _error("connect", peer=m["peer"], port=m["port"]) if m is not None else None
    if line == "Unable to create QP.":
        return _error("create_qp")
    if line.startswith("Failed to modify QP "):
        m = _MODIFY.match(line)
        return _error("modify_qp", state=m["state"], ret=m["ret"]) if m is not None else None
    return None
