"""Lines that say the job was stopped from outside: a scheduler's time limit or cancellation, srun
aborting the step, the OOM killer, a shell's ``Killed``, exit status 137, Kubernetes ``OOMKilled``
or eviction; and a process that a fault of its own ended, as srun (``task 3: Bus error``) or an exit status of
128 + N (``Exit Code: 135``) reports it: ``reason`` ``crashed`` with its ``signal``.

A job stopped this way often prints no error of its own (the logs just end); saying so is the first
step of reading such a log. :func:`classify` gives a ``job.stopped`` event with ``source`` (``slurm``,
``srun``, ``mpirun`` (or the name Open MPI's launcher ran as), ``kernel``, ``shell``, ``kubernetes``,
``exit_status``), ``reason`` (``time_limit``,
``cancelled``, ``preempted``, ``node_fail``, ``oom``, ``evicted``, ``killed``, ``terminated``,
``step_aborted``), and where printed ``job_id``, ``step``, ``node``, ``stop_time``, ``tasks``,
``process_rank``, ``exit_code``, ``signal``, ``pid``, ``process``. ``reason`` ``oom`` is a cause; the others
are the outside world ending the job. :func:`stopped_sentence` words such a stop for a finding.

Standard library only (runs in the browser).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .classify.cut import cut_search
from .grammar import Parsed
from .lazyre import lazy_re

if TYPE_CHECKING:
    from .events import Event

KIND = "job.stopped"
# The literal keyword the prefilter adds for these lines. Slurm's `slurmstepd: error: *** ... CANCELLED`,
# `srun: error: ...` and most exit-status reports already hold a keyword (``rror``, ``ailed``); a line
# without any (`srun: Job step aborted`, a bare `exit code 137`) is read only when such a keyword is in it.
KEYWORDS = ("illed",)

_SLURM = lazy_re(
    r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+) ON (?P<node>\S+) CANCELLED AT (?P<stop_time>\S+)"
    r"(?: DUE TO (?P<due>[A-Z][A-Z _]*?)(?:, SEE SLURMCTLD LOG FOR DETAILS)?)?(?: \(?by (?:uid )?\S+?\)?)? \*\*\*")
# (slurmstepd's req.c says of a node failure `*** %s ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR
# DETAILS ***`; srun's own report of it, src/srun/srun_job.c _node_fail_handler: `srun: error: Node failure on <nodelist>`)
_SRUN_NODE_FAIL = lazy_re(r"\bsrun: error: Node failure on (?P<node>[\w.\[\],-]{1,200})")
_DUE = {"TIME LIMIT": "time_limit", "PREEMPTION": "preempted", "NODE FAILURE": "node_fail",
        "JOB REQUEUE": "cancelled", "REQUEUE": "cancelled"}
_SLURM_OOM = lazy_re(r"Detected (?P<n>\d+) oom[-_]kill event(?:s|\(s\))? in (?:StepId=|step )?(?P<id>[\w.]+)")
_SRUN_ABORT = lazy_re(r"\bsrun: Job step aborted\b")
_SRUN_TASK = lazy_re(r"\bsrun: error: (?P<node>[\w.-]+): tasks? (?P<tasks>[\d,\-\[\] ]+?): "
                        r"(?P<what>Killed|Terminated|Out Of Memory|Aborted|Bus error|Segmentation fault|Illegal instruction"
                        r"|Floating point exception)\b")
# srun names a task's fatal signal by strsignal(): the faults of native code, as torchrun's exit codes -7 / -11 / -4 / -8
_SRUN_FAULT = {"Bus error": "SIGBUS", "Segmentation fault": "SIGSEGV", "Illegal instruction": "SIGILL",
               "Floating point exception": "SIGFPE"}
# Open MPI's launcher (mpirun / mpiexec / orterun, prterun from 5.0) on a process that a signal ended:
# `mpirun noticed that process rank 3 with PID 4242 on node node1 exited on signal 9 (Killed).`
_MPIRUN_SIGNAL = lazy_re(r"\b(?P<tool>mpirun|mpiexec|orterun|prterun|prte) noticed that process rank (?P<rank>\d+) with PID "
                         r"(?P<pid>\d+) on node (?P<node>\S+) exited on signal (?P<signal>9|15) \((?P<name>[^)\n]{1,40})\)")
_SRUN_FORCE = lazy_re(r"\bsrun: (?:forcing job termination|error: Timed out waiting for job step to complete)")
# the kernel's OOM killer in each release's words: `Out of memory: Killed process N (comm)` (5.x on), before it
# `Out of memory: Kill process N (comm) score S or sacrifice child` then `Killed process N (comm) total-vm:...` on a
# line of its own, and the task that ran into the limit: `<comm> invoked oom-killer: gfp_mask=...`
_KERNEL_OOM = lazy_re(r"(?:Out of memory|Memory cgroup out of memory): Kill(?:ed)? process (?P<pid>\d+) \((?P<process>[^)]*)\)"
                      r"|(?:^|[\]:] ?)Killed process (?P<pid2>\d+) \((?P<process2>[^)]*)\) total-vm:"
                      r"|(?:^|[\]:] ?)(?P<process3>\S{1,64}) invoked oom-killer: ")
_OOM_KILL = lazy_re(r"\boom-kill:constraint=\S*.*?\btask=(?P<process>[^,\s]+),pid=(?P<pid>\d+)")
_SHELL_KILLED = lazy_re(r"^(?:(?:\S+: )?line \d+: |/\S+: line \d+: )?(?P<pid>\d+)?\s*(?P<what>Killed|Terminated)"
                           r"(?:\s{2,}|\s*\(core dumped\)\s+|\s*$)(?P<cmd>.*)$")
_EXIT_137 = lazy_re(r"\b[Ee]xit(?:ed)?(?: with)?(?: [Ee]xit)? (?:[Cc]ode|[Ss]tatus)[: ]+(?P<code>13[2-9]|143)\b"
                       r"|\breturned non-zero exit status (?P<code2>13[2-9]|143)\b"
                       # (a container status in Kubernetes' own field name: the training-operator's event `Error pod %s
                       # container %s exitCode: %d terminated message: %s`, a pod's JSON `"exitCode": 137`)
                       r"|\bexitCode\"?:\s*(?P<code3>13[2-9]|143)\b")
# 128 + N: a shell's, Docker's and Kubernetes' exit status of a process that signal N ended (`Exit Code: 135`).
# 137 and 143 are the outside world (SIGKILL, SIGTERM); the others are faults of the process itself, read as
# srun's task reports are (a crash with its signal: 135 SIGBUS, 139 SIGSEGV, 134 SIGABRT).
_EXIT_SIGNALS = {132: "SIGILL", 133: "SIGTRAP", 134: "SIGABRT", 135: "SIGBUS", 136: "SIGFPE", 137: "SIGKILL",
                 138: "SIGUSR1", 139: "SIGSEGV", 143: "SIGTERM"}
_K8S_OOM = lazy_re(r"\b[Rr]eason:?\s+(?P<what>OOMKilled)\b|\"reason\":\s*\"OOMKilled\"|\bOOMKilled\b")
_K8S_EVICT = lazy_re(r"\b[Rr]eason:?\s+Evicted\b|\bThe node was low on resource: (?P<resource>[\w-]+)"
                        r"|\bPod (?:was )?evicted\b|\bStatus:\s+Failed\s+Reason:\s+Evicted\b"
                        r"|^Warning\s+Evicted\s")

# Ray's memory monitor (raylet node_manager.cc's periodic summary, and the message of the worker it
# killed) and the driver's or raylet's report of a worker that died without an exception (SIGKILL among the
# causes Ray lists). Each alternative stands on its own, so a summary hard-wrapped by a paste is still read.
_RAY_OOM = lazy_re(r"(?:\b(?P<n>\d+) Workers \(tasks / actors\) |\b)killed due to memory pressure \(OOM\)"
                      r"|\bRay killed this worker\b|\bkilled due to the node running low on memory\b"
                      r"|\bwhich exceeds the memory usage threshold of\b"
                      # (the summary's head, which a viewer's width may leave alone: `Memory on the node (IP: <ip>, ID:
                      # <id>) where the task (...` / `where the lease (`, `... (IP: <ip>) was 1.99GB / 2.00GB`)
                      r"|\bMemory on the node \(IP: [\w.:\[\]<> -]{1,64}(?:, ID: \w{1,64})?\) (?:where the (?:task|actor|lease) \(|was \d)")
# (raylet's NodeManager::HandleClientConnectionError: the worker's socket closed without an exit message, quoted by
# the RayActorError / ActorDiedError of the actor it ran; and the GCS's death cause of such an actor,
# gcs_actor_manager's GenWorkerDiedCause: `The actor is dead because its worker process has died. Worker exit
# type: SYSTEM_ERROR Worker exit detail: ...`)
# The exceptions Ray raises where such a death is all it knows (python/ray/exceptions.py): an actor's
# `ActorDiedError` / `RayActorError` with its base message `The actor died unexpectedly before finishing this task.`
# (the death cause, when the GCS has one, follows on later lines), a task's `WorkerCrashedError`.
_RAY_DIED = lazy_re(r"\bA worker died or was killed while executing (?:a|the) task by an unexpected system error\b"
                    r"|\bWorker unexpectedly exits with a connection error code\b"
                    r"|\bThe actor is dead because its worker process has died\. Worker exit type: SYSTEM_ERROR\b"
                    r"|\bThe actor died unexpectedly before finishing this task\b"
                    r"|\bThe worker died unexpectedly while executing this task\b")
# A Ray node lost, with every worker on it: the GCS's warning for a node that stopped sending heartbeats
# (`The node with node id: <id> and address: <ip> and node name: <name> has been marked dead because the detector has
# missed too many heartbeats from it.`; older releases without the address: `The node with node id <id> has
# been ...`), the dashboard agent's report that its raylet is gone (`Raylet is terminated: ip=<ip>, id=<id>.
# Termination is unexpected. ...`), and a task's `LocalRayletDiedError` (`The task's local raylet died.`).
_RAY_NODE = lazy_re(r"\bThe node with node id:? \w{1,64}(?: and address: (?P<addr>[\w.:\[\]-]{1,64}))?[^\n]{0,200}? has been marked "
                    r"dead because the detector has missed too many heartbeats\b"
                    r"|\bRaylet is terminated(?:: ip=(?P<ip>[\w.:\[\]-]{1,64}))?[^\n]{0,200}?\bTermination is unexpected\b"
                    r"|\bThe task's local raylet died\b")


def may_be(text: str) -> bool:
    """Cheap test: could this message be a stop line?"""
    return ("CANCELLED" in text or "srun:" in text or "died" in text or "marked dead" in text or "Termination is unexpected" in text or "Killed" in text or "Kill process" in text or "killed" in text or "memory usage threshold" in text or "Memory on the node" in text or "Terminated" in text
            or "oom" in text or "OOM" in text or "137" in text or "143" in text or ("13" in text and "xit" in text) or "vict" in text
            or "low on resource" in text)


_CAUSES = ("oom", "killed", "node_fail", "aborted")


def classify(text: str) -> Parsed | None:
    """A ``job.stopped`` event for one message, or None. Level ERROR for what kills (the OOM killer,
    SIGKILL, a node failure), WARN for the outside world ending the job (time limit, cancellation,
    preemption, eviction, SIGTERM, srun aborting the step)."""
    p = _classify(text)
    if p is not None:
        p.level = "ERROR" if p.fields.get("reason") in _CAUSES else "WARN"
    return p


def _classify(text: str) -> Parsed | None:
    if len(text) > 2000 or "\n" in text or not may_be(text):
        return None
    m = _SLURM.search(text)
    if m:
        due = (m.group("due") or "").strip()
        reason = _DUE.get(due, due.lower().replace(" ", "_") if due else "cancelled")
        job, _, step = m.group("id").partition(".")
        f = {"source": "slurm", "reason": reason, "job_id": job, "step": m.group("id") if m.group("what") == "STEP" else None,
             "node": m.group("node"), "stop_time": m.group("stop_time"), "due": due or None}
        return Parsed(KIND, "ERROR", "stop:slurm-cancelled", f)
    m = _SLURM_OOM.search(text)
    if m:
        return Parsed(KIND, "ERROR", "stop:slurm-oom-kill", {"source": "slurm", "reason": "oom", "step": m.group("id"),
                                                            "count": int(m.group("n"))})
    m = _SRUN_TASK.search(text)
    if m:
        what = m.group("what")
        if what in _SRUN_FAULT:
            return Parsed(KIND, "ERROR", "stop:srun-task", {"source": "srun", "reason": "crashed", "node": m.group("node"),
                                                           "tasks": m.group("tasks").strip(), "signal": _SRUN_FAULT[what]})
        reason = {"Killed": "killed", "Terminated": "terminated", "Out Of Memory": "oom", "Aborted": "aborted"}[what]
        return Parsed(KIND, "ERROR", "stop:srun-task", {"source": "srun", "reason": reason, "node": m.group("node"),
                                                       "tasks": m.group("tasks").strip()})
    m = _MPIRUN_SIGNAL.search(text) if "noticed that process rank" in text else None
    if m:
        killed = m.group("signal") == "9"
        return Parsed(KIND, "ERROR", "stop:mpirun-signal", {
            "source": m.group("tool"), "reason": "killed" if killed else "terminated", "node": m.group("node"),
            "process_rank": int(m.group("rank")), "pid": int(m.group("pid")), "signal": "SIGKILL" if killed else "SIGTERM"})
    m = _SRUN_NODE_FAIL.search(text)
    if m:
        return Parsed(KIND, "ERROR", "stop:srun-node-failure", {"source": "srun", "reason": "node_fail", "node": m.group("node")})
    if _SRUN_ABORT.search(text):
        return Parsed(KIND, "ERROR", "stop:srun-step-aborted", {"source": "srun", "reason": "step_aborted"})
    if _SRUN_FORCE.search(text):
        return Parsed(KIND, "ERROR", "stop:srun-forcing-termination", {"source": "srun", "reason": "terminated"})
    m = _KERNEL_OOM.search(text)
    if m:
        pid = m.group("pid") or m.group("pid2")
        return Parsed(KIND, "ERROR", "stop:kernel-oom-kill", {"source": "kernel", "reason": "oom", "pid": int(pid) if pid else None,
                                                             "process": m.group("process") or m.group("process2") or m.group("process3")})
    m = _OOM_KILL.search(text)
    if m:
        return Parsed(KIND, "ERROR", "stop:kernel-oom-kill", {"source": "kernel", "reason": "oom", "pid": int(m.group("pid")),
                                                             "process": m.group("process")})
    got = _ray(text, _search)
    if got is not None:
        return got
    m = _K8S_OOM.search(text)
    if m:
        return Parsed(KIND, "ERROR", "stop:k8s-oomkilled", {"source": "kubernetes", "reason": "oom", "exit_code": _code(text)})
    m = _K8S_EVICT.search(text)
    if m:
        return Parsed(KIND, "ERROR", "stop:k8s-evicted", {"source": "kubernetes", "reason": "evicted",
                                                         "resource": m.group("resource")})
    m = _SHELL_KILLED.match(text.strip())
    if m and (m.group("pid") or m.group("cmd") or text.strip() in ("Killed", "Terminated")):
        what = m.group("what")
        return Parsed(KIND, "ERROR", "stop:shell-" + what.lower(),
                      {"source": "shell", "reason": "killed" if what == "Killed" else "terminated",
                       "signal": "SIGKILL" if what == "Killed" else "SIGTERM",
                       "pid": int(m.group("pid")) if m.group("pid") else None, "process": m.group("cmd").strip() or None})
    m = _EXIT_137.search(text)
    if m:
        code = int(m.group("code") or m.group("code2") or m.group("code3"))
        if code == 138:
            return None  # SIGUSR1: a program's own signal, nothing to say
        reason = {137: "killed", 143: "terminated"}.get(code, "crashed")
        return Parsed(KIND, "ERROR", "stop:exit-" + str(code),
                      {"source": "exit_status", "reason": reason, "exit_code": code, "signal": _EXIT_SIGNALS[code]})
    # Ray's messages, cut by a viewer's or a terminal's width after their head (classify/cut.py cut_search)
    got = _ray(text, cut_search)
    if got is not None:
        got.fields["cut"] = True
    return got


def _search(rx, text: str):
    return rx.search(text)


def _ray(text: str, search) -> Parsed | None:
    """The stop a Ray message says (its memory monitor, a worker or a node that died) as ``search`` finds it."""
    m = search(_RAY_OOM, text)
    if m and m.group("n") != "0":
        return Parsed(KIND, "ERROR", "stop:ray-memory-monitor", {"source": "ray", "reason": "oom",
                                                                "count": int(m.group("n")) if m.group("n") else None})
    if search(_RAY_DIED, text):
        return Parsed(KIND, "ERROR", "stop:ray-worker-died", {"source": "ray", "reason": "killed"})
    m = search(_RAY_NODE, text)
    if m:
        return Parsed(KIND, "ERROR", "stop:ray-node-died", {"source": "ray", "reason": "node_fail", "node": m["addr"] or m["ip"]})
    return None


_CODE = lazy_re(r"[Ee]xit [Cc]ode:?\s+(\d+)|\"exitCode\":\s*(\d+)")


def _code(text: str) -> int | None:
    m = _CODE.search(text)
    if not m:
        return None
    return int(m.group(1) or m.group(2))


_STOP_WORDS = {"time_limit": "its time limit", "cancelled": "a cancellation", "preempted": "preemption",
               "node_fail": "a node failure", "step_aborted": "aborting the step", "terminated": "SIGTERM",
               "evicted": "eviction", "oom": "the OOM killer", "killed": "SIGKILL"}


def stopped_sentence(ev: Event | None) -> str | None:
    """``The job was stopped from outside (slurm: its time limit, at 2026-11-30T09:16:02).``"""
    if ev is None:
        return None
    f = ev.fields
    if ev.kind == "torchrun.signal":
        return f"The job was then stopped from outside (torchrun received {f.get('signal') or 'a signal'})."
    why = _STOP_WORDS.get(f.get("reason"), f.get("reason") or "a signal")
    at = f", at {f['stop_time']}" if f.get("stop_time") else ""
    return f"The job was then stopped from outside ({f.get('source')}: {why}{at})."
