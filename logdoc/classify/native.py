"""A native crash's own words about where it happened: the frames of a backtrace that lie in NCCL or in Gloo,
and the kernel's report of a segmentation fault that names the library it was in.

A process that dies inside libnccl prints no NCCL message: its signal handler (UCX's, Open MPI's, Abseil's,
glog's) or a debugger prints the backtrace, and the kernel log says which library the faulting instruction
belonged to. The formats, each a line of its own:

- UCX: `` 1 0x00000000000a1b2c ncclProxyProgress()  /opt/nccl/src/proxy.cc:900`` (symbol first), and its
  older ``  3  /opt/nccl/lib/libnccl.so(+0x120057) [0x7ff1c18c1057]`` (glibc's backtrace_symbols, as Open MPI
  prints them too: ``[host:pid] [ 4] /usr/lib/libnccl.so.2(ncclProxyProgress+0x2c)[0x7f...]``);
- gdb: ``#0  0x00007f... in ncclProxyProgress () from /usr/lib/x86_64-linux-gnu/libnccl.so.2``;
- Abseil and glog: ``PC: @     0x7f...  (unknown)  ncclLocalOpAppend()``, ``    @     0x7f... ncclProxyService()``;
- py-spy's native frames: ``    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)``;
- gdb on a core file: ``Program terminated with signal SIGSEGV, Segmentation fault.`` (the signal), and gdb
  running the program: ``Thread 1 "python" received signal SIGSEGV, Segmentation fault.``, then the frame it
  stopped in without its ``#0`` (``gloo::transport::tcp::UnboundBuffer::send (this=0x..., dstRank=0, ...) at
  ../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:163``);
- the kernel (dmesg): ``python[1234]: segfault at 8 ip 00007f... sp 00007f... error 4 in libnccl.so.2.18.1[7f...+1c00000]``.

A frame becomes ``process.native_frame`` (``library``, ``symbol``, ``frame_format``) only when it is NCCL's (the
library is libnccl or one of its plugins, or the symbol is an ``nccl*`` function) or Gloo's (a ``gloo::`` symbol,
PyTorch's copy in third_party/gloo or a libgloo); the kernel's line becomes
``process.signal`` (signal 11) with the ``library`` it names. What a crash there means is the knowledge base's.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

_SYMBOL_FIRST = lazy_re(r"^\s*\d{1,3}\s+0x[0-9a-fA-F]{1,16}\s+(?P<sym>[A-Za-z_][\w:~]{0,200})\(\)(?:\s+(?P<where>\S{1,300}))?\s*$")
_LIB_FIRST = lazy_re(r"(?:^|\s|\])(?P<lib>/?[^\s()\[\]]{0,300}?lib[\w.+-]{0,80}\.so[\d.]{0,20})\((?P<sym>[A-Za-z_]\w{0,200})?"
                     r"\+0x[0-9a-fA-F]{1,16}\)\s*\[0x[0-9a-fA-F]{1,16}\]")
_GDB = lazy_re(r"^#\d{1,3}\s+(?:0x[0-9a-fA-F]{1,16} in )?(?P<sym>[A-Za-z_][\w:~]{0,200}) \([^)\n]{0,300}\)"
               r"(?: from (?P<lib>\S{1,300})| at (?P<where>\S{1,300}))?")
# gdb's stop, the frame it stopped in without its number: `<symbol> (<arguments>) at <file>:<line>`
_GDB_STOP = lazy_re(r"^(?P<sym>[A-Za-z_][\w:~]{0,200}) \([^)\n]{0,300}\) at (?P<where>\S{1,300})")
_AT_FRAME = lazy_re(r"^\s*(?:PC: )?@\s+0x[0-9a-fA-F]{1,16}\s+(?:(?:\d{1,8}\s+)?\(unknown\)\s+)?(?P<sym>[A-Za-z_][\w:~]{0,200})(?:\(\))?\s*$")
_KERNEL_SEGV = lazy_re(r"(?P<comm>[^\s\[\]:]{1,64})\[(?P<pid>\d{1,10})\]: segfault at (?P<addr>[0-9a-fA-F]{1,16}) ip [0-9a-fA-F]{1,16} "
                       r"sp [0-9a-fA-F]{1,16} error (?P<err>\d{1,4})(?: in (?P<lib>[^\s\[\]]{1,200})\[)?")
# gdb on a core file: `Program terminated with signal SIGSEGV, Segmentation fault.`
_GDB_CORE = lazy_re(r"^Program terminated with signal (?P<sig>SIG[A-Z]{2,6}), (?P<name>[A-Z][\w /-]{2,40}?)\.?\s*$")
# gdb running the program: `Thread 1 "python" received signal SIGSEGV, Segmentation fault.` (`Program received
# signal ...` without threads)
_GDB_LIVE = lazy_re(r'^(?:Thread \d{1,6}(?: "[^"\n]{0,64}")?(?: \([^)\n]{0,80}\))? |Program )received signal (?P<sig>SIG[A-Z]{2,6}), '
                    r'(?P<name>[A-Z][\w /-]{2,40}?)\.?\s*$')
_SIGNALS = {"SIGILL": 4, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8, "SIGSEGV": 11}
# py-spy dump --native: `    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)`, `    sched_yield (libc.so.6)`
_PYSPY = lazy_re(r"^\s{0,12}(?P<sym>[A-Za-z_][\w:~]{0,200}) \((?P<where>[^()\s]{1,200})\)\s*$")
_NCCL_LIB = lazy_re(r"(?:^|/)libnccl[\w.+-]{0,80}$")
_NCCL_SYMBOL = lazy_re(r"^_{0,2}nccl[A-Z_]\w*$")
_GLOO_SYMBOL = lazy_re(r"^gloo::\w")
_GLOO_LIB = lazy_re(r"(?:^|/)libgloo[\w.+-]{0,80}$")
# NCCL's RAS subsystem (src/ras/*.cc, 2.24+) names its functions ras<Name>: NCCL's when the line names nccl (a path)
_RAS_SYMBOL = lazy_re(r"^ras[A-Z]\w*$")


def _basename(path: str | None) -> str | None:
    return path.rsplit("/", 1)[-1] if path else None


def classify_native(line: str) -> Parsed | None:
    """``process.native_frame`` for a backtrace frame in NCCL, ``process.signal`` for the kernel's segfault
    report; None otherwise."""
    if "segfault at" in line:
        m = _KERNEL_SEGV.search(line, 0, min(len(line), 1024))
        if m is not None:
            f = {"signal": 11, "signal_name": "Segmentation fault", "printer": "the kernel", "command": m["comm"],
                 "signal_pid": int(m["pid"]), "reason": f"segfault at {m['addr']}, error {m['err']}"}
            if m["lib"]:
                f["library"] = m["lib"]
            return Parsed("process.signal", "ERROR", "process.signal", f)
        return None
    if line.startswith("Program terminated with signal"):
        m = _GDB_CORE.match(line)
        if m is not None and m["sig"] in _SIGNALS:
            return Parsed("process.signal", "ERROR", "process.signal",
                          {"signal": _SIGNALS[m["sig"]], "signal_name": m["name"], "printer": "gdb (a core file)"})
        return None
    if " received signal SIG" in line:
        m = _GDB_LIVE.match(line)
        if m is not None and m["sig"] in _SIGNALS:
            return Parsed("process.signal", "ERROR", "process.signal",
                          {"signal": _SIGNALS[m["sig"]], "signal_name": m["name"], "printer": "gdb"})
        return None
    if "nccl" not in line and "gloo" not in line:
        return None
    for fmt, rx in (("ucx", _SYMBOL_FIRST), ("gdb", _GDB), ("abseil", _AT_FRAME), ("py-spy", _PYSPY),
                    ("gdb", _GDB_STOP), ("backtrace_symbols", _LIB_FIRST)):
        m = (rx.search if rx is _LIB_FIRST else rx.match)(line, 0, min(len(line), 1024))
        if m is None:
            continue
        lib = m.groupdict().get("lib")
        sym = m["sym"]
        where = m.groupdict().get("where") or ""
        if (lib and _GLOO_LIB.search(lib)) or (sym and _GLOO_SYMBOL.match(sym)):
            component = "gloo"
        elif (lib and _NCCL_LIB.search(lib)) or (sym and (_NCCL_SYMBOL.match(sym) or _RAS_SYMBOL.match(sym))) or (
                not lib and "libnccl" in where):
            component = "nccl"
        else:
            return None
        f = {"frame_format": fmt, "component": component}
        if lib:
            f["library"] = _basename(lib)
        if sym:
            f["symbol"] = sym
        return Parsed("process.native_frame", "INFO", "process.native_frame", f)
    return None
