"""The tables and small helpers every PyTorch classifier shares: c10/logger level letters, signal
and errno names, integer fields, a grammar parse that gives None on text it cannot read, and the
``cause`` record of a message nested in another. ``Read`` is the type of the dispatcher's own reader
(:func:`logdoc.classify.torch.read_message`), which the classifiers of nesting formats are handed to
read the message inside (an exception quoted in a watchdog record, the ``what()`` of a terminate)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Optional

from ...events import Envelope
from ...grammar import Parsed, lark_error, parser

if TYPE_CHECKING:
    from lark import Tree

Read = Callable[[str, Optional[Envelope]], Optional[Parsed]]

LEVELS = {
    "E": "ERROR", "W": "WARN", "I": "INFO", "F": "FATAL", "V": "DEBUG", "C": "FATAL", "D": "DEBUG",
    "ERROR": "ERROR", "WARN": "WARN", "WARNING": "WARN", "INFO": "INFO", "FATAL": "FATAL",
    "CRITICAL": "FATAL", "DEBUG": "DEBUG", "TRACE": "TRACE", "VERBOSE": "DEBUG",
}


SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
           8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
           14: "SIGALRM", 15: "SIGTERM"}
ERRNO_NAMES = {
    "Address already in use": "EADDRINUSE", "Connection refused": "ECONNREFUSED",
    "Connection reset by peer": "ECONNRESET", "Connection timed out": "ETIMEDOUT",
    "No route to host": "EHOSTUNREACH", "Network is unreachable": "ENETUNREACH",
    "Too many open files": "EMFILE", "Broken pipe": "EPIPE", "Cannot assign requested address": "EADDRNOTAVAIL",
    "Software caused connection abort": "ECONNABORTED", "Name or service not known": "EAI_NONAME",
    "Temporary failure in name resolution": "EAI_AGAIN", "Permission denied": "EACCES",
    "No such device": "ENODEV", "Resource temporarily unavailable": "EAGAIN",
    "address already in use": "EADDRINUSE",
}


ERRNO_NUMBERS = {98: "EADDRINUSE", 111: "ECONNREFUSED", 104: "ECONNRESET", 110: "ETIMEDOUT",
                 113: "EHOSTUNREACH", 101: "ENETUNREACH", 24: "EMFILE", 32: "EPIPE", 99: "EADDRNOTAVAIL",
                 103: "ECONNABORTED", 13: "EACCES", 11: "EAGAIN"}


def level_of(env: Envelope | None, default: str) -> str:
    if env is not None and env.level:
        return LEVELS.get(env.level.upper(), LEVELS.get(env.level[:1].upper(), default))
    return default


def to_int(v: Any) -> Any:
    if isinstance(v, str):
        s = v.strip()
        if re.fullmatch(r"-?\d{1,18}", s):
            return int(s)
    return v


def errno_name(text: str | None) -> str | None:
    if not text:
        return None
    for k, v in ERRNO_NAMES.items():
        if k in text:
            return v
    return None


def parse(grammar: str, text: str, start: str = "start") -> Tree | None:
    try:
        return parser(grammar, start).parse(text)
    except Exception as exc:  # noqa: BLE001 - only Lark's errors are a text it cannot read
        if not lark_error(exc):
            raise
        return None


UNREAD = object()  # what read() gives for a text its grammar cannot read


def read(grammar: str, text: str, transformer, start: str = "start") -> Any:
    """``transformer.transform(parse(grammar, text))``, or :data:`UNREAD` when the grammar cannot
    read the text: on a shape seen before, without building the tree (``CachedParser.transform``;
    ``transformer`` is one instance kept for all calls, its plans are kept by the parser)."""
    return parser(grammar, start).transform(text, transformer, UNREAD)


def cause(p: Parsed) -> dict[str, Any]:
    return {"kind": p.kind, "template": p.template, **p.fields}
