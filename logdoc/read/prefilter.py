"""Stage 3: a cheap test that keeps the grammars away from ordinary training output.

Most lines of a job log are the job's own prints. A line is a *candidate* when it holds one of a
few literal keywords that every NCCL, PyTorch-distributed, Gloo, torchrun, CUDA and kernel message
of interest contains *as it is printed* (with its c10 / logger envelope: ``[rank3]:[E1129 ...
ProcessGroupNCCL.cpp:632]``, ``[W1129 ... torch/distributed/...py:12]``, ``RuntimeError: ...``).
``tests/test_fastpath_prefilter.py`` renders every format of the NCCL, PyTorch and Gloo catalogs
that way and checks that each one is a candidate.

The list is short on purpose: the fast path (:mod:`logdoc.fast.scan`) looks for each keyword with one
``bytes.find`` pass over large blocks, so every keyword costs a pass over the input. Substrings
cover the spellings: ``rror`` is Error/error, ``loo`` gloo/Gloo, ``ailed`` Failed/failed,
``ignal`` Signal/signal, ``imeout`` Timeout/timeout, ``]:[`` every c10 line of torch >= 2.2 (``[rank3]:[E1129 ...``; a plain
``[rank3]: `` prefix on a rank's own output is not a keyword: its messages of interest hold another).

A candidate that no grammar understands is reported as "relevant but not understood" only when it
also carries a strong marker (:data:`MARKERS`); other candidates were ordinary output that happened
to say "error".
"""
from __future__ import annotations

import re

from ..lazyre import lazy_re

# Literal keywords: a line without any of them is never parsed (unless it continues a record).
KEYWORDS = (
    "NCCL", "rror", "xception", "Traceback", "torch", "loo", "c10d", "]:[", "CUDA", "terminate",
    "NV",  # NVIDIA's own words: the kernel driver's NVRM lines, an NGC container's start-up checks
    "ailed", "ignal", "imeout", "===", "Flight",
    "illed",  # the job stopped from outside (logdoc/stops.py): shell and srun `Killed`, OOM killer, OOMKilled,
              # Ray's memory monitor (`Workers ... killed due to memory pressure`, `Ray killed this worker`)
    "esol",  # host names that do not resolve (ssh's `Could not resolve hostname`, gai_strerror's
              # `Temporary failure in name resolution` as nc, wget or a launcher print it)
    "known",  # gai_strerror's `Name or service not known` / `... or not known` (ping, nc), ping's `unknown host`
    "NXDOMAIN",  # a DNS lookup tool's answer for a name that does not exist (nslookup, host)
    "open file",  # EMFILE's `Too many open files` in any program's own wording, and Python's for a script it cannot open
              # (`python: can't open file 'train.py': [Errno 2] No such file or directory`)
    "core dump", " fault", "SIG",  # a fatal signal as a shell (`Aborted (core dumped)`,
              # `Segmentation fault`), Abseil or glog (`*** SIGSEGV received ...`) reports it; `SIG` also holds a
              # SIGTERM a framework's handler reports with no other keyword (Lightning's `[rank: 0] Received SIGTERM: 15`;
              # logdoc/classify/torch/__init__.py): one stem where `*** SIG` and `SIGTERM` were two
    # NCCL's messages pasted bare (the `host:pid:tid [dev] NCCL WARN` header lost): the network
    # family (`NET/IB : ...`, `Could not find NET with id 0`, `... via NET/IB/0/GDRDMA`) and the
    # function-named ones (`ncclSocketInit: ...`, `ncclCommInitRank failed: ...`).
    "NET", "nccl",
    "Out of bounds", "bus bandwidth",  # nccl-tests' verdict lines (`# Out of bounds values : 2 FAILED`)
    "HIP failure",  # rccl-tests' HIPCHECK (`node1: Test HIP failure common.cu:1129 'hipErrorInvalidDevice'`; its NCCLCHECK
              # says `Test NCCL failure`)
    "%|",  # a tqdm progress bar: the program's own work and how long it ran (a busy rank, not a hung one)
    "_FAULT",  # the AMD IOMMU's fault reports (`AMD-Vi: Event logged [IO_PAGE_FAULT ...]`: a GPU's peer-to-peer DMA
    # blocked by the IOMMU); Intel's (`DMAR: [DMA Write] ... fault addr ...`) hold " fault"
    "nable to connect",  # a launcher that cannot reach a node: MPICH Hydra's `unable to connect from "a" to "b"`,
              # its proxy's `unable to connect to server H at port P (check for firewalls!)`
    "version: ",  # torch.utils.collect_env's facts (`PyTorch version: 2.1.0`, `Nvidia driver version: 535.104.05`;
              # logdoc/classify/envinfo.py)
    # The lines other programs print that a rule reads on their own (each rule's one-line examples must be
    # candidates: tests/test_fastpath_prefilter.py), which carry no keyword above:
    ".cpp:",  # a c10 log line of a process with no rank yet (`[W1201 10:11:12.1 TCPStoreLibUvBackend.cpp:1001] ...`)
    "ERROR",  # a logger's level in capitals (DeepSpeed's launcher `[ERROR] [launch.py:434:sigkill_handler] ...`)
    "/dev/shm", "SHMEM",  # df's /dev/shm row, Ray's store warning, an NGC container's `The SHMEM allocation limit`
    "infiniband", "IB devices",  # /dev/infiniband or /sys/class/infiniband_verbs missing, ibv_devinfo's `No IB devices found`
    "device handle",  # nvidia-smi's `Unable to determine the device handle for GPU...: GPU is lost`
    "abric",  # the NVIDIA Fabric Manager's own log (`fabric manager config file item: ... has an invalid value`)
    "/dev/kfd",  # ROCm: rocminfo's `Unable to open /dev/kfd read-write: ...` (logdoc/classify/rocm.py; the KFD's
              # `Memory access fault by GPU node-2 ...` holds ` fault`, one stem with the shell's `Segmentation fault`)
    "GetDeviceCount returned", "<inactive>",  # cuda-samples' deviceQuery (`cudaGetDeviceCount returned 802`),
              # `nvidia-smi nvlink --status` (`Link 0: <inactive>`) (logdoc/classify/driver.py)
    "daemon", "MPI_ABORT was invoked",  # Open MPI's launcher (logdoc/classify/frameworks.py, the catalog's logdoc:ompi
              # rows): its runtime's daemons, lost (`ORTE has lost communication with a remote daemon.`), never started (`ORTE
              # was unable to reliably start one or more daemons.`, `An ORTE daemon has unexpectedly failed after launch ...`)
              # or unreachable (`A process or daemon was unable to complete a TCP connection`); one stem for the family;
              # `MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD`
    "marked dead",  # a node of a Ray cluster lost, logged at WARNING (`The node with node id: ... has been marked dead because
              # the detector has missed too many heartbeats from it.`; logdoc/stops.py)
    "died",  # the frameworks' words for a process that is gone, with no error word (Ray's bare `The actor died unexpectedly
              # before finishing this task.`, vLLM's `Worker proc VllmWorker-0 died unexpectedly, shutting down executor.`;
              # logdoc/stops.py, logdoc/classify/frameworks.py)
    "broadcast block",  # vLLM's message queue waiting on a stuck peer, logged at INFO or WARNING (`No available shared
              # memory broadcast block found in 60 seconds.`; logdoc/classify/frameworks.py)
    "remainder of ranks",  # Horovod's stall inspector, logged at WARNING (`One or more tensors were submitted to be reduced,
              # gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.`)
    "recommended minimum",  # Accelerate's kernel check (`Detected kernel version 5.4.0, which is below the recommended minimum
              # of 5.5.0; this can cause the process to hang.`; logdoc/classify/frameworks.py)
    "oordination", "EXCEEDED",  # JAX's / XLA's coordination service (logdoc/classify/frameworks.py): its agent's and
              # service's lines (`Stopping coordination service as shutdown barrier timed out`), the call a gRPC status
              # names (`RPC: /tensorflow.CoordinationService/RegisterTask`), and a status line with no other keyword
              # (`DEADLINE_EXCEEDED: Deadline Exceeded`, `DEADLINE_EXCEEDED: Barrier timed out. Id: ...`)
    "UNAVAILABLE: ",  # a gRPC status alone on its line with no other keyword (`UNAVAILABLE: Socket closed`)
    "exchange_identification", "not found",  # an Open MPI launch that failed on a node before its banner, in
              # OpenSSH's words (`ssh_exchange_identification: Connection closed by remote host`, `kex_...` from 8.0) and the
              # node's shell's (`bash: orted: command not found`): no other keyword; `not found` is one stem for every shell's
              # missing command (bash's `command not found`, dash's `/bin/sh: 1: deepspeed: not found`)
    "sigkill_handler", "ssh exited",  # DeepSpeed's launcher reporting a worker's exit with its logger's head cut
              # (`[launch.py:322:sigkill_handler] [...] exits with ret...`, no `[ERROR]`), pdsh's ssh to a node that failed
              # (`pdsh@n0: n1: ssh exited with exit code 255`): no other keyword
    "such file",  # a shell's `bash: /env/bin/python: No such file or directory` for a command given by its path (LD7081):
              # no other keyword
    "was unable to",  # Open MPI's launcher that could not start the program (`mpirun was unable to find the specified
              # executable file, and therefore`, `... was unable to launch the specified application as it could not access`:
              # LD7087): no other keyword
    "enough slots",  # Open MPI's mapper refusing -np (`There are not enough slots available in the system to satisfy the 4
              # slots ...`, LD7086): no other keyword
    "Abort",  # TensorFlow's collective executor aborting a worker's collectives, its status in the words of releases
              # before 2.11 with no other keyword (`BaseCollectiveExecutor::StartAbort Unavailable: Socket closed`), and the ring
              # algorithm's own line before it (`Aborting RingReduce with Unavailable: Socket closed`)
    "Xid",  # the NVSwitch driver's `nvidia-nvswitch2: SXid (PCI:...): 20034, Fatal, ...` (NVRM's Xid lines hold `NV`)
    "network interface",  # a launcher's check of the hosts' interfaces, its exception line bare (Horovod's
              # `horovod.runner.common.util.address.NoValidAddressesFound: No available network interface found matching
              # user provided interfaces ['eth1'], existing nics: [...]`: a class name without Error; LD776)
    "store-based barrier",  # the end of the store-based barrier's wait, logged with no other keyword (`INFO:root:Rank 0:
              # Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes.`): without it a large log
              # would keep the ranks' status lines while they waited (`timeout=` holds `imeout`) and lose the end
    "GLOBAL_RANK: ", "processes registered",  # PyTorch Lightning's start-up lines, logged at INFO with no other keyword
              # (`Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4` in each process, rank 0's `All distributed processes
              # registered. Starting with 4 processes`; logdoc/classify/torch/__init__.py): LD6080 counts the first and
              # holds its tongue on the second, so a large log must keep both
    "OOM when",  # TensorFlow's allocator status (`OOM when allocating tensor with shape[...] ... by allocator GPU_0_bfc`,
              # op_kernel.cc), after a status code with no other keyword (`(0) Resource exhausted: `, executor.cc's `Compute
              # status: Resource exhausted: `)
    "collective #", "lagging",  # the desync report's lines pasted alone (TraceUtils.h: `[1] finished collective #3, but
              # didn't join collective #4 (count from 1)`, `... the lagging/dead/mismatched ranks that caused the desync are:`)
)
KEYWORDS_BYTES = tuple(k.encode("ascii") for k in KEYWORDS)
_CANDIDATE = lazy_re("|".join(re.escape(k) for k in KEYWORDS))
# The same on bytes (the keywords are ASCII: a UTF-8 line holds one exactly when its text does)
CANDIDATE_BYTES = lazy_re(b"|".join(re.escape(k) for k in KEYWORDS_BYTES))

# Strong markers: a candidate with one of these that no grammar reads is worth listing.
MARKERS = lazy_re(
    r"NCCL|c10d|ProcessGroup|Gloo|gloo/|torch\.distributed|torchrun|WorkNCCL|Watchdog|watchdog|TCPStore"
    r"|\[rank\d+\]|Traceback|ChildFailedError|DistBackendError|DistNetworkError|DistStoreError|NVRM"
)


def candidate(line: str) -> bool:
    return _CANDIDATE.search(line) is not None


def marked(text: str) -> bool:
    return MARKERS.search(text) is not None
