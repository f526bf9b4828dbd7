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

from .lazyre import lazy_re

# WinSock code -> (Linux errno, Linux strerror): the failures a connect, bind, listen or accept reports
POSIX: dict[int, tuple[int, str]] = {
    10013: (13, "Permission denied"),                          # WSAEACCES
    10024: (24, "Too many open files"),                        # WSAEMFILE
    10047: (97, "Address family not supported by protocol"),   # WSAEAFNOSUPPORT
    10048: (98, "Address already in use"),                     # WSAEADDRINUSE
    10049: (99, "Cannot assign requested address"),            # WSAEADDRNOTAVAIL
    10050: (100, "Network is down"),                           # WSAENETDOWN
    10051: (101, "Network is unreachable"),                    # WSAENETUNREACH
    10053: (103, "Software caused connection abort"),          # WSAECONNABORTED
    10054: (104, "Connection reset by peer"),                  # WSAECONNRESET
    10055: (105, "No buffer space available"),                 # WSAENOBUFS
    10060: (110, "Connection timed out"),                      # WSAETIMEDOUT
    10061: (111, "Connection refused"),                        # WSAECONNREFUSED
    10064: (112, "Host is down"),                              # WSAEHOSTDOWN
    10065: (113, "No route to host"),                          # WSAEHOSTUNREACH
}

# c10d's `(system error: N - message)` (the message may hold any character but a line end; it ends at the
# parenthesis that closes the record), Python's `[WinError N] message` (to the line's end)
_C10D = lazy_re(r"\(system error: (?P<code>1\d{4}) - [^\n]*?\)(?=[.,;]?(?:\s|$))")
_PYTHON = lazy_re(r"\[WinError (?P<code>1\d{4})\] [^\n]*")


def _c10d(m) -> str:
    got = POSIX.get(int(m["code"]))
    return m[0] if got is None else f"(errno: {got[0]} - {got[1]})"


def _python(m) -> str:
    got = POSIX.get(int(m["code"]))
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
