"""Stage 4, classify: a record's message becomes a kind, a level, a template id and fields.

``torch/`` reads PyTorch-distributed, torchrun, Gloo, CUDA and kernel Xid messages. The NCCL side
(``logdoc/nccl.py``, ``logdoc/templates.py``) and the Lark loader (``logdoc/grammar.py``) stand
beside this package for now.
"""
