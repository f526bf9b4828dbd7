"""Windows' socket errors read as the POSIX errno that the same failure prints on Linux.

On Windows, c10d formats a socket's ``std::error_code`` in the system category: ``(system error: 10049 -
The requested address is not valid in its context.)`` where Linux prints ``(errno: 99 - Cannot assign
requested address)`` (torch/csrc/distributed/c10d/error.h), and Python raises ``[WinError 10061] No
connection could be made because the target machine actively refused it`` where Linux says ``[Errno 111]
Connection refused``. The message is in the system's language (``在其上下文中，该请求的地址无效。``), so
only the code names the failure. WinSock's codes are the BSD errno values plus 10000
(https://learn.microsoft.com/en-us/windows/win32/winsock/windows-sockets-error-codes-2); :func:`as_posix`
writes a text's Windows errors as Linux's, for the rules to read (:meth:`logdoc.kb.ruleset.RuleSet.match`
tries a rule on it when the text itself does not match). The evidence stays the line as printed.

Standard library only: this runs in the browser under Pyodide too.
"""
from __future__ import annotations

from .cuttail import errno_text
from .lazyre import lazy_re

# WinSock code -> Linux errno: the failures a connect, bind, listen or accept reports (the text is Linux's
# strerror of that number, logdoc/cuttail.py's table)
POSIX: dict[int, int] = {
    10013: 13,    # WSAEACCES
    10024: 24,    # WSAEMFILE
    10047: 97,    # WSAEAFNOSUPPORT
    10048: 98,    # WSAEADDRINUSE
    10049: 99,    # WSAEADDRNOTAVAIL
    10050: 100,   # WSAENETDOWN
    10051: 101,   # WSAENETUNREACH
    10053: 103,   # WSAECONNABORTED
    10054: 104,   # WSAECONNRESET
    10055: 105,   # WSAENOBUFS
    10060: 110,   # WSAETIMEDOUT
    10061: 111,   # WSAECONNREFUSED
    10064: 112,   # WSAEHOSTDOWN
    10065: 113,   # WSAEHOSTUNREACH
}

# c10d's `(system error: N - message)` (the message may hold any character but a line end; it ends at the
# parenthesis that closes the record), Python's `[WinError N] message` (to the line's end)
_C10D = lazy_re(r"\(system error: (?P<code>1\d{4}) - [^\n]*?\)(?=[.,;]?(?:\s|$))")
_PYTHON = lazy_re(r"\[WinError (?P<code>1\d{4})\] [^\n]*")


def _linux(code: str) -> tuple[int, str] | None:
    n = POSIX.get(int(code))
    text = errno_text(n) if n is not None else None
    return None if text is None else (n, text)


def _c10d(m) -> str:
    got = _linux(m["code"])
    return m[0] if got is None else f"(errno: {got[0]} - {got[1]})"


def _python(m) -> str:
    got = _linux(m["code"])
    return m[0] if got is None else f"[Errno {got[0]}] {got[1]}"


def as_posix(text: str) -> str | None:
    """``text`` with its Windows socket errors written as Linux prints them, or None when it holds none
    that :data:`POSIX` knows."""
    if not text:
        return None
    out = text
    if "system error: 1" in out:
        out = _C10D.sub(_c10d, out)
    if "[WinError 1" in out:
        out = _PYTHON.sub(_python, out)
    return out if out != text else None
