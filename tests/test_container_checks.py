"""An NGC container's start-up checks (logdoc/classify/container.py) and what the rules make of them."""
from __future__ import annotations

from logdoc.api import explain
from logdoc.classify.container import classify_container
from logdoc.pipeline import parse_text

BANNER = """\
=============
== PyTorch ==
=============

NVIDIA Release 22.12 (build 49968248)

NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be
   insufficient for PyTorch.  NVIDIA recommends the use of the following flags:
   docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 ...
"""
SYSTEM_ERROR = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
                "unhandled system error, NCCL version 2.14.3\n")


def _ids(report):
    return [d["id"] for d in report["diagnoses"]]


def test_each_check_is_read_with_its_values():
    cases = {
        "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be": ("shm_default", {"size": "64MB"}),
        "   insufficient for TensorFlow.  NVIDIA recommends the use of the following flags:": ("shm_default", {"framework": "TensorFlow"}),
        "   insufficient.  NVIDIA recommends the use of the following flags:": ("shm_default", {}),
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.": ("no_driver", {}),
        "ERROR: This container was built for NVIDIA Driver Release 440.33 or later, but": ("driver_too_old", {"required": "440.33"}),
        "[[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]": ("compat_status", {"status": "CUDA Driver UNAVAILABLE (cuInit(0) returned 804)"}),
        "WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this version of the container": ("unsupported_gpu", {"gpu": "GeForce RTX 4090"}),
        "ERROR: No supported GPU(s) detected to run this container": ("no_supported_gpu", {}),
        "Failed to detect NVIDIA driver version.": ("driver_version_unknown", {}),
        "NOTE: CUDA Forward Compatibility mode ENABLED.": ("forward_compat", {}),
    }
    for line, (check, values) in cases.items():
        parsed = classify_container(line.strip())
        assert parsed is not None and parsed.kind == "container.check", line
        assert parsed.fields["check"] == check, line
        for k, v in values.items():
            assert parsed.fields[k] == v, (line, k)


def test_other_lines_are_not_checks():
    for line in ("docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 ...",
                 "NVIDIA Release 22.12 (build 49968248)", "insufficient memory for the batch, NVIDIA GPU busy",
                 "The SHMEM heap of NVSHMEM is 1 GB"):
        assert classify_container(line) is None, line


def test_checks_become_events_in_a_log():
    kinds = [(e.kind, e.fields.get("check")) for e in parse_text(BANNER).events]
    assert ("container.check", "shm_default") in kinds


def test_the_shm_note_alone_is_a_note_not_an_error():
    report = explain(BANNER)
    assert not [d for d in report["diagnoses"] if d["severity"] == "error"]
    assert "LD390" in [n["id"] for n in report["notes"]] + _ids(report)


def test_system_error_in_a_64mb_container_is_shared_memory():
    report = explain(BANNER + "\n" + SYSTEM_ERROR)
    first = report["diagnoses"][0]
    assert first["id"] == "LD391" and first["category"] == "shm_exhausted"


def test_system_error_without_the_note_is_not_blamed_on_shared_memory():
    assert "LD391" not in _ids(explain(SYSTEM_ERROR))


def test_no_driver_and_old_driver():
    assert _ids(explain("WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"))[0] == "LD845"
    old = ("ERROR: This container was built for NVIDIA Driver Release 525.85 or later, but\n"
           "       version 470.82.01 was detected and compatibility mode is UNAVAILABLE.\n")
    assert _ids(explain(old))[0] == "LD846"
