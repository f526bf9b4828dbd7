"""The repair of one source's lines (:func:`repair_lines`) and what it learned (:class:`Paste`): the
passes of the other modules of this package in their order, records glued on one line split
(:func:`split_glued`), and a bare line between NCCL lines of one process given that process.
"""
from __future__ import annotations

from ..classify.torch import _TQDM
from ..envelope import has_huge_number, leading_end, unwrap
from ..lazyre import lazy_re
from ..nccl import HEADER as _NCCL_HEADER
from ..read.prefilter import candidate
from .common import _PROCESS_HEADER, EVERY_LINE_MAX, Paste, HEAD_LINES, LONG, MAX_INTERLEAVED, MAX_WRAP_JOIN, WRAP_MIN_WIDTH
from .escaped import _decode_escaped, _decode_json_lines, _decode_logfmt_lines, _decode_syslog, _set_text
from .gutter import _strip_gutter
from .ipython import ipython_tracebacks
from .interleave import _close_up, deinterleave, interleaved_writes, is_interleaved
from .markdown import (_fold_console_rows, _fold_stamp_lines, _join_cut_frames, _reindent_frames, _straighten_quotes, _strip_markdown, _strip_pytest,
                       _strip_colour_text, _strip_scroll_position, _unescape_html, _unlink_autolinks, _join_split_links)
from .prefix import _head, _identity, _learn_prefix, _learn_residue, _rests_only, _SIMILAR
from .wrap import _cut, _joined, _midword_joins, _new_line, _next_piece, _starts_record, _wrap_width, MIDWORD_TRIES, padded_screen

# ------------------------------------------------------------------------------------------------
# the repair

_CONTINUES_SENTENCE = lazy_re(r"[a-z0-9(]")
_ENDS_SENTENCE = lazy_re(r"[.!?:;]\s*$")


def _stream(text: str) -> tuple | None:
    """The process a line names by itself: the NCCL ``host:pid`` or its envelope's stream key."""
    if len(text) > LONG or has_huge_number(text):
        return None
    env, msg = unwrap(text)
    m = _NCCL_HEADER.match(msg)
    if m is not None:
        pid = m.group("pid")
        # a masked pid (a run of X letters, `<pid>`) names no process: the host alone does
        return ("nccl", m["host"] or env.host, int(pid) if pid and pid.isdigit() else None)
    key = env.stream_key()
    if any(v is not None for v in key):
        return ("env",) + key
    return None


def _split_padded_rows(out: list[str], paste: Paste) -> bool:
    """A terminal's rows, each padded to its width, copied as one line: each such line split back into its lines.
    The widths that lines of two rows or more showed serve the lines of the same copy with one padded row only."""
    found: dict[int, list[str]] = {}
    widths: list[int] = []
    for i, t in enumerate(out):
        if len(t) >= 2 * WRAP_MIN_WIDTH and "   " in t:
            got = padded_screen(t)
            if got is not None:
                found[i] = got[0]
                if got[1] not in widths:
                    widths.append(got[1])
    for i, t in enumerate(out if widths else ()):
        if i not in found and len(t) >= 2 * WRAP_MIN_WIDTH and "      " in t:
            for w in widths:
                got = padded_screen(t, w)
                if got is not None:
                    found[i] = got[0]
                    break
    for i, rows in found.items():
        _set_text(out, paste, i, "\n".join(rows))
    return bool(found)


def _join_numbered_rests(out: list[str], rests: dict[int, list[int]], paste: Paste) -> None:
    """The rows with no number that a hard wrap cut from a line a viewer numbered (:func:`_strip_gutter`'s
    ``rests``), joined to that line as a wrap's pieces are (:func:`_joined`). The numbers count lines, so a
    row without one after a full row is that line's rest, whatever it reads like (``pts) 10: torch...``
    after ``... broadcast([tensor], o``: no guess of :func:`_cut` is needed). The numbers of the rows joined
    away are added to the paste's ``joined``; in place."""
    readings = MIDWORD_TRIES
    for i, js in rests.items():
        js = js[:MAX_WRAP_JOIN - 1]
        out[i], readings = _joined([out[i]] + [out[j] for j in js], readings)
        for j in js:
            out[j] = ""
            paste.joined.add(j + 1)


def repair_lines(lines: list[str], name: str = "") -> tuple[list[str], Paste] | None:
    """The repaired lines (as many as given) and what was learned for them, or None when the
    lines show no paste damage."""
    out = list(lines)
    paste = Paste()
    rests: dict[int, list[int]] = {}
    changed = _strip_gutter(out, rests)
    if rests:
        _join_numbered_rests(out, rests, paste)
    changed = _fold_console_rows(out) or changed
    changed = _fold_stamp_lines(out, paste.ids, paste.joined) or changed
    changed = _split_padded_rows(out, paste) or changed
    pasted = [len(t) for t in out]
    changed = _unescape_html(out) or changed
    changed = _strip_colour_text(out) or changed
    changed = _straighten_quotes(out) or changed
    changed = _strip_pytest(out) or changed
    changed = _strip_scroll_position(out) or changed
    # (what these took off a line, an entity's or a colour code's characters, was part of the width a wrap measured)
    shrunk = {i: n - len(t) for i, (n, t) in enumerate(zip(pasted, out)) if n > len(t)} if changed else {}
    changed = (_decode_json_lines(out, paste) if '{"' in "".join(t[:2] for t in out[:HEAD_LINES]) else False) or changed
    changed = (_decode_logfmt_lines(out, paste) if any("msg=" in t for t in out[:HEAD_LINES]) else False) or changed
    changed = (_decode_syslog(out, paste) if any("#01" in t for t in out[:HEAD_LINES]) else False) or changed
    # (only in a short source, a paste or an excerpt: a long log as written keeps its lines and its fast path,
    # and the PyTorch reader reads a message glued after a bar with the bar's fields, classify.torch.classify)
    bars = _unglue_bars(out) if len(out) <= EVERY_LINE_MAX else {}
    changed = changed or bool(bars)
    marked = [len(t) for t in out]  # (the widths with the quote marks and the indentation of a code block)
    for i, n in shrunk.items():
        marked[i] += n
    out, md = _strip_markdown(out)
    changed = changed or md
    cut = out[:HEAD_LINES]  # (the lines as cut: a wrap's width is measured on them)
    changed = _join_cut_frames(out, paste.joined) or changed
    changed = _reindent_frames(out, paste.joined) or changed
    if any("call last)" in t for t in out):
        changed = ipython_tracebacks(out, paste.joined) or changed  # IPython's form of a traceback
    head = out[:HEAD_LINES]

    # Ray's deduplication note, wherever it stands in a line
    for i, t in enumerate(out):
        if "similar log lines]" in t:
            nt = _SIMILAR.sub("", t, count=1)
            if nt != t:
                out[i] = nt
                changed = True

    # as the terminal or the page cut them: before any prefix, quote mark or code block's indentation is
    # peeled, and a frame line before its join
    widths = marked

    # a repeated prefix that no envelope knows
    prefix = _learn_prefix(head)
    if prefix is not None and _rests_only(head, prefix):
        prefix = None
    labels: dict[int, dict] = {}
    if prefix is not None:
        idents: dict[str, dict] = {}
        for i, t in enumerate(out):
            start = 0
            end = prefix.match(t) if t and t[0] not in " \t" else 0
            if not end:
                h = _head(t)
                if h is None:
                    continue
                start = h[0]
                end = prefix.match(t, start)
                if not end:
                    continue
            pre = t[start:end]
            got = idents.get(pre)
            if got is None:
                if len(idents) > 4096:
                    idents.clear()
                got = idents[pre] = _identity(pre)
            labels[i] = got
            out[i] = t[:start] + t[end:]
            changed = True
        # a line that is one of the prefixes alone (its blank after stripped with the line's end): the stream's
        # empty line, which ends a record there (`pod container ` after a traceback's last line)
        alone = {pre.rstrip(): pre for pre in idents}
        for i, t in enumerate(out):
            if i not in labels and t and t[0] not in " \t" and t.rstrip() in alone:
                labels[i] = idents[alone[t.rstrip()]]
                out[i] = ""
                changed = True

    # residue that stands before the known starts of the source's lines
    shapes = _learn_residue(head, labels)
    if shapes:
        for i, t in enumerate(out):
            if i in labels or not t or len(t) > LONG:
                continue
            k = leading_end(t)
            for rx in shapes:
                m = rx.match(t, k)
                if m is not None and k < m.end() < len(t):
                    labels[i] = _identity(m.group(0))
                    out[i] = t[:k] + t[m.end():]
                    changed = True
                    break

    if labels:
        distinct = {d.get("label") for d in labels.values()}
        for i, d in labels.items():
            ident = {k: d[k] for k in ("time", "level", "pid", "rank") if k in d}
            if len(distinct) > 1 and "pid" not in d and "rank" not in d and d.get("label"):
                ident["host"] = d["label"].strip("[]():")
            if ident:
                paste.ids.setdefault(i + 1, {}).update(ident)

    # a hard wrap's cut inside an editor's link (the link is its own text: the cut is certain)
    linked = _join_split_links(out, paste.joined, marked) if any("](" in t for t in out) else set()
    changed = changed or bool(linked)

    # hard wraps at a fixed width
    # (measured again with the lengths the lines had with their quote marks or a code block's indentation:
    # marks added before a mail or a page wrapped the lines, whose rests carry none)
    width = _wrap_width(cut) or (_wrap_width(cut, marked[:HEAD_LINES]) if md or shrunk else 0)
    if width:
        readings = MIDWORD_TRIES
        i = 0
        while i < len(out):
            if len(out[i]) != width and marked[i] != width or _starts_record(out[i]):
                i += 1
                continue
            j = _next_piece(out, i, linked)
            parts = [out[i]]
            while j < len(out) and len(parts) < MAX_WRAP_JOIN and _cut(parts[-1], out[j]):
                parts.append(out[j])
                if len(out[j]) != width and marked[j] != width:
                    j += 1
                    break
                j = _next_piece(out, j, linked)
            if len(parts) > 1:
                out[i], readings = _joined(parts, readings)
                for k in range(i + 1, j):
                    out[k] = ""
                    paste.joined.add(k + 1)
                changed = True
            i = j

    # a line cut inside a word at the source's width, too few of them for a width of their own
    if _midword_joins(out, widths, paste.joined, linked):
        changed = True

    # an editor's links around file names and addresses, read as the text they were: after the joins of a hard wrap
    # (a wrap measured the lines with their links, and may have cut one)
    changed = _unlink_autolinks(out) or changed

    # a line that lost the prefix between two prefixed lines and continues a sentence
    if labels:
        for i in sorted(labels):
            k = i + 1
            if k >= len(out) or k in labels or not out[k] or not out[i]:
                continue
            nxt = out[k]
            if len(lines[i]) < WRAP_MIN_WIDTH + 20 or not _CONTINUES_SENTENCE.match(nxt) \
                    or _ENDS_SENTENCE.search(out[i]) or _new_line(nxt):
                continue  # (a line is wrapped where it is long: at 80 columns and more)
            if k + 1 < len(out) and out[k + 1].strip() and (k + 1) not in labels:
                continue
            out[i] = out[i].rstrip() + " " + nxt.strip()
            out[k] = ""
            paste.joined.add(k + 1)
            changed = True

    # character interleaving
    spans: list[int] = []
    differ = 0
    for i, t in enumerate(out):
        if is_interleaved(t):
            a, b = deinterleave(t)
            spans.append(i + 1)
            differ += a != b
            out[i] = a  # one process's copy; where the two differ (rank numbers), the leading one's
        elif t and len(t) >= 16 and len(t) <= MAX_INTERLEAVED:
            one = interleaved_writes(t)
            if one is not None:
                spans.append(i + 1)
                out[i] = one
    if spans:
        _close_up(out, spans)
        where = f"line {spans[0]}" if len(spans) == 1 else f"{len(spans)} lines from {spans[0]} to {spans[-1]}"
        paste.notes.append(f"{name}: {where}: the output of two processes is interleaved character by character;"
                           + (" read de-interleaved" if not differ else
                              f" read de-interleaved as one process's copy ({differ} of them differ between the two)"))
        changed = True

    # unprefixed lines between lines of one process
    if _assign_between(out, paste):
        changed = True

    # messages inside escaped strings (an exception's repr, a bytes repr, a JSON string)
    if _decode_escaped(out, paste):
        changed = True

    # several NCCL records glued on one line, or PyTorch's records after a sentence (split_glued_torch)
    for i, t in enumerate(out):
        if len(t) > LONG or (i + 1) in paste.pieces:
            continue
        parts = split_glued(t) if t.count("NCCL ") > 1 else None
        if parts is None and ("terminate called" in t or ".cpp:" in t):
            parts = split_glued_torch(t)
        if parts is not None:
            paste.pieces[i + 1] = parts
            changed = True

    # a line a progress bar's last update stood in front of: the bar and the line, each read on its own
    for i, bar in bars.items():
        if out[i].strip() and (i + 1) not in paste.pieces:
            paste.pieces[i + 1] = [bar, out[i]]

    return (out, paste) if changed else None


def glued_bar(line: str) -> int:
    """Where the line starts that a tqdm bar's last update was left in front of (tqdm redraws its bar
    after a ``\\r`` and ends no line, so the next line another writer prints lands after it:
    `` 45%|####5     | 45/100 [00:12<00:15,  3.60it/s]Traceback (most recent call last):``); 0: none."""
    if "%|" not in line[:800] or len(line) > LONG:
        return 0
    m = _TQDM.match(line)
    if m is None:
        return 0
    k = m.end()
    while k < len(line) and line[k] in " \t":
        k += 1
    return k if k < len(line) else 0


def _unglue_bars(out: list[str]) -> dict[int, str]:
    """Each line with a bar glued in front (:func:`glued_bar`) becomes the line the bar stood before, so
    the repairs after this one and the assembler see it as printed; the bars, by line index, are read
    as pieces of their line (:attr:`Paste.pieces`) once the repairs are done."""
    bars: dict[int, str] = {}
    for i, t in enumerate(out):
        k = glued_bar(t)
        if k:
            bars[i] = t[:k].rstrip()
            out[i] = t[k:]
    return bars


# NCCL's line header, at the start of a record glued after another one: ``host:pid:tid [dev]``
# (pid and tid may be masked), or ``[dev]`` alone when the paste or a logger dropped the host part,
# then an optional source location (``file.cc:NN`` of a WARN) and ``NCCL <level>``.
_GLUED_HEADER = lazy_re(
    r"(?:(?<=\s)|^)(?:[^\s:\[\]]*:(?:\d+|[Xx*#?]+|<[\w-]+>):(?:\d+|[Xx*#?]+|<[\w-]+>) )?"
    r"\[-?\d+\] (?:[\w./+-]+:\d+ )?NCCL (?:INFO|WARN|TRACE|CALL)\b")


def split_glued(line: str) -> list[str] | None:
    """The NCCL records of a line that holds several of them one after another (a paste that lost
    its line ends: ``[0] NCCL INFO a. [0] NCCL INFO b``), each with its header; None when the line
    holds at most one. What stands before the first header stays with it."""
    starts = [m.start() for m in _GLUED_HEADER.finditer(line)]
    if len(starts) < 2:
        return None
    cuts = [0] + starts[1:] + [len(line)]
    return [line[a:b].rstrip() for a, b in zip(cuts, cuts[1:]) if line[a:b].strip()]


# A PyTorch record glued after the end of a sentence on the same line (a paste that lost its line ends): c10's
# log header, old (`[E ProcessGroupNCCL.cpp:455] `) or glog's (`[E1129 10:11:12.123456 123 ProcessGroupNCCL.cpp:632] `),
# or the C++ runtime's `terminate called after throwing an instance of` that ends the process.
_GLUED_TORCH = lazy_re(
    r"(?<=[.!] )(?=\[[EWIF](?:\d{4} [\d:.]+(?: +\d+)?)? [\w./-]+\.(?:cpp|hpp|cc|h):\d+\] "
    r"|terminate called after throwing an instance of )")


def split_glued_torch(line: str) -> list[str] | None:
    """The records of a line where PyTorch's records follow one another after a sentence's end
    (``... data. [E ProcessGroupNCCL.cpp:460] To avoid ... down. terminate called after throwing ...``),
    each read on its own; None when no record starts inside the line."""
    starts = [m.start() for m in _GLUED_TORCH.finditer(line)]
    if not starts:
        return None
    cuts = [0] + starts + [len(line)]
    parts = [line[a:b].rstrip() for a, b in zip(cuts, cuts[1:]) if line[a:b].strip()]
    return parts if len(parts) > 1 else None


def _assign_between(out: list[str], paste: Paste) -> bool:
    """A line without a process of its own that holds a keyword, between NCCL lines of one process
    (within 3 lines either side), takes that process (a bare ``NCCL version`` banner)."""
    cache: dict[int, tuple | None] = {}

    def stream(k: int) -> tuple | None:
        if k not in cache:
            t = out[k]
            cache[k] = _stream(t) if t.strip() else None
        return cache[k]

    changed = False
    for i, t in enumerate(out):
        if not t or t[0] in " \t" or len(t) > LONG or not candidate(t) or ":" in t[:40] and _PROCESS_HEADER.search(t[:120]):
            continue
        if stream(i) is not None:
            continue
        before = next((s for s in (stream(k) for k in range(i - 1, max(-1, i - 4), -1)) if s is not None), None)
        if before is None or before[0] != "nccl":
            continue  # (lines of other envelopes join their records in the block assembler)
        after = next((s for s in (stream(k) for k in range(i + 1, min(len(out), i + 4))) if s is not None), None)
        if after != before:
            continue
        if before[1] is None and before[2] is None:
            continue
        d = paste.ids.setdefault(i + 1, {})
        for k, v in (("host", before[1]), ("pid", before[2])):
            if v is not None:
                d.setdefault(k, v)
        changed = True
    return changed
