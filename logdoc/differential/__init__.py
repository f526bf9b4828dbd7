"""A family-level diagnosis for a failure no rule explains, with a ranked differential.

When an error-level event (an NCCL WARN, an ncclResult error, a torch ``Dist*Error``, a Gloo
enforce or I/O failure, a c10d store error ...) is matched by no rule, it still means something:
its catalog annotation (:mod:`logdoc.annotations`) gives a category, a role and a meaning, and the
differentials of ``knowledge/differentials/*.yaml`` give, per category and per message family,
the candidate causes, what in a log speaks for or against each (conditions on events, in the
rules' condition language) and the single cheapest check that tells it apart. This package tests
those conditions on this log, ranks the candidates and builds the card (a diagnosis dict of the
report, with ``differential: [{category, cause, for, against, check}]``). Benign and context
annotations become notes.

Every word shown comes from the YAML; this package only evaluates and assembles: ``load.py`` (the
differentials loaded and checked), ``conditions.py`` (a condition tested on the log's events),
``card.py`` (which events get a card, the ranking, the card, ``attach``).
"""
from .card import attach, family_cards, rank_differential
from .load import SCHEMA, Cause, Differentials, Family, load_differentials

__all__ = ["SCHEMA", "Cause", "Differentials", "Family", "attach", "family_cards", "load_differentials",
           "rank_differential"]
