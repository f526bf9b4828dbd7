"""A message cut inside a phrase of a closed list, completed: what the rules match a cut line against.

A viewer or terminal that cuts a line at its width often cuts it inside the last words a rule needs:
the ``strerror`` text of a failed call (``Socket creation failed : Address family not sup``,
``Cannot assign requeste``), a CUDA runtime error string (``CUDA driver version is insufficien``) or
an NCCL result string. Those texts come from closed lists, so a cut head of one names it:
:func:`complete` returns the message with the phrase it ends inside written out in full, and the rule
matcher (:mod:`logdoc.kb.ruleset`) tries a rule that did not match the message on that text as well.
The event keeps its own text (the evidence shows what was pasted).

A tail is completed only when it is certain:

- the message ends (before a viewer's cut mark, :func:`logdoc.classify.cut.strip_mark`) with a proper
  prefix of a listed phrase of at least :data:`MIN_PREFIX` characters that starts a word;
- every phrase it can be the head of completes it the same way (``Connection re`` is refused or reset:
  no completion; ``Too many open fil`` is ``Too many open files``, which the longer
  ``Too many open files in system`` begins with);
- the message does not already end with a whole phrase (``... returned Too many open files`` is not
  cut).

The completion also closes what the format opened before the phrase: a quote right before it and the
brackets still open (``Cuda failure 'CUDA driver version is insufficien`` reads ``... runtime version'``;
``(errno: 110 - Connection t`` reads ``(errno: 110 - Connection timed out)``).

The lists: glibc's ``strerror`` texts on Linux (``sysdeps/gnu/errlist.h``; the same as
``os.strerror``), the CUDA runtime's ``cudaGetErrorString`` texts that name a failure
(https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html), and ``ncclGetErrorString``'s
result strings (NCCL ``src/init.cc``; /work's catalog ``nccl-result-codes.tsv``).

The look-up costs one dictionary probe per message: phrases are filed by the :data:`MIN_PREFIX`
characters that end each of their prefixes, and a message asks with its own last characters.
"""
from __future__ import annotations

from string import ascii_letters

from .classify.cut import format_head, strip_mark
from .classify.neighbours import CUDA_ERROR_TEXTS
from .lazyre import lazy_re

MIN_PREFIX = 8  # characters of a phrase a cut tail must hold

ERRNO_TEXTS = (
    "Operation not permitted", "No such file or directory", "No such process", "Interrupted system call",
    "Input/output error", "No such device or address", "Argument list too long", "Exec format error",
    "Bad file descriptor", "No child processes", "Resource temporarily unavailable", "Cannot allocate memory",
    "Permission denied", "Bad address", "Device or resource busy", "File exists", "Invalid cross-device link",
    "No such device", "Not a directory", "Is a directory", "Invalid argument", "Too many open files in system",
    "Too many open files", "Inappropriate ioctl for device", "Text file busy", "File too large",
    "No space left on device", "Read-only file system", "Too many links", "Broken pipe",
    "Numerical result out of range", "Resource deadlock avoided", "File name too long", "No locks available",
    "Function not implemented", "Directory not empty", "Too many levels of symbolic links", "No data available",
    "Timer expired", "Machine is not on the network", "Protocol error", "Bad message",
    "Value too large for defined data type", "Socket operation on non-socket", "Destination address required",
    "Message too long", "Protocol wrong type for socket", "Protocol not available", "Protocol not supported",
    "Socket type not supported", "Operation not supported", "Protocol family not supported",
    "Address family not supported by protocol", "Address already in use", "Cannot assign requested address",
    "Network is down", "Network is unreachable", "Network dropped connection on reset",
    "Software caused connection abort", "Connection reset by peer", "No buffer space available",
    "Transport endpoint is already connected", "Transport endpoint is not connected",
    "Cannot send after transport endpoint shutdown", "Connection timed out", "Connection refused",
    "Host is down", "No route to host", "Operation already in progress", "Operation now in progress",
    "Stale file handle", "Remote I/O error", "Disk quota exceeded", "Operation canceled",
    "Memory page has hardware error",
)

# the CUDA runtime's texts that name one failure (the neighbours reader's list), and the generic ones a cut can
# still name when the message ends in one
CUDA_TEXTS = tuple(sorted(CUDA_ERROR_TEXTS)) + (
    "API call is not supported in the installed CUDA driver",
    "too many resources requested for launch",
    "no kernel image is available for execution on the device",
    "operation not permitted when stream is capturing",
    "operation not supported",
    "initialization error",
    "invalid argument",
    "out of memory",
)

NCCL_RESULT_TEXTS = (
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "internal error - please report this issue to the NCCL developers",
    "invalid argument (run with NCCL_DEBUG=WARN for details)",
    "invalid usage (run with NCCL_DEBUG=WARN for details)",
    "remote process exited or there was a network error",
    "NCCL operation in progress",
)

PHRASES = tuple(dict.fromkeys(ERRNO_TEXTS + CUDA_TEXTS + NCCL_RESULT_TEXTS))


def _index(phrases: tuple[str, ...]) -> dict[str, list[tuple[str, int]]]:
    """``(phrase, k)`` for every prefix ``phrase[:k]`` of at least :data:`MIN_PREFIX` characters
    (the whole phrase too: a message that ends with it is not cut), filed by its last characters."""
    out: dict[str, list[tuple[str, int]]] = {}
    for p in phrases:
        for k in range(MIN_PREFIX, len(p) + 1):
            out.setdefault(p[k - MIN_PREFIX:k], []).append((p, k))
    return out


_BY_TAIL = _index(PHRASES)
_MARK_END = frozenset(".\u2026])>")  # how a text with a viewer's cut mark ends
_MARK_WORDS = ("trunc", "trimm", "more")  # the words of a bracketed mark (classify/cut.py CUT_MARK)


def _may_have_mark(body: str) -> bool:
    """Whether ``body`` can end with a viewer's cut mark: a run of dots or an ellipsis, or a bracket
    with a mark's word before it (cheap tests: most messages end with a full stop or a bracket, and
    the mark's pattern is searched only for these)."""
    if body.endswith(("..", "\u2026")):
        return True
    if body[-1] == ".":
        return False
    tail = body[-80:].lower()
    return any(w in tail for w in _MARK_WORDS)


def complete(text: str, in_word: bool = False) -> str | None:
    """``text`` with the listed phrase it was cut inside written out (and without the viewer's cut
    mark), or None when its end is no certain cut of one (see the module docstring). With ``in_word``,
    only a cut inside a word of the phrase counts: a line that ends at a word's end and a run of dots may
    be a program's progress line (simpleP2P's ``Disabling peer access...``), not a cut one."""
    if not text:
        return None
    body = text.rstrip()
    if body and body[-1] in _MARK_END and _may_have_mark(body):
        body, _ = strip_mark(body)
    short = _by_errno_number(body)
    if short is not None:
        return short
    rows = _BY_TAIL.get(body[-MIN_PREFIX:])
    if not rows:
        return None
    found: dict[str, int] = {}
    for phrase, k in rows:
        start = len(body) - k
        if start < 0 or not body.endswith(phrase[:k]):
            continue
        if start > 0 and (body[start - 1].isalnum() or body[start - 1] == "_"):
            continue  # inside a word: `xCannot assign` is not the phrase
        if k == len(phrase):
            return None  # it ends with a whole phrase: not cut there
        if in_word and not (phrase[k - 1].isalnum() and phrase[k].isalnum()):
            continue
        found.setdefault(phrase, k)
    if not found:
        return None
    shortest = min(found, key=len)
    if any(not p.startswith(shortest) for p in found):
        shortest = _by_errno(body, found)  # the heads of two phrases: the errno number before them may name one
        if shortest is None:
            return None
    start = len(body) - found[shortest]
    return body[:start] + shortest + _closers(body[:start])


def complete_format(text: str, message: str, fmt: str) -> str | None:
    """``text`` (a line that ends with ``message``) with the rest of the catalog format ``fmt``'s first
    words written out, when the message is a cut head of them (an NCCL WARN cut by a viewer's width that
    the catalog named: ``NCCL WARN Call to ibv_modif`` reads ``... Call to ibv_modify_qp failed with ``),
    or None. The format's words up to its first placeholder: what every reading of it prints."""
    if not text or not message or not fmt:
        return None
    body, msg = text.rstrip(), message.rstrip()
    if body and body[-1] in _MARK_END and _may_have_mark(body):
        body, _ = strip_mark(body)
        msg, _ = strip_mark(msg)
    if not msg or not body.endswith(msg):
        return None
    head = format_head(fmt)
    if len(head) <= len(msg) or not head.startswith(msg):
        return None
    return body + head[len(msg):]


# the errno number a message prints before the text (c10d's `(errno: 110 - Connection t`, `errno 111: Connection`)
_ERRNO_BEFORE = lazy_re(r"\berrno:? ?(\d{1,3})\s*[-:]\s*\Z")
# Linux's errno numbers of the texts whose heads a cut leaves ambiguous (`Connection` is refused, reset or timed
# out; `No such device` or `No such device or address`; as glibc's strerror names them)
_ERRNO_TEXT = {"Operation not permitted": 1, "No such file or directory": 2, "No such process": 3,
               "No such device or address": 6, "No such device": 19, "Too many open files in system": 23,
               "Too many open files": 24, "Protocol error": 71, "Protocol wrong type for socket": 91,
               "Protocol not available": 92, "Protocol not supported": 93, "Operation not supported": 95,
               "Protocol family not supported": 96, "Network is down": 100, "Network is unreachable": 101,
               "Network dropped connection on reset": 102, "Software caused connection abort": 103,
               "Connection reset by peer": 104, "Transport endpoint is already connected": 106,
               "Transport endpoint is not connected": 107, "Connection timed out": 110, "Connection refused": 111,
               "Operation already in progress": 114, "Operation now in progress": 115,
               "Interrupted system call": 4, "Bad file descriptor": 9, "Resource temporarily unavailable": 11,
               "Cannot allocate memory": 12, "Permission denied": 13, "Invalid argument": 22, "Broken pipe": 32,
               "Address family not supported by protocol": 97, "Address already in use": 98,
               "Cannot assign requested address": 99, "No buffer space available": 105, "Host is down": 112,
               "No route to host": 113}
_ERRNO_NAMED = {n: t for t, n in _ERRNO_TEXT.items()}


def errno_text(n: int) -> str | None:
    """Linux's strerror text of errno ``n``, when the table above holds it."""
    return _ERRNO_NAMED.get(n)
# the errno number and what a cut left of its text, shorter than MIN_PREFIX (`(errno: 110 - Connect...`, `errno: 111 -`)
_ERRNO_CUT = lazy_re(r"\berrno:? ?(\d{1,3})\s*[-:](?:\s*(?P<head>[A-Za-z][A-Za-z/ ]{0,%d}))?\Z" % (MIN_PREFIX - 2))


def _by_errno_number(body: str) -> str | None:
    """``body`` completed with the text of the errno number it ends with, when a cut left fewer than
    :data:`MIN_PREFIX` characters of that text (or none) after the number, and they begin it; or None."""
    if "errno" not in body[-MIN_PREFIX - 16:]:
        return None
    m = _ERRNO_CUT.search(body, max(0, len(body) - MIN_PREFIX - 16))
    phrase = _ERRNO_NAMED.get(int(m.group(1))) if m is not None else None
    head = (m.group("head") or "") if m is not None else ""
    if phrase is None or not phrase.startswith(head) or head == phrase:
        return None
    pre = body[:m.start("head")] if head else body + " "
    return pre + phrase + _closers(pre)


def _by_errno(body: str, found: dict[str, int]) -> str | None:
    """The one phrase of ``found`` that the errno number printed right before it names, or None."""
    for phrase, k in found.items():
        m = _ERRNO_BEFORE.search(body, 0, len(body) - k)
        if m is not None and _ERRNO_TEXT.get(phrase) == int(m.group(1)):
            return phrase
    return None


_PAIRS = {"(": ")", "[": "]"}
_QUOTES = "'\"`"


def _closers(head: str) -> str:
    """What closes the quote that opens right before the phrase (``Cuda failure 'CUDA driver ...``) and
    the brackets left open before it (``(errno: 110 - Connection t``): the format's closing marks a
    pattern may require after the phrase, which the cut took with the rest."""
    out = head[-1] if head and head[-1] in _QUOTES else ""
    stack: list[str] = []
    for c in head:
        if c in _PAIRS:
            stack.append(_PAIRS[c])
        elif stack and c == stack[-1]:
            stack.pop()
    return out + "".join(reversed(stack))


MIN_ACROSS = 12  # characters of a phrase that says two pieces were one line (``out of`` / ``memory`` says little)


def across(text: str, at: int) -> bool:
    """Whether a listed phrase of at least :data:`MIN_ACROSS` characters runs over position ``at`` of
    ``text``, starting at a word start: ``... failed : Ad`` + ``dress family not supported by protocol``
    joined at the cut reads ``Address family not supported by protocol`` whole, which neither piece
    holds. The paste module joins two lines a terminal cut inside such a text (``logdoc.paste``)."""
    for phrase in PHRASES:
        n = len(phrase)
        if n < MIN_ACROSS:
            continue
        lo = max(0, at - n + 1)
        s = text.find(phrase, lo, at + n - 1)
        while s != -1 and s < at:
            if s + n > at and (s == 0 or not (text[s - 1].isalnum() or text[s - 1] == "_")):
                return True
            s = text.find(phrase, s + 1, at + n - 1)
    return False


_WORDS: frozenset[str] | None = None


def _catalog_words() -> frozenset[str]:
    """The words (two letters or more, lower case) of the catalogs' formats (``grammars/nccl_messages.tsv``,
    ``grammars/torch_templates.tsv``) and of the listed phrases: the vocabulary of the messages rules read."""
    global _WORDS
    if _WORDS is None:
        import re

        from .resources import grammar_text

        letters = re.compile(r"[A-Za-z]{2,}")
        texts = [row.rsplit("\t", 1)[-1] for name in ("nccl_messages.tsv", "torch_templates.tsv")
                 for row in grammar_text(name).splitlines() if not row.startswith("#")]
        _WORDS = frozenset(w.lower() for t in texts + list(PHRASES) for w in letters.findall(t))
    return _WORDS


def two_words(left: str, right: str) -> bool:
    """Whether the letters a cut at a column put apart (``... A worker`` | ``died or was killed``) were two words
    (the blank between them lost with the line's end): each reads as a word of the catalogs' formats, and together
    they are not one (``net`` | ``work`` stays one)."""
    words = _catalog_words()
    a = left[len(left.rstrip(ascii_letters)):].lower()
    b = right[:len(right) - len(right.lstrip(ascii_letters))].lower()
    return len(a) >= 2 and len(b) >= 2 and a in words and b in words and a + b not in words


def one_word(left: str, right: str) -> bool:
    """Whether the letters a cut at a column put apart (``... without libuv suppor`` | ``t``) were one
    word: the letters that end ``left`` and start ``right`` read together as a word of the catalogs'
    formats, and apart they are not two such words (``in`` | ``to`` stays two)."""
    words = _catalog_words()
    a = left[len(left.rstrip(ascii_letters)):]
    b = right[:len(right) - len(right.lstrip(ascii_letters))]
    if not a or not b or (a + b).lower() not in words:
        return False
    return not (a.lower() in words and b.lower() in words)
