"""The bounds and the line shapes that the repairs of a paste share, and what a repair learned
(:class:`Paste`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..events import Envelope
from ..lazyre import lazy_re

HEAD_LINES = 2000
LEARN_LINES = 1000  # lines a prefix is learned from
EVERY_LINE_MAX = 1000  # a source of at most this many lines has every line read (not only keyword lines)
PREFIX_SHARE = 0.4     # a learned prefix starts at least this share of the lines that could carry one
PREFIX_MIN = 3         # ... and at least this many lines
MAX_PREFIX_TOKENS = 6
MAX_PREFIX_CHARS = 160
WRAP_MIN_WIDTH = 60
WRAP_MIN_LINES = 3
WRAP_WIDE = 80        # from this width on, two lines cut at it (and no other line at it) are enough
MAX_WRAP_JOIN = 12     # lines joined into one at most
MAX_INTERLEAVED = 4096  # longer lines are not looked at for interleaving (terminal output is shorter)
LONG = 8192            # longer lines are left as they are (no prefix, no wrap, no process of their own)

# an exception raised without a message: its dotted name alone on its line (`...api.RendezvousTimeoutError`)
_EXC_NAME = lazy_re(r"(?:[A-Za-z_]\w*\.)+[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)")
_EXC_START = lazy_re(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure):")
_EXC_WORD = lazy_re(r"(?:\w+\.)*\w*(?:Error|Exception|Warning|Interrupt|Exit|Failure)\b")
_PROCESS_HEADER = lazy_re(r"[^\s:\[\]]*:\d+:\d+ \[-?\d+\]")  # NCCL's host:pid:tid, also before NCCL printed "NCCL"


@dataclass
class Paste:
    """What the repair learned for the lines of one source: line number -> envelope fields."""

    ids: dict[int, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # line number -> the records one line holds (several NCCL lines glued when the paste lost its
    # line ends): each is read as a line of its own, with that line's number
    pieces: dict[int, list[str]] = field(default_factory=dict)
    every_line: bool = False  # a short source: every line is read, not only the prefilter's candidates
    lines: int = 0  # how many lines the source has (a short source's: the repair read them all)
    # line numbers whose text was joined to a line before them (a hard wrap, a cut word, a JSON
    # record's parts): not read again, so the empty line left in their place does not end a record
    joined: set[int] = field(default_factory=set)
    # the longest line of the source as it was read: a hard wrap (logdoc.blocks) cut no line that had room
    longest: int = 0
    # line number -> how many characters the repair took off the line's front or end (a quote mark, a code
    # block's indent, a learned prefix): part of the width a hard wrap measured (logdoc.blocks)
    peeled: dict[int, int] = field(default_factory=dict)
    at_width: int = 0  # how many lines are :attr:`longest` characters long

    def apply(self, n: int, env: Envelope) -> None:
        got = self.ids.get(n)
        if not got:
            return
        for attr in _IDENTITY_ATTRS:  # what the envelope left unknown, the learned prefix supplies
            if getattr(env, attr) is None and got.get(attr) is not None:
                setattr(env, attr, got[attr])
        if env.process is None and got.get("label"):
            env.process = got["label"]  # the words that name the process stay with the line
        env.layers = ("prefix",) + env.layers


_IDENTITY_ATTRS = ("pid", "rank", "local_rank", "node_rank", "host", "time", "level")
