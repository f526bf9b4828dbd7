"""The old name of :mod:`logdoc.pipeline`, kept for code written against it (branches in flight,
scripts): nothing in logdoc, tools/ or tests/ imports it. New code imports :mod:`logdoc.pipeline`
(the parse), :mod:`logdoc.results` (``Stats``, ``Unrecognized``, ``ParseResult``) and
:mod:`logdoc.fast` (the speed machinery)."""
from __future__ import annotations

from .pipeline import (Feeder, classify_record, in_file_order, parse_paths, parse_sources, parse_text,
                       region_reader, source_events)
from .results import MAX_UNRECOGNIZED, ParseResult, Stats, Unrecognized

__all__ = ["Feeder", "MAX_UNRECOGNIZED", "ParseResult", "Stats", "Unrecognized", "classify_record",
           "in_file_order", "parse_paths", "parse_sources", "parse_text", "region_reader", "source_events"]
