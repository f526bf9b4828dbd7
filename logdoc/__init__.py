"""logdoc: explains why a distributed training job (NCCL, Gloo, PyTorch) died, from its logs.

The core imports only the standard library and lark; ``explain`` is loaded on first use.
"""
__version__ = "0.1.0"


def explain(text_or_paths, **kwargs):
    """Return the report (the same object as ``logdoc explain --format json``)."""
    from .api import explain as _explain

    return _explain(text_or_paths, **kwargs)


def install_excepthook(logs=None, file=None):
    """Print a short diagnosis before the traceback when a distributed-training exception escapes.

    Wraps ``sys.excepthook``: when the exception (or one it was raised from) looks like a
    torch.distributed / NCCL / Gloo / torchrun failure (``DistBackendError``, ``DistNetworkError``,
    ``DistStoreError``, ``ChildFailedError``, a ``RuntimeError`` quoting NCCL or Gloo, ...), the
    report built from its traceback, plus the log files or folders in ``logs`` (default: the
    ``os.pathsep``-separated list in the environment variable ``LOGDOC_LOGS``), is summed up on
    ``file`` (default ``sys.stderr``); then the previous hook prints the traceback as usual. The
    hook never raises. Calling this twice installs it once. Returns the installed hook.

        import logdoc
        logdoc.install_excepthook()
    """
    import sys

    previous = sys.excepthook
    if getattr(previous, "_logdoc_hook", False):
        return previous

    def hook(etype, value, tb):
        try:
            from .live import exception_diagnosis

            text = exception_diagnosis(etype, value, tb, logs=logs)
            if text:
                out = file if file is not None else sys.stderr
                out.write(text)
                out.flush()
        except BaseException:  # noqa: BLE001 - a diagnosis must never hide the real traceback
            pass
        previous(etype, value, tb)

    hook._logdoc_hook = True
    hook._logdoc_previous = previous
    sys.excepthook = hook
    return hook
