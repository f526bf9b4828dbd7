"""The parts of the knowledge base besides the rules: the catalog annotations
(``knowledge/annotations/``, :mod:`logdoc.annotations`) and the differentials
(``knowledge/differentials/``, :mod:`logdoc.differential`). They are attached to the
:class:`logdoc.kb.RuleSet` that carries the rules, travel with it in the compiled JSON (``kb.json``,
the browser build) and in the start-up cache, and are checked by ``logdoc rules lint``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

ANNOTATIONS_DIR = "annotations"
DIFFERENTIALS_DIR = "differentials"


def knowledge_files(d: Path) -> list[Path]:
    """The files besides the rules that a knowledge folder's meaning depends on (for cache keys)."""
    from .annotations import annotation_files

    return annotation_files(d / ANNOTATIONS_DIR) + annotation_files(d / DIFFERENTIALS_DIR)


def attach_knowledge(rs, dirs: Sequence[Path]) -> None:
    """Load the annotations and differentials of the built-in knowledge folders ``dirs`` into ``rs``
    (problems join ``rs.problems``), and check the rules' template ids against the catalogs."""
    from .annotations import Annotations, catalog_ids, check_ids, load_annotations
    from .differential import load_differentials
    from .kb.schema import Problem
    from .kb.yamlfile import _yaml

    if _yaml is None:
        return  # the compiled copy brings them (load_compiled_knowledge)
    ann = Annotations()
    diffs = None
    for d in dirs:
        part = load_annotations(d / ANNOTATIONS_DIR)
        for a in part.entries:
            ann.add(a)
        ann.problems.extend(part.problems)
        if (d / DIFFERENTIALS_DIR).is_dir():
            diffs = load_differentials(d / DIFFERENTIALS_DIR, base=diffs)
            rs.problems.extend(diffs.problems)
            diffs.problems = []
    try:
        catalog = catalog_ids()
    except OSError:  # pragma: no cover - the grammars ship with the code
        catalog = None
    if catalog is not None:
        ann.problems.extend(check_ids(ann, catalog))
        for rule in rs.active():
            for tid in sorted(rule.templates):
                if tid not in catalog.known:
                    rs.problems.append(Problem(rule.file, rule.line, rule.id,
                                               f"match.template: {tid} is not a catalog template id"))
            rs.problems.extend(_template_placeholders(rule, ann))
    rs.problems.extend(ann.problems)
    ann.problems = []
    rs.annotations = ann
    rs.differentials = diffs


def _template_placeholders(rule, ann) -> list:
    """A rule matched by template alone: each placeholder of its texts that no message of its
    templates (or of their annotation groups: the same message in other releases' words) captures."""
    from .kb.schema import Problem
    from .kb.validate import template_fields

    pending = rule._template_placeholders
    if not pending:
        return []
    ids = {g for tid in rule.templates for g in ann.group(tid)} | set(rule.templates)
    got = template_fields(sorted(ids))
    if got is None:
        return []  # an unknown id: reported above
    return [Problem(rule.file, rule.line, rule.id,
                    f"placeholder {{{name}}} can never be filled: no message of match.template "
                    f"({', '.join(sorted(rule.templates))}) captures it", level="warning")
            for name in sorted(pending) if name.split(".")[0] not in got]


def compile_knowledge(rs) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rs.annotations is not None:
        out["annotations"] = rs.annotations.to_json()
    if rs.differentials is not None:
        out["differentials"] = rs.differentials.to_json()
    return out


def load_compiled_knowledge(rs, data: Mapping[str, Any]) -> None:
    from .annotations import Annotations
    from .differential import Differentials

    if "annotations" in data:
        ann = Annotations.from_json(data["annotations"])
        rs.problems.extend(ann.problems)
        ann.problems = []
        rs.annotations = ann
    if "differentials" in data:
        diffs = Differentials.from_json(data["differentials"])
        rs.problems.extend(diffs.problems)
        diffs.problems = []
        rs.differentials = diffs


def lint_summary(rs) -> list[str]:
    """Lines for ``logdoc rules lint``: the annotations, how complete they are, the differentials."""
    from .annotations import catalog_ids, completeness

    out = []
    ann = rs.annotations
    if ann is not None:
        n_ids = len(ann.by_id)
        out.append(f"{len(ann)} annotation entries, {n_ids} template ids")
        try:
            for name, (done, total) in completeness(ann, catalog_ids()).items():
                pct = 100.0 * done / total if total else 100.0
                out.append(f"  annotated: {name} {done}/{total} ({pct:.1f}%)")
        except OSError:  # pragma: no cover
            pass
    tpl_rules = [r for r in rs.active() if r.templates]
    if tpl_rules:
        out.append(f"{len(tpl_rules)} rules match catalog template ids")
    if rs.differentials is not None:
        out.append(f"differentials: {len(rs.differentials.categories)} categories, "
                   f"{len(rs.differentials.families)} message families")
    return out
