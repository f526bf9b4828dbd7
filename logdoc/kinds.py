"""The one registry of event kinds and the fields each carries.

Every event logdoc emits has a ``kind`` registered here, with the fields it may carry. The parser
(NCCL and PyTorch/Gloo classifiers), the analysis (``analysis.*`` synthetic events), the digest and
the knowledge base's lint all read it; ``tests/test_kinds.py`` checks that every kind emitted on the
samples and on every rendered catalog line is registered with the fields it carries, and that every
kind named anywhere in the code or the rules is registered.

A kind marked ``catalog`` also carries the placeholders of its message templates in
``grammars/torch_templates.tsv`` (the ``{name}`` parts of each format), which :func:`fields` adds.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .lazyre import lazy_re

__all__ = ["KindSpec", "KINDS", "fields", "is_registered", "names", "EXCEPTION_FIELDS", "ORIGIN_FIELDS"]


@dataclass(frozen=True)
class KindSpec:
    fields: frozenset[str]
    producer: str          # the module that emits it
    summary: str
    catalog: bool = False  # also carries its catalog templates' placeholders


# Field groups shared by several kinds.
NCCL_FIELDS = ("dev", "tid", "message", "args", "format", "prefix", "catalog_location", "function", "net_name")
PG_FIELDS = ("pg_id", "pg_guid", "pg_desc", "pg_rank", "pg_prefix")
# a Python traceback or C++ exception that carries the message
EXCEPTION_FIELDS = ("exc_type", "exc_message", "frames", "last_frame", "traceback", "chain", "cause")
# every analysis.* event (logdoc/analysis/common.synthetic)
ORIGIN_FIELDS = ("evidence", "evidence_count", "origin_ranks", "origin_hosts")
GLOO_FIELDS = ("code_location", "message", "peer", "peer_addr", "peer_port_printed", "peer_port", "peer_seq",
               "errno_text", "errno_name", "strerror", "error", "condition", "enforce", "lhs", "rhs", "srcdir",
               "iface", "timeout_ms")
_NESTED = ("nested_in", "nested_kind", "nested_line", "inner_kind", "inner_template")

_NESTED_SET = frozenset(_NESTED)
_CUT = frozenset(("cut",))
# a message glued after a progress bar (logdoc/classify/torch) carries the bar's fields with this prefix
_BAR_SET = frozenset("bar_" + f for f in ("desc", "percent", "done", "total", "elapsed_s", "remaining_s"))

_N, _T, _A = "logdoc/nccl.py", "logdoc/classify/torch", "logdoc/analysis"


def _k(fields, producer, summary, catalog=False) -> KindSpec:
    return KindSpec(frozenset(fields), producer, summary, catalog)


KINDS: dict[str, KindSpec] = {
    # --- NCCL (host:pid:tid [dev] NCCL ... lines)
    "nccl.version": _k(NCCL_FIELDS + ("version", "cuda", "suffix", "source") + _NESTED, _N,
                       "the NCCL version banner, the version a PyTorch error quotes, or a release a paste states "
                       "elsewhere (`source`: collect_env's pip/conda packages, vLLM, torch.cuda.nccl.version())"),
    "nccl.warn": _k(NCCL_FIELDS + ("code_location", "header", "cut", "abridged") + _NESTED, _N, "an NCCL WARN line"),
    "nccl.trace": _k(NCCL_FIELDS + ("code_location", "code", "code_name", "errno_text", "thread"), _N,
                     "an error back-trace line `file:line -> N`"),
    "nccl.comm_init": _k(NCCL_FIELDS + ("comm", "rank", "nranks", "cuda_dev", "nvml_dev", "bus_id", "comm_id",
                                        "phase", "func", "parent", "color", "key", "child_count", "split_count",
                                        "rank_tag"), _N,
                         "communicator init start/complete"),
    "nccl.comm_info": _k(NCCL_FIELDS + ("comm", "rank", "nranks", "nnodes", "local_ranks", "local_rank", "mnnvl",
                                          "cuda_dev", "func"),
                         _N, "communicator summary after init"),
    "nccl.net_socket": _k(NCCL_FIELDS + ("interfaces",), _N, "NET/Socket interfaces in use"),
    "nccl.net_ib": _k(NCCL_FIELDS + ("devices", "oob_if", "oob_addr", "relaxed_ordering"), _N,
                      "NET/IB devices in use"),
    "nccl.bootstrap": _k(NCCL_FIELDS + ("name", "addr"), _N, "the bootstrap interface"),
    "nccl.using_network": _k(NCCL_FIELDS + ("network",), _N, "the network plugin in use"),
    "nccl.env": _k(NCCL_FIELDS + ("name", "value", "from_environment", "source"), _N,
                  "an NCCL_* setting (NCCL's own line, or a shell's printout: logdoc/classify/envinfo.py)"),
    "nccl.channel": _k(NCCL_FIELDS + ("channel", "nchannels", "ranks", "truncated"), _N, "ring/tree channel layout"),
    "nccl.connection": _k(NCCL_FIELDS + ("channel", "src_rank", "src_dev", "dst_rank", "dst_dev", "transport", "net",
                                         "gdr", "conn_index", "direction", "header"), _N, "a channel connection and its transport"),
    "nccl.connected_all_rings": _k(NCCL_FIELDS + ("pxn", "gdr", "what"), _N, "Connected all rings/trees"),
    "nccl.connected_all": _k(NCCL_FIELDS + ("what",), _N, "Connected all <something> (newer releases)"),
    "nccl.info": _k(NCCL_FIELDS + ("header",), _N, "another NCCL INFO line of the catalog"),
    # --- nccl-tests' own lines (logdoc/classify/nccltests.py classify_tests)
    "nccltests.nccl_failure": _k(("source_location", "error", "last_error", "host", "nccl_result"), _N,
                                 "an nccl-tests NCCLCHECK failure (`Test NCCL failure file:line 'error'`)"),
    "verbs.error": _k(("call", "errno_text", "device", "library", "call_args"), _N,
                      "a failed ibverbs call printed by an RDMA library other than NCCL (UCX ...)"),
    "verbs.cqe_error": _k(("provider", "nic_host"), _N,
                          "an RDMA provider's dump of an error completion (rdma-core mlx5: `got completion with error:`)"),
    "verbs.no_provider": _k(("sysfs_path", "library"), _N,
                            "libibverbs found a verbs device without its user-space provider library"),
    "ucx.error": _k(("message", "code_location", "ucx_host", "ucx_pid"), _N, "an error line of UCX (`UCX ERROR ...`)"),
    "os.error": _k(("errno_text", "errno_name", "errno", "context"), _N,
                   "a program's own error line ending in an errno text (`... Too many open files (os error 24)`)"),
    "process.signal": _k(("signal", "signal_name", "reason", "printer", "signal_host", "signal_pid", "command", "library"), _N,
                         "a report of the signal that kills the process (UCX `Caught signal N (...)`, a shell's"
                         " `Segmentation fault (core dumped)`, faulthandler, Abseil, glog, Open MPI `Signal: Bus error (7)`,"
                         " the kernel's `segfault at ... in <library>`)"),
    "process.native_frame": _k(("library", "symbol", "frame_format", "component"), _N,
                               "a frame of a native backtrace (UCX, gdb, Abseil, glog, backtrace_symbols) that lies in NCCL"
                               " or in Gloo (`component`: nccl, gloo)"),
    "nccltests.device": _k(("test_rank", "group", "test_pid", "test_host", "device", "bus", "gpu"), _N,
                           "a line of nccl-tests' device list (one per rank of the run)"),
    "stack.collective": _k(("function", "frame_file", "frame_line", "format"), _N,
                           "a sampled stack's frame in a torch.distributed collective (py-spy dump)"),
    "nccltests.table": _k((), _N, "nccl-tests' result table header, printed before its first row"),
    "nccltests.row": _k(("size", "count", "dtype", "redop", "wrong"), _N,
                        "a row of nccl-tests' result table (size, type, whether its check found wrong values)"),
    "ray.store_shm": _k(("dir", "requested", "available", "cut"), _N,
                        "Ray's object store asked for more than /dev/shm holds (raylet store_runner)"),
    "proxy.envoy": _k(("proxy", "proxy_level", "logger", "port"), _N,
                      "a line of an Envoy proxy's own log (an Istio sidecar in the pod)"),
    "nccltests.check": _k(("wrong", "verdict"), _N, "nccl-tests' data check (`Out of bounds values : N FAILED`)"),
    "nccltests.bandwidth": _k(("busbw", "verdict"), _N, "nccl-tests' `Avg bus bandwidth` line"),
    "nccltests.version": _k(("tests_version", "headers", "library", "same_release"), _N,
                            "the nccl-tests build line (NCCL headers and library versions)"),
    "nccl.call": _k(NCCL_FIELDS, _N, "a collective launch / CALL line"),
    "nccl.trace_level": _k(NCCL_FIELDS, _N, "an NCCL TRACE-level line"),
    "nccl.progress": _k(("dev", "tid", "comm", "nranks", "via", "launch_kind", "count", "first_line", "last_line", "first_time",
                         "last_time", "ops", "start", "tail"), "logdoc/digest.py",
                        "a communicator's collective launches in one process, folded (count, first and last opCount "
                        "per collective, the last launches as rows)"),
    # --- PyTorch ProcessGroupNCCL, c10d, TCPStore, torchrun, Gloo, CUDA (logdoc/classify/torch)
    "torch.watchdog_timeout": _k(PG_FIELDS + EXCEPTION_FIELDS + ("cut", "seq", "op_type", "numel_in", "numel_out",
                                                                 "timeout_ms", "elapsed_ms", "blocking_wait"), _T,
                                 "a collective ran past its timeout", True),
    "torch.async_exception": _k(PG_FIELDS + EXCEPTION_FIELDS + ("seq", "op_type", "numel_in", "numel_out", "timeout_ms",
                                                                "exception", "error_string", "last_error",
                                                                "nccl_result", "nccl_version"), _T,
                                "the watchdog saw an asynchronous error and aborts", True),
    "torch.watchdog_failure": _k(PG_FIELDS + EXCEPTION_FIELDS + _NESTED + ("seq", "last_enqueued", "last_completed", "exception",
                                                                 "error_string", "last_error", "nccl_result",
                                                                 "nccl_version", "thread_died", "timed_out"), _T,
                                 "the watchdog thread failed or tore the process down", True),
    "torch.work_progress": _k(PG_FIELDS + ("last_enqueued", "last_completed"), _T, "last enqueued/completed work", True),
    "torch.heartbeat": _k(PG_FIELDS, _T, "the heartbeat monitor fired", True),
    "torch.flight_recorder": _k(PG_FIELDS + EXCEPTION_FIELDS + ("last_completed", "last_enqueued", "source", "src_rank"),
                                _T, "flight-recorder dump messages", True),
    "torch.desync_report": _k(PG_FIELDS + EXCEPTION_FIELDS + ("desync_report", "rank"), _T,
                              "TORCH_NCCL_DESYNC_DEBUG report", True),
    "torch.pg_info": _k(PG_FIELDS + ("debug", "timeout_ms", "async_error_handling", "blocking_wait", "desync_debug",
                                      "high_priority_stream"), _T, "process-group init/config info", True),
    "torch.nccl_error": _k(PG_FIELDS + EXCEPTION_FIELDS + ("source_location", "error_string", "nccl_result",
                                                           "nccl_version", "last_error", "interpretation", "timeout", "call", "last_warning",
                                                           "node") + _NESTED,
                           _T, "NCCL error in: ... (ncclResult text)", True),
    "torch.collective_mismatch": _k(PG_FIELDS + EXCEPTION_FIELDS + (
        "rank", "other_rank", "seq", "op_type", "shape", "dtype", "other_seq", "other_op_type", "other_shape",
        "other_dtype", "device", "other_device", "devices", "other_devices", "differs", "diffs"), _T,
        "TORCH_DISTRIBUTED_DEBUG=DETAIL mismatch report", True),
    "torch.monitored_barrier": _k(PG_FIELDS + EXCEPTION_FIELDS + _NESTED + ("failed_ranks", "timeout_ms", "original_exception",
                                                                  "rank"), _T, "monitored_barrier failure", True),
    "torch.exception": _k(EXCEPTION_FIELDS + ("spawn_process", "cut", "dist_call", "dist_where", "bare") + _NESTED, _T, "a Python traceback / exception line",
                          True),
    "torch.terminate": _k(("cxx_type", "what", "cause", "cxx_frames") + _NESTED, _T,
                          "terminate called after throwing ...", True),
    "torch.teardown": _k(PG_FIELDS + ("reason",), _T, "process-group shutdown/abort messages", True),
    "torch.cxx_backtrace": _k(PG_FIELDS + _NESTED + ("message", "function", "source_path", "line", "n", "symbol", "offset", "address",
                               "library"), _T, "Exception raised from ... with C++ frames", True),
    "torch.message": _k(PG_FIELDS + EXCEPTION_FIELDS + _NESTED + ("variable",), _T, "another catalog message of ProcessGroupNCCL/c10d", True),
    "store.client_timeout": _k(EXCEPTION_FIELDS + ("timeout_ms", "host", "port", "error", "n"), _T,
                               "TCPStore client connect timed out", True),
    "store.connect_retry": _k(("host", "port", "timeout_ms", "delay_ms", "error", "n"), _T,
                              "TCPStore client retries connecting", True),
    "store.connect_failed": _k(EXCEPTION_FIELDS, _T, "TCPStore client could not connect", True),
    "store.clients_joined": _k(EXCEPTION_FIELDS + ("joined", "world_size", "seconds"), _T,
                               "TCPStore server waited for clients", True),
    "store.wait_timeout": _k(EXCEPTION_FIELDS + ("timeout_ms", "keys", "fd", "local_addr", "remote_addr"), _T,
                             "store get/wait timed out", True),
    "store.recv_closed": _k(EXCEPTION_FIELDS, _T, "the store connection was closed", True),
    "torch.rpc_error": _k(EXCEPTION_FIELDS, _T, "torch.distributed.rpc's TensorPipe agent failed on a pipe to a peer", True),
    "store.listen_failed": _k(EXCEPTION_FIELDS + ("port", "errno_name", "use_ipv6", "uv_code", "uv_message",
                                                  "uv_name"), _T, "the store server could not listen", True),
    "store.resolve_failed": _k(EXCEPTION_FIELDS + ("host", "port", "family"), _T, "the store host did not resolve", True),
    "store.barrier_timeout": _k(EXCEPTION_FIELDS + ("key", "world_size", "num_workers_joined", "timeout", "excess"), _T,
                                "a store-based barrier timed out", True),
    "store.barrier_wait": _k(("rank", "store_key", "world_size", "joined", "timeout", "seconds", "error", "rest", "excess"), _T,
                             "a rank still waiting in the store-based barrier, with the count of ranks that reached it"),
    "store.nccl_unique_id": _k(EXCEPTION_FIELDS + ("exception", "key", "key_2", "rank"), _T,
                               "the NCCL unique id could not be exchanged through the store", True),
    "store.server_error": _k(EXCEPTION_FIELDS, _T, "the store server reported an error", True),
    "store.info": _k((), _T, "store information", True),
    "app.lightning": _k(("global_rank", "world_size", "pl_local_rank", "visible_devices", "device_count", "signal", "signum"), _T,
                        "PyTorch Lightning's start-up lines: a process's rank and world size, its visible GPUs; the SIGTERM "
                        "its signal connector received"),
    "app.usage_error": _k(("prog", "args", "argument", "message"), _T,
                          "the program's argument parser rejected its command line (argparse's `prog: error: ...`)", True),
    "app.progress": _k(("desc", "percent", "done", "total", "elapsed_s", "remaining_s"), _T,
                       "a tqdm progress bar of the program's own work (how far, how long)"),
    "net.resolve_failed": _k(("host", "gai_strerror", "tool", "rest"), _T,
                             "a host name did not resolve (ssh's getaddrinfo failure, MPICH Hydra's lookup)", True),
    "net.connect_failed": _k(("peer", "port", "local", "strerror", "proto", "how", "ms", "gateway", "seq"), _T,
                             "a launcher could not connect to a node (MPICH Hydra: a proxy to mpiexec or a host), or a connection "
                             "check a paste shows failed (nc, ncat, telnet, curl, ssh, ping)", True),
    "framework.coordination_error": _k(("framework", "status", "error", "task", "stopped", "timeout"), "logdoc/classify/frameworks.py",
                                       "a coordination agent's gRPC failure (JAX / XLA / TensorFlow: UNAVAILABLE, DEADLINE_EXCEEDED ...), "
                                       "or the coordination service saying why it stopped"),
    "framework.grpc_status": _k(("status", "error"), "logdoc/classify/frameworks.py",
                                "a gRPC status alone on its line in gRPC core's own words (`DEADLINE_EXCEEDED: Deadline "
                                "Exceeded`, `UNAVAILABLE: Socket closed`): a call that failed, no service named"),
    "framework.coordination_rpc": _k(("framework", "rpc"), "logdoc/classify/frameworks.py",
                                     "the coordination service's call a gRPC status came back from (`RPC: "
                                     "/tensorflow.CoordinationService/RegisterTask`)"),
    "framework.collective_abort": _k(("framework", "status", "error"), "logdoc/classify/frameworks.py",
                                     "a framework aborted every collective of this process after one failed (TensorFlow's "
                                     "`BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: ...`)"),
    "framework.grpc_remote": _k(("framework", "task"), "logdoc/classify/frameworks.py",
                                "the remote task a gRPC status came from (TensorFlow's `Additional GRPC error information from "
                                "remote target /job:worker/replica:0/task:0:`)"),
    "framework.peer_lost": _k(("framework", "task", "launcher", "aborted_rank", "errorcode", "nonzero_exit", "tool", "count",
                               "exited_rank", "mpi_job", "pid", "exitcode", "signal"), "logdoc/classify/frameworks.py",
                              "another framework or launcher says a process of the job is gone (JAX's coordination "
                              "service: another task died; Open MPI: lost communication with a remote daemon, a process"
                              " exited with a non-zero status; vLLM's executor: a worker process died; TensorFlow's health check: a"
                              " worker is down)"),
    "framework.stalled": _k(("framework", "seconds", "missing_ranks", "shutdown_ranks"), "logdoc/classify/frameworks.py",
                            "a framework's process waited an interval for its peers (vLLM's shared-memory message queue: no "
                            "broadcast block free or written in 60 s; Horovod's stall inspector: a tensor only some ranks submitted)"),
    "framework.check": _k(("framework", "check", "value", "required"), "logdoc/classify/frameworks.py",
                          "a framework's start-up check of the machine that failed (vLLM: no GPU peer-to-peer access; "
                          "Accelerate: a Linux kernel older than it recommends)"),
    "launcher.protocol_error": _k(("head", "source", "source_line", "code"), _T,
                                  "a launcher's runtime could not read a message of another of its daemons (Open MPI's "
                                  "`ORTE_ERROR_LOG: Data unpack would read past end of buffer in file grpcomm_direct.c ...`)", True),
    "launcher.not_found": _k(("launcher", "shell", "shell_line"), _T,
                             "a node's shell did not find a launcher's daemon it was asked to start (Open MPI over ssh: "
                             "`bash: orted: command not found`)", True),
    "launcher.exec_failed": _k(("launcher", "program", "interpreter", "strerror", "shell_line", "errno"), _T,
                               "a launcher's daemon, a shell or an interpreter could not execute or open a job's program "
                               "(Slurm's `slurmstepd: error: execve(): python: No such file or directory`, `bash: torchrun: "
                               "command not found`, `python: can't open file 'train.py': [Errno 2] ...`)", True),
    "launcher.refused": _k(("launcher", "job_id", "reason", "slots"), _T,
                           "a scheduler refused a job's allocation or step (Slurm's `srun: error: Unable to create step for "
                           "job 4359715: More processors requested than permitted`)", True),
    "launcher.launch_failed": _k(("launcher", "step", "node", "reason"), _T,
                                 "a node's daemon refused or never received a launcher's request to start a step's tasks "
                                 "(Slurm's `srun: error: Task launch for StepId=13.0 failed on node n1: Invalid job credential`)",
                                 True),
    "launcher.remote_exit": _k(("launcher", "local", "node", "exitcode"), _T,
                               "a launcher's remote shell to a node exited with a non-zero status (pdsh's `pdsh@n0: n1: ssh "
                               "exited with exit code 255`)", True),
    "launcher.failed": _k(("launcher", "article"), _T, "a launcher could not start a job's processes on a node "
                          "(MPICH Hydra: a proxy exited before it connected back to mpiexec; Open MPI: `launcher` "
                          "ORTE / PRTE could not start its daemons)", True),
    "torchrun.child_failed": _k(EXCEPTION_FIELDS + ("script", "failures", "root_cause"), _T,
                                "ChildFailedError summary table", True),
    "torchrun.worker_failed": _k(EXCEPTION_FIELDS + ("exitcode", "local_rank", "pid", "binary", "launcher", "signal", "node",
                                                    "tasks", "cut"),
                                 _T, "a worker process failed", True),
    "torchrun.sigterm": _k(("pid", "signal", "escalated", "kill_signal"), _T, "torchrun signals its workers", True),
    "torchrun.signal": _k(EXCEPTION_FIELDS + ("signal",), _T, "torchrun received a signal", True),
    "torchrun.restart": _k(("remaining", "max_restarts", "role", "state"), _T, "torchrun restarts the workers", True),
    "torchrun.rendezvous": _k(EXCEPTION_FIELDS + ("event",), _T, "rendezvous messages", True),
    "torchrun.info": _k(("path",), _T, "other torchrun information", True),
    "torchrun.error_file": _k(EXCEPTION_FIELDS + ("timestamp",), "logdoc/pipeline.py",
                              "a worker's error.json (torch.distributed.elastic error file)"),
    "env.fact": _k(("fact", "value", "source"), "logdoc/classify/envinfo.py",
                   "a fact about the environment a paste states (torch.utils.collect_env: PyTorch version, its CUDA, "
                   "the driver version, GPUs, whether CUDA is available; nvidia-smi's CUDA Version, nvcc's release)"),
    "cuda.oom": _k(EXCEPTION_FIELDS + ("error", "context"), _T, "CUDA out of memory", True),
    "cuda.error": _k(EXCEPTION_FIELDS + ("error", "source_location", "context", "code", "gpu_node", "address"), _T,
                     "another CUDA error (or ROCm's: logdoc/classify/rocm.py)", True),
    "container.check": _k(("check", "size", "use_pct", "path", "framework", "required", "found", "status", "gpu", "gpus"),
                          "logdoc/classify/container.py",
                          "a start-up check of an NGC container: /dev/shm at Docker's default, no driver, a driver too old;"
                          " df's row of /dev/shm (small or full); /dev/infiniband or any IB device missing; a docker run of several GPUs"
                          " that leaves /dev/shm at Docker's default"),
    "host.check": _k(("check", "flags", "state", "status", "size", "host", "address", "interface", "setting", "test", "gpus",
                      "gpu", "nic", "paths"),
                     "logdoc/classify/hostcheck.py",
                     "what a diagnostic command printed about the host: lspci's ACS control bits, the kernel's IOMMU, an nvidia-smi row"
                     " with ERR!, the GPU's fabric registration not completed, an IB port down (ibv_devinfo, ibstat), the Fabric Manager's unit failed, ulimit's"
                     " locked-memory limit, /etc/hosts mapping a name to 127.0.1.1, an address on Docker's bridge, a dcgmi diag test that failed;"
                     " nvidia-smi topo -m: a GPU with no path within a PCIe switch or over NVLink, a NIC far from every GPU"),
    "kernel.xid": _k(("xid", "pci", "detail", "message", "xid_pid", "process_name", "caused_by_xid"), _T, "an NVIDIA Xid kernel message", True),
    "kernel.iommu_fault": _k(("device", "access", "fault_addr", "reason", "driver"), _N,
                             "the kernel's report of a device DMA the IOMMU blocked (Intel VT-d DMAR fault)"),
    "perftest.error": _k(("step", "errno", "state", "ret", "peer", "port"), "logdoc/classify/perftest.py",
                         "a failure line of perftest (ib_write_bw, ib_send_lat ...): buffer registration, queue pair, TCP connection"),
    "p2ptest.verify_error": _k(("element", "value", "expected"), "logdoc/classify/p2ptest.py",
                               "a wrong element that cuda-samples' simpleP2P read back after a GPU peer copy"),
    "p2ptest.no_peer_access": _k(("device", "peer"), "logdoc/classify/p2ptest.py",
                                 "a pair of GPUs that cuda-samples' p2pBandwidthLatencyTest found without peer access"),
    "gloo.error": _k(GLOO_FIELDS + EXCEPTION_FIELDS + _NESTED, _T, "a Gloo enforce or I/O failure", True),
    "gloo.connect_full_mesh": _k(GLOO_FIELDS + EXCEPTION_FIELDS + _NESTED, _T, "Gloo connectFullMesh failed", True),
    "gloo.debug": _k(GLOO_FIELDS + EXCEPTION_FIELDS + ("self_addr", "what", "gloo_rank", "gloo_size", "local", "local_addr", "local_port",
                                    "local_port_printed", "remote", "retry_count", "retry_limit", "will_retry"), _T,
                     "Gloo debug / connect-retry lines", True),
    # --- the job stopped from outside (logdoc/stops.py)
    "job.stopped": _k(("source", "reason", "job_id", "step", "node", "stop_time", "due", "count", "tasks", "process_rank", "pid",
                       "process", "signal", "exit_code", "resource", "cut"), "logdoc/stops.py",
                      "the job was stopped from outside: scheduler time limit or cancellation, srun abort, "
                      "OOM killer, Killed / exit 137, Kubernetes OOMKilled or eviction"),
    # --- PyTorch flight-recorder dumps (logdoc/flight_recorder.py)
    "fr.dump": _k(("rank", "version", "entries", "pg_config", "pg_status", "comm_lib_version"),
                  "logdoc/flight_recorder.py", "a flight-recorder dump file of one rank"),
    "fr.entry": _k(("pg_id", "pg_name", "pg_desc", "seq", "collective_seq_id", "p2p_seq_id", "op_id", "record_id",
                    "profiling_name", "backend", "op", "op_type", "state", "raw_state", "retired", "is_p2p",
                    "input_sizes", "output_sizes", "input_dtypes", "output_dtypes", "timeout_ms", "time_created", "created_ns",
                    "time_started", "time_completed", "frames", "user_frame"),
                   "logdoc/flight_recorder.py", "one collective or p2p operation recorded by the flight recorder"),
    # --- the analysis stage (logdoc/analysis/): comparisons across events and ranks
    "analysis.busy_rank": _k(ORIGIN_FIELDS + ("timeout_ms", "seq", "op_type", "desc", "elapsed_s", "remaining_s",
                                              "percent", "waiting_ranks", "detail"), _A,
                             "a rank was still working (a progress bar) when the others' collective timed out"),
    "analysis.hung_rank": _k(ORIGIN_FIELDS + ("ranks", "seq", "op_type", "pg", "pg_id", "pg_desc", "waiting_ranks",
                                              "table", "detail", "source", "silent_ranks", "timeout_ms",
                                              "comm_id", "stopped_by", "gap_seconds", "op_count",
                                              "behind_op_count", "stop_reason"), _A,
                             "ranks that never reached a collective the others wait in"),
    "analysis.straggler": _k(ORIGIN_FIELDS + ("ranks", "seq", "pg", "detail", "source", "waiting_ranks",
                                              "pg_id", "pg_desc", "comm_id", "op_type", "table", "stopped_by",
                                              "lag_seconds", "late_count", "common_count", "op_count",
                                              "behind_op_count", "stop_reason"), _A,
                             "a rank consistently behind"),
    "analysis.peer_exited": _k(ORIGIN_FIELDS + ("ranks", "reporting_ranks", "peer_addrs", "peer_hosts", "table",
                                                "detail"), _A, "a peer whose exit the others reported"),
    "analysis.missing_ranks": _k(ORIGIN_FIELDS + ("ranks", "world_size", "seen", "seen_ranks", "source",
                                                  "missing_count", "candidates", "duplicated"), _A, "ranks without any log"),
    "analysis.silent_rank": _k(ORIGIN_FIELDS + ("ranks", "last_time", "others_last_time", "gap_seconds", "attempt"),
                               _A, "a rank whose output stops long before the others'"),
    "analysis.collective_mismatch": _k(ORIGIN_FIELDS + ("pg", "pg_id", "pg_desc", "seq", "aspect", "values", "ranks",
                                                        "minority_ranks", "minority", "op_count", "source"), _A,
                                       "ranks that disagree on a collective"),
    "analysis.version_mismatch": _k(ORIGIN_FIELDS + ("component", "versions", "by_version", "ranks_by_version",
                                                     "hosts_by_version", "minority", "minority_ranks",
                                                     "minority_hosts"), _A, "ranks with different versions"),
    "analysis.env_disagreement": _k(ORIGIN_FIELDS + ("name", "values", "forced", "minority"), _A,
                                    "ranks with different NCCL_* settings"),
    "analysis.env_forced": _k(ORIGIN_FIELDS + ("name", "values", "agree"), _A, "a setting forced on every rank"),
    "analysis.transport_disagreement": _k(ORIGIN_FIELDS + ("aspect", "values", "hosts", "by_host", "minority",
                                                           "minority_hosts"), _A, "hosts using different transports"),
    "analysis.interface_disagreement": _k(ORIGIN_FIELDS + ("aspect", "values", "hosts", "by_host", "minority",
                                                           "minority_hosts", "subnets", "special", "basis",
                                                           "networks", "majority_network", "reason"), _A,
                                          "hosts using different interfaces or networks"),
    "analysis.pg_options_disagreement": _k(ORIGIN_FIELDS + ("name", "option", "pg", "values", "minority", "shortest_ms",
                                                            "longest_ms", "short", "timed_out", "fired_short"), _A,
                                           "ranks of one process group with different ProcessGroupNCCL options"),
    "analysis.pg_timeout_mismatch": _k(ORIGIN_FIELDS + ("timeout_ms", "configured_ms", "pg", "basis", "ranks",
                                                        "default_timeout", "longer", "seq", "op_type"), _A,
                                       "a watchdog fired at another timeout than its group printed at creation"),
    "analysis.topology_disagreement": _k(ORIGIN_FIELDS + ("aspect", "what", "values", "minority", "comm_id", "basis",
                                                          "mixed", "nccl_version", "failed", "unfinished",
                                                          "unfinished_on"), _A,
                                         "ranks whose NCCL topology or graph search differ (crossNic, CPU type)"),
    "analysis.nranks_disagreement": _k(ORIGIN_FIELDS + ("aspect", "comm_id", "pg", "values", "minority"), _A,
                                       "ranks that disagree on a communicator's size"),
    "analysis.duplicate_gpu": _k(ORIGIN_FIELDS + ("host", "bus_id", "ranks", "comm_ranks", "comm_id"), _A,
                                 "ranks of one communicator on the same GPU"),
    "analysis.context": _k(ORIGIN_FIELDS + ("aspect", "nodes", "basis", "single", "hints", "transports", "intra",
                                            "inter", "ranks", "devices", "nranks", "wrap", "transport", "interfaces", "values",
                                            "hosts", "reasons", "built", "driver", "major", "built_by", "installs"), _A,
                           "the job's shape as the log shows it: nodes, container hints, NCCL's transports, "
                           "ranks of several nodes taken for one host, a CUDA build newer than the driver, two NCCL installations"),
    "analysis.restart": _k(ORIGIN_FIELDS + ("attempt", "later_attempts", "origin_ranks", "origin_hosts",
                                            "first_failure", "last_attempt_failure"), _A,
                           "the job restarted after a failure"),
}

_PLACEHOLDER = lazy_re(r"\{([A-Za-z_]\w*)(?:[:=][^{}]*)?\}")  # {name}, {name:type}, {name=a|b}


def names(prefix: str = "") -> tuple[str, ...]:
    """Registered kinds, those starting with ``prefix`` when given."""
    return tuple(k for k in KINDS if k.startswith(prefix))


def is_registered(kind: str) -> bool:
    """A registered kind, or a family wildcard (``nccl.*``) that names at least one."""
    if kind.endswith(".*"):
        return any(k.startswith(kind[:-1]) for k in KINDS)
    return kind in KINDS


@lru_cache(maxsize=None)
def _catalog_fields() -> dict[str, frozenset[str]]:
    from .resources import data_dir
    import os

    out: dict[str, set[str]] = {}
    path = os.path.join(data_dir("grammars"), "torch_templates.tsv")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("id\t"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 6:
                out.setdefault(parts[1], set()).update(_PLACEHOLDER.findall(parts[5]))
    return {k: frozenset(v) for k, v in out.items()}


def fields(kind: str, catalog: bool = True) -> frozenset[str] | None:
    """The fields an event of ``kind`` may carry (None for an unregistered kind). Any message the
    parser reads may stand nested in another one (logdoc/nested.py): its event then also carries
    the nesting fields. ``catalog=False``: without the placeholders of the kind's catalog templates
    (what one template's message carries is its own placeholders and these)."""
    spec = KINDS.get(kind)
    if spec is None:
        return None
    out = spec.fields
    if spec.catalog and catalog:
        # a catalog message a paste cut at its end is read by its head (logdoc/classify/cut.py)
        out = out | _catalog_fields().get(kind, frozenset()) | _CUT
    if not kind.startswith("analysis."):
        out = out | _NESTED_SET | _BAR_SET
    return out
