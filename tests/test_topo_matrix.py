"""nvidia-smi's topology matrix (`nvidia-smi topo -m`) and its `No devices were found`, pasted beside a job's log
or instead of it: a GPU whose every path crosses the CPU, a NIC far from every GPU."""
from __future__ import annotations

import pytest

from logdoc import kb
from logdoc.api import build_report
from logdoc.classify.hostcheck import classify_hostcheck
from logdoc.pipeline import parse_sources

# nvidia-smi topo -m as recent drivers print it (tab-separated, the header underlined with ANSI codes)
_PCIE_2S = ("\x1b[4m\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
            "GPU0\t X \tSYS\tSYS\t0-23\t0\t\tN/A\n"
            "GPU1\tSYS\t X \tPIX\t24-47\t1\t\tN/A\n"
            "NIC0\tSYS\tPIX\t X \t\t\t\t\n\n"
            "Legend:\n\n  X    = Self\n"
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
            "  NV#  = Connection traversing a bonded set of # NVLinks\n\n"
            "NIC Legend:\n\n  NIC0: mlx5_0\n")
_NVLINK = ("\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\n"
           "GPU0\t X \tNV12\tNV12\tNV12\tPXB\t0-63\t0\n"
           "GPU1\tNV12\t X \tNV12\tNV12\tPXB\t0-63\t0\n"
           "GPU2\tNV12\tNV12\t X \tNV12\tSYS\t64-127\t1\n"
           "GPU3\tNV12\tNV12\tNV12\t X \tSYS\t64-127\t1\n"
           "NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\n")


def _report(text: str) -> dict:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())


def _ids(rep: dict) -> list[str]:
    return [d["id"] for d in rep["diagnoses"]] + [n.get("id") for n in rep.get("notes") or [] if isinstance(n, dict)]


@pytest.mark.parametrize("line, check, fields", [
    ("GPU0\t X \tSYS\tSYS\t0-23\t0\t\tN/A", "topo_no_nvlink", {"gpu": "GPU0", "paths": "SYS"}),
    ("GPU1     PHB      X      NODE    0-15    0", "topo_no_nvlink", {"gpu": "GPU1", "paths": "NODE, PHB"}),
    ("GPU1\tSOC\t X \t6-11", "topo_no_nvlink", {"gpu": "GPU1", "paths": "SOC"}),   # before SYS was called SYS
    ("NIC0\tSYS\tSYS\t X \tPIX", "topo_nic_far", {"nic": "NIC0", "paths": "SYS"}),
    ("NIC1\tNODE\tSYS\tPIX\t X", "topo_nic_far", {"nic": "NIC1", "paths": "NODE, SYS"}),
    ("mlx5_0\tPHB\tPHB\t X ", "topo_nic_far", {"nic": "mlx5_0", "paths": "PHB"}),
])
def test_rows_of_the_matrix_are_read(line, check, fields):
    p = classify_hostcheck(line.strip())
    assert p is not None and p.fields["check"] == check
    for k, v in fields.items():
        assert p.fields[k] == v


@pytest.mark.parametrize("line", [
    "GPU0\t X \tNV12\tNV12\tSYS\t0-63\t0",          # NVLink
    "GPU0\t X \tPIX\tSYS\t0-23\t0",                 # a PCIe switch shared with GPU1
    "GPU2\t X \tSYS\t0-23",                         # X not at the GPU's index: not a row of the matrix
    "GPU0\tSYS\tSYS",                               # no X
    "NIC0\tPXB\tSYS\t X ",                          # GPU0 next to the NIC
    "NIC1\tSYS\tSYS\tNODE\tPXB\tPIX\t X ",          # GPU3 next to it (the PIX is NIC0)
    "GPU0: NVIDIA A100-SXM4-80GB (UUID: GPU-4b2c1d4e-1111-2222-3333-444455556666)",
    "GPU0 X SYS is what I see but training says otherwise, what do these letters mean here?",
])
def test_healthy_rows_and_other_lines_are_not_checks(line):
    assert classify_hostcheck(line.strip()) is None


def test_a_healthy_nvlink_matrix_says_nothing():
    rep = _report(_NVLINK)
    assert rep["diagnoses"] == []
    assert not {"LD861", "LD868", "LD234"} & set(_ids(rep))


def test_a_pcie_matrix_alone_is_a_note_not_a_cause():
    rep = _report(_PCIE_2S)
    assert [d for d in rep["diagnoses"] if d["role"] == "root_cause" and d["id"] in ("LD861", "LD868", "LD234")] == []
    assert "LD868" in _ids(rep)


@pytest.mark.parametrize("wrap", [
    lambda s: s,
    lambda s: "```\n$ nvidia-smi topo -m\n" + s + "```\n",
    lambda s: "".join(f"node3: {x}\n" for x in s.splitlines()),
    lambda s: "".join(f"[1,0]<stdout>:{x}\n" for x in s.splitlines()),
    lambda s: "".join(f"2024-05-01T10:00:00.123Z {x}\n" for x in s.splitlines()),
])
def test_the_matrix_beside_a_peer_to_peer_failure_explains_it(wrap):
    rep = _report(wrap(_PCIE_2S) + "Device=0 CANNOT Access Peer Device=1\n")
    top = rep["diagnoses"][0]
    assert top["id"] == "LD861" and "GPU0" in top["title"] and "SYS" in top["title"]


@pytest.mark.parametrize("wrap", [
    lambda s: s,
    lambda s: "```\n$ nvidia-smi\n" + s + "\n```\n",
    lambda s: "gpu-node-7: " + s,
    lambda s: "[1,0]<stdout>:" + s,
])
def test_nvidia_smi_finding_no_gpu(wrap):
    d = _report(wrap("No devices were found") + "\n")["diagnoses"]
    assert d and d[0]["id"] == "LD869" and d[0]["category"] == "fabric_manager_or_driver"


@pytest.mark.parametrize("text", [
    "No devices were found matching the filter\n",
    "INFO: No devices were found on the bus yet, retrying\n",
])
def test_other_no_devices_sentences_are_not_nvidia_smi(text):
    assert all(d["id"] != "LD869" for d in _report(text)["diagnoses"])
