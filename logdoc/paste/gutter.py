"""A log viewer's line numbers copied with the lines, and the rows a hard wrap cut from a numbered line."""
from __future__ import annotations

from bisect import bisect_left

from ..lazyre import lazy_re
from .common import HEAD_LINES, PREFIX_MIN, WRAP_MIN_WIDTH

_GUTTER = lazy_re(r" *(\d{1,7})(?: ?\|(?: |$)|\t)")
# the same numbers in brackets (`[1745]   1%|...`, `[80746] [rank0]:[E321 ...`): MPICH's `-prepend-rank` writes a rank
# so (envelope.py), which repeats and starts at 0; line numbers count every line up from 1
_BRACKETS = lazy_re(r"\[(\d{1,7})\](?: |$)")


def _strip_gutter(out: list[str], rests: dict[int, list[int]] | None = None) -> bool:
    """A log viewer's line numbers (:func:`_numbered`), with a bar or a tab after them, or in brackets: there every
    filled row of the head has one, the first is not 0 and each is greater than the one before (MPICH's ranks repeat;
    a paste that skipped lines jumps)."""
    if _numbered(out, _GUTTER, " 0123456789", rests):
        return True
    return any(t[:1] == "[" for t in out[:PREFIX_MIN]) and _numbered(out, _BRACKETS, "[", rests, strict=True)


def _numbered(out: list[str], gutter, starts: str, rests: dict[int, list[int]] | None = None, strict: bool = False) -> bool:
    """A log viewer's line numbers copied with the lines (``  12 | text``, ``cat -n``'s ``    12<TAB>text``):
    a number and a bar or a tab before most lines, counting the lines up. They are removed. A line the
    paste hard-wrapped after the numbers were added goes on in rows without a number (the viewer numbered
    the line, the wrap cut it): a row with no number after a row of a numbered line that is at least
    :data:`WRAP_MIN_WIDTH` long and no shorter than it is such a rest, and the numbers count the lines, not
    the rows. ``rests``: filled with the index of each numbered row whose line goes on -> its rests' indexes
    (the caller joins them)."""
    nums = []
    going: dict[int, list[int]] = {}  # numbered row -> the rows that may go on with its line
    last = -1      # the numbered row of the line the rows read so far belong to
    width = 0      # the longest row of that line so far
    prev = 0       # the length of the row before
    others = 0     # filled rows with no number that go on with no line
    for i, t in enumerate(out[:HEAD_LINES]):
        m = gutter.match(t) if t[:1] in starts else None
        if m is not None:
            nums.append((i, int(m.group(1))))
            last, width, prev = i, len(t), len(t)
            continue
        if not t.strip():
            last, prev = -1, 0
        elif last >= 0 and prev >= WRAP_MIN_WIDTH and len(t) <= width:
            going.setdefault(last, []).append(i)
            prev = len(t)
        else:
            others += 1
            last, prev = -1, 0
    filled = len(nums) + others
    if not nums or len(nums) < min(PREFIX_MIN, filled) or len(nums) < 0.8 * filled:
        return False
    rows = sorted(j for js in going.values() for j in js)  # (bisect_left(rows, k): the rows of rests above row k)
    counted = sum(1 for (i, n), (j, k) in zip(nums, nums[1:])
                  if k - n == j - i - (bisect_left(rows, j) - bisect_left(rows, i)))
    if counted < 0.8 * (len(nums) - 1):
        return False
    if strict and (others or len(nums) < PREFIX_MIN or nums[0][1] < 1 or any(k <= n for (_, n), (_, k) in zip(nums, nums[1:]))):
        return False
    for i, t in enumerate(out):
        m = gutter.match(t) if t[:1] in starts else None
        if m is not None:
            out[i] = t[m.end():]
    if rests is not None:
        rests.update(going)
    return True
