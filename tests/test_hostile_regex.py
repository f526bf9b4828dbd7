"""Time limits: no built-in pattern may take super-linear time on a hostile line.

Every pattern logdoc runs on log text is attacked with adversarial inputs of about 100 KB (the size
of a pasted or garbage line; the reader cuts lines at 1 MiB and the matchers look at a bounded head):

* printf and catalog formats (``grammars/nccl_messages.tsv``, ``grammars/torch_templates.tsv``):
  long runs of what each conversion accepts, every separator repeated many times (a *flood*: each
  lazy ``%s`` can then stop at any of them), and a near miss at the end;
* the other patterns (envelopes, the NCCL header, block and message patterns, the knowledge base):
  the pattern's own literal prefix, then a long run of one character (or a pair) that its
  quantifiers repeat, then a byte it cannot match.

Each call must finish within :data:`BOUND` seconds (measured twice before failing, so that a
scheduler hiccup on a busy CI machine is not a failure; catastrophic backtracking takes seconds to
hours). Catalog formats are additionally bounded by ``logdoc.classify.formats.MATCH_TIMEOUT`` through the
``regex`` module; the patterns outside the catalogs must be linear by construction.

``LOGDOC_FUZZ_FULL=1`` (set by ``tools/fuzz.py``) runs every attack on every format; the default CI
run uses a fixed subset that took the longest in the full run.
"""
from __future__ import annotations

import os
import re
import time
import warnings
from functools import lru_cache

import pytest

from logdoc import envelope, nccl
from logdoc.classify import torch as torchlines
from logdoc.read import prefilter
from logdoc.classify.torch import catalog as torch_catalog, exceptions, gloo
from logdoc.blocks import SUMMARY_BODY, BlockAssembler
from logdoc.classify.formats import split_alts
from logdoc.envelope import has_huge_number, unwrap
from logdoc.events import Envelope
from logdoc.classify.formats import PRINTF_CONV as _CONV
from logdoc.templates import MAX_MATCH_LEN, nccl_catalog

with warnings.catch_warnings():  # the parser of `re` itself: deprecated as a module name, still there
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        from re import _parser as sre_parse  # Python >= 3.11
    except ImportError:  # pragma: no cover
        import sre_parse

# A linear match of TARGET characters takes milliseconds; a quadratic one takes minutes. The bound sits
# far from both, and it is this process's CPU time, not the wall clock: other jobs on a loaded machine
# (CI, parallel test workers) do not count against a linear pattern.
BOUND = 1.0
TARGET = 100_000
FULL = bool(os.environ.get("LOGDOC_FUZZ_FULL"))


def timed(fn, *args) -> float:
    t0 = time.process_time()
    fn(*args)
    return time.process_time() - t0


def check_bounded(cases, fn, bound: float = BOUND) -> None:
    """``cases``: (label, argument); fail with every label that stays over the bound."""
    slow = []
    for label, arg in cases:
        dt = timed(fn, arg)
        if dt > bound:
            dt = min(dt, timed(fn, arg))
            if dt > bound:
                slow.append(f"{label}: {dt:.2f}s")
    assert not slow, f"{len(slow)} slow call(s):\n" + "\n".join(slow[:40])


# ------------------------------------------------------------------------------------------------
# attacks on printf-like formats

_FILL = {"d": "1", "i": "1", "u": "1", "x": "f", "X": "F", "p": "f", "o": "7", "c": "c", "e": "1",
         "f": "1", "g": "1", "E": "1", "F": "1", "G": "1", "a": "1", "A": "1"}


def printf_pieces(fmt: str) -> tuple[list[str], list[str]]:
    """Literal pieces and one fill character per conversion of an NCCL catalog format."""
    fmt = fmt.split("\\n")[0].replace("\\t", "\t").replace("\\\\", "\\")
    lits, convs, pos = [], [], 0
    for m in _CONV.finditer(fmt):
        if m.group(0) == "%%":
            continue
        lits.append(fmt[pos:m.start()])
        pos = m.end()
        convs.append("a" if m.group(0).startswith("{") else _FILL.get(m["conv"], "a"))
    lits.append(fmt[pos:])
    return lits, convs


def brace_pieces(fmt: str) -> tuple[list[str], list[str]]:
    """The same for a torch catalog format (``{name}``, ``{name:int}``, ``{a|b}`` alternatives)."""
    lits: list[str] = []
    convs: list[str] = []
    cur: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(fmt[j], 0)
                j += 1
            inner = fmt[i + 1:j - 1]
            m = re.fullmatch(r"([a-z_][a-z0-9_]*)(?::(int|word|line|rest))?", inner)
            if m:
                lits.append("".join(cur))
                cur = []
                convs.append("1" if m.group(2) == "int" else "a")
            else:
                alt = split_alts(re.sub(r"^[a-z_][a-z0-9_]*=", "", inner))[0]
                sub_l, sub_c = brace_pieces(alt)
                cur.append(sub_l[0])
                for cc, ll in zip(sub_c, sub_l[1:]):
                    lits.append("".join(cur))
                    cur = [ll]
                    convs.append(cc)
            i = j
            continue
        cur.append(c)
        i += 1
    lits.append("".join(cur))
    return lits, convs


def _broken(lit: str) -> str:
    if not lit.strip():
        return lit + "\n\x01"
    k = len(lit.rstrip()) - 1
    return lit[:k] + "\x01" + lit[k + 1:]


def _fill(ch: str, conv: str) -> str:
    return ch if conv == "a" else conv


def format_attacks(lits: list[str], convs: list[str], target: int = TARGET):
    """(name, text) pairs: long runs, separator floods and near misses for one format."""
    k = len(convs)
    if k == 0:
        base = lits[0] or "x"
        yield "repeat-literal", (base * (target // len(base) + 1))[:target]
        yield "literal-near-miss", _broken(base) + "a" * target
        return
    for ch in ("a ", " ", "a", "1", "\t"):
        m = max(1, target // k // len(ch))
        runs = [_fill(ch, c) * m for c in convs]
        body = lits[0] + "".join(r + lit for r, lit in zip(runs, lits[1:]))
        yield f"runs-{ch!r}-tail-nl", body + "\n!"
        yield f"runs-{ch!r}-broken-last", body[:len(body) - len(lits[-1])] + _broken(lits[-1])
    unit = "".join(c + lit for c, lit in zip(convs[:-1], lits[1:-1])) + convs[-1]
    r = max(1, target // max(1, len(unit)))
    yield "flood-broken-last", lits[0] + unit * r + _broken(lits[-1])
    yield "flood-tail-nl", lits[0] + unit * r + lits[-1] + "\n!"
    for i in range(1, k):
        rep = convs[i - 1] + lits[i]
        ri = max(1, target // max(1, len(rep)))
        pre = lits[0] + "".join(c + lit for c, lit in zip(convs[:i - 1], lits[1:i]))
        post = "".join(c + lit for c, lit in zip(convs[i:-1], lits[i + 1:-1])) + convs[-1]
        yield f"flood-sep{i}", pre + rep * ri + post + _broken(lits[-1])
    yield "near-miss", lits[0] + unit + _broken(lits[-1])


# The attacks that took longest in a full run (LOGDOC_FUZZ_FULL=1). In CI, formats with two or
# more variable-length runs (the ones that can go polynomial) get all of these, the others (at most
# quadratic, and cut to a bounded head) the first.
CI_ATTACKS = ("flood-broken-last", "runs-'a '-tail-nl", "flood-tail-nl", "flood-sep1", "flood-sep2",
              "repeat-literal")


def _selected(attacks, convs=("a", "a")):
    wanted = CI_ATTACKS if list(convs).count("a") >= 2 else ("flood-broken-last", "repeat-literal")
    for name, text in attacks:
        if FULL or name in wanted:
            yield name, text


def test_adversarial_generator_hits_the_formats():
    """The floods really are near misses of the format they attack (else they test nothing)."""
    cat = nccl_catalog()
    t = next(t for t in cat.templates.values() if t.format.startswith("Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s"))
    lits, convs = printf_pieces(t.format)
    ok = lits[0] + "".join(c + lit for c, lit in zip(convs, lits[1:]))
    assert t.rx.match(ok)
    names = {n for n, _ in format_attacks(lits, convs)}
    assert {"flood-broken-last", "flood-sep1", "runs-'a '-tail-nl"} <= names


def test_nccl_catalog_formats_are_bounded():
    """Every NCCL format; the attack's near miss is placed inside the head the matcher reads too."""
    cat = nccl_catalog()
    cases = []
    for i, t in enumerate(cat.templates.values()):
        lits, convs = printf_pieces(t.format)
        if not FULL and convs.count("a") < 2 and i % 3:
            continue  # one variable-length run: at most quadratic on the 4 KB head; CI takes a third
        # the matcher reads the first MAX_MATCH_LEN characters: the 100 KB attacks differ from the
        # short ones only past that head, so CI runs them on a fixed sample
        for target in (MAX_MATCH_LEN - 16, TARGET) if FULL or i % 10 == 0 else (MAX_MATCH_LEN - 16,):
            for name, text in _selected(format_attacks(lits, convs, target), convs):
                cases.append((f"{t.id} {name} {target} {t.format[:60]!r}", text))
    check_bounded(cases, cat.match)


def _torch_cases(target: int):
    for where, lst in torch_catalog.templates().items():
        for t in lst:
            lits, convs = brace_pieces(t.format.strip())
            for name, text in _selected(format_attacks(lits, convs, target), convs):
                if not has_huge_number(text):  # never reaches a template (see test_hostile_parse)
                    yield f"{t.id} {name} {target} {t.format[:60]!r}", text


def test_torch_catalog_formats_are_bounded():
    """Every PyTorch / Gloo format, through the table matcher (which reads a 64 KB head)."""
    wheres = ("body", "line", "gloo")
    cases = list(_torch_cases(8_000))
    if FULL:
        cases += list(_torch_cases(TARGET))
    else:  # 100 KB inputs cost ~20 ms each just to look for 700 anchors: a fixed sample in CI
        cases += [c for i, c in enumerate(_torch_cases(TARGET)) if i % 25 == 0]
    check_bounded(cases, lambda s: torch_catalog.match_templates(s, wheres))


# ------------------------------------------------------------------------------------------------
# attacks on any regular expression

_REPS = "a1 \t_.-:/[]()=,\"'xZ"


def _literal_prefix(pattern: str) -> str:
    """The literal text a pattern starts with (good enough to get past its first pieces)."""
    out = []
    try:
        items = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001
        return ""
    for op, av in items:
        if op is sre_parse.LITERAL:
            out.append(chr(av))
        elif op is sre_parse.AT:
            continue
        else:
            break
    return "".join(out)


def _pattern_chars(pattern: str) -> list[str]:
    """Characters a pattern's quantifiers may repeat: its literal characters plus class samples."""
    chars = set(_REPS)
    try:
        items = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001
        return sorted(chars)

    def walk(seq):
        for op, av in seq:
            if op is sre_parse.LITERAL:
                chars.add(chr(av))
            elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
                walk(av[2])
            elif op is sre_parse.SUBPATTERN:
                walk(av[-1])
            elif op is sre_parse.BRANCH:
                for b in av[1]:
                    walk(b)
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                walk(av[1])
            elif op is sre_parse.IN:
                for iop, iav in av:
                    if iop is sre_parse.LITERAL:
                        chars.add(chr(iav))
                    elif iop is sre_parse.RANGE:
                        chars.add(chr(iav[0]))

    walk(items)
    return sorted(c for c in chars if c.isprintable() or c == "\t")


def regex_attacks(pattern: str, target: int = TARGET):
    """(name, text): prefix + a long run of one character or pair + a byte nothing expects."""
    prefix = _literal_prefix(pattern)
    chars = _pattern_chars(pattern)
    pairs = {a + b for a, b in zip(prefix, prefix[1:])} | {"a ", " a", "a:", "1.", "a-", "[a", "a]", "a1"}
    for pre in {prefix, ""}:
        for c in chars:
            yield f"{pre[:20]!r}+{c!r}*", pre + c * target + "\x00"
        for p in sorted(pairs):
            yield f"{pre[:20]!r}+{p!r}*", pre + p * (target // 2) + "\x00"


def _regex_cases(label: str, pattern: str, target: int = TARGET):
    for name, text in regex_attacks(pattern, target):
        yield f"{label} {name}", text


def test_envelope_patterns_are_bounded():
    cases = []
    for i, (_first, rx, fn) in enumerate(envelope.ENVELOPES):
        cases += list(_regex_cases(f"envelope {i} ({fn.__name__})", rx.pattern))
    for rx in (envelope._RAY_REPEAT, envelope._EMBEDDED, envelope._PDSH_NEEDS_DIGIT):
        cases += list(_regex_cases(f"envelope {rx.pattern[:30]!r}", rx.pattern))
    # stacked envelopes, each one long
    cases.append(("stacked srun", " 0: " * (TARGET // 4)))
    cases.append(("stacked tee", "[default0]:" * (TARGET // 11) + "x"))
    cases.append(("stacked rank", "[rank0]:" * (TARGET // 8)))
    cases.append(("embedded c10", "x]:[" * (TARGET // 4) + "[rank0]:[E"))
    check_bounded(cases, unwrap)


def test_nccl_line_patterns_are_bounded():
    cases = []
    for rx in (nccl.HEADER, nccl.BANNER):
        for label, text in _regex_cases(f"nccl {rx.pattern[:30]!r}", rx.pattern):
            cases.append((label, text + " NCCL INFO x"))
            cases.append((label + " (head)", "h:1:2 [0] NCCL INFO " + text))
    cases.append(("many headers", "h:1:2 [0] " * (TARGET // 10) + "NCCL INFO x"))
    cases.append(("many almost-headers", "h:1:2 " * (TARGET // 6) + " NCCL INFO"))
    cases.append(("version run", "NCCL version " + "2." * (TARGET // 2)))
    for start in ("Channel ", "NET/Socket : Using [", "NET/IB : Using [", "Bootstrap : Using ", "comm 0x",
                  "ncclCommInitRank comm 0x", "Connected all rings", "NCCL_SOCKET_IFNAME set by environment to ",
                  "misc/socket.cc:1 -> ", "Using network "):
        for unit in ("[0]a:1/IB ", "0[0] -> 1[1] via ", "0 1 2 ", "a:", "x -> ", "  "):
            cases.append((f"grammar {start!r} {unit!r}",
                          "h:1:2 [0] NCCL INFO " + start + unit * (TARGET // len(unit))))
    check_bounded(cases, lambda s: nccl.classify(s, Envelope()))


def test_prefilter_patterns_are_bounded():
    cases = list(_regex_cases("candidate", prefilter._CANDIDATE.pattern))
    cases += list(_regex_cases("marked", prefilter.MARKERS.pattern))
    check_bounded(cases, lambda s: (prefilter.candidate(s), prefilter.marked(s)))


_BLOCK_UNITS = [
    ("traceback", "Traceback (most recent call last):", '  File "x.py", line 1, in f'),
    ("chained", "Traceback (most recent call last):", "During handling of the above exception, another exception occurred:"),
    ("child failed", "=" * 60, "[1]:"),
    ("wrapped", "[Rank 0] Collective", "WorkNCCL("),
    ("frames", "Exception raised from x at y:1 (most recent call first):", "frame #0: x + 0x1 (0x1 in y.so)"),
    ("tabs", "Rank 0 timed out", "\tx"),
]


def test_block_assembly_is_bounded():
    """Records are bounded in lines and bytes; each long line is still read in linear time."""
    def feed(lines):
        asm = BlockAssembler()
        for i, line in enumerate(lines, 1):
            env, msg = unwrap(line)
            for rec in asm.feed(i, env, msg):
                torchlines.classify(rec.text, rec.env)
        for rec in asm.flush():
            torchlines.classify(rec.text, rec.env)

    cases = []
    for label, head, unit in _BLOCK_UNITS:
        cases.append((f"{label}: many lines", [head] + [unit] * 2000))
        cases.append((f"{label}: one long line", [head, unit * (TARGET // len(unit))]))
        cases.append((f"{label}: long head", [head * (TARGET // len(head)), unit]))
    check_bounded(cases, feed, bound=2 * BOUND)


_MESSAGE_STARTS = [
    "Traceback (most recent call last):\n", "RuntimeError: ", "[Rank 0] ", "[PG ID 0 PG GUID 0(default_pg) Rank 0] ",
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=", "NCCL error in: ",
    "Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(",
    "[/x/gloo/transport/tcp/pair.cc:1] ", "Gloo connectFullMesh failed with ", "terminate called after throwing ",
    "Exception raised from ", "[1]:\n  time      : ", "  exitcode  : ", "Root Cause (first observed failure):\n", "NVRM: Xid (PCI:0000:01:00): 79, ", "[c10d] ",
    "ChildFailedError: \n" + "=" * 20 + "\n",
]


def test_torch_message_patterns_are_bounded():
    """The message-level patterns and grammars of the torch classifiers (PG prefixes, exception lines, Gloo
    locations, peers, the failure table), through ``classify``, twice (the second run takes the
    grammar cache's fast path)."""
    cases = []
    for rx in (exceptions.EXC_LINE, gloo.PEER, SUMMARY_BODY, gloo.GLOO_LOC):
        cases += list(_regex_cases(f"torch {rx.pattern[:30]!r}", rx.pattern))
    units = ("a ", "a.", "1, ", "[a]", "=", "\n  a", "\n", ": ", "(", ")", "Error: ", "[Rank 0] ")
    for start in _MESSAGE_STARTS:
        for unit in units if FULL else units[::2]:
            # a record holds at most BlockAssembler.max_lines lines (Lark reads them in linear time)
            count = TARGET // len(unit) if "\n" not in unit else 500
            cases.append((f"{start[:20]!r}+{unit!r}", start + unit * count))
    cases = cases + cases
    check_bounded(cases, torchlines.classify)


@lru_cache(maxsize=1)
def _builtin_patterns() -> list[tuple[str, str]]:
    from logdoc.kb import load_rules

    out = []
    for rule in load_rules().active():
        match = rule.data.get("match") or {}
        clauses = [("match", match)]
        for key in ("with", "without"):
            spec = match.get(key)
            for i, cl in enumerate(spec if isinstance(spec, list) else [spec] if spec else []):
                clauses.append((f"{key}.{i}", cl))
        for where, cl in clauses:
            if isinstance(cl, dict) and cl.get("pattern"):
                out.append((f"{rule.id} {where}.pattern", cl["pattern"]))
            for name, cond in (cl.get("fields") or {}).items() if isinstance(cl, dict) else ():
                if isinstance(cond, dict):
                    for op in ("matches", "not_matches"):
                        if isinstance(cond.get(op), str):
                            out.append((f"{rule.id} {where}.fields.{name}.{op}", cond[op]))
    return out


def test_knowledge_base_has_patterns():
    assert len(_builtin_patterns()) >= 50


def test_knowledge_base_patterns_are_bounded():
    """Built-in rule patterns run with the kb's own timeout; none may come near it. Measured with
    ``re`` (what the browser build uses, without a timeout)."""
    cases = []
    for label, pattern in _builtin_patterns():
        rx = re.compile(pattern)
        for name, text in regex_attacks(pattern, 20_000 if not FULL else TARGET):
            cases.append((f"{label} {name}", (rx, text)))
    check_bounded(cases, lambda a: a[0].search(a[1]))


@pytest.mark.parametrize("text", [
    "a" * 200_000 + " NCCL INFO x",
    " " * 200_000 + "NCCL WARN",
    "[rank0]:" + "[E" * 100_000,
    "1: " + "2: " * 100_000 + "NCCL",
], ids=["host-run", "spaces", "c10-opens", "srun-stack"])
def test_whole_parse_of_hostile_lines_is_bounded(text):
    from logdoc.pipeline import parse_text

    assert timed(parse_text, text) < 4 * BOUND


def _repeated_prefix(pattern: str, target: int) -> str | None:
    """The pattern's literal start printed again and again on one line, as when lines lose their ends
    and a message repeats: a pattern ``A.*?B`` is tried from every ``A`` to the line's end."""
    prefix = _literal_prefix(pattern)
    if len(prefix) < 4:
        return None
    unit = prefix + " x "
    return unit * (target // len(unit) + 1) + "\x00"


def test_knowledge_base_patterns_on_a_repeated_line_are_bounded():
    """A rule pattern searches a long line as its head and tail (kb/patterns.searched): on a line of
    256 KiB of its own start repeated (the reader passes up to 1 MiB), every search stays bounded.
    Searched whole, six patterns of the form ``A.*?B`` took 0.1 to 1.5 s at 64 KiB, and 16 times that
    at 256 KiB."""
    from logdoc.kb.patterns import _Pattern

    cases = []
    for label, pattern in _builtin_patterns():
        text = _repeated_prefix(pattern, 1 << 18)
        if text is not None:
            cases.append((label, (_Pattern(pattern, None), text)))
    assert len(cases) > 20
    # (the view makes the worst 0.04 s on a quiet machine, 0.3 s at load 11; the whole line took 24 s)
    check_bounded(cases, lambda a: a[0].search(a[1]))


def test_searched_keeps_head_and_tail_of_long_lines_only():
    from logdoc.kb.patterns import LINE_SEARCHED, _Pattern, searched

    short = "NCCL WARN x\n" * 5_000  # long text, short lines: searched as it is
    assert searched(short) is short
    long = "A" + "b" * (3 * LINE_SEARCHED) + "C"
    text = "first line\n" + long + "\nlast line"
    view = searched(text)
    assert view.startswith("first line\nAb") and view.endswith("bC\nlast line")
    assert len(view) < len(text)
    assert _Pattern(r"A.*C", None).search(text)  # the head comes before the tail: still a match
    assert not _Pattern(r"b{%d}" % (2 * LINE_SEARCHED + 1), None).search(text)  # the middle is not searched


def test_explain_of_a_message_glued_to_itself_is_bounded():
    """A c10 error printed again and again without line ends (a fuzz finding: 11,000 copies on a
    1.9 MB line took minutes in the rules' search). The first copy is still diagnosed."""
    from logdoc.api import explain_sources

    unit = ("[E1129 23:10:42.152973094 ProcessGroupGloo.cpp:67] Gloo connectFullMesh failed with "
            "[/w/third_party/gloo/gloo/transport/tcp/pair.h:311] Connect timeout [none]")
    text = "step 1\n" + unit * ((1 << 20) // len(unit)) + "\nstep 2\n"
    explain_sources([("job.log", unit + "\n")])  # the rules loaded and compiled before timing
    assert timed(explain_sources, [("job.log", text)]) < 4 * BOUND
    report = explain_sources([("job.log", text)])
    assert report["diagnoses"], "the glued line is still read"
