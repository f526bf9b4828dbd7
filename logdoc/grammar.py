"""Stage 4: load the Lark grammars of ``grammars/`` and hold what a classifier returns.

Grammars are LALR with the contextual lexer and are built lazily, once per process, the first
time a line needs them: a clean log never pays for building a parser.

Lark costs about 100 µs a line, and a job log repeats a few hundred message shapes millions of
times. :class:`CachedParser` therefore remembers, per *shape* (the text without hex digits),
the token sequence Lark produced and the tree built from it. A later text of the same shape is
cut into tokens by one compiled regular expression made of the terminals' own patterns, and the
remembered tree is rebuilt with the new token values: the same tree Lark would build, because an
LALR parse is determined by its token types. If the expression does not match, Lark parses the
text as usual. ``LOGDOC_NO_FASTPATH=1`` (or :func:`logdoc.fast.set_enabled`) turns the cache off (the differential tests compare both).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .fast import enabled as fastpath_enabled, shape, subscribe
from .lazyre import lazy_re
from .resources import grammar_text

MAX_SHAPES = 4096  # per parser and start symbol
# A shape's expression has a group per token; compiling one for a long record (a 500-line
# traceback, a hostile paste) costs more than it can save, and super-linearly: Lark reads those.
MAX_LEARN_TOKENS = 256


@dataclass(slots=True)
class Parsed:
    """What a classifier understood of one message (or multi-line record)."""

    kind: str
    level: str
    template: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def _follow_switch(on: bool) -> None:
    for p in list(_PARSERS.values()):
        p.use_cache = on


subscribe(_follow_switch)


_RAISE = object()


def _parsed_or(parse, text: str, start: str, unread: Any):
    """``parse(text, start=start)``, or ``unread`` when the grammar cannot read the text."""
    try:
        return parse(text, start=start)
    except Exception as exc:  # (lark is imported only once a grammar is used)
        if lark_error(exc):
            return unread
        raise


def lark_error(exc: BaseException) -> bool:
    """Whether ``exc`` is Lark's (a text its grammar cannot read, or a transformer's error as
    Lark wraps it); lark is imported here, on the error's path, not with the classifiers."""
    from lark.exceptions import LarkError

    return isinstance(exc, LarkError)


class LazyTransformer:
    """A Lark ``Transformer`` made on first use of the methods of ``rules`` (a plain class: its
    methods are the transformer's callbacks, as a ``Transformer`` subclass's would be), so the
    modules that hold one import lark only when a grammar is used (a digest's events are read
    without it). :meth:`CachedParser.transform` takes it in place of the transformer."""

    __slots__ = ("rules", "options", "_made")

    def __init__(self, rules: type, **options: Any):
        self.rules = rules
        self.options = options
        self._made = None

    def made(self):
        t = self._made
        if t is None:
            from lark import Transformer

            cls = type(self.rules.__name__, (self.rules, Transformer),
                       {"__module__": self.rules.__module__, "__qualname__": self.rules.__qualname__})
            t = self._made = cls(**self.options)
        return t


class _Shape:
    __slots__ = ("rx", "rebuild", "tree", "slot", "types")

    def __init__(self, rx: re.Pattern | None, rebuild, tree=None, slot=None, types=None):
        self.rx = rx
        self.rebuild = rebuild
        self.tree = tree
        self.slot = slot
        self.types = types


class CachedParser:
    """``parse(text)`` gives the tree ``lark.Lark.parse`` gives, using the shape cache."""

    def __init__(self, lark, start: str):
        self.lark = lark
        self.start = start
        self.shapes: dict[bytes, _Shape] = {}
        self.use_cache = fastpath_enabled()
        self._terminals = {t.name: t.pattern for t in lark.terminals}
        self._patterns: dict[str, str] = {}  # a terminal's pattern without groups, made when a shape first needs it
        self.hits = self.misses = 0
        self._plans: dict[tuple[bytes, int], Any] = {}  # (shape, id(transformer)) -> compiled plan

    def transform(self, text: str, transformer, unread: Any = _RAISE):
        """``transformer.transform(self.parse(text))``, without building the tree on a cache hit:
        the shape's tree is compiled once into a plan that calls the transformer's callbacks
        with the new token values directly (any surprise falls back to the plain way). A
        :class:`LazyTransformer` stands for the transformer it makes.
        ``unread``: what to return when the grammar cannot read ``text`` (by default its
        ``LarkError`` is raised); an error of the transformer is raised either way."""
        if transformer.__class__ is LazyTransformer:
            transformer = transformer.made()
        if not self.use_cache:
            if unread is _RAISE:
                return transformer.transform(self.lark.parse(text, start=self.start))
            tree = _parsed_or(self.lark.parse, text, self.start, unread)
            return unread if tree is unread else transformer.transform(tree)
        key = shape(text)
        entry = self.shapes.get(key)
        if entry is not None and entry.rx is not None:
            m = entry.rx.fullmatch(text)
            if m is not None:
                pk = (key, id(transformer))
                held = self._plans.get(pk)
                if held is None or held[0] is not transformer:
                    held = (transformer, _compile_plan(entry.tree, entry.slot, entry.types, transformer))
                    if len(self._plans) < MAX_SHAPES:
                        self._plans[pk] = held
                plan = held[1]
                if plan:
                    try:
                        self.hits += 1
                        return plan(m.groups())
                    except Exception:  # noqa: BLE001 - the plain way gives the exact original behaviour
                        pass
        if unread is _RAISE:
            return transformer.transform(self.parse(text))
        tree = _parsed_or(lambda t, start: self.parse(t), text, self.start, unread)
        return unread if tree is unread else transformer.transform(tree)

    def parse(self, text: str):
        if not self.use_cache:
            return self.lark.parse(text, start=self.start)
        key = shape(text)
        entry = self.shapes.get(key)
        if entry is not None and entry.rx is not None:
            m = entry.rx.fullmatch(text)
            if m is not None:
                self.hits += 1
                return entry.rebuild(m.groups())
        self.misses += 1
        tree = self.lark.parse(text, start=self.start)  # raises on text it cannot read: not cached
        if entry is None and len(self.shapes) < MAX_SHAPES:
            self.shapes[key] = self._learn(text, tree)
        return tree

    def _pattern(self, name: str) -> str | None:
        pat = self._patterns.get(name)
        if pat is None:
            term = self._terminals.get(name)
            if term is None:
                return None
            pat = self._patterns[name] = _no_groups(term.to_regexp())
        return pat

    def _learn(self, text: str, tree) -> _Shape:
        from lark import Token, Tree

        tokens: list[Token] = []

        def collect(node):
            for child in node.children:
                if isinstance(child, Tree):
                    collect(child)
                else:
                    tokens.append(child)

        collect(tree)
        if len(tokens) > MAX_LEARN_TOKENS or any(t.start_pos is None for t in tokens):
            return _Shape(None, None)
        ordered = sorted(tokens, key=lambda t: t.start_pos)
        parts, pos = [], 0
        for tok in ordered:
            parts.append(_gap(text[pos:tok.start_pos]))  # whitespace, and keywords Lark kept out of the tree
            pat = self._pattern(tok.type)
            if pat is None:
                return _Shape(None, None)
            parts.append(f"((?:{pat}))")
            pos = tok.end_pos
        parts.append(_gap(text[pos:]))
        try:
            rx = re.compile("".join(parts))
        except re.error:
            return _Shape(None, None)
        # Only keep the shape if the expression cuts this very text into the very same tokens.
        m = rx.fullmatch(text)
        if m is None or list(m.groups()) != [str(t) for t in ordered]:
            return _Shape(None, None)
        slot = {id(t): i for i, t in enumerate(ordered)}
        types = [t.type for t in ordered]

        def rebuild(values, _tree=tree):
            def copy(node):
                kids = []
                for child in node.children:
                    if isinstance(child, Tree):
                        kids.append(copy(child))
                    else:
                        i = slot[id(child)]
                        kids.append(Token(types[i], values[i]))
                return Tree(node.data, kids)

            return copy(_tree)

        return _Shape(rx, rebuild, tree, slot, types)


def _compile_plan(tree, slot: dict, types: list, transformer):
    """A function ``values -> transformer.transform(tree with these token values)`` for one
    shape, or False when the transformer is of a kind this does not reproduce exactly."""
    from lark import Token, Tree
    from lark.visitors import Discard, Transformer

    if not isinstance(transformer, Transformer):
        return False
    visit_tokens = getattr(transformer, "__visit_tokens__", True) is not False
    if visit_tokens and type(transformer).__default_token__ is not Transformer.__default_token__:
        return False
    new_token = Token._future_new

    def node_fn(node):
        parts = []
        for child in node.children:
            if isinstance(child, Tree):
                parts.append((1, node_fn(child)))
            else:
                i = slot[id(child)]
                # a token callback (``visit_tokens``: the transformer's method named after the
                # token's type, as Lark looks it up), or the token itself (Lark's __default_token__)
                tf = getattr(transformer, types[i], None) if visit_tokens else None
                parts.append((0, (types[i], i)) if tf is None else (2, (types[i], i, tf)))
        f = getattr(transformer, node.data, None)
        if f is not None and getattr(f, "visit_wrapper", None) is not None:
            raise _Unsupported
        data = node.data

        def run(values, _parts=tuple(parts), _f=f, _data=data):
            kids = []
            for k, p in _parts:
                if k == 0:
                    kids.append(new_token(p[0], values[p[1]]))
                elif k == 2:
                    r = p[2](new_token(p[0], values[p[1]]))
                    if r is Discard:
                        raise _Unsupported
                    kids.append(r)
                else:
                    r = p(values)
                    if r is Discard:
                        raise _Unsupported
                    kids.append(r)
            if _f is None:
                return transformer.__default__(_data, kids, None)
            return _f(kids)

        return run

    try:
        return node_fn(tree)
    except _Unsupported:
        return False


class _Unsupported(Exception):
    pass


_WS = lazy_re(r"[ \t]+")


def _no_groups(pattern: str) -> str:
    """A terminal's pattern with its groups made non-capturing (``\\[(send|receive)\\]``): a shape's
    expression holds one group per token, so a terminal's own group would shift every later token
    and the shape could not be learned. Unchanged when that cannot be done safely."""
    out = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":  # `[]...]`: the first ] is a member
                out.append("[]")
                i += 2
                continue
        elif c == "(" and pattern[i + 1:i + 2] != "?":
            out.append("(?:")
            i += 1
            continue
        out.append(c)
        i += 1
    got = "".join(out)
    try:
        ok = re.compile(got).groups == 0
    except re.error:
        ok = False
    return got if ok else pattern


def _gap(text: str) -> str:
    """The text between two tokens as a pattern: its words literally, its blanks as blanks."""
    return r"[ \t]+".join(re.escape(p) for p in _WS.split(text))


@lru_cache(maxsize=None)
def _lark(name: str, start: str):
    from lark import Lark

    text = grammar_text(f"{name}.lark")
    options = dict(parser="lalr", lexer="contextual", start=start, maybe_placeholders=False,
                   propagate_positions=False)
    cache = None
    if fastpath_enabled():
        from .cache import lark_cache_file

        cache = lark_cache_file(name, start, text)
    if cache is not None:
        try:
            return Lark(text, cache=cache, **options)
        except Exception:  # noqa: BLE001 - a cache problem is never a parse problem
            pass
    return Lark(text, **options)


_PARSERS: dict[tuple[str, str], CachedParser] = {}


def parser(name: str, start: str = "start") -> CachedParser:
    """The (shape-cached) Lark LALR parser for ``grammars/<name>.lark`` and one start symbol."""
    p = _PARSERS.get((name, start))
    if p is None:
        p = _PARSERS[(name, start)] = CachedParser(_lark(name, start), start)
    return p
