"""Speed only. Every module here has a plain twin in :mod:`logdoc.pipeline` (or the classifiers)
that gives the same events and counts, and a differential test that holds it to that
(``tests/test_fastpath.py``, ``tests/test_digest.py``, ``tests/test_parallel.py``,
``tests/test_read_lines.py``); ``LOGDOC_NO_FASTPATH=1`` (or :func:`logdoc.grammar.set_fastpath`)
turns all of it off.

- ``memo.py``: PyTorch classifications remembered per (message, level);
- ``lane.py``: the NCCL lane (a ``host:pid:tid [dev] NCCL INFO`` line that needs no unwrapping and
  no assembling goes straight to the classifier, memoised on its text) and the bulk lane (a line
  of a known bulk shape is counted into its folded group without an event);
- ``scan.py``: a block of lines read with ``bytes.find`` per prefilter keyword instead of line by line;
- ``grep.py``: grep beside the parse, numbering the lines that hold a keyword.

Their preconditions are asked of the modules that own them (:mod:`logdoc.envelope`,
:mod:`logdoc.blocks`), never copied here as literals.
"""
from __future__ import annotations


def enabled() -> bool:
    """Whether the fast paths are on (``LOGDOC_NO_FASTPATH`` unset, :func:`logdoc.grammar.set_fastpath`)."""
    from ..grammar import fastpath_enabled

    return fastpath_enabled()
