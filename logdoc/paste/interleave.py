"""Character-interleaved output of two processes (``TTrraacceebbaacckk``): detected, and
de-interleaved when the two pieces are one text printed twice; two writes of one line that alternate
in chunks; the empty lines such a run leaves moved together.
"""
from __future__ import annotations

from ..lazyre import lazy_re
from .common import _EXC_START, MAX_INTERLEAVED

# ------------------------------------------------------------------------------------------------
# character interleaving

_DOUBLED = lazy_re(r"([A-Za-z])\1")


def is_interleaved(line: str) -> bool:
    """A line in which two copies of one text alternate character by character (``TTrraaccee``):
    most of its letters come in doubled pairs, far more than any language doubles them."""
    n = len(line)
    if n < 16 or n > MAX_INTERLEAVED:
        return False
    pairs = len(_DOUBLED.findall(line))
    if 2 * pairs < 0.3 * n:
        return False
    letters = sum(1 for c in line if c.isalpha())
    if letters < 8:
        return False
    if 2 * pairs < 0.6 * letters:
        return False
    # the text taken apart reads as text: varied letters, few doubled ones (not `xxxxxxxx`, `aabbcc`)
    lead, _lag = deinterleave(line)
    lead_letters = sum(1 for c in lead if c.isalpha())
    return (len({c.lower() for c in lead if c.isalpha()}) >= 6
            and 2 * len(_DOUBLED.findall(lead)) < 0.3 * max(lead_letters, 1))


def deinterleave(line: str) -> tuple[str, str]:
    """Split a line where two copies of one text alternate: each character goes to the copy that
    lags when it is the character that copy expects next (or, while the copies alternate one to
    one, a variant of it: a digit for a digit, a letter for a letter, where the two texts differ,
    as rank numbers and names do), else to the leading copy. Returns the leading copy and the lagging one."""
    lead: list[str] = []
    lag: list[str] = []
    for c in line:
        j = len(lag)
        if j < len(lead):
            x = lead[j]
            if x == c or (j == len(lead) - 1 and (x.isdigit() and c.isdigit() or x.isalpha() and c.isalpha())):
                lag.append(c)
                continue
        lead.append(c)
    return "".join(lead), "".join(lag)



def interleaved_writes(line: str) -> str | None:
    """One process's copy of a line in which two processes' writes of the same text alternate in
    chunks (not character by character): a line that is its own text twice (``f()f()``), or an
    exception line whose type two writes split (``torch.distributedtorch.distributed.DistBackendError.:
    DistBackendErrorNCCL error in: ...``, read apart by :func:`deinterleave` into an exception line
    and a copy of its start). None when the line is not one of these."""
    t = line.strip()
    n = len(t)
    if n < 16 or n > MAX_INTERLEAVED:
        return None
    half = t[: n // 2]
    if n % 2 == 0 and half == t[n // 2:]:
        # a text twice, not a text that repeats anyway (a line of ``^`` or ``=``, ``abab``): the half
        # has no shorter period, and words
        if (half + half).find(half, 1) == len(half) and sum(c.isalpha() for c in half) >= 4:
            return line[: len(line) - len(line.lstrip())] + half
        return None
    if _EXC_START.match(t) is not None or not t[:1].isalpha():
        return None
    k = t.find(t[:12], 8)  # where the second copy starts
    if k < 0:
        return None
    lead: list[str] = list(t[:k])
    lag: list[str] = []
    idle = 0
    for c in t[k:]:  # deinterleave() without its one-to-one variants: chunks are copied exactly
        if idle < 24 and len(lag) < len(lead) and lead[len(lag)] == c:
            lag.append(c)
            idle = 0
        else:
            lead.append(c)  # (a copy that took nothing for 24 characters has ended: the rest is the lead's)
            idle += 1
    lead_s, lag_s = "".join(lead), "".join(lag)
    if len(lag_s) >= 12 and lead_s.startswith(lag_s) and _EXC_START.match(lead_s) is not None:
        return line[: len(line) - len(line.lstrip())] + lead_s
    return None


def _close_up(out: list[str], spans: list[int]) -> None:
    """Where the line ends of the two processes alternate too, each de-interleaved line is followed
    by an empty one (the other copy's line end): the lines of such a run are moved together and the
    empty lines after them, so a record is not cut by blank lines (line numbers inside the run
    become approximate)."""
    marked = set(spans)
    i = 0
    n = len(out)
    while i < n:
        if i + 1 not in marked:
            i += 1
            continue
        j = i
        texts: list[str] = []
        blanks = 0
        while j < n and (j + 1 in marked or (out[j] == "" and j > i and (j in marked))):
            if out[j]:
                texts.append(out[j])
            else:
                blanks += 1
            j += 1
        if blanks:
            out[i:j] = texts + [""] * blanks
        i = j
