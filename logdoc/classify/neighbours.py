"""Lines other programs print beside NCCL, read where no NCCL header is: an ibverbs call failed in another RDMA library
(UCX, rdma-core users); rdma-core's dump of an error completion; a CUDA runtime error text standing alone; UCX's
``Caught signal`` and a shell's, faulthandler's, Abseil's or glog's report of a fatal signal; a py-spy frame in a
torch.distributed collective; Ray's object-store warning about /dev/shm; Envoy's own log lines. One reader per
program, each a regex of that program's printed format and a ``Parsed`` (or None).
:func:`logdoc.classify.bare.classify_bare` calls them for a record that no header reads."""
from __future__ import annotations

from typing import Any

from ..grammar import Parsed
from ..lazyre import lazy_re
from .cut import cut_search, strip_mark


# An ibverbs call that failed, as RDMA libraries other than NCCL print it (UCX `uct/ib`,
# `ucs_error("ibv_create_cq(cqe=%d) failed: %m")`; rdma-core users `mlx5_0: ibv_create_cq() failed: ...`):
# no NCCL header, the verbs call and the errno text.
_VERBS_FAILED = lazy_re(
    r"^(?:\[[^\]]*\]\s*)*(?:[\w./-]+\.c\w*:\d+\s+)?(?:(?P<lib>UCX|ucx)\s+)?(?:ERROR|WARN|error)?:?\s*(?:(?P<dev>[\w-]+):\s+)?"
    r"(?P<call>ibv_\w+|mlx5dv_\w+|rdma_\w+)\((?P<args>[^()]*)\)\s+failed:\s+(?P<errno_text>[A-Za-z][^.]*?)\.?\s*$")


def classify_verbs(line: str) -> Parsed | None:
    """A failed ibverbs call printed by an RDMA library other than NCCL (UCX, rdma-core users):
    ``verbs.error``, or None."""
    if "ibv_" not in line and "mlx5dv_" not in line and "rdma_" not in line:
        return None
    m = _VERBS_FAILED.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"call": m["call"], "errno_text": m["errno_text"].strip()}
    if m["dev"]:
        f["device"] = m["dev"]
    if m["lib"]:
        f["library"] = "UCX"
    if m["args"]:
        f["call_args"] = m["args"]
    return Parsed("verbs.error", "ERROR", "verbs.error", f)


# rdma-core's mlx5 provider (providers/mlx5/cq.c), on a completion with an error other than a flushed work
# request or an exhausted transport retry: `mlx5: <hostname>: got completion with error:` and the CQE as four
# lines of hex words (its syndrome is the last byte of the second word of the fourth line).
# (`mlx5: ` may already be peeled as a pdsh-style host prefix: the host name alone then leads the message)
_CQE_DUMP = lazy_re(r"(?:^|\s)(?:(?P<provider>mlx5|xsc): )?(?P<host>[^\s:]{1,255}): got completion with error:\s*$")


def classify_cqe_dump(line: str) -> Parsed | None:
    """``verbs.cqe_error`` for the header of an RDMA provider's dump of an error completion, or None."""
    m = _CQE_DUMP.search(line, 0, min(len(line), 512))
    if m is None:
        return None
    return Parsed("verbs.cqe_error", "ERROR", "verbs.cqe_error",
                  {"provider": m["provider"] or "mlx5", "nic_host": m["host"]})


# Ray's object store (raylet, store_runner.cc) asks /dev/shm for its size at start and warns when /dev/shm
# holds less: `System memory request exceeds memory available in /dev/shm. The request is for N bytes, and
# the amount available is M bytes.` (it then shrinks the store to what is there).
_RAY_STORE_SHM = lazy_re(r"System memory request exceeds memory available in (?P<dir>\S+?)\.?\s+The request is for "
                            r"(?P<requested>\d+) bytes, and the amount available is (?P<available>\d+) bytes")


def classify_ray_store(line: str) -> Parsed | None:
    """``ray.store_shm`` for the raylet's /dev/shm warning; None otherwise. A head a viewer's or a terminal's
    width cut after at least CUT_MIN_LITERAL characters of the warning (``... exceeds memory available in
    /dev/sh…``) is the warning with ``cut`` and the fields the head still holds whole."""
    m = _RAY_STORE_SHM.search(line)
    if m is not None:
        return Parsed("ray.store_shm", "WARN", "ray.store_shm",
                      {"dir": m["dir"], "requested": int(m["requested"]), "available": int(m["available"])})
    m = cut_search(_RAY_STORE_SHM.compiled, line)
    if m is None:
        return None
    fields: dict[str, Any] = {k: (v if k == "dir" else int(v)) for k, v in m.groupdict().items()
                              if v is not None and m.end(k) < m.end()}  # (a group the cut ended is not whole)
    return Parsed("ray.store_shm", "WARN", "ray.store_shm", {"cut": True, **fields})


# Envoy's own log (the Istio sidecar `istio-proxy` of a pod, and Envoy alone): the Istio format
# `2022-07-19T18:01:59.173713Z<TAB>debug<TAB>envoy connection<TAB>[C72] remote early close` and Envoy's default
# `[2022-07-19 18:01:59.173][23][debug][connection] [source/common/network/connection_impl.cc:133] [C72] ...`.
# Where such lines are in a training job's logs, a proxy stands between its processes and the network.
_ENVOY_ISTIO = lazy_re(r"^(?:\S*\d\d:\d\d:\d\d(?:\.\d+)?Z?\t)?(?P<level>[a-z]+)\tenvoy (?P<logger>[\w.]+)\t(?P<msg>.*)$")
_ENVOY_DEFAULT = lazy_re(r"^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.\d]*\]\[\d+\]\[(?P<level>[a-z]+)\]\[(?P<logger>[\w.]+)\] "
                            r"\[[^\]]*(?:envoy|source/(?:common|server|extensions))[^\]]*\] (?P<msg>.*)$")
_ENVOY_PORT = lazy_re(r"\b(?:inbound|outbound)\|(?P<port>\d+)\|")


def classify_envoy(line: str) -> Parsed | None:
    """``proxy.envoy`` for a line of Envoy's own log (Istio's format or Envoy's default); None otherwise."""
    m = _ENVOY_ISTIO.match(line) or _ENVOY_DEFAULT.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"proxy": "envoy", "proxy_level": m["level"], "logger": m["logger"]}
    p = _ENVOY_PORT.search(m["msg"])
    if p is not None:
        f["port"] = int(p["port"])
    return Parsed("proxy.envoy", "INFO", "proxy.envoy", f)


# A frame of a sampled Python stack (`py-spy dump`: `    all_reduce (torch/distributed/distributed_c10d.py:3075)`,
# innermost first) in one of torch.distributed's collectives: where that process is blocked.
_PYSPY_FRAME = lazy_re(r"^(?P<function>[A-Za-z_]\w*) \((?P<path>[^\s()]*distributed_c10d\.py):(?P<line>\d+)\)$")


def classify_stack_frame(line: str) -> Parsed | None:
    """``stack.collective`` for a py-spy frame in torch/distributed/distributed_c10d.py; None otherwise."""
    m = _PYSPY_FRAME.match(line)
    if m is None or m["function"].startswith("_"):
        return None
    return Parsed("stack.collective", "INFO", "stack.collective",
                  {"function": m["function"], "frame_file": m["path"], "frame_line": int(m["line"]), "format": "py-spy"})


# UCX's signal handler (ucs/debug, loaded with NCCL's UCX and IB plugins, HPC-X, Open MPI) reports the
# signal that kills the process before its backtrace: `[host:pid:thread:tid] Caught signal 7 (Bus error:
# nonexistent physical address)` and `==== backtrace (tid: N) ====`.
_CAUGHT_SIGNAL = lazy_re(
    r"^(?:\[(?P<host>[^\s:\]]+):(?P<pid>\d+)\s*:\s*\d+:(?P<tid>\d+)\]\s*)?Caught signal (?P<signal>\d+) "
    r"\((?P<name>[^:()]+)(?::\s*(?P<reason>[^()]*))?\)")


def classify_caught_signal(line: str) -> Parsed | None:
    """``process.signal`` for UCX's `Caught signal N (Name: reason)` line; None otherwise."""
    m = _CAUGHT_SIGNAL.match(line)
    if m is None:
        return None
    f: dict[str, Any] = {"signal": int(m["signal"]), "signal_name": m["name"].strip(), "printer": "UCX's signal handler"}
    if m["reason"]:
        f["reason"] = m["reason"].strip()
    if m["host"]:
        f["signal_host"] = m["host"]
        f["signal_pid"] = int(m["pid"])
    return Parsed("process.signal", "ERROR", "process.signal", f)


# The same death as other printers report it (each prints the signal's name, not its number):
# - a shell's job status for a child a signal ended (bash/sh: strsignal's text, ` (core dumped)` when a
#   core was written, in a script `<script>: line N: <pid> <text>   (core dumped) <command>`; zsh in
#   lower case after `zsh: `). `Killed` and `Terminated` are :mod:`logdoc.stops`' (the job stopped from outside).
# - Python's faulthandler: `Fatal Python error: Segmentation fault` (its five handled signals).
# - Abseil's failure signal handler: `*** SIGSEGV received at time=1700000000 on cpu 3 ***`.
# - glog's: `*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f00) from PID 0; stack trace: ***`.
_SIGNAL_TEXTS = {"illegal instruction": 4, "trace/breakpoint trap": 5, "aborted": 6, "bus error": 7,
                 "floating point exception": 8, "segmentation fault": 11}
# A word every one of those reports holds (the cheap test before the patterns)
_SIGNAL_WORDS = ("ault", "rror", "core dump", "*** SIG", "bort", "xception", "nstruction", "trap")
_SIGNAL_NAMES = {"SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8, "SIGSEGV": 11}
_SHELL_STATUS = lazy_re(
    r"^(?:(?P<script>[^\s:]{1,200}): (?:line \d+: +)?(?P<pid>\d+) +|zsh: )?"
    r"(?P<name>(?i:illegal instruction|trace/breakpoint trap|aborted|bus error|floating point exception|segmentation fault))"
    r"(?P<core> *\(core dumped\))?(?:\s+(?P<cmd>\S.{0,300}))?$")
_FAULTHANDLER = lazy_re(
    r"^Fatal Python error: (?P<name>Segmentation fault|Bus error|Aborted|Floating point exception|Illegal instruction)$")
_SIGNAL_BANNER = lazy_re(
    r"^\*\*\* (?P<sig>SIG[A-Z]{2,6}) (?:received at time=\d+(?: on cpu \d+)?|(?:\(@0x[0-9a-fA-F]+\) )?"
    r"received by PID (?P<pid>\d+)\b[^*]{0,120})\s*\*\*\*")


# Open MPI's launcher's report of a task that a fatal signal ended (mpirun, mpiexec, orterun; prterun from 5.0):
# `mpirun noticed that process rank 3 with PID 4242 on node node1 exited on signal 7 (Bus error).` (SIGKILL and
# SIGTERM are logdoc.stops': the job stopped from outside; so are srun's task reports).
_MPIRUN_SIGNAL = lazy_re(r"\b(?P<tool>mpirun|mpiexec|orterun|prterun|prte) noticed that process rank (?P<rank>\d+) with PID "
                         r"(?P<pid>\d+) on node (?P<node>\S+) exited on signal (?P<signal>[45678]|11) \((?P<name>[^)\n]{1,40})\)")


def _launcher_signal(line: str) -> Parsed | None:
    m = _MPIRUN_SIGNAL.search(line) if "noticed that process rank" in line else None
    if m is not None:
        return Parsed("process.signal", "ERROR", "process.signal",
                      {"signal": int(m["signal"]), "signal_name": m["name"], "printer": m["tool"],
                       "signal_host": m["node"], "signal_pid": int(m["pid"])})
    return None


def classify_signal_report(line: str) -> Parsed | None:
    """``process.signal`` for a shell's, faulthandler's, Abseil's or glog's report of a signal that
    ended a process (:data:`_SHELL_STATUS`, :data:`_FAULTHANDLER`, :data:`_SIGNAL_BANNER`), or Open MPI's
    launcher's (:data:`_MPIRUN_SIGNAL`); None otherwise."""
    if not any(w in line for w in _SIGNAL_WORDS):
        return None
    launched = _launcher_signal(line)
    if launched is not None:
        return launched
    f: dict[str, Any]
    m = _SHELL_STATUS.match(line)
    if m is not None:
        plain = m["script"] is None and m["pid"] is None and not line.startswith("zsh: ")
        if plain and m["cmd"] is not None and m["core"] is None:
            return None  # `Aborted by the user`: a sentence, not a job status
        if not line.startswith("zsh: ") and m["name"][0].islower():
            return None
        f = {"signal": _SIGNAL_TEXTS[m["name"].lower()], "signal_name": m["name"], "printer": "the shell"}
        if m["pid"]:
            f["signal_pid"] = int(m["pid"])
        if m["cmd"]:
            f["command"] = m["cmd"].strip()
        return Parsed("process.signal", "ERROR", "process.signal", f)
    m = _FAULTHANDLER.match(line)
    if m is not None:
        f = {"signal": _SIGNAL_TEXTS[m["name"].lower()], "signal_name": m["name"], "printer": "Python's faulthandler"}
        return Parsed("process.signal", "ERROR", "process.signal", f)
    m = _SIGNAL_BANNER.match(line)
    if m is not None and m["sig"] in _SIGNAL_NAMES:
        f = {"signal": _SIGNAL_NAMES[m["sig"]], "signal_name": m["sig"],
             "printer": "glog's signal handler" if m["pid"] else "Abseil's failure signal handler"}
        if m["pid"]:
            f["signal_pid"] = int(m["pid"])
        return Parsed("process.signal", "ERROR", "process.signal", f)
    return None


# The texts of cudaGetErrorString (CUDA runtime API, "Error Handling") that name one failure and are
# never ordinary output: a program that checks its CUDA calls often prints just that text on a line
# of its own (NCCL's `Cuda failure '%s'` quotes the same texts).
CUDA_ERROR_TEXTS = frozenset((
    "CUDA driver version is insufficient for CUDA runtime version",
    "no CUDA-capable device is detected",
    "all CUDA-capable devices are busy or unavailable",
    "system has unsupported display driver / cuda driver combination",
    "forward compatibility was attempted on non supported HW",
    "system not yet initialized",
    "an illegal memory access was encountered",
    "an illegal instruction was encountered",
    "device-side assert triggered",
    "unspecified launch failure",
    "the launch timed out and was terminated",
    "uncorrectable ECC error encountered",
    "invalid device ordinal",
    "peer access is not supported between these two devices",
    "misaligned address",
))


# What a program writes before the CUDA error text it ends its line with: the call or step that failed
# (`ggml_cuda_init: failed to initialize CUDA: <text>`, `cudaSetDevice failed: <text>`).
_CUDA_CONTEXT = lazy_re(r"(?i)cuda|\bcu[A-Z]\w*|\bgpu|error|fail")


def classify_cuda_text(line: str) -> Parsed | None:
    """A line that is one CUDA runtime error text (:data:`CUDA_ERROR_TEXTS`), nothing else but a
    final full stop, or that ends with one after ``: `` (quoted or not) when the words before it name
    CUDA, a GPU or a failure (any program's own check of a CUDA call): ``cuda.error`` with ``error``
    (and ``context``, the words before); None otherwise."""
    text = line.rstrip().rstrip(".").strip()
    if text in CUDA_ERROR_TEXTS:
        return Parsed("cuda.error", "ERROR", "cuda.error", {"error": text})
    head, sep, tail = text.rpartition(": ")
    tail = tail.strip("'\"` ")
    if not sep or tail not in CUDA_ERROR_TEXTS or _CUDA_CONTEXT.search(head) is None:
        return None
    return Parsed("cuda.error", "ERROR", "cuda.error", {"error": tail, "context": head.strip()[-200:]})


# DeepSpeed's launcher (deepspeed/launcher/launch.py, sigkill_handler) reports a worker that ended with
# `logger.error(f"{cmd} exits with return code = {process.returncode}")`: the command as a Python list
# and subprocess's return code, negative for a signal (-9: SIGKILL, the kernel's OOM killer's signal).
_LAUNCHER_EXIT = lazy_re(r"^(?P<cmd>\[.*\]|\S.*?) exits with return code = (?P<code>-?\d+)\s*$")
# The same line cut by a viewer's or terminal's width inside its last words (`... exits with ret`, `exits with return
# code =`, with or without a cut mark): the return code is lost. Read only when the command is the Python list of strings
# the launcher prints, with the launcher's own logger head before it (`[launch.py:N:sigkill_handler] [...]`) or, once the
# envelope took that head, when at least `exits with` is left; `tail` must be a head of the phrase.
_LAUNCHER_EXIT_CUT = lazy_re(r"^(?P<head>\[launch\.py:\d+:sigkill_handler\] )?\['[^\n]*'\] (?P<tail>exits[a-z =]{0,20})\s*$")
_EXIT_PHRASE = "exits with return code = "
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


# srun's report of tasks that ended with a non-zero exit status (src/srun/srun_job.c / step_launch: `srun: error: %s: task%s
# %s: Exited with exit code %d`, the node, one task or a range): the status of the task's own exit; a fatal signal is
# worded apart (`Killed`, `Segmentation fault`: logdoc/stops.py), and 128+N statuses are the stops' reading
_SRUN_EXIT = lazy_re(r"^srun: error: (?P<node>[\w.-]{1,100}): tasks? (?P<tasks>[\d,\-\[\] ]{1,200}?): Exited with exit code "
                     r"(?P<code>\d{1,3})\s*$")


def classify_launcher_exit(line: str) -> Parsed | None:
    """``torchrun.worker_failed`` (``launcher: deepspeed`` or ``srun``) for DeepSpeed's launcher line about a worker
    that exited (also cut before its return code: :func:`_cut_launcher_exit`), or srun's about tasks that exited with a
    status below 128; None otherwise (and for status 0)."""
    if "Exited with exit code" in line:
        m = _SRUN_EXIT.match(line)
        if m is None or not 0 < int(m["code"]) < 128:
            return None
        return Parsed("torchrun.worker_failed", "ERROR", "torchrun.worker_failed",
                      {"exitcode": int(m["code"]), "launcher": "srun", "node": m["node"], "tasks": m["tasks"].strip()})
    m = _LAUNCHER_EXIT.match(line) if "exits with return code" in line else None
    if m is None:
        return _cut_launcher_exit(line)
    if int(m["code"]) == 0:
        return None
    code = int(m["code"])
    f: dict[str, Any] = {"exitcode": code, "launcher": "deepspeed"}
    if code < 0 and -code in _SIGNALS:
        f["signal"] = _SIGNALS[-code]
    return Parsed("torchrun.worker_failed", "ERROR", "torchrun.worker_failed", f)


def _cut_launcher_exit(line: str) -> Parsed | None:
    """``torchrun.worker_failed`` (``launcher: deepspeed``, ``cut``, no ``exitcode``) for DeepSpeed's launcher line cut
    inside ``exits with return code = N`` (:data:`_LAUNCHER_EXIT_CUT`); None otherwise."""
    if "'] exits" not in line:
        return None
    m = _LAUNCHER_EXIT_CUT.match(strip_mark(line)[0])
    if m is None or not _EXIT_PHRASE.startswith(m["tail"]) or (m["head"] is None and len(m["tail"]) < len("exits with")):
        return None
    return Parsed("torchrun.worker_failed", "ERROR", "torchrun.worker_failed", {"launcher": "deepspeed", "cut": True})


# rdma-core's libibverbs (libibverbs/init.c) when a verbs device has no user-space provider library
# (libmlx5, ...: the rdma-core / ibverbs-providers package missing from the image):
# `libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0`
_NO_PROVIDER = lazy_re(r"^(?:libibverbs: )?Warning: no userspace device-specific driver found for (?P<path>\S+)\s*$")


def classify_verbs_provider(line: str) -> Parsed | None:
    """``verbs.no_provider`` for libibverbs' warning about a device without a provider library."""
    m = _NO_PROVIDER.match(line)
    if m is None:
        return None
    return Parsed("verbs.no_provider", "WARN", "verbs.no_provider", {"sysfs_path": m["path"], "library": "libibverbs"})


# UCX's own error lines (`ucs_error`): `[1700000000.123456] [host:1234:0]   mm_iface.c:123  UCX  ERROR <msg>`
# with its header, or the message alone in a paste. Alone, only messages of UCX's shared-memory transport
# are taken (their wording names UCX's component: `mm_iface ...`, `mm_ep ...`).
_UCX_LINE = lazy_re(r"^(?:\[\d+\.\d+\]\s+)?(?:\[(?P<host>[^\s:\]]+):(?P<pid>\d+)(?::\d+)?\]\s+)?"
                       r"(?P<loc>[\w.+-]+\.c\w*:\d+)\s+UCX\s+(?P<level>ERROR|WARN)\s+(?P<msg>\S.*?)\s*$")
_UCX_BARE = lazy_re(r"^(?P<msg>mm_(?:iface|ep) failed to \S.*?)\s*$")


def classify_ucx_error(line: str) -> Parsed | None:
    """``ucx.error`` for an error line of UCX (with its header, or a shared-memory transport message
    alone); None otherwise."""
    m = _UCX_LINE.match(line) if "UCX" in line else None
    if m is None:
        m = _UCX_BARE.match(line) if line.startswith("mm_") else None
        if m is None:
            return None
        return Parsed("ucx.error", "ERROR", "ucx.error", {"message": m["msg"]})
    f: dict[str, Any] = {"message": m["msg"], "code_location": m["loc"]}
    if m["host"]:
        f["ucx_host"] = m["host"]
        f["ucx_pid"] = int(m["pid"])
    return Parsed("ucx.error", "ERROR" if m["level"] == "ERROR" else "WARN", "ucx.error", f)


# A program's own error line that ends in an errno's text, as Rust's std::io::Error prints it
# (`<context>: Too many open files (os error 24)`) or C's perror / strerror (`<context>: Too many open files`):
# only the errno texts that name a per-process or per-host limit are taken.
_ERRNO_LINE = lazy_re(r"^(?P<context>\S.{0,200}?):?\s(?P<text>Too many open files(?: in system)?)"
                         r"(?: \((?:os error|errno) (?P<num>\d+)\))?\s*$")


def classify_errno_line(line: str) -> Parsed | None:
    """``os.error`` for a line that ends in the errno text of an exhausted descriptor limit."""
    if "open files" not in line:
        return None
    m = _ERRNO_LINE.match(line)
    if m is None:
        return None
    name = "ENFILE" if m["text"].endswith("in system") else "EMFILE"
    f: dict[str, Any] = {"errno_text": m["text"], "errno_name": name, "context": m["context"].strip()}
    if m["num"]:
        f["errno"] = int(m["num"])
    return Parsed("os.error", "ERROR", "os.error", f)


# The CUDA driver API's error names (cuGetErrorName: `CUDA_ERROR_OUT_OF_MEMORY`), which programs that call the
# driver API print with the error's text (cuGetErrorString): TensorFlow's stream executor (`failed to allocate
# 2.2K (2304 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory`), JAX / XLA, CuPy, Numba. The name
# is never ordinary output. An allocator may retry after it, so the line is a warning by itself.
_DRIVER_ERROR = lazy_re(r"\b(?P<name>CUDA_ERROR_[A-Z][A-Z_]{2,48})\b(?::? (?P<text>[^\n]{1,200}))?")


def classify_cuda_driver_error(line: str) -> Parsed | None:
    """``cuda.oom`` (CUDA_ERROR_OUT_OF_MEMORY) or ``cuda.error`` for a line that names a CUDA driver API
    error, with ``error`` (the name, then its text) and ``context`` (the words before it); None otherwise."""
    if "CUDA_ERROR_" not in line:
        return None
    m = _DRIVER_ERROR.search(line, 0, min(len(line), 4096))
    if m is None:
        return None
    text = (m["text"] or "").strip().rstrip(".")
    f: dict[str, Any] = {"error": f"{m['name']}: {text}" if text else m["name"]}
    head = line[:m.start()].strip().rstrip(":").strip()
    if head:
        f["context"] = head[-200:]
    kind = "cuda.oom" if m["name"] == "CUDA_ERROR_OUT_OF_MEMORY" else "cuda.error"
    return Parsed(kind, "WARN", kind, f)


# The kernel's IOMMU fault reports (Intel VT-d, drivers/iommu/intel/dmar.c dmar_fault_do_one): a device's DMA
# to an address its IOMMU mapping does not allow was blocked. `DMAR: [DMA Write] Request device [02:00.0] fault
# addr cd139000 [fault reason 05] PTE Write access is not set` (kernels before 5.x: `DMAR:[DMA Write] ...`;
# newer: `[DMA Write NO_PASID] ... fault addr 0xcd139000 [fault reason 0x05] ...`).
_DMAR_FAULT = lazy_re(r"DMAR: ?\[DMA (?P<access>Read|Write)[^\]\n]{0,24}\] Request device \[(?P<device>[0-9a-fA-F:.]{4,16})\]"
                      r" (?:PASID \w+ )?fault addr (?P<addr>(?:0x)?[0-9a-fA-F]{1,16})"
                      r"(?: ?\[fault reason (?P<reason_code>(?:0x)?[0-9a-fA-F]{1,4})\] ?(?P<reason>[^\n]{0,120}))?")


# The AMD IOMMU's (drivers/iommu/amd/iommu.c, amd_iommu_report_page_fault): with the device known, through dev_err
# (`nvidia 0000:41:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0027 address=0x7f2a00000 flags=0x0020]`),
# otherwise with the device in the brackets (`AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x0027
# address=... flags=...]`); flags bit 0x020 (EVENT_FLAG_RW) is a write.
_AMD_FAULT = lazy_re(r"(?:(?P<driver>[\w-]{1,30}) (?P<dev>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): )?"
                     r"AMD-Vi: Event logged \[IO_PAGE_FAULT (?:device=(?P<device>[0-9a-fA-F:.]{4,16}) )?"
                     r"domain=0x[0-9a-fA-F]{1,8} address=(?P<addr>0x[0-9a-fA-F]{1,16}) flags=(?P<flags>0x[0-9a-fA-F]{1,8})\]")
EVENT_FLAG_RW = 0x020


def classify_iommu_fault(line: str) -> Parsed | None:
    """``kernel.iommu_fault`` for the kernel's report of a DMA that the IOMMU blocked; None otherwise."""
    if "AMD-Vi" in line:
        return _amd_fault(line)
    if "DMAR" not in line:
        return None
    m = _DMAR_FAULT.search(line, 0, min(len(line), 1024))
    if m is None:
        return None
    f: dict[str, Any] = {"device": m["device"], "access": m["access"].lower(), "fault_addr": m["addr"]}
    if m["reason"]:
        f["reason"] = m["reason"].strip()
    return Parsed("kernel.iommu_fault", "ERROR", "kernel.iommu_fault", f)


def _amd_fault(line: str) -> Parsed | None:
    m = _AMD_FAULT.search(line, 0, min(len(line), 1024))
    if m is None or not (m["dev"] or m["device"]):
        return None
    f: dict[str, Any] = {"device": m["dev"] or m["device"],
                         "access": "write" if int(m["flags"], 16) & EVENT_FLAG_RW else "read",
                         "fault_addr": m["addr"], "reason": "IO_PAGE_FAULT (AMD-Vi)"}
    if m["driver"]:
        f["driver"] = m["driver"]
    return Parsed("kernel.iommu_fault", "ERROR", "kernel.iommu_fault", f)
