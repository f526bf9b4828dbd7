"""Where the grammars and the knowledge base live.

In a wheel they are package data (``logdoc/_data/...``); in a source checkout or an editable
install they are the top-level ``grammars/`` and ``knowledge/`` folders of the repository.
"""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder holding ``name`` (``"grammars"`` or ``"knowledge"``)."""
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"logdoc data folder {name!r} is missing from this installation")


def grammar_text(filename: str) -> str:
    return (data_dir("grammars") / filename).read_text(encoding="utf-8")
