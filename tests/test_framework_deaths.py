"""The frameworks' own words for a process, a node or a device of the job that failed (Ray's worker, actor and node
deaths in logdoc/stops.py and logdoc/classify/torch/exceptions.py; knowledge/processes.yaml LD741, LD742, LD765)."""
from __future__ import annotations

import pytest

from logdoc import kb, stops
from logdoc.api import build_report
from logdoc.pipeline import parse_sources


def _diagnoses(text: str) -> list[dict]:
    return build_report(parse_sources([("x.log", text)]), kb.load_rules())["diagnoses"]


def _ids(text: str) -> list[str]:
    return [d["id"] for d in _diagnoses(text)]


@pytest.mark.parametrize("text, rule", [
    # Ray's exceptions: a death is all they know; its OutOfMemoryError is the node's host memory, not CUDA's
    ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n", "LD742"),
    ("RayActorError: The actor died unexpectedly before finishing this task.\n", "LD742"),
    ("ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check"
     " python-core-worker-*.log files for more information.\n", "LD742"),
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n", "LD741"),
    ("ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check raylet.out for more information.\n", "LD765"),
    # the node lost, in the GCS's and the dashboard agent's words, under Ray's process prefix
    ("(raylet) 2022-09-02 12:53:00,741 WARNING worker.py:1829 -- The node with node id: 5ad7fa5dd64f and address:"
     " 10.0.0.7 and node name: 10.0.0.7 has been marked dead because the detector has missed too many heartbeats"
     " from it.\n", "LD765"),
    ("2022-10-05 10:30:47,443 ERROR agent.py:217 -- Raylet is terminated: ip=10.0.0.7, id=d2a5c564. Termination is"
     " unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer\n", "LD765"),
])
def test_ray_deaths_are_named(text, rule):
    ids = _ids(text)
    assert ids and ids[0] == rule and "LD710" not in ids


def test_a_ray_oom_is_not_a_cuda_oom():
    d = _diagnoses("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    ray.get(refs)\n"
                   "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n")
    assert d and d[0]["id"] == "LD741" and all(x["category"] != "cuda_oom" for x in d)


def test_the_death_cause_ray_gives_leads():
    # the actor's base message, then the cause the GCS recorded: the memory monitor's kill is the finding
    ids = _ids("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
               "\tclass_name: RayWorkerWrapper\n\tpid: 4242\n"
               "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY Worker exit"
               " detail: Task was killed due to the node running low on memory.\n")
    assert ids and ids[0] == "LD741" and "LD742" not in ids


def test_ray_node_fields():
    p = stops.classify("The node with node id: 5ad7 and address: 10.0.0.7 and node name: n1 has been marked dead because"
                       " the detector has missed too many heartbeats from it.")
    assert p is not None and p.fields == {"source": "ray", "reason": "node_fail", "node": "10.0.0.7"}
    assert stops.classify("Raylet is terminated: ip=10.0.0.7, id=d2a5. Termination is graceful.") is None
    assert stops.classify("The actor died because of an error raised in its creation task, ray::A.__init__()") is None
