"""The text lint: render every rule's texts against real events and reject broken prose.

``logdoc rules lint`` (and ``tests/test_textlint.py``) renders each rule's title, explanation, fix,
confirm and not_when against every event its match examples produce, and against every bundled
sample when the checkout has them, and reports:

* in a title: a ``?``, a ``(name not in log)``, or a placeholder that printed nothing;
* anywhere: a value printed twice in a row (``1024 MiB1024 MiB``);
* a value glued to a word (``GPU1b000``, ``mesh_pp`` + ``1``): no space between joined parts;
* a sentence-like value (several words) followed by a new sentence without a full stop
  (``never enqueued 183 Ranks 0, 1 ...``), and a doubled full stop;
* (statically, in the templates) a ``rank(s)`` hedge where ``{ranks?(rank{s} {})}`` says it right.

The checks read the pieces ``kb.render_pieces`` returns (literal text and placeholder values), so
they know where a value ends and the template's own text begins. The core imports without typer.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .kb import Match, RuleSet, example_events, example_sources, render_pieces
from .lazyre import lazy_re

TEXT_KEYS = ("title", "explanation", "fix", "confirm", "not_when")
_NEW_SENTENCE = lazy_re(r"^\s+[A-Z][a-z]")
_DOUBLE_STOP = lazy_re(r"(?<!\.)\.\.(?![.\d])")  # not a range (`0..3`)
_SENTENCE_END = ".!?:;,)]\"'`>"
_MAYBE_PLURAL = lazy_re(r"\b([A-Za-z]+)\(s\)")  # ``rank(s)``: a form's hedge, not a sentence


def _alnum(c: str) -> bool:
    return c.isalnum()


def check_pieces(key: str, pieces: Sequence[tuple[str, str | None, bool]]) -> list[str]:
    """What is wrong with one rendered text (``key`` is title, explanation, ...)."""
    out: list[str] = []
    text = "".join(p[0] for p in pieces)
    if key == "title":
        if "?" in text:
            out.append("'?' in the title")
        if "not in log" in text:
            out.append("'not in log' in the title")
        for s, name, present in pieces:
            if name is not None and not present and not s:
                out.append(f"{{{name}}} printed nothing in the title")
    seen_double: set[str] = set()
    for s, name, present in pieces:
        v = s.strip()
        if name is None or not present or len(v) < 3 or v in seen_double:
            continue
        if v + v in text or f"{v} {v}" in text:
            seen_double.add(v)
            out.append(f"{{{name}}} = {v!r} printed twice")
    for i, ((a, an, ap), (b, bn, bp)) in enumerate(zip(pieces, pieces[1:])):
        if not a or not b or (an is None and bn is None):
            continue
        before = "".join(p[0] for p in pieces[:i + 1])
        in_code = before.count("`") % 2 == 1  # `[rank{rank}]:` in a command or a log prefix is on purpose
        if _alnum(a[-1]) and _alnum(b[0]) and not in_code:
            # a number followed by its unit (``30s``, ``16GB``) is one word on purpose
            if an is not None and bn is None and a[-1].isdigit() and b[0].isalpha():
                continue
            who = f"{{{an}}}" if an is not None else f"{{{bn}}}"
            out.append(f"{who} is glued to the next word: {(a[-12:] + b[:12])!r}")
        if an is not None and ap and " " in a.strip() and a.rstrip()[-1:] not in _SENTENCE_END \
                and bn is None and _NEW_SENTENCE.match(b):
            out.append(f"no full stop after {{{an}}}: {(a[-20:] + b[:12])!r}")
    if _DOUBLE_STOP.search(text):
        out.append(f"doubled full stop: {text[max(0, _DOUBLE_STOP.search(text).start() - 20):][:30]!r}")
    return out


def check_match(m: Match) -> list[str]:
    """Every problem of one match's rendered texts, as ``key: message``."""
    vals = m.values()
    out: list[str] = []
    for key in TEXT_KEYS:
        val = m.rule.data.get(key)
        texts = [val] if isinstance(val, str) else (val if isinstance(val, list) else [])
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                continue
            where = key if isinstance(val, str) else f"{key}[{i + 1}]"
            out.extend(f"{where}: {msg}" for msg in check_pieces(key, render_pieces(t, vals)))
    return out


def check_title(title: str) -> list[str]:
    """The title checks on an already rendered title (a card of the report)."""
    return check_pieces("title", [(title, None, True)])


def _example_events(rule, to_events) -> Iterable[tuple[str, list]]:
    ex = rule.data.get("examples") or {}
    for i, item in enumerate(ex.get("match") or []):
        evs = example_events(item)
        if evs is None:
            evs = to_events(example_sources(item, rule.id))
        yield f"match example {i + 1}", evs


def default_to_events(sources: list[tuple[str, str]]) -> list:
    from .analysis import analyze
    from .pipeline import parse_sources

    res = parse_sources(sources)
    a = analyze(res.events, files=res.files)
    return list(a.events) + list(a.synthetic)


def sample_dirs(root: Path | None = None) -> list[Path]:
    """The bundled samples of a checkout (none when installed from a wheel)."""
    root = root or Path(__file__).resolve().parents[1] / "samples"
    return sorted(p.parent for p in root.glob("*/sample.yaml"))


def lint_texts(rules: RuleSet, *, samples: Sequence[Path] | None = None,
               to_events: Callable[[list[tuple[str, str]]], list] = default_to_events,
               only: Iterable[str] | None = None) -> list[str]:
    """Render every rule against its match examples and the samples; one line per problem
    (``file:line: rule ID (where): key: message``), each distinct problem once."""
    wanted = set(only) if only is not None else None
    seen: set[tuple[str, str]] = set()
    out: list[str] = []

    def report(m: Match, where: str) -> None:
        for msg in check_match(m):
            if (m.rule.id, msg) in seen:
                continue
            seen.add((m.rule.id, msg))
            out.append(f"{m.rule.file}:{m.rule.line}: rule {m.rule.id} ({where}): {msg}")

    for rule in rules.active():
        if wanted is not None and rule.id not in wanted:
            continue
        for where, evs in _example_events(rule, to_events):
            for m in rules.match(evs):
                if m.rule.id == rule.id:
                    report(m, where)
    if samples:
        from .analysis import analyze
        from .pipeline import parse_paths

        for d in samples:
            res = parse_paths([str(d)])
            a = analyze(res.events, files=res.files)
            for m in rules.match(list(a.events) + list(a.synthetic)):
                if wanted is None or m.rule.id in wanted:
                    report(m, f"sample {d.name}")
    return out


def lint_static(rules: RuleSet) -> list[str]:
    """Checks on the templates themselves: a title must not fall back to ``?`` or to nothing
    (write ``{name?(text)}`` for text that only makes sense with the value)."""
    from .kb import TemplateError, _Ph, parse_template

    out: list[str] = []
    for rule in rules.active():
        t = rule.data.get("title")
        if not isinstance(t, str):
            continue
        try:
            nodes = parse_template(t)
        except TemplateError as exc:
            out.append(f"{rule.file}:{rule.line}: rule {rule.id}: title: {exc}")
            continue
        for n in nodes:
            if isinstance(n, _Ph) and not n.conditional and n.fallback is not None and (not n.fallback or "?" in n.fallback):
                out.append(f"{rule.file}:{rule.line}: rule {rule.id}: title: {{{n.name}|{n.fallback}}} can print "
                           f"{'nothing' if not n.fallback else repr(n.fallback)}; use {{{n.name}?(...)}}")
        if "?" in "".join(n for n in nodes if isinstance(n, str)):
            out.append(f"{rule.file}:{rule.line}: rule {rule.id}: title: '?' in the title's text")
    for rule in rules.active():
        for key in TEXT_KEYS:
            val = rule.data.get(key)
            for t in [val] if isinstance(val, str) else (val if isinstance(val, list) else []):
                m = _MAYBE_PLURAL.search(t) if isinstance(t, str) else None
                if m:
                    out.append(f"{rule.file}:{rule.line}: rule {rule.id}: {key}: {m.group(0)!r} reads as a form, "
                               f"not a sentence; write {{name?({m.group(1)}{{s}} {{}})}} so that one value "
                               f"gives '{m.group(1)}' and several give '{m.group(1)}s'")
    return out
