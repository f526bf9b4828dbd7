"""The brace dialect's generator: grammars/torch_templates.tsv from the PyTorch and Gloo catalogs
copied to tests/data/torch/.

    python tools/make_catalog torch

The output is committed; logdoc never reads the catalogs at run time. Columns of the output:

    id      stable template id: torch:<component>:<slug> or gloo:<file>:<line> or logdoc:<area>:<slug>
    kind    event kind (docs/architecture.md) given to a message matching the format
    level   default level when the envelope has none (ERROR, WARN, INFO, DEBUG, FATAL)
    where   'body' (a ProcessGroup prefix and `[c10d] ` are peeled first), 'gloo' (the message
            after Gloo's `[file:line] ` / `[enforce fail at file:line] `), 'line' (whole message)
    file    Gloo: source file of the format (used to prefer the template of the printing file)
    format  the text with placeholders: {name} (lazy, any), {name:int}, {name:word} (no blank),
            {name:line} (no line break), {name:rest} (anything to the end, may be empty),
            {a|b} (one of literal alternatives), {name=a|b} (the same, captured)
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "data" / "torch"  # the catalogs it reads

INT_NAMES = {
    "rank", "seq", "pg_id", "last_enqueued", "last_completed", "timeout_ms", "elapsed_ms", "src_rank",
    "size", "global_rank", "ms", "n", "heartbeat_timeout_s", "seconds", "joined", "world_size", "port",
    "fd", "errno", "code", "uv_code", "exitcode", "local_rank", "pid", "round", "idx", "signum",
    "remaining", "max_restarts", "group_rank", "failed_rank", "other_rank", "seq2", "numel_in",
    "numel_out", "device_index", "delay_ms", "num_connected", "size_minus_1", "seq_plus_1", "other_seq",
    "res", "will_retry", "retry_count", "retry_limit", "gloo_rank", "gloo_size", "glooRank", "s",
}
WORD_NAMES = {"op_type", "op_type2", "other_op_type", "nccl_version", "uv_name", "signal", "kill_signal",
              "SIGNAME", "host", "dtype", "device", "bound_device", "iface", "family"}
LINE_NAMES = {"strerror", "gai_strerror", "uv_message", "error_line"}

# Hand fixes of catalog placeholders that are not a plain {name}.
ALT_FIX = {
    "{this local rank| rank <src_rank>}": "{source=this local rank|rank {src_rank:int}}",
    "{SIGTERM|SIGINT|...}": "{signal:word}",
    "{IPv4 |IPv6 |}": "{family=IPv4 |IPv6 |}",
    "{value|N/A}": "{value:line}",
    "{reason|No abort reason provided.}": "{reason}",
    "{error_file|<N/A>}": "{error_file:line}",
    "{Successfully processed ranks: <ranks>|No ranks successfully processed in monitoredBarrier.}":
        "{processed=Successfully processed ranks: |No ranks successfully processed in monitoredBarrier.}{processed_ranks:rest}",
    "{collective timeout or exception|ProcessGroupNCCL watchdog hang}":
        "{reason=collective timeout or exception|ProcessGroupNCCL watchdog hang}",
    "{FAILED|UNHEALTHY}": "{state=FAILED|UNHEALTHY}",
    "{MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE}": "{variable=MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE}",
    "{OFF|INFO|DETAIL}": "{debug=OFF|INFO|DETAIL}",
    "{true|false}": "{use_ipv6=true|false}",
    "{0|1}": "{flag:int}",
    "{empty message}": "",
    # elastic's exit barrier prints the seconds as a float (`Elapsed: 300.0123 seconds`)
    "Elapsed: {seconds} seconds": "Elapsed: {seconds:word} seconds",
    # c10d prints the connect timeout as fmt prints a std::chrono duration: `600000ms`, and `1800s` /
    # `30min` in the releases whose timeout was in seconds (2.0 - 2.2)
    "timed out after {timeout_ms}ms while trying": "timed out after {timeout_ms}{unit=ms|s|min|h} while trying",
    # c10d formats a std::error_code as `(<category>: <value> - <message>)` (torch/csrc/distributed/c10d/error.h):
    # `errno` for the generic category, `system error` for Windows' system category, whose values are the
    # WinSock codes and whose message is in the system's language
    # (`(system error: 10049 - The requested address is not valid in its context.)`)
    "(errno: {errno} - {strerror})": "({error_category=errno|system error}: {errno:int} - {strerror:line})",
}

PREFIXES = (
    "[PG ID {pg_id} PG GUID {pg_guid}({pg_desc}) Rank {rank}] ",
    "[PG ID {pg_id} PG GUID {pg_guid}({pg_desc}) Rank {rank}]",  # logPrefix() + " failure ..." keeps the space
    "[PG {pg_id} Rank {rank}] ",
    "[Rank {rank}]: ",
    "[Rank {rank}] ",
    "[c10d] ",
)


def snake(name: str) -> str:
    name = name.strip()
    name = re.sub(r"\(.*?\)", "", name)          # getSSLErrorMessage() -> getSSLErrorMessage
    name = name.split(".")[-1] if "." in name and not name.startswith(".") else name
    name = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_")
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if not name or name[0].isdigit():
        name = "value"
    return name


def slug(text: str, words: int = 7) -> str:
    text = re.sub(r"\{[^{}]*\}", " ", text)
    parts = re.findall(r"[A-Za-z0-9]+", text.lower())
    return "-".join(parts[:words]) or "message"


def convert_placeholders(fmt: str, gloo: bool) -> str:
    """Catalog {..} syntax -> table syntax (typed names)."""
    for old, new in ALT_FIX.items():
        fmt = fmt.replace(old, new)
    if gloo:
        fmt = re.sub(r"\{[^{}]+\} vs \{[^{}]+\}", "{lhs:word} vs {rhs:word}", fmt)
    seen: dict[str, int] = {}

    def repl(m: re.Match) -> str:
        inner = m.group(1)
        if ":" in inner or "=" in inner:       # already converted
            return m.group(0)
        if "|" in inner:
            alts = inner.split("|")
            return "{" + "|".join(alts) + "}"
        name = {"data.willRetry": "will_retry", "data.retryCount": "retry_count",
                "data.retryLimit": "retry_limit", "data.glooRank": "gloo_rank",
                "data.glooSize": "gloo_size", "data.local": "local", "data.remote": "remote",
                "data.error": "error", "context.rank": "rank", "Address(attr.ai_addr).str()": "address",
                "self_.str()": "self_addr", "attr.ai_family": "family", "dlerror()": "dlerror",
                "getSSLErrorMessage()": "ssl_error"}.get(inner, inner)
        name = snake(name)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}_{seen[name]}"
        base = re.sub(r"_\d+$", "", name)
        if base in INT_NAMES or name in INT_NAMES:
            return "{" + name + ":int}"
        if base in WORD_NAMES or base == "peer" or base in {"remote", "local", "addr", "remote_addr", "local_addr", "self_addr"}:
            return "{" + name + ":word}"
        if base in LINE_NAMES:
            return "{" + name + ":line}"
        return "{" + name + "}"

    fmt = re.sub(r"\{([^{}]*)\}", repl, fmt)
    # unique group names, converted ones included
    count: dict[str, int] = {}

    def uniq(m: re.Match) -> str:
        name, rest = m.group(1), m.group(2)
        count[name] = count.get(name, 0) + 1
        return "{" + (name if count[name] == 1 else f"{name}_{count[name]}") + rest + "}"

    return re.sub(r"\{([a-z_][a-z0-9_]*)([:=][^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", uniq, fmt)


def torch_kind(component: str, level: str, fmt: str) -> str | None:
    f = fmt
    low = f.lower()
    if component in ("c10-logging",) or (component == "elastic-multiprocessing" and level == "PREFIX"):
        return None
    if component == "distributed_c10d" and level == "PRINT":
        return None
    if component == "c10-exception":
        return "torch.terminate" if "terminate called" in f else "torch.cxx_backtrace"
    if component == "ProcessGroupNCCL":
        if "main process destroyed cuda" in f or "environments:" in f or "thread started" in f or "terminated normally" in f:
            return "torch.pg_info"
        if "Watchdog caught" in f or "timed out in blocking wait" in f:
            return "torch.watchdog_timeout"
        if "async exception" in f:
            return "torch.async_exception"
        if "failure detected by watchdog" in f or "terminated with exception" in f or "remote error detected" in f:
            return "torch.watchdog_failure"
        if "Stack trace of the failed collective" in f:
            return "torch.flight_recorder"
        if ("Some NCCL operations have failed" in f or "To avoid data inconsistency" in f
                or "Terminating the process after" in f or "would have terminated the process" in f):
            return "torch.teardown"
        if "Work update periodically" in f:
            return "torch.work_progress"
        if ("watchdog got stuck" in f or "Heartbeat monitor timed out" in f or "Could not acquire GIL" in f
                or "slept for" in f):
            return "torch.heartbeat"
        if "ncclUniqueId" in f:
            return "store.nccl_unique_id"
        if "NCCL error" in f or "NCCL communicator encountered" in f:
            return "torch.nccl_error"
        if "desync_report" in f or "DESYNC_DEBUG report" in f:
            return "torch.desync_report"
        if ("dump" in low or "flight" in low or "signal" in low or "global timeout" in f or "timeout rank" in f
                or "detected a collective timeout" in f or "detected an exception" in f or "stacktraces" in f):
            return "torch.flight_recorder"
        if level.startswith(("INFO", "VLOG", "TORCH_WARN")) or "destroy" in low:
            return "torch.pg_info"
        return "torch.message"
    if component == "FlightRecorder":
        return "torch.flight_recorder"
    if component == "TraceUtils":
        return "torch.desync_report"
    if component in ("NCCLUtils", "nccl-library", "cuda-nccl"):
        if ("Aborting ncclComm_" in f or "Dumping nccl comm trace" in f or "hasn't been destroyed" in f
                or "creating NCCL communicator" in f):
            return "torch.pg_info"
        return "torch.nccl_error"
    if component == "ProcessGroupGloo":
        if f == "{gloo_error}":
            return None
        if "connectFullMesh" in f:
            return "gloo.connect_full_mesh"
        if "monitoredBarrier" in f:
            return "torch.monitored_barrier"
        return "torch.message"
    if component == "ProcessGroupWrapper":
        return "torch.monitored_barrier" if "Monitored Barrier" in f else "torch.collective_mismatch"
    if component in ("c10d-socket", "TCPStore"):
        if f == "{strerror}":
            return None
        if "client socket has timed out" in f or ("TCP client failed" in f and "timed out" in f):
            return "store.client_timeout"
        if "TCP client failed" in f:
            return "store.connect_retry"
        if "waitForInput" in f or "wait timeout after" in f or f == "Socket Timeout":
            return "store.wait_timeout"
        if "ipv6" in low and "trying ipv4" in low:
            return "store.info"
        if "TORCHELASTIC_USE_AGENT_STORE" in f:
            return "store.info"
        if ("failed to listen" in f or "failed to bind" in f or "cannot be initialized on" in f):
            return "store.listen_failed"
        if "failed to connect to any" in f:
            return "store.connect_failed"
        if ("failed to connect to" in f or "not yet listening" in f or "No socket on" in f
                or "cannot be initialized to connect" in f):
            return "store.connect_retry"
        if "gai error" in f:
            return "store.resolve_failed"
        if "waiting for clients" in f:
            return "store.clients_joined"
        if "barrier timeout" in f:
            return "store.barrier_timeout"
        if "Failed to recv" in f or "Failed to send" in f:
            return "store.recv_closed"
        if ("Read callback failed" in f or "Failed to accept" in f or "MasterDaemon" in f or "Ping failed" in f
                or "failed to accept" in f or "not listening for connections" in f
                or "does not support IPv4" in f or "Stop_waiting" in f):
            return "store.server_error"
        return "store.info"
    if component == "distributed_c10d":
        if "store based barrier" in f:
            return "store.barrier_timeout"
        if "store-based barrier" in f:
            return "store.info"
        return "torch.message"
    if component == "rendezvous":
        return "torch.message"
    if component == "torchrun":
        return "torchrun.info"
    if component == "elastic-multiprocessing":
        if "failed (exitcode" in f:
            return "torchrun.worker_failed"
        if "got signal" in f:
            return "torchrun.signal"
        return "torchrun.sigterm"
    if component == "elastic-errors":
        if level.startswith("PYEXC") or level == "TABLE":
            return None                      # the ChildFailedError block: grammars/torch_child_failed.lark
        return "torchrun.info"
    if component == "elastic-agent":
        if "Worker group" in f or "new nodes" in f:
            return "torchrun.restart"
        if "Rendezvous complete" in f:
            return "torchrun.rendezvous"
        if "death signal" in f:
            return "torchrun.signal"
        return "torchrun.info"
    if component == "elastic-rendezvous":
        return "torchrun.rendezvous"
    return "torch.message"


def default_level(level: str) -> str:
    level = level.replace("(old)", "")
    if level.startswith("PYLOG-"):
        level = level[6:]
    return {"ERROR": "ERROR", "WARNING": "WARN", "INFO": "INFO", "VLOG": "DEBUG", "FATAL": "FATAL",
            "TORCH_WARN": "WARN", "PRINT": "ERROR", "CRITICAL": "FATAL"}.get(level, "ERROR")


def strip_prefix(fmt: str) -> str:
    changed = True
    while changed:
        changed = False
        for p in PREFIXES:
            if fmt.startswith(p):
                fmt = fmt[len(p):].lstrip(" ")
                changed = True
    return fmt


# ncclGetErrorString's texts as the rows below quote them: NCCL 2's results (without the `(run with NCCL_DEBUG=...
# for details)` tail that later releases append), NCCL 1.x's texts that NCCL 2 does not have, and the sentence
# the NCCL stub of XLA and TensorFlow answers with when no libnccl could be loaded
_NCCL_STRINGS = ("unhandled cuda error|unhandled system error|internal error|invalid argument|invalid usage|"
                 "remote process exited or there was a network error")
# NCCL 1.x's ncclGetErrorString texts that NCCL 2 has not (src/core.cu; NCCL 2 dropped these results)
_NCCL1_STRINGS = ("invalid data type|invalid reduction operations|system error|invalid device pointer|invalid rank|"
                  "unsupported device count|device not found|invalid device index|lib wrapper not initialized|"
                  "cuda malloc failed|parameter mismatch between ranks")
_NCCL_STUB = "Unable to load NCCL library. Multi-GPU collectives will not work."

# Formats the catalogs lack (reference notes, real runs, CUDA/driver texts), table syntax.
EXTRA = [
    # id, kind, level, where, file, format
    ("logdoc:cuda:oom", "cuda.oom", "ERROR", "line", "",
     "CUDA out of memory. Tried to allocate {size:line}. GPU {gpu:int} has a total capacity of {total_capacity} of which {free} is free.{rest:rest}"),
    ("logdoc:cuda:oom-old", "cuda.oom", "ERROR", "line", "",
     "CUDA out of memory. Tried to allocate {size} (GPU {gpu:int}; {total_capacity} total capacity; {allocated} already allocated; {free} free; {reserved} reserved in total by PyTorch){rest:rest}"),
    ("logdoc:cuda:oom-other", "cuda.oom", "ERROR", "line", "", "CUDA out of memory.{rest:rest}"),
    ("logdoc:cuda:error-oom", "cuda.oom", "ERROR", "line", "", "CUDA error: out of memory{rest:rest}"),
    # TensorFlow's OpKernelContext::allocate_tensor (tensorflow/core/framework/op_kernel.cc): errors::ResourceExhausted(
    # "OOM when allocating tensor with shape", shape.DebugString(), " and type ", ..., " on ", device->name(), " by allocator ",
    # a->Name()), after its status code (`Resource exhausted: `, `RESOURCE_EXHAUSTED: ` from 2.12) in an exception, a root-error
    # list or op_kernel.cc's `OP_REQUIRES failed at ...` log line; a GPU's device only (a CPU's allocator is host memory)
    ("logdoc:cuda:tf-oom", "cuda.oom", "ERROR", "line", "",
     "{head}OOM when allocating tensor with shape[{shape}] and type {dtype:word} on {job}/device:GPU:{gpu:int} by allocator "
     "{allocator:word}{rest:rest}"),
    # the same message before TensorFlow 1.5 (op_kernel.cc: ResourceExhausted("OOM when allocating tensor with shape",
    # shape.DebugString()), no device): the shape ends the line. `{|}` (an empty alternative) ends the format in a
    # placeholder, so no tail is accepted after the `]` and the newer CPU form (`... on .../device:CPU:0 by allocator
    # cpu`) is not read as this one
    ("logdoc:cuda:tf-oom-old", "cuda.oom", "ERROR", "line", "",
     "{head}OOM when allocating tensor with shape[{shape:word}]{|}"),
    ("logdoc:cuda:error", "cuda.error", "ERROR", "line", "", "CUDA error: {error:line}{rest:rest}"),
    # THC (PyTorch <= 1.x): THCudaCheck's `cuda runtime error (%d) : %s at %s:%d`
    ("logdoc:cuda:thc-oom", "cuda.oom", "ERROR", "line", "",
     "cuda runtime error (2) : out of memory{rest:rest}"),
    ("logdoc:cuda:thc-error", "cuda.error", "ERROR", "line", "",
     "cuda runtime error ({code:int}) : {error} at {source_location:word}{rest:rest}"),
    ("logdoc:cuda:driver-error", "cuda.error", "ERROR", "line", "", "CUDA driver error: {error:line}{rest:rest}"),
    ("logdoc:cuda:cudnn-error", "cuda.error", "ERROR", "line", "", "cuDNN error: {error:line}{rest:rest}"),
    ("logdoc:cuda:device-assert", "cuda.error", "ERROR", "line", "",
     "{source_location:word}: {function}: block: [{block}], thread: [{thread}] Assertion `{assertion}` failed."),
    ("logdoc:cuda:kernel-async", "cuda.error", "ERROR", "line", "",
     "CUDA kernel errors might be asynchronously reported at some other API call{rest:rest}"),
    # nccl-tests' CUDACHECK (src/common.h: `%s: Test CUDA failure %s:%d '%s'`, older releases without the
    # host) and the CUDACHECK of NCCL's documented examples (`Failed: Cuda error %s:%d '%s'`)
    ("logdoc:nccl-tests:cuda-failure", "cuda.error", "ERROR", "line", "",
     "Test CUDA failure {source_location:word} '{error}'{rest:rest}"),
    ("logdoc:nccl-tests:cuda-failure-host", "cuda.error", "ERROR", "line", "",
     "{host:word}: Test CUDA failure {source_location:word} '{error}'{rest:rest}"),
    ("logdoc:nccl-examples:cuda-error", "cuda.error", "ERROR", "line", "",
     "Failed: Cuda error {source_location:word} '{error}'{rest:rest}"),
    # rccl-tests' HIPCHECK (src/common.h: `%s: Test HIP failure %s:%d '%s'` with hipGetErrorString, older releases
    # without the host)
    ("logdoc:rccl-tests:hip-failure", "cuda.error", "ERROR", "line", "",
     "Test HIP failure {source_location:word} '{error}'{rest:rest}"),
    ("logdoc:rccl-tests:hip-failure-host", "cuda.error", "ERROR", "line", "",
     "{host:word}: Test HIP failure {source_location:word} '{error}'{rest:rest}"),
    # torch/utils/data/_utils/signal_handling.py prints this to stderr before the worker dies
    ("logdoc:dataloader:bus-error", "torch.exception", "ERROR", "line", "",
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).{rest:rest}"),
    ("logdoc:kernel:xid", "kernel.xid", "ERROR", "line", "", "NVRM: Xid (PCI:{pci:word}): {xid:int}, {detail:rest}"),
    ("logdoc:kernel:xid-short", "kernel.xid", "ERROR", "line", "", "NVRM: Xid (PCI:{pci:word}): {xid:int}{detail:rest}"),
    ("logdoc:spawn:process-exited-signal", "torchrun.worker_failed", "ERROR", "line", "",
     "process {process:int} terminated with signal {signal:word}"),
    ("logdoc:spawn:process-exited-code", "torchrun.worker_failed", "ERROR", "line", "",
     "process {process:int} terminated with exit code {exitcode:int}"),
    ("logdoc:spawn:process-raised", "torch.exception", "ERROR", "line", "",
     "-- Process {process:int} terminated with the following error:{rest:rest}"),
    # distributed_c10d._store_based_barrier of torch 1.8-1.13 (RuntimeError; the newer wording is the catalog's):
    # `... on rank: 1, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)`
    ("logdoc:distributed_c10d:store-barrier-old", "store.barrier_timeout", "ERROR", "body", "",
     "Timed out initializing process group in store based barrier on rank: {rank:int}, for key: {store_key} "
     "(world_size={world_size:int}, worker_count={joined:int}, timeout={timeout})"),
    # the same barrier's status line while it waits, every 10 s (logging.info / logger.info): 1.8-1.13 count
    # `worker_count=`, 2.0-2.1 `num_workers_joined=` (some builds append `error: <the wait's exception>` right
    # after the parenthesis), 2.2 and later log it at DEBUG with the seconds waited glued before `rank:`
    ("logdoc:distributed_c10d:store-barrier-wait-old", "store.barrier_wait", "INFO", "body", "",
     "Waiting in store based barrier to initialize process group for rank: {rank:int}, key: {store_key} "
     "(world_size={world_size:int}, worker_count={joined:int}, timeout={timeout})"),
    ("logdoc:distributed_c10d:store-barrier-wait", "store.barrier_wait", "INFO", "body", "",
     "Waiting in store based barrier to initialize process group for rank: {rank:int}, key: {store_key} "
     "(world_size={world_size:int}, num_workers_joined={joined:int}, timeout={timeout}){rest:rest}"),
    ("logdoc:distributed_c10d:store-barrier-wait-seconds", "store.barrier_wait", "DEBUG", "body", "",
     "Waiting in store based barrier to initialize process group for {seconds} secondsrank: {rank:int}, key: "
     "{store_key} (world_size={world_size:int}, num_workers_joined={joined:int}, timeout={timeout} error={error})"),
    ("logdoc:elastic:death-signal-old", "torchrun.signal", "WARN", "line", "",
     "Received Signals.{signal:word} death signal, shutting down workers"),
    ("logdoc:elastic:table-signal", "torchrun.child_failed", "ERROR", "line", "",
     "traceback : {Signal|signal} {signum:int} ({signal:word}) received by PID {pid:int}"),
    # a row of the table whose line breaks a paste lost (`rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: ...`)
    ("logdoc:elastic:table-row-glued", "torchrun.child_failed", "ERROR", "line", "",
     "{head}exitcode{ |}: {exitcode:int} (pid: {pid:int}){ |}error{_| }file{ |}: {rest:rest}"),
    ("logdoc:elastic:table-no-traceback", "torchrun.child_failed", "ERROR", "line", "",
     "traceback : To enable traceback see: {url:word}"),
    # the torchrun agent's start (torch/distributed/elastic/agent/server/api.py, local_elastic_agent.py):
    # its log directory is mkdtemp(prefix=f"{rdzv_run_id}_"), so the run id (--rdzv-id, default "none")
    # starts the directory's last component
    # Python's argparse rejecting the command line (Lib/argparse.py: error() prints the usage, then
    # `%(prog)s: error: %(message)s`): a launcher that passes an argument the script does not declare
    ("logdoc:argparse:unrecognized-arguments", "app.usage_error", "ERROR", "line", "",
     "{prog:word}: error: unrecognized arguments: {args:line}"),
    ("logdoc:argparse:arguments-required", "app.usage_error", "ERROR", "line", "",
     "{prog:word}: error: the following arguments are required: {args:line}"),
    ("logdoc:argparse:argument-invalid", "app.usage_error", "ERROR", "line", "",
     "{prog:word}: error: argument {argument}: {message:line}"),
    # an NCCL call's result in a framework's own check (Horovod's NCCL_CHECK: `<op> failed: ` +
    # ncclGetErrorString; the strings without their `(run with NCCL_DEBUG=... for details)` tail are
    # older releases' wording; `invalid data type` and `invalid reduction operations` are NCCL 1.x's texts of
    # ncclInvalidType and ncclInvalidOperation, which NCCL 2 does not have: an NCCL 1 library answered)
    # (the message itself, or after the `Type (...): ` of the exception that carries it)
    # (NCCL 1.x's text of ncclSystemError is `system error`: src/core.cu ncclGetErrorString)
    ("logdoc:nccl-call:failed", "torch.nccl_error", "ERROR", "line", "",
     "nccl{call:word} failed: {error_string=" + _NCCL_STRINGS + "|" + _NCCL1_STRINGS + "}{rest:rest}"),
    # glog's CHECK around an NCCL call (Caffe's NCCL_CHECK: CHECK_EQ(result, ncclSuccess) << " " <<
    # ncclGetErrorString(result)): `Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error`
    ("logdoc:nccl-call:glog-check", "torch.nccl_error", "ERROR", "line", "",
     "{head}Check failed: {expr:word} == ncclSuccess ({code:int} vs. 0) {error_string=" + _NCCL_STRINGS
     + "|" + _NCCL1_STRINGS + "}{rest:rest}"),
    # NCCL 1.x's MPI test (test/mpi/mpi_test.cu) and Caffe's MPI sync (mpi_nccl_sync.cpp) after ncclCommInitRank:
    # printf("NCCL Init failed (%d) '%s'\n", ret, ncclGetErrorString(ret))
    ("logdoc:nccl-call:init-failed-code", "torch.nccl_error", "ERROR", "line", "",
     "{head}NCCL Init failed ({code:int}) '{error_string=" + _NCCL_STRINGS + "|" + _NCCL1_STRINGS + "}{rest:rest}"),
    # the same CHECK without the text (PaddlePaddle 1.x's nccl_helper.h: CHECK_EQ(dynload::ncclGroupEnd(),
    # ncclSuccess)): `Check failed: dynload::ncclGroupEnd() == ncclSuccess (1 vs. 0) `, the result by its number
    ("logdoc:nccl-call:glog-check-code", "torch.nccl_error", "ERROR", "line", "",
     "{head}Check failed: {expr} == ncclSuccess ({code:int} vs. 0){rest:rest}"),
    # OneFlow's OF_NCCL_CHECK (oneflow/core/device/nccl_util.h): LOG(FATAL) << "Check failed: " #condition " : "
    # << ncclGetErrorString(status) << " (" << status << "). " << "To see more detail, please run OneFlow ..."
    ("logdoc:nccl-call:oneflow-check", "torch.nccl_error", "ERROR", "line", "",
     "{head}Check failed: {call} : {error_string=" + _NCCL_STRINGS + "|system error} ({code:int}).{rest:rest}"),
    ("logdoc:nccl-call:failed-quoted", "torch.nccl_error", "ERROR", "line", "",
     "{head}: nccl{call:word} failed: {error_string=" + _NCCL_STRINGS + "|" + _NCCL1_STRINGS + "}{rest:rest}"),
    # vLLM's NCCL wrapper (pynccl) raises `NCCL error: <ncclGetErrorString>`; a logger line quotes it after its own
    # words (`ncclCommInitRank failed with error: NCCL error: internal error - please report ...`)
    ("logdoc:nccl-call:error-quoted", "torch.nccl_error", "ERROR", "line", "",
     "{head} NCCL error: {error_string=" + _NCCL_STRINGS + "}{rest:rest}"),
    # the result by number and text, as many NCCL callers' checks print it: `"NCCL error %d: %s", r,
    # ncclGetErrorString(r)` (PETSc's PetscCallNCCL, IREE's nccl status, NCCL.jl's showerror, the CHECK macros of
    # programs and examples), also capitalised (`NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO ...)`)
    ("logdoc:nccl-call:error-code", "torch.nccl_error", "ERROR", "line", "",
     "{head}NCCL error {code:int}: {error_string=" + _NCCL_STRINGS + "}{rest:rest}"),
    ("logdoc:nccl-call:error-code-capital", "torch.nccl_error", "ERROR", "line", "",
     "{head}NCCL Error {code:int}: {error_string=" + _NCCL_STRINGS + "}{rest:rest}"),
    # TensorFlow's NCCL_RETURN_IF_ERROR (tensorflow/core/nccl/nccl_manager.cc): errors::Internal("NCCL: ",
    # ncclGetErrorString(status), ". Set NCCL_DEBUG=WARN for detail."), quoted in a status after its code
    # (`OP_REQUIRES failed at nccl_ops.cc:104 : Internal: NCCL: ...`, `StartAbort INTERNAL: NCCL: ...`)
    ("logdoc:nccl-call:status-quoted", "torch.nccl_error", "ERROR", "line", "",
     "{head}: NCCL: {error_string=" + _NCCL_STRINGS + "|" + _NCCL_STUB + "}{rest:rest}"),
    # TensorFlow's NcclManager (tensorflow/core/nccl/nccl_manager.cc): a collective whose NCCL kernel launch failed
    # is done with errors::Unknown("Error invoking NCCL: ", ncclGetErrorString(result)), printed after the status's
    # code (`Unknown: Error invoking NCCL: ...`, `UNKNOWN: ...` since TF 2.12's upper-case code names)
    ("logdoc:nccl-call:tf-invoking", "torch.nccl_error", "ERROR", "line", "",
     "{head}Error invoking NCCL: {error_string=" + _NCCL_STRINGS + "}{rest:rest}"),
    # TensorFlow before `NCCL: ` (TF <= 2.3): NCCL_RETURN_IF_ERROR and NcclErrorToStatus returned
    # errors::Internal(ncclGetErrorString(result)), the bare text after the status's code, then nothing or the
    # op's node that TensorFlow appends on lines of its own (`StartAbort Internal: unhandled system error`;
    # `(0) Internal:  internal error` / `\t [[node Adam/NcclAllReduce_8 (defined at ...) ]]` in a list of root errors)
    ("logdoc:nccl-call:tf-internal", "torch.nccl_error", "ERROR", "line", "",
     "{head}Internal: {error_string=" + _NCCL_STRINGS + "}{node=| [[{context:rest}}"),
    # XLA's ToStatus (xla/service/gpu/nccl_utils.cc, later nccl_api.cc / nccl_communicator.cc): "%s:%d: NCCL
    # operation %s failed: %s. Last NCCL warning(error) log entry (may be unrelated) '%s'.", in a log line
    # (`Execution of replica 0 failed: INTERNAL: ...`) as well as in the XlaRuntimeError that carries it. When
    # no libnccl could be loaded, the NCCL stub of XLA and TensorFlow (xla/tsl/cuda/nccl_stub.cc) answers every
    # call with ncclSystemError and ncclGetErrorString with its own sentence, which takes the result's place
    ("logdoc:nccl-call:xla-status", "torch.nccl_error", "ERROR", "line", "",
     "{head}NCCL operation {call} failed: {error_string=" + _NCCL_STRINGS + "|" + _NCCL_STUB + "}{last_warning:rest}"),
    ("logdoc:elastic:log-directory", "torchrun.info", "INFO", "body", "", "log directory set to: {path:word}"),
    ("logdoc:elastic:starting-workers", "torchrun.info", "INFO", "body", "",
     "[{role}] starting workers for entrypoint: {entrypoint:word}"),
    ("logdoc:elastic:rendezvousing", "torchrun.rendezvous", "INFO", "body", "", "[{role}] Rendezvous'ing worker group"),
    ("logdoc:elastic:starting-group", "torchrun.info", "INFO", "body", "", "[{role}] Starting worker group"),
    # the dynamic rendezvous's keep-alive (torch/distributed/elastic/rendezvous/dynamic_rendezvous.py, _keep_alive): an
    # agent whose heartbeat to the rendezvous store failed logs the error's type (RendezvousConnectionError, ...TimeoutError)
    ("logdoc:elastic:keep-alive-failed", "torchrun.rendezvous", "WARN", "body", "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py",
     "The node '{node}' has failed to send a keep-alive heartbeat to the rendezvous '{run_id}' due to an error of type "
     "{error_type:word}."),
    # torchelastic 0.1-0.2 (pytorch/elastic, "occured") and torch's etcd rendezvous ("occurred"): logged at INFO before it
    # raises RendezvousTimeoutException / RendezvousTimeoutError
    ("logdoc:elastic:etcd-timeout", "torchrun.rendezvous", "ERROR", "body", "",
     "Rendezvous timeout {occured|occurred} in EtcdRendezvousHandler"),
    ("logdoc:c10d:no-such-host", "store.resolve_failed", "WARN", "body", "",
     "The {family=IPv4 |IPv6 |}network addresses of ({host:word}, {port:int}) cannot be retrieved (gai error: {code:int} - {gai_strerror:line})."),
    ("logdoc:gloo:timed-out-connecting", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "timed out connecting: {error:rest}"),
    ("logdoc:gloo:connect-error", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "{error_kind=SO_ERROR|connect}: {errno_text:line}, remote={remote:word}"),
    # Gloo before 2018 (tcp/pair.cc Pair::handleConnecting): GLOO_ENFORCE_EQ(optval, 0, "SO_ERROR: ", strerror(optval)),
    # the same failed non-blocking connect as the row above, as an enforce without the peer's address
    ("logdoc:gloo:connect-so-error-enforce", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "optval == 0. {lhs:word} vs {rhs:word}. SO_ERROR: {errno_text:line}"),
    ("logdoc:gloo:pair-closure", "gloo.error", "ERROR", "line", "", "Application timeout caused pair closure"),
    ("logdoc:gloo:listen-in-use", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "listen: {errno_text:line}"),
    ("logdoc:gloo:read-error-old", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "Read error {peer:word}: {strerror:line}"),
    ("logdoc:gloo:closed-by-peer-old", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "Connection closed by peer {peer:word}"),
    ("logdoc:torch:exc-nccl-unhandled-system", "torch.nccl_error", "ERROR", "line", "",
     "NCCL communicator was aborted on rank {rank:int}. {reason:rest}"),
    # ProcessGroupNCCL's flatten_for_scatter_gather (allgather / reduce_scatter with tensors of different
    # sizes); older releases said `the same size`, newer `the same number of elements`
    ("logdoc:pg:scatter-gather-numel", "torch.message", "ERROR", "line", "",
     "{prefix}All tensor operands to scatter/gather must have the same {what=number of elements|size}{rest:rest}"),
    # ProcessGroupWrapper (torch 1.10-1.12): `Rank N is running inconsistent collective: <fingerprint>`;
    # and any release's report when the paste cut it inside the fingerprint
    ("logdoc:wrapper:mismatch-inconsistent", "torch.collective_mismatch", "ERROR", "body", "",
     "Detected mismatch between collectives on ranks. Rank {rank:int} is running inconsistent collective: {fingerprint:rest}"),
    ("logdoc:wrapper:mismatch-cut", "torch.collective_mismatch", "ERROR", "body", "",
     "Detected mismatch between collectives on ranks. Rank {rank:int} is running collective: {fingerprint:rest}"),
    # ProcessGroupGloo's loopback warning, cut or wrapped after its first sentence
    ("logdoc:gloo:loopback-fallback-cut", "torch.message", "WARN", "body", "",
     "Unable to resolve hostname to a (local) address.{rest:rest}"),
    # Gloo's pre-2019 connect error: `connect <peer>: <strerror>`
    ("logdoc:gloo:connect-old", "gloo.error", "ERROR", "gloo", "gloo/transport/tcp/pair.cc",
     "connect {peer:word}: {strerror:line}"),
    # ProcessGroupNCCL's unique-id exchange as torch 2.0-2.1 spelled it (`retreiving`), and either
    # spelling with the `[N] is ` head cut by a paste
    ("logdoc:pg:unique-id-get-failed", "store.nccl_unique_id", "ERROR", "body", "",
     "{head}setting up NCCL communicator and {retrieving|retreiving} ncclUniqueId from [0] via c10d key-value store "
     "by key '{key}', but store->get('{key_2}') got error: {exception:rest}"),
    # ProcessGroupNCCL's scalable init (allgatherUniqueNCCLIDs, torch 2.5+): the multiGet of the root ranks'
    # ids failed; with the `[N] is ` head taken as a rank prefix or cut by a paste, in the store's either name
    ("logdoc:pg:unique-ids-multiget-failed", "store.nccl_unique_id", "ERROR", "body", "",
     "{head}setting up NCCL communicators and {retrieving|retreiving} ncclUniqueId from roots via "
     "{store=TCPStore|c10d key-value store} by key '{keys_json}', but got error: {exception:rest}"),
    # c10d's store server when getnameinfo() cannot name a client that connected (socket.cpp, torch 2.x
    # `... err=<gai code>`, earlier releases `..., error code: <gai code>.`): a warning it logs and goes on after
    ("logdoc:c10d:client-hostname-not-retrieved", "torch.message", "WARN", "body", "torch/csrc/distributed/c10d/socket.cpp",
     "The hostname of the client socket cannot be retrieved{sep=. err=|, error code: }{code:int}{end:rest}"),
    # OpenSSH's getaddrinfo failure (launchers that reach nodes over ssh: DeepSpeed, pdsh, mpirun)
    ("logdoc:ssh:could-not-resolve", "net.resolve_failed", "ERROR", "line", "",
     "ssh: Could not resolve hostname {host:word}: {gai_strerror:line}"),
    # the lookup tools a paste shows beside the job's failure when a name does not resolve: iputils ping
    # (`ping: <name>: ` + gai_strerror(), `ping: unknown host <name>` before 2016), curl (CURLE_COULDNT_RESOLVE_HOST),
    # nslookup (BIND's `** server can't find <name>: NXDOMAIN`), host (`Host <name> not found: 3(NXDOMAIN)`),
    # OpenBSD netcat (`nc: getaddrinfo for host "<name>" port <port>: ` + gai_strerror())
    ("logdoc:ping:unknown-host", "net.resolve_failed", "ERROR", "line", "",
     "ping: {host:word}: {gai_strerror=Name or service not known|Temporary failure in name resolution|No address associated with hostname}"),
    ("logdoc:ping:unknown-host-old", "net.resolve_failed", "ERROR", "line", "",
     "ping: unknown host {host:word}"),
    ("logdoc:curl:could-not-resolve", "net.resolve_failed", "ERROR", "line", "",
     "curl: (6) Could not resolve host: {host:word}"),
    ("logdoc:nslookup:cannot-find", "net.resolve_failed", "ERROR", "line", "",
     "** server can't find {host:word}: {gai_strerror=NXDOMAIN|SERVFAIL}"),
    ("logdoc:host:not-found", "net.resolve_failed", "ERROR", "line", "",
     "Host {host:word} not found: {gai_strerror=3(NXDOMAIN)|2(SERVFAIL)}"),
    ("logdoc:nc:getaddrinfo", "net.resolve_failed", "ERROR", "line", "",
     "nc: getaddrinfo for host \"{host}\" port {port:int}: {gai_strerror:line}"),
    # the connection checks a paste shows beside the job's failure when nodes cannot reach each other: OpenBSD
    # netcat (`nc: connect to <host> port <port> (tcp) failed: ` + strerror(), `... timed out: ` on -w), nmap's ncat
    # (`Ncat: Connection refused.`), telnet (`telnet: Unable to connect to remote host: ` + strerror()), curl
    # (CURLE_COULDNT_CONNECT, with `after N ms` since 7.76), OpenSSH (`ssh: connect to host <host> port <port>: `
    # + strerror()) and iputils ping's ICMP reply (`From <gw> icmp_seq=N Destination Host Unreachable`)
    ("logdoc:nc:connect-failed", "net.connect_failed", "ERROR", "line", "",
     "nc: connect to {peer:word} port {port:int} ({proto:word}) {how=failed|timed out}: {strerror:line}"),
    ("logdoc:ncat:connect-failed", "net.connect_failed", "ERROR", "line", "",
     "Ncat: {strerror=Connection refused|No route to host|Connection timed out|TIMEOUT|Network is unreachable|Host is unreachable}."),
    ("logdoc:telnet:unable-to-connect", "net.connect_failed", "ERROR", "line", "",
     "telnet: Unable to connect to remote host: {strerror:line}"),
    ("logdoc:curl:failed-to-connect", "net.connect_failed", "ERROR", "line", "",
     "curl: (7) Failed to connect to {peer:word} port {port:int} after {ms:int} ms: {strerror:line}"),
    ("logdoc:curl:failed-to-connect-old", "net.connect_failed", "ERROR", "line", "",
     "curl: (7) Failed to connect to {peer:word} port {port:int}: {strerror:line}"),
    ("logdoc:ssh:connect-to-host", "net.connect_failed", "ERROR", "line", "",
     "ssh: connect to host {peer:word} port {port:int}: {strerror:line}"),
    # OpenSSH's client when the server closed or reset the TCP connection before its identification banner
    # (sshconnect.c ssh_exchange_identification(): `ssh_exchange_identification: Connection closed by remote host`,
    # `... read: Connection reset by peer`; kex.c kex_exchange_identification() from OpenSSH 8.0): sshd refused the
    # session (MaxStartups when a launcher opens many at once, TCP wrappers, a sshd that failed)
    ("logdoc:ssh:exchange-identification", "net.connect_failed", "ERROR", "line", "",
     "{how=ssh|kex}_exchange_identification: {strerror=Connection closed by remote host|read: Connection reset by peer}"),
    ("logdoc:ping:unreachable", "net.connect_failed", "ERROR", "line", "",
     "From {gateway:word} icmp_seq={seq:int} {strerror=Destination Host Unreachable|Destination Net Unreachable|Destination Port Unreachable}"),
    # MPICH's Hydra launcher (mpiexec and its proxies, src/pm/hydra): HYDU_sock_connect's lookup and connect
    # failures, and a proxy that cannot connect back to mpiexec (pmip.c), after the `[proxy:0:1@host] func
    # (file:line): ` head the envelope peels
    ("logdoc:hydra:no-host-address", "net.resolve_failed", "ERROR", "line", "",
     "unable to get host address for {host:word}{rest:rest}"),
    ("logdoc:hydra:unable-to-connect", "net.connect_failed", "ERROR", "line", "",
     "unable to connect from \"{local:word}\" to \"{peer:word}\" ({strerror:line})"),
    ("logdoc:hydra:connect-upstream", "net.connect_failed", "ERROR", "line", "",
     "unable to connect to server {peer:word} at port {port:int} (check for firewalls!)"),
    # Open MPI's TCP BTL (opal/mca/btl/tcp/help-mpi-btl-tcp.txt, [client connect fail]): a rank's connect() to a
    # peer rank failed; the help text's first line (its `Message: connect() to <addr>:<port> failed` and `Error:`
    # lines follow in the block). Releases before 4.0 say `... peer MPI process via TCP.`
    ("logdoc:ompi:btl-tcp-connect-fail", "net.connect_failed", "ERROR", "line", "",
     "WARNING: Open MPI failed to TCP connect to a peer MPI process{rest:rest}"),
    # the same block's `Message:` line, the address and port connect() was given (btl_tcp_endpoint.c:
    # asprintf(&msg, "connect() to %s:%d failed", ...), help-mpi-btl-tcp.txt's `  Message:    %s`)
    ("logdoc:ompi:btl-tcp-connect-message", "net.connect_failed", "ERROR", "line", "",
     "Message: connect() to {peer}:{port:int} failed"),
    # Open MPI's runtime (ORTE in 1.x-4.x, PRRTE from 5.0) on a daemon (orted / prted) it could not start or that never
    # reported back: help-errmgr-base.txt [failed-daemon-launch] (`ORTE was unable to ...`; PRRTE's `%s was unable to
    # ...` with PRTE, PRRTE or the tool's name) and [failed-daemon] (`An ORTE daemon ...`, PRRTE's `An PRTE daemon ...`),
    # and its OOB TCP transport's connect failure between mpirun and a daemon (oob_tcp_connection.c's opal_output: `A
    # process or daemon was unable to complete a TCP connection` / `to another process:` / `Local host:` / `Remote host:`)
    ("logdoc:ompi:daemon-launch-failed", "launcher.failed", "ERROR", "line", "",
     "{launcher:word} was unable to reliably start one or more daemons{rest:rest}"),
    ("logdoc:ompi:daemon-failed-after-launch", "launcher.failed", "ERROR", "line", "",
     "{article=An|A} {launcher:word} daemon has unexpectedly failed after launch{rest:rest}"),
    ("logdoc:ompi:oob-tcp-connect-fail", "net.connect_failed", "ERROR", "line", "",
     "A process or daemon was unable to complete a TCP connection{rest:rest}"),
    # Open MPI's runtime reading a message of another daemon (or of mpirun) whose layout is not the one it expects: the
    # error OPAL_ERR_UNPACK_READ_PAST_END_OF_BUFFER ("Data unpack would read past end of buffer", opal_err2str) as
    # ORTE_ERROR_LOG prints it (orte/mca/errmgr/base/errmgr_base_fns.c: "%s ORTE_ERROR_LOG: %s in file %s at line %d"),
    # as ORTE_FORCED_TERMINATE ends the daemon with it (errmgr.h: "%s FORCE-TERMINATE AT %s:%d - error %s(%d)"), and as
    # PMIx's PMIX_ERROR_LOG prints its own code for it (Open MPI 5 / PRRTE; PMIx before 2.0: UNPACK-PAST-END)
    ("logdoc:ompi:unpack-past-end", "launcher.protocol_error", "ERROR", "line", "",
     "{head}ORTE_ERROR_LOG: Data unpack would read past end of buffer in file {source:word} at line {source_line:int}"),
    ("logdoc:ompi:force-terminate-unpack", "launcher.protocol_error", "ERROR", "line", "",
     "{head}FORCE-TERMINATE AT Data unpack would read past end of buffer:{code:int} - error {source}({source_line:int})"),
    ("logdoc:ompi:pmix-unpack-past-end", "launcher.protocol_error", "ERROR", "line", "",
     "{head}PMIX ERROR: {code=PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER|UNPACK-PAST-END} in file {source:word} at line "
     "{source_line:int}"),
    # a node's shell that did not find Open MPI's daemon when mpirun started it over ssh (a non-interactive login's PATH
    # without Open MPI's bin directory): bash's `bash: orted: command not found` (`bash: line 1: ...` from bash 5.1 for
    # a command string), for orted (ORTE) and prted (PRRTE, Open MPI 5)
    ("logdoc:ompi:daemon-not-found", "launcher.not_found", "ERROR", "line", "",
     "{shell=bash|sh|zsh|ksh}: {|line {shell_line:int}: }{launcher=orted|prted}: command not found"),
    # Slurm's step daemon when execve() of a task's program failed (src/slurmd/slurmstepd/task.c exec_task: `error("execve():
    # %s: %m", task->argv[0])`, and `error("execve(): bad interpreter(%s): %m", ...)` for a script whose #! line names a
    # missing interpreter), logged as `slurmstepd: error: ...` into the task's stderr; the task exits with the errno
    ("logdoc:slurm:execve-bad-interpreter", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=slurmstepd|slurmd}: error: execve(): bad interpreter({interpreter}): {strerror:line}"),
    ("logdoc:slurm:execve-failed", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=slurmstepd|slurmd}: error: execve(): {program:word}: {strerror:line}"),
    # Slurm refusing a job step or an allocation, with slurm_strerror() of the controller's answer (src/srun: `error("Unable
    # to create step for job %u: %m", ...)`, before 20.02 `Unable to create job step: %m`; srun / salloc `Unable to
    # allocate resources: %m`; sbatch `Batch job submission failed: %m`): the reason is one of src/common/slurm_errno.c's
    # texts (`More processors requested than permitted`, `Requested node configuration is not available`, ...)
    ("logdoc:slurm:step-create-failed", "launcher.refused", "ERROR", "line", "",
     "{launcher=srun|salloc}: error: Unable to create step for job {job_id:int}: {reason:line}"),
    ("logdoc:slurm:step-create-failed-old", "launcher.refused", "ERROR", "line", "",
     "{launcher=srun}: error: Unable to create job step: {reason:line}"),
    ("logdoc:slurm:allocate-failed", "launcher.refused", "ERROR", "line", "",
     "{launcher=srun|salloc}: error: Unable to allocate resources: {reason:line}"),
    ("logdoc:slurm:submit-failed", "launcher.refused", "ERROR", "line", "",
     "{launcher=sbatch}: error: Batch job submission failed: {reason:line}"),
    # Open MPI's mapper when -np asks more processes than the slots it found (ORTE's help-orte-rmaps-base.txt
    # [orte-rmaps-base:alloc-error], PRRTE's the same words): the help text's first line, wrapped after the count or after
    # `slots` depending on the release, or not at all
    ("logdoc:ompi:not-enough-slots", "launcher.refused", "ERROR", "line", "",
     "There are not enough slots available in the system to satisfy the {slots:int}{rest:rest}"),
    # Open MPI's launcher when a node could not start the program it was given (ORTE / PRRTE help text, its first line):
    # not found (help-orte-odls-base.txt / PRRTE's [prte-odls-base:...]: `%s was unable to find the specified executable
    # file, and therefore did not launch the job.`, then `Node:` and `Executable:` lines) or found but not executable
    # (`%s was unable to launch the specified application as it could not access or execute an executable:`)
    ("logdoc:ompi:executable-not-found", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=mpirun|mpiexec|orterun|prterun|prte} was unable to find the specified executable file{rest:rest}"),
    ("logdoc:ompi:executable-not-accessible", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=mpirun|mpiexec|orterun|prterun|prte} was unable to launch the specified application as it could not access{rest:rest}"),
    # Slurm: a node's slurmd refused srun's launch request, or it never arrived (src/api/step_launch.c: `error("Task launch
    # for %ps failed on node %s: %m", ...)`, the step as `StepId=13.0`; before 20.11 `%u.%u`, `36.0`), then srun's summary
    # `Application launch failed: %m`; the reason is slurm_strerror()'s (`Invalid job credential`, `Job credential expired`,
    # `Communication connection failure`, ...)
    ("logdoc:slurm:task-launch-failed", "launcher.launch_failed", "ERROR", "line", "",
     "{launcher=srun}: error: Task launch for {step:word} failed on node {node:word}: {reason:line}"),
    ("logdoc:slurm:application-launch-failed", "launcher.launch_failed", "ERROR", "line", "",
     "{launcher=srun}: error: Application launch failed: {reason:line}"),
    # A shell that did not find the command it was to run: bash's `bash: torchrun: command not found` (`bash: line 1: ...`
    # from 5.1 for a command string), zsh's `zsh: command not found: torchrun`, dash's (Debian's and Ubuntu's /bin/sh)
    # `/bin/sh: 1: deepspeed: not found` (its argv[0], the line number, the command); and Python's own for a script it
    # cannot open (Modules/main.c: `%ls: can't open file %R: [Errno %d] %s`, before 3.8 `'%s'`)
    ("logdoc:shell:command-not-found", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=bash|sh|ksh}: {|line {shell_line:int}: }{program:word}: command not found"),
    # bash for a command given by a path (a `/`) that does not exist or cannot be executed: `bash: /env/bin/python: No such
    # file or directory` (no PATH search: the path is taken as given)
    ("logdoc:shell:no-such-file", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=bash|sh|ksh}: {|line {shell_line:int}: }{program:word}: {strerror=No such file or directory|Permission denied}"),
    ("logdoc:shell:zsh-command-not-found", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=zsh}: command not found: {program:word}"),
    ("logdoc:shell:dash-not-found", "launcher.exec_failed", "ERROR", "line", "",
     "{launcher=sh|/bin/sh|/usr/bin/sh|dash|/bin/dash}: {shell_line:int}: {program:word}: not found"),
    ("logdoc:python:cannot-open-file", "launcher.exec_failed", "ERROR", "line", "",
     "{interpreter:word}: can't open file '{program}': [Errno {errno:int}] {strerror:line}"),
    # pdsh's ssh module when the ssh to a node ended with a non-zero status (src/modules/sshcmd.c: `err("%p: %s: ssh exited
    # with exit code %d\n", ...)`, %p being `pdsh@<local host>`): 255 is ssh's own failure, other values the remote command's
    ("logdoc:pdsh:ssh-exit", "launcher.remote_exit", "ERROR", "line", "",
     "{launcher=pdsh|pdcp}@{local:word}: {node:word}: ssh exited with exit code {exitcode:int}"),
    # mpiexec's ui_cmd_cb (src/pm/hydra/mpiexec/pmiserv_pmci.c): a proxy it launched (ssh, rsh, ...) exited
    # before it connected back to mpiexec's control port
    ("logdoc:hydra:launch-proxy-failed", "launcher.failed", "ERROR", "line", "",
     "Launch proxy failed{rest:rest}"),
    # The distributed package's advice and deprecation warnings that carry no failure, read so that a paste of them
    # is explained, not listed as not understood: c10d's getCvar* for an old variable name (Utils.hpp, torch >= 2.2),
    # ProcessGroupNCCL's constructor on TORCH_NCCL_AVOID_RECORD_STREAMS (its `0` is TORCH_WARN_ONCE's stray flag in
    # 2.1-2.3) and its destructor before destroy_process_group (2.4-2.6: `we destruct` / `we destructProcessGroupNCCL`;
    # 2.7 and later is the catalog's `destroy_process_group() was not called`), barrier()'s guessed device in the wording
    # of 2.6 and later (the catalog has the earlier one), and distributed_c10d.py's and torch/cuda/nccl.py's
    # warnings.warn (after Python's `file.py:N: UserWarning: ` head)
    ("logdoc:c10d:env-deprecated", "torch.message", "WARN", "body", "torch/csrc/distributed/c10d/Utils.hpp",
     "Environment variable {old:word} is deprecated; use {new:word} instead"),
    ("logdoc:pg:avoid-record-streams-p2p", "torch.pg_info", "WARN", "body", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
     "{variable=0TORCH_NCCL_AVOID_RECORD_STREAMS|TORCH_NCCL_AVOID_RECORD_STREAMS|0NCCL_AVOID_RECORD_STREAMS|NCCL_AVOID_RECORD_STREAMS}"
     "=1 has no effect for point-to-point collectives."),
    ("logdoc:pg:avoid-record-streams-default", "torch.pg_info", "WARN", "body", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
     "TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this environment variable is thus deprecated."),
    ("logdoc:pg:not-destroyed-before-destruct", "torch.pg_info", "WARN", "body", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
     "WARNING: process group has NOT been destroyed before {when=we destruct ProcessGroupNCCL|we destructProcessGroupNCCL|it is being destructed}."
     "{rest:rest}"),
    ("logdoc:pg:device-currently-unknown", "torch.message", "WARN", "body", "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
     "using GPU {device_index:int} as device used by this process is currently unknown.{rest:rest}"),
    ("logdoc:c10d:no-device-id", "torch.message", "WARN", "line", "torch/distributed/distributed_c10d.py",
     "No device id is provided via `init_process_group` or `barrier `. Using the current device set by the user."),
    ("logdoc:cuda:not-compiled-with-nccl", "torch.message", "WARN", "line", "torch/cuda/nccl.py",
     "PyTorch is not compiled with NCCL support"),
    # TCPStore's client (torch/csrc/distributed/c10d/TCPStore.cpp, TCPClient: sendRaw, receiveBits, receiveValue,
    # receiveValueWithTimeout) logs the failed call on its socket before it rethrows: C10D_WARNING("recvValue failed on
    # {}: {}", socket_.repr(), e.what()), e.what() the store's `Failed to recv, got 0 bytes. ...` (Utils.hpp; `failed to
    # recv, got 0 bytes` in 2.6-2.7) or the errno text (`Connection reset by peer`)
    ("logdoc:tcpstore:client-call-failed", "store.recv_closed", "WARN", "body", "torch/csrc/distributed/c10d/TCPStore.cpp",
     "{call=sendBytes|recvVector|recvValue|recvValueWithTimeout} failed on SocketImpl(fd={fd:int}, addr={local_addr}, "
     "remote={remote_addr}): {error:rest}"),
    # torch.distributed.rpc's TensorPipe agent (torch/csrc/distributed/rpc/tensorpipe_agent.cpp) logs a failed pipe
    # operation before it fails the pending futures: LOG(WARNING) << "RPC agent for " << name << " encountered error
    # when " << "sending outgoing request #<id> to <peer>" / "reading incoming response from <peer>" / "reading incoming
    # request from <peer>" / "sending outgoing response to <peer>" / "accepting incoming pipe" << ": " << error.what()
    # (tensorpipe's text: `async error on socket: Connection reset by peer (this error originated at ...)`, `pipe closed`)
    ("logdoc:rpc:tensorpipe-agent-error", "torch.rpc_error", "WARN", "body", "torch/csrc/distributed/rpc/tensorpipe_agent.cpp",
     "RPC agent for {worker} encountered error when {action}: {error:rest}"),
    # c10d's client connect (torch/csrc/distributed/c10d/socket.cpp, SocketConnectOp::tryConnect): the connect to one
    # address ended in ETIMEDOUT (no answer at all, not a refusal) and it tries again until its own timeout
    ("logdoc:c10d:server-socket-timed-out", "store.connect_retry", "WARN", "body", "torch/csrc/distributed/c10d/socket.cpp",
     "The server socket on {addr:word} has timed out, will retry."),
    # ProcessGroupNCCL's watchdog (torch 2.4-2.6) when a work item holds an exception or timed out, before it says which
    # (`Timeout at NCCL work: ...` or the exception); 2.7 and later say `failure detected by watchdog at work sequence id`
    ("logdoc:pg:exception-detected-by-watchdog", "torch.watchdog_failure", "ERROR", "body",
     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp",
     "Exception (either an error or timeout) detected by watchdog at work: {seq:int}, last enqueued NCCL work: "
     "{last_enqueued:int}, last completed NCCL work: {last_completed:int}."),
    # a Rust program's panic on an OS error (routers and servers written in Rust)
    ("logdoc:rust:unwrap-os-error", "torch.exception", "ERROR", "line", "",
     "called `Result::unwrap()` on an `Err` value: {exc_message:rest}"),
]


def main(out: Path | None = None) -> int:
    rows: list[tuple[str, str, str, str, str, str]] = []
    seen_formats: set[tuple[str, str]] = set()
    ids: set[str] = set()

    def add(row_id: str, kind: str, level: str, where: str, file: str, fmt: str) -> None:
        if len(re.sub(r"\{[^{}]*\}|\s", "", fmt)) < 3:
            return                                   # nothing literal to recognise it by
        key = (where, file, row_id if where == "gloo" else "", fmt)
        if key in seen_formats:
            return
        seen_formats.add(key)
        base, n = row_id, 1
        while row_id in ids:
            n += 1
            row_id = f"{base}-{n}"
        ids.add(row_id)
        rows.append((row_id, kind, level, where, file, fmt))

    with open(HERE / "torch-messages.tsv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            comp, level, fmt = r["component"], r["level"], r["format"]
            kind = torch_kind(comp, level, fmt)
            if kind is None:
                continue
            body = strip_prefix(fmt).replace("\\n", "\n").replace("\\t", "\t")
            if body.startswith("{fragments:"):
                continue
            body = convert_placeholders(body, gloo=False)
            if not re.sub(r"\{[^{}]*\}", "", body).strip():
                continue
            add(f"torch:{comp}:{slug(body)}", kind, default_level(level), "body", "", body)

    with open(HERE / "gloo-messages.tsv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            file, line, fmt = r["file"], r["line"], r["format"]
            m = re.match(r"\[(?:enforce fail at )?\{srcdir\}[^\]]*\] ?", fmt)
            where = "gloo" if m else "line"
            body = fmt[m.end():] if m else fmt
            body = convert_placeholders(body.replace("\\n", "\n"), gloo=True)
            if not re.sub(r"\{[^{}]*\}", "", body).strip(" .:"):
                body = body  # enforce with an empty message: still matched through its condition
            kind = "gloo.debug" if ("debug_logger" in file or "] INFO " in fmt) else "gloo.error"
            if body.startswith("INFO "):
                body = body[5:]
            if body.startswith("ERROR "):
                body = body[6:]
            short = file[len("gloo/"):] if file.startswith("gloo/") else file
            add(f"gloo:{short}:{line}", kind, "INFO" if kind == "gloo.debug" and "INFO" in fmt else "ERROR",
                where, file, body)

    for row in EXTRA:
        add(*row)

    out = out or ROOT / "grammars" / "torch_templates.tsv"
    with open(out, "w", encoding="utf-8", newline="") as fh:
        fh.write("# generated by python tools/make_catalog torch from tests/data/torch/torch-messages.tsv and gloo-messages.tsv\n")
        fh.write("id\tkind\tlevel\twhere\tfile\tformat\n")
        for row in rows:
            fmt = row[5].replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            fh.write("\t".join(row[:5] + (fmt,)) + "\n")
    print(f"wrote {len(rows)} templates to {out}", file=sys.stderr)
    return 0
