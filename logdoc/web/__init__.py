"""The static web page: the same logdoc core, run by Pyodide in the browser.

``logdoc.web.build`` writes the site (``build_site``) and serves it on 127.0.0.1 (``serve``);
``logdoc.web.entry`` is the small Python module the page's Web Worker calls.

Nothing is imported here, so that ``import logdoc.web.entry`` inside Pyodide stays cheap.
"""
from __future__ import annotations

__all__ = ["build_site", "serve"]


def __getattr__(name: str):
    if name in __all__:
        from logdoc.web import build

        return getattr(build, name)
    raise AttributeError(name)
