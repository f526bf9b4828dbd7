"""Diagnostic commands' output pasted beside (or instead of) a job's log: lspci's ACS bits, nvidia-smi's
ERR!, IB port states, the Fabric Manager's unit, ulimit's memlock, /etc/hosts' 127.0.1.1, Docker's bridge."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.hostcheck import classify_hostcheck
from logdoc.pipeline import parse_sources


def _report(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())


@pytest.mark.parametrize("line, check, fields", [
    ("ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-", "acs_enabled",
     {"flags": "SrcValid+ ReqRedir+ CmpltRedir+"}),
    ("|   3  NVIDIA H100 80GB HBM3  On  | 00000000:9B:00.0 Off |   ERR! |", "gpu_err", {}),
    ("state:\t\t\tPORT_INIT (2)", "ib_port_down", {"state": "PORT_INIT"}),
    ("Physical state: Polling", "ib_port_down", {"state": "Physical state Polling"}),
    ("Dec 04 10:00:00 n1 systemd[1]: nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE",
     "fm_failed", {"status": "1/FAILURE"}),
    # the unit starts a script (`Control process`), systemctl's own answer, the start script's line
    ("nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
     "fm_failed", {"status": "1/FAILURE"}),
    ("Job for nvidia-fabricmanager.service failed because the control process exited with error code.",
     "fm_failed", {"status": "the control process exited with error code"}),
    ('Sep 18 03:19:01 n1 nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager -c '
     '/usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1', "fm_failed", {"status": "exit code 1"}),
    ("max locked memory       (kbytes, -l) 65536", "memlock_limit", {"size": "65536"}),
    ("127.0.1.1\tdgx-03", "hosts_loopback", {"host": "dgx-03"}),
    ("State                             : In Progress", "fabric_state", {"state": "In Progress"}),
    ("inet 172.17.0.5/16 brd 172.17.255.255 scope global eth0", "docker_bridge",
     {"address": "172.17.0.5", "interface": "eth0"}),
])
def test_each_check_reads_its_commands_format(line, check, fields):
    p = classify_hostcheck(line)
    assert p is not None and p.kind == "host.check" and p.fields["check"] == check
    for k, v in fields.items():
        assert p.fields[k] == v


@pytest.mark.parametrize("line", [
    "ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-",
    "| ERR! is what the table shows when NVML fails",      # a sentence, not a row
    "state:\t\t\tPORT_ACTIVE (4)",
    "State: Active",
    "State: Down for maintenance until 5 pm",
    "State                             : Completed",
    "max locked memory       (kbytes, -l) unlimited",
    "127.0.0.1 localhost",
    "Job for nvidia-persistenced.service failed because the control process exited with error code.",
    "nvidia-fabricmanager.service: Deactivated successfully.",
    "inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0",   # the host's own bridge
    "inet 172.17.0.2/16 is what the container got",
])
def test_other_lines_are_not_checks(line):
    assert classify_hostcheck(line) is None


def test_ibstat_output_is_read_from_its_indented_lines():
    text = "CA 'mlx5_1'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n"
    d = _report(text)["diagnoses"]
    assert d and d[0]["id"] == "LD271" and "Down" in d[0]["title"]


def test_systemctl_status_of_the_fabric_manager():
    text = ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
            "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n"
            "     Active: failed (Result: exit-code) since Mon 2024-01-01 00:00:00 UTC; 1min ago\n")
    d = _report(text)["diagnoses"]
    assert d and d[0]["id"] == "LD895" and d[0]["severity"] == "error"
    # the same state of another unit says nothing about the Fabric Manager
    assert not _report(text.replace("nvidia-fabricmanager", "nvidia-persistenced"))["diagnoses"]


def test_the_fabric_managers_own_reason_leads_the_units_failure():
    text = ("Nov 15 14:15:47 n1 nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch "
            "driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
            "Nov 15 14:15:47 n1 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
            "status=1/FAILURE\n")
    ids = [d["id"] for d in _report(text)["diagnoses"]]
    assert ids[:1] == ["LD818"] and "LD894" not in ids
    assert [d["id"] for d in _report(text.split("\n", 1)[1])["diagnoses"]][:1] == ["LD894"]


def test_a_hosts_file_keeps_its_addresses():
    # three lines that each start with an address: the addresses are the file's data, not a prefix to peel
    text = "127.0.0.1       localhost\n127.0.1.1       trainer-0\n10.0.0.2        trainer-1\n"
    res = parse_sources([("hosts", text)])
    assert [(e.line, e.fields["check"], e.fields["host"]) for e in res.events] == [(2, "hosts_loopback", "trainer-0")]
    assert _report(text)["diagnoses"][0]["category"] == "hostname_resolution"


def test_a_host_check_is_context_beside_the_error_it_explains_not_above_it():
    # a pasted ACS line beside an out-of-memory error: the error's own cause comes first
    text = ("ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n")
    cats = [d["category"] for d in _report(text)["diagnoses"]]
    assert cats[0] == "cuda_oom" and "p2p_acs_iommu_hang" in cats


@pytest.mark.parametrize("line, setting", [
    ("BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro intel_iommu=on", "intel_iommu=on"),
    ('GRUB_CMDLINE_LINUX="amd_iommu=on quiet"', "amd_iommu=on"),
    ("BOOT_IMAGE=/vmlinuz-6.8.0 ro intel_iommu=on iommu=pt", None),          # passthrough: nothing translated
    ("BOOT_IMAGE=/vmlinuz-6.8.0 ro amd_iommu=on iommu.passthrough=1", None),
    ("echo intel_iommu=on >> notes.txt", None),                               # not a command line
])
def test_the_kernel_command_lines_iommu(line, setting):
    p = classify_hostcheck(line)
    assert (p.fields["setting"] if p is not None else None) == setting
