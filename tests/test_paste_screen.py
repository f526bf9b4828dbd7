"""paste.as_written: the cheap screen that spares a large input's parts the paste repair. It may say
"look" when there is nothing to repair, never "as written" when repair_lines() would repair
something: checked on every sample log, every field case (real pastes) and damaged copies of the
samples (each damage the repair knows), and the parse of a job folder is the same with the screen."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from logdoc import paste
from logdoc.paste import LEARN_LINES, as_written, repair_lines
from logdoc.read.source import ReadStats, Source, read_lines

ROOT = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    out = []
    for base in (ROOT / "samples", ROOT / "tests" / "field"):
        out += [p for p in sorted(base.rglob("*")) if p.is_file() and p.suffix in (".log", ".txt", ".out", ".err")
                and p.stat().st_size < (4 << 20)]
    return out


def _lines(p: Path) -> list[str]:
    return [t for _n, t in read_lines(Source(str(p), path=str(p)), ReadStats())]


def _chunks(lines: list[str]):
    for i in range(0, max(1, len(lines)), LEARN_LINES):
        yield lines[i:i + LEARN_LINES]


def _interleave(t: str) -> str:
    return "".join(a + b for a, b in zip(t, t))


DAMAGE = {
    "fence": lambda ls: ["```"] + ls + ["```"],
    "quote": lambda ls: ["> " + t for t in ls],
    "bullets": lambda ls: ["- " + t for t in ls],
    "indent": lambda ls: ["    " + t for t in ls],
    "details": lambda ls: ["<details><summary>log</summary>"] + ls + ["</details>"],
    "prefix": lambda ls: ["job-7b.0 [stderr] " + t for t in ls],
    "prefix alone": lambda ls: [("trainer-worker-0 pytorch " + t).rstrip() for t in ls] + ["trainer-worker-0 pytorch"],
    "bracket prefix": lambda ls: ["[Trainer LOG] " + t for t in ls],
    "logger prefix": lambda ls: ["ERROR 03-05 00:25:45 [core.py:1094] " + t for t in ls],
    "address prefix": lambda ls: ["10.1.2.3: " + t for t in ls],
    "ray note": lambda ls: ls[:1] + ["[3 similar log lines] " + t for t in ls[1:2]] + ls[2:],
    "wrapped": lambda ls: [t[i:i + 80] for t in ls for i in range(0, max(1, len(t)), 80)],
    "interleaved": lambda ls: ls[:3] + [_interleave(t) for t in ls[3:4]] + ls[4:],
    "written twice": lambda ls: ls[:3] + [t + t for t in ls[3:4]] + ls[4:],
    "typeset quotes": lambda ls: [t.replace('"', "\u201c", 1).replace('"', "\u201d", 1).replace("'", "\u2019") for t in ls],
    "glued bar": lambda ls: ls[:2] + [" 45%|\u2588\u2588\u2588\u2588\u258c     | 45/100 [00:12<00:15,  3.60it/s]" + t for t in ls[2:3]] + ls[3:],
    "ipython traceback": lambda ls: ls[:2] + ["-" * 75, "RuntimeError                              Traceback (most recent call last)",
                                              "Cell In[3], line 5", "----> 5 dist.barrier()", ""] + ls[2:],
    "bold cut": lambda ls: ls[:1] + ["**RuntimeError: the close of the emphasis was cut with " + t for t in ls[1:2]] + ls[2:],
    "editor links": lambda ls: [re.sub(r"(?<![\w@.:-])(\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z_]\w*\.(?:cc|py))(?![\w.-]*\w)",
                                       lambda m: f"[{m[0]}](http://{m[0]}/)", t, count=1) for t in ls],
    "console rows": lambda ls: [f"| 2024-05-01T10:00:00.000Z{t} | {t}" if t.strip() else t for t in ls],
    "scroll position": lambda ls: [t.ljust(100) + "[3/1234]" if i == 0 else t for i, t in enumerate(ls)],
    "time lines": lambda ls: [x for t in ls for x in ("2024-05-01T10:00:00.000Z", t)],
    "padded rows": lambda ls: ["".join(t[k:k + 120].ljust(120) for t in ls[:6] for k in range(0, max(1, len(t)), 120))] + ls[6:],
    "syslog escapes": lambda ls: ["Dec 03 01:02:03 gpu-node-1 python[48213]: " + "#012".join(ls[:3]).replace("\t", "#011")] + ls[3:],
    "dedented frames": lambda ls: ls + ['File "/opt/x/torch/distributed/rendezvous.py", line 190, in _env_rendezvous_handler',
                                        "store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)",
                                        "RuntimeError: Address already in use"],
}


# an editor's links, then a hard wrap that cut some of them (the repair joins a line cut inside a link with its rest)
DAMAGE["editor links wrapped"] = lambda ls: DAMAGE["wrapped"](DAMAGE["editor links"](ls))
# line numbers in brackets before every line (the repair removes them: no MPICH rank)
DAMAGE["bracketed line numbers"] = lambda ls: [f"[{n}] {t}" for n, t in enumerate(ls, 1)]
# an editor's links, then a viewer's cut at 100 columns that left one open at the line's end (the repair reads it as its text)
DAMAGE["editor links cut"] = lambda ls: [t[:100] for t in DAMAGE["editor links"](ls)]
# a viewer's line numbers, then a hard wrap at 80 columns: the rows a line's wrap made carry no number (the repair
# joins them to their numbered line)
DAMAGE["numbered wrapped"] = lambda ls: DAMAGE["wrapped"]([f"{n:4d} | {t}" if t else t for n, t in enumerate(ls, 1)])


def _corpus():
    for p in _files():
        lines = _lines(p)
        for chunk in itertools.islice(_chunks(lines), 3):
            yield p.name, chunk


def test_as_written_never_hides_a_repair():
    seen = clean = 0
    for name, lines in _corpus():
        if not lines:
            continue
        seen += 1
        if as_written(lines):
            clean += 1
            assert repair_lines(lines) is None, f"{name}: as_written() but repair_lines() repairs it"
    assert seen > 200
    # the screen is worth having: most logs as written pass it
    assert clean > seen // 4, (clean, seen)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_as_written_sees_every_damage(damage):
    repaired = 0
    for name, lines in itertools.islice(_corpus(), 0, None, 3):
        bad = DAMAGE[damage](lines[:200])
        if repair_lines(bad) is not None:
            repaired += 1
            assert not as_written(bad), f"{name} ({damage}): as_written() but repair_lines() repairs it"
    assert repaired, damage  # the damage is one the repair knows


def test_the_lines_read_as_without_prefix_start_no_envelope():
    """_NO_PREFIX counts a line that starts with a lower-case word without a digit or a colon, or
    with punctuation that starts no envelope, as one no prefix is learned from: unwrap() must peel
    nothing from it. Only pdsh's `host: ` (it needs the colon), grep's `file.log:` (the colon too), a
    stdlib logger line whose level a paste cut (`torch.distributed.x.api:msg`, the colon too), Compose's
    `<service>-<n>  | ` (it needs the digit), a c10 / glog header cut at its left (`ocket.cpp:663] `, the colon
    and a digit in its first word), a test helper's stream label (`stderr: `, the colon too), the readers that apply only after an ISO stamp start with a lower-case
    letter; and a Python warning's head (`/x/y.py:9: UserWarning: `, `./a.py:9: `, `_x.py:9: `: its first word
    always holds `:<line>:`, a digit) may start with a lower-case letter or `/`, `.`, `_`, `\\`."""
    from logdoc.envelope import (_BY_FIRST, AFTER_TIME, _compose, _grepped, _header_cut, _pdsh, _pywarn, _stdio_label,
                                 _stdlib_cut)

    for c, readers in _BY_FIRST.items():
        if c.islower():
            assert all(fn in (_pdsh, _compose, _grepped, _stdlib_cut, _header_cut, _pywarn, _stdio_label) or fn in AFTER_TIME
                       for _rx, fn in readers), c
        assert c not in "{'\"=#@!$%&,;?" and (c not in "./_\\" or all(fn is _pywarn for _rx, fn in readers)), c
    assert len(paste._NO_PREFIX.findall("\n/x/y.py:9: UserWarning: w\n./a.py:9: FutureWarning: w\n_x.py:9: Warning: w")) == 0
    from logdoc.envelope import unwrap

    assert unwrap("stderr F saving checkpoint")[0].layers == () and unwrap("step | loss")[0].layers == ()
    lines = ["step 1 | loss 2.0", "{'loss': 2.0}", "saving checkpoint", "  indented", "", "eval: ok"]
    assert len(paste._NO_PREFIX.findall("\n" + "\n".join(lines))) == 4  # (not the blank line nor `eval:`)


def test_bare_line_between_nccl_lines():
    nccl = [f"node-3:1234:1250 [0] NCCL INFO comm 0x{i:x} rank 0 nranks 8" for i in range(3)]
    lines = ["step 1 | loss 2.0"] * 5 + nccl[:2] + ["NCCL version 2.21.5+cuda12.4"] + nccl[2:] + ["step 2"] * 5
    assert repair_lines(lines) is not None
    assert not as_written(lines)


def test_a_job_folder_parses_the_same_with_the_screen(tmp_path, monkeypatch):
    """Rank logs of one job, more than EVERY_LINE_INPUT_MAX in all: the screen spares the repair,
    the events and counts are those of the repair's own verdict."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "perf"))
    try:
        import gen_logs
    finally:
        sys.path.pop(0)
    from logdoc.pipeline import parse_paths

    gen_logs.job_folder(str(tmp_path / "job"), 64, 0.02)

    def run():
        r = parse_paths([str(tmp_path / "job")], jobs=1)
        return [(e.file, e.line, e.kind, e.rank, e.host, e.pid, e.text) for e in r.events], r.stats.to_dict()

    with_screen = run()
    calls = []
    monkeypatch.setattr(paste, "as_written", lambda lines: calls.append(1) or False)
    without = run()
    assert calls and with_screen == without
