"""Windows' socket errors (logdoc/winsock.py): c10d's `(system error: N - ...)` and Python's `[WinError N]`
read as the Linux errno the same failure prints, whatever the language of the system's message."""
from __future__ import annotations

import pytest

from logdoc.api import explain_sources
from logdoc.pipeline import parse_sources
from logdoc.winsock import as_posix


def _ids(text: str) -> tuple[list[str], list[str]]:
    rep = explain_sources([("log.txt", text)])
    return [d["id"] for d in rep["diagnoses"]], [n["id"] for n in rep["notes"]]


def test_c10d_and_python_windows_errors_written_as_linux_prints_them():
    assert as_posix("The client socket has failed to connect to [h]:29500 (system error: 10049 - "
                    "The requested address is not valid in its context.).") == \
        "The client socket has failed to connect to [h]:29500 (errno: 99 - Cannot assign requested address)."
    # the system's language does not matter: the code names the failure
    assert as_posix("to [Auronya]:50175 (system error: 10061 - 由于目标计算机积极拒绝，无法连接。).") == \
        "to [Auronya]:50175 (errno: 111 - Connection refused)."
    assert as_posix("OSError: [WinError 10048] Only one usage of each socket address (protocol/network address/port) "
                    "is normally permitted") == "OSError: [Errno 98] Address already in use"
    # Linux's own, a code it does not know, and a Windows error of no socket stay as they are
    assert as_posix("(errno: 111 - Connection refused)") is None
    assert as_posix("(system error: 10099 - something)") is None
    assert as_posix("[WinError 5] Access is denied") is None


def test_the_windows_connect_warning_is_read_as_its_linux_twin():
    win = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [DESKTOP-63Q8UGP]:29500 "
           "(system error: 10049 - The requested address is not valid in its context.).\n")
    linux = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [DESKTOP-63Q8UGP]:29500 "
             "(errno: 99 - Cannot assign requested address).\n")
    ev, = parse_sources([("log.txt", win)]).events
    assert ev.kind == "store.connect_retry" and ev.fields["error_category"] == "system error"
    assert ev.fields["errno"] == 10049
    assert _ids(win) == _ids(linux) and _ids(win)[1]  # the same notes (LD142, LD631); silent before


@pytest.mark.parametrize("line", [
    # c10d's listen failure with WSAEADDRINUSE (the store's port taken)
    "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
    "to bind to [::]:23456 (system error: 10048 - Only one usage of each socket address (protocol/network "
    "address/port) is normally permitted.).",
    # Python's own bind error on Windows
    "OSError: [WinError 10048] Only one usage of each socket address (protocol/network address/port) is normally "
    "permitted",
])
def test_a_port_in_use_on_windows_is_named(line):
    rep = explain_sources([("log.txt", line + "\n")])
    first = rep["diagnoses"][0]
    assert first["category"] == "port_in_use" and first["id"] != "LD619"  # LD619: it could not listen, no why
