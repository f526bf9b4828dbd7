"""The command that started a container, pasted beside the job's log: ``docker run`` of several GPUs that leaves
/dev/shm at Docker's default (logdoc/classify/container.py, ``docker_run_default_shm``) and what the rules make of it."""
from __future__ import annotations

import pytest

from logdoc.api import explain
from logdoc.classify.container import classify_docker_run
from logdoc.pipeline import parse_text

SYSTEM_ERROR = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
                "unhandled system error, NCCL version 2.14.3\n")


@pytest.mark.parametrize("command, gpus", [
    ("docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nproc_per_node=8 train.py", "all"),
    ("docker run --gpus=4 --network host my-image bash run.sh", "4"),
    ("docker run --gpus '\"device=0,1\"' --rm my-image python train.py", "device=0,1"),
    ("sudo docker container run --rm --gpus \"device=2,3\" my-image", "device=2,3"),
    ("nvidia-docker run --gpus all my-image", "all"),
    ("$ docker run --gpus all my-image", "all"),
    ("root@dgx-01:~# docker run --gpus all my-image", "all"),
    # continued lines that the record holds (an indented command) are read with it
    ("docker run --gpus all \\\n\t-v /data:/data \\\n\tmy-image", "all"),
])
def test_a_docker_run_of_several_gpus_without_shm_options(command, gpus):
    p = classify_docker_run(command)
    assert p is not None and p.kind == "container.check"
    assert p.fields == {"check": "docker_run_default_shm", "gpus": gpus}


@pytest.mark.parametrize("command", [
    "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it nvcr.io/nvidia/pytorch:24.01-py3",
    "docker run --gpus all --ipc host my-image",
    "docker run --gpus all --ipc=container:trainer my-image",
    "docker run --gpus all --shm-size=16g my-image",
    "docker run --gpus all --shm-size 1g my-image",
    "docker run --gpus all -v /dev/shm:/dev/shm my-image",
    "docker run --gpus all --mount type=tmpfs,destination=/dev/shm,tmpfs-size=8g my-image",
    "docker run --gpus 1 my-image",                       # one GPU: nothing shares /dev/shm between GPUs
    "docker run --gpus device=0 my-image",
    "docker run -it --rm ubuntu bash",                    # no GPU asked for
    "docker run --gpus all -it --rm \\",                  # the rest of the command is not in the record
    "docker run --gpus all \\\n  -it \\",                 # nor here
    "docker ps --gpus all",
    "I ran docker run --gpus all my-image and it failed",  # a sentence about a command
    "docker run --gpusall my-image",
])
def test_other_commands_say_nothing(command):
    assert classify_docker_run(command) is None


@pytest.mark.parametrize("text", [
    "docker run --gpus all my-image torchrun --nproc_per_node=8 train.py\n",
    "```\n$ docker run --gpus all my-image torchrun --nproc_per_node=8 train.py\n```\n",   # a markdown code block
    "> ```bash\n> docker run --gpus all my-image torchrun --nproc_per_node=8 train.py\n> ```\n",  # quoted in a reply
])
def test_the_command_is_read_in_a_paste(text):
    checks = [(e.kind, e.fields.get("check")) for e in parse_text(text).events]
    assert checks == [("container.check", "docker_run_default_shm")]


def test_the_command_alone_is_a_warning_not_an_error():
    d = explain("$ docker run --gpus all -it my-image torchrun --nproc_per_node=8 train.py\n")["diagnoses"]
    assert [(x["id"], x["severity"]) for x in d] == [("LD330", "warning")]


def test_the_command_comes_after_the_jobs_own_error():
    text = ("$ docker run --gpus all -it my-image torchrun --nproc_per_node=8 train.py\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n")
    cats = [x["category"] for x in explain(text)["diagnoses"]]
    assert cats[0] == "cuda_oom" and "shm_exhausted" in cats


def test_system_error_in_a_container_started_without_shm_options():
    report = explain("$ docker run --gpus all -it my-image torchrun --nproc_per_node=8 train.py\n" + SYSTEM_ERROR)
    first = report["diagnoses"][0]
    assert first["id"] == "LD331" and first["category"] == "shm_exhausted"
    # with --ipc=host the same error is not blamed on /dev/shm
    other = explain("$ docker run --gpus all --ipc=host -it my-image torchrun --nproc_per_node=8 train.py\n" + SYSTEM_ERROR)
    assert "LD331" not in [d["id"] for d in other["diagnoses"]]


# ---- a Kubernetes pod spec (container.check k8s_gpus / k8s_mounts / k8s_shm_mount, LD332) ----

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer-0
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.01-py3
    command: ["torchrun", "--nproc_per_node=8", "train.py"]
    resources:
      limits:
        nvidia.com/gpu: 8
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
"""


@pytest.mark.parametrize("text", [
    POD,
    "```yaml\n" + POD + "```\n",                                          # a markdown code block
    "".join("> " + ln + "\n" for ln in POD.splitlines()),                # quoted in a reply
])
def test_a_pod_of_several_gpus_without_a_shm_mount(text):
    d = explain(text)["diagnoses"]
    assert [(x["id"], x["severity"]) for x in d] == [("LD332", "warning")]


@pytest.mark.parametrize("text", [
    POD.replace("mountPath: /data", "mountPath: /dev/shm"),               # the memory-backed emptyDir is mounted
    POD.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 1"),                # one GPU
    POD.split("    volumeMounts:")[0],                                    # the mounts are not in the paste
])
def test_other_specs_say_nothing(text):
    assert "LD332" not in [x["id"] for x in explain(text)["diagnoses"]]


def test_the_spec_lines():
    from logdoc.classify.container import classify_container
    assert classify_container('        "nvidia.com/gpu": "4",').fields == {"check": "k8s_gpus", "gpus": "4"}
    assert classify_container("    - mountPath: /dev/shm").fields == {"check": "k8s_shm_mount"}
    assert classify_container("    volumeMounts:").fields == {"check": "k8s_mounts"}
    assert classify_container("    mountPath: /dev/shm/cache") is None
    assert classify_container("nvidia.com/gpu is the resource name") is None
