"""Live use: follow a job's output while it is written, run a job and explain it when it fails, and
explain a distributed exception as it escapes.

* :class:`LiveParser` is the parse pipeline of :func:`logdoc.pipeline.source_events` fed with
  bytes as they arrive (``feed`` / ``close``). It keeps events, never lines, so memory does not grow
  with the length of the output; at ``close`` its result equals the parse of the same bytes read as
  a file (the tests hold it to that).
* :class:`EarlyDiagnoser` re-runs the diagnosis on the events so far (debounced, rate-limited)
  when a new warning- or error-level event arrives, and reports each *certain* root cause once.
* :func:`follow` drives ``logdoc explain - --follow``: input bytes go through to an output file
  descriptor unchanged, as they arrive.
* :func:`run_command` drives ``logdoc run -- CMD``: the command runs in its own process group
  (with the terminal handed to it when logdoc has it), both streams go through unchanged, signals
  are forwarded, and the output is parsed as it goes.
* :func:`exception_diagnosis` is the body of ``logdoc.install_excepthook()``.

A core package: standard library only; the CLI renders the reports. One module per use:
``stream`` (LiveParser), ``early`` (EarlyDiagnoser), ``follow``, ``run`` and ``excepthook``.
"""
from __future__ import annotations


from .early import ABSENCE_KINDS, CERTAIN_CONFIDENCE, EarlyDiagnoser, evidence_line, format_notice, is_certain
from .excepthook import exception_diagnosis, looks_distributed
from .follow import follow
from .run import RunResult, collect_files, describe_command, exit_status, nccl_debug_patterns, run_command, \
    torchrun_log_dirs
from .stream import LiveParser, merge_results

__all__ = ["ABSENCE_KINDS", "CERTAIN_CONFIDENCE", "EarlyDiagnoser", "LiveParser", "RunResult", "collect_files",
           "describe_command", "evidence_line", "exception_diagnosis", "exit_status", "follow", "format_notice",
           "is_certain", "looks_distributed", "merge_results", "nccl_debug_patterns", "run_command",
           "torchrun_log_dirs"]
