"""A Python traceback as IPython / Jupyter prints it (``IPython.core.ultratb``, ``IPython.core.tbtools``),
read as the traceback Python prints.

IPython's form, in the modes a notebook and the terminal use (``Context``, ``Verbose``)::

    ---------------------------------------------------------------------------
    DistBackendError                          Traceback (most recent call last)
    Cell In[3], line 5
          3 import torch.distributed as dist
    ----> 5 dist.barrier()

    File /opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py:79, in wrapper(*args, **kwargs)
         78     try:
    ---> 79         return func(*args, **kwargs)

    DistBackendError: NCCL error in: ...

A rule (``-`` or ``─``, ``theme.symbols["top_line"]``), the exception's name and ``Traceback (most recent
call last)`` right-aligned (no colon), then each frame: where (IPython 8.6 on: ``Cell In[3], line 5``, ``File
<path>:<line>, in <function>(<arguments>)``; 8.0 to 8.5: ``Input In [3], in <cell line: 5>()``; 7.x:
``<ipython-input-4-...> in <module>``, ``<path> in <function>(<arguments>)``, the line number on the arrow
line only), the code around the current line with its numbers, the current one after an arrow (``---->
5``, ``──▶ 5``: ``theme.make_arrow``), ``(...)`` for a gap, blank lines between frames; then the exception
line as Python prints it. :func:`ipython_tracebacks` writes the head as ``Traceback (most recent call
last):``, each frame's place as ``  File "<path>", line N, in <function>`` and its current line as its
code line, and blanks the rest (the rule, the numbered context lines, the gaps, the blank lines), whose
numbers are added to the paste's ``joined`` lines: the traceback then has the lines Python prints, and
the records read from it are those of a traceback printed by Python.
"""
from __future__ import annotations

from ..lazyre import lazy_re

# the head: the exception's name (none when IPython had no type to print), then the words, no colon
HEAD = "Traceback (most recent call last)"
_HEAD = lazy_re(r"(?:[A-Za-z_][\w.]{0,200}[ \t]*)?Traceback \(most recent call last\)[ \t]*\Z")
_RULE = lazy_re(r"(?:-{20,}|\u2500{20,})[ \t]*\Z")
# a frame's place, the forms of the IPython releases
_CELL = lazy_re(r"(?P<path>Cell In ?\[\d+\]), line (?P<line>\d+)(?:, in (?P<fn>.+))?[ \t]*\Z")
_INPUT = lazy_re(r"(?P<path>Input In ?\[\d+\]), in (?P<fn><cell line: (?P<line>\d+)>|.+)[ \t]*\Z")
_FILE = lazy_re(r"File (?P<path>\S(?:.{0,1000}?\S)?):(?P<line>\d+)(?:, in (?P<fn>.+))?[ \t]*\Z")
_OLD = lazy_re(r"(?P<path><ipython-input-[\w-]+>|[~/]\S{0,1000}?\.pyx?|<[\w -]{1,80}>) in (?P<fn>\S.*?)[ \t]*\Z")
# the current line (its number after an arrow) and the other lines of a frame
_ARROW = lazy_re(r"(?:-+>|\u2500*\u25b6)[ \t]*(?P<line>\d+)(?: (?P<code>.*))?\Z")
# (a numbered line, a gap, IPython's note on repeated frames, a variable's value in Verbose mode)
_CONTEXT = lazy_re(r"[ \t]+(?:\d+(?: .*)?|\(\.\.\.\)|\[\.\.\. skipping .*)\Z|[ \t]{8,}[A-Za-z_][\w.]* = .*\Z")
# the function's name without the arguments IPython prints after it (`wrapper(*args, **kwargs)`)
_FN_NAME = lazy_re(r"(?:<[^<>\n]{0,80}>|[^(<\s])+")
MAX_LINES = 2000  # lines of one traceback looked at


def _place(t: str):
    """A frame's place line: (path, line number or None, function) or None."""
    for rx in (_CELL, _INPUT, _FILE, _OLD):
        m = rx.match(t)
        if m is not None:
            fn = m.group("fn")
            line = m.groupdict().get("line")
            name = "<module>"
            if fn:
                f = _FN_NAME.match(fn.strip())
                name = f.group(0) if f is not None else fn.strip()
            return m.group("path"), int(line) if line else None, name
    return None


def ipython_tracebacks(out: list[str], joined: set[int]) -> bool:
    """Each IPython traceback in ``out`` rewritten in place as Python prints it (see the module's text);
    the numbers of the lines blanked are added to ``joined``. Whether any line changed."""
    changed = False
    n = len(out)
    i = 0
    while i < n:
        t = out[i]
        if "call last)" not in t or _HEAD.match(t) is None:
            i += 1
            continue
        end = _rewrite(out, i, joined)
        changed = changed or end > i + 1
        i = end
    return changed


def _rewrite(out: list[str], i: int, joined: set[int]) -> int:
    """The traceback whose head is ``out[i]``, rewritten if it has a frame; the index after it."""
    n = len(out)
    frames: list[list] = []  # [index of the place line, path, line, function, index of the arrow line, code]
    blank: list[int] = []
    k = i + 1
    while k < n and k - i < MAX_LINES:
        t = out[k]
        if not t.strip() or _RULE.match(t) is not None or _CONTEXT.match(t) is not None:
            blank.append(k)
        elif t[0] in " \t":
            break  # (an indented line that is none of IPython's)
        elif (m := _ARROW.match(t)) is not None:
            if not frames or frames[-1][4] is not None:
                break
            frames[-1][4], frames[-1][5] = k, (m.group("code") or "").strip()
            if frames[-1][2] is None:
                frames[-1][2] = int(m.group("line"))
        elif (p := _place(t)) is not None:
            frames.append([k, p[0], p[1], p[2], None, ""])
        else:
            break  # the exception line, or what follows a traceback cut before it
        k += 1
    if not frames:
        return i + 1
    out[i] = HEAD + ":"
    if i > 0 and _RULE.match(out[i - 1]) is not None and (i not in joined):
        out[i - 1] = ""
        joined.add(i)
    for at, path, line, fn, arrow, code in frames:
        out[at] = f'  File "{path}", line {line if line is not None else 0}, in {fn}'
        if arrow is not None:
            out[arrow] = f"    {code}" if code else ""
            if not code:
                joined.add(arrow + 1)
    for j in blank:
        out[j] = ""
        joined.add(j + 1)
    return k
