"""How well logdoc's right answers survive paste damage: the field corpus, damaged on purpose.

    python tools/field_damage.py [--cases DIR] [--only T1,T2] [--show N] [--logdoc DIR]

logdoc scores higher on the tuned field cases (tests/field/cases) than on held-out cases it has never
seen, and most of the difference is not the errors but how they were pasted: alone, under a cut or
masked header, under a prefix nobody knows, quoted, wrapped, nested in another message. This tool
measures that directly, without looking at held-out logs: it takes every case that logdoc gets right
(top-1), applies one kind of damage at a time, each one seen in real pastes, and counts how many
still get the same top-1 category (a benign case: still no error diagnosis).

Each transform is deterministic and applies to the text of every log file of a case:

- ``evidence``: only the lines the first diagnosis quotes (its records), and up to 2 lines around
  each: the short paste of someone who copied the error alone;
- ``bare``: ``evidence``, with every line's header cut down to the message (``host:pid:tid [d] NCCL
  WARN``, c10's ``[E1129 ...]``, ``[rankN]:``, a time stamp and level);
- ``masked``: NCCL headers' pids and tids masked (``host:XXXXXX:XXXXXX [3]``), as people do;
- ``cut-host``: the first characters of NCCL headers' host names cut off (``-worker-1:946:988 [0]``);
- ``prefix-*``: a prefix on every line (a job label, a Ray actor, a launcher's stream tag, a
  container runtime's stamp, Python logging's `` - ``-separated format, Slurm's ``--label``);
- ``quote``, ``indent``: markdown quote marks, a 4-space code block;
- ``wrap80``, ``wrap120``: lines hard-wrapped at 80 or 120 columns;
- ``cut100``, ``cut-ellipsis``, ``cut-marker``: long lines cut, the rest lost: at 100 columns; at 80 to
  120 with ``...`` appended; at 120 with ``… [truncated]`` appended;
- ``crlf``, ``ansi``: Windows line ends; colour codes around every line;
- ``last-error``: where the first diagnosis quotes NCCL WARN lines, those lines given bare as the
  ``Last error:`` of a torch ``DistBackendError``, the way PyTorch 2.x reports an NCCL failure;
- envelopes of log collectors and launchers, and what terminals leave (session 32; each transform's
  comment says where its format is defined): ``docker-json`` (Docker's json-file driver, one JSON record a
  line), ``json-message`` and ``json-textpayload`` (a structured logger's record for GKE / Cloud Logging,
  ``message``; a Cloud Logging entry exported as JSON, ``textPayload``), ``prefix-gha`` (GitHub Actions'
  stamps), ``prefix-mpi`` (Open MPI's ``--tag-output``), ``prefix-pdsh`` and ``prefix-pdsh-ip`` (pdsh /
  clush and DeepSpeed's pdsh launcher: the host name or address), ``prefix-slurm2`` and ``prefix-slurm-pad``
  (``srun --label`` with two-digit task ids: ``12: ``, `` 7: ``), ``tqdm-cr`` (a progress bar's last
  ``\r`` update left in front of the next message), ``interleave`` (two ranks' copies of the log, their
  lines alternating, each under its own prefix), ``ray-repeat`` (Ray's deduplication note after every
  line), ``ipython`` (a Python traceback as IPython / Jupyter prints it);
- ``A+B``: damages combined, applied left to right (``COMBINED`` are run by default: ``wrap80+dedent``,
  ``quote+wrap80``, ...; ``--only`` takes any such chain of the transforms above).

The last line reads ``damage: kept N/M = P% over T transforms``; ``--show N`` lists up to N losses
per transform (case, what came out instead). Scoring only; it changes nothing.
"""
from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import field_score as fs  # noqa: E402

import regex as re  # noqa: E402

NCCL_HEADER = re.compile(r"^(?P<pre>.*?)(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) (?P<dev>\[\d+\]) (?=(?:[\w./+-]+:\d+ )?NCCL )")
BARE_HEADERS = [
    re.compile(r"^.*?[\w.\-]+:(?:\d+|X+):(?:\d+|X+) \[\d+\] (?:[\w./+-]+:\d+ )?NCCL (?:WARN|INFO|ERROR|TRACE|ABORT) ?"),
    re.compile(r"^\[rank\d+\]:"),
    re.compile(r"^\[[EWIF]\d{4} [\d:.]+ \d+ [^\]]+\] "),
    re.compile(r"^\d{4}-\d\d-\d\d[T ][\d:.,]+Z? ?(?:\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\]?:? )?"),
]
ANSI_RED, ANSI_OFF = "\x1b[31m", "\x1b[0m"
# the same codes after a page, a copy or a log viewer dropped their escape byte: `[31m...[0m`
ANSI_TEXT_RED, ANSI_TEXT_OFF = "[31m", "[0m"
PREFIXES = {
    "prefix-job": "[trainer0|0]: ",
    "prefix-ray": "(RayWorkerWrapper pid=48213) ",
    "prefix-stream": "opt-1_3b.0 [stderr] ",
    "prefix-cri": "2026-12-03T01:02:03.456789012Z stderr F ",
    "prefix-logger": "2026-12-03 01:02:03,456 - train - INFO - ",
    "prefix-slurm": "0: ",
    "prefix-loguru": "2026-12-03 01:02:03.456 | INFO     | train:main:12 - ",
    "prefix-brackets": "[2026-12-03 01:02:03,456][train.py:234][INFO] ",
    "prefix-journald": "Dec 03 01:02:03 gpu-node-1 python[48213]: ",
    "prefix-compose": "trainer-1  | ",
    "prefix-time": "[01:02:03] ",
    "prefix-kubectl": "[pod/trainer-worker-0/pytorch] ",
    "prefix-pytest": "E       ",
    # GitHub Actions' raw logs: every line after its RFC 3339 stamp with 7 fraction digits
    # (https://docs.github.com/en/actions/monitoring-and-troubleshooting-workflows/using-workflow-run-logs)
    "prefix-gha": "2026-12-03T01:02:03.4567890Z ",
    # Open MPI's mpirun --tag-output: [jobid,rank]<stream>: (https://docs.open-mpi.org/en/main/man-openmpi/man1/mpirun.1.html)
    "prefix-mpi": "[1,0]<stderr>:",
    # pdsh / clush print every remote line after `host: `; DeepSpeed's multi-node launcher runs pdsh
    # (deepspeed/launcher/multinode_runner.py PDSHRunner), whose hostfile often names nodes by address
    "prefix-pdsh": "gpu-node-1: ",
    "prefix-pdsh-ip": "10.0.0.5: ",
    # srun --label: `%*d: `, the task id right-aligned to the width of the largest one (Slurm's
    # _build_label in src/api/step_io.c)
    "prefix-slurm2": "12: ",
    "prefix-slurm-pad": " 7: ",
    # stern's default template for Kubernetes pods' logs: `{{.PodName}} {{.ContainerName}} {{.Message}}`
    # (https://github.com/stern/stern#templates)
    "prefix-stern": "trainer-worker-0 pytorch ",
}
# a tqdm bar's last update (tqdm/std.py status_printer writes `\r` + the bar, no line end), left in front of
# the next line another writer printed
TQDM_BAR = "\r 45%|\u2588\u2588\u2588\u2588\u258c     | 45/100 [00:12<00:15,  3.60it/s]"
# Ray's log deduplication (https://docs.ray.io/en/latest/ray-observability/user-guides/configure-logging.html):
# a line several workers printed, once, with how many printed it
RAY_REPEAT = (PREFIXES["prefix-ray"], " [repeated 6x across cluster]")
# torchrun's per-rank prefixes (--tee / --log-line-prefix-template's default `[{role}{rank}]:`)
INTERLEAVE = ("[default0]:", "[default1]:")
def last_error_head(nccl_version: str | None) -> list[str]:
    """The PyTorch 2.x error that carries NCCL's WARN lines as its ``Last error:``. It quotes the case's
    own NCCL version (``versions.nccl`` of case.yaml) or none: a version the case never ran would be
    read as a fact (a quoted version is an ``nccl.version`` event) and gate version-specific rules."""
    quoted = f", NCCL version {nccl_version}" if nccl_version else ""
    return [
        "Traceback (most recent call last):",
        '  File "train.py", line 42, in <module>',
        "    dist.all_reduce(t)",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        f"unhandled system error (run with NCCL_DEBUG=INFO for details){quoted}",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "Last error:",
    ]


def _lines_by_transform(text: str, fn: Callable[[str], str]) -> str:
    return "\n".join(fn(line) for line in text.split("\n"))


def _wrap(width: int) -> Callable[[str], str]:
    def wrap(text: str) -> str:
        out = []
        for line in text.split("\n"):
            while len(line) > width:
                out.append(line[:width])
                line = line[width:]
            out.append(line)
        return "\n".join(out)
    return wrap


def _cut(width: int, mark: str = "") -> Callable[[str], str]:
    """Every line longer than ``width`` cut there (a log UI, a terminal without wrap), ``mark`` appended."""
    def cut(line: str) -> str:
        return line[:width] + mark if len(line) > width else line
    return cut


def _cut_ellipsis(line: str) -> str:
    """A line over 80 characters cut somewhere between 80 and 120 (a stable choice per line) and ``...``
    appended, the way a viewer shortens what it shows."""
    if len(line) <= 80:
        return line
    width = 80 + sum(map(ord, line[:40])) % 41
    return line[:width] + "..." if len(line) > width else line


def _mask(line: str) -> str:
    return NCCL_HEADER.sub(lambda m: f"{m['pre']}{m['host']}:XXXXXX:XXXXXX {m['dev']} ", line, count=1)


def _cut_host(line: str) -> str:
    def cut(m) -> str:
        host = m["host"]
        keep = host[len(host) // 2:] if len(host) > 3 else host
        return f"{m['pre']}-{keep.lstrip('-')}:{m['pid']}:{m['tid']} {m['dev']} "
    return NCCL_HEADER.sub(cut, line, count=1)


def _docker_json(line: str) -> str:
    """Docker's json-file driver (https://docs.docker.com/engine/logging/drivers/json-file/): one record a
    line, the line with its newline under ``log``, HTML's characters escaped as Go's encoder does."""
    rec = json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-12-03T01:02:03.456789012Z"},
                     ensure_ascii=False, separators=(",", ":"))
    return rec.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _json_message(line: str) -> str:
    """A structured logger's record for GKE / Cloud Logging's agent
    (https://cloud.google.com/logging/docs/structured-logging): ``severity``, ``message``, ``time``."""
    return json.dumps({"severity": "ERROR", "message": line, "time": "2026-12-03T01:02:03.456Z"}, ensure_ascii=False)


def _json_textpayload(line: str) -> str:
    """A Cloud Logging entry exported as JSON, one a line (``gcloud logging read --format=json`` flattened;
    https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry): the line is ``textPayload``."""
    return json.dumps({"insertId": "1x2y3z", "resource": {"type": "k8s_container", "labels": {"pod_name": "trainer-worker-0"}},
                       "textPayload": line, "timestamp": "2026-12-03T01:02:03.456789Z", "severity": "ERROR"},
                      ensure_ascii=False)


def _interleave(text: str) -> str:
    """Two ranks' copies of the log in one file, their lines alternating, each under its own prefix (the
    combined output of a launcher that does not buffer lines by rank)."""
    out = []
    for line in text.split("\n"):
        out += [INTERLEAVE[0] + line, INTERLEAVE[1] + line]
    return "\n".join(out)


_PY_FRAME = re.compile(r'^ +File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\s*$')
_PY_EXC = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::|$)")


def _syslog(text: str) -> str:
    """The log as rsyslog writes a program's messages (journald forwarding to syslog, SageMaker's and CloudWatch's
    agents): each line after the daemon's prefix, a Python traceback (its frames, then its exception line) one
    message whose line ends are written out as ``#012``, a tab as ``#011``."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        j = i + 1
        if lines[i].rstrip() == "Traceback (most recent call last):":
            while j < len(lines) and lines[j].startswith(" "):
                j += 1
            j = min(j + 1, len(lines))
        msg = "#012".join(lines[i:j]).replace("\t", "#011")
        out.append(PREFIXES["prefix-journald"] + msg if msg else msg)
        i = j
    return "\n".join(out)


def _padded_rows(text: str, width: int = 120, screen: int = 6) -> str:
    """A terminal's screen copied without its line ends (deepseek-ai/DeepEP#106): every ``screen`` lines one line, each
    line's rows padded with blanks to the terminal's ``width``."""
    lines, out = text.split("\n"), []
    for i in range(0, len(lines), screen):
        out.append("".join(line[k:k + width].ljust(width) for line in lines[i:i + screen]
                           for k in range(0, max(1, len(line)), width)).rstrip())
    return "\n".join(out)


def _ipython(text: str) -> str:
    """Every Python traceback that starts a line, as IPython / Jupyter prints it (IPython.core.ultratb):
    a rule, the exception's name before ``Traceback (most recent call last)``, the notebook's frame as
    ``Cell In[3], line N``, the others as ``File path:N, in fn()``, each code line after ``---> N``."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if lines[i].rstrip() != "Traceback (most recent call last):":
            out.append(lines[i])
            i += 1
            continue
        frames, j = [], i + 1
        while j < len(lines) and lines[j].startswith(" "):
            m = _PY_FRAME.match(lines[j])
            if m:
                code = lines[j + 1].strip() if j + 1 < len(lines) and lines[j + 1].startswith("    ") \
                    and not _PY_FRAME.match(lines[j + 1]) else ""
                frames.append((m, code))
            j += 1
        exc = _PY_EXC.match(lines[j]) if j < len(lines) else None
        if not frames or exc is None:
            out.append(lines[i])
            i += 1
            continue
        out += ["-" * 75, f"{exc['name']:<42}Traceback (most recent call last)"]
        for n, (m, code) in enumerate(frames):
            out.append(f"Cell In[3], line {m['line']}" if n == 0 else f"File {m['file']}:{m['line']}, in {m['fn']}()")
            if code:
                out.append(f"---> {m['line']} {code}")
            out.append("")
        i = j
    return "\n".join(out)


def _smart_quotes(text: str) -> str:
    """Quotes as a forum's typography writes them: opening and closing, single and double."""
    text = re.sub(r"(^|[\s(\[{])'", "\\1\u2018", text, flags=re.M)
    text = re.sub(r'(^|[\s(\[{])"', "\\1\u201c", text, flags=re.M)
    return text.replace("'", "\u2019").replace('"', "\u201d")


def _bare(line: str) -> str:
    """The line without its headers (a traceback's frames keep their indentation)."""
    for rx in BARE_HEADERS:
        line = rx.sub("", line, count=1)
    return line.rstrip()


# an address, or a dotted name that ends in a top-level domain an editor links (with a :port or :line after it)
_AUTOLINKABLE = re.compile(r"(?<![\w@.:-])(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z_][\w-]*(?:\.[\w-]+)*\.(?:cc|py|so|sh|io))"
                           r"(?::\d+)?(?![\w.-]*\w)")


TEXT_TRANSFORMS: dict[str, Callable[[str], str]] = {
    "masked": lambda t: _lines_by_transform(t, _mask),
    "cut-host": lambda t: _lines_by_transform(t, _cut_host),
    **{name: (lambda p: lambda t: _lines_by_transform(t, lambda line: p + line))(p) for name, p in PREFIXES.items()},
    "quote": lambda t: _lines_by_transform(t, lambda line: "> " + line),
    "indent": lambda t: _lines_by_transform(t, lambda line: "    " + line),
    "wrap80": _wrap(80),
    "wrap120": _wrap(120),
    # lines cut, not wrapped: a log UI's fixed width, a terminal without wrap, a viewer's `...`
    "cut100": lambda t: _lines_by_transform(t, _cut(100)),
    "cut-ellipsis": lambda t: _lines_by_transform(t, _cut_ellipsis),
    "cut-marker": lambda t: _lines_by_transform(t, _cut(120, "… [truncated]")),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    # CRLF text written again through a text-mode writer (Python's open(..., "w") on Windows): CR CR LF
    "crcrlf": lambda t: t.replace("\n", "\r\r\n"),
    # a copy from a web console or a notebook's output: a blank line after every line
    "double-space": lambda t: t.replace("\n", "\n\n"),
    "nbsp": lambda t: _lines_by_transform(t, lambda line: re.sub(r"^ +", lambda m: "\u00a0" * len(m.group(0)), line).replace("  ", " \u00a0")),
    "smart-quotes": lambda t: _smart_quotes(t),
    "ansi": lambda t: _lines_by_transform(t, lambda line: f"{ANSI_RED}{line}{ANSI_OFF}" if line else line),
    # a forum page scraped as text: its HTML entities left in (`&lt;module&gt;`, `&#39;`, `&quot;`)
    "ansi-text": lambda t: _lines_by_transform(t, lambda line: f"{ANSI_TEXT_RED}{line}{ANSI_TEXT_OFF}" if line else line),
    "html": lambda t: _lines_by_transform(t, lambda line: html.escape(line, quote=True)),
    # a page that rendered the paste outside a code block: every line's leading blanks gone
    "dedent": lambda t: _lines_by_transform(t, str.lstrip),
    # a log viewer's line numbers copied along (a CI page, a gist): `  12 | `
    "docker-json": lambda t: _lines_by_transform(t, _docker_json),
    "json-message": lambda t: _lines_by_transform(t, _json_message),
    "json-textpayload": lambda t: _lines_by_transform(t, _json_textpayload),
    "tqdm-cr": lambda t: _lines_by_transform(t, lambda line: TQDM_BAR + line if line[:1].strip() else line),
    "interleave": _interleave,
    "ray-repeat": lambda t: _lines_by_transform(t, lambda line: RAY_REPEAT[0] + line + RAY_REPEAT[1] if line.strip() else line),
    "ipython": _ipython,
    # rsyslog's escapes of control characters (https://www.rsyslog.com/doc/configuration/global/index.html,
    # $EscapeControlCharactersOnReceive): a traceback logged as one message on one line, `#012` between its lines
    "syslog": _syslog,
    "padded-rows": _padded_rows,
    # a log console's events copied as text (the AWS CloudWatch console): each event's time on a line of its own
    # before its message (aws/aws-ofi-nccl#715)
    "stamp-lines": lambda t: "\n".join(f"2026-12-03T01:02:03.456Z\n{line}" if line.strip() else line for line in t.split("\n")),
    # a copy from a rich-text editor or chat (Slack, Feishu, Teams) into markdown: what looks like a domain, a file
    # name in a country's top-level domain (net_ib.cc, train.py, libnccl.so) or an address, became a link
    # (NVIDIA/nccl#1710: `transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN ...`)
    "autolink": lambda t: _lines_by_transform(t, lambda line: _AUTOLINKABLE.sub(lambda m: f"[{m[0]}](http://{m[0]}/)", line)),
    "numbered": lambda t: "\n".join(f"{n:4d} | {line}" if line else line for n, line in enumerate(t.split("\n"), 1)),
    # the line numbers in brackets, every line numbered (hiyouga/LlamaFactory#8261: `[1745]   1%|...`, #7396:
    # `[80746] [rank0]:[E321 ...`); MPICH's `-prepend-rank` writes ranks so
    "numbered-brackets": lambda t: "\n".join(f"[{n}] {line}" for n, line in enumerate(t.split("\n"), 1)),
}
EVIDENCE_TRANSFORMS = ("evidence", "bare", "last-error")
# damages that real pastes combine, each applied after the one before it (:func:`_known`): a short paste
# hard-wrapped; a wrapped paste on a page that dropped the leading blanks; a quote or a code block that a
# mail or a page wrapped after the marks were added; a viewer's line numbers, then a wrap
COMBINED = ("evidence+wrap80", "wrap80+dedent", "quote+wrap80", "indent+wrap80", "autolink+wrap80", "numbered+wrap80")
TRANSFORMS = EVIDENCE_TRANSFORMS + tuple(TEXT_TRANSFORMS) + COMBINED


def _evidence_lines(report: dict, case: fs.Case, warn_only: bool = False) -> dict[str, set[int]]:
    """Line numbers (1-based) per log file name of the first diagnosis's evidence records (``warn_only``:
    only when every one is an NCCL WARN line, what a ``Last error:`` carries)."""
    keep: dict[str, set[int]] = {}
    diags = report.get("diagnoses") or []
    if not diags:
        return keep
    evidence = diags[0].get("evidence") or []
    if warn_only and not all("NCCL WARN" in str(ev.get("text") or "") for ev in evidence):
        return keep
    names = {p.name for p in case.logs}
    for ev in evidence:
        name = Path(str(ev.get("file") or "")).name
        if name not in names:
            continue
        first = int(ev.get("record_line") or ev.get("line") or 0)
        if first <= 0:
            continue
        span = max(1, str(ev.get("record_text") or ev.get("text") or "").count("\n") + 1)
        last = max(first + span - 1, int(ev.get("line") or first))
        keep.setdefault(name, set()).update(range(max(1, first - 2), last + 3))
    return keep


def _evidence_text(text: str, lines: set[int], how: str, nccl_version: str | None = None) -> str:
    kept = [line for n, line in enumerate(text.split("\n"), 1) if n in lines]
    if how == "bare":
        return "\n".join(b for b in (_bare(line) for line in kept) if b)
    if how == "last-error":
        return "\n".join(last_error_head(nccl_version) + [_bare(line) for line in kept if _bare(line)])
    return "\n".join(kept)


def _known(transform: str) -> bool:
    """A transform of :data:`TRANSFORMS`, or several joined by ``+`` (applied left to right; an evidence
    transform only first): the damages real pastes combine, such as a short paste hard-wrapped
    (``evidence+wrap80``) or bare lines quoted (``bare+quote``)."""
    first, *rest = transform.split("+")
    return first in TRANSFORMS and all(t in TEXT_TRANSFORMS for t in rest)


def damage_case(case: fs.Case, transform: str, report: dict, out: Path) -> fs.Case | None:
    """The case with its logs damaged by ``transform`` (:func:`_known`), written under ``out``; None when it
    does not apply."""
    first, *rest = transform.split("+")
    if rest:
        got = damage_case(case, first, report, out / f"_{transform}")
        if got is None:
            return None
        texts = {p.name: p.read_text(encoding="utf-8") for p in got.logs}
        damaged = dict(texts)
        for t in rest:
            damaged = {name: TEXT_TRANSFORMS[t](text) for name, text in damaged.items()}
        if damaged == texts:
            return None
        return _written(case, transform, damaged, out)
    texts = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in case.logs}
    if transform in EVIDENCE_TRANSFORMS:
        if case.benign:
            return None
        keep = _evidence_lines(report, case, warn_only=transform == "last-error")
        if not keep:
            return None
        version = ((case.meta or {}).get("versions") or {}).get("nccl")
        damaged = {name: _evidence_text(texts[name], lines, transform, str(version) if version else None)
                   for name, lines in keep.items()}
    else:
        damaged = {name: TEXT_TRANSFORMS[transform](t) for name, t in texts.items()}
        if all(damaged[n] == texts[n] for n in texts):
            return None
    return _written(case, transform, damaged, out)


def _written(case: fs.Case, transform: str, damaged: dict[str, str], out: Path) -> fs.Case:
    folder = out / f"{case.name}--{transform}"
    folder.mkdir(parents=True)
    logs = []
    for name, text in damaged.items():
        path = folder / name
        path.write_bytes(text.encode("utf-8"))
        logs.append(path)
    return fs.Case(case.name, folder, case.category, case.culprit_rank, sorted(logs), case.meta)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="How well logdoc's right answers on the field corpus survive paste damage.")
    ap.add_argument("--cases", default=None, help="folder of case folders (default: tests/field/cases)")
    ap.add_argument("--logdoc", default=None, help="import logdoc from this checkout instead of this one")
    ap.add_argument("--only", default="", help="comma-separated transforms, each one or several joined by + (default: all): "
                    + ", ".join(TRANSFORMS))
    ap.add_argument("--show", type=int, default=0, help="list up to N losses per transform")
    args = ap.parse_args(argv)
    only = [t for t in args.only.split(",") if t] or list(TRANSFORMS)
    bad = [t for t in only if not _known(t)]
    if bad:
        print(f"field_damage: unknown transform {bad[0]!r}; known: {', '.join(TRANSFORMS)}", file=sys.stderr)
        return 2
    cases_dir = Path(args.cases) if args.cases else fs.DEFAULT_CASES
    if not cases_dir.is_dir():
        print(f"field_damage: no such folder: {cases_dir}", file=sys.stderr)
        return 2
    logdoc_mod = fs.import_logdoc(args.logdoc)
    from logdoc.kb import CATEGORIES

    runner = fs.Runner(logdoc_mod)
    right: list[tuple[fs.Case, dict]] = []
    for d in fs.case_dirs(cases_dir):
        try:
            case = fs.load_case(d, CATEGORIES)
        except fs.CaseError:
            continue
        report = runner.explain([str(p) for p in case.logs])
        outcome = fs.run_case(_Fixed(report), case)
        if outcome.top1:
            right.append((case, report))
    tmp = Path(tempfile.mkdtemp(prefix="field-damage-"))
    kept_all = total_all = 0
    try:
        for transform in only:
            kept, losses = 0, []
            for case, report in right:
                damaged = damage_case(case, transform, report, tmp)
                if damaged is None:
                    continue
                o = fs.run_case(runner, damaged)
                if o.top1:
                    kept += 1
                else:
                    losses.append(o)
            total = kept + len(losses)
            kept_all, total_all = kept_all + kept, total_all + total
            print(f"damage: {transform:14} kept {kept}/{total} = {fs._pct(kept, total)}")
            for o in losses[: args.show]:
                print(f"    {o.case.name:40} expected {o.case.category}: {o.reason()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{len(right)} cases right before any damage")
    print(f"damage: kept {kept_all}/{total_all} = {fs._pct(kept_all, total_all)} over {len(only)} transforms")
    return 0


class _Fixed:
    """A runner that answers with a report already made (the undamaged case's)."""

    def __init__(self, report: dict):
        self.report = report

    def explain(self, paths: list[str]) -> dict:
        return self.report


if __name__ == "__main__":
    sys.exit(main())
