"""The start-up checks of NVIDIA's NGC containers, read where no other reader takes the line.

Every NGC framework image (``nvcr.io/nvidia/pytorch``, ``tensorflow``, ``tritonserver``, ...) runs its
entrypoint's checks before the job's own command and prints what they found under the image's banner:

* ``NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be`` /
  ``insufficient for PyTorch.  NVIDIA recommends the use of the following flags:``: ``/dev/shm`` is
  Docker's default of 64 MiB (the check reads ``df -k /dev/shm``); older images name the framework
  (Caffe, TensorFlow, MXNet), newer ones say only ``insufficient.``;
* ``WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.``: no
  ``libcuda.so.1`` or no ``/dev/nvidiactl`` in the container (started without the NVIDIA runtime);
* ``ERROR: This container was built for NVIDIA Driver Release 440.33 or later, but`` /
  ``version 418.67 was detected and compatibility mode is UNAVAILABLE.`` / ``[[CUDA Driver
  UNAVAILABLE (cuInit(0) returned 804)]]``: the host's driver is older than the image's CUDA needs
  and the forward-compatibility libraries could not make up for it;
* ``Failed to detect NVIDIA driver version.``, ``NOTE: Legacy NVIDIA Driver detected.  Compatibility
  mode ENABLED.``, ``NOTE: CUDA Forward Compatibility mode ENABLED.``, ``WARNING: CUDA Minor Version
  Compatibility mode ENABLED.``;
* ``WARNING: Detected NVIDIA <name> GPU, which is not yet supported in this version of the container``
  and ``ERROR: No supported GPU(s) detected to run this container``.

The same fact as a paste shows it by hand: ``df -h /dev/shm`` (or ``df -k``, ``df -H``) inside the container, the
row of the filesystem mounted on /dev/shm: ``shm  64M  64M  0 100% /dev/shm``. A row at 100% use (or with nothing
available) is ``shm_full``, one of Docker's 64 MiB or less ``shm_small``; a larger, not full /dev/shm says nothing.

The RDMA devices as a paste shows them missing: ``ls: cannot access '/dev/infiniband': No such file or
directory`` (the uverbs and rdma_cm device files a container gets only with ``--device=/dev/infiniband`` or an RDMA
device plugin) and ibv_devinfo's / ibv_devices' ``No IB devices found`` (libibverbs found no device) are
``no_rdma_devices``.

The container as the command that started it shows it: ``docker run`` (``docker container run``, ``nvidia-docker
run``, ``podman run``) with ``--gpus`` naming more than one GPU (``all``, a count of 2 or more, ``device=0,1``) and
none of ``--ipc=host`` (or ``--ipc container:NAME``), ``--shm-size`` or a volume or mount on /dev/shm: every
rank of the job in it shares Docker's default /dev/shm of 64 MiB (Docker's run reference: ``--shm-size``
defaults to 64m). The command is read whole: its lines continued with a trailing backslash are joined when the
paste holds them, and a command whose continuation is not there says nothing. It is
``docker_run_default_shm`` with ``gpus`` (what ``--gpus`` asked for).

A Kubernetes pod spec (a Pod, or the pod template of a Deployment, Job, PyTorchJob, ...) as YAML shows three lines
that matter here: the container's GPU request ``nvidia.com/gpu: 8`` (under ``resources.limits``, NVIDIA's device
plugin's resource name) is ``k8s_gpus`` with ``gpus``; a ``volumeMounts:`` key (the container's mounts are in the
paste) is ``k8s_mounts``; a mount at /dev/shm (``- mountPath: /dev/shm``, the memory-backed ``emptyDir`` that
replaces the runtime's 64 MiB /dev/shm) is ``k8s_shm_mount``. The rules decide from the three together.

Each becomes ``container.check`` with ``check`` (which of them), and where the line says it ``framework``,
``required`` / ``found`` (driver releases), ``status`` (the compatibility probe's verdict), ``gpu``, and a df row's
``size`` and ``use_pct``.
What a check means for the failure is the knowledge base's (knowledge/shm.yaml, knowledge/cuda.yaml).
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

_SHM_NOTE = lazy_re(r"NOTE: The SHMEM allocation limit is set to the default of (?P<size>\d{1,6} ?[KMG]i?B)\b")
_SHM_ADVICE = lazy_re(r"^insufficient(?: for (?P<framework>[\w ./-]{1,40}?))?\.\s+NVIDIA recommends the use of the following flags")
_NO_DRIVER = "The NVIDIA Driver was not detected.  GPU functionality will not be available"
_BUILT_FOR = lazy_re(r"This container was built for NVIDIA Driver Release (?P<required>[\d.]{0,16}) or later, but"
                     r"(?:\s+version (?P<found>[\d.]{0,24}) ?was detected and compatibility mode is UNAVAILABLE)?")
_COMPAT_STATUS = lazy_re(r"^\[\[(?P<status>CUDA Driver [^\]\n]{1,160})\]\]$")
_UNSUPPORTED_GPU = lazy_re(r"Detected NVIDIA (?P<gpu>[^\n]{1,80}?) GPU, which is not yet supported in this version of the container")
_MODES = (
    ("Failed to detect NVIDIA driver version", "driver_version_unknown"),
    ("Legacy NVIDIA Driver detected.  Compatibility mode ENABLED", "legacy_driver_compat"),
    ("CUDA Forward Compatibility mode ENABLED", "forward_compat"),
    ("CUDA Minor Version Compatibility mode ENABLED", "minor_version_compat"),
    ("No supported GPU(s) detected to run this container", "no_supported_gpu"),
)


# a df row: filesystem, size, used, available, use%, mount point (sizes with df -h/-H's suffix, else 1K blocks)
_DF_SHM = lazy_re(r"^(?:\S{1,100}\s+)?(?P<size>\d{1,12}(?:[.,]\d{1,3})?)(?P<unit>[KMGTP]?)i?\s+\d{1,12}(?:[.,]\d{1,3})?[KMGTP]?i?"
                  r"\s+(?P<avail>\d{1,12}(?:[.,]\d{1,3})?)[KMGTP]?i?\s+(?P<use>\d{1,3})%\s+/dev/shm/?$")
_UNIT = {"": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_SMALL_SHM = 70 * 10 ** 6  # Docker's default of 64 MiB as any df prints it (64M, 65536, -H's 68M), and smaller


def _df_shm(line: str) -> Parsed | None:
    m = _DF_SHM.match(line.strip())
    if m is None:
        return None
    size = float(m["size"].replace(",", ".")) * _UNIT[m["unit"]]
    text = m["size"] + (m["unit"] or "K")
    if int(m["use"]) >= 100 or float(m["avail"].replace(",", ".")) == 0:
        return _check("shm_full", "ERROR", size=text, use_pct=m["use"])
    if size <= _SMALL_SHM:
        return _check("shm_small", size=text, use_pct=m["use"])
    return None


_NO_DEV_INFINIBAND = lazy_re(r"^ls: cannot access ['\"]?(?P<path>/dev/infiniband(?:/[\w.-]{1,40})?)['\"]?: No such file or directory$")


def _check(check: str, level: str = "INFO", **fields: str | None) -> Parsed:
    out = {"check": check}
    out.update({k: v for k, v in fields.items() if v})
    return Parsed("container.check", level, "container.check", out)


# `$ ` / `# ` / `user@host:~$ ` prompts and sudo before the command; the command's own words
_DOCKER_RUN = lazy_re(r"^(?:[\w@.:~/-]{0,80}[$#]\s*)?(?:sudo\s+(?:-E\s+)?)?(?:docker(?:\s+container)?|nvidia-docker|podman)\s+run\s")
_GPUS = lazy_re(r"\s--gpus(?:=|\s+)['\"]{0,2}(?P<gpus>all|\d{1,3}|device=[\w,-]{1,200})['\"]{0,2}(?=\s|$)")
_SHM_GIVEN = lazy_re(r"\s--(?:ipc(?:=|\s+)['\"]?(?:host|container:)|shm-size\b)|[\s=:,]/dev/shm\b")
_COMMAND_MAX = 16384


def _joined_command(text: str) -> str | None:
    """The command a record's first line starts, its ``\\``-continued lines joined; None when the record
    does not hold the whole of it."""
    out: list[str] = []
    for part in text[:_COMMAND_MAX].split("\n"):
        part = part.strip()
        if not part.endswith("\\"):
            out.append(part)
            return " ".join(out)
        out.append(part[:-1])
    return None


def classify_docker_run(text: str) -> Parsed | None:
    """``container.check`` ``docker_run_default_shm`` for a ``docker run`` of several GPUs that leaves
    /dev/shm at Docker's default (the module says how it is read); None otherwise."""
    if not _DOCKER_RUN.match(text.lstrip()[:200]):
        return None
    command = _joined_command(text.lstrip())
    if command is None or _SHM_GIVEN.search(command) is not None:
        return None
    m = _GPUS.search(command)
    if m is None:
        return None
    gpus = m["gpus"]
    many = gpus == "all" or (gpus.isdigit() and int(gpus) > 1) or "," in gpus
    return _check("docker_run_default_shm", "INFO", gpus=gpus) if many else None


# a pod spec's lines (YAML, as `kubectl get pod -o yaml` and manifests write them; JSON's quoted keys too)
_K8S_GPUS = lazy_re(r"""^(?:-\s{1,4})?["']?nvidia\.com/gpu["']?\s{0,4}:\s{0,4}["']?(?P<gpus>\d{1,3})["']?,?\s*$""")
_K8S_MOUNTS = lazy_re(r"""^(?:-\s{1,4})?["']?volumeMounts["']?\s{0,4}:\s{0,4}\[?\s*$""")
_K8S_SHM = lazy_re(r"""^(?:-\s{1,4})?["']?mountPath["']?\s{0,4}:\s{0,4}["']?/dev/shm/?["']?,?\s*$""")


def _k8s(line: str) -> Parsed | None:
    t = line.strip()
    if "nvidia.com/gpu" in t:
        m = _K8S_GPUS.match(t)
        return _check("k8s_gpus", gpus=m["gpus"]) if m is not None else None
    if "volumeMounts" in t:
        return _check("k8s_mounts") if _K8S_MOUNTS.match(t) else None
    if "mountPath" in t:
        return _check("k8s_shm_mount") if _K8S_SHM.match(t) else None
    return None


def classify_container(line: str) -> Parsed | None:
    """``container.check`` for a line of an NGC image's start-up checks; None otherwise."""
    if "nvidia.com/gpu" in line or "volumeMounts" in line or "mountPath" in line:
        return _k8s(line)
    if "/dev/shm" in line and "%" in line:
        return _df_shm(line)
    if "/dev/infiniband" in line:
        m = _NO_DEV_INFINIBAND.match(line.strip())
        return _check("no_rdma_devices", "WARN", path=m["path"]) if m is not None else None
    if line.strip() == "No IB devices found":
        return _check("no_rdma_devices", "WARN")
    if "SHMEM" in line:
        m = _SHM_NOTE.search(line, 0, min(len(line), 512))
        if m is not None:
            return _check("shm_default", size=m["size"].replace(" ", ""))
    if "NVIDIA recommends" in line:
        m = _SHM_ADVICE.match(line.strip())
        if m is not None:
            return _check("shm_default", framework=m["framework"])
    if _NO_DRIVER in line:
        return _check("no_driver", "WARN")
    if "built for NVIDIA Driver Release" in line:
        m = _BUILT_FOR.search(line, 0, min(len(line), 512))
        if m is not None:
            return _check("driver_too_old", "ERROR", required=m["required"], found=m["found"])
    if line.startswith("[[CUDA Driver"):
        m = _COMPAT_STATUS.match(line.strip())
        if m is not None:
            return _check("compat_status", status=m["status"])
    if "not yet supported in this version of the container" in line:
        m = _UNSUPPORTED_GPU.search(line, 0, min(len(line), 512))
        if m is not None:
            return _check("unsupported_gpu", "WARN", gpu=m["gpu"].removeprefix("NVIDIA "))
    for words, check in _MODES:
        if words in line:
            return _check(check, "ERROR" if check == "no_supported_gpu" else "INFO")
    return None
