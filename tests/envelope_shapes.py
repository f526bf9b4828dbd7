"""The prefixes that launchers, loggers, log shippers and pastes put before a log line, and the
catalog messages they are put around (tests/test_envelope_matrix.py).

Each shape is a function ``(line, k) -> text`` that writes one line as that tool writes it (``k``
varies the rank, pid or host between messages); a message of several lines (a traceback) has every
line wrapped, as a launcher or a logger prefixes every line it forwards. The layouts are those the
tools document or print in their source (named beside each); the values (hosts, pids, times) are
neutral ones.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STAMP = "2026-12-02T09:00:00.123456789Z"


def _per_line(fn):
    def wrap(text: str, k: int) -> str:
        return "\n".join(fn(line, k) for line in text.split("\n"))
    wrap.__doc__ = fn.__doc__
    return wrap


def _tee(line: str, k: int) -> str:
    return f"[default{k % 8}]:{line}"


# ------------------------------------------------------------------------------------------------
# launchers

LAUNCHERS = {
    # torchrun --tee 3 / --redirects: torch/distributed/elastic/multiprocessing (`[{role}{local_rank}]:`)
    "torchrun tee": lambda l, k: f"[default{k % 8}]:{l}",
    # torch >= 2.2 (`[rank3]: ` before every line of a rank's traceback)
    "rank": lambda l, k: l if l.startswith("[rank") else f"[rank{k}]: {l}",
    "tee rank": lambda l, k: f"[default{k % 8}]:{l}" if l.startswith("[rank") else f"[default{k % 8}]:[rank{k}]: {l}",
    # Open MPI mpirun --tag-output: `[jobid,rank]<stream>:`
    "openmpi": lambda l, k: f"[1,{k}]<stderr>:{l}",
    # SageMaker's mpirun jobs (sagemaker-training-toolkit's tests): `[1,mpirank:N,algo-K]<stream>:`
    "openmpi sagemaker": lambda l, k: f"[1,mpirank:{k},algo-{k % 2 + 1}]<stderr>:{l}",
    # Open MPI --timestamp-output --tag-output: ctime(), then the tag (iof_base_output.c); Horovod's horovodrun
    "openmpi timestamp": lambda l, k: f"Fri Dec  4 12:00:0{k % 10} 2026[1,{k}]<stdout>:{l}",
    # MPICH / Hydra mpiexec -prepend-rank (-l): `[rank] `
    "mpich": lambda l, k: f"[{k}] {l}",
    # srun --label: `task: ` (right-aligned when the job has more tasks than one digit holds)
    "srun": lambda l, k: f"{k}: {l}",
    "srun padded": lambda l, k: f"{k:>3}: {l}",
    # pdsh (and DeepSpeed's PDSH runner): `host: `
    "pdsh": lambda l, k: f"gpu-node-{k:02d}: {l}",
    "deepspeed pdsh tee": lambda l, k: f"worker-{k}: [default{k % 8}]:{l}",
    # the Hugging Face test helper that runs a launcher (`accelerate test`; testing_utils execute_subprocess_async):
    # `print("stderr:", line)`
    "hf test helper": lambda l, k: f"stderr: {l}",
    # Ray: worker output `(pid=N)`, an actor's `(Actor pid=N, ip=...)`
    "ray pid": lambda l, k: f"(pid={4000 + k}) {l}",
    "ray actor": lambda l, k: f"(RayTrainWorker pid={4000 + k}, ip=10.0.0.{k + 1}) {l}",
    # vLLM's multiprocessing executor: `(VllmWorker rank=N pid=N)`
    "vllm worker": lambda l, k: f"(VllmWorker rank={k} pid={4000 + k}) {l}",
    # vLLM's later process names (`VllmWorker TP1`, `EngineCore_DP0`, `Worker_TP1`) before the pid
    "vllm worker tp": lambda l, k: f"(VllmWorker TP{k} pid={4000 + k}) {l}",
    "vllm engine core": lambda l, k: f"(EngineCore_DP0 pid={4000 + k}) {l}",
    # SkyPilot's per-node output of a multi-node task: `(worker1, rank=1, pid=N, ip=A) `, `(head, rank=0, ...)`
    "skypilot": lambda l, k: f"(worker{k}, rank={k}, pid={4000 + k}, ip=10.0.0.{k + 2}) {l}",
    # vLLM's Ray executor: `(RayWorkerWrapper pid=N, ip=A) `
    "ray worker wrapper": lambda l, k: f"(RayWorkerWrapper pid={4000 + k}, ip=10.0.0.{k + 1}) {l}",
    "ray actor tee": lambda l, k: f"(RayTrainWorker pid={4000 + k}, ip=10.0.0.{k + 1}) [rank{k}]: {l}"
    if not l.startswith("[rank") else f"(RayTrainWorker pid={4000 + k}, ip=10.0.0.{k + 1}) {l}",
}

# ------------------------------------------------------------------------------------------------
# log shippers and viewers

SHIPPERS = {
    # kubectl logs --prefix: `[pod/<pod>/<container>] `
    "kubectl prefix": lambda l, k: f"[pod/trainer-worker-{k}/pytorch] {l}",
    # kubectl logs --timestamps: RFC3339Nano
    "kubectl timestamps": lambda l, k: f"{STAMP} {l}",
    # docker compose logs: `<service>-<n>  | `
    "compose": lambda l, k: f"trainer-{k + 1}  | {l}",
    # journald / syslog (short): `Mon DD HH:MM:SS host ident[pid]: `
    "syslog": lambda l, k: f"Dec  2 09:00:00 gpu-node-{k:02d} python[{4000 + k}]: {l}",
    # GitHub Actions: each line after its time (7 fraction digits)
    "github actions": lambda l, k: f"2026-12-02T09:00:00.1234567Z {l}",
    # journalctl -o short-iso
    "journald short-iso": lambda l, k: f"2026-12-02T09:00:00+0000 gpu-node-{k:02d} python3[{4000 + k}]: {l}",
    # a container runtime's log file (CRI, kubelet's /var/log/pods): time, stream, F(ull) or P(art)
    "cri": lambda l, k: f"{STAMP} stderr F {l}",
    # docker compose v1: `<project>_<service>_<n>  | `
    "compose v1": lambda l, k: f"proj_trainer_{k + 1}  | {l}",
    # `aws logs tail`: time, log stream, message
    "aws logs tail": lambda l, k: f"2026-12-02T09:00:00.123000+00:00 algo-{k}-1764666000 {l}",
    # CloudWatch Logs' console / AWS Batch export: the time, a tab, the line
    "cloudwatch tab": lambda l, k: f"2026-12-04T12:00:00.000Z\t{l}",
    # a log viewer's table copied as text (Grafana / Loki): the time column, a tab, the line
    "viewer table": lambda l, k: f"2026-12-02 09:00:00.123\t{l}",
    # a Go program that logs each line it relays as a logrus record (logrus's TextFormatter: `time="..."
    # level=... msg="..."`, the message quoted as Go's %q), alone and as journald shows a daemon's records
    "logfmt": lambda l, k: f'time="{STAMP}" level=error msg={json.dumps(l, ensure_ascii=False)}',
    "journald logfmt": lambda l, k: (f'Dec  2 09:00:00 gpu-node-{k:02d} containerd[812]: time="{STAMP}" level=info '
                                     f'msg={json.dumps(l, ensure_ascii=False)}'),
}

# ------------------------------------------------------------------------------------------------
# Python loggers

LOGGERS = {
    # logging.basicConfig() default: `%(levelname)s:%(name)s:%(message)s`
    "stdlib default": lambda l, k: f"ERROR:root:{l}",
    # `%(asctime)s - %(name)s - %(levelname)s - %(message)s`
    "asctime name level": lambda l, k: f"2026-12-02 09:00:00,123 - __main__ - ERROR - {l}",
    # loguru's default format
    "loguru": lambda l, k: f"2026-12-02 09:00:00.000 | ERROR    | train:main:{k + 10} - {l}",
    # transformers' explicit format: `[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s`
    "transformers": lambda l, k: f"[ERROR|trainer.py:{k + 100}] 2026-12-02 09:00:00,123 >> {l}",
    # accelerate / transformers examples: `%(asctime)s - %(levelname)s - %(name)s - %(message)s`, `%m/%d/%Y %H:%M:%S`
    "accelerate": lambda l, k: f"12/02/2026 09:00:00 - ERROR - __main__ - {l}",
    # glog: `Lmmdd hh:mm:ss.uuuuuu threadid file:line] `
    "glog": lambda l, k: f"E1202 09:00:00.000000  {4000 + k} train.cc:{k + 10}] {l}",
    # rich's logging handler: `[%x %X] LEVEL    message ... file.py:line` at the right margin
    "rich": lambda l, k: f"[12/02/26 09:00:00] ERROR    {l}{' ' * 8}train.py:{k + 10}",
    # Lightning's rank_prefixed_message
    "lightning": lambda l, k: f"[rank: {k}] {l}",
    # a timestamp, then a level, then the line (many loggers' own formats)
    "time level": lambda l, k: f"2026-12-02 09:00:00 ERROR {l}",
    "bracketed time level": lambda l, k: f"[2026-12-02 09:00:00] [ERROR] {l}",
    # a bracketed time alone (`[%(asctime)s] %(message)s`), and NeMo's logger (`[NeMo E date time module:line] `)
    "bracketed time": lambda l, k: f"[2026-12-02 09:00:00] {l}",
    "nemo": lambda l, k: f"[NeMo E 2026-12-02 09:00:00 exp_manager:{k + 100}] {l}",
}

# ------------------------------------------------------------------------------------------------
# paste damage

DAMAGE = {
    "ansi": lambda l, k: f"\x1b[31m{l}\x1b[0m",
    "quote": lambda l, k: f"> {l}",
    "cat -n": lambda l, k: f"{k + 1:>6}\t{l}",
    "shell prompt": lambda l, k: f"$ {l}",
    "shell trace": lambda l, k: f"+ {l}",
    "crlf": lambda l, k: f"{l}\r",
    "tab indent": lambda l, k: f"\t{l}",       # a code block indented with a tab
    # a terminal multiplexer's copy (tmux / screen): every line padded with blanks to the pane's width
    "pane padding": lambda l, k: l.ljust(120) if len(l) < 120 else l,
}

# ------------------------------------------------------------------------------------------------
# two or three layers

STACKED = {
    "kubectl timestamps + tee": lambda l, k: f"{STAMP} [default{k % 8}]:{l}",
    "compose + tee": lambda l, k: f"trainer-{k + 1}  | [default{k % 8}]:{l}",
    "srun + tee + rank": lambda l, k: f"{k}: [default{k % 8}]:{l}" if l.startswith("[rank")
    else f"{k}: [default{k % 8}]:[rank{k}]: {l}",
    "ansi + loguru": lambda l, k: f"\x1b[32m2026-12-02 09:00:00.000\x1b[0m | \x1b[31mERROR   \x1b[0m | train:main:12 - {l}",
    "quote + pdsh + tee": lambda l, k: f"> gpu-node-{k:02d}: [default{k % 8}]:{l}",
    # SkyPilot running mpirun (nccl-tests): its node tag, then Open MPI's
    "skypilot + openmpi": lambda l, k: f"(head, rank=0, pid=3808) [1,{k}]<stdout>:{l}",
    # vLLM's Ray workers: Ray's tag, then vLLM's NewLineFormatter on every line of a record (vLLM < 0.8)
    "ray worker wrapper + vllm logger": lambda l, k: f"(RayWorkerWrapper pid={4000 + k}) ERROR 05-25 18:48:06 worker_base.py:145] {l}",
    "kubectl prefix + timestamps": lambda l, k: f"[pod/trainer-worker-{k}/pytorch] {STAMP} {l}",
}

def _first_line(fn):
    """A logger's format prefixes a record's first line; the lines of a multi-line record follow bare."""
    def wrap(text: str, k: int) -> str:
        first, sep, rest = text.partition("\n")
        return fn(first, k) + sep + rest
    return wrap


def _docker(text: str, k: int) -> str:
    return "\n".join(json.dumps({"log": line + "\n", "stream": "stderr", "time": STAMP}, ensure_ascii=False,
                                separators=(",", ":")) for line in text.split("\n"))


SHAPES: dict[str, object] = {}
for group in (LAUNCHERS, SHIPPERS, DAMAGE, STACKED):
    for name, fn in group.items():
        SHAPES[name] = _per_line(fn)
for name, fn in LOGGERS.items():
    SHAPES[name] = _first_line(fn)
SHAPES["docker json-file"] = _docker


# ------------------------------------------------------------------------------------------------
# the messages

def nccl_items():
    """(label, line): each NCCL WARN format, as its newest release prints it with its header."""
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    from nccl_render import render_line

    with open(ROOT / "tests" / "data" / "nccl-messages-by-version.tsv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["level"] == "WARN"]
    for row in rows:
        tag = row["last_tag"]
        yield f"nccl {tag} {row['locations_in_last_tag'].split(',')[0]}", render_line(
            "WARN", row["format"], tag, row["locations_in_last_tag"])


_ELASTIC = re.compile(r"torch/distributed/(?:elastic|run)|elastic")
_TRACEBACK = ('Traceback (most recent call last):\n  File "/workspace/train.py", line 10, in <module>\n'
              '    main()\n{m}')


def torch_items():
    """(label, text): each PyTorch / Gloo catalog row of a failure or warning level, as it is
    printed: a c10 log line, a torchrun (elastic) agent's Python log line, a Python traceback
    ending in the message (Gloo's errors, exceptions)."""
    import importlib.util
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location("catalog_coverage", ROOT / "tools" / "catalog_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for label, text, source in mod.torch_lines():
        ident = label.split(" ", 1)[1]
        if "\n" in text.strip():
            continue  # a multi-line report: its lines are not one message
        if "elastic" in ident:
            msg = re.sub(r"^\[rank0\]:\[([EWF])1201 10:11:12\.000000000 [^\]]+\] ", "", text)
            lvl = text[9] if text.startswith("[rank0]:[") else "E"
            word = {"E": "ERROR", "W": "WARNING", "F": "CRITICAL"}[lvl]
            # torch >= 2.3's elastic logger (glog-like), and the stdlib layout of older releases
            yield f"{label} [glog]", f"{lvl}1202 09:00:00.123000 4242 torch/distributed/elastic/agent/server/api.py:700] {msg}"
            yield f"{label} [stdlib]", f"{word}:torch.distributed.elastic.agent.server.api:{msg}"
            continue
        if text.startswith("RuntimeError: "):
            yield label, _TRACEBACK.format(m=text)
            yield f"{label} [last line]", text  # a traceback's last line alone
            continue
        yield label, text


# ------------------------------------------------------------------------------------------------
# a message nested in another, every form

_FRAMES = '  File "/workspace/train.py", line 10, in <module>\n    main()\n'
_RAY_WHERE = "(pid=4242, ip=10.0.0.2, actor_id=7d2c0a3f1e9b4c5d6e7f8a9b01000000, repr=<RayTrainWorker object at 0x7f3a2c001200>)"
_DIST = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
         "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
         "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
         "Last error:\n")


def _type_and_body(message: str) -> tuple[str, str]:
    head, sep, body = message.partition(": ")
    if sep and re.fullmatch(r"(?:\w+\.)*\w+", head):
        return head.rsplit(".", 1)[-1], body
    return "RuntimeError", message


def _exception_group(message: str) -> str:
    inner = "Traceback (most recent call last):\n" + _FRAMES + message
    return ("  + Exception Group Traceback (most recent call last):\n"
            '  |   File "/workspace/launch.py", line 40, in <module>\n'
            "  |     raise ExceptionGroup(\"rank failures\", errors)\n"
            "  | ExceptionGroup: rank failures (1 sub-exception)\n"
            "  +-+---------------- 1 ----------------\n"
            + "".join(f"    | {line}\n" for line in inner.split("\n"))
            + "    +------------------------------------")


NESTINGS = {
    # an exception's repr in a log line (`logger.error(f"... {e!r}")`): line ends escaped
    "repr in a log line": lambda m: "2026-12-02 09:00:00,123 ERROR step failed: {}({})".format(
        _type_and_body(m)[0], repr(_type_and_body(m)[1])),
    # ... and inside another exception's message
    "repr in an exception": lambda m: "ValueError: the worker failed with {}({})".format(
        _type_and_body(m)[0], repr(_type_and_body(m)[1])),
    # a JSON logger's record: the message, the traceback under exc_info
    "json record": lambda m: json.dumps({"time": "2026-12-02T09:00:00Z", "level": "ERROR", "message": "step failed",
                                         "exc_info": "Traceback (most recent call last):\n" + _FRAMES + m}),
    # a structured logger's record: a one-line message, the failure under its own key (zap / logrus / structlog)
    "json record, error apart": lambda m: json.dumps({"ts": "2026-12-02T09:00:00Z", "level": "error",
                                                      "msg": "worker failed", "error": m}),
    "json record, traceback under error": lambda m: json.dumps({"level": "error", "msg": "worker failed",
                                                                "error": "Traceback (most recent call last):\n" + _FRAMES + m}),
    # a logrus record (a Go daemon's or operator's) with the failure under `error=` (logrus's WithError)
    "logfmt record, error apart": lambda m: ('time="2026-12-02T09:00:00Z" level=error msg="worker failed" '
                                             f"error={json.dumps(m, ensure_ascii=False)}"),
    # a JSON string inside a log line
    "json string in a line": lambda m: "2026-12-02T09:00:00Z INFO result=" + json.dumps({"status": "failed", "error": m}),
    # Ray: a task's exception, an actor that died in its creation task
    "ray task error": lambda m: (f"ray.exceptions.RayTaskError({_type_and_body(m)[0]}): "
                                 f"ray::RayTrainWorker._RayTrainWorker__execute() {_RAY_WHERE}\n" + _FRAMES + m),
    "ray actor died": lambda m: ("ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation "
                                 f"task, ray::RayTrainWorker.__init__() {_RAY_WHERE}\n" + _FRAMES + m),
    # torchrun's error file (written by @record), as `cat error.json` shows it
    "torchrun error file": lambda m: json.dumps({"message": {"message": m, "extraInfo": {
        "py_callstack": "Traceback (most recent call last):\n" + _FRAMES + m, "timestamp": "1764666000"}}}),
    # a launcher's CalledProcessError, the child's output logged as bytes
    "called process output": lambda m: (
        "subprocess.CalledProcessError: Command '['torchrun', '--nproc-per-node=8', 'train.py']' returned non-zero exit status 1.\n"
        "ERROR:launcher:stderr: " + repr(("Traceback (most recent call last):\n" + _FRAMES + m + "\n").encode())),
    # an ExceptionGroup's traceback (Python 3.11)
    "exception group": _exception_group,
}


def nested_items():
    """(label, clean text, message as an exception carries it): each NCCL WARN message under
    ``Last error:`` of a DistBackendError, each PyTorch / Gloo one-line failure as an exception's message."""
    for label, line in nccl_items():
        msg = line.split(" NCCL WARN ", 1)[1]
        yield label, line, _DIST + msg
    for label, text in torch_items():
        if label.endswith("[last line]"):
            yield label, text, text
        elif text.startswith("[rank0]:[E"):
            yield label, text, "RuntimeError: " + re.sub(r"^\[rank0\]:\[[EWF]1201 10:11:12\.000000000 [^\]]+\] ", "", text)
