"""The prefilter's short keyword list still makes every message of the catalogs a candidate.

Each NCCL, PyTorch and Gloo format is rendered the way it is printed: NCCL lines with their
``host:pid:tid [dev] NCCL INFO`` header (``tests/nccl_render.py``), c10 ``LOG`` messages with the c10
envelope of torch >= 2.2 (``[rank3]:[E1126 ... ProcessGroupNCCL.cpp:123] ``) and of older releases
(``[E ProcessGroupNCCL.cpp:123] ``), exceptions as Python prints them (``Type: message``), torch's
Python logger lines with their header, Gloo messages as the exception text that carries them, and
the whole-line formats of ``grammars/torch_templates.tsv`` (Gloo's as exception text, the way Gloo
reports them). Every line that the former 51-keyword
list made a candidate must still be one.
"""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

from logdoc.read import prefilter

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from nccl_render import catalog_rows, render_line  # noqa: E402

# The keyword list before the fast path (logdoc 0.1): the reference for "was a candidate".
FORMER_KEYWORDS = (
    "NCCL", "rror", "Traceback", "xception", "c10d", "ProcessGroup", "Gloo", "gloo", "Watchdog",
    "watchdog", "Rank", "rank", "===", "Failures:", "Root Cause", "Xid", "CUDA", "cuda", "SIG",
    "exitcode", "terminate", "what():", "imed out", "Connection", "failed", "torch", "Timeout",
    "Socket", "socket", "ailure", "Killed", "killed", "oom", "OOM", "Bus error", "Segmentation",
    "core dumped", "File \"", "-> ", "onnect", "[PG", "atchdog", "signal", "Worker group", "endezvous",
    "out of memory", "Flight", "timeout", "Failed", "NVRM",
)

_QUALIFIED = {"DistBackendError": "torch.distributed.DistBackendError",
              "DistNetworkError": "torch.distributed.DistNetworkError",
              "DistStoreError": "torch.distributed.DistStoreError"}
_C10 = {"ERROR": "E", "WARNING": "W", "INFO": "I", "VLOG": "V", "FATAL": "F"}


def _fill(fmt: str) -> str:
    """A format with every ``{placeholder}`` replaced by a value (the first of ``{a|b}``)."""
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "{":
            depth, j = 1, i + 1
            while j < len(fmt) and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            inner = fmt[i + 1:j - 1]
            out.append(_fill(inner.split("|")[0].split("=", 1)[-1]) if "|" in inner else "7")
            i = j
        else:
            out.append(fmt[i])
            i += 1
    return "".join(out).replace("\\t", "\t")


def _torch_lines():
    with open(DATA / "torch" / "torch-messages.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            level = row["level"]
            base = os.path.basename(row["file"].split(" ")[0])
            first = _fill(row["format"]).split("\\n")[0]
            kind = level.split("(")[0]
            if kind in _C10:
                c = _C10[kind]
                yield row, f"[rank3]:[{c}1126 10:11:12.123456789 {base}:123] {first}"
                yield row, f"[{c} {base}:123] {first}"
            elif kind == "TORCH_WARN":
                yield row, f"[rank3]:[W1126 10:11:12.123456789 {base}:123] Warning: {first} (function f)"
                yield row, f"[W {base}:123] Warning: {first} (function f)"
            elif kind == "EXC":
                inner = level[4:-1] if level.endswith(")") else ""
                etype = inner if inner and inner != "old" else "RuntimeError"
                yield row, f"{_QUALIFIED.get(etype, etype)}: {first}"
            elif kind == "PYEXC":
                yield row, f"{level[6:-1]}: {first}"
            elif kind.startswith("PYLOG"):
                module = row["file"][:-3].replace("/", ".")
                yield row, f"[W1126 10:11:12.123000 1234 {row['file']}:123] {first}"
                yield row, f"{kind[6:]}:{module}:{first}"
            elif kind == "PRINT" and "{line_of_uncaught_python_traceback}" in row["format"]:
                # the rank prefix torch puts on each line of an uncaught traceback: what matters is
                # the line (its head and its exception hold keywords; an open traceback takes the rest)
                for line in ("Traceback (most recent call last):", "RuntimeError: 7",
                             '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 7'):
                    yield row, first.replace("7", line, 1) if first.startswith("[rank7]: ") else first
            elif kind == "PRINT":
                yield row, first
            # PREFIX, TABLE, REPORT, DIFF, INTERPRETATION, ERRSTR: pieces of a bigger message


def _gloo_lines():
    with open(DATA / "torch" / "gloo-messages.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            msg = _fill(row["format"]).split("\\n")[0]
            yield row, "RuntimeError: " + msg
            if msg.startswith("["):
                yield row, msg


def _nccl_lines():
    for row in catalog_rows():
        for tag in sorted({row["first_tag"], row["last_tag"]}):
            yield row, render_line(row["level"], row["format"], tag, row["locations_in_last_tag"])


def _template_lines():
    for raw in (ROOT / "grammars" / "torch_templates.tsv").read_text(encoding="utf-8").splitlines():
        if raw.startswith("#") or raw.startswith("id\t"):
            continue
        cols = raw.split("\t")
        if cols[3] == "line":
            line = _fill(cols[5]).split("\\n")[0]
            # Gloo throws: its messages reach a log as the text of an exception
            yield cols[0], ("RuntimeError: " + line) if cols[0].startswith("gloo:") else line


def rendered_lines(skip=frozenset()) -> list[tuple[str, str]]:
    out = []
    for what, gen in (("torch", _torch_lines()), ("gloo", _gloo_lines()), ("nccl", _nccl_lines()),
                      ("template", _template_lines())):
        for tid, line in gen:
            if what != "template" or tid not in skip:
                out.append((what, line))
    return out


# Connection checks a person runs by hand and pastes beside the job's log (nc, ncat, telnet, curl, ssh, ping):
# never lines of a job's own log, so never in a log long enough to be read through the prefilter
_COMMAND_OUTPUT = {"logdoc:nc:connect-failed", "logdoc:ncat:connect-failed", "logdoc:telnet:unable-to-connect",
                   "logdoc:curl:failed-to-connect", "logdoc:curl:failed-to-connect-old", "logdoc:ssh:connect-to-host",
                   "logdoc:ping:unreachable"}


def test_every_rendered_message_is_still_a_candidate():
    lines = rendered_lines(skip=_COMMAND_OUTPUT)
    assert len(lines) > 5000
    was = [(w, ln) for w, ln in lines if any(k in ln for k in FORMER_KEYWORDS)]
    missed = [(w, ln) for w, ln in was if not prefilter.candidate(ln)]
    assert missed == [], missed[:10]
    # every NCCL line is a candidate, whatever the release
    assert all(prefilter.candidate(ln) for w, ln in lines if w == "nccl")


# Whole-line templates a line never reaches alone: read inside the block that holds them (torchrun's failure
# table), or rendered here without the exception text that carries them as printed
_TEMPLATE_IN_A_BLOCK = {"logdoc:elastic:table-no-traceback", "logdoc:pg:scatter-gather-numel",
                        "logdoc:hydra:no-host-address", "logdoc:rust:unwrap-os-error",
                        "logdoc:nc:getaddrinfo"}  # its gai_strerror (rendered as `7` here) holds `known` or `esol`


# warnings.warn of torch's own Python files: printed after Python's `<file>.py:<line>: UserWarning: ` head, whose
# path names the torch package (`.../site-packages/torch/distributed/distributed_c10d.py`)
_AFTER_A_TORCH_PATH = {"logdoc:c10d:no-device-id": "/opt/conda/lib/python3.11/site-packages/torch/distributed/"
                                                   "distributed_c10d.py:4631: UserWarning: "}


def test_every_whole_line_template_is_a_candidate():
    # a template logdoc reads on a line of its own must reach the grammars in a large log too (a short
    # paste is read whole; a large log only through the prefilter)
    lines = list(_template_lines())
    missed = [(tid, ln) for tid, ln in lines
              if tid not in _TEMPLATE_IN_A_BLOCK and tid not in _COMMAND_OUTPUT
              and not prefilter.candidate(_AFTER_A_TORCH_PATH.get(tid, "") + ln)]
    assert missed == []
    assert set(_AFTER_A_TORCH_PATH) <= {tid for tid, _ in lines}


# Rules whose one-line examples never stand alone in a large log: NCCL INFO lines shown without their
# header, pieces of a multi-line report, lines of programs whose logs are read whole (Envoy, MPICH Hydra's
# proxy), torch's capability warning shown without its `torch/cuda/__init__.py: UserWarning:` head, a c10 line
# of a header file, and the output of diagnostic commands a post shows apart from the job's log (lspci's ACSCtl,
# nvidia-smi's table, ibv_devinfo / ibstat, /proc/cmdline, ulimit -a, /etc/hosts, ip addr: logdoc/classify/hostcheck.py)
_EXAMPLES_IN_CONTEXT = {"LD519", "LD520", "LD534", "LD474", "LD171", "LD641", "LD848", "LD630",
                        "LD892", "LD893", "LD271", "LD272", "LD691", "LD168", "LD897",
                        "LD179", "LD169", "LD898",
                        # paste21: a diagnostic's output pasted alone (p2pBandwidthLatencyTest's CANNOT Access Peer,
                        # dcgmi diag's rows); Open MPI's banner, whose `Primary job  terminated ...` line holds a keyword
                        "LD862", "LD863", "LD864", "LD743",
                        # paste22: nvidia-smi topo -m's rows, nvidia-smi's `No devices were found` (its whole output)
                        "LD868", "LD234", "LD869",
                        # perftest's stderr lines and Go's dial errors pasted alone
                        "LD235", "LD236", "LD237", "LD238", "LD239", "LD643", "LD644"}  # (and the connection checks of _COMMAND_OUTPUT)


def test_every_one_line_rule_example_is_a_candidate():
    # a log over paste.EVERY_LINE_MAX lines is read only on its candidate lines: a rule whose example line
    # is not one would fire on a short paste of the line and stay silent in the whole log
    import yaml

    missed = []
    for path in sorted((ROOT / "knowledge").glob("*.yaml")):
        for rule in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules") or []:
            if rule["id"] in _EXAMPLES_IN_CONTEXT:
                continue
            for ex in (rule.get("examples") or {}).get("match") or []:
                if isinstance(ex, str) and "\n" not in ex.strip() and not prefilter.candidate(ex):
                    missed.append((rule["id"], ex))
    assert missed == []


def test_the_store_based_barriers_end_is_read_with_its_wait():
    # a large log keeps the barrier's status lines (`timeout=`); its end must be kept too, or a barrier that
    # completed reads as ranks that never joined (logdoc/analysis/progress.py)
    wait = ("INFO:root:Waiting in store based barrier to initialize process group for rank: 0, key: "
            "store_based_barrier_key:1 (world_size=8, worker_count=7, timeout=0:30:00)")
    done = "INFO:root:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes."
    assert prefilter.candidate(wait) and prefilter.candidate(done)


def test_keywords_are_few_and_consistent():
    # 16 + "illed" (logdoc/stops.py: the job stopped from outside, Ray's memory monitor) + "esol"
    # (host names that do not resolve) + "open files" (EMFILE in any program's wording) + "%|" (progress
    # bars) + "NET", "nccl", "Out of bounds", "bus bandwidth" (bare NCCL and nccl-tests lines) + "core dump",
    # "ation fault", "*** SIG" (a fatal signal as the shell, Abseil and glog report it) + "DMAR" (the kernel's
    # IOMMU faults) + "nable to connect" (a launcher that cannot reach a node: MPICH Hydra) + "version: "
    # (torch.utils.collect_env's `PyTorch version: ...`, `Nvidia driver version: ...`) + "known", "NXDOMAIN"
    # (getaddrinfo's texts and DNS lookup tools as a paste shows them) + ".cpp:", "ERROR", "/dev/shm", "SHMEM",
    # "infiniband", "IB devices", "device handle", "abric", "Xid" (other programs' lines that rules read on their own)
    # + "access fault", "/dev/kfd" (ROCm's KFD page fault, rocminfo's /dev/kfd) + "GetDeviceCount returned",
    # "<inactive>" (cuda-samples' deviceQuery, nvidia-smi nvlink --status) + "daemon" (Open MPI's launcher
    # losing a node) + "MPI_ABORT was invoked" (a rank aborting an Open MPI job) + "marked dead" (a Ray node lost,
    # logged at WARNING) + "died" (a framework's dead worker or actor without an error word: Ray, vLLM) +
    # "broadcast block" (vLLM's message queue waiting on a stuck peer) + "remainder of ranks" (Horovod's stall
    # inspector) + "recommended minimum" (Accelerate's kernel check) + "SIGTERM" (Lightning's `Received SIGTERM: 15`)
    # + "network interface" (Horovod's interface check raised as NoValidAddressesFound, its line bare) + "collective #",
    # "lagging" (the desync report's lines pasted alone); session 33: "SIG" where "*** SIG" and "SIGTERM" were, " fault" where
    # "ation fault" and "access fault" were (one stem each), for "oordination" and "EXCEEDED" (JAX's coordination service);
    # session 34: "UNAVAILABLE: " (a gRPC status alone on its line, logdoc/classify/frameworks.py); session 38: "HIP failure"
    # (rccl-tests' HIPCHECK, `node1: Test HIP failure common.cu:1129 'hipErrorInvalidDevice'`: no other keyword); session 39: "store-based
    # barrier" (the barrier's end, `INFO:root:Rank 0: Completed store-based barrier for key:...`: its wait's status lines are read);
    # session 40: "GLOBAL_RANK: ", "processes registered" (Lightning's `Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4` and
    # rank 0's `All distributed processes registered. ...`: LD6080 reads which ranks were announced, and is silent once all registered),
    # "OOM when" (TensorFlow's `OOM when allocating tensor ...` after a status code with no keyword: `(0) Resource exhausted: `; LD8060)
    # session 41: "daemon" where "remote daemon" was (one stem for Open MPI's runtime losing, not starting or not reaching its
    # daemons: `ORTE was unable to reliably start one or more daemons.`, `A process or daemon was unable to complete a TCP connection`)
    # session 42: "StartAbort" (TensorFlow's `BaseCollectiveExecutor::StartAbort Unavailable: Socket closed`, its status in
    # the words before 2.11 with no other keyword; logdoc/classify/frameworks.py, LD7060)
    # "exchange_identification", "command not found" (the line before Open MPI's daemon-launch banner that names why: OpenSSH's
    # `ssh_exchange_identification: Connection closed by remote host`, the node's `bash: orted: command not found`; LD1065, LD1066)
    # session 43: "Abort" where "StartAbort" was (one stem for TensorFlow's executor line and the ring algorithm's own line
    # before it, `Aborting RingReduce with Unavailable: Socket closed`, no other keyword; LD7060)
    # session 44: "not found" where "command not found" was (dash's `/bin/sh: 1: deepspeed: not found` besides bash's), "open
    # file" where "open files" was (Python's `can't open file '...': [Errno 2] ...` besides EMFILE's); "sigkill_handler"
    # (DeepSpeed's launcher line with its `[ERROR]` head cut: LD7085) and "ssh exited" (pdsh: LD7083, LD7084), "enough slots"
    # (Open MPI's `There are not enough slots available in the system ...`: LD7086), "such file" (bash's `bash: /env/bin/python:
    # No such file or directory` for a command given by its path: LD7081), "was unable to" (Open MPI's `mpirun was unable to find
    # the specified executable file, ...` and `... to launch the specified application ...`: LD7087), five new
    # and "_FAULT" where "DMAR" was (the AMD IOMMU's `AMD-Vi: Event logged [IO_PAGE_FAULT ...]` has no other keyword;
    # Intel's `DMAR: [DMA Write] Request device [02:00.0] fault addr ...` holds " fault"; LD877)
    assert len(prefilter.KEYWORDS) <= 70
    assert prefilter.KEYWORDS_BYTES == tuple(k.encode() for k in prefilter.KEYWORDS)
    for k in prefilter.KEYWORDS:
        assert prefilter.candidate(f"x {k} y")
    assert not prefilter.candidate("step 1200 | loss 2.31 | lr 3.0e-04 | tokens/s 118000")
