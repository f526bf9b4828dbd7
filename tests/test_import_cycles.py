"""No new import cycles inside logdoc. Imports inside functions count: they are cycles all the same,
only deferred. There are none: any cycle fails the test (break it by moving what both sides need
into the module that owns it, or by passing a function in, as ``pipeline`` passes ``parse_sources``
to ``parallel``)."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "logdoc"

KNOWN: set[frozenset[str]] = set()  # every cycle is broken: keep it empty


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    dep = sub if sub in mods else target
                    # the package a module belongs to is always imported first: not an edge
                    if dep in mods and dep != m and not m.startswith(dep + "."):
                        edges[m].add(dep)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods and alias.name != m and not m.startswith(alias.name + "."):
                        edges[m].add(alias.name)
    return edges


def cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: set[frozenset[str]] = set()
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.add(frozenset(comp))
    return out


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset({"a", "b", "c"})}
    assert cycles({"a": {"b"}, "b": set()}) == set()


def test_no_new_import_cycles():
    found = cycles(import_graph())
    new = [sorted(c) for c in found if c not in KNOWN]
    gone = [sorted(c) for c in KNOWN if c not in found]
    assert not new, f"new or grown import cycles: {new}"
    assert not gone, f"cycles broken (well done): remove them from KNOWN: {gone}"


def test_the_cli_and_live_packages_import_one_way():
    edges = import_graph()
    assert "logdoc.cli" not in edges["logdoc.cli.common"] and "logdoc.cli" not in edges["logdoc.cli.commands"]
    assert "logdoc.live" not in {d for m in edges if m.startswith("logdoc.live.") for d in edges[m]}
