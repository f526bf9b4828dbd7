"""What a diagnostic command printed about the host, read where no other reader takes the line.

Beside the job's output, or instead of it, people paste the commands an expert asks for. Each line
below says something about the host by itself, in the command's own printed format:

* ``lspci -vvv``'s ACS control line of a PCI bridge, ``ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+
  ...``: a ``+`` on source validation or on the request / completion redirects is PCIe Access Control
  Services enabled, which sends GPU peer-to-peer traffic up to the root complex (NCCL's troubleshooting
  guide reads the same ``SrcValid+``): ``acs_enabled``, with the ``flags`` that are on;
* a row of ``nvidia-smi``'s table with ``ERR!`` in one of its fields (``|   0  NVIDIA A100 ...  On  |
  00000000:07:00.0 Off |   ERR! |``): NVML could not read that GPU: ``gpu_err``;
* ``nvidia-smi -q``'s Fabric section with the GPU's registration with the NVLink fabric ``State :
  In Progress`` or ``Not Started`` (the Fabric Manager user guide: ``In Progress`` means the Fabric Manager is likely
  not running): ``fabric_state``, with ``state``;
* ``ibv_devinfo``'s port ``state: PORT_DOWN (1)`` (``PORT_INIT``, ``PORT_ARMED``) and ``ibstat``'s
  ``State: Down`` (``Initializing``, ``Armed``) or ``Physical state: Polling`` (``Disabled``,
  ``LinkErrorRecovery``): an InfiniBand / RoCE port that carries no traffic: ``ib_port_down``, with ``state``;
* systemd's lines about the Fabric Manager's unit (in ``systemctl status`` and the journal):
  ``nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE``, ``...: Failed with
  result 'exit-code'.``, ``...: Start request repeated too quickly.``, ``Control process exited, ...`` (the unit
  starts a script), systemctl's ``Job for nvidia-fabricmanager.service failed because the control process exited
  with error code.`` and the start script's ``"/usr/bin/nv-fabricmanager -c ..." failed! Exit code: 1``:
  ``fm_failed``, with ``status``;
  ``systemctl status``'s head line of the unit (``● nvidia-fabricmanager.service - NVIDIA fabric manager
  service``): ``fm_unit``, and its ``Active: failed (Result: exit-code) since ...`` / ``Active: inactive (dead)``
  line: ``unit_down`` with ``status`` (which unit it is about, the rule reads from the head line in the same file);
* the kernel's command line (``/proc/cmdline``'s ``BOOT_IMAGE=... intel_iommu=on ...``, or the
  ``GRUB_CMDLINE_LINUX="..."`` line of /etc/default/grub) turning the IOMMU on (``intel_iommu=on``,
  ``amd_iommu=on``) without passthrough (``iommu=pt``, ``iommu.passthrough=1``): GPU peer-to-peer traffic is then
  translated by the IOMMU, which CUDA does not support on bare metal: ``iommu_translated``, with ``setting``;
* ``ulimit -a``'s ``max locked memory (kbytes, -l) 64``: a locked-memory limit other than ``unlimited``:
  ``memlock_limit``, with its ``size`` in KiB;
* an ``/etc/hosts`` line that maps a host name to 127.0.1.1 (the entry Debian's and Ubuntu's installers
  write for the machine's own name): ``hosts_loopback``, with ``host``;
* ``ip addr``'s ``inet 172.17.0.2/16 brd 172.17.255.255 scope global eth0`` on an interface other than
  ``docker0``: an address of Docker's default bridge network, the network of a container started without
  ``--network host``: ``docker_bridge``, with ``address`` and ``interface``.

* a result row of ``dcgmi diag``'s table (DCGM Diagnostics: ``| PCIe                      | Fail - All  |``,
  ``| GPU Memory | Fail - GPU: 0 |``, DCGM 3.3+'s lower-case ``| memory | Fail |``) whose test failed:
  ``dcgm_fail``, with ``test`` and the ``gpus`` it names (``All``, ``GPU: 0``).

* a row of ``nvidia-smi topo -m``'s matrix (``GPU0     X      SYS     SYS     0-23    0``; the legend: ``X`` self,
  ``NV#`` a bonded set of # NVLinks, ``PIX`` / ``PXB`` one or several PCIe bridges, ``PHB`` a PCIe host bridge,
  ``NODE`` the host bridges of one NUMA node, ``SYS`` the SMP interconnect between NUMA nodes, ``SOC`` its name
  before ``SYS``): a GPU's row whose every path is ``PHB``, ``NODE`` or ``SYS`` (no NVLink, no PCIe switch shared
  with any other device, which is past NCCL's default P2P level ``PXB``, src/graph/paths.cc): ``topo_no_nvlink``,
  with ``gpu`` (the row's name, ``GPU0``) and the ``paths`` it shows; a NIC's row (``NIC0``, or the device name ``mlx5_0`` of older releases)
  whose paths to the GPUs are all ``PHB``, ``NODE`` or ``SYS`` (past NCCL's default GPUDirect RDMA level ``PXB``):
  ``topo_nic_far``, with ``nic`` and ``paths``. The GPUs come first in the matrix, so a GPU's ``X`` stands at its
  index, and a NIC's paths to the GPUs are the cells before its ``X`` less one per NIC before it.

Each becomes ``host.check`` with ``check`` and its fields. What a check means for a failure is the
knowledge base's (knowledge/*.yaml rules on ``host.check``).
"""
from __future__ import annotations

from ..grammar import Parsed
from ..lazyre import lazy_re

_ACS = lazy_re(r"^ACSCtl:\s+(?P<flags>(?:[A-Za-z]{4,12}[+-]\s*){3,8})$")
_ACS_ON = ("SrcValid+", "ReqRedir+", "CmpltRedir+")
# dcgmi diag's tests (Deployment, Integration, Hardware, Stress) by the names its table prints
_DCGM_TESTS = frozenset((
    "blacklist", "denylist", "nvml library", "cuda main library", "cuda toolkit libraries", "permissions and os blocks",
    "persistence mode", "environment variables", "page retirement/row remap", "graphics processes", "inforom",
    "software", "context create", "pcie", "gpu memory", "memory", "diagnostic", "sm stress", "targeted stress",
    "targeted power", "memory bandwidth", "memtest", "pulse test", "eud", "cpu eud", "nvbandwidth"))
# a row; searched along the line, since a paste's repair joins the table's lines of one width into one (a hard wrap)
_DCGM_ROW = lazy_re(r"(?:^|[|+])\|[ \t]{0,40}(?P<test>[A-Za-z][\w /()+.-]{0,40}?)[ \t]{0,60}\|[ \t]{0,4}Fail"
                    r"(?:[ \t]{0,4}-[ \t]{0,4}(?P<gpus>All|GPUs?:[ \t]{0,4}\d{1,3}(?:,[ \t]{0,4}\d{1,3}){0,63}))?[ \t]{0,80}\|(?=[|+]|$)")
_SMI_ROW = lazy_re(r"^\|.*\bERR!.*\|$")
_SMI_FIELD = lazy_re(r"\|[^|\n]{0,200}\bERR![^|\n]{0,200}\|")
_FABRIC_STATE = lazy_re(r"^State\s+: (?P<state>In Progress|Not Started)$")
_DEVINFO_STATE = lazy_re(r"^state:\s+(?P<state>PORT_(?:DOWN|INIT|ARMED))\s*\(\d\)$")
_IBSTAT_STATE = lazy_re(r"^(?:State:\s+(?P<state>Down|Initializing|Armed)|Physical state:\s+(?P<phys>Polling|Disabled|LinkErrorRecovery))$")
_FM_UNIT = lazy_re(r"nvidia-fabricmanager(?:\.service)?: (?:(?:Main|Control) process exited, code=\w+, status=(?P<status>[^\s,]{1,40})"
                   r"|Failed with result '(?P<result>[\w-]{1,40})'|Start request repeated too quickly)"
                   r"|Job for nvidia-fabricmanager\.service failed because (?P<why>[\w ]{1,80}?)\."
                   r"|nv-fabricmanager [^\"]{0,200}\" failed! Exit code: (?P<code>\d{1,3})")
_FM_HEAD = lazy_re(r"^(?:[●○×*] )?nvidia-fabricmanager\.service(?: - |$)")
_UNIT_DOWN = lazy_re(r"^Active: (?P<status>(?:failed|inactive) \([\w :-]{1,40}\)|activating \(auto-restart\))")
_CMDLINE = lazy_re(r"^(?:BOOT_IMAGE=\S+ |GRUB_CMDLINE_LINUX(?:_DEFAULT)?=[\"'])")
_IOMMU_ON = lazy_re(r"(?<![\w.-])(?P<setting>(?:intel|amd)_iommu=on)\b")
_IOMMU_PT = lazy_re(r"(?<![\w.-])(?:iommu=pt|iommu\.passthrough=(?:1|on|y))\b")
_MEMLOCK = lazy_re(r"^max locked memory\s+\(kbytes, -l\)\s+(?P<size>\d{1,12})$")
_HOSTS_LOOPBACK = lazy_re(r"^127\.0\.1\.1\s+(?P<host>[A-Za-z0-9][\w.-]{0,252})(?:\s+[\w.-]{1,253})*\s*(?:#.*)?$")
_TOPO_CELL = frozenset(("X", "SYS", "SOC", "NODE", "PHB", "PXB", "PIX"))
_TOPO_FAR = frozenset(("SYS", "SOC", "NODE", "PHB"))
_TOPO_DEV = lazy_re(r"^(?:GPU(?P<gpu>\d{1,2})|NIC(?P<nic>\d{1,2})|(?P<name>mlx\d_(?:bond_)?\d{1,3}))$")
_BRIDGE_INET = lazy_re(r"^inet (?P<address>172\.17\.\d{1,3}\.\d{1,3})/16 (?:brd 172\.17\.255\.255 )?scope global "
                       r"(?P<interface>[\w.@-]{1,30})$")


def _check(check: str, level: str = "INFO", **fields: str | None) -> Parsed:
    out = {"check": check}
    out.update({k: v for k, v in fields.items() if v})
    return Parsed("host.check", level, "host.check", out)


def _topo_cells(tokens: list[str]) -> list[str]:
    """The leading path cells of a ``nvidia-smi topo -m`` row (after its device name)."""
    cells = []
    for t in tokens:
        if t not in _TOPO_CELL and not (t.startswith("NV") and t[2:].isdigit() and len(t) <= 4):
            break
        cells.append(t)
    return cells


def _topo_row(line: str) -> Parsed | None:
    """``topo_no_nvlink`` / ``topo_nic_far`` for a row of ``nvidia-smi topo -m``'s matrix; None otherwise."""
    tokens = line.split(None, 80)
    m = _TOPO_DEV.match(tokens[0])
    if m is None:
        return None
    cells = _topo_cells(tokens[1:80])
    if len(cells) < 2 or cells.count("X") != 1 or len(cells) < len(tokens) - 1 - 6:
        return None
    x = cells.index("X")
    if m["gpu"] is not None:
        others = [c for c in cells if c != "X"]
        if x != int(m["gpu"]) or not all(c in _TOPO_FAR for c in others):
            return None
        return _check("topo_no_nvlink", gpu=tokens[0], paths=", ".join(sorted(set(others))))
    gpus = cells[:x - int(m["nic"])] if m["nic"] is not None else [c for c in cells if c != "X"]
    if not gpus or not all(c in _TOPO_FAR for c in gpus):
        return None
    return _check("topo_nic_far", nic=tokens[0], paths=", ".join(sorted(set(gpus))))


def classify_hostcheck(line: str) -> Parsed | None:
    """``host.check`` for a line of a diagnostic command's output (``line`` stripped); None otherwise."""
    c = line[:1]
    if c == "A" and line.startswith("ACSCtl:"):
        m = _ACS.match(line)
        if m is not None:
            on = [f for f in m["flags"].split() if f in _ACS_ON]
            return _check("acs_enabled", "WARN", flags=" ".join(on)) if on else None
        return None
    if c in "|+" and "| Fail" in line:
        for m in _DCGM_ROW.finditer(line, 0, min(len(line), 65536)):
            if m["test"].lower().replace("_", " ") in _DCGM_TESTS:
                return _check("dcgm_fail", "ERROR", test=m["test"], gpus=m["gpus"] or "All")
        return None
    if c in "|+" and "ERR!" in line:
        # (a table whose lines a paste's hard-wrap repair joined into one: a field of one of its rows)
        hit = _SMI_ROW.match(line) if c == "|" else _SMI_FIELD.search(line, 0, min(len(line), 65536))
        return _check("gpu_err", "ERROR") if hit is not None else None
    if c == "S" and line.startswith("State ") and " : " in line:
        m = _FABRIC_STATE.match(line)
        return _check("fabric_state", "ERROR", state=m["state"]) if m is not None else None
    if c in "sSP" and ("tate:" in line):
        m = _DEVINFO_STATE.match(line) or _IBSTAT_STATE.match(line)
        if m is not None:
            st = m.groupdict()
            return _check("ib_port_down", "WARN", state=st.get("state") or "Physical state " + st["phys"])
        return None
    if "-fabricmanager" in line:
        m = _FM_UNIT.search(line, 0, min(len(line), 512))
        if m is not None:
            status = m["status"] or m["result"] or m["why"] or (m["code"] and f"exit code {m['code']}")
            return _check("fm_failed", "ERROR", status=status or "start request repeated too quickly")
        return _check("fm_unit") if _FM_HEAD.match(line) else None
    if c == "A" and line.startswith("Active: "):
        m = _UNIT_DOWN.match(line)
        if m is None:
            return None
        return _check("unit_down", "ERROR" if m["status"].startswith("failed") else "WARN", status=m["status"])
    if c in "BG" and _CMDLINE.match(line):
        m = _IOMMU_ON.search(line, 0, min(len(line), 4096))
        if m is not None and _IOMMU_PT.search(line, 0, min(len(line), 4096)) is None:
            return _check("iommu_translated", "WARN", setting=m["setting"])
        return None
    if c == "m" and line.startswith("max locked memory"):
        m = _MEMLOCK.match(line)
        return _check("memlock_limit", "WARN", size=m["size"]) if m is not None else None
    if c == "1" and line.startswith("127.0.1.1"):
        m = _HOSTS_LOOPBACK.match(line)
        return _check("hosts_loopback", "WARN", host=m["host"]) if m is not None else None
    if c in "GNm" and (line.startswith("GPU") or line.startswith("NIC") or line.startswith("mlx")):
        return _topo_row(line)
    if c == "i" and line.startswith("inet 172.17."):
        m = _BRIDGE_INET.match(line)
        if m is not None and not m["interface"].startswith("docker"):
            return _check("docker_bridge", "WARN", address=m["address"], interface=m["interface"])
    return None
