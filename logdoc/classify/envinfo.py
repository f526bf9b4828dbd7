"""The versions a paste states outside NCCL's banner: facts about the environment, not messages.

People paste the output of ``python -m torch.utils.collect_env`` in nearly every PyTorch issue
(torch/utils/collect_env.py, ``env_info_fmt``, every release): ``PyTorch version: 2.1.0+cu121``,
``CUDA used to build PyTorch: 12.1``, ``GPU models and configuration: GPU 0: ...``,
``Nvidia driver version: 535.104.05`` and the packages it lists, ``[pip3] nvidia-nccl-cu12==2.18.1``
(``pip list --format=freeze``; ``[pip]`` where only pip answered) and ``[conda] nccl  2.18.3.1  h12f7317_0
conda-forge`` (``conda list``: name, version, build, channel). The ``nvidia-nccl-cu*`` wheel (or the conda
``nccl`` package) is the NCCL release a pip-installed torch loads. vLLM states the release its own NCCL
wrapper loaded (vllm/distributed/device_communicators/pynccl.py: ``vLLM is using nccl==2.21.5``), and a
program may print ``torch.cuda.nccl.version()``: a tuple ``(2, 18, 1)`` (torch >= 1.13; an int such as
``2708`` before), read only where a label says what it is.

The settings a paste shows as the shell prints them: ``env | grep NCCL``, ``printenv`` and ``export -p`` / ``declare
-p`` (``declare -x NCCL_IB_DISABLE="1"``) print one ``NAME=value`` a line, and a job script sets them with
``export NCCL_SOCKET_IFNAME=eth0``. A line that is only an ``NCCL_*`` assignment becomes ``nccl.env`` (the kind of
NCCL's own ``NCCL_IB_DISABLE set by environment to 1.``) with ``name``, ``value``, ``from_environment`` and
``source: shell``: the rules on a setting read it, and the comparison of settings across ranks leaves it out (it
is no rank's own report of what it read).

An NCCL release becomes ``nccl.version`` with ``source`` (where it was stated): a fact the version-gated
rules read (``with: {kind: nccl.version}``) but no rank's banner, so the comparison of versions across
ranks (logdoc/analysis/disagreements.py) leaves it out. The rest becomes ``env.fact`` (``fact``: one of
``torch_version``, ``torch_cuda``, ``driver_version``, ``gpu``, ``cuda_available`` (collect_env's ``Is CUDA
available: False``); ``driver_cuda``, the newest CUDA release the driver supports, from nvidia-smi's header
(``CUDA Version: 12.2``); ``nvcc_cuda``, the toolkit's release from ``nvcc --version`` (``Cuda compilation tools,
release 12.4, V12.4.131``); ``nccl_library``, the paths of ``ldconfig -p``'s ``libnccl.so.2 (libc6,x86-64) =>
/usr/lib/x86_64-linux-gnu/libnccl.so.2`` (a record's lines joined by ``; ``); ``value``; ``source``). NCCL packages as ``pip list`` / ``pip freeze``
(``nvidia-nccl-cu12   2.20.5``) and ``dpkg -l`` (``ii  libnccl2  2.18.3-1+cuda12.2  amd64  ...``) list them are
``nccl.version`` with ``source`` as collect_env's.
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

# collect_env's own lines (`Key: value`); the values it prints for nothing known are not facts
_COLLECT_ENV = lazy_re(r"^(?P<key>PyTorch version|CUDA used to build PyTorch|Nvidia driver version"
                       r"|GPU models and configuration|Is CUDA available):[ \t]*(?P<value>\S[^\n]{0,200}?)?\s*$")
_FACT = {"PyTorch version": "torch_version", "CUDA used to build PyTorch": "torch_cuda",
         "Nvidia driver version": "driver_version", "GPU models and configuration": "gpu",
         "Is CUDA available": "cuda_available"}
# nvidia-smi's header (`| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2  |`; searched
# along the line: a paste's repair may join the table's lines of one width into one) and nvcc --version's release
_SMI_HEADER = lazy_re(r"NVIDIA-SMI \d{2,4}\.\d{1,3}(?:\.\d{1,3})?\s{1,40}Driver Version: \d{2,4}\.\d{1,3}(?:\.\d{1,3})?"
                      r"\s{1,40}CUDA Version: (?P<cuda>\d{1,2}\.\d{1,2})\b")
# NCCL installed by hand as the package tools list it: `pip list` / `pip freeze`, `dpkg -l`, `ldconfig -p`
_PIP_LIST = lazy_re(r"^(?P<pkg>nvidia-nccl-cu\d{2})(?:\s{1,60}|==)(?P<v>\d{1,2}\.\d{1,3}\.\d{1,3})(?:\.\d{1,3})?\s*$")
_DPKG = lazy_re(r"^ii\s{1,8}(?P<pkg>libnccl2|libnccl-dev)(?::\w{1,10})?\s{1,60}(?P<v>\d{1,2}\.\d{1,3}\.\d{1,3})-\d{1,3}"
                r"(?:\+cuda(?P<cuda>\d{1,2}\.\d{1,2}))?\s")
_LDCONFIG = lazy_re(r"^(?P<so>libnccl\.so(?:\.\d{1,3}){0,3})\s{1,8}\([^)\n]{1,60}\)\s{1,8}=>\s{1,8}(?P<path>/\S{1,300})$")
_NVCC = lazy_re(r"^Cuda compilation tools, release (?P<cuda>\d{1,2}\.\d{1,2}), V\d")
_NOTHING = frozenset(("N/A", "None", "Could not collect", "No CUDA"))
# collect_env's package lines: pip's freeze format and conda list's columns
_PIP_NCCL = lazy_re(r"^\[pip3?\] (?P<pkg>nvidia-nccl-cu\d+|nccl)==(?P<v>\d+\.\d+\.\d+)(?:\.\d+)?(?:[\w.+-]*)\s*$")
_CONDA_NCCL = lazy_re(r"^\[conda\] (?P<pkg>nvidia-nccl-cu\d+|nccl)\s+(?P<v>\d+\.\d+\.\d+)(?:\.\d+)?\s+\S")
# vLLM's line (its own logger's prefix before it: `INFO 05-10 12:00:00 pynccl.py:63] `)
_VLLM = lazy_re(r"(?:^|\] |\s)vLLM is using nccl==(?P<v>\d+\.\d+\.\d+)\b")
# torch.cuda.nccl.version() printed with a label that names it
_TUPLE = lazy_re(r"(?:^|[\s(\[{'\"])(?:torch\.cuda\.nccl\.version\(\)|nccl\.version\(\)|NCCL[ _]version|nccl[ _]version)"
                 r"['\"]?\s*[:=]?\s*\((?P<a>\d{1,2}),\s*(?P<b>\d{1,3}),\s*(?P<c>\d{1,3})\)")
# `NCCL_X=value` as env / printenv / export -p / a script's export print it; the value as the shell quotes it
_SHELL_ENV = lazy_re(r"^(?:export\s+|declare\s+-x\s+)?(?P<name>NCCL_[A-Z0-9_]{1,60})="
                     r"(?P<q>[\"']?)(?P<value>[^\s\"'=;|&$`]{1,200})(?P=q)\s*$")


def _nccl(version: str, source: str) -> Parsed:
    return Parsed("nccl.version", "INFO", "nccl.version",
                  {"version": version, "suffix": None, "cuda": None, "source": source})


def _nccl_install(line: str) -> Parsed | None:
    m = _PIP_LIST.match(line)
    if m is not None:
        return _nccl(m["v"], f"pip {m['pkg']}")
    m = _DPKG.match(line)
    if m is not None:
        p = _nccl(m["v"], f"dpkg {m['pkg']}")
        p.fields["cuda"] = m["cuda"]
        return p
    return classify_ldconfig(line)


def classify_ldconfig(text: str) -> Parsed | None:
    """``env.fact`` ``nccl_library`` for ``ldconfig -p``'s NCCL lines: the paths of a record's lines joined by
    ``; `` (its tab-indented lines are one record); None when its first line is none of them."""
    paths: list[str] = []
    for line in text.split("\n", 64)[:64]:
        m = _LDCONFIG.match(line.strip())
        if m is None:
            break
        paths.append(m["path"])
    if not paths:
        return None
    return Parsed("env.fact", "INFO", "env.fact", {"fact": "nccl_library", "value": "; ".join(paths), "source": "ldconfig"})


def classify_envinfo(line: str) -> Parsed | None:
    """``nccl.version`` (with ``source``) or ``env.fact`` for a line that states a version as the
    module says; None otherwise."""
    if ": " in line[:40] or line.endswith(":"):
        m = _COLLECT_ENV.match(line)
        if m is not None:
            value = (m["value"] or "").strip()
            if not value or value in _NOTHING:
                return None
            return Parsed("env.fact", "INFO", "env.fact",
                          {"fact": _FACT[m["key"]], "value": value, "source": "collect_env"})
    if "NCCL_" in line[:20]:
        m = _SHELL_ENV.match(line)
        if m is not None:
            return Parsed("nccl.env", "INFO", "nccl.env",
                          {"name": m["name"], "value": m["value"], "from_environment": True, "source": "shell"})
        return None
    if "NVIDIA-SMI " in line and "ERR!" not in line:  # (a GPU's ERR! in a joined table is the host check's)
        m = _SMI_HEADER.search(line, 0, min(len(line), 65536))
        if m is not None:
            return Parsed("env.fact", "INFO", "env.fact", {"fact": "driver_cuda", "value": m["cuda"], "source": "nvidia-smi"})
    if line.startswith("Cuda compilation tools"):
        m = _NVCC.match(line)
        if m is not None:
            return Parsed("env.fact", "INFO", "env.fact", {"fact": "nvcc_cuda", "value": m["cuda"], "source": "nvcc"})
    if line.startswith(("nvidia-nccl-cu", "ii ", "libnccl.so")):
        return _nccl_install(line)
    if line.startswith("[pip"):
        m = _PIP_NCCL.match(line)
        return _nccl(m["v"], f"pip {m['pkg']}") if m is not None else None
    if line.startswith("[conda]"):
        m = _CONDA_NCCL.match(line)
        return _nccl(m["v"], f"conda {m['pkg']}") if m is not None else None
    if "vLLM is using nccl==" in line:
        m = _VLLM.search(line, 0, min(len(line), 2048))
        if m is not None:
            return _nccl(m["v"], "vllm")
    if "ersion" in line and "(" in line:
        m = _TUPLE.search(line, 0, min(len(line), 2048))
        if m is not None:
            return _nccl(f"{m['a']}.{m['b']}.{m['c']}", "torch.cuda.nccl.version()")
    return None
