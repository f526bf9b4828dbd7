"""Hard-wrapped lines: the width a source was cut at, the rests that continue a cut line (read with
the catalogs: a join is kept where the message reads more), and a message cut inside a word.
"""
from __future__ import annotations

import re
from collections import Counter

from ..classify.cut import ends_with_mark
from ..cuttail import across, one_word, two_words
from ..envelope import unwrap
from ..lazyre import lazy_re
from ..nccl import HEADER as _NCCL_HEADER
from ..read.prefilter import candidate
from .markdown import unlinked
from .common import _EXC_NAME, _EXC_WORD, LONG, MAX_WRAP_JOIN, WRAP_MIN_LINES, WRAP_MIN_WIDTH, WRAP_WIDE

# the rest of a line cut inside a word or a sentence: lower case or a mark first, and no label of its own (`host: `)
_RESTLIKE = lazy_re(r"(?![\w.-]+: )[a-z.,;:)\]>-]")


def _restlike(text: str) -> bool:
    """A line that reads as the rest of a line cut inside a word or a sentence (:data:`_RESTLIKE`), after
    the one blank a cut beside it leaves first."""
    return _RESTLIKE.match(text, 1 if text[:1] == " " else 0) is not None


def _wrap_width(lines: list[str], lengths: list[int] | None = None) -> int:
    """A width at which the lines were cut: no line is longer, and at least :data:`WRAP_MIN_LINES`
    lines of exactly that length are cut (:func:`_cut`), most of the lines of that length; from
    :data:`WRAP_WIDE` columns on, two lines are enough when both are cut and each rest reads as one
    (:data:`_RESTLIKE`: a paste of a few lines wrapped by a terminal, ``... in /dev/sh`` / ``m. The ...``).
    ``lengths``: the lines' lengths as cut, where they differ from the lines' own."""
    at = lengths if lengths is not None else [len(t) for t in lines]
    lens = Counter(n for n in at if n >= WRAP_MIN_WIDTH)
    if not lens:
        return 0
    w = max(lens)
    # (two lines cut at one wide width and nothing longer, each before a rest of its own, say it as well)
    least = WRAP_MIN_LINES if w < WRAP_WIDE or lens[w] > 2 else 2
    if lens[w] < least:
        return 0
    pairs = [(t, lines[i + 1]) for i, t in enumerate(lines[:-1])
             if at[i] == w and _cut(t, lines[i + 1]) and (least > 2 or _restlike(lines[i + 1]))]
    rests = Counter(rest for _, rest in pairs)
    # a line printed again after each is a line of its own, unless the cut fell beside a blank that one
    # of the pieces kept (``... for HCA `` / ``0 'mlx5_0'``, ``... 'unknown result`` / `` code'``: every
    # rank's copy of one message cut at the same column)
    cuts = sum(1 for t, rest in pairs if rests[rest] == 1 or t[-1:] == " " or rest[:1] == " ")
    return w if cuts >= least and (2 * cuts > lens[w] if least > 2 else cuts == lens[w]) else 0


def _joined(parts: list[str], readings: int) -> tuple[str, int]:
    """The pieces of a line cut at a fixed width, joined; and how many catalog readings are left of the
    source's ``readings``. A cut between two letters is inside a word, unless the piece after it lost the
    blank it began with (a page that drops every line's leading blanks): there the catalog decides, and the
    blank goes back in when the text then reads more of a known message (``... mismatch between
    collectives`` / ``on ranks. Rank 2 is running ...``), or, where no reading decides (a message of no
    catalog), when the letters either side are two words of the catalogs' vocabulary and together not one
    (:func:`logdoc.cuttail.two_words`: the blank fell at the cut and ended the row)."""
    text = parts[0]
    for p in parts[1:]:
        if text[-1:].isalnum() and p[:1].isalpha():
            blank = 0
            if readings > 0:
                readings -= 2
                blank = _reading(text + " " + p)[1] - _reading(text + p)[1]
            if blank > 0 or blank == 0 and two_words(text, p):
                text += " "  # (the catalog reads more with it, or the letters are two words of its vocabulary)
        text += p
    return text, readings


def _cut(line: str, nxt: str) -> bool:
    """Whether ``nxt`` can be the rest of ``line`` cut at a fixed width: it is not empty, not
    indented (a wrap adds no indentation; a table row or a traceback frame has it) unless the cut fell
    inside a run of blanks (``line`` ends with one: a progress bar's padding), does not start the way
    ``line`` starts (the same message printed again) and starts nothing of its own; and ``line`` ends with
    no viewer's cut mark (``... custom call 'x… [truncated]``: its rest was dropped, not moved down)."""
    if len(nxt) > LONG or _rule(line) or _rule(nxt):
        return False  # a separator line (==== or ----, as torchrun's summary draws) is whole
    if ends_with_mark(line):
        return False
    if nxt[:1] == " " and (nxt[1:2] not in ("", " ", "\t") or line[-1:] == " "):
        nxt = nxt.lstrip(" ")
        if nxt.startswith(("File ", "frame #", "at ")):
            return False
    if not nxt or nxt[0] == "\t" or nxt[:2] == "  " or not nxt.strip() or line[:8] == nxt[:8]:
        return False  # (one blank first: the cut fell on a word boundary)
    return not _new_line(nxt)


# ------------------------------------------------------------------------------------------------
# a message cut inside a word

MIDWORD_TRIES = 64   # pairs of lines read, per source
# a link's target cut by the wrap (`... peer [10.1.2.3](http://10.1.2.3` / `/)<49577> ...`): no blank was there
_OPEN_LINK = lazy_re(r"\]\((?:https?|ftp)://[^()\s]*\Z")
_LINK_TAIL = 320
# an NCCL line's header that the cut left alone on its line (`... transport/nvls.cc:244 NCCL WARN` / ` Cuda failure
# 1 'invalid argument'`): the message after it, which reads alone as well, is its own
_HEADER_ONLY = lazy_re(r"\bNCCL (?:WARN|INFO|ERROR|ABORT|TRACE)\Z")
_KEYWORD_CUT = 16    # characters of the next line that may hold the rest of a word the prefilter knows (`... NC` / `CL WARN`)
MAX_PENDING = 4      # readings of a join kept while its pieces do not read whole (a blank at each cut or none)
_WORD_END = lazy_re(r"[A-Za-z0-9_]$")
_WORD_START = lazy_re(r"[A-Za-z0-9_/]|[.:,;)\]>'\"-]")  # (a path cut before its next part: `.../tcp` / `/device.cc:276]`; a number, an address or a name cut before a mark: `10.0` / `.0.2<443>`, `...NCCL.cpp` / `:1269, `)


def _reading(text: str) -> tuple[str | None, int]:
    """(the catalog template a line reads as whole, how many literal characters of its format it
    matched); (None, 0) when it reads as none, or only as an exception of no known message or an NCCL
    format made of ``%s`` alone."""
    from .. import nccl
    from ..classify.bare import classify_bare
    from ..classify.torch import classify as classify_torch

    env, msg = unwrap(unlinked(text))  # (links are read as their text after the joins: a wrap may cut one)
    p = nccl.classify(msg, env)
    if p is None:
        p = classify_torch(msg, env)
    if p is None:
        p = classify_bare(msg)  # an NCCL message pasted without its header
    if p is None or not p.template or p.kind == "torch.exception" and not (p.fields or {}).get("cause"):
        return None, 0
    fields = p.fields or {}
    if fields.get("cut") or fields.get("abridged"):
        return None, 0
    fmt = fields.get("format")
    if isinstance(fmt, str):
        literal = len(re.sub(r"%[-+ #0-9.]*[a-zA-Z]+", "", fmt).replace(" ", "").replace(":", ""))
        if literal < 4:
            return None, 0
        return p.template, literal
    return p.template, (1 << 20) + sum(v not in (None, "") for v in fields.values())  # (the fields it names)


# a character of a field's value on either side of a cut inside it (a path, an address, a name)
_FIELD_EDGE = lazy_re(r"[\w/.:@%+=~-]")
_LAST_FIELD = lazy_re(r"%[-+ #0-9.]*[sp]\s*\Z")


def _last_field_open(text: str) -> bool:
    """Whether the catalog format that ``text`` reads as ends with a string field (``Could not find real
    path of %s``), so a cut at the text's end may have fallen inside that field's value."""
    from .. import nccl

    env, msg = unwrap(unlinked(text))
    p = nccl.classify(msg, env)
    fmt = (p.fields or {}).get("format") if p is not None else None
    return isinstance(fmt, str) and _LAST_FIELD.search(fmt) is not None


def _next_piece(out: list[str], i: int, skip: set[int]) -> int:
    """The index of the line after line ``i`` (0-based) that may continue it: past the lines whose
    numbers are in ``skip`` (lines joined away before the wraps were read)."""
    j = i + 1
    while j < len(out) and (j + 1) in skip and not out[j]:
        j += 1
    return j


def _midword_joins(out: list[str], widths: list[int], gone: set[int], skip: frozenset | set = frozenset()) -> bool:
    """A message that a terminal, a pager or a page cut at its width inside a word (``... clients joi`` /
    ``ned.``; an NCCL WARN ``... with status=12 opc`` / ``ode=0 len=0 vendor err 129 ...``), where the
    source has too few cut lines for :func:`_wrap_width`: a line of the source's greatest width (at least
    :data:`WRAP_MIN_WIDTH`) that ends with a word, followed by a line that starts with one, is joined with
    it when the joined text reads as a catalog message whole and more of its format than the first line
    alone reads, and the second line alone is not that message: with a blank (the cut fell on one, which
    the paste dropped with the line's end) when that reads so, else without (the cut fell inside a word).
    A middle piece that reads nothing yet (a message cut more than once) waits for the next one. Two real
    lines are never joined: the first must end at the width, and only the join reads the message (more of
    its format, or more of its fields), or a text of a closed list (a ``strerror`` text, a CUDA error
    string: :func:`logdoc.cuttail.across`) runs over the cut, for the releases older than the catalog
    (NCCL 2.2's ``include/socket.h:311 WARN Socket creation failed : Ad`` / ``dress family not supported
    by protocol``). A piece that starts with a mark (``.0.2<443>``, ``:1269, ...``) is tried without a
    blank first. The numbers of the lines joined away are added to ``gone``; the lines whose numbers are in
    ``skip`` were joined away before (:func:`_next_piece`)."""
    width = max(widths, default=0)
    if width < WRAP_MIN_WIDTH:
        return False
    tries = 0
    changed = False
    i = 0
    while i < len(out) - 1 and tries < MIDWORD_TRIES:
        t = out[i]
        if (widths[i] < width - 1 or not t.strip() or len(t) > LONG or _starts_record(t)
                or not candidate(t) and not candidate(t + out[i + 1][:_KEYWORD_CUT])):
            i += 1  # (a ProcessGroupNCCL record's wrap the block assembler reassembles itself)
            continue
        j = _next_piece(out, i, skip)
        last = i  # the last line joined into line i
        first = first_literal = None  # line i's own reading, read once a next line may continue it
        texts = [t]  # the join so far, read with a blank or without at each cut not yet read whole
        while j < len(out) and j - i < MAX_WRAP_JOIN and tries < MIDWORD_TRIES:
            nxt = out[j]
            if (not nxt or len(nxt) > LONG or _rule(nxt) or nxt[:8] == t[:8]
                    or _WORD_START.match(nxt, 1 if nxt[0] == " " else 0) is None and nxt[:2] != " ["
                    or _new_line(nxt) and not one_word(texts[-1], nxt)):
                break  # (what reads as a line of its own may be the rest of a word: ``... ncc`` / ``lSystemError: ...``)
            if first_literal is None:
                first, first_literal = _reading(t)
            tries += 1
            # the cut fell on a blank that the paste dropped (the line's end is stripped), or inside a
            # word (a blank the cut left first on the line stays)
            seps = (("",) if nxt[0] == " " or texts[0][-1:] == " " or _OPEN_LINK.search(texts[0][-_LINK_TAIL:])
                    else ("", " ") if nxt[0] in ".:,;)]>" or one_word(texts[0], nxt) or _in_number(texts[0], nxt)
                    else (" ", ""))  # (no blank before a mark, or inside a word of the catalogs: first)
            texts = [x + sep + nxt for x in texts for sep in seps][:MAX_PENDING]
            whole, literal, text = None, first_literal, ""
            for cand in texts:  # the reading that reads most of its format (the first on a tie)
                got, n = _reading(cand)
                if got is not None and n > literal and (got != first or n > first_literal):
                    whole, literal, text = got, n, cand
            if whole is None:
                # no catalog format reads more of it (a release older than the catalog; a format ending in
                # %s), but a closed list's text (a strerror, a CUDA error string) runs over the cut
                text = next((c for c in texts if across(c, len(c) - len(nxt))), "")
                if text:
                    whole, literal = _reading(text)
                    whole = whole or ""
                elif (first is not None and widths[j] < width - 1 and _FIELD_EDGE.match(nxt)
                      and len(nxt.split()) == 1 and _reading(nxt)[0] is None):
                    # the cut fell inside the format's last field (a path, a name: `... real path of
                    # /sys/class/pci_bus/ffffff` / `f/../../fffffff:ff:f`): no reading gains by the rest, the
                    # field does; the rest reads as nothing of its own, ends before the width (no blank at the cut)
                    # and is one word, as the rest of one value is (the next line of a log after a line that was
                    # the widest, `slurmstepd: error: *** STEP 90317.0 ON ...` after NCCL's `... stream 0x55c7f4a14d30`,
                    # is no rest of its pointer)
                    k = len(nxt) + 1
                    text = next((c for c in texts if len(c) > k and _FIELD_EDGE.match(c, len(c) - k)
                                 and _last_field_open(c[:1 - k])), "")
                    if text:
                        whole, literal = first, first_literal
                elif first is None and j == i + 1 and _untemplated_warn(t) and _reading(nxt)[0] is None:
                    # an NCCL WARN of no catalog (a network plugin's, aws-ofi-nccl's `NET/OFI Unable to register
                    # memory (type = 2) f` / `or device 0. RC: -22, ...`): no reading can gain, the letters across
                    # the cut decide: they read as one word of the catalogs' vocabulary (two words may be two lines)
                    if one_word(t, nxt):
                        text, whole, literal = t + nxt, "", 0
            if whole is None or _reading(nxt)[0] == whole and _HEADER_ONLY.search(t) is None:
                if widths[j] < width - 1:
                    break  # a line that ends before the width ends the message: no join reads it
                j = _next_piece(out, j, skip)
                continue  # a middle piece of a message cut more than once: read with the next one
            for k in range(last + 1, j + 1):
                out[k] = ""
                gone.add(k + 1)
            out[i] = text
            changed = True
            last = j
            first, first_literal, texts = whole, literal, [text]
            if widths[j] < width - 1 or _WORD_END.search(nxt) is None:
                break  # the rest ended before the width: the message is whole
            j = _next_piece(out, j, skip)
        i = last + 1
    return changed


def _untemplated_warn(text: str) -> bool:
    """Whether ``text`` is an NCCL WARN line (with its header) whose message no catalog format reads."""
    from .. import nccl

    env, msg = unwrap(unlinked(text))
    p = nccl.classify(msg, env)
    return p is not None and p.kind == "nccl.warn" and not p.template


def _in_number(left: str, right: str) -> bool:
    """A cut between two digits (``... peer 10.4.127.143<4`` / ``9577> with error 12``): inside a number first."""
    return left[-1:].isdigit() and right[:1].isdigit()


def _rule(text: str) -> bool:
    """A line drawn with one repeated character (``=====``, ``-----``, ``*****``)."""
    t = text.strip()
    return len(t) >= 8 and t.count(t[0]) == len(t) and not t[0].isalnum()


def _new_line(text: str) -> bool:
    """A line that starts something of its own (an envelope, an NCCL header, a traceback ...)."""
    if not text or text[0] in " \t":
        return text[:1] in (" ", "\t") and text.lstrip().startswith(("File ", "frame #"))
    if len(text) > LONG or text.startswith(("Exception raised from ", "frame #")):
        return True  # (c10's backtrace starts on a line of its own after an exception's text)
    env, msg = unwrap(text)
    if any(layer != "paste" and not layer.startswith("ray-repeat-") for layer in env.layers):
        return True  # (a note at the line's end, Ray's ``[repeated 15x across cluster]``, starts nothing)
    return (_NCCL_HEADER.match(msg) is not None or msg.startswith(("Traceback", "During handling", "The above"))
            or _EXC_WORD.match(msg) is not None and (":" in msg[:80] or _EXC_NAME.fullmatch(msg.rstrip()) is not None))


def _starts_record(text: str) -> bool:
    """A line whose wrap the block assembler reassembles itself (a ProcessGroupNCCL record)."""
    from ..blocks import BlockAssembler

    if len(text) > LONG:
        return True
    _env, msg = unwrap(text)
    return BlockAssembler._wrapped(msg)


# ------------------------------------------------------------------------------------------------
# a terminal's rows copied as one line

# A copy from a terminal that pads every row with blanks to the terminal's width and drops the line ends (a web
# console, a screen or tmux buffer saved without its line ends): one long line in which each row of the screen stands
# at a multiple of the width, the rows that end early padded (`... prematurely.<blanks>Last error:<blanks>NET/IB : Got
# completion ...`). The width is the one at which every padding run ends at a row's start (a row's own
# indentation after it, :data:`ROW_INDENT` at most), two such rows at least; each row is a line, a row that fills the
# width (a line the terminal wrapped) continued by the next.
_PAD_RUN = lazy_re(r"(?<! ) {6,}(?=\S)")  # (a row's padding; shorter runs of blanks stand inside rows: tables, NCCL's rings)
ROW_INDENT = 16
PADDED_MIN_ROWS = 2
MAX_PADDED_RUNS = 24


def padded_rows(t: str) -> list[str] | None:
    """The lines of a terminal's rows that a copy joined into ``t`` (each padded with blanks to the width), or None."""
    got = padded_screen(t)
    return got[0] if got is not None else None


def padded_screen(t: str, known: int = 0) -> tuple[list[str], int] | None:
    """:func:`padded_rows`'s lines and the terminal's width, or None. With ``known``, the width that other lines of
    the same copy showed (one terminal, one width): then one row padded to it is enough (a screen's line of two rows:
    ``... RTX 2080 Ti<blanks>fastmoe: Test NCCL failure ...``), where alone two are needed to find the width."""
    if len(t) < 2 * WRAP_MIN_WIDTH or len(t) > 4 * LONG or "      " not in t or "%|" in t:
        return None  # (a progress bar's padding is no row's: tqdm draws `45%|####      | 45/100`)
    if known and len(t) <= known:
        return None
    runs = [(m.start(), m.end()) for m in _PAD_RUN.finditer(t, 0, 4 * LONG)][:MAX_PADDED_RUNS]
    if runs and runs[0][0] == 0 and runs[0][1] <= ROW_INDENT:
        del runs[0]  # (the first row's own indentation, not a row's padding)
    if len(runs) < (1 if known else PADDED_MIN_ROWS):
        return None
    # the widths: the distance between two rows' starts, or a whole fraction of it (rows without padding between)
    widths: set[int] = {known} if known else set()
    for i, (_a, s) in enumerate(runs if not known else ()):
        for _a2, s2 in runs[i + 1:i + 3]:
            widths.update((s2 - s) // q for q in (1, 2, 3) if (s2 - s) % q == 0 and (s2 - s) // q >= WRAP_MIN_WIDTH)
    best, width, base, least = 0, 0, 0, 0
    for w in sorted(widths, reverse=True):  # (a half of the width fits the rows of the width as well: the widest)
        # (a copy that starts inside a row: its first row is a piece; a line after the copy's first starts a row)
        for b in sorted({0} | ({s % w for _a, s in runs} if not known else set())):
            rows = indent = 0
            for a, s in runs:
                at = s - (s - b) % w  # (the start of the row that this run's text is in)
                if at > 0 and a <= at and s - at <= ROW_INDENT:
                    rows += 1
                    indent += s - at
            # (the most rows; of widths a little off the true one, each row's start drifts: the least indentation)
            if rows > best or rows == best and indent < least:
                best, width, base, least = rows, w, b, indent
    if best < (1 if known else PADDED_MIN_ROWS):
        return None
    # (most rows of a screen end before the width: at most of the rows' starts, the row before ends in padding)
    # (a width the copy's other lines showed needs no such count: a line of long rows that the terminal wrapped)
    starts = range(base or width, len(t), width)
    if not known and 2 * sum(1 for k in starts if t[k - 1] == " ") < len(starts):
        return None
    lines: list[str] = []
    glue: str | None = None  # (what joins the next row to the line before it; None: the next row starts a line)
    for k in [0] + list(range(base or width, len(t), width)):
        row = t[k:k + width] if k or not base else t[:base]
        text = row.rstrip(" ")
        if glue is not None and lines and (glue == "" or text[:1].strip()) and not _new_line(text):
            lines[-1] += glue + text
        elif text.strip():
            lines.append(text)
        # (a full row: the terminal wrapped the line and the next row goes on, unless it starts a line of its own; so
        # does a row that ends in one blank, a wrap at a word's end, unless the next row starts with a blank)
        glue = None
        if len(text) == len(row) and (len(row) == width or not k):  # (a copy's first row, when it starts inside one)
            glue = ""
        elif len(row) == width and len(text) == width - 1 and row[-2:-1] != " ":
            glue = " "
    # (a row for each run and the text before the first; a screen that starts with an empty row has no such text)
    return (lines, width) if len(lines) > best - (not t[:width].strip()) else None
