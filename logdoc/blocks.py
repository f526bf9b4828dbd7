"""Stage 4b: join multi-line records, per process stream, before classification.

Feed every line (after the envelope is peeled) in file order; each call returns the records that
are complete. Every input line ends up in exactly one :class:`Record`. Records of one stream come
out in line order; records of different streams may come out of line order (a block stays open
while other streams go on), so sort by ``line`` if the order matters.

Blocks recognised:

- Python traceback: ``Traceback (most recent call last):`` (at the start of its line, or after a logger's words:
  ``Scheduler hit an exception: Traceback ...``) through the final ``Type: message``
  line and the message's continuation lines (an exception line that is only ``Type:`` has its message on
  the lines after it, up to :data:`MAX_OPEN_MESSAGE`), with chained exceptions (``During handling of the
  above exception ...`` / ``The above exception was the direct cause ...``), the nested traceback
  of ``torch.multiprocessing.spawn`` (``-- Process N terminated with the following error:``) and
  the framed ChildFailedError summary that follows ``ChildFailedError:``.
- the ChildFailedError summary on its own (``====`` frame, ``X FAILED``, ``Root Cause ...``).
- a ProcessGroupNCCL record wrapped over lines (``[Rank 0] Collective`` / ``WorkNCCL(...`` /
  ``raised the following async exception: ...``; ``[PG ID 1 PG GUID 1(mesh_pp)`` / blank /
  ``Rank 0] failure detected by watchdog ...``).
- exception-like messages with continuation lines: ``NCCL error in: ...`` + ``ncclXxxError: ...``
  + ``Last error:`` + text, ``terminate called after throwing ...`` + ``  what():  ...``, the DETAIL
  mismatch report, the desync report (``\\t`` lines), ``Original exception:`` tails.
- torch 1.10 - 2.0's ProcessGroupNCCL options block: ``[Rank 0] ProcessGroupNCCL initialized with
  following options:`` and one ``NAME: value`` line per option after it (``NCCL_ASYNC_ERROR_HANDLING: 1``,
  ``TIMEOUT(ms): 1800000``, `` NCCL_DEBUG: INFO``), up to :data:`MAX_OPTION_LINES`; the first other
  line ends it.
- Horovod's stall report (horovod/common/stall_inspector.cc, one log message over lines): ``One or more tensors were
  submitted ... waiting for remainder of ranks for more than 60 seconds. ...``, then ``Missing ranks:`` (``Stalled
  ranks:`` before 0.20.1) and one ``N: [tensor, ...]`` line per rank (``N!: `` a rank past the shutdown time), and
  ``One or more rank (marked by "!") is stalled ...``; before 0.16.2 ``Stalled ops:`` and ``<tensor> [missing ranks:
  N, M]``. Up to :data:`MAX_STALL_LINES`; the first other line ends it.
- C++ backtraces (``Exception raised from ... (most recent call first):`` + ``frame #N: ...``)
  are absorbed by the record they follow; alone they form their own record.
- an exception message hard-wrapped by a paste (``RuntimeError: ... killed by signal: Bus`` /
  ``error. It is possible ...``; ``RuntimeError: [enforce fail at .../device.cc:84]`` /
  ``  ifa != nullptr. Unable to find address for: ...``): a line that goes on with the sentence
  (the line before it ends without ``.`` ``!`` ``?``, it starts in lower case, after blanks or not)
  is joined to the exception line with a blank, up to :data:`MAX_WRAP_JOIN` lines; the record counts
  the lines it joined (:attr:`Record.joined`).
- a traceback a paste cut above its last code line (``    self.comm = NcclCommunicatorOp(`` /
  ``    ^^^^^^^^`` / ``RuntimeError: ...``): only in a short source read line by line
  (:attr:`BlockAssembler.code_heads`), up to :data:`MAX_CODE_LINES` indented code lines directly before
  an exception line are that exception's record; code lines that no exception line follows stay
  records of their own, one per line, as they were.

A continuation line that carries no envelope of its own (only the first line of a c10 message
has the ``[rank0]:[E...]`` prefix) joins the open block of a compatible stream: the most recent
one whose stream key agrees on every part the line does have. Finding it costs no scan of every
open block: the open blocks are kept by stream, and the plain messages among them (one record
that only continuation lines may extend: every ranked logger or c10 line opens one) are set
apart, so a line that is no continuation line is compared only with the few other open blocks
(tracebacks, wrapped records, frames, summaries), the same answer as the full scan.

Every block is bounded (``max_lines``, ``max_bytes``); a block at its bound or open at
:meth:`BlockAssembler.flush` is emitted as it is.

One module, over 500 lines: :class:`BlockAssembler` is one state machine per stream, whose
transitions are the predicates above it (``_goes_on``, ``_is_cont``, ``_takes_any_line``, ``may_start``),
and the fast lane asks the same predicates (:mod:`logdoc.fast.lane`); apart, they would be private
tables imported across modules.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from .events import Envelope
from .fast import _ON as _fast  # the fast-path switch (a list: read without a call on every line)
from .lazyre import lazy_re

__all__ = ["Record", "BlockAssembler", "OPTIONS_HEAD", "is_code_head", "is_elision", "may_start", "may_join_quiet", "CONTINUATION_MARKS",
           "MAY_START_FIRST", "MAY_START_WORDS"]


@dataclass(slots=True)
class Record:
    line: int
    end_line: int
    env: Envelope
    text: str
    joined: int = 0  # input lines joined into the line before them (a hard-wrapped exception message); -1: a
    # piece of a line that another record of the same line counts (message_before_head)

    @property
    def nlines(self) -> int:
        """Input lines in this record (``end_line - line + 1`` over-counts when streams interleave)."""
        return self.text.count("\n") + 1 + self.joined


def undouble(text: str) -> str | None:
    """A record's text without the blank lines a double spacing put after each of its lines (a copy from a web
    console or a notebook's output); None when its lines are not all one blank apart (an odd number of blanks
    between any two: the program's own blank line became three, which keeps one)."""
    lines = text.split("\n")
    out: list[str] = []
    single = 0
    gap = -1  # (blanks since the last nonblank line; -1 before the first)
    for t in lines:
        if t.strip():
            if gap == 0 or gap > 0 and gap % 2 == 0:
                return None  # two lines next to each other, or an even gap: no blank was added here
            if gap > 0:
                single += gap == 1
                out.extend([""] * (gap // 2))
            out.append(t)
            gap = 0
        elif gap >= 0:
            gap += 1
    return "\n".join(out) if single >= 2 else None


IDLE = 2000  # lines after which a record that took nothing is closed (logdoc.pipeline.Feeder)

_TB_HEAD = "Traceback (most recent call last):"
_CHAIN = ("During handling of the above exception, another exception occurred:",
          "The above exception was the direct cause of the following exception:")
# (or a class outside builtins whose name says nothing of it: its module's path, then CamelCase and the colon:
# `horovod.runner.common.util.network.NoValidAddressesFound: `; logdoc/classify/torch/exceptions.QUALIFIED_EXC)
_EXC_LINE = lazy_re(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure)(?::|\s*$)"
                    r"|(?:[A-Za-z_]\w*\.){1,16}[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*:(?:[ \t]|$)")
_NCCL_INTERP = lazy_re(r"nccl[A-Z]\w*: ")
# an exception line whose message starts on the next line: Python prints `Type: ` + str(exc), and a message
# that begins with a line break (`raise X("\\n\\nCannot apply ...")`) leaves the type and its colon alone
# (an empty message prints the type without a colon)
_EXC_OPEN = lazy_re(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure):[ \t]*$")
MAX_OPEN_MESSAGE = 24  # lines (blanks included) such a message may take after its exception line
# ... or whose message is only a context that ends with its separator (`RuntimeError: work = default_pg.broadcast([tensor],
# opts): ` / `NCCL error in: ...`): the message it introduces is on the next line (the context is the code that raised it)
_EXC_CONTEXT_OPEN = lazy_re(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure): \S.{0,400}[^:\s]:[ \t]*$")
# TensorFlow raises an op's failed StatusGroup as the exception and lists its root errors after it, one message
# each (tensorflow/core/common_runtime/status_group.cc: `%zu root error(s) found.`, `  (<i>) <Code>: <message>`
# with the node lines its message ends with, `%zu successful operations.`, `%zu derived errors ignored.`): they
# are the exception's message
_TF_ROOTS = lazy_re(r".*\b\d{1,6} root error\(s\) found\.[ \t]*$")
# (and the hint an OOM appends, executor.cc: `Hint: If you want to see a list of allocated tensors when OOM happens, ...`;
# the function the status came from when alone on its line, ` [Op:__inference_train_function_123]`)
_TF_ROOT_LINE = lazy_re(r"[ \t]{0,8}\(\d{1,6}\) \S|[ \t]*\[\[|\d{1,9} successful operations\.|\d{1,9} derived errors ignored\."
                        r"|Hint: If you want to see|[ \t]*\[Op:")
MAX_TF_ROOT_LINES = 64
# From TensorFlow 2.8 the exception line says `Graph execution error:` and its message first gives, for each node the
# status names, the stack that defined it (tensorflow/python/framework/error_interpolation.py, interpolate_graph and
# _build_node_error_message: `Detected at node 'n' defined at (most recent call last):`, the frames indented by two
# more spaces, `Node: 'n'`; 2.13+ may print `<stack traces unavailable>` instead), then the status itself (one
# message, or `N root error(s) found.` and its list): the stacks are part of the message, the status after them too
_TF_NODE = lazy_re(r"Detected at node .{1,400} defined at \(most recent call last\):[ \t]*$")
_TF_GRAPH_ERROR = "Graph execution error:"
_TF_NODE_END = ("Node: ", "<stack traces unavailable>")
MAX_TF_NODE_LINES = 400


def _after_exception(text: str) -> str:
    """A traceback's state after its exception line ``text``: its message still to come on the next lines
    (``exc_open``), TensorFlow's root errors to follow (``tf_roots``), or the exception read (``after_exc``)."""
    if _EXC_OPEN.match(text) or _EXC_CONTEXT_OPEN.match(text):
        return "exc_open"
    return "tf_roots" if _TF_ROOTS.match(text) else "after_exc"


_OTHER_RECORD = lazy_re(r"[^\s:\[\]]*:(?:\d+|[Xx*#?]+):(?:\d+|[Xx*#?]+) |\[rank\d+\]:|[IWEF]\d{4} \d|\[?\d{4}-\d\d-\d\d")
_FRAME_EQ = lazy_re(r"={3,}\s*$")
_FRAME_DASH = lazy_re(r"-{3,}\s*$")
_SPAWN = lazy_re(r"-- Process \d+ terminated with the following error:")
# a frame of a Python traceback (traceback.StackSummary.format): a paste that starts inside a traceback
# (its `Traceback (most recent call last):` cut), or a message that goes on with its cause's frames (Ray)
FRAME_LINE = lazy_re(r"[ \t]*File \"[^\"\n]{1,1024}\", line \d{1,9}, in ")
# a traceback's code line (the source line under a frame, four blanks in, and the `^^^^` / `~~~^^^` marks
# Python 3.11 prints under it): a statement, a call, an assignment, a `raise` ... and no log header of its own
_CODE_LINE = lazy_re(r"[ ]{2,12}(?:[~^]+[ ]*$|(?:raise|return|await|yield|assert|with|for|if|elif|while|del|async)\b"
                     r"|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ ]*(?:\(|=[^=]|\+=|-=|\.|,|$))")
MAX_CODE_LINES = 6
_PG_OPEN = lazy_re(r"\[(?:Rank|PG)\b[^\]]*$")
_FR_STACK = lazy_re(r"#\d+ \S+ from \S")          # flight-recorder stack: "#0 all_reduce from .../x.py:2501"
_WATCHDOG_TIMEOUT = "Watchdog caught collective operation timeout: WorkNCCL("
# a line of torchrun's failure summary (elastic's ChildFailedError.format_msg) that opens it when a paste
# cut its head (the `====` border, `<script> FAILED`): an entry's `[i]:`, one of its fields, a section line
SUMMARY_BODY = lazy_re(r"(?m)\[\d+\]:[ \t]*$|[ \t]+(?:time|host|rank|exitcode|error_file|traceback)[ \t]*: "
                       r"|Root Cause \(first observed failure\):|Failures:[ \t]*$")
# a line a paste put where it left lines out: `...`, `…`, `[...]`, `... (truncated)`, `(20 lines omitted)`,
# `<snip>`. Only short lines are looked at (the pattern is then cheap whatever the line holds).
_ELISION = lazy_re(r"(?:\.{3,}|…+)(?:[ \t]*[\[(<][^\])>]*[\])>])?"
                      r"|[\[(<][ \t]*(?:\.{3,}|…+|[\w \t.,]*\b(?:omitted|skipped|truncated|removed|snip|snipped|elided)\b[\w \t.,]*)[\])>]")


def is_elision(line: str) -> bool:
    s = line.strip()
    return 0 < len(s) <= 80 and _ELISION.fullmatch(s) is not None

# Lines that can only continue a message printed just before (never start a record of their own).
_CONT_PREFIXES = ("Exception raised from ", "frame #", "<omitting python frames>", "Last error:",
                  "Unknown NCCL error!", "  what():", "WorkNCCL(", "raised the following async exception",
                  "ran for ", "timed out in blocking wait", " Original exception:", "Original exception:",
                  "CUDA kernel errors might be asynchronously reported", "For debugging consider passing CUDA_LAUNCH_BLOCKING",
                  "Compile with `TORCH_USE_CUDA_DSA`", "Collectives differ in the following aspects",
                  "Successfully processed ranks:", "No ranks successfully processed in monitoredBarrier",
                  # PaddlePaddle's hint after its error line (paddle/phi/core/enforce.h: `  [Hint: ...] (at file:line)`)
                  "  [Hint: ", "[Hint: ")


MAX_WRAP_JOIN = 4
# torch 1.10 - 2.0 printed ProcessGroupNCCL's options one a line after this header (ProcessGroupNCCL.cpp:
# `"ProcessGroupNCCL initialized with following options:" << "\nNCCL_ASYNC_ERROR_HANDLING: " << ...`); 2.0
# put a blank before its last two names (`\n TORCH_DISTRIBUTED_DEBUG: `, `\n NCCL_DEBUG: `)
OPTIONS_HEAD = "ProcessGroupNCCL initialized with following options:"
_OPTION_LINE = lazy_re(r"[ \t]?[A-Z][A-Z0-9_]{2,60}(?:\(ms\))?: \S")
MAX_OPTION_LINES = 16
STALL_HEAD = "waiting for remainder of ranks"
_STALL_LINE = lazy_re(r"(?:Missing|Stalled) ranks:[ \t]*$|Stalled ops:|\d{1,7}!?: \[|\S{1,400} \[missing ranks: ?[\d, ]{0,4000}\][ \t]*$"
                      r"|One or more rank \(marked by")
MAX_STALL_LINES = 72
WORD_SLACK = 20  # a word longer than this is rare in a message's prose
_WRAP_GOES_ON = lazy_re(r"[ \t]*[a-z_/]")  # (a word, a name or a path cut inside)
_SENTENCE_END = lazy_re(r"[.!?][\"')\]]?[ \t]*$")


_OWN_HEADER = lazy_re(r"[^\s:\[\]]*:(?:\d+|[Xx*#?]+):(?:\d+|[Xx*#?]+) |[^\s:]+: ")  # NCCL's host:pid:tid, pdsh's host:


def _open_sentence(prev: str) -> bool:
    """An exception line that a hard wrap may have cut: long enough, it ends no sentence, and no viewer's
    cut mark ends it (``... custom call 'x… [truncated]``: the rest was dropped, the next line is not it)."""
    return len(prev) >= 24 and _SENTENCE_END.search(prev) is None and not _marked(prev)


def _marked(prev: str) -> bool:
    """Whether a viewer's cut mark ends ``prev`` (:func:`logdoc.classify.cut.ends_with_mark`)."""
    from .classify.cut import ends_with_mark  # (imported when first needed)

    return ends_with_mark(prev)


def _goes_on(prev: str, text: str, midword: bool = False) -> bool:
    """Whether ``text`` continues the sentence of ``prev`` cut by a hard wrap (see the module doc):
    never a line with a header of its own (an NCCL line, ``host: ``), a frame or an exception line,
    unless the cut fell inside a word (``midword``: then what reads as a header is the word's rest)."""
    if not _open_sentence(prev) or _WRAP_GOES_ON.match(text) is None:
        return False
    t = text.lstrip()
    return (not t.startswith(("File ", "frame #", "at ")) and _EXC_LINE.match(t) is None
            and (midword or _OWN_HEADER.match(t) is None))


def _glue(prev: str, piece: int, text: str, width: int, cut: bool) -> str:
    """What stood between two pieces of a line a hard wrap cut: nothing where the source was cut at a
    column (``cut``), the first piece fills the width to its last column and a word runs on over the cut
    (a terminal cuts inside a word), or, cut or wrapped, where the letters at either side read together as
    one word of the catalogs' formats and apart not as two (``... libuv suppor`` / ``t``:
    :func:`logdoc.cuttail.one_word`); a blank where the first piece stops short of the width (the wrap
    moved the next word down, and the paste dropped the blank at the line's end), the cut fell beside a
    blank, or the source's lines were wrapped at words."""
    if piece >= width and _in_word(prev[-1:]) and _in_word(text[:1]):
        # (a name or a path: letters alone may be two words that a word wrap put apart at that column)
        word = prev.rsplit(None, 1)[-1] + text.split(None, 1)[0].rstrip(".,;:)]'\"")
        if cut and any(c.isdigit() or c in "_/." for c in word):
            return ""
        from .cuttail import one_word  # (letters alone: one word of the catalogs' formats, or two)

        if one_word(prev, text):
            return ""
    return " "


def _prefix_alone(text: str, head: int) -> bool:
    """Whether ``text`` is a prefix alone, as long as the ``head`` characters peeled off the line before it (their
    blank after it stripped with the line's end: ``opt-1_3b.0 [stderr]`` after ``opt-1_3b.0 [stderr] RuntimeError:
    ...``): the empty line of that prefix's stream, no rest of the line before it."""
    t = text.rstrip()
    if not t or not len(t) < head <= len(t) + 2:
        return False
    from .residue import leading_prefixes, prefix_like  # (imported when first needed)

    return prefix_like(t) or len(t) + 1 in leading_prefixes(t + " x")


def _in_word(c: str) -> bool:
    """A character of a word, a name or a path (what a cut inside one leaves at either side)."""
    return c.isalnum() or (c != "" and c in "_/.-")


_NAME_REST = lazy_re(r"[\w<>.]{1,80}")  # a function's name, the rest of a frame line cut inside it


def _is_cont(text: str) -> bool:
    if not text:
        return False
    c = text[0]
    if c == "\t":
        return True
    if c == "n" and _NCCL_INTERP.match(text):
        return True
    if c == "#" and _FR_STACK.match(text):
        return True
    return text.startswith(_CONT_PREFIXES)


# Substrings one of which is in every line :func:`_is_cont` accepts (anywhere in the line): a line
# without any of them never continues a record (the readers' gating tests this, not the prefixes).
CONTINUATION_MARKS = ("\t", "nccl", "#") + tuple(sorted({p.strip() for p in _CONT_PREFIXES}))


def may_join_quiet(text: str) -> bool:
    """Whether a record that takes only continuation lines (see
    :meth:`BlockAssembler.open_state`) might take ``text``, or a line that opens or chains a
    traceback or a torchrun summary might follow it: false means the line is a record of its own
    as far as such records are concerned."""
    return bool(_is_cont(text) or text.startswith(_TB_HEAD) or text.endswith(_TB_HEAD) or text.startswith(_CHAIN)
                or _SPAWN.match(text) or _FRAME_EQ.match(text))


def is_code_head(text: str) -> bool:
    """A traceback's code line (not its ``^^^`` marks, not a frame, not a continuation line) that can
    start the record of a traceback a paste cut above it."""
    return (text[:2] == "  " and _CODE_LINE.match(text) is not None and text.lstrip()[:1] not in "~^"
            and not _is_cont(text) and FRAME_LINE.match(text) is None)


def _bare(env: Envelope) -> bool:
    """No c10 / logger header: possibly a continuation line of a message printed just before
    (under torchrun --tee it still has `[default0]:`, so only the header is looked at)."""
    return env.level is None and env.source is None


def _compatible(key: tuple, line_key: tuple) -> bool:
    return all(b is None or a == b for a, b in zip(key, line_key))


def _last(b: "_Block") -> int:
    """The last input line of an open block, held blank lines included."""
    last = b.lines[-1][0]
    if b.pending and b.pending[-1][0] > last:
        return b.pending[-1][0]
    return last


def _plain(b: "_Block") -> bool:
    """A message block that takes a line (probe or not) only if :func:`_is_cont` says it is a
    continuation line (see ``BlockAssembler._accept``): it never wants any other line."""
    return b.kind == "message" and not b.state and not b.exc_type.endswith("ChildFailedError:")


def _takes_any_line(b: "_Block") -> bool:
    """An open block that may take a line holding no keyword and no continuation mark (a traceback's
    code lines, a torchrun failure table, a wrapped WorkNCCL record)."""
    kind = b.kind
    if kind in ("child_failed", "wrapped"):
        return True
    if kind == "traceback":
        return b.state in ("frames", "hframes", "code", "last_error", "after_spawn", "chain", "exc_open", "tf_roots")
    if kind == "message":
        # wrap: an exception line whose next line may be its rest; options: the option lines of OPTIONS_HEAD
        return b.state in ("last_error", "spawn", "wrap", "options", "stall", "tf_roots", "context")
    return False


def _takes_only_continuations(b: "_Block") -> bool:
    """An open block that takes continuation lines only (a message whose first line is all there is
    so far, or C++ frames)."""
    kind = b.kind
    if kind == "message":
        return b.state == ""
    return kind == "frames"


_NO_KEY = Envelope().stream_key()  # the stream of a line that carried no envelope at all
_PYWARN = ("pywarn",)  # the layer of Python's warnings (logdoc.envelope)


class _Block:
    __slots__ = ("kind", "state", "lines", "env", "size", "pending", "need", "exc_type", "exc_at", "joined", "join",
                 "last", "piece", "head", "head_next", "envs", "glue", "run", "last_head", "open_at")

    def __init__(self, kind: str, lineno: int, env: Envelope, text: str, state: str = "") -> None:
        self.kind = kind                     # traceback, child_failed, wrapped, message, frames
        self.state = state
        self.lines: list[tuple[int, str]] = [(lineno, text)]
        self.env = env
        self.size = len(text)
        self.pending: list[tuple[int, Envelope, str]] = []   # blank lines whose owner is not known yet
        self.need = 0                        # wrapped: lines still allowed
        self.exc_type = ""
        self.exc_at = -1                     # index in lines of the exception line whose message may be wrapped
        self.joined = 0                      # lines joined into the line before them (all lines)
        self.join = False                    # the next add() joins its line to the exception line
        self.last = lineno                   # the last input line taken
        self.piece = 0                       # the length of the last piece joined to the last line
        self.head = 0                        # the length of what the envelope peeled off the exception line
        self.head_next = 0                   # ... off the line the next add() joins to it
        self.envs: list[Envelope] | None = None  # a cut traceback's code lines: the envelope of each
        self.glue = " "                      # what the next join puts between the pieces
        self.run = 0                         # lines joined into the last line (its pieces after the first)
        self.last_head = 0                   # the length of what the envelope peeled off the last line
        self.open_at = -1                    # index in lines where the part of the message being read began, when
                                             # not at the exception line (TensorFlow's status after its node stacks)

    def add(self, lineno: int, text: str, head: int = 0) -> None:
        self.last = lineno
        if self.join:
            self.join = False
            ln, prev = self.lines[-1]
            joined = prev.rstrip() + self.glue + text.strip()
            self.lines[-1] = (ln, joined)
            self.joined += 1
            self.run += 1
            self.piece = len(text.strip()) + self.head_next
            self.size += len(text) + 1
            if self.state == "wrap" and (self.run >= MAX_WRAP_JOIN or not _open_sentence(joined)):
                self.state = ""
            return
        self.run = 0
        if self.state == "wrap":
            self.state = ""
        for ln, _env, t in self.pending:
            self.lines.append((ln, t))
            self.size += len(t) + 1
        self.pending.clear()
        self.lines.append((lineno, text))
        self.size += len(text) + 1
        self.last_head = head

    def wraps(self, text: str, probe: bool, width: int, head: int = 0, cut: bool = False) -> bool:
        """Whether ``text`` is the rest of the exception line just taken, cut by a hard wrap of a paste
        whose longest line is ``width`` characters (0: a log as written, which no one wrapped); then,
        unless probing, the next ``add`` joins it to that line. A wrap at that width breaks a line only
        where its next word would not fit: a piece that had room for it by :data:`WORD_SLACK` characters
        more was not cut there."""
        if not width or self.exc_at != len(self.lines) - 1 or self.pending or self.run >= MAX_WRAP_JOIN:
            return False
        if not self.run and _prefix_alone(text, self.head):
            return False  # the prefix the exception line's envelope peeled, alone: its stream's empty line
        prev = self.lines[-1][1]
        # a piece's width counts the prefix its envelope peeled (``head``: that of the line ``text`` is on)
        piece = self.piece if self.run else self.head + len(prev)
        glue = _glue(prev, piece, text, width, cut)
        if not _goes_on(prev, text, not glue) or piece + 1 + len(text.split(None, 1)[0]) + WORD_SLACK <= width:
            return False
        return self._joins(probe, head, glue)

    def _joins(self, probe: bool, head: int, glue: str) -> bool:
        """Unless probing, the next ``add`` joins its line to the last one with ``glue``; true."""
        if not probe:
            self.join = True
            self.head_next = head
            self.glue = glue
        return True

    def frame_rest(self, text: str, probe: bool, width: int, head: int = 0, cut: bool = False) -> bool:
        """Whether ``text`` (not indented) is the rest of the frame line just taken (``  File "...", line N,
        in f``), cut by a hard wrap at ``width``: the frame line reaches the width, and the two read as one
        frame line where the first alone does not (or the rest is the function's name alone); then,
        unless probing, the next ``add`` joins them."""
        if not width or self.pending or self.run >= MAX_WRAP_JOIN:
            return False
        prev = self.lines[-1][1]
        if not prev.lstrip().startswith('File "') or text[:1] in " \t" or not text:
            return False
        piece = self.piece if self.run else self.last_head + len(prev)
        if piece + 1 + len(text.split(None, 1)[0]) + WORD_SLACK <= width:
            return False
        # the glue that makes one frame line of the two (inside a word first, where the source was cut at a column)
        glue = next((g for g in ("", " ")[0 if cut and piece >= width else 1:]
                     if FRAME_LINE.match(prev.rstrip() + g + text.strip()) is not None), None)
        if glue is None or FRAME_LINE.match(prev) is not None and (_NAME_REST.fullmatch(text) is None or glue):
            return False
        return self._joins(probe, head, glue)

    def record(self) -> Record:
        return Record(self.lines[0][0], max(self.lines[-1][0], self.last), self.env,
                      "\n".join(t for _, t in self.lines), self.joined)


class BlockAssembler:
    """Joins multi-line records per stream. ``feed`` every line in order, then ``flush``."""

    def __init__(self, max_lines: int = 500, max_bytes: int = 256 * 1024) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        # the longest line of a paste (logdoc.paste: Paste.longest), within which a hard wrap may have cut an
        # exception line; 0 for a log as written: a program's output is not hard-wrapped
        self.wrap_width = 0
        # several lines of the source end at that width: a terminal cut them at a column (inside words),
        # not a word wrap (whose longest line is one line that happened to be longest)
        self.column_cut = False
        # a short source read line by line (logdoc.paste: Paste.every_line): a traceback the paste cut above
        # its last code lines is read from them (off for a log as written: its tracebacks have their frames)
        self.code_heads = False
        self._head = 0  # the prefix length of the line being fed
        self._open: dict[tuple, _Block] = {}     # insertion order = most recently touched last
        self._touched: dict[tuple, int] = {}     # key -> when its block was last touched (the order of _open)
        self._other: set[tuple] = set()          # the keys of the open blocks that are not plain
        # open_state in O(1): the keys of the open blocks that make it false (kept by _note and _close)
        self._loud: set[tuple] = set()           # not quiet: takes more than continuation lines, or no rank
        self._greedy: set[tuple] = set()         # may take a line without keyword, or the stream of no envelope
        # heap of (last line, n, key) as blocks changed (close_idle): no open record's last line is before the first's
        # (the fast paths ask it before they ask close_idle: logdoc/fast/alone.py, bars.py)
        self.lasts: list[tuple[int, int, tuple]] = []
        self._pushes = 0
        self._clock = 0

    @property
    def has_open_block(self) -> bool:
        """True while some record is still open: feed every line then, not only prefiltered ones."""
        return bool(self._open)

    def stream_open(self, key: tuple) -> bool:
        """Whether the stream ``key`` (``Envelope.stream_key``) has an open record."""
        return key in self._open

    def awaits_quote(self, env: Envelope) -> bool:
        """Whether an open record of the stream of ``env`` waits for the line after a bare ``Last error:``
        (the text of NCCL's last WARN, whatever its first word looks like)."""
        key = env.stream_key()
        for k, b in self._open.items():
            if b.state == "last_error" and _compatible(k, key):
                return True
        return False

    def open_state(self) -> tuple[bool, bool]:
        """What the open records may take, for readers that skip lines (with nothing open: both
        true). ``quiet``: every open record takes continuation lines only and belongs to a stream
        with a rank. ``no_greedy``: no open record may take a line that holds no keyword, and none
        belongs to the stream of lines without any envelope."""
        if not _fast[0]:
            return self.open_state_scan()
        return not self._loud, not self._greedy

    def open_state_scan(self) -> tuple[bool, bool]:
        """:meth:`open_state` by a look at every open record (its plain twin: ``LOGDOC_NO_FASTPATH``)."""
        quiet = no_greedy = True
        for key, b in self._open.items():
            if key[2] is None or not _takes_only_continuations(b):
                quiet = False
            if _takes_any_line(b) or key == _NO_KEY:
                no_greedy = False
        return quiet, no_greedy

    def bare_quiet(self) -> bool:
        """Whether every open record takes continuation lines only, belongs to a ranked stream or to
        the lines without any envelope, and one belongs to those (``Feeder``'s ``Gate.BARE``)."""
        b = self._open.get(_NO_KEY)
        if b is None or not _takes_only_continuations(b):
            return False
        if not _fast[0]:
            return self.bare_quiet_scan()
        return len(self._loud) == 1  # (the lines without an envelope have no rank: theirs is loud)

    def bare_quiet_scan(self) -> bool:
        """:meth:`bare_quiet` by a look at every open record (its plain twin: ``LOGDOC_NO_FASTPATH``)."""
        b = self._open.get(_NO_KEY)
        return b is not None and all(_takes_only_continuations(o) and (k == _NO_KEY or k[2] is not None)
                                     for k, o in self._open.items())

    def end_bare(self) -> list[Record]:
        """Close the record of the lines without any envelope (a line that cannot continue it passed)."""
        return self._close(_NO_KEY)

    def close_idle(self, before: int) -> list[Record]:
        """Close every open record whose last line (held blank lines included) is before line
        ``before``; return their records (in the order of the open records). The records whose last
        line changed are kept in a heap by that line (:meth:`_note`): only those before ``before`` are
        looked at (an entry whose record has moved on since is dropped)."""
        lasts = self.lasts
        if not _fast[0]:
            return self.close_idle_scan(before)
        if not lasts or lasts[0][0] >= before:
            return []
        idle: dict[tuple, None] = {}
        pop = heapq.heappop
        opened = self._open
        while lasts and lasts[0][0] < before:
            last, _, key = pop(lasts)
            b = opened.get(key)
            if b is not None and _last(b) == last:
                idle[key] = None
        out: list[Record] = []
        for key in sorted(idle, key=self._touched.__getitem__) if len(idle) > 1 else idle:
            out.extend(self._close(key))
        return out

    def close_idle_scan(self, before: int) -> list[Record]:
        """:meth:`close_idle` by a look at every open record (its plain twin: ``LOGDOC_NO_FASTPATH``)."""
        idle = [key for key, b in self._open.items() if _last(b) < before]
        out: list[Record] = []
        for key in idle:
            out.extend(self._close(key))
        return out

    # ---------------------------------------------------------------------------------------
    def feed(self, lineno: int, env: Envelope, text: str, head: int = 0) -> list[Record]:
        """``head``: the length of the prefix the envelope peeled off ``text``'s line."""
        quoted = message_before_head(text)
        out = self._feed_line(lineno, env, text, head)
        if quoted is not None:
            out.append(Record(lineno, lineno, env, quoted, -1))  # (its line is the traceback record's)
        return out

    def _feed_line(self, lineno: int, env: Envelope, text: str, head: int) -> list[Record]:
        text, head = at_traceback_head(text, head)
        self._head = head
        key = env.stream_key()
        if not self._open:
            if not self._may_start(text, env) and not self._code_head(text):
                return [Record(lineno, lineno, env, text)]
            out = self._start(key, lineno, env, text, [])
            self._note(key)
            return out
        if key != _NO_KEY:
            b = self._open.get(_NO_KEY)
            if b is not None and b.state == "wrap":
                # the line after an exception line without an envelope is of another stream: no hard
                # wrap cut that line (its rest would have no envelope either, and come next)
                b.state = ""
                self._note(_NO_KEY)
        block = self._open.get(key)
        target_key = key
        if _bare(env):
            # a continuation of a message whose first line carried the envelope: the most recently
            # touched compatible block that wants it (its own stream's block included). Plain
            # messages want continuation lines only: for any other line, only the others are asked.
            if _is_cont(text):
                cands = reversed(list(self._open))
            elif len(self._other) <= 1:
                cands = self._other
            else:
                cands = sorted(self._other, key=self._touched.__getitem__, reverse=True)
            for k in cands:
                if _compatible(k, key) and self._wants(self._open[k], text, env):
                    block, target_key = self._open[k], k
                    break
        try:
            return self._feed(lineno, env, text, key, block, target_key)
        finally:
            self._note(key)
            if target_key != key:
                self._note(target_key)

    def _note(self, key: tuple) -> None:
        """Keep ``_other`` in step with the block of ``key`` (after it may have changed)."""
        b = self._open.get(key)
        if b is None:
            self._other.discard(key)
            self._loud.discard(key)
            self._greedy.discard(key)
            return
        self._pushes += 1
        heapq.heappush(self.lasts, (_last(b), self._pushes, key))  # n: keys (None beside ints) never compared
        if _plain(b):
            self._other.discard(key)
        else:
            self._other.add(key)
        if key[2] is None or not _takes_only_continuations(b):
            self._loud.add(key)
        else:
            self._loud.discard(key)
        if key == _NO_KEY or _takes_any_line(b):
            self._greedy.add(key)
        else:
            self._greedy.discard(key)

    def _feed(self, lineno: int, env: Envelope, text: str, key: tuple, block, target_key: tuple) -> list[Record]:
        out: list[Record] = []
        if block is not None:
            verdict = self._accept(block, text, env)
            if verdict in ("take", "hold") and (len(block.lines) + len(block.pending) >= self.max_lines
                                                or block.size + len(text) > self.max_bytes):
                verdict = "end"
            if verdict == "take":
                block.add(lineno, text, self._head)
                self._touch(target_key)
                if block.state == "done":
                    out.extend(self._close(target_key))
                return out
            if verdict == "hold":
                block.pending.append((lineno, env, text))
                self._touch(target_key)
                return out
            out.extend(self._close(target_key))
        if key in self._open:                      # the line's own stream still has a block open
            b = self._open[key]
            verdict = self._accept(b, text, env)
            if verdict == "take":
                b.add(lineno, text, self._head)
                return out
            out.extend(self._close(key))
        if not self._may_start(text, env) and not self._code_head(text):
            out.append(Record(lineno, lineno, env, text))
            return out
        return self._start(key, lineno, env, text, out)

    def flush(self) -> list[Record]:
        out: list[Record] = []
        for key in list(self._open):
            out.extend(self._close(key))
        return out

    # ---------------------------------------------------------------------------------------
    def _touch(self, key: tuple) -> None:
        self._open[key] = self._open.pop(key)
        self._clock += 1
        self._touched[key] = self._clock

    def _close(self, key: tuple) -> list[Record]:
        block = self._open.pop(key, None)
        if block is None:
            return []
        self._touched.pop(key, None)
        self._other.discard(key)
        self._loud.discard(key)
        self._greedy.discard(key)
        if block.envs is not None:  # code lines no exception line followed: each line a record, as it was
            return [Record(ln, ln, e, t) for (ln, t), e in zip(block.lines, block.envs)]
        out = [block.record()]
        for ln, env, t in block.pending:          # held blank lines that turned out not to belong
            out.append(Record(ln, ln, env, t))
        return out

    @staticmethod
    def _may_start(text: str, env: Envelope) -> bool:
        """Cheap: could this line open a block, or be followed by lines that belong to it?"""
        if not text:
            return False
        c = text[0]
        if c == "T" and text.startswith(_TB_HEAD) or text[-1:] == ":" and text.endswith(_TB_HEAD):
            return True
        if c == "=" and _FRAME_EQ.match(text):
            return True
        if _is_cont(text):
            return True
        if c == "[" and (text.startswith("[Rank") or text.startswith("[PG")):
            return True
        if c == "t" and text.startswith("terminate called"):
            return True
        if c in "[ \tRF" and SUMMARY_BODY.match(text):
            return True
        if c in " \tF" and FRAME_LINE.match(text):
            return True
        if "Error" in text or "error" in text or "Exception" in text or "exception" in text:
            return True
        if (env.level is not None or env.source is not None) and env.layers[-1:] != _PYWARN:
            return True                            # c10 / logger lines may carry a multi-line message
            # (not a Python warning's: its next line is the source line that issued it)
        if c in "RD-" and (text.startswith("Rank ") or text.startswith("Detected mismatch") or _SPAWN.match(text)):
            return True
        return False

    def _start(self, key: tuple, lineno: int, env: Envelope, text: str, out: list[Record]) -> list[Record]:
        if text.startswith(_TB_HEAD):
            b = _Block("traceback", lineno, env, text, "frames")
        elif text[0] in " \tF" and FRAME_LINE.match(text):
            b = _Block("traceback", lineno, env, text, "hframes")  # the traceback without its head
        elif _FRAME_EQ.match(text):
            b = _Block("child_failed", lineno, env, text, "head")
        elif text[0] in "[ \tRF" and SUMMARY_BODY.match(text):
            b = _Block("child_failed", lineno, env, text, "cut")  # the summary without its head
        elif _is_cont(text) and (text.startswith("Exception raised from ") or text.startswith("frame #")
                                 or text.startswith("<omitting")):
            b = _Block("frames", lineno, env, text)
        elif self._code_head(text):
            b = _Block("traceback", lineno, env, text, "code")  # the traceback cut above its code line
            b.envs = [env]
        elif self._wrapped(text):
            b = _Block("wrapped", lineno, env, text)
            b.need = 4
        else:
            b = _Block("message", lineno, env, text)
            m = _EXC_LINE.match(text)
            if m:
                b.exc_type = m.group(0)
                b.exc_at = 0
                b.head = self._head
                if "ProcessRaisedException" in b.exc_type:
                    b.state = "spawn"
                elif _TF_ROOTS.match(text):
                    b.state = "tf_roots"  # its root errors follow (no keyword in some: `  (1) Resource exhausted: OOM ...`)
                elif text.rstrip().endswith(_TF_GRAPH_ERROR):
                    b.kind, b.state = "traceback", "exc_open"  # its node stacks and status follow (TensorFlow >= 2.8)
                elif _EXC_CONTEXT_OPEN.match(text):
                    b.state = "context"   # its message is the next line
                elif _open_sentence(text):
                    b.state = "wrap"  # its next line may be the rest of it: not a quiet record (_takes_any_line)
            elif text.rstrip().endswith(OPTIONS_HEAD):
                b.state = "options"  # its option lines follow, one a line (no keyword, no continuation mark)
            elif STALL_HEAD in text:
                b.state = "stall"    # the ranks it waits for follow, one a line
        b.last_head = self._head
        self._open[key] = b
        self._clock += 1
        self._touched[key] = self._clock
        return out

    def _code_head(self, text: str) -> bool:
        """A code line of a traceback whose frame lines a paste cut (see :attr:`code_heads`)."""
        return self.code_heads and is_code_head(text)

    @staticmethod
    def _wrapped(text: str) -> bool:
        """A ProcessGroupNCCL record cut short by a line break (torch's own, or a paste's hard wrap
        anywhere in the watchdog timeout record)."""
        if _PG_OPEN.match(text):
            return True
        if "WorkNCCL(" in text and ")" not in text[text.find("WorkNCCL("):]:
            return True
        t = text.rstrip()
        if t.startswith("[Rank") or t.startswith("[PG"):
            tail = t[t.find("]") + 1:].strip()
            if tail in ("Collective", "Work", "Watchdog caught collective operation timeout:"):
                return True
            if tail.endswith(")") and "WorkNCCL(" in tail:
                return True
            if not tail and t.endswith("]"):
                return True                          # the prefix alone: the record is on the next line
            if tail and _WATCHDOG_TIMEOUT.startswith(tail):  # no log line ends so: a cut one
                return True                          # cut before WorkNCCL(
            if _WATCHDOG_TIMEOUT in tail and "before timing out" not in tail:
                return True                          # cut after the WorkNCCL(...) part
        return False

    def _wants(self, block: _Block, text: str, env: Envelope) -> bool:
        """Would this bare line continue that block? (used to pick a block in another stream)"""
        return self._accept(block, text, env, probe=True) in ("take", "hold")

    def _accept(self, b: _Block, text: str, env: Envelope, probe: bool = False) -> str:
        """'take' the line, 'hold' it (a blank line, owner unknown), or 'end' the block."""
        kind = b.kind
        if kind == "traceback":
            if b.state == "code":
                return self._accept_code(b, text, env, probe)
            return self._accept_traceback(b, text, probe)
        if kind == "child_failed":
            return self._accept_child_failed(b, text, probe)
        if kind == "wrapped":
            if not text.strip():
                return "hold" if len(b.pending) < 2 else "end"
            if b.need <= 0:
                return "end"
            if text.startswith(_TB_HEAD) or _FRAME_EQ.match(text) or env.level is not None:
                return "end"
            if not probe:
                b.need -= 1
                prev = b.lines[-1][1]
                # a soft wrap dropped a blank, a hard wrap cut a word: either way the record is whole
                if self._complete(prev + " " + text, b) or self._complete(prev + text, b):
                    b.kind = "message"
            return "take"
        if kind == "frames":
            if text.startswith("frame #") or text.startswith("<omitting") or text.startswith("Exception raised from "):
                return "take"
            return "end"
        # a message: absorb continuation lines
        if b.state == "last_error":
            if not probe:
                b.state = ""
            return "take" if text.strip() else "end"
        if b.state == "spawn":
            if not text.strip():
                return "hold"
            if _SPAWN.match(text):
                if not probe:
                    b.kind, b.state = "traceback", "after_spawn"
                return "take"
            return "end"
        if b.state == "options":
            return "take" if len(b.lines) <= MAX_OPTION_LINES and _OPTION_LINE.match(text) else "end"
        if b.state == "stall":
            return "take" if len(b.lines) <= MAX_STALL_LINES and _STALL_LINE.match(text) else "end"
        if b.state == "tf_roots":
            if not text.strip() and not b.pending:
                return "hold"  # (the blank line after an OOM's hint, before the next root error)
            if len(b.lines) <= MAX_TF_ROOT_LINES and _TF_ROOT_LINE.match(text):
                return "take"
            if not probe:
                b.state = ""
        if b.state == "context":
            if not probe:
                b.state = ""
            if (text.strip() and not text.startswith(_TB_HEAD) and _EXC_LINE.match(text) is None
                    and _OTHER_RECORD.match(text) is None and _FRAME_EQ.match(text) is None):
                return "take"
        if not text:
            return "end"
        if b.state == "wrap" and b.wraps(text, probe, self.wrap_width, self._head, self.column_cut):
            return "take"
        if b.exc_type.endswith("ChildFailedError:") and _FRAME_EQ.match(text):
            if not probe:
                b.kind, b.state = "child_failed", "head"
            return "take"
        if _is_cont(text):
            if not probe and text.startswith("Last error:") and not text[len("Last error:"):].strip():
                b.state = "last_error"
            return "take"
        return "end"

    @staticmethod
    def _complete(text: str, b: _Block) -> bool:
        """Whether a wrapped record looks whole now (then it only absorbs continuation lines)."""
        return (("milliseconds before timing out" in text) or ("last completed work:" in text)
                or ("raised the following async exception:" in text and not text.rstrip().endswith("exception:"))
                or ("failure detected by watchdog at work sequence id:" in text)
                or ("timed out in blocking wait" in text))

    def _accept_code(self, b: _Block, text: str, env: Envelope, probe: bool) -> str:
        """Code lines (and their ``^^^`` marks) up to the exception line that ends them."""
        if (len(b.lines) < MAX_CODE_LINES and text[:1] == " " and text.strip() and not _is_cont(text)
                and FRAME_LINE.match(text) is None):
            if not probe:
                b.envs.append(env)
            return "take"
        if _EXC_LINE.match(text) is None:
            return "end"
        if not probe:
            b.state = _after_exception(text)
            b.envs = None
            b.exc_type = text
            b.exc_at = len(b.lines)
            b.head = self._head
        return "take"

    def _accept_traceback(self, b: _Block, text: str, probe: bool) -> str:
        st = b.state
        if st in ("frames", "hframes"):
            if text.startswith(" ") or text.startswith("\t"):
                return "take"
            if not text.strip():
                return "hold" if len(b.pending) < 2 else "end"
            if is_elision(text):
                return "take"                          # `...` where a paste left frames out: not the exception
            if b.frame_rest(text, probe, self.wrap_width, self._head, self.column_cut):
                return "take"                          # the rest of a frame line a hard wrap cut
            if st == "hframes" and _EXC_LINE.match(text) is None:
                return "end"                           # frames without their head: only an exception line ends them
            if not probe:
                b.state = _after_exception(text)
                b.exc_type = text
                b.exc_at = len(b.lines)
                b.head = self._head
            return "take"                          # the exception line
        if st == "after_spawn":                   # "-- Process N terminated ..." seen
            if text.startswith(_TB_HEAD):
                if not probe:
                    b.state = "frames"
                return "take"
            if not text.strip():
                return "hold"
            return "end"
        if st == "chain":                          # a chain sentence seen: blank, then Traceback
            if not text.strip():
                return "hold"
            if text.startswith(_TB_HEAD):
                if not probe:
                    b.state = "frames"
                return "take"
            return "end"
        # after the exception line
        if not text.strip():
            return "hold" if len(b.pending) < 2 else "end"
        if st == "exc_open":                       # the message on the lines after `Type:`
            if len(b.pending) < 2 and _TF_NODE.match(text):
                if not probe:
                    b.state = "tf_node"            # a node's definition stack (TensorFlow >= 2.8)
                return "take"
            if len(b.pending) < 2 and _TF_ROOTS.match(text):
                if not probe:
                    b.state, b.open_at = "tf_roots", len(b.lines)  # the status after the node stacks
                return "take"
            if (len(b.pending) < 2 and len(b.lines) - max(b.exc_at, b.open_at) + len(b.pending) <= MAX_OPEN_MESSAGE
                    and not text.startswith(_TB_HEAD)
                    and not text.startswith(_CHAIN) and _SPAWN.match(text) is None and _EXC_LINE.match(text) is None
                    and _FRAME_EQ.match(text) is None and _FRAME_DASH.match(text) is None
                    and _OTHER_RECORD.match(text) is None and not _is_cont(text)):
                return "take"
            if not probe:
                b.state = "after_exc"
        if st == "tf_node":                        # TensorFlow's node stack: its frames, `Node: 'n'`, another node
            if not b.pending and len(b.lines) - b.exc_at <= MAX_TF_NODE_LINES:
                if text.startswith("  ") or _TF_NODE.match(text):
                    return "take"
                if text.startswith(_TF_NODE_END):
                    if not probe:
                        b.state, b.open_at = "exc_open", len(b.lines) + 1  # the status (or another node) follows
                    return "take"
            if not probe:
                b.state = "after_exc"
        if st == "tf_roots":                       # TensorFlow's root errors after `N root error(s) found.`
            if len(b.lines) - max(b.exc_at, b.open_at) <= MAX_TF_ROOT_LINES and _TF_ROOT_LINE.match(text):
                return "take"
            if not probe:
                b.state = "after_exc"
        if text.startswith(_CHAIN):
            if not probe:
                b.state = "chain"
            return "take"
        if text.startswith(_TB_HEAD):
            if b.pending or "ProcessRaisedException" in b.exc_type:
                if not probe:
                    b.state = "frames"
                return "take"
            return "end"
        if _SPAWN.match(text):
            if not probe:
                b.state = "after_spawn"
            return "take"
        if "ChildFailedError" in b.exc_type and _FRAME_EQ.match(text):
            if not probe:
                b.kind, b.state = "child_failed", "head"
            return "take"
        if b.state == "last_error":
            if not probe:
                b.state = "after_exc"
            return "take"
        if _is_cont(text):
            if not probe and text.startswith("Last error:") and not text[len("Last error:"):].strip():
                b.state = "last_error"
            return "take"
        if b.wraps(text, probe, self.wrap_width, self._head, self.column_cut):
            return "take"
        return "end"

    def _accept_child_failed(self, b: _Block, text: str, probe: bool) -> str:
        # states: head (after the opening ====), body, root (after "Root Cause"), done; cut: opened
        # by a line of the body (its head cut by a paste): only the summary's own lines, up to its border
        if b.state == "cut":
            if _FRAME_EQ.match(text):
                if not probe:
                    b.state = "done"
                return "take"
            if (SUMMARY_BODY.match(text) or _FRAME_DASH.match(text) or text.strip() == "<NO_OTHER_FAILURES>"
                    or (text[:1] in " \t" and text.strip())):
                return "take"
            return "end"
        if b.state == "head":
            if not text.rstrip().endswith(" FAILED"):
                return "end"
            if not probe:
                b.state = "body"
            return "take"                          # "<script> FAILED"
        if _FRAME_EQ.match(text):
            if b.state == "root":
                if not probe:
                    b.state = "done"
                return "take"
            return "end"
        if text.startswith("Root Cause (first observed failure)"):
            if not probe:
                b.state = "root"
            return "take"
        return "take"


# ---------------------------------------------------------------------------------------------
# queries for readers that skip lines (logdoc/fast/): what may open a record, asked of this module

may_start = BlockAssembler._may_start  # may_start(text, env): could this line open a record?

# The first characters of the lines :func:`may_start` accepts on a line with no envelope and without
# one of :data:`MAY_START_WORDS`: one per test in ``_may_start`` (traceback head, summary frame,
# ``[Rank``/``[PG``, ``terminate called``, the summary's body, ``Rank ``/``Detected mismatch``/spawn), and the first
# characters of every continuation line (``_is_cont``: a tab, ``nccl...: ``, ``#N``, the prefixes).
MAY_START_FIRST = frozenset("T=[tRD-\tn# F") | frozenset(p[0] for p in _CONT_PREFIXES)
# Substrings one of which is in every line ``_may_start`` accepts by its word test (Error, error,
# Exception, exception).
MAY_START_WORDS = ("rror", "xception", _TB_HEAD)  # (a traceback's head after a logger's words)


def message_before_head(text: str) -> str | None:
    """The exception's message a logger printed before its traceback on the same line, as ``"%s, %s" % (e,
    traceback.format_exc())`` prints them (vLLM's multiprocessing worker: ``Exception in worker VllmWorkerProcess while
    processing method init_device: NCCL error: unhandled cuda error ..., Traceback (most recent call last):``), as a
    record of its own; None for a logger's words alone (``Scheduler hit an exception: Traceback ...``)."""
    if text[-1:] != ":" or not text.endswith(_TB_HEAD):
        return None
    words = text[:-len(_TB_HEAD)].rstrip()
    if words[-1:] != "," or not words[:-1].strip():
        return None
    return words[:-1].rstrip()


def at_traceback_head(text: str, head: int) -> tuple[str, int]:
    """``text`` and ``head`` from a traceback's head on when a logger's own words precede it (`Scheduler hit
    an exception: Traceback (most recent call last):`): the words are the logger's, not the exception's."""
    if text[-1:] == ":" and text.endswith(_TB_HEAD) and len(text) > len(_TB_HEAD):
        return _TB_HEAD, head + len(text) - len(_TB_HEAD)
    return text, head
