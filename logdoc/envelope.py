"""Stage 2: unwrap. Peel launcher and logger envelopes from a line, outside in.

A line such as ``3: [default1]:[rank13]:[E1129 17:01:53.685814139 ProcessGroupGloo.cpp:67] msg``
carries three envelopes (Slurm's ``--label``, torchrun's ``--tee``, c10's logger). Each one says
something (node rank, local rank, global rank, time, level, source file), and all of it is kept in
an :class:`~logdoc.events.Envelope`; the message that is left goes to the grammars.

The envelopes are listed in :data:`ENVELOPES`, one entry per documented format, each with the
regular expression of its prefix (anchored at the current position) and the function that records
what it carries. ``docs/architecture.md`` and ``shared/reference/torch-prefixes.md`` describe them.

One module, over 500 lines: :data:`ENVELOPES` is one ordered table (within a first character the
first pattern that matches wins, so each entry is written against the ones before it), and the
handlers, the residue peel after the table and the queries of the fast path read that one table.
"""
from __future__ import annotations

import datetime
import re
from typing import Callable

from .events import Envelope
from .lazyre import lazy_re
from .residue import MAX_RESIDUE, prefix_identity, prefix_like

PID_MAX = 4194304  # Linux's largest pid; bigger numbers in a "pid" column are thread ids

_LEVEL = {"F": "FATAL", "E": "ERROR", "W": "WARN", "I": "INFO", "V": "DEBUG", "C": "FATAL",
          "CRITICAL": "FATAL", "ERROR": "ERROR", "WARNING": "WARN", "WARN": "WARN",
          "INFO": "INFO", "DEBUG": "DEBUG"}


def _mmdd(month_day: str, hms: str, frac: str | None = None) -> str | None:
    n = int(month_day)
    month, day = divmod(n, 100)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    out = f"--{month:02d}-{day:02d}T{hms}"
    return f"{out}.{frac}" if frac else out


def _iso(stamp: str) -> str:
    return stamp.replace(" ", "T", 1).replace(",", ".")


# Each handler gets the match and the envelope being filled; it returns the layer's name.
def _cloudwatch(m: re.Match, env: Envelope) -> str:
    env.time = _iso(m["ts"])
    return "cloudwatch"


def _iso_stamp(m: re.Match, env: Envelope) -> str:
    env.time = _iso(m["ts"])
    return "iso-time"


def _tsl(m: re.Match, env: Envelope) -> str:
    """TensorFlow's and XLA's C++ log line (tsl/platform/default/logging.cc): ``%Y-%m-%d %H:%M:%S.%06d: %c[ tid]
    file:line] `` (JAX, TensorFlow, XLA's own messages)."""
    env.time = _iso(m["ts"])
    env.level = _LEVEL[m["lvl"]]
    env.source = m["src"]
    return "tsl"


def _horovod(m: re.Match, env: Envelope) -> str:
    """Horovod's C++ logger (horovod/common/logging.cc): ``[%Y-%m-%d %H:%M:%S.<micros>: L file:line] ``, the
    microseconds right-aligned in six columns with blanks (``std::setw(6)``, no fill), or ``[L file:line] ``
    with HOROVOD_LOG_HIDE_TIME; L one of ``TDIWEF``."""
    if m["ts"]:
        date_time, micros = m["ts"].split(".")
        env.time = _iso(date_time + "." + micros.replace(" ", "0"))
    env.level = _LEVEL.get(m["lvl"], "DEBUG")
    env.source = m["src"]
    return "horovod"


def _sglang(m: re.Match, env: Envelope) -> str:
    """SGLang's logger (python/sglang/srt/utils configure_logger): ``[%Y-%m-%d %H:%M:%S{prefix}] `` where the prefix
    names a scheduler process by its parallel ranks (`` TP0``, `` DP1 TP3``, `` PP0 TP1``), the process's name here."""
    env.time = _iso(m["ts"])
    if m["ids"]:
        env.process = env.process or m["ids"].strip()
    return "sglang"


def _nemo(m: re.Match, env: Envelope) -> str:
    """NeMo's logger (nemo/utils/formatters/base.py): ``[NeMo W 2024-01-01 10:00:00 module:349] ``, the debug
    formatter's with `` rank:N`` before the bracket."""
    env.level = _LEVEL.get(m["lvl"], "DEBUG")
    env.time = _iso(m["ts"])
    env.source = m["src"]
    if m["rank"] and env.rank is None:
        env.rank = int(m["rank"])
    return "nemo"


def _titan(m: re.Match, env: Envelope) -> str:
    """torchtitan's logger names itself before Python logging's ` - `-separated format: ``[titan] 2024-05-01
    10:11:12,345 - root - INFO - msg`` (torchtitan/tools/logging.py); the format after it is peeled as any other."""
    return "titan"


def _kubectl(m: re.Match, env: Envelope) -> str:
    env.host = env.host or m["pod"]
    return "kubectl"


def _openmpi(m: re.Match, env: Envelope) -> str:
    """Open MPI's ``--tag-output`` ``[jobid,rank]<stream>:`` (orte/mca/iof/base/iof_base_output.c), the
    ``[1,mpirank:N,host]<stream>:`` that SageMaker's mpirun jobs print, and ``--timestamp-output``'s
    ctime stamp before the tag (``Fri Dec  4 12:00:00 2026[1,0]<stdout>:``)."""
    if m["rank"]:
        env.rank = int(m["rank"])
    if m["host"]:
        env.host = env.host or m["host"]
    if m.re.groupindex.get("year") and m["year"]:
        month = _MONTHS.index(m["mon"]) + 1
        env.time = f"{m['year']}-{month:02d}-{int(m['day']):02d}T{m['hms']}"
    return "openmpi"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


_NAME_RANK = lazy_re(r"(?<![\w])rank=(\d+)")


def _ray(m: re.Match, env: Envelope) -> str:
    """Ray's ``(pid=N)``, ``(Actor pid=N, ip=A)`` and vLLM's ``(VllmWorker rank=1 pid=N)``,
    ``(VllmWorker TP1 pid=N)``, ``(EngineCore_DP0 pid=N)``: a process name (any words), then its pid."""
    env.pid = int(m["pid"])
    actor = m["actor"]
    if actor:
        r = _NAME_RANK.search(actor) if "rank=" in actor else None
        if r is not None:
            if env.rank is None:
                env.rank = int(r.group(1))  # vLLM's multiprocessing worker: `(VllmWorker rank=1 pid=N)`
            actor = (actor[:r.start()] + actor[r.end():]).strip() or actor
        env.process = env.process or actor
    if m["ip"]:
        env.host = env.host or m["ip"]
    return "ray"


def _ray_process(m: re.Match, env: Envelope) -> str:
    """Ray's prefix for the output of its own processes: ``(raylet)``, ``(raylet, ip=10.0.0.2)``,
    ``(gcs_server)``, ``(autoscaler +2m3s)``."""
    if m["ip"]:
        env.host = env.host or m["ip"]
    return "ray"


def _ray_cpp(m: re.Match, env: Envelope) -> str:
    """Ray's C++ log header ``[2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: ``
    (time, level letter, pid, thread id; the process name and source location after it)."""
    env.time = _iso(m["ts"])
    env.level = _LEVEL[m["lvl"]]
    pid = int(m["pid"])
    if pid <= PID_MAX:
        env.pid = env.pid or pid
    if m["src"]:
        env.source = m["src"]
    return "ray"


def _ray_pylog(m: re.Match, env: Envelope) -> str:
    """Ray's Python logger: ``WARNING worker.py:2037 -- msg`` (after its ``2023-10-30 06:14:35,574\t`` stamp)."""
    env.level = _LEVEL[m["lvl"]]
    env.source = m["src"]
    return "pylog"


def _srun(m: re.Match, env: Envelope) -> str:
    env.node_rank = int(m["task"])
    return "srun"


def _mpich(m: re.Match, env: Envelope) -> str:
    env.rank = int(m["rank"])
    return "mpich"


def _hydra(m: re.Match, env: Envelope) -> str:
    """MPICH's Hydra launcher: ``[mpiexec@host] `` and ``[proxy:0:1@host] `` before each line it prints, then
    ``function (file:line): `` before an error (HYDU_error_printf, src/pm/hydra/lib/utils/dbg.c)."""
    env.host = env.host or m["host"]
    env.process = env.process or m["proc"]
    if m["src"]:
        env.source, env.level = m["src"], "ERROR"
    return "hydra"


def _pdsh(m: re.Match, env: Envelope) -> str:
    env.host = m["host"]
    return "pdsh"


def _c10(m: re.Match, env: Envelope) -> str:
    if m["rank"] is not None:
        env.rank = int(m["rank"])
    env.level = _LEVEL[m["lvl"]]
    if m["md"]:
        env.time = _mmdd(m["md"], m["hms"]) or env.time  # the fraction is a monotonic clock: dropped
    env.source = f"{m['file']}:{m['line']}"
    return "c10"


def _glog(m: re.Match, env: Envelope) -> str:
    """glog C++ lines and torch's Python logger (2.3+) share this header."""
    if m["rank"]:
        env.rank = int(m["rank"])
    env.level = _LEVEL[m["lvl"]]
    env.time = _mmdd(m["md"], m["hms"], m["frac"]) or env.time
    num = int(m["num"])
    if num <= PID_MAX and (m["path"].endswith(".py") or env.pid is None):
        env.pid = env.pid or num
    env.source = f"{m['path']}:{m['line']}"
    return "pylog" if m["path"].endswith(".py") else "glog"


def _pylog21(m: re.Match, env: Envelope) -> str:
    if m["rank"] is not None:
        env.rank = int(m["rank"])
    env.time = _iso(m["ts"])
    env.level = _LEVEL.get(m["lvl"].upper(), env.level)
    env.source = m["logger"]
    return "pylog"


def _deepspeed(m: re.Match, env: Envelope) -> str:
    """DeepSpeed's logger: ``[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] ``."""
    env.time = _iso(m["ts"]) if m["ts"] else env.time
    env.level = _LEVEL.get(m["lvl"].upper(), env.level)
    env.source = m["src"]
    return "deepspeed"


def _vllm(m: re.Match, env: Envelope) -> str:
    """vLLM's logger: ``INFO 01-17 00:55:01 [file.py:12] msg`` (``%m-%d %H:%M:%S``, no year); before the
    brackets (vllm/logger.py up to 0.8) ``INFO 01-17 00:55:01 file.py:12] msg``."""
    env.level = _LEVEL[m["lvl"]]
    env.time = _mmdd(m["md"].replace("-", ""), m["hms"], m["frac"]) or env.time
    env.source = m["src"] or m["src0"]
    return "pylog"


def _grepped(m: re.Match, env: Envelope) -> str:
    env.process = env.process or m["file"]
    return "grep"


def _header_cut(m: re.Match, env: Envelope) -> str:
    """The end of a c10 / glog header whose start a paste cut (``ProcessGroupNCCL.cpp:1234] ``,
    ``53.685814139 ProcessGroupNCCL.cpp:1234] ``, ``E1129 17:01:53.685 socket.cpp:663] ``): its source, and its
    level when the level letter is still there."""
    if m["lvl"]:
        env.level = _LEVEL[m["lvl"]]
    env.source = f"{m['file']}:{m['line']}"
    return "header-cut"


def _pywarn(m: re.Match, env: Envelope) -> str:
    """Python's ``warnings`` module (``warnings.formatwarning``: ``%s:%s: %s: %s\\n`` of the file, the line, the
    category and the message, then the source line): ``/path/to/file.py:123: UserWarning: message``. The
    message is the warning it carries (a TORCH_WARN of c10d, a distributed package's advice)."""
    env.level = "WARN"
    env.source = f"{m['file']}:{m['line']}"
    return "pywarn"


def _stdio_label(m: re.Match, env: Envelope) -> str:
    """The stream a test helper names before each line of a subprocess's output it echoes: ``stderr: Traceback ...``."""
    return "stdio"


def _similar(m: re.Match, env: Envelope) -> str:
    """A log viewer's fold marker: ``[24 similar log lines] msg`` (the line stands for N like it)."""
    return "similar"


def _dashed(m: re.Match, env: Envelope) -> str:
    """Python logging's formats that set the time, the level and the logger apart: `` - ``-separated
    (``%(asctime)s - %(name)s - %(levelname)s - `` and the order Hugging Face's examples use,
    ``%(asctime)s - %(levelname)s - %(name)s - `` with ``12/03/2026 01:02:03``), bracketed (Hydra's
    ``[%(asctime)s][%(name)s][%(levelname)s] - ``, ``[time][file.py:12][LEVEL] ``) and loguru's default
    (``time | LEVEL    | module:function:12 - ``)."""
    g = m.groupdict()
    ts = g["ts"]
    env.time = _iso(ts) if ts[4] == "-" else f"{ts[6:10]}-{ts[:2]}-{ts[3:5]}T{ts[11:19]}"
    env.level = _LEVEL.get(g["lvl"], env.level)
    env.source = g.get("src") or g.get("src2")
    return "pylog"


def _zap(m: re.Match, env: Envelope) -> str:
    """zap's console encoder (Kubernetes controllers built on controller-runtime: the Kubeflow training-operator):
    ``<time>\t<LEVEL>\t<logger>\t<message>``, the time an epoch in seconds (``1.708507856644096e+09``) or ISO 8601."""
    ts = m["ts"]
    if ts[4] == "-":
        env.time = _iso(ts)
    else:
        try:
            env.time = datetime.datetime.fromtimestamp(float(ts), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        except (OverflowError, ValueError, OSError):
            env.time = None
    env.level = _LEVEL.get(m["lvl"], "ERROR" if m["lvl"] in ("DPANIC", "PANIC", "FATAL") else env.level)
    env.source = m["src"]
    return "pylog"


def _stdlib(m: re.Match, env: Envelope) -> str:
    env.level = _LEVEL[m["lvl"]]
    env.source = m["logger"]
    return "pylog"


def _stdlib_cut(m: re.Match, env: Envelope) -> str:
    """The stdlib logger's ``LEVEL:name:msg`` with its level cut off by a paste (a selection that began
    a few characters late): the logger's dotted name, glued to its message by the colon."""
    env.source = m["logger"]
    return "pylog"


def _syslog(m: re.Match, env: Envelope) -> str:
    """syslog / journald's short format: ``Dec  2 09:00:00 host ident[pid]: `` (RFC 3164), also after
    an ISO stamp (``journalctl -o short-iso``)."""
    env.host = env.host or m["host"]
    if m["pid"]:
        env.pid = env.pid or int(m["pid"])
    env.process = env.process or m["ident"]
    return "syslog"


def _syslog_after_time(m: re.Match, env: Envelope) -> str:
    """``host ident[pid]: `` after an ISO stamp (``journalctl -o short-iso``); only there (unwrap)."""
    return _syslog(m, env)


def _compose(m: re.Match, env: Envelope) -> str:
    """``docker compose logs``: ``<service>-<n>  | `` (Compose v1: ``<project>_<service>_<n>``)."""
    env.process = env.process or m["svc"]
    return "compose"


def _cri(m: re.Match, env: Envelope) -> str:
    """A container runtime's log file (CRI, as kubelet keeps it): after the time, the stream and
    ``F`` (a full line) or ``P`` (a part)."""
    return "cri"


def _lightning(m: re.Match, env: Envelope) -> str:
    """A rank tag before the message: Lightning's ``rank_prefixed_message`` (``[rank: 1] ``), and the
    ``[rank1] `` / ``[RANK 1] `` that training programs and their tee wrappers print."""
    if env.rank is None:
        env.rank = int(m["rank"])
    return "rank"


def _rich(m: re.Match, env: Envelope) -> str:
    """rich's logging handler: ``[12/02/26 09:00:00] ERROR    message      file.py:12`` (the source
    location at the right margin is cut off by :func:`unwrap`)."""
    env.level = _LEVEL[m["lvl"]]
    return "rich"


def _excepthook(m: re.Match, env: Envelope) -> str:
    env.rank = int(m["rank"])
    return "rank"


def _label(m: re.Match, env: Envelope) -> str:
    env.rank = int(m["rank"] or m["rank2"])
    return "rank"


def _ofi_test(m: re.Match, env: Envelope) -> str:
    """aws-ofi-nccl's own logger where no NCCL prints for it (its test programs, tests/functional and
    tests/unit: ``printf("WARN: Function: %s Line: %d: ", filefunc, line)``, then the plugin's message)."""
    env.level = _LEVEL[m["lvl"]] if m["lvl"] != "TRACE" else "DEBUG"
    env.source = f"{m['func']}:{m['line']}"
    return "ofi-test"


def _tee(m: re.Match, env: Envelope) -> str:
    # (an outer label says which process printed the line: a label inside it, the program's own, does not change it:
    # `[default1]:[trainer0|0]:` is local rank 1)
    role, num = m["role"], int(m["num"])
    if role == "rank" or role == "":
        if env.rank is None:
            env.rank = num
    elif env.local_rank is None:
        env.local_rank = num
    return "tee"


_TS = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# (not an RDMA provider's or device's name: rdma-core prints `mlx5: <host>: ...`, drivers `mlx5_0: ...`)
_HOST = r"(?!(?:\w*(?:Error|Exception|Warning|Interrupt|Exit)|mlx\d|xsc)\b)[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*"

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_OMPI_TAG = r"\[\d+,(?:mpirank:)?(?P<rank>\d+)(?:,(?P<host>[\w.-]+))?\]"

# (first characters it can start with, regex, handler). Order matters within a first character.
ENVELOPES: list[tuple[str, re.Pattern, Callable[[re.Match, Envelope], str]]] = [
    ("|", lazy_re(rf"\|\s*(?P<ts>{_TS})\s*\|\s?"), _cloudwatch),
    ("[", lazy_re(r"\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\] "), _kubectl),
    ("[", lazy_re(rf"{_OMPI_TAG}<(?:stdout|stderr|stddiag)>:\s?"), _openmpi),
    ("MTWFS", lazy_re(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>{_MON})  ?(?P<day>\d{{1,2}}) (?P<hms>\d\d:\d\d:\d\d) "
                      rf"(?P<year>\d{{4}})(?:{_OMPI_TAG})?"
                      r"<(?:stdout|stderr|stddiag)>:\s?"), _openmpi),
    # c10: [rank0]:[E1129 17:01:53.685814139 file.cpp:617]  /  [rank0]:[E file.cpp:523]  /  [E file.cpp:481]
    ("[", lazy_re(r"(?:\[rank(?P<rank>\d+)\]:)?\[(?P<lvl>[FEWIV])(?:(?P<md>\d{3,4}) (?P<hms>\d\d:\d\d:\d\d)\.\d+)? "
                     r"(?P<file>[\w.+-]+):(?P<line>\d+)\] ?"), _c10),
    ("[", lazy_re(r"(?:\[rank(?P<rank>\d+)\]:)?(?P<lvl>[FEWIVC])(?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d)\.(?P<frac>\d+)\s+(?P<num>\d+) "
                     r"(?P<path>[\w./+-]+):(?P<line>\d+)\] ?"), _glog),
    ("[", lazy_re(rf"(?:\[rank(?P<rank>\d+)\]:)?\[(?P<ts>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}})\] (?P<logger>[\w.]+): \[(?P<lvl>[A-Z]+)\] "), _pylog21),
    ("[", lazy_re(rf"\[(?P<ts>\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}})\] \[(?P<lvl>[A-Z]+)\] \[(?P<src>[\w.]+:\d+:\w+)\] "), _deepspeed),
    # the same without its time (a viewer that shows the time in a column of its own, a paste that cut it)
    ("[", lazy_re(r"\[(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[(?P<src>[\w.]+\.py:\d+:\w+)\] (?P<ts>)"), _deepspeed),
    ("[", lazy_re(rf"\[(?P<ts>{_TS})\](?:\[(?P<src>[^\[\]\s]{{1,120}})\])?\[(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]"
                  r"(?:\[(?P<src2>[^\[\]\s]{1,120})\])?(?: - | )"), _dashed),
    # torchelastic's launcher (pytorch/elastic, before torch 1.9): `[%(levelname)s] %(asctime)s %(module)s: `
    ("[", lazy_re(r"\[(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) "
                  r"(?P<src>[\w.]+): "), _dashed),
    ("[", lazy_re(r"\[\d+ similar log lines?\] "), _similar),
    ("[", lazy_re(r"\[rank(?P<rank>\d+)\]: "), _excepthook),
    # Lightning's `[rank: 1] `, and the `[rank1] ` / `[RANK 1] ` tag that programs and tee wrappers print
    # (never `[Rank 1] `: that is ProcessGroupNCCL's own log prefix, part of its messages)
    ("[", lazy_re(r"\[(?:rank|RANK)(?::? )?(?P<rank>\d+)\] "), _lightning),
    # a program's own rank label before an exception it prints (`Rank 0: RuntimeError: ...`, `[Rank 3] ValueError: ...`),
    # only there: `[Rank 0] ` before anything else is ProcessGroupNCCL's own prefix, part of its messages
    ("[R", lazy_re(r"(?:\[(?:Rank|rank|RANK) ?(?P<rank>\d+)\]:?|(?:Rank|RANK) (?P<rank2>\d+):) "
                    r"(?=(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Failure):)"), _label),
    ("[", lazy_re(r"\[\d\d/\d\d/\d\d(?:\d\d)? \d\d:\d\d:\d\d\] (?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) +"), _rich),
    # torchrun --tee `[default0]:` (`[${rank}]:` gives `[3]:`; a bare `[1]:` alone on its line indexes a
    # ChildFailedError summary); one blank before a word goes with it, two are the program's indent.
    ("[", lazy_re(r"\[(?P<role>[A-Za-z_][A-Za-z_]*?|)(?P<num>\d+)(?:\|\d+)?\]:(?!\d)(?: (?=\S))?(?=.)"), _tee),
    # (not the rank list that opens an item of the desync report: `[1] finished collective #3, but didn't join ...`;
    # not the device of an NCCL header cut before it, `[3] NCCL WARN `, `[3] misc/socket.cc:49 (fn) NCCL WARN `, NCCL
    # < 2.3's `[3] include/socket.h:185 WARN `, RCCL's `[3] [FATAL ERROR]: `: logdoc/nccl.py reads the device)
    ("[", lazy_re(r"\[(?P<rank>\d+)\] (?!finished collective #|joined but didn't finish collective #"
                  r"|(?:[\w./+-]{1,200}\.(?:cc|c|cu|cpp|h|hpp):\d+ (?:\([^()\s]{0,120}\) )?)?NCCL (?:INFO|WARN|TRACE) "
                  r"|[\w./+-]{1,200}\.(?:cc|c|cu|cpp|h|hpp):\d+ (?:INFO|WARN) |\[FATAL ERROR\]: )"), _mpich),
    ("[", lazy_re(r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?P<ids>(?: (?:DP|TP|PP|EP|CP)\d{1,5}){0,6})\] (?!\[)"), _sglang),
    ("[", lazy_re(r"\[NeMo (?P<lvl>[DIWEC]) (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (?P<src>[\w.<>-]{1,80}:\d{1,6})"
                     r"(?: rank:(?P<rank>\d{1,7}))?\] "), _nemo),
    ("[", lazy_re(r"\[titan\] (?=\d{4}-)"), _titan),
    ("[", lazy_re(r"\[(?:(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.[ \d]{6}): )?(?P<lvl>[TDIWEF]) "
                     r"(?P<src>[\w./+-]{1,255}\.(?:cc|cpp|h|cu):\d{1,6})\] ?"), _horovod),
    ("[", lazy_re(r"\[(?P<proc>mpiexec|mpirun|proxy:\d+:\d+|bstrap:\d+:\d+)@(?P<host>[\w.-]+)\] "
                     r"(?:\w{1,80} \((?P<src>[\w./+-]{1,255}:\d+)\): )?"), _hydra),
    ("(", lazy_re(r"\((?:(?P<actor>[\w.\[][^()\n]{0,80}?) )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[0-9a-fA-F.:]+))?\)(?: |$)"), _ray),
    ("(", lazy_re(r"\((?:raylet|gcs_server|monitor|log_monitor|dashboard_agent|runtime_env_agent|autoscaler(?: \+[\w.]+)?)"
                     r"(?:, ip=(?P<ip>[0-9a-fA-F.:]+))?\)(?: |$)"), _ray_process),
    ("[", lazy_re(r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?P<lvl>[DIWECF]) (?P<pid>\d+) \d+\] "
                     r"(?:\((?:raylet|gcs_server|dashboard_agent|runtime_env_agent)\) )?(?:(?P<src>[\w./+-]+\.(?:cc|cpp|h):\d+): )?"), _ray_cpp),
    ("0123456789", lazy_re(rf"(?P<ts>{_TS}) \| (?P<lvl>TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) *\| "
                          r"(?P<src>[\w.<>-]+:[\w.<>-]+:\d+) - "), _dashed),
    ("0123456789", lazy_re(rf"(?P<ts>{_TS}|\d\d/\d\d/\d{{4}} \d\d:\d\d:\d\d) - (?:(?P<src>[\w.<>-]+) - )?"
                          r"(?P<lvl>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: - (?P<src2>[\w.<>-]+))? - "), _dashed),
    # zap's console encoder: tab-separated time, upper-case level and logger name (controller-runtime's epoch time)
    ("0123456789", lazy_re(rf"(?P<ts>\d\.\d{{6,17}}e\+\d\d|\d{{10}}\.\d{{1,9}}|{_TS})\t(?P<lvl>DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL)\t"
                          r"(?:(?P<src>[\w./:-]{1,120})\t)?(?=\S)"), _zap),
    ("0123456789", lazy_re(r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}): (?P<lvl>[IWEF])(?: {0,7}\d{1,7})? "
                          r"(?P<src>[\w./+-]{1,255}:\d+)\] ?"), _tsl),
    # a collector's or a launcher's stamp (GitHub Actions' raw log, `docker logs -t`, `kubectl logs --timestamps`:
    # RFC 3339 with its zone) is put before the program's line with one blank: an indented line (a traceback's
    # frame) keeps its indentation
    ("0123456789", lazy_re(r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (?=[ \t]+\S)"), _iso_stamp),
    ("0123456789", lazy_re(rf"(?P<ts>{_TS})\s+"), _iso_stamp),
    # (not a number before a bracketed list alone on its line: Horovod's stall report names each rank it waits for so,
    # `2: [allreduce.grad_0, allreduce.grad_1]`)
    (" 0123456789", lazy_re(r" *(?P<task>\d+): (?!\[[^\]\n]{0,4000}\][ \t]*$)"), _srun),
    ("FEWIVC", lazy_re(r"(?P<lvl>[FEWIVC])(?P<md>\d{4}) (?P<hms>\d\d:\d\d:\d\d)\.(?P<frac>\d+)\s+(?P<num>\d+) "
                          r"(?P<path>[\w./+-]+):(?P<line>\d+)\] ?(?P<rank>)"), _glog),
    ("DIWEC", lazy_re(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.]+):"), _stdlib),
    # aws-ofi-nccl's test programs print the plugin's lines through a logger of their own
    ("WIT", lazy_re(r"(?P<lvl>WARN|INFO|TRACE): Function: (?P<func>[\w:~]{1,200}) Line: (?P<line>\d{1,6}): (?=\S)"), _ofi_test),
    # the etcd rendezvous's own handler (torchelastic, torch 1.9-1.13): `%(levelname)s %(asctime)s `
    ("DIWEC", lazy_re(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) "), _dashed),
    ("DIWEC", lazy_re(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<src>[\w.-]+\.py:\d+) -- "), _ray_pylog),
    ("DIWEC", lazy_re(r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?:[.,](?P<frac>\d+))? "
                         r"(?:\[(?P<src>[\w./<>-]+:\d+)\]|(?P<src0>[\w.<>-]+\.py:\d+)\]) ?"), _vllm),
    ("JFMASOND", lazy_re(r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d "
                            r"(?P<host>[\w.-]+) (?P<ident>[\w./-]+)(?:\[(?P<pid>\d{1,7})\])?: "), _syslog),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
     lazy_re(r"(?P<host>[\w.-]+) (?P<ident>[\w./-]+)\[(?P<pid>\d{1,7})\]: "), _syslog_after_time),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
     lazy_re(r"(?P<svc>[\w.-]*?[\w][-_]\d+) +\| ?"), _compose),
    ("s", lazy_re(r"std(?:out|err) [FP] "), _cri),
    # the stream label of the Hugging Face test helper that runs a launcher and echoes its output (`accelerate test`,
    # transformers' and accelerate's testing_utils execute_subprocess_async: `print("stderr:", line)`): one blank after
    # the label, then the line with its own indentation
    ("s", lazy_re(r"std(?:out|err):(?: |$)"), _stdio_label),
    # Python's warnings: `<file>.py:<line>: <Category>Warning: ` (a path with folders, a relative one or a
    # Windows one), the category one of Python's or a package's own (`...Warning`)
    ("/.~_\\abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
     lazy_re(r"(?:[A-Za-z]:)?(?:[\w.~+-]{0,255}[/\\]){0,64}(?P<file>[\w.+-]{1,255}\.py):(?P<line>\d{1,7}): "
             r"(?:[A-Za-z_]\w{0,80}\.){0,8}(?:[A-Z]\w{0,60})?Warning: (?=\S)"), _pywarn),
    # (a module path of three names or more, lower case, then the message with no blank: never an exception's
    # `pkg.mod.SomeError: ` nor a `host.domain:port`)
    ("abcdefghijklmnopqrstuvwxyz", lazy_re(r"(?P<logger>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){2,}):(?=[A-Za-z])"), _stdlib_cut),
    ("abcdefghijklmnopqrstuvwxyz", lazy_re(rf"(?P<host>{_HOST}): "), _pdsh),
    # grep's name of the file a line came from (`grep -r`, `grep -H`, `-n`): `logs/rank3.log:`, `LOG1.0.txt:12:`
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
     lazy_re(r"(?P<file>(?:[\w.+-]+/)*[\w.+-]*\w\.(?:log|txt|out|err))(?::\d+)?:(?=\S)"), _grepped),
    # a c10 / glog header cut at its left by the paste: what is left of its clock, then `file.cpp:N] ` and the
    # message (a source file's name without a folder: the rest of a wrapped `[/path/to/pair.cc:152]` has one)
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
     lazy_re(r"(?:(?P<lvl>[FEWIV])?\d{3,4} )?[\d:.]{0,24}[ \t]{0,2}"
             r"(?P<file>[\w+-]{1,80}\.(?:cpp|cc|cu|cuh|hpp|h|c)):(?P<line>\d{1,6})\] ?(?=\S)"), _header_cut),
]

# readers of a line's start that apply only after an ISO stamp (unwrap)
AFTER_TIME = (_syslog_after_time, _cri)

_BY_FIRST: dict[str, list[tuple[re.Pattern, Callable]]] = {}
for _chars, _rx, _fn in ENVELOPES:
    for _c in _chars:
        _BY_FIRST.setdefault(_c, []).append((_rx, _fn))
del _chars, _rx, _fn, _c

_RICH_LOCATION = lazy_re(r"[ \t]{2,}[\w.<>-]+:\d+[ \t]*$")
_RAY_REPEAT = lazy_re(r" \[repeated (\d+)x across cluster\]$")
_EMBEDDED = lazy_re(r"\[rank\d+\]:\[[FEWIV]")
EMBED_MARK = "]:["  # in every line where _EMBEDDED finds a c10 envelope after residue
# the note cut by a viewer or a terminal's width, with or without a cut mark: ` [repeated 6x acr… [truncated]`
_RAY_REPEAT_CUT = lazy_re(r" \[(r[a-z\d ]{0,26})(?:\.{3,}|\u2026)?(?: ?[\[(<][^\[\]()<>]{0,40}[\])>])?[ \t]*\Z")
_RAY_NOTE, _DIGITS = "repeated #x across cluster", lazy_re(r"\d+")  # (its number as `#`: no digit literal)
RAY_SUFFIX = "across cluster]"  # the end of every line _RAY_REPEAT matches
_PDSH_NEEDS_DIGIT, _LEVEL_WORDS = lazy_re(r"[\d-]"), ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# a versioned Python interpreter's name leads its own messages like a host (`python3: can't open file 'train.py': ...`,
# `python3.10: ...`): never a pdsh host
_INTERPRETER = lazy_re(r"python\d+(?:\.\d+)?\Z")
# systemd's unit names (`nvidia-fabricmanager.service: Main process exited, ...` in `systemctl status` and the
# journal) end like a host name with a dash: a unit's type is never a host's last label
_UNIT_TYPES = (".service", ".socket", ".mount", ".timer", ".target", ".slice", ".scope", ".swap", ".path", ".device")

MAX_LAYERS = 8


# A run of more digits than Python converts to int (4300 by default, never below 640): no rank,
# pid or count is that long, and int() on it raises. Such text is left alone by the parser.
_HUGE_NUMBER = lazy_re(r"(?<!\d)\d{640}")


def has_huge_number(text: str) -> bool:
    return len(text) >= 640 and _HUGE_NUMBER.search(text) is not None


# The "paste" envelope: what markdown and mail do to a log pasted into an issue or a chat. Quote
# markers (`> `, `>> `, `> > `), then one list bullet (`- `, `* `, `+ `, `1. `) are peeled from the
# start of a line, and so is the opening of inline code (`` ` `` or ``` `` ```) that a paste put
# around a line; so is indentation (a markdown code block) when an envelope follows it. Fence lines
# (```) need nothing: they hold no keyword and are counted as irrelevant lines.
_PASTE_QUOTE = lazy_re(r"(?:[ \t]*(?:>[ \t]?)+)?(?:`{1,2} ?(?=[^`\s]))?")  # (markdown lets a blank follow the opening)
_PASTE_BULLET = lazy_re(r"(?:[-*+]|\d{1,3}[.)])[ \t](?=\S|[ \t]+\S)")
_INDENT = lazy_re(r"(?:[ \t]{2,}|\t)(?=[\[(|A-Za-z0-9])")  # a code block's indent (a tab is one character)


def _paste(line: str) -> int:
    """Where the log line starts after paste decoration (0 when there is none)."""
    c = line[:1]
    if c not in "> \t-*+0123456789`":
        return 0
    pos = 0
    m = _PASTE_QUOTE.match(line)
    if m is not None:
        pos = m.end()
    m = _PASTE_BULLET.match(line, pos)
    if m is not None and (pos or line[m.end():m.end() + 1] in "[(" or _envelope_at(line, m.end())
                          or not line[:1].isdigit()):
        pos = m.end()
    m = _INDENT.match(line, pos)
    if m is not None and _envelope_at(line, m.end()):
        pos = m.end()
    return pos


def _envelope_at(line: str, pos: int) -> bool:
    for rx, fn in _BY_FIRST.get(line[pos:pos + 1], ()):
        if fn is not _pdsh and fn is not _srun and rx.match(line, pos) is not None:
            return True
    return False


# Tests a line passes at p wherever the envelope's pattern matches (a level word; compose: `|`, a digit, a blank)
_FIRST_TEST = {_compose: lambda s, p: "|" in s and (i := s.find(" ", p)) > p and s[i - 1].isdecimal(),
               **dict.fromkeys((_stdlib, _ray_pylog, _vllm), lambda s, p: s.startswith(_LEVEL_WORDS, p)),
               _grepped: lambda s, p: (i := s.find(":", p)) > p and s[i - 4:i] in _GREP_EXTS}
_GREP_EXTS = (".log", ".txt", ".out", ".err")


def _peel(line: str, pos: int, env: Envelope, layers: list[str]) -> int:
    """The known envelopes at the front of ``line`` from ``pos``, outside in: where they end."""
    n = len(line)
    while pos < n and len(layers) < MAX_LAYERS:
        cands = _BY_FIRST.get(line[pos])
        if not cands:
            break
        for rx, fn in cands:
            if fn in AFTER_TIME and (not layers or layers[-1] != "iso-time"):
                continue  # (a word at a line's start is far more often a message)
            test = _FIRST_TEST.get(fn)
            if test is not None and not test(line, pos):
                continue
            m = rx.match(line, pos)
            if m is None:
                continue
            if fn is _pdsh and (layers or not _PDSH_NEEDS_DIGIT.search(m["host"]) or m["host"].endswith(_UNIT_TYPES)
                                or _INTERPRETER.match(m["host"]) is not None):
                continue  # a bare word and a colon is far more often a message than a host
            before = (env.time,)
            layers.append(fn(m, env))
            if before[0] and env.time and env.time.startswith("--") and not before[0].startswith("--"):
                env.time = before[0]  # keep the stamp that has a year
            pos = m.end()
            break
        else:
            break
    return pos


def leading_end(line: str) -> int:
    """Where the paste decoration and the known envelopes at the front of ``line`` end (what
    :func:`unwrap` peels before it looks for residue)."""
    if has_huge_number(line):
        return 0
    return _peel(line, _paste(line) if line else 0, Envelope(), [])


def unwrap(line: str) -> tuple[Envelope, str]:
    """Split ``line`` into what its envelopes said and the message inside them."""
    env = Envelope()
    if has_huge_number(line):
        env.layers = ()
        return env, line
    layers: list[str] = []
    pos = _paste(line) if line else 0
    pasted = pos > 0
    pos = _peel(line, pos, env, layers)
    if not layers or layers[-1] not in ("c10", "glog", "pylog"):
        # Progress-bar or other residue before a c10 envelope: `240it [05:55, 1.47s/it][rank0]:[E709 ...`
        m = _EMBEDDED.search(line, pos) if EMBED_MARK in line else None
        if m is not None:
            for rx, fn in _BY_FIRST["["]:
                mm = rx.match(line, m.start())
                if mm is not None and fn is _c10:
                    layers.append(fn(mm, env))
                    pos = mm.end()
                    break
        else:
            pos = _residue(line, pos, env, layers)
    msg = line[pos:] if pos else line
    if "rich" in layers:
        r = _RICH_LOCATION.search(msg)
        if r is not None:
            msg = msg[:r.start()]
    if msg.endswith(RAY_SUFFIX):
        r = _RAY_REPEAT.search(msg)
        if r is not None:
            msg = msg[: r.start()]
            layers.append(f"ray-repeat-{r.group(1)}")
    elif "ray" in layers and " [r" in msg[-80:]:
        r = _RAY_REPEAT_CUT.search(msg, max(0, len(msg) - 80))
        if r is not None and len(r[1]) >= 2 and _RAY_NOTE.startswith(_DIGITS.sub("#", r[1])):
            msg = msg[: r.start()]  # (the note follows the whole message: a viewer cut the note, not it)
            layers.append("ray-repeat-cut")
    if msg.endswith("`") and not msg.endswith("``") and msg.count("`") % 2:
        msg = msg[:-1].rstrip()  # the close of inline code a paste put around the line (unbalanced)
        pasted = True
    if pasted:
        layers.insert(0, "paste")
    env.layers = tuple(layers)
    return env, msg


# ---------------------------------------------------------------------------------------------
# unknown residue before a known start

# A prefix that no envelope knows (a log shipper's, a logger's format, a viewer's columns) before what
# certainly starts a line: a glog / torch Python-logger header, a c10 header (`[E file.cpp:N] `), a stdlib logger's `LEVEL:name:`, or a
# Python exception line (`RuntimeError: ...`, `torch.distributed.DistBackendError: ...`). The residue
# is peeled as an unnamed layer ("residue") when it reads as a prefix (:func:`prefix_like`); what it
# names (a pid, a rank, a label, a time, a level) stays with the line (:func:`prefix_identity`).
_RESIDUE_START = lazy_re(
    r"(?<=[\s:\]|)>])(?:"
    r"(?P<glog>(?:\[rank\d+\]:)?[FEWIC]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./+-]+:\d+\] )"
    r"|(?P<c10>\[[FEWIV](?:\d{3,4} \d\d:\d\d:\d\d\.\d+)? [\w.+-]+\.(?:cpp|cc|hpp|h|py):\d+\] )"
    r"|(?P<stdlib>(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):(?:root|__main__|\w+(?:\.\w+)+):)"
    r"|(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)(?::[ \t]|:?$))"
    r")")
_RESIDUE_GATE = lazy_re(r"\d\] |ERROR:|WARNING:|INFO:|CRITICAL:|DEBUG:|Error|Exception|Interrupt|Exit|Failure")  # see _gate
_GATE_WORDS = lazy_re("Error|Exception|ERROR:|WARNING:|INFO:|CRITICAL:|DEBUG:|Interrupt|Exit|Failure")


def _gate(line: str, pos: int) -> bool:
    """``_RESIDUE_GATE.search(line, pos) is not None`` (a slow pattern: no literal leads it): ``] `` after a \\d (Nd), or a word."""
    i = line.find("] ", pos + 1)
    while i >= 0 and not line[i - 1].isdecimal():
        i = line.find("] ", i + 2)
    return i >= 0 or _GATE_WORDS.search(line, pos) is not None


def _residue(line: str, pos: int, env: Envelope, layers: list[str]) -> int:
    """Where the message starts when unknown residue stands before a known start (``pos`` else)."""
    n = len(line)
    if n - pos < 8 or line[pos] in " \t" or "NCCL INFO" in line or "NCCL WARN" in line \
            or not _gate(line, pos):
        return pos  # (NCCL's lines are read where their header stands; an indented line is a record's)
    m = _RESIDUE_START.search(line, pos + 1, min(n, pos + MAX_RESIDUE + 80))
    if m is None or m.start() - pos > MAX_RESIDUE:
        return pos
    res = line[pos:m.start()]
    if m["exc"] is not None:
        if not prefix_like(res):
            return pos
    elif not res.strip() or "NCCL" in res:
        return pos
    elif m["c10"] is not None and not res[-1].isspace():
        return pos  # (a logger's prefix ends with a blank; a progress bar's residue is glued to the header)
    for k, v in prefix_identity(res).items():
        if k == "label":
            if v and env.process is None:
                env.process = v
        elif k in ("rank", "pid") or getattr(env, k) is None:
            setattr(env, k, v)  # (the innermost layer names the process, as a rank inside a tee does)
    layers.append("residue")
    if m["exc"] is not None:
        return m.start()
    for rx, fn in _BY_FIRST[line[m.start()]]:
        mm = rx.match(line, m.start())
        if mm is not None and fn in (_glog, _stdlib, _c10):
            t0 = env.time
            layers.append(fn(mm, env))
            if t0 and env.time and env.time.startswith("--") and not t0.startswith("--"):
                env.time = t0  # keep the stamp that has a year
            return mm.end()
    return m.start()


# ---------------------------------------------------------------------------------------------
# queries for readers that skip unwrap() (logdoc/fast/): what unwrap() may peel past the front

def tail_is_plain(line: str) -> bool:
    """Whether :func:`unwrap` takes nothing from ``line`` but what its leading envelopes (if any)
    hold: no c10 envelope after residue, no Ray repeat suffix, no closing backtick of inline code."""
    return EMBED_MARK not in line and not line.endswith(RAY_SUFFIX) and not line.endswith("`")


# c10's header with its clock at a line's start, in bytes (the c10 envelope's pattern, the first of
# ``_BY_FIRST["["]`` that such a line can match, up to its clock): the clock's digits are read by the
# time only (:func:`c10_time`), so two lines that differ in them alone unwrap alike but for the time
# (logdoc/fast/alone.py: a warning printed again at another time; tests/test_fastpath_alone.py)
C10_CLOCK = lazy_re(rb"(?:\[rank\d+\]:)?\[[FEWIV](\d{3,4}) (\d\d:\d\d:\d\d)\.\d{1,12} ")


def c10_time(md: bytes, hms: bytes) -> str | None:
    """The time the c10 envelope reads from the clock :data:`C10_CLOCK` found (None: no date)."""
    return _mmdd(md.decode(), hms.decode())
