"""logdoc: explains why a distributed training job (NCCL, Gloo, PyTorch) died, from its logs.

The core imports only the standard library and lark; ``explain`` is loaded on first use.
"""
__version__ = "0.1.0"


def explain(text_or_paths, **kwargs):
    """Return the report (the same object as ``logdoc explain --format json``)."""
    from .api import explain as _explain

    return _explain(text_or_paths, **kwargs)
