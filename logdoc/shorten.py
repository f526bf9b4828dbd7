"""Cut a text for display at a word boundary, with an ellipsis: never mid-word (``settings (e.``)."""
from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its longest prefix that ends at a word
    boundary (not shorter than half the limit; a single long token is cut where it must), without
    trailing punctuation that would dangle, followed by ``…``; the result has at most ``limit``
    characters."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    head = text[:limit - 1]
    if not text[limit - 1].isspace():
        cut = max(head.rfind(" "), head.rfind("\t"))
        if cut >= limit // 2:
            head = head[:cut]
    head = head.rstrip(" \t([{,;:-")
    return head + ELLIPSIS
