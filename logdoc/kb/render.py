"""Rendering a rule's texts: the placeholder template language (``{name}``, ``{name|fallback}``,
``{name?(text)}``, ``{s}``), value formatting (rank sets, host lists, year-less times) and one-line titles.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .conditions import _get
from ..lazyre import lazy_re

_YEARLESS = lazy_re(r"(?<![\w-])--(\d\d)-(\d\d)T(\d\d:\d\d(?::\d\d)?)(\.\d+)?")


def human_times(text: str) -> str:
    """Year-less ISO times (``--01-01T21:57:20``, what a glog line gives) as people read them:
    ``01-01 21:57:20 (year unknown)``. Times with a year stay as they are."""
    if "--" not in text:
        return text
    return _YEARLESS.sub(lambda m: f"{m[1]}-{m[2]} {m[3]}{m[4] or ''} (year unknown)", text)


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return human_times(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    big = _fmt_big(value)
    if big is not None:
        return big
    if isinstance(value, Mapping):
        if "name" in value and ("addr" in value or "link" in value):  # an interface or an IB device
            return f"{value['name']} ({value.get('addr') or value.get('link')})"
        return "; ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _fmt_big(value: Any) -> str | None:
    """A rank list or a value -> ranks (hosts) mapping of a big job, in words that stay short:
    runs with a count, the majority as a count (logdoc.analysis.ranges). Small ones are left to _fmt."""
    if isinstance(value, Mapping):
        if not value or not all(isinstance(v, (list, tuple, set)) for v in value.values()):
            return None
        if sum(len(v) for v in value.values()) <= 16:
            return None
        from ..analysis.ranges import mapping_text

        return mapping_text(value)
    if isinstance(value, (list, tuple, set)) and len(value) > 16:
        from ..analysis.ranges import members_text

        return members_text(value, word=False)  # the text names the noun: "Ranks {ranks} share ..."
    return None


TITLE_WIDTH = 120


def _one_line(title: str, width: int = TITLE_WIDTH) -> str:
    """A title fits one line: whatever a placeholder brought in, it is cut at ``width`` characters."""
    if len(title) <= width:
        return title
    title = " ".join(title.split())
    return title if len(title) <= width else title[:width - 1].rstrip() + "\u2026"


MIN_VALUE = 24   # a value shortened to fit a title keeps at least this many characters


def render_title(template: str, values: Mapping[str, Any], width: int = TITLE_WIDTH) -> str:
    """``template`` rendered as a title on one line of at most ``width`` characters. What makes a title long is
    the values its placeholders bring in (an exception's message, a path, a cause's sentence), so the longest
    value is shortened first, at a word boundary with an ellipsis, and the template's own words stay; a title
    still too long after that is cut (:func:`_one_line`)."""
    title = " ".join(render_template(template, values).split())
    if len(title) <= width:
        return title
    from ..shorten import shorten

    names = [n for n in dict.fromkeys(template_names(template)) if "." not in n]
    vals = dict(values)
    for _ in range(len(names)):
        texts = {n: _fmt(vals[n]) for n in names if isinstance(vals.get(n), str) and vals[n]}  # (a list keeps its count)
        longest = max(texts, key=lambda n: len(texts[n]), default=None)
        if longest is None or len(texts[longest]) <= MIN_VALUE:
            break
        keep = max(len(texts[longest]) - (len(title) - width), MIN_VALUE)
        vals[longest] = shorten(" ".join(texts[longest].split()), keep)
        names.remove(longest)
        title = " ".join(render_template(template, vals).split())
        if len(title) <= width:
            return title
    return _one_line(title, width)


def _present(value: Any) -> bool:
    return not (value is None or value == "" or value == [] or value == {})


_NAME = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_FALLBACK = lazy_re(r"\|([^{}]*)\}")


@dataclass(frozen=True)
class _Ph:
    """One placeholder: ``{name}``, ``{name|fallback}``, ``{name?(body)}`` or ``{name?(body)|fallback}``."""
    name: str
    body: tuple | None = None  # the conditional text, parsed; ``{}`` in it is the value
    fallback: str | None = None
    conditional: bool = False
    otherwise: tuple | None = None  # ``{name?(body)|(otherwise)}``: printed when the value is absent


_SELF = object()  # ``{}`` inside a conditional body
_PLURAL = object()  # ``{s}`` inside a conditional body: "s" when the value is several values


class TemplateError(ValueError):
    pass


def _parse_template(t: str, i: int = 0, in_body: bool = False) -> tuple[tuple, int]:
    """Parse a template into literal strings and placeholders; inside a conditional body stop at
    its closing parenthesis (parentheses in the body's text must balance). Text that is not a
    placeholder (a lone ``{``, ``{1,2}``, ``${VAR}``) stays literal."""
    nodes: list = []
    buf: list[str] = []
    depth = 0
    n = len(t)
    while i < n:
        c = t[i]
        if t.startswith("{{", i) or t.startswith("}}", i):
            buf.append(c)
            i += 2
            continue
        if in_body and c == "(":
            depth += 1
        elif in_body and c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c == "{":
            if in_body and (t.startswith("{}", i) or t.startswith("{s}", i)):
                if buf:
                    nodes.append("".join(buf))
                    buf = []
                nodes.append(_SELF if t[i + 1] == "}" else _PLURAL)
                i += 2 if t[i + 1] == "}" else 3
                continue
            m = _NAME.match(t, i + 1)
            if m:
                j = m.end()
                ph = None
                if t.startswith("}", j):
                    ph, j = _Ph(m.group(0)), j + 1
                elif t.startswith("?(", j):
                    body, k = _parse_template(t, j + 2, in_body=True)
                    if k >= n or t[k] != ")":
                        raise TemplateError(f"{{{m.group(0)}?( ... has no closing parenthesis")
                    k += 1
                    fb = _FALLBACK.match(t, k)
                    if t.startswith("}", k):
                        ph, j = _Ph(m.group(0), body, None, True), k + 1
                    elif t.startswith("|(", k):  # an else-branch that may hold placeholders itself
                        other, k2 = _parse_template(t, k + 2, in_body=True)
                        if k2 >= n or not t.startswith(")}", k2):
                            raise TemplateError(f"{{{m.group(0)}?(...)|(...) must end with ')}}'")
                        ph, j = _Ph(m.group(0), body, None, True, other), k2 + 2
                    elif fb:
                        ph, j = _Ph(m.group(0), body, fb.group(1), True), fb.end()
                    else:
                        raise TemplateError(f"{{{m.group(0)}?(...) must end with ')}}' or ')|fallback}}'")
                else:
                    fb = _FALLBACK.match(t, j)
                    if fb:
                        ph, j = _Ph(m.group(0), None, fb.group(1)), fb.end()
                if ph is not None:
                    if buf:
                        nodes.append("".join(buf))
                        buf = []
                    nodes.append(ph)
                    i = j
                    continue
        buf.append(c)
        i += 1
    if in_body and i >= n:
        raise TemplateError("a conditional ?( ... has no closing parenthesis")
    if buf:
        nodes.append("".join(buf))
    return tuple(nodes), i


_TEMPLATE_CACHE: dict[str, tuple] = {}


def parse_template(template: str) -> tuple:
    """The parsed template (cached); raises TemplateError on an unclosed conditional."""
    got = _TEMPLATE_CACHE.get(template)
    if got is None:
        got, _ = _parse_template(template)
        if len(_TEMPLATE_CACHE) < 4096:
            _TEMPLATE_CACHE[template] = got
    return got


def _lookup(values: Mapping[str, Any], name: str) -> Any:
    value = values.get(name)
    if value is None and "." in name:
        present, value = _get(values, name)
        if not present:
            value = None
    return value


def _walk(nodes: tuple, values: Mapping[str, Any], out: list, self_piece: tuple | None = None,
          many: bool = False) -> None:
    """Append ``(text, name or None, present)`` pieces: literals have name None."""
    for node in nodes:
        if isinstance(node, str):
            if node.startswith(".") and not node.startswith("..") and out and out[-1][1] is not None \
                    and out[-1][0].endswith((".", "!", "?")):
                node = node[1:]  # a value that ends its own sentence: one full stop, not two
            if node:
                out.append((node, None, True))
        elif node is _SELF:
            if self_piece is not None:
                out.append(self_piece)
        elif node is _PLURAL:
            if many and out and out[-1][1] is None:
                out[-1] = (out[-1][0] + "s", None, True)
            elif many:
                out.append(("s", None, True))
        else:
            value = _lookup(values, node.name)
            present = _present(value)
            if node.conditional:
                if present:
                    several = isinstance(value, (list, tuple, set)) and len(value) > 1
                    _walk(node.body, values, out, (_fmt(value), node.name, True), several)
                elif node.otherwise is not None:
                    _walk(node.otherwise, values, out)
                elif node.fallback:
                    out.append((node.fallback, node.name, False))
            elif present:
                out.append((_fmt(value), node.name, True))
            else:
                out.append((node.fallback if node.fallback is not None else f"({node.name} not in log)",
                            node.name, False))


def render_pieces(template: str, values: Mapping[str, Any]) -> list[tuple[str, str | None, bool]]:
    """The rendered template as pieces ``(text, placeholder name or None for literal text, present)``;
    the lint checks the joins between them. Never raises: an unparsable template renders as is."""
    try:
        nodes = parse_template(template)
    except TemplateError:
        return [(template, None, True)]
    out: list = []
    _walk(nodes, values, out)
    return out


def render_template(template: str, values: Mapping[str, Any]) -> str:
    """Fill the placeholders of a rule text; never raises.

    ``{name}`` is the value, or ``(name not in log)`` when it is missing or empty;
    ``{name|fallback}`` prints the fallback text instead; ``{name?(text)}`` prints ``text`` only when
    the value is present, with ``{}`` in it standing for the value (``{bytes?( ({} bytes))}``), and
    ``{s}`` in ``text`` is "s" when the value is several values (``{ranks?(rank{s} {})}``);
    ``{name?(text)|fallback}`` prints the fallback when it is absent, ``{name?(text)|(other text)}``
    the other text (which may hold placeholders). ``{{`` and ``}}`` are literal braces.
    """
    return "".join(p[0] for p in render_pieces(template, values))


def template_names(template: str) -> list[str]:
    """Every placeholder name a template uses (conditional bodies included)."""
    try:
        nodes = parse_template(template)
    except TemplateError:
        return []
    names: list[str] = []

    def walk(ns: tuple) -> None:
        for n in ns:
            if isinstance(n, _Ph):
                names.append(n.name)
                if n.body:
                    walk(n.body)
                if n.otherwise:
                    walk(n.otherwise)
    walk(nodes)
    return names
