"""Open MPI's signal handler (opal/util/stacktrace.c), loaded into every process that mpirun starts and into
libraries built with Open MPI (HPC-X, NCCL's MPI-based tests): it reports the signal that kills the process
in a block of lines that each start with ``[host:pid] ``::

    [node1:04242] *** Process received signal ***
    [node1:04242] Signal: Bus error (7)
    [node1:04242] Signal code: Non-existant physical address (2)
    [node1:04242] Failing at address: 0x7f3a2c000000

The ``Signal: <strsignal> (<number>)`` line names it; it becomes ``process.signal`` as the other printers'
reports do (:mod:`logdoc.classify.neighbours`). The block's other lines say nothing the signal does not.

Standard library only (runs in the browser).
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

# `[host:pid] ` (the pid zero-padded to five digits) is optional: a paste often quotes the line without it
_SIGNAL_LINE = lazy_re(r"^(?:\[(?P<host>[^\s:\]]{1,100}):(?P<pid>\d{1,10})\] )?Signal: (?P<name>[A-Z][a-z][^()\n]{0,40}?) "
                       r"\((?P<signal>\d{1,2})\)$")


def classify_ompi_signal(line: str) -> Parsed | None:
    """``process.signal`` for Open MPI's ``[host:pid] Signal: Bus error (7)``; None otherwise."""
    if "Signal: " not in line:
        return None
    m = _SIGNAL_LINE.match(line.strip())
    if m is None:
        return None
    f = {"signal": int(m["signal"]), "signal_name": m["name"], "printer": "Open MPI's signal handler"}
    if m["host"]:
        f["signal_host"] = m["host"]
        f["signal_pid"] = int(m["pid"])
    return Parsed("process.signal", "ERROR", "process.signal", f)
