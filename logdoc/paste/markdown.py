"""Markdown and text-box residue: code fences, ``<details>``/``<pre>`` tags, quote markers and
bullets, a code block's indentation, bold and italic markers, HTML entities, colour codes without their
escape byte, typeset quotes, a pytest failure marker (a viewer's line numbers: :mod:`.gutter`); a
traceback whose frame lines a text box cut inside a file name or dedented.
"""
from __future__ import annotations

import html
import re

from ..lazyre import lazy_re
from .common import _EXC_START, MAX_WRAP_JOIN, WRAP_MIN_WIDTH

# ------------------------------------------------------------------------------------------------
# markdown residue

_FENCE = lazy_re(r"[ \t]*(?:>[ \t]?)*[ \t]*(?:`{3,}|~{3,})[\w+.#-]*[ \t]*$")
_SUMMARY = lazy_re(r"<summary\b[^>]*>.*?(?:</summary>|$)", re.I)
_TAG = lazy_re(r"</?(?:details|summary|pre|code|br|p|div|span)\b[^>]*>", re.I)
_TAG_START = lazy_re(r"[ \t]*(?:>[ \t]?)*[ \t]*</?(?:details|summary|pre|code|br|p|div|span)\b", re.I)
_QUOTE = lazy_re(r"[ \t]*(?:>[ \t]?)+")
_BULLET = lazy_re(r"[-*+][ \t]")
# Markdown bold around a whole message, as an issue tracker keeps it when a line was emphasised:
# `[rank0]: **RuntimeError: ...**` (the markers open after a blank or at the start and close the line;
# no `*` inside, so `f(*args, **kwargs)` is never touched)
_BOLD_TAIL = lazy_re(r"(^|[ \t])(\*\*|__)(?=\S)([^*\n]*?[ \t][^*\n]*?\S)\2[ \t]*$")
# ... and its opening marker before an exception line whose close a cut took with the line's end (a viewer's
# width, a terminal without wrap): `**RuntimeError: Expected to have finished reduction in the prior itera`
_BOLD_OPEN_EXC = lazy_re(r"(^|[ \t])(\*\*|__)(?=(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure):)")
# Markdown emphasis on single words, as an issue tracker's editor leaves it when `*`/`_` in a pasted line
# were read as markup: `_Check_ failed: ... unhandled cuda _error_`. A word of letters only between two
# underscores that no word character touches (`_ALLGATHER_BASE`, `NCCL_P2P_LEVEL`, `__init__` are never one).
# (The look behind stands after the first `_`, so that the search goes from one `_` to the next: forty times
# faster on a log's text than trying the look behind at every character.)
_ITALIC_WORD = lazy_re(r"_(?<![\w*/.-]_)([A-Za-z]{3,})_(?![\w/.-])")


# the two ends of a bold span over several lines of one paragraph (a message the paste hard-wrapped
# inside its markers): an opening marker after a blank or at the start, a closing one that ends its line
_BOLD_OPEN = lazy_re(r"(^|[ \t])(\*\*|__)(?=\S)")
_BOLD_CLOSE = lazy_re(r"(?<=\S)(\*\*|__)[ \t]*$")


def _bold_cut(out: list[str], i: int) -> bool:
    """The opening marker of bold before an exception line ``i`` whose close is on no line near it
    (:data:`_BOLD_OPEN_EXC`) removed: the cut that took the close left the marker."""
    t = out[i]
    m = _BOLD_OPEN_EXC.search(t)
    if m is None or t.count(m.group(2)) > 1:
        return False
    for u in out[i + 1:i + 1 + MAX_WRAP_JOIN]:
        if m.group(2) in u:
            return False  # (a span over several lines, _bold_over_lines at its close; or markers that are no span)
    out[i] = t[:m.start()] + m.group(1) + t[m.end():]
    return True


def _bold_over_lines(out: list[str], end: int) -> bool:
    """Markdown bold that opens on a line before ``end`` and closes at the end of ``end`` (at most
    :data:`MAX_WRAP_JOIN` lines, no blank line and no other marker between them: one paragraph): both
    markers removed, in place; whether there were."""
    close = _BOLD_CLOSE.search(out[end])
    if close is None or close.group(1) in out[end][:close.start()]:
        return False
    mark = close.group(1)
    for k in range(end - 1, max(-1, end - MAX_WRAP_JOIN), -1):
        t = out[k]
        if not t.strip():
            return False
        opened = _BOLD_OPEN.search(t)
        if opened is not None and opened.group(2) == mark and mark not in t[opened.end():]:
            out[k] = t[:opened.start()] + opened.group(1) + t[opened.end():]
            out[end] = out[end][:close.start()]
            return True
        if mark in t:
            return False
    return False


_HTML_ENTITY = lazy_re(r"&(?:lt|gt|amp|quot|apos|nbsp|#39|#x27|#34|#x2F);")


def _unescape_html(out: list[str]) -> bool:
    """A page scraped as text keeps HTML's entities (``&lt;module&gt;``, ``&#39;``): the lines that
    hold one read as they were printed."""
    changed = False
    for i, t in enumerate(out):
        if "&" in t and _HTML_ENTITY.search(t) is not None:
            out[i] = html.unescape(t).replace("\u00a0", " ")
            changed = True
    return changed


# A rich-text editor or chat (Slack, Feishu, Teams) turns what looks like a domain into a link, and a copy
# of it into markdown keeps the link: NCCL's `net_ib.cc:101` and a Python `train.py` end in a country's
# top-level domain (.cc, .py), and so does an address (`[10.1.3.201](http://10.1.3.201/)<33057>`). A link
# whose text is its own target (the scheme and a closing slash aside) was the text alone.
_AUTOLINK = lazy_re(r"\[([^\[\]()\s]{1,300})\]\(((?:https?|ftp)://|mailto:)([^()\s]{1,300})\)")


def _autolink_text(m) -> str:
    text, target = m[1], m[3].rstrip("/")
    bare = text[len(m[2]):] if text.lower().startswith(m[2].lower()) else text
    return text if bare.rstrip("/").lower() == target.lower() else m[0]


# ... and such a link that a viewer or a terminal cut inside its target, at the line's end (`misc/[shmutils.cc:72](http://shm`):
# what is left of the target is the start of the link's own (the scheme, the text, a closing slash)
OPEN_AUTOLINK = lazy_re(r"\[([^\[\]()\s]{1,300})\]\(([^()\s]{0,300})\Z")


def _open_link_text(m) -> str:
    text, part = m[1], m[2].lower()
    own = (text.lower(),) + tuple(s + text.lower() for s in ("http://", "https://", "ftp://"))
    return text if any((o + "/").startswith(part) for o in own) else m[0]


def unlinked(text: str) -> str:
    """``text`` with an editor's links around its file names and addresses read as the text they were (and one a cut
    at the line's end left open, :data:`OPEN_AUTOLINK`)."""
    if "](" not in text:
        return text
    text = _AUTOLINK.sub(_autolink_text, text)
    m = OPEN_AUTOLINK.search(text, max(0, len(text) - 2 * _LINK_SPAN)) if "](" in text[-2 * _LINK_SPAN:] else None
    return text[:m.start()] + _open_link_text(m) if m is not None else text


def _unlink_autolinks(out: list[str]) -> bool:
    """Links an editor made of a log's file names and addresses (``transport/[net_ib.cc:101](http://net_ib.cc:101/)``)
    read as the text they were (``transport/net_ib.cc:101``); a link to somewhere else stays. In place; whether
    any line changed."""
    changed = False
    for i, t in enumerate(out):
        if "](" in t and (_AUTOLINK.search(t) is not None or OPEN_AUTOLINK.search(t, max(0, len(t) - 2 * _LINK_SPAN)) is not None):
            u = unlinked(t)
            if u != t:
                out[i] = u
                changed = True
    return changed


_LINK_SPAN = 640  # the longest link :data:`_AUTOLINK` reads: where a line's part of one may begin


def _join_split_links(out: list[str], gone: set[int], widths: list[int]) -> set[int]:
    """A line that a hard wrap cut inside an editor's link (``.../tcp/[device.cc:84](http://devi`` / ``ce.cc:84/)]``,
    ``peer [10.1.2.3](http://10.1.2.3`` / ``/)<49577> with error 12``) joined with the line that holds the link's
    rest, without a blank: the link is its own text, so the cut is certain. The joined line takes the width its
    last piece had in ``widths``. In place; the numbers of the lines joined away (also added to ``gone``)."""
    joined: set[int] = set()
    i = 0
    while i < len(out) - 1:
        t, nxt = out[i], out[i + 1]
        i += 1
        if not nxt or nxt[:1].isspace() or "[" not in t:
            continue
        k = t.rfind("[", max(0, len(t) - _LINK_SPAN))
        while k >= 0:
            m = _AUTOLINK.match(t[k:] + nxt[:_LINK_SPAN])
            if m is not None:
                if m.end() > len(t) - k and _autolink_text(m) != m.group(0):
                    out[i - 1], out[i] = t + nxt, ""
                    widths[i - 1] = widths[i]
                    joined.add(i + 1)
                    i += 1
                break  # (a link that ends inside the line, or another one's: the cut is not in a link)
            k = t.rfind("[", max(0, len(t) - _LINK_SPAN), k)
    gone |= joined
    return joined


# Colour codes whose escape byte a page, a copy or a log viewer dropped: `[36m(RayWorkerWrapper pid=1)[0m`,
# `[1;31mRuntimeError: ...[0m`. A source that shows a reset (`[0m`) loses every such code, which leaves the
# program's text as it printed it (not `[30m]`: a bracketed duration; the codes of a terminal are never closed).
_SGR_RESET = "[0m"
_SGR_TEXT = lazy_re(r"\[(?:\d{1,3}(?:;\d{1,3}){0,15})?m(?!\])")


def _strip_colour_text(out: list[str]) -> bool:
    """The colour codes that lost their escape byte, gone from every line of a source that holds a reset
    (``[0m``). In place; whether any line changed."""
    if not any(_SGR_RESET in t for t in out):
        return False
    changed = False
    for i, t in enumerate(out):
        if "m" in t and "[" in t:
            u = _SGR_TEXT.sub("", t)
            if u != t:
                out[i] = u
                changed = True
    return changed


# typographic quotes: what a page that typesets text (a forum, a blog) makes of a log's straight ones
TYPESET_QUOTES = "\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b"
_STRAIGHT = str.maketrans(TYPESET_QUOTES, "\"\"\"\"''''")


def _straighten_quotes(out: list[str]) -> bool:
    """A forum or a blog typesets the quotes of a pasted log as curly ones (``File “/x/rendezvous.py”,
    line 190``, ``backend=‘nccl’``); the programs whose lines logdoc reads print ASCII quotes only, so the
    lines that hold a typographic quote read with straight ones. In place; whether any line changed."""
    changed = False
    for i, t in enumerate(out):
        if not t.isascii():
            u = t.translate(_STRAIGHT)
            if u != t:
                out[i] = u
                changed = True
    return changed


# tmux's copy mode draws its position in the scrollback at the right end of the pane's first row (`[0/1234]`: lines
# from the bottom / history size, `copy-mode-position-format`, with ` (N results)` while a search is shown): a copy of
# the screen made with the terminal's selection takes it as the end of its first line, padded or written over the text
_SCROLL_POS = lazy_re(r"[ \t]*\[(\d{1,9})/(\d{1,9})\](?: \((?:\d{1,9}\+? results|timed out)\))?[ \t]*$")
_SCROLL_ROW_MIN = 60  # the pane's width at least: the marker stands at its right edge
_SCROLL_MARK_MAX = 48  # the marker's length at most: `[999999999/999999999] (999999999+ results)`


def _strip_scroll_position(out: list[str]) -> bool:
    """tmux's scroll position (``[0/1234]``) gone from the end of a copy's first line (the first that is
    neither blank nor a code fence). In place; whether it was there."""
    for i, t in enumerate(out[:4]):
        if not t.strip() or ("`" in t or "~" in t) and _FENCE.match(t):
            continue
        # (searched in the line's last columns only: the marker is short, and a pattern that starts with a
        # run of blanks, searched over a long run of them, is tried at each)
        body = t.rstrip(" \t")
        m = (_SCROLL_POS.search(body, max(0, len(body) - _SCROLL_MARK_MAX))
             if len(t) >= _SCROLL_ROW_MIN and body.endswith(("]", ")")) else None)
        if m is None or int(m[1]) > int(m[2]) or not body[:m.start()].strip():
            return False
        out[i] = body[:m.start()].rstrip(" \t")
        return True
    return False


_PYTEST_E = lazy_re(r"E( {2,})(?=\S)")


def _strip_pytest(out: list[str]) -> bool:
    """pytest's report of a failed test shows the exception's lines after ``E`` and the indent of the
    failing statement (``E       RuntimeError: ...``, ``E       Last error:``): they read without them,
    their own indentation kept."""
    hits = [(i, m) for i, t in enumerate(out) if t[:1] == "E" and (m := _PYTEST_E.match(t)) is not None]
    if not hits:
        return False
    base = min(len(m.group(1)) for _, m in hits)
    for i, _m in hits:
        out[i] = out[i][1 + base:]
    return True


# a Python traceback's frame line, its code line and the marks under it, as a page that drops leading
# blanks leaves them (at the line's start)
_FLUSH_FRAME = lazy_re(r"File \"[^\"\n]{1,1024}\", line \d{1,9}, in ")
_MARKS = lazy_re(r"[ \t]*[\^~]+[ \t\^~]*$")
_TB_HEAD = "Traceback (most recent call last):"


# a frame line whose file name a wrap or a narrow page cut: its quote not closed on the line
_OPEN_FRAME = lazy_re(r"[ \t]*File \"[^\"\n]{1,1024}$")
_FRAME_REST = lazy_re(r"[^\"\s]{0,1024}\", line \d{1,9}(?:, in \S|$)")
MAX_FRAME_JOIN = 4  # lines a frame line's file name spans at most


def _join_cut_frames(out: list[str], joined: set[int]) -> bool:
    """A Python frame line cut inside its file name (``File "/home/u/env/lib/python3.8/site-packages/tor`` /
    ``ch/distributed/rendezvous.py", line 166, in _env_rendezvous_handler``) is joined with the lines that
    finish it, whatever width cut it: Python closes the name's quote on the line it prints, so an open one
    can only be a cut, and the rest is the name's tail (no blank) up to ``", line N``. A page that also dropped
    the indentation leaves the same pieces. The numbers of the lines joined away are added to ``joined``;
    in place; whether any line changed."""
    changed = False
    n = len(out)
    for i in range(n):
        t = out[i]
        if '"' not in t or _OPEN_FRAME.match(t) is None:
            continue
        parts = [t]
        k = i + 1
        while k < n and k - i < MAX_FRAME_JOIN and out[k] and out[k][0] not in " \t":
            parts.append(out[k])
            k += 1
            if _FRAME_REST.match(parts[-1]) is not None:
                break
            if '"' in parts[-1] or " " in parts[-1]:
                parts = []
                break
        else:
            continue  # (no line finished the name)
        if len(parts) < 2:
            continue
        out[i] = "".join(parts)
        for j in range(i + 1, k):
            out[j] = ""
            joined.add(j + 1)
        changed = True
    return changed


def _frame_run(out: list[str], i: int, joined: set[int]) -> tuple[list[tuple[int, str]], int]:
    """The lines of a dedented traceback's frames from ``out[i]`` (a frame line at the start of its line)
    with the indentation Python prints before each (two blanks before a frame line, four before its code
    line and the ``^^^`` marks under that), and the index after them."""
    n = len(out)
    edits = []
    while i < n and _FLUSH_FRAME.match(out[i]) is not None:
        edits.append((i, "  " + out[i]))
        i += 1
        while i < n and not out[i] and i + 1 in joined:  # (the lines a cut frame line was joined from)
            i += 1
        # its code line: anything but another frame, an exception's line or the end of the traceback
        if (i < n and out[i].strip() and _FLUSH_FRAME.match(out[i]) is None
                and _EXC_START.match(out[i]) is None and not out[i].startswith(_TB_HEAD[:9])):
            edits.append((i, "    " + out[i]))
            i += 1
            if i < n and _MARKS.match(out[i]) is not None:
                edits.append((i, "    " + out[i].lstrip()))
                i += 1
    return edits, i


def _reindent_frames(out: list[str], joined: set[int] = frozenset()) -> bool:
    """A Python traceback whose indentation the paste dropped (a forum's editor, a text box that strips
    leading blanks): after its ``Traceback (most recent call last):`` line, a frame line at the start of its
    line gets the two blanks Python prints before it, and the code line after it (and the ``^^^`` marks
    under that) the four, so the traceback reads as one record again. A paste that begins inside the
    traceback (its header and first frames not copied) is read the same way when its frames end at the
    exception's line (``RuntimeError: ...``), as a traceback's do. In place; whether any line changed."""
    changed = False
    i = 0
    n = len(out)
    while i < n:
        headed = out[i].rstrip().endswith(_TB_HEAD)
        if headed:
            i += 1
        elif _FLUSH_FRAME.match(out[i]) is None or i and _FLUSH_FRAME.match(out[i - 1]) is not None:
            i += 1
            continue
        if i >= n or _FLUSH_FRAME.match(out[i]) is None:
            continue
        edits, end = _frame_run(out, i, joined)
        if headed or len(edits) >= 2 and end < n and _EXC_START.match(out[end]) is not None:
            for k, t in edits:
                out[k] = t
            changed = True
        i = max(end, i + 1)
    return changed


def _strip_markdown(lines: list[str]) -> tuple[list[str], bool]:
    """Fences and HTML tags become empty lines (or their text); quote markers, bullets and the
    common indentation of a code block are removed where most lines show them."""
    out = list(lines)
    changed = False
    for i, t in enumerate(out):
        if not t:
            continue
        c = t.lstrip(" \t>")[:1]
        if c in "`~" and _FENCE.match(t):
            out[i] = ""
            changed = True
        elif c == "<" and _TAG_START.match(t):
            q = _QUOTE.match(t)
            lead = t[:q.end()] if q else ""
            rest = _TAG.sub("", _SUMMARY.sub("", t[len(lead):]))
            out[i] = (lead + rest) if rest.strip() else ""
            changed = True
        if "_" in t and _ITALIC_WORD.search(out[i]) is not None:
            out[i] = _ITALIC_WORD.sub(r"\1", out[i])
            changed = True
        if t.endswith(("**", "__", "** ", "__ ")):
            m = _BOLD_TAIL.search(out[i])
            if m is not None:
                out[i] = out[i][:m.start()] + m.group(1) + m.group(3)
                changed = True
            elif _bold_over_lines(out, i):
                changed = True
        elif ("**" in t or "__" in t) and _bold_cut(out, i):
            changed = True
    nonblank = [t for t in out if t.strip()]
    if not nonblank:
        return out, changed
    quoted = sum(1 for t in nonblank if t.lstrip(" \t")[:1] == ">")
    if quoted >= 2 and quoted >= 0.3 * len(nonblank):
        for i, t in enumerate(out):
            m = _QUOTE.match(t)
            if m is not None:
                out[i] = t[m.end():]
                changed = True
        nonblank = [t for t in out if t.strip()]
    bullets = sum(1 for t in nonblank if _BULLET.match(t))
    if bullets >= 2 and bullets >= 0.5 * len(nonblank):
        for i, t in enumerate(out):
            if _BULLET.match(t):
                out[i] = t[2:]
                changed = True
        nonblank = [t for t in out if t.strip()]
    if nonblank and all(t[:1] == "\t" for t in nonblank):
        out = [t[1:] if t.strip() else "" for t in out]  # a code block indented with a tab
        nonblank = [t for t in out if t.strip()]
        changed = True
    indent = _block_indent(out)
    if indent:
        out = [(t[indent:] if t[:indent].isspace() else t) if t.strip() else "" for t in out]
        changed = True
    return out, changed


def _block_indent(lines: list[str]) -> int:
    """The indentation of a code block that holds the lines (0: none): at least 2 blanks before every line
    that is not empty and not the rest of a wrapped one (flush left right after a line of the greatest
    width: the page or the mail wrapped them after the block was indented); not a paste of traceback
    frames, which are indented themselves."""
    nonblank = [(i, t) for i, t in enumerate(lines) if t.strip()]
    if not nonblank:
        return 0
    w = max(len(t) for _, t in nonblank)
    block = [t for i, t in nonblank
             if not (i and w >= WRAP_MIN_WIDTH and len(lines[i - 1]) == w and t[:1] not in " \t")]
    if not block:
        return 0
    indent = min(len(t) - len(t.lstrip(" ")) for t in block)
    if indent < 2 or all(t[indent:].startswith(('File "', "frame #")) or t[indent] == " "
                         for t in block if len(t) - len(t.lstrip(" ")) == indent):
        return 0
    return indent


# A log console's row copied whole (AWS CloudWatch's log events table: `| <time> | <message>`): a row opened to show
# its event puts the message glued to the time, then the message again in its own column
# (`| 2025-05-16T16:39:51.208-07:00ip-10-1-2-3:79:79 [0] NCCL INFO Bootstrap : ... | ip-10-1-2-3:79:79 [0] NCCL INFO
# Bootstrap : ...`). The row becomes the closed one (`| <time> | <message>`), which the envelope peels.
_CONSOLE_ROW = lazy_re(r"[ \t]*\|[ \t]*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)(?![ \t]*\|)")


def _fold_console_rows(out: list[str]) -> bool:
    """Rows of a log console whose message stands twice (glued to the time, then in its column): once."""
    changed = False
    for i, t in enumerate(out):
        if "|" not in t[:4] or len(t) > 8192:
            continue
        m = _CONSOLE_ROW.match(t)
        if m is None:
            continue
        rest = t[m.end():].rstrip()
        at = rest.find(" | ")
        while at > 0:
            if rest[:at].strip() and rest[:at].strip() == rest[at + 3:].strip():
                out[i] = f"| {m.group(1)} | {rest[at + 3:].strip()}"
                changed = True
                break
            at = rest.find(" | ", at + 1)
    return changed


# A log console's events copied as text (the AWS CloudWatch console's, a log viewer's list): each event's time on a line
# of its own, its message on the next (`2024-12-04T05:31:40.101Z` / `Traceback (most recent call last):` /
# `2024-12-04T05:31:40.101Z` / `  File ...`). A record of several lines (a traceback, NCCL's `Last error:`) has a time
# between each two of its lines. In a source where such lines are many (:data:`STAMP_LINES_MIN`, and a share of
# :data:`STAMP_SHARE` of the nonblank lines), each becomes a blank that ends no record, and its time the next line's.
_STAMP_LINE = lazy_re(r"[ \t]*(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)[ \t]*")
STAMP_LINES_MIN = 2
# (the same line, as the paste screen looks for it in the whole text: after a line's newline)
STAMP_LINE_NL = lazy_re(r"\n[ \t]*\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?[ \t]*(?=\n|$)")
STAMP_SHARE = 0.3


def stamp_line(t: str) -> str | None:
    """The time of a line that holds only a time, or None."""
    if len(t) > 48 or not t[:1].strip() and not t.strip()[:1].isdigit():
        return None
    m = _STAMP_LINE.fullmatch(t)
    return None if m is None else m.group(1)


def _fold_stamp_lines(out: list[str], ids: dict[int, dict], joined: set[int]) -> bool:
    """The lines that hold only a time, each a blank that ends no record, its time given to the line after it
    (``ids``, by line number; ``joined`` takes the blanks' numbers). In place; whether any line changed."""
    stamps = {i: s for i, s in ((i, stamp_line(t)) for i, t in enumerate(out) if t[:1] in " \t0123456789") if s}
    if len(stamps) < STAMP_LINES_MIN or len(stamps) < STAMP_SHARE * sum(1 for t in out if t.strip()):
        return False
    for i, s in stamps.items():
        out[i] = ""
        joined.add(i + 1)
        if i + 1 < len(out) and (i + 1) not in stamps and out[i + 1].strip():
            ids.setdefault(i + 2, {}).setdefault("time", s)
    return True
