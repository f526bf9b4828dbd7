"""Stage 7: the knowledge base.

Rules live in ``knowledge/*.yaml`` (schema: ``knowledge/README.md``). This package loads and
validates them, compiles their patterns and matches them against :class:`logdoc.events.Event`
objects. It holds detection *mechanics* only: every word of knowledge (causes, fixes, links) is in
the YAML, and reasoning across events or ranks is done by the analysis stage, which emits
``analysis.*`` events that rules match like any other kind.

One module per job, in the order a rule meets them:

- ``schema``: what a rule file may hold (categories, roles, key sets, operators) and ``Problem``;
- ``yamlfile``: YAML with the line of every key (rules, annotations, differentials);
- ``validate``: ``build_rule``, every key of a rule checked, each problem with its line;
- ``load``: rule folders, built-in and user; the compiled JSON copy (``compile_rules``, ``load_compiled``);
- ``patterns``: rule patterns, with a match timeout under ``regex``;
- ``conditions``: the ``fields`` operators;
- ``rule``: ``Rule``, its ``with``/``without`` clauses, ``Match``;
- ``ruleset``: ``RuleSet``, rules indexed by kind and template id, ``match``;
- ``render``: the placeholder template language of a rule's texts;
- ``versions``: version ranges; ``examples``: a rule's examples and ``check_examples``.

Dependencies: the standard library; ``regex`` (used when present, with a match timeout) and
``yaml`` (used when present). Without ``yaml`` the knowledge base is loaded from a compiled JSON
copy (:func:`compile_rules` / :func:`load_compiled`), which is what the browser build does.

``from logdoc.kb import X`` keeps working for every name below; code inside the package, and the
modules the loader itself imports (``knowledge``, ``annotations``, ``differential``), import from
the submodules.
"""
from __future__ import annotations

from .conditions import _Cond
from .examples import check_example, check_examples, example_events, example_sources, example_where, report_role
from .load import _builtin_dir, _rule_files, compile_rules, load_compiled, load_rules
from .patterns import MATCH_TIMEOUT, RuleTimeout, _Pattern, compile_pattern, regex_engine, regex_module
from .render import (TITLE_WIDTH, TemplateError, _Ph, human_times, parse_template, render_pieces, render_template,
                     template_names)
from .rule import Match, Rule, _Clause, _event_values, _Job, card_title
from .ruleset import RuleSet
from .schema import (APPLIES_TO_KEYS, BUILTIN_ID, CATEGORIES, CLAUSE_KEYS, DEFAULT_CONFIDENCE, EVENT_ATTRS, FAMILIES,
                     FILE_KEYS, KIND_FIELDS, MATCH_KEYS, NEGATIVE_OPERATORS, OPERATORS, ROLES, RULE_KEYS_OPTIONAL,
                     RULE_KEYS_REQUIRED, SCHEMA, SCOPES, SEVERITIES, TOMBSTONE_KEYS, USER_ID, Problem)
from .validate import _check_fields, _check_regex, _Checker, _kinds, build_rule
from .versions import parse_version, version_in_range
from .yamlfile import _load_yaml_file, yaml_available, yaml_module

__all__ = [
    "APPLIES_TO_KEYS", "BUILTIN_ID", "CATEGORIES", "CLAUSE_KEYS", "DEFAULT_CONFIDENCE", "EVENT_ATTRS", "FAMILIES",
    "FILE_KEYS", "KIND_FIELDS", "MATCH_KEYS", "MATCH_TIMEOUT", "NEGATIVE_OPERATORS", "OPERATORS", "ROLES",
    "RULE_KEYS_OPTIONAL", "RULE_KEYS_REQUIRED", "SCHEMA", "SCOPES", "SEVERITIES", "TITLE_WIDTH", "TOMBSTONE_KEYS",
    "USER_ID", "Match", "Problem", "Rule", "RuleSet", "RuleTimeout", "TemplateError", "build_rule", "card_title",
    "check_example", "check_examples", "compile_pattern", "compile_rules", "example_events", "example_sources", "example_where", "report_role", "human_times",
    "load_compiled", "load_rules", "parse_template", "parse_version", "regex_engine", "render_pieces",
    "render_template", "template_names", "version_in_range",
]
# Private names that modules outside the package used before the split (kept importable from here):
# _Clause, _Cond, _Pattern, _Job, _Ph, _event_values, _Checker, _check_fields, _check_regex, _kinds,
# _load_yaml_file, _rule_files, _builtin_dir, _yaml, _regex.


def __getattr__(name: str):
    # ``_yaml`` and ``_regex``: the modules (or None without them), imported only when asked
    if name == "_yaml":
        return yaml_module()
    if name == "_regex":
        return regex_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
