"""Stage 7: the knowledge base.

Rules live in ``knowledge/*.yaml`` (schema: ``knowledge/README.md``). This module loads and
validates them, compiles their patterns and matches them against :class:`logdoc.events.Event`
objects. It holds detection *mechanics* only: every word of knowledge (causes, fixes, links) is in
the YAML, and reasoning across events or ranks is done by the analysis stage, which emits
``analysis.*`` events that rules match like any other kind.

Dependencies: the standard library; ``regex`` (used when present, with a match timeout) and
``yaml`` (used when present). Without ``yaml`` the knowledge base is loaded from a compiled JSON
copy (:func:`compile_rules` / :func:`load_compiled`), which is what the browser build does.
"""
from __future__ import annotations

import json
import re as _re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

try:  # optional: a timeout on each match, used for every rule when available
    import regex as _regex
except ImportError:  # pragma: no cover - exercised by the browser build
    _regex = None

try:  # optional: the YAML sources; the compiled JSON needs only the stdlib
    import yaml as _yaml
except ImportError:  # pragma: no cover
    _yaml = None

from .events import Event

SCHEMA = "logdoc.kb/1"
MATCH_TIMEOUT = 0.05  # seconds per search, when the `regex` module is available

CATEGORIES = (
    "wrong_network_interface",
    "ib_unavailable_fallback_socket",
    "ib_transport_error",
    "firewall_or_unreachable_peer",
    "container_network_isolation",
    "hostname_resolution",
    "port_in_use",
    "rendezvous_store_failure",
    "fd_limit_exhausted",
    "nccl_version_mismatch",
    "bad_nccl_env_config",
    "container_missing_devices",
    "shm_exhausted",
    "duplicate_gpu",
    "p2p_acs_iommu_hang",
    "gpu_direct_rdma_issue",
    "fabric_manager_or_driver",
    "nccl_bug_or_version_specific",
    "timeout_misconfigured",
    "collective_mismatch",
    "collective_timeout_hung_rank",
    "straggler_slow_rank",
    "peer_process_died",
    "user_code_exception",
    "cuda_oom",
    "cuda_error_other",
)
SEVERITIES = ("error", "warning", "info")
ROLES = ("root_cause", "symptom", "context")
SCOPES = ("rank", "host", "file", "job")
DEFAULT_CONFIDENCE = {"root_cause": 0.8, "symptom": 0.5, "context": 0.3}

FAMILIES = {
    "1": "socket and interfaces",
    "2": "InfiniBand, RoCE and GPUDirect RDMA",
    "3": "shared memory",
    "4": "versions and configuration",
    "5": "collectives and timeouts",
    "6": "rendezvous and store",
    "7": "processes and signals",
    "8": "CUDA, driver and fabric",
    "9": "Gloo",
}

BUILTIN_ID = _re.compile(r"^LD[1-9][0-9]{2}$")
USER_ID = _re.compile(r"^[A-Z][A-Z0-9]{1,9}[0-9]{3,}$")

RULE_KEYS_REQUIRED = ("id", "category", "severity", "role", "title", "match", "explanation", "fix", "confirm")
RULE_KEYS_OPTIONAL = ("priority", "confidence", "not_when", "docs", "applies_to", "examples", "origin")
TOMBSTONE_KEYS = ("id", "retired", "title", "category", "replaced_by")
MATCH_KEYS = ("kind", "template", "pattern", "fields", "with", "without")
CLAUSE_KEYS = ("kind", "pattern", "fields", "scope", "as", "optional")
FILE_KEYS = ("family", "description", "rules")
OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists", "contains", "matches",
             "not_matches", "len", "any")
NEGATIVE_OPERATORS = ("ne", "not_in", "not_matches")  # true when the field is absent
APPLIES_TO_KEYS = ("nccl", "torch", "cuda", "gloo")

# Event attributes usable as placeholders, besides fields and named groups.
EVENT_ATTRS = ("kind", "level", "file", "line", "end_line", "rank", "local_rank", "node_rank",
               "host", "pid", "time", "template", "text", "where", "match")

class _KindFields:
    """Fields per event kind, from the one registry (logdoc/kinds.py): ``get(kind)`` gives the fields
    an event of that kind may carry, None for an unregistered kind. Used to tell whether a
    placeholder can ever be filled."""

    def get(self, kind: str, default=None):
        from . import kinds

        f = kinds.fields(kind)
        return default if f is None else f

    def __contains__(self, kind: object) -> bool:
        from . import kinds

        return isinstance(kind, str) and kinds.is_registered(kind)


KIND_FIELDS = _KindFields()

_PLACEHOLDER = _re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?:\|([^{}]*))?\}")
_VERSION_CLAUSE = _re.compile(r"^\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+)*)\s*$")
_IDENT = _re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# --------------------------------------------------------------------------------------------
# problems

@dataclass(frozen=True)
class Problem:
    """One thing wrong with a rule file or a rule. ``level`` error disables the rule."""

    file: str
    line: int
    rule: str | None
    message: str
    level: str = "error"  # "error" (rule not loaded / disabled) or "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        who = f" rule {self.rule}:" if self.rule else ""
        tag = "" if self.level == "error" else " warning:"
        return f"{where}:{who}{tag} {self.message}"


class RuleTimeout(Exception):
    """A rule's pattern exceeded :data:`MATCH_TIMEOUT` on some text."""


# --------------------------------------------------------------------------------------------
# patterns

def regex_engine() -> str:
    """``"regex"`` when the regex module is available, else ``"re"``."""
    return "regex" if _regex is not None else "re"


def compile_pattern(pattern: str, engine: str | None = None):
    """Compile ``pattern`` with ``engine`` (``"re"`` or ``"regex"``; default: the best available)."""
    engine = engine or regex_engine()
    if engine == "regex":
        if _regex is None:
            raise RuntimeError("the regex module is not installed")
        return _regex.compile(pattern)
    return _re.compile(pattern)


class _Pattern:
    """A compiled pattern that searches with a timeout when the regex module is used (user rules);
    without a timeout (built-in rules, whose patterns ``tests/test_hostile_regex.py`` proves bounded
    under ``re``), or without the regex module, plain ``re``."""

    __slots__ = ("source", "compiled", "groups", "timeout")

    def __init__(self, source: str, timeout: float | None) -> None:
        self.source = source
        std = _re.compile(source)  # the browser has only `re`: every pattern must compile there
        self.groups = tuple(std.groupindex)
        if _regex is not None and timeout is not None:
            self.compiled = _regex.compile(source)
            self.timeout = timeout
        else:
            self.compiled = std
            self.timeout = None

    def search(self, text: str):
        if self.timeout is not None:
            try:
                return self.compiled.search(text, timeout=self.timeout)
            except TimeoutError as exc:
                raise RuleTimeout(self.source) from exc
        return self.compiled.search(text)


# --------------------------------------------------------------------------------------------
# field conditions

def _num(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        s = value.strip()
        if _re.fullmatch(r"[+-]?\d+", s):
            return int(s)
        if _re.fullmatch(r"[+-]?\d+\.\d*", s):
            return float(s)
    return value


def _eq(a: Any, b: Any) -> bool:
    if a == b:
        return True
    na, nb = _num(a), _num(b)
    if isinstance(na, (int, float)) and isinstance(nb, (int, float)) and not isinstance(na, bool):
        return na == nb
    return False


def _cmp(a: Any, b: Any, op: str) -> bool:
    a, b = _num(a), _num(b)
    try:
        if op == "lt":
            return a < b
        if op == "le":
            return a <= b
        if op == "gt":
            return a > b
        return a >= b
    except TypeError:
        return False


def _get(values: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    cur: Any = values
    for part in path.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, (list, tuple)) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False, None
    return True, cur


class _Cond:
    """A compiled ``fields`` mapping: ``{name: value-or-operators}``."""

    def __init__(self, spec: Mapping[str, Any], timeout: float | None) -> None:
        self.items: list[tuple[str, Any]] = []
        for name, cond in spec.items():
            self.items.append((name, self._compile(cond, timeout)))

    @classmethod
    def _compile(cls, cond: Any, timeout: float | None) -> Any:
        if not isinstance(cond, Mapping):
            return ("eq", cond)
        ops = []
        for op, arg in cond.items():
            if op in ("matches", "not_matches"):
                arg = _Pattern(str(arg), timeout)
            elif op == "len":
                arg = cls._compile(arg, timeout)
            elif op == "any":
                arg = _Cond(arg, timeout) if isinstance(arg, Mapping) and all(
                    k not in OPERATORS for k in arg) else cls._compile(arg, timeout)
            ops.append((op, arg))
        return ("ops", ops)

    def test(self, values: Mapping[str, Any], captures: dict[str, Any], prefix: str = "") -> bool:
        for name, cond in self.items:
            present, value = _get(values, name)
            if not _test(present, value, cond, captures, prefix + name):
                return False
        return True


def _test(present: bool, value: Any, cond: Any, captures: dict[str, Any], path: str) -> bool:
    kind, arg = cond
    if kind == "eq":
        return present and _eq(value, arg)
    for op, a in arg:
        if not present or value is None:
            if op == "exists":
                if a:
                    return False
                continue
            if op in NEGATIVE_OPERATORS:
                continue
            return False
        if op == "exists":
            ok = bool(a)
        elif op == "eq":
            ok = _eq(value, a)
        elif op == "ne":
            ok = not _eq(value, a)
        elif op in ("lt", "le", "gt", "ge"):
            ok = _cmp(value, a, op)
        elif op == "in":
            ok = any(_eq(value, x) for x in a)
        elif op == "not_in":
            ok = not any(_eq(value, x) for x in a)
        elif op == "contains":
            if isinstance(value, str):
                ok = str(a) in value
            elif isinstance(value, (list, tuple, set)):
                ok = any(_eq(v, a) for v in value)
            elif isinstance(value, Mapping):
                ok = a in value
            else:
                ok = False
        elif op == "matches":
            ok = a.search(str(value)) is not None
        elif op == "not_matches":
            ok = a.search(str(value)) is None
        elif op == "len":
            try:
                n = len(value)
            except TypeError:
                return False
            ok = _test(True, n, a, captures, path + ".len")
        elif op == "any":
            if not isinstance(value, (list, tuple)):
                return False
            ok = False
            for item in value:
                sub: dict[str, Any] = {}
                if isinstance(a, _Cond):
                    hit = isinstance(item, Mapping) and a.test(item, sub)
                else:
                    hit = _test(True, item, a, sub, path)
                if hit:
                    ok = True
                    if isinstance(item, Mapping):
                        for k, v in item.items():
                            captures.setdefault(f"{path}.{k}", v)
                    else:
                        captures.setdefault(f"{path}.item", item)
                    break
        else:  # validated away
            return False
        if not ok:
            return False
    return True


# --------------------------------------------------------------------------------------------
# rules

@dataclass
class _Clause:
    kinds: tuple[str, ...]
    pattern: _Pattern | None
    fields: _Cond | None
    scope: str
    alias: str | None
    optional: bool = False

    def accepts(self, ev: Event) -> tuple[bool, dict[str, str], dict[str, Any]]:
        groups: dict[str, str] = {}
        if self.pattern is not None:
            m = self.pattern.search(ev.text or "")
            if m is None:
                return False, {}, {}
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
        captures: dict[str, Any] = {}
        if self.fields is not None and not self.fields.test(_values(ev, groups), captures):
            return False, {}, {}
        return True, groups, captures


@dataclass
class Rule:
    id: str
    data: dict[str, Any]  # the rule as written (normalised: kind is a list)
    file: str = "<memory>"
    line: int = 0
    origin: str = "builtin"  # "builtin" or "user"
    retired: str | None = None
    _kinds: tuple[str, ...] = ()
    _pattern: _Pattern | None = None
    _fields: _Cond | None = None
    _with: tuple[_Clause, ...] = ()
    _without: tuple[_Clause, ...] = ()
    _templates: frozenset[str] = frozenset()  # match.template: catalog ids (any id of their group matches)

    # --- plain accessors
    def __getattr__(self, name: str) -> Any:  # category, severity, role, title, fix, ...
        data = self.__dict__.get("data")
        if data is not None and name in RULE_KEYS_REQUIRED + RULE_KEYS_OPTIONAL + TOMBSTONE_KEYS:
            return data.get(name)
        raise AttributeError(name)

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._kinds

    @property
    def priority(self) -> int:
        return int(self.data.get("priority", 0) or 0)

    @property
    def confidence(self) -> float:
        c = self.data.get("confidence")
        return float(c) if c is not None else DEFAULT_CONFIDENCE.get(self.data.get("role", ""), 0.5)

    @property
    def family(self) -> str | None:
        return FAMILIES.get(self.id[2]) if BUILTIN_ID.match(self.id) else None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    # --- matching
    @property
    def templates(self) -> frozenset[str]:
        return self._templates

    def match_event(self, ev: Event, job: "_Job") -> "Match | None":
        groups: dict[str, str] = {}
        span = None
        if self._templates and not (self._templates & job.ids(ev)):
            return None
        if self._pattern is not None:
            m = self._pattern.search(ev.text or "")
            if m is None:
                return None
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            span = (m.start(), m.end())
            groups_all = m.group(0)
        else:
            groups_all = None
        captures: dict[str, Any] = {}
        if self._fields is not None and not self._fields.test(_values(ev, groups), captures):
            return None
        related: dict[str, Event] = {}
        extra_groups: dict[str, str] = {}
        for i, clause in enumerate(self._with):
            found = job.find(clause, ev)
            if found is None:
                if clause.optional:
                    continue
                return None
            other, ogroups, ocaps = found
            related[clause.alias or f"with{i}"] = other
            for k, v in ogroups.items():
                extra_groups.setdefault(k, v)
                extra_groups.setdefault(f"{clause.alias or f'with{i}'}.{k}", v)
            for k, v in ocaps.items():
                captures.setdefault(k, v)
        for clause in self._without:
            if job.find(clause, ev) is not None:
                return None
        return Match(rule=self, event=ev, groups=groups, span=span, related=related,
                     captures=captures, extra_groups=extra_groups, matched_text=groups_all)


def _values(ev: Event, groups: Mapping[str, str]) -> dict[str, Any]:
    """What ``fields`` conditions see: the event's fields, then its attributes, then named groups."""
    vals: dict[str, Any] = {}
    for k, v in groups.items():
        vals[k] = v
    for attr in ("kind", "level", "file", "line", "rank", "local_rank", "node_rank", "host", "pid",
                 "time", "template", "text"):
        vals[attr] = getattr(ev, attr, None)
    vals.update(ev.fields or {})
    return vals


def _same_process(a: Event, b: Event) -> bool:
    if a.rank is not None and b.rank is not None:
        return a.rank == b.rank and (a.attempt == b.attempt)
    if a.host and b.host and a.pid is not None and b.pid is not None:
        return a.host == b.host and a.pid == b.pid
    return a.file == b.file


def _in_scope(scope: str, ev: Event, other: Event) -> bool:
    if scope == "job":
        return True
    if scope == "file":
        return ev.file == other.file
    if scope == "host":
        if ev.host and other.host:
            return ev.host == other.host
        return ev.file == other.file
    return _same_process(ev, other)


class _Job:
    """All the events of one run, indexed by kind, for ``with`` / ``without`` look-ups."""

    def __init__(self, events: Sequence[Event], resolver: Any = None) -> None:
        self.events = events
        self._by_kind: dict[str, list[Event]] | None = None
        self.resolver = resolver
        self._ids: dict[int, frozenset[str]] = {}

    def ids(self, ev: Event) -> frozenset[str]:
        """The event's catalog template id and the other ids of its annotation group."""
        got = self._ids.get(id(ev))
        if got is None:
            if self.resolver is not None:
                got = self.resolver.ids(ev)
            else:
                got = frozenset((ev.template,)) if ev.template else frozenset()
            self._ids[id(ev)] = got
        return got

    def by_kind(self, kind: str) -> list[Event]:
        if self._by_kind is None:
            self._by_kind = {}
            for ev in self.events:
                self._by_kind.setdefault(ev.kind, []).append(ev)
        if kind.endswith("*"):
            prefix = kind[:-1]
            return [e for k, evs in self._by_kind.items() if k.startswith(prefix) for e in evs]
        return self._by_kind.get(kind, [])

    def find(self, clause: _Clause, ev: Event):
        best = None
        best_key = None
        for kind in clause.kinds:
            for other in self.by_kind(kind):
                if other is ev or not _in_scope(clause.scope, ev, other):
                    continue
                ok, groups, caps = clause.accepts(other)
                if not ok:
                    continue
                key = (0 if other.file == ev.file else 1, abs(other.line - ev.line))
                if best_key is None or key < best_key:
                    best, best_key = (other, groups, caps), key
        return best


# --------------------------------------------------------------------------------------------
# matches and rendering

_YEARLESS = _re.compile(r"(?<![\w-])--(\d\d)-(\d\d)T(\d\d:\d\d(?::\d\d)?)(\.\d+)?")


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
        from .analysis.ranges import mapping_text

        return mapping_text(value)
    if isinstance(value, (list, tuple, set)) and len(value) > 16:
        from .analysis.ranges import members_text

        return members_text(value)
    return None


TITLE_WIDTH = 120


def _one_line(title: str, width: int = TITLE_WIDTH) -> str:
    """A title fits one line: whatever a placeholder brought in, it is cut at ``width`` characters."""
    if len(title) <= width:
        return title
    title = " ".join(title.split())
    return title if len(title) <= width else title[:width - 1].rstrip() + "\u2026"


def _present(value: Any) -> bool:
    return not (value is None or value == "" or value == [] or value == {})


_NAME = _re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_FALLBACK = _re.compile(r"\|([^{}]*)\}")


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


@dataclass
class Match:
    rule: Rule
    event: Event
    groups: dict[str, str] = field(default_factory=dict)
    span: tuple[int, int] | None = None
    related: dict[str, Event] = field(default_factory=dict)
    captures: dict[str, Any] = field(default_factory=dict)
    extra_groups: dict[str, str] = field(default_factory=dict)
    matched_text: str | None = None

    @property
    def events(self) -> list[Event]:
        return [self.event, *self.related.values()]

    def values(self) -> dict[str, Any]:
        """Everything a placeholder can name, by one precedence (highest first): the rule pattern's
        named groups (a group the pattern defines but that did not take part in the match is absent,
        never another value of that name), the matched event's own fields, the event's attributes
        from its log line and envelope (also under ``log.``: ``{log.host}``, ``{log.pid}``), the
        ``any:`` captures, then the named groups of ``with`` events; ``with`` events by alias."""
        ev = self.event
        vals: dict[str, Any] = {}
        for alias, other in self.related.items():
            vals[alias] = _event_values(other)
        vals.update(self.extra_groups)
        vals.update(self.captures)
        vals.update(_event_values(ev))
        # the matched text; a rule without a pattern (a template or fields alone) matched the whole message
        vals["match"] = self.matched_text if self.matched_text is not None else (
            (ev.fields or {}).get("message") or ev.text)
        pattern = self.rule._pattern
        for name in (pattern.groups if pattern is not None else ()):
            vals[name] = None
        vals.update(self.groups)
        return vals

    def render(self) -> dict[str, Any]:
        """The rule's texts with placeholders filled, plus the evidence, as a JSON-ready dict."""
        vals = self.values()
        r = self.rule
        out: dict[str, Any] = {
            "id": r.id,
            "category": r.category,
            "severity": r.severity,
            "role": r.role,
            "title": _one_line(render_template(r.title or "", vals)),
            "confidence": r.confidence,
            "explanation": render_template(r.explanation or "", vals).strip(),
            "fix": [render_template(s, vals) for s in (r.fix or [])],
            "confirm": [render_template(s, vals) for s in (r.confirm or [])],
            "not_when": [render_template(s, vals) for s in (r.not_when or [])],
            "docs": [dict(d) for d in (r.docs or [])],
            "evidence": [self._evidence(self.event, self.span)]
            + [self._evidence(e, None) for e in self.related.values()],
        }
        return out

    def render_title(self, values: Mapping[str, Any] | None = None) -> str:
        return render_template(self.rule.title or "", values if values is not None else self.values())

    @staticmethod
    def _evidence(ev: Event, span: tuple[int, int] | None) -> dict[str, Any]:
        d = {"file": ev.file, "line": ev.line, "rank": ev.rank, "host": ev.host, "kind": ev.kind,
             "text": ev.text}
        if span is not None:
            d["highlight"] = [span[0], span[1]]
        return d


_WHO = ("rank", "ranks", "host", "hosts")


def card_title(matches: Sequence["Match"]) -> str:
    """The title of a card that stands for several matches of one rule: the first match's values,
    except that the ranks and hosts it names are those of every match (``Ranks 0, 1 aborted``)."""
    first = matches[0]
    vals = first.values()
    if len(matches) > 1:
        all_vals = [m.values() for m in matches]
        for name in template_names(first.rule.title or ""):
            if name.split(".")[-1] not in _WHO:
                continue
            seen: list = []
            for v in all_vals:
                got = _lookup(v, name)
                for x in (got if isinstance(got, (list, tuple)) else [got]):
                    if _present(x) and x not in seen:
                        seen.append(x)
            if len(seen) > 1:
                try:
                    seen.sort()
                except TypeError:
                    pass
                vals[name] = seen
    return first.render_title(vals)


_ATTRS = ("kind", "level", "file", "line", "end_line", "rank", "local_rank", "node_rank", "host", "pid", "time",
          "template", "text")


def _event_values(ev: Event) -> dict[str, Any]:
    """An event's placeholders: its own fields before the attributes its log line gave it."""
    attrs: dict[str, Any] = {a: getattr(ev, a, None) for a in _ATTRS}
    attrs["where"] = f"{ev.file}:{ev.line}"
    vals: dict[str, Any] = dict(attrs)
    for k, v in (ev.fields or {}).items():
        if v is not None or k not in vals:
            vals[k] = v
    vals["log"] = attrs
    return vals


# --------------------------------------------------------------------------------------------
# the rule set

class RuleSet:
    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}  # active and retired, by id
        self.problems: list[Problem] = []  # load-time problems
        self.run_problems: list[Problem] = []  # problems of the last match() call (timeouts)
        self._index: dict[str, list[Rule]] | None = None
        self._wild: list[tuple[str, Rule]] = []
        self._by_template: dict[str, list[Rule]] = {}
        self.annotations = None  # logdoc.annotations.Annotations, when the knowledge base has them
        self.differentials = None  # logdoc.differential.Differentials, likewise
        self._resolver = None

    def resolver(self):
        """The catalog-id resolver over this knowledge base's annotations."""
        if self._resolver is None:
            from .annotations import Resolver

            self._resolver = Resolver(self.annotations)
        return self._resolver

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_resolver"] = None  # memo of one run's messages: not worth caching
        return state

    # --- access
    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self.rules.values(), key=lambda r: r.id))

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self.rules

    def get(self, rule_id: str) -> Rule | None:
        return self.rules.get(rule_id)

    def active(self) -> list[Rule]:
        return [r for r in self if not r.retired]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    def add(self, rule: Rule) -> None:
        self.rules[rule.id] = rule
        self._index = None

    # --- matching
    def _build_index(self) -> None:
        self._index = {}
        self._wild = []
        self._by_template = {}
        for rule in self.active():
            if rule.templates and not rule.kinds:  # matched by template id, whatever its kind
                for tid in rule.templates:
                    self._by_template.setdefault(tid, []).append(rule)
                continue
            for kind in rule.kinds:
                if kind.endswith("*"):
                    self._wild.append((kind[:-1], rule))
                else:
                    self._index.setdefault(kind, []).append(rule)
        for rules in self._index.values():
            rules.sort(key=lambda r: (-r.priority, r.id))

    def rules_for(self, kind: str) -> list[Rule]:
        if self._index is None:
            self._build_index()
        assert self._index is not None
        rules = self._index.get(kind, [])
        if self._wild:
            extra = [r for p, r in self._wild if kind.startswith(p) and r not in rules]
            if extra:
                rules = sorted(rules + extra, key=lambda r: (-r.priority, r.id))
        return rules

    def match(self, events: Iterable[Event]) -> list[Match]:
        """Every (rule, event) that matches, in event order, higher priority first per event."""
        evs = list(events)
        job = _Job(evs, self.resolver())
        disabled: set[str] = set()
        self.run_problems = []
        out: list[Match] = []
        if self._index is None:
            self._build_index()
        for ev in evs:
            rules = self.rules_for(ev.kind)
            if self._by_template and (ev.template or ev.level in ("WARN", "ERROR", "FATAL")):
                extra = {r.id: r for tid in job.ids(ev) for r in self._by_template.get(tid, ())}
                if extra:
                    rules = sorted([*rules, *extra.values()], key=lambda r: (-r.priority, r.id))
            for rule in rules:
                if rule.id in disabled:
                    continue
                try:
                    m = rule.match_event(ev, job)
                except RuleTimeout:
                    disabled.add(rule.id)
                    self.run_problems.append(Problem(
                        rule.file, rule.line, rule.id,
                        f"pattern took longer than {MATCH_TIMEOUT}s on {ev.file}:{ev.line}; "
                        f"rule disabled for this run"))
                    continue
                if m is not None:
                    out.append(m)
        return out


# --------------------------------------------------------------------------------------------
# validation and construction

class _Checker:
    """Validates one rule dict, collecting problems with line numbers."""

    def __init__(self, file: str, lines: Mapping[str, int], base_line: int, rule_id: str | None,
                 origin: str) -> None:
        self.file = file
        self.lines = lines
        self.base = base_line
        self.rule_id = rule_id
        self.origin = origin
        self.problems: list[Problem] = []

    def line_of(self, path: str) -> int:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path.rpartition(".")[0]
        return self.base

    def err(self, path: str, msg: str) -> None:
        self.problems.append(Problem(self.file, self.line_of(path), self.rule_id, msg))

    def warn(self, path: str, msg: str) -> None:
        self.problems.append(Problem(self.file, self.line_of(path), self.rule_id, msg, "warning"))

    @property
    def failed(self) -> bool:
        return any(p.level == "error" for p in self.problems)


def _check_regex(ck: _Checker, path: str, pattern: Any) -> tuple[str, ...] | None:
    if not isinstance(pattern, str) or not pattern:
        ck.err(path, "pattern must be a non-empty string")
        return None
    try:
        std = _re.compile(pattern)
    except _re.error as exc:
        ck.err(path, f"pattern does not compile under re: {exc}")
        return None
    if _regex is not None:
        try:
            alt = _regex.compile(pattern)
        except Exception as exc:  # regex.error
            ck.err(path, f"pattern does not compile under regex: {exc}")
            return None
        if tuple(alt.groupindex) != tuple(std.groupindex) and set(alt.groupindex) != set(std.groupindex):
            ck.err(path, "pattern has different named groups under re and regex")
    for bad in ("(?>", "*+", "++", "?+", "\\p{", "\\P{", "(?|"):
        if bad in pattern:
            ck.warn(path, f"pattern uses {bad!r}, outside the subset shared by re (Python 3.10) and regex")
    return tuple(std.groupindex)


def _check_fields(ck: _Checker, path: str, spec: Any, captures: set[str], prefix: str = "") -> None:
    if not isinstance(spec, Mapping) or not spec:
        ck.err(path, "fields must be a non-empty mapping of field name to condition")
        return
    for name, cond in spec.items():
        if not isinstance(name, str) or not _re.fullmatch(r"[A-Za-z_][\w.]*", name):
            ck.err(path, f"bad field name {name!r}")
            continue
        _check_cond(ck, f"{path}.{name}", cond, captures, prefix + name)


def _check_cond(ck: _Checker, path: str, cond: Any, captures: set[str], name: str) -> None:
    if not isinstance(cond, Mapping):
        if isinstance(cond, (list, dict)):
            ck.err(path, "a list is not a condition; use {in: [...]}")
        return
    if not cond:
        ck.err(path, "empty condition")
    for op, arg in cond.items():
        p = f"{path}.{op}"
        if op not in OPERATORS:
            ck.err(p, f"unknown operator {op!r} (known: {', '.join(OPERATORS)})")
        elif op in ("in", "not_in"):
            if not isinstance(arg, list) or not arg:
                ck.err(p, f"{op} needs a non-empty list")
        elif op == "exists":
            if not isinstance(arg, bool):
                ck.err(p, "exists needs true or false")
        elif op in ("lt", "le", "gt", "ge"):
            if not isinstance(arg, (int, float)) or isinstance(arg, bool):
                ck.err(p, f"{op} needs a number")
        elif op in ("matches", "not_matches"):
            _check_regex(ck, p, arg)
        elif op == "len":
            if isinstance(arg, Mapping):
                _check_cond(ck, p, arg, captures, name + ".len")
            elif not isinstance(arg, int):
                ck.err(p, "len needs a number or a condition")
        elif op == "any":
            if isinstance(arg, Mapping) and arg and all(k not in OPERATORS for k in arg):
                sub: set[str] = set()
                _check_fields(ck, p, arg, sub)
                for k in arg:
                    captures.add(f"{name}.{k}")
                captures.add(f"{name}.*")  # any key of the matched element
            else:
                _check_cond(ck, p, arg if isinstance(arg, Mapping) else {"eq": arg}, captures, name)
                captures.add(f"{name}.item")


def _check_version_spec(ck: _Checker, path: str, spec: Any) -> None:
    if not isinstance(spec, str) or not spec.strip():
        ck.err(path, "version range must be a string such as '>=2.12.10,<2.27'")
        return
    for clause in spec.split(","):
        if not _VERSION_CLAUSE.match(clause):
            ck.err(path, f"bad version clause {clause.strip()!r}")


def _check_examples(ck: _Checker, path: str, ex: Any) -> dict[str, list]:
    out: dict[str, list] = {"match": [], "no_match": []}
    if ex is None:
        ck.warn(path, "no examples")
        return out
    if not isinstance(ex, Mapping):
        ck.err(path, "examples must be a mapping with match and no_match lists")
        return out
    for key in ex:
        if key not in ("match", "no_match"):
            ck.err(f"{path}.{key}", f"unknown examples key {key!r}")
    for key in ("match", "no_match"):
        items = ex.get(key) or []
        if not isinstance(items, list):
            ck.err(f"{path}.{key}", f"examples.{key} must be a list")
            continue
        for i, item in enumerate(items):
            p = f"{path}.{key}.{i}"
            if isinstance(item, str):
                pass
            elif isinstance(item, Mapping) and set(item) <= {"files", "events", "note"} and (
                    "files" in item) != ("events" in item):
                if "files" in item and not (isinstance(item["files"], Mapping) and item["files"] and all(
                        isinstance(k, str) and isinstance(v, str) for k, v in item["files"].items())):
                    ck.err(p, "files must map file names to log text")
                if "events" in item and not (isinstance(item["events"], list) and all(
                        isinstance(e, Mapping) and "kind" in e for e in item["events"])):
                    ck.err(p, "events must be a list of event mappings with a kind")
            else:
                ck.err(p, "an example is log text, {files: {name: text}} or {events: [...]}")
                continue
            out[key].append(item)
    if not out["match"]:
        ck.warn(f"{path}.match", "no match example")
    return out


def _placeholders(text: str) -> list[str]:
    return template_names(text)


def build_rule(data: Any, *, file: str = "<memory>", line: int = 0, lines: Mapping[str, int] | None = None,
               origin: str = "builtin", timeout: float | None = MATCH_TIMEOUT) -> tuple[Rule | None, list[Problem]]:
    """Validate one rule mapping and build it. Returns (rule or None, problems)."""
    lines = lines or {}
    rid = data.get("id") if isinstance(data, Mapping) else None
    ck = _Checker(file, lines, line, rid if isinstance(rid, str) else None, origin)
    if not isinstance(data, Mapping):
        ck.err("", "a rule must be a mapping")
        return None, ck.problems
    if not isinstance(rid, str) or not rid:
        ck.err("id", "missing id")
        return None, ck.problems
    idre = BUILTIN_ID if origin == "builtin" else USER_ID
    if not (idre.match(rid) or BUILTIN_ID.match(rid)):
        ck.err("id", f"bad id {rid!r}: LD + 3 digits (1xx-9xx by family)"
               + ("" if origin == "builtin" else ", or your own PREFIX + digits"))
    # tombstone
    if "retired" in data:
        for key in data:
            if key not in TOMBSTONE_KEYS:
                ck.err(key, f"retired rule must not have {key!r} (a tombstone has: {', '.join(TOMBSTONE_KEYS)})")
        if not isinstance(data["retired"], str) or not data["retired"].strip():
            ck.err("retired", "retired needs the reason as text")
        if ck.failed:
            return None, ck.problems
        return Rule(id=rid, data=dict(data), file=file, line=line, origin=origin,
                    retired=data["retired"]), ck.problems

    for key in data:
        if key not in RULE_KEYS_REQUIRED + RULE_KEYS_OPTIONAL:
            ck.err(key, f"unknown key {key!r}")
    for key in RULE_KEYS_REQUIRED:
        if key not in data or data[key] in (None, "", []):
            ck.err(key, f"missing {key}")
    if data.get("category") is not None and data.get("category") not in CATEGORIES:
        ck.err("category", f"unknown category {data.get('category')!r}")
    if data.get("severity") is not None and data.get("severity") not in SEVERITIES:
        ck.err("severity", f"severity must be one of {', '.join(SEVERITIES)}")
    if data.get("role") is not None and data.get("role") not in ROLES:
        ck.err("role", f"role must be one of {', '.join(ROLES)}")
    for key in ("title", "explanation"):
        if key in data and not isinstance(data[key], str):
            ck.err(key, f"{key} must be text")
    for key in ("fix", "confirm", "not_when"):
        if key in data and not (isinstance(data[key], list) and all(isinstance(s, str) and s.strip()
                                                                      for s in data[key])):
            ck.err(key, f"{key} must be a list of non-empty strings")
    if "origin" in data:
        o = data["origin"]
        if not (isinstance(o, str) or isinstance(o, list) and o and all(isinstance(x, str) for x in o)):
            ck.err("origin", "origin must be a value name or a list of them (fields holding the origin rank(s))")
    if "priority" in data and (not isinstance(data["priority"], int) or isinstance(data["priority"], bool)):
        ck.err("priority", "priority must be an integer")
    if "confidence" in data and not (isinstance(data["confidence"], (int, float))
                                     and 0 <= data["confidence"] <= 1):
        ck.err("confidence", "confidence must be a number between 0 and 1")
    docs = data.get("docs")
    if docs is not None:
        if not isinstance(docs, list):
            ck.err("docs", "docs must be a list of {title, url}")
        else:
            for i, d in enumerate(docs):
                if not (isinstance(d, Mapping) and set(d) == {"title", "url"} and isinstance(d["url"], str)
                        and d["url"].startswith(("https://", "http://"))):
                    ck.err(f"docs.{i}", "each doc is {title, url} with an http(s) url")
    at = data.get("applies_to")
    if at is not None:
        if not isinstance(at, Mapping):
            ck.err("applies_to", "applies_to must map nccl/torch/cuda/gloo to a version range")
        else:
            for k, v in at.items():
                if k not in APPLIES_TO_KEYS:
                    ck.err(f"applies_to.{k}", f"unknown component {k!r}")
                else:
                    _check_version_spec(ck, f"applies_to.{k}", v)
    examples = _check_examples(ck, "examples", data.get("examples"))

    # match
    allowed: set[str] = set(EVENT_ATTRS)
    allowed.add("log.*")  # the event's attributes, whatever its fields are called
    open_fields = False
    kinds: tuple[str, ...] = ()
    templates: frozenset[str] = frozenset()
    pattern = None
    cond = None
    clauses: dict[str, list[_Clause]] = {"with": [], "without": []}
    match = data.get("match")
    if match is not None and not isinstance(match, Mapping):
        ck.err("match", "match must be a mapping")
    elif isinstance(match, Mapping):
        for key in match:
            if key not in MATCH_KEYS:
                ck.err(f"match.{key}", f"unknown match key {key!r}")
        tpl_spec = match.get("template")
        if tpl_spec is not None:
            titems = [tpl_spec] if isinstance(tpl_spec, str) else tpl_spec
            if not (isinstance(titems, list) and titems and all(isinstance(t, str) and t.strip() for t in titems)):
                ck.err("match.template", "template must be a catalog template id or a non-empty list of them")
            else:
                templates = frozenset(t.strip() for t in titems)
        if "kind" in match or tpl_spec is None:
            kinds = _kinds(ck, "match.kind", match.get("kind"))
        else:
            open_fields = True  # any kind the template's message is read as
        for k in kinds:
            known = KIND_FIELDS.get(k)
            if k.endswith("*") or known is None:
                open_fields = True
            else:
                allowed.update(known)
        if "pattern" in match:
            groups = _check_regex(ck, "match.pattern", match["pattern"])
            allowed.update(groups or ())
        caps: set[str] = set()
        if "fields" in match:
            _check_fields(ck, "match.fields", match["fields"], caps)
            allowed.update(caps)
        for ckey in ("with", "without"):
            if ckey not in match:
                continue
            spec = match[ckey]
            items = spec if isinstance(spec, list) else [spec]
            aliases = set()
            for i, cl in enumerate(items):
                p = f"match.{ckey}" + (f".{i}" if isinstance(spec, list) else "")
                if not isinstance(cl, Mapping):
                    ck.err(p, f"{ckey} must be a mapping (or a list of mappings) with kind, pattern, fields, scope, as")
                    continue
                for key in cl:
                    if key not in CLAUSE_KEYS:
                        ck.err(f"{p}.{key}", f"unknown {ckey} key {key!r}")
                ckinds = _kinds(ck, f"{p}.kind", cl.get("kind"))
                scope = cl.get("scope", "rank")
                if scope not in SCOPES:
                    ck.err(f"{p}.scope", f"scope must be one of {', '.join(SCOPES)}")
                optional = cl.get("optional", False)
                if not isinstance(optional, bool):
                    ck.err(f"{p}.optional", "optional must be true or false")
                elif optional and ckey == "without":
                    ck.err(f"{p}.optional", "optional only makes sense in a with clause")
                alias = cl.get("as")
                if alias is not None:
                    if ckey == "without":
                        ck.err(f"{p}.as", "a without clause has no event to name")
                    elif not (isinstance(alias, str) and _IDENT.match(alias)) or alias in allowed:
                        ck.err(f"{p}.as", f"bad alias {alias!r}")
                    aliases.add(alias)
                cgroups: tuple[str, ...] = ()
                if "pattern" in cl:
                    cgroups = _check_regex(ck, f"{p}.pattern", cl["pattern"]) or ()
                ccaps: set[str] = set()
                if "fields" in cl:
                    _check_fields(ck, f"{p}.fields", cl["fields"], ccaps)
                if ckey == "with":
                    name = alias or f"with{i}"
                    allowed.update(cgroups)
                    allowed.update(ccaps)
                    allowed.update(f"{name}.{g}" for g in cgroups)
                    allowed.add(f"{name}.*")
                if not ck.failed:
                    try:
                        clauses[ckey].append(_Clause(
                            kinds=ckinds,
                            pattern=_Pattern(cl["pattern"], timeout) if "pattern" in cl else None,
                            fields=_Cond(cl["fields"], timeout) if "fields" in cl else None,
                            scope=scope, alias=alias if ckey == "with" else None,
                            optional=bool(optional) and ckey == "with"))
                    except Exception as exc:  # pragma: no cover - validated above
                        ck.err(p, str(exc))
        if not ck.failed:
            try:
                pattern = _Pattern(match["pattern"], timeout) if "pattern" in match else None
                cond = _Cond(match["fields"], timeout) if "fields" in match else None
            except Exception as exc:  # pragma: no cover - validated above
                ck.err("match", str(exc))

    # placeholders that can never be filled
    for key in ("title", "explanation", "fix", "confirm", "not_when"):
        val = data.get(key)
        texts = [val] if isinstance(val, str) else (val if isinstance(val, list) else [])
        for t in texts:
            if not isinstance(t, str):
                continue
            try:
                parse_template(t)
            except TemplateError as exc:
                ck.err(key, f"bad template: {exc}")
                continue
            for name in _placeholders(t):
                if not _fillable(name, allowed, open_fields):
                    ck.warn(key, f"placeholder {{{name}}} can never be filled (not a field of "
                            f"{', '.join(kinds) or 'the matched kinds'}, a named group or an event attribute)")
    if ck.failed:
        return None, ck.problems
    norm = dict(data)
    norm["match"] = dict(match)  # type: ignore[arg-type]
    if kinds or not templates:
        norm["match"]["kind"] = list(kinds)
    if templates:
        norm["match"]["template"] = sorted(templates)
    norm["examples"] = examples
    rule = Rule(id=rid, data=norm, file=file, line=line, origin=origin, _kinds=kinds, _pattern=pattern,
                _fields=cond, _with=tuple(clauses["with"]), _without=tuple(clauses["without"]),
                _templates=templates)
    return rule, ck.problems


def _kinds(ck: _Checker, path: str, spec: Any) -> tuple[str, ...]:
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list) or not items or not all(isinstance(k, str) and k for k in items):
        ck.err(path, "kind must be an event kind or a non-empty list of kinds")
        return ()
    for k in items:
        if not _re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?|[a-z0-9_]+\*", k):
            ck.err(path, f"bad event kind {k!r}")
        elif not k.endswith("*") and k not in KIND_FIELDS:
            ck.err(path, f"unknown event kind {k!r}: nothing emits it (the kinds are listed in logdoc/kinds.py)")
        elif k.endswith(".*") and k not in KIND_FIELDS:
            ck.err(path, f"{k!r} names no event kind (the kinds are listed in logdoc/kinds.py)")
    return tuple(items)


def _fillable(name: str, allowed: set[str], open_fields: bool) -> bool:
    if name in allowed:
        return True
    head = name.split(".")[0]
    if f"{head}.*" in allowed:
        return True
    for a in allowed:  # `{failures.*}` style captures
        if a.endswith(".*") and name.startswith(a[:-1]):
            return True
    if open_fields and "." not in name:
        return True
    # dotted access into a known field (e.g. {values.2.21.5} is not useful, but {interfaces.0.name} is)
    return head in allowed and head not in EVENT_ATTRS


# --------------------------------------------------------------------------------------------
# loading

def _yaml_lines(node: Any, path: str = "", out: dict[str, int] | None = None,
                dups: list[tuple[str, int]] | None = None, _seen: set[int] | None = None) -> dict[str, int]:
    out = {} if out is None else out
    if _yaml is None:
        return out
    # a node reached again through an alias is not walked again (a "billion laughs" file would
    # take forever): its lines are those of its first place
    _seen = set() if _seen is None else _seen
    if isinstance(node, (_yaml.MappingNode, _yaml.SequenceNode)):
        if id(node) in _seen:
            return out
        _seen.add(id(node))
    if isinstance(node, _yaml.MappingNode):
        seen: set[str] = set()
        for knode, vnode in node.value:
            key = str(knode.value)
            p = f"{path}.{key}" if path else key
            if dups is not None and key in seen:
                dups.append((p, knode.start_mark.line + 1))
            seen.add(key)
            out[p] = knode.start_mark.line + 1
            _yaml_lines(vnode, p, out, dups, _seen)
    elif isinstance(node, _yaml.SequenceNode):
        for i, item in enumerate(node.value):
            p = f"{path}.{i}" if path else str(i)
            out[p] = item.start_mark.line + 1
            _yaml_lines(item, p, out, dups, _seen)
    return out


def _load_yaml_file(path: Path, fast: bool = False) -> tuple[Any, dict[str, int], list[Problem]]:
    """``fast``: libyaml's loader when PyYAML has it (the large annotation files)."""
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:  # unreadable, or not UTF-8: a problem of that file, not fatal
        problems.append(Problem(str(path), 1, None, f"cannot read the file: {exc}"))
        return None, {}, problems
    assert _yaml is not None
    loader = None
    try:
        cls = getattr(_yaml, "CSafeLoader", _yaml.SafeLoader) if fast else _yaml.SafeLoader
        loader = cls(text)  # raises on characters YAML refuses (NUL ...)
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except (_yaml.YAMLError, RecursionError) as exc:  # RecursionError: nested thousands deep
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        what = "nested too deeply" if isinstance(exc, RecursionError) else exc
        problems.append(Problem(str(path), line, None, f"YAML error: {what}".replace("\n", " ")))
        return None, {}, problems
    finally:
        if loader is not None:
            loader.dispose()
    dups: list[tuple[str, int]] = []
    lines = _yaml_lines(node, "", None, dups) if node is not None else {}
    for p, line in dups:
        problems.append(Problem(str(path), line, None, f"duplicate key {p.rpartition('.')[2]!r} ({p})"))
    return data, lines, problems


def _rules_from_document(data: Any, lines: Mapping[str, int], file: str) -> tuple[list[tuple[Any, int, dict[str, int]]], list[Problem]]:
    """Split a rule file into (rule data, line, per-rule line map)."""
    problems: list[Problem] = []
    if data is None:
        return [], problems
    if isinstance(data, list):
        items, prefix = data, ""
    elif isinstance(data, Mapping):
        for key in data:
            if key not in FILE_KEYS and key not in ("schema", "sources"):
                problems.append(Problem(file, lines.get(str(key), 1), None, f"unknown top-level key {key!r}"))
        items = data.get("rules") or []
        prefix = "rules."
        if not isinstance(items, list):
            problems.append(Problem(file, lines.get("rules", 1), None, "rules must be a list"))
            return [], problems
    else:
        problems.append(Problem(file, 1, None, "a rule file is a mapping with a rules list"))
        return [], problems
    out = []
    for i, item in enumerate(items):
        base = f"{prefix}{i}"
        sub = {k[len(base) + 1:]: v for k, v in lines.items() if k.startswith(base + ".")}
        out.append((item, lines.get(base, 1), sub))
    return out, problems


def _add_rules(rs: RuleSet, entries, file: str, origin: str, seen_here: dict[str, tuple[str, int]]) -> None:
    timeout = None if origin == "builtin" else MATCH_TIMEOUT  # built-in patterns are proven bounded
    for data, line, sub in entries:
        rule, problems = build_rule(data, file=file, line=line, lines=sub,
                                    origin="builtin" if origin == "builtin" else "user", timeout=timeout)
        rs.problems.extend(problems)
        if rule is None:
            continue
        if rule.id in seen_here:
            f, l = seen_here[rule.id]
            rs.problems.append(Problem(file, line, rule.id, f"duplicate id (first defined at {f}:{l})"))
            continue
        seen_here[rule.id] = (file, line)
        old = rs.rules.get(rule.id)
        if old is not None and old.origin == "builtin" and rule.origin == "user":
            if old.retired:
                rs.problems.append(Problem(file, line, rule.id,
                                           f"reuses the id of a retired rule ({old.retired})", "warning"))
        rs.add(rule)


def _rule_files(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
                  and not p.name.startswith("."))


def _load_dir(rs: RuleSet, d: Path, origin: str) -> None:
    seen_here: dict[str, tuple[str, int]] = {}
    if not d.is_dir():
        rs.problems.append(Problem(str(d), 0, None, "rule folder not found"))
        return
    files = _rule_files(d)
    if _yaml is None and not any(p.suffix == ".json" for p in files):
        rs.problems.append(Problem(str(d), 0, None, "PyYAML is not installed and there is no compiled JSON"))
    for path in files:
        if path.suffix == ".json":
            if _yaml is not None and any(p.suffix in (".yaml", ".yml") for p in files):
                continue  # a compiled copy next to its sources: the sources win
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested thousands deep
                rs.problems.append(Problem(str(path), 1, None, f"JSON error: {exc}"))
                continue
            if isinstance(data, Mapping) and data.get("schema") == SCHEMA:
                _add_compiled(rs, data, origin, seen_here)
                if origin == "builtin":
                    from .knowledge import load_compiled_knowledge

                    load_compiled_knowledge(rs, data)
                continue
            entries, problems = _rules_from_document(data, {}, str(path))
        else:
            if _yaml is None:
                continue
            data, lines, problems0 = _load_yaml_file(path)
            rs.problems.extend(problems0)
            entries, problems = _rules_from_document(data, lines, str(path))
        rs.problems.extend(problems)
        _add_rules(rs, entries, str(path), origin, seen_here)


def _builtin_dir() -> Path:
    from .resources import data_dir

    return data_dir("knowledge")


def load_rules(dirs: Sequence[str | Path] | None = None, *, extra_dirs: Sequence[str | Path] = ()) -> RuleSet:
    """Load and validate the built-in rules (or ``dirs``), then the user's ``extra_dirs``.

    A rule in ``extra_dirs`` replaces the built-in rule with the same id. Problems are collected
    in ``RuleSet.problems`` as ``file:line: rule ID: message``; a bad rule is left out, the others load.
    """
    rs = RuleSet()
    builtin = [_builtin_dir()] if dirs is None else [Path(x) for x in dirs]
    for d in builtin:
        _load_dir(rs, Path(d), "builtin")
    for d in extra_dirs:
        _load_dir(rs, Path(d), "user")
    from .knowledge import attach_knowledge

    attach_knowledge(rs, [Path(d) for d in builtin])
    return rs


def compile_rules(rules: RuleSet | Sequence[str | Path] | None = None) -> dict[str, Any]:
    """A JSON-ready copy of the knowledge base (for the browser build, which has no PyYAML)."""
    rs = rules if isinstance(rules, RuleSet) else load_rules(rules)
    out = {
        "schema": SCHEMA,
        "rules": [
            {**r.to_dict(), "source": {"file": Path(r.file).name, "line": r.line, "origin": r.origin}}
            for r in rs
        ],
    }
    from .knowledge import compile_knowledge

    out.update(compile_knowledge(rs))
    return out


def _add_compiled(rs: RuleSet, data: Mapping[str, Any], origin: str, seen_here: dict) -> None:
    for item in data.get("rules") or []:
        src: Mapping[str, Any] = {}
        if isinstance(item, Mapping):
            item = dict(item)
            src = item.pop("source", None) or {}
        rule_origin = "user" if src.get("origin") == "user" or origin == "user" else "builtin"
        _add_rules(rs, [(item, int(src.get("line", 0) or 0), {})], str(src.get("file") or "<compiled>"),
                   rule_origin, seen_here)


def load_compiled(data: Mapping[str, Any] | str) -> RuleSet:
    """Load a knowledge base produced by :func:`compile_rules` (a dict or its JSON text)."""
    if isinstance(data, str):
        data = json.loads(data)
    rs = RuleSet()
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        rs.problems.append(Problem("<compiled>", 0, None, f"not a compiled knowledge base ({SCHEMA})"))
        return rs
    _add_compiled(rs, data, "builtin", {})
    from .knowledge import load_compiled_knowledge

    load_compiled_knowledge(rs, data)
    return rs


# --------------------------------------------------------------------------------------------
# versions

def parse_version(text: str) -> tuple[int, ...]:
    m = _re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def version_in_range(version: str, spec: str) -> bool:
    """``version_in_range("2.21.5", ">=2.12.10,<2.27")``; an unparsable version counts as inside."""
    v = parse_version(version)
    if not v:
        return True
    for clause in spec.split(","):
        m = _VERSION_CLAUSE.match(clause)
        if not m:
            continue
        op, ref = m.group(1) or "==", parse_version(m.group(2))
        n = max(len(v), len(ref))
        a, b = v + (0,) * (n - len(v)), ref + (0,) * (n - len(ref))
        if op == "==" and len(ref) < len(v):  # ==2.28 means any 2.28.x
            a = v[: len(ref)]
            b = ref
        ok = {"==": a == b, "!=": a != b, ">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
        if not ok:
            return False
    return True


# --------------------------------------------------------------------------------------------
# examples

def example_sources(example: Any, rule_id: str = "example") -> list[tuple[str, str]]:
    """The (name, text) log sources of an example (empty for an ``events`` example)."""
    if isinstance(example, str):
        return [(f"{rule_id}.log", example)]
    if isinstance(example, Mapping) and "files" in example:
        return [(str(k), str(v)) for k, v in example["files"].items()]
    return []


def example_events(example: Any) -> list[Event] | None:
    """The events of an ``{events: [...]}`` example, else None."""
    if isinstance(example, Mapping) and "events" in example:
        out = []
        for i, e in enumerate(example["events"]):
            d = {"level": "INFO", "file": "example.log", "line": i + 1, "text": "", "fields": {}}
            d.update(e)
            out.append(Event.from_dict(d))
        return out
    return None


def check_examples(rules: RuleSet, to_events: Callable[[list[tuple[str, str]]], list[Event]],
                   only: Iterable[str] | None = None) -> list[str]:
    """Run every rule's examples through ``to_events`` (the parser + analysis) and this rule set.

    Returns one message per failing example (empty when all pass); used by ``logdoc rules test``.
    """
    failures = []
    wanted = set(only) if only is not None else None
    for rule in rules.active():
        if wanted is not None and rule.id not in wanted:
            continue
        ex = rule.data.get("examples") or {}
        for expect, items in (("match", ex.get("match") or []), ("no_match", ex.get("no_match") or [])):
            for i, item in enumerate(items):
                evs = example_events(item)
                if evs is None:
                    evs = to_events(example_sources(item, rule.id))
                hit = any(m.rule.id == rule.id for m in rules.match(evs))
                if hit != (expect == "match"):
                    failures.append(f"{rule.file}:{rule.line}: rule {rule.id}: {expect} example {i + 1} "
                                    f"{'did not match' if expect == 'match' else 'matched'}")
    return failures
