"""Exceptions: Python tracebacks (chained, nested, with frames a paste elided or an exception line it
cut; ``grammars/torch_traceback.lark``), ``Type: message`` exception lines, and C++'s ``terminate
called after throwing an instance of ...`` (``torch_terminate.lark``). An exception whose message is
a known format takes that format's kind (a traceback ending in a Gloo error is ``gloo.error``)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...blocks import _CHAIN, is_elision
from ...events import Envelope
from ...grammar import Parsed
from .common import Read, cause, level_of, parse

if TYPE_CHECKING:
    from lark import Tree
from .torchrun import child_failed
from ...lazyre import lazy_re
from ... import stops

EXC_LINE = lazy_re(
    # (the base class alone only with its colon: `Exception: process 1 terminated with signal SIGKILL`, what
    # torch.multiprocessing.spawn raised before ProcessExitedException; `Exception raised from` is c10's)
    r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure)|(?:socket\.)?(?:gaierror|herror)|Exception(?=:))"
    r"(?::[ \t]?|[ \t]*(?=\n)|[ \t]*\Z)")
# An exception class whose name says nothing of it, printed as Python prints a class outside builtins and __main__:
# its module's dotted path, then a name in CamelCase (Horovod's ``horovod.runner.common.util.network.NoValidAddressesFound:``,
# ``subprocess.TimeoutExpired:``, ``filelock._error.Timeout:``), then the colon and a blank
QUALIFIED_EXC = lazy_re(r"((?:[A-Za-z_]\w*\.){1,16}[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*):(?:[ \t]|(?=\n)|\Z)")
# the line after a traceback's frames is its exception line whatever the class is called (a class of __main__ is
# printed without its module: ``NoValidAddressesFound: ...``), a name that starts in upper case with its colon
_TRACEBACK_EXC = lazy_re(r"((?:[A-Za-z_]\w*\.){0,16}[A-Z]\w*):(?:[ \t]|(?=\n)|\Z)")


def terminate(text: str, env: Envelope | None, read: Read) -> Parsed | None:
    tree = parse("torch_terminate", text)
    if tree is None:
        return None
    f: dict[str, Any] = {}
    if tree.data == "thrown":
        f["cxx_type"] = str(tree.children[0])[1:-1]
        what = ""
        if len(tree.children) > 1:
            w = tree.children[1]
            what = str(w.children[0]) if w.children else ""
        cut = what.find("\nException raised from ")
        f["what"] = (what[:cut] if cut >= 0 else what).strip()
        if cut >= 0:
            f["cxx_frames"] = what.count("\nframe #")
        if f["what"]:
            inner = read(f["what"], None)
            if inner is not None:
                f["cause"] = cause(inner)
        tid = "torch:c10-exception:terminate-called-after-throwing-an-instance-of"
    else:
        f["what"] = str(tree.children[0]).strip()
        tid = "logdoc:cxx:terminate-called"
    return Parsed("torch.terminate", level_of(env, "FATAL"), tid, f)


def traceback(text: str, env: Envelope | None, read: Read) -> Parsed | None:
    if "..." in text or "…" in text or "omitted" in text or "snip" in text:
        # frames a paste left out (blocks.is_elision lines) are not read; the frames that are there are
        text = "\n".join(line for line in text.split("\n") if not is_elision(line))
    tree = parse("torch_traceback", text)
    if tree is None:
        # a chain whose last traceback a paste cut before its exception line: the exceptions before it
        # are whole (`RuntimeError: connect() timed out.`, then `The above exception was the direct cause
        # ...` and the launcher's frames)
        at = max(text.rfind(c) for c in _CHAIN)
        if at > 0:
            return traceback(text[:at].rstrip(), env, read)
        return _cut_traceback(text, env)
    from lark import Tree  # (imported by the parse above)

    top = tree.children[0]
    if top.data == "exception":  # no `Traceback (most recent call last):` head was read: not a traceback
        return None
    excs: list[dict[str, Any]] = []
    last_frames: list[str] = []
    if top.data == "exception":
        excs.append(_exc_from(top))
        relation = []
    else:
        relation = []
        for node in top.children:
            if node.data == "traceback":
                tb = node
                relation.append(None)
            else:
                tb = node.children[-1]
                relation.append("context" if node.data == "chained" and "During handling" in str(node.children[0])
                                else "cause" if node.data == "chained" else "nested")
            frames = [_frame(f) for f in tb.children if isinstance(f, Tree) and f.data == "frame"]
            exc = _exc_from(tb.children[-1])
            exc["frames"] = len(frames)
            exc["last_frame"] = frames[-1] if frames else None
            excs.append(exc)
            last_frames = frames
    final = excs[-1]
    fields: dict[str, Any] = {"exc_type": final["exc_type"], "exc_message": final["exc_message"]}
    if top.data != "exception":
        fields["traceback"] = True
        fields["frames"] = final.get("frames", 0)
        fields["last_frame"] = final.get("last_frame")
    if len(excs) > 1:
        fields["chain"] = [{"exc_type": e["exc_type"], "exc_message": e["exc_message"][:500],
                            "relation": r} for e, r in zip(excs, relation)]
        for prev in excs[:-1]:
            m = re.search(r"-- Process (\d+) terminated with the following error:", prev["exc_message"])
            if m:
                fields["spawn_process"] = int(m.group(1))
    return exception_event(fields, env, read)


_TB_FRAME = lazy_re(r'^[ \t]+File "([^"\n]*)", line (\d+)(?:, in ([^\n]*))?$', re.M)


def _cut_traceback(text: str, env: Envelope | None) -> Parsed | None:
    """A traceback whose exception line a paste cut off (only the head and frames are there): still a
    Python exception, whose type and message are not in the log."""
    if not text.startswith("Traceback (most recent call last):"):
        return None
    body = text.split("\n", 1)[1] if "\n" in text else ""
    frames = _TB_FRAME.findall(body)
    if not frames or any(line.strip() and not line[:1].isspace() for line in body.split("\n")):
        return None  # (a line of its own after the frames: not only cut, the grammar had a reason)
    path, line, func = frames[-1]
    f = {"exc_type": None, "exc_message": "", "traceback": True, "frames": len(frames),
         "last_frame": f"{path}:{line}" + (f" in {func.strip()}" if func else ""), "cut": True}
    f.update(dist_place(frames))
    return Parsed("torch.exception", level_of(env, "ERROR"), "py:traceback", f)


# Where in torch.distributed a traceback stopped, from its frames' files and functions (torch/distributed/
# in PyTorch's sources): the launcher (the torchrun console script, run.py / launch.py, the elastic agent),
# the store and rendezvous (rendezvous.py, elastic/rendezvous/, and distributed_c10d.py's functions that
# wait on the store), or a collective (the other public functions of distributed_c10d.py).
_DIST_PATH = lazy_re(r"(?:^|/)torch/distributed/(?P<mod>[\w/]{1,80})\.py$|(?:^|/)bin/(?P<bin>torchrun)$")
_STORE_CALLS = frozenset(("init_process_group", "_store_based_barrier", "_create_c10d_store", "_env_rendezvous_handler",
                          "_tcp_rendezvous_handler", "_file_rendezvous_handler", "rendezvous", "_new_process_group_helper",
                          "new_group", "_get_store", "_barrier"))
_AGENT = ("run", "launch", "launcher/api", "elastic/agent/server/api", "elastic/agent/server/local_elastic_agent",
          "elastic/multiprocessing/errors/__init__")


def dist_place(frames) -> dict[str, str]:
    """``dist_call`` (the function) and ``dist_where`` (``collective``, ``store``, ``launcher``) of the
    innermost frame in torch.distributed's sources or torchrun's script; {} when none is."""
    for path, _line, func in reversed(frames):
        m = _DIST_PATH.search(path)
        if m is None:
            continue
        func = (func or "").strip()
        mod = m.group("mod") or ""
        if m.group("bin") or mod in _AGENT:
            where = "launcher"
        elif mod == "rendezvous" or mod.startswith("elastic/rendezvous/") or func in _STORE_CALLS:
            where = "store"
        elif mod == "distributed_c10d" and not func.startswith("_"):
            where = "collective"
        else:
            continue
        return {"dist_call": func, "dist_where": where}
    return {}


def _frame(node: Tree) -> str:
    line = str(node.children[0]).strip()
    m = re.match(r'File "([^"]*)", line (\d+)(?:, in (.*))?', line)
    if not m:
        return line
    return f"{m.group(1)}:{m.group(2)}" + (f" in {m.group(3).strip()}" if m.group(3) else "")


def _exc_from(node: Tree) -> dict[str, Any]:
    first = str(node.children[0]).lstrip("\n")
    rest = "".join(str(t) for t in node.children[1:])
    m = EXC_LINE.match(first) or _TRACEBACK_EXC.match(first)
    if m:
        etype, msg = m.group(1), first[m.end():]
    else:
        etype, msg = None, first
    message = (msg + rest)
    # ProcessRaisedException: drop the "-- Process N terminated ..." line (the nested traceback follows)
    return {"exc_type": etype, "exc_message": message.strip("\n").rstrip() if message.strip() else ""}


# Ray's exception types whose message may say that a process or a node died (python/ray/exceptions.py)
_RAY_DEATHS = frozenset(("ActorDiedError", "RayActorError", "WorkerCrashedError", "LocalRayletDiedError", "NodeDiedError",
                         "OutOfMemoryError"))


def exception_event(fields: dict[str, Any], env: Envelope | None, read: Read) -> Parsed:
    """Name a Python exception by its message when the message is a known format."""
    etype = fields.get("exc_type") or ""
    msg = fields.get("exc_message") or ""
    short = etype.rsplit(".", 1)[-1]
    inner: Parsed | None = None
    if short == "ChildFailedError":
        cf = child_failed(msg.lstrip("\n"))
        if cf is not None:
            fields.update(cf)
            return Parsed("torchrun.child_failed", level_of(env, "ERROR"), "torch:elastic-errors:child-failed-error", fields)
    if short == "ProcessRaisedException" and "spawn_process" not in fields:
        m = re.search(r"-- Process (\d+) terminated with the following error:", msg)
        if m:
            fields["spawn_process"] = int(m.group(1))
    if msg:
        inner = read(msg, None)
        if inner is None and msg[:1] == ":" and msg[1:2] in (" ", "\t"):
            # `RuntimeError: : NCCL communicator was aborted ...`: a message whose context before the
            # separator was empty; the message after it is what the catalog prints
            inner = read(msg[1:].lstrip(), None)
    if inner is None and msg and (etype.startswith("ray.") or short in _RAY_DEATHS):
        # Ray's exceptions for a worker, an actor or a node that died (its OutOfMemoryError is the node's host
        # memory, not CUDA's): the stop their message words (logdoc/stops.py)
        inner = stops.classify(msg.lstrip("\n").split("\n", 1)[0])
    if short in ("OutOfMemoryError",) and (inner is None or inner.kind not in ("cuda.oom", stops.KIND)):
        inner = Parsed("cuda.oom", "ERROR", "logdoc:cuda:oom-other", {})
    if short == "SignalException" and inner is None:
        m = re.match(r"Process (\d+) got signal: (\d+)", msg)
        if m:
            inner = Parsed("torchrun.signal", "ERROR", "torch:elastic-multiprocessing:process-got-signal",
                           {"pid": int(m.group(1)), "signal": int(m.group(2))})
    if inner is None and short.startswith("Rendezvous"):
        inner = Parsed("torchrun.rendezvous", "ERROR", f"logdoc:elastic:{short}", {"event": short})
    if inner is not None and inner.kind not in ("torch.message",):
        merged = dict(inner.fields)
        merged.update(fields)
        return Parsed(inner.kind, level_of(env, "ERROR"), inner.template, merged)
    if inner is not None:
        fields["cause"] = cause(inner)
    tid = "py:traceback" if fields.get("traceback") else "py:exception"
    return Parsed("torch.exception", level_of(env, "ERROR"), tid, fields)
