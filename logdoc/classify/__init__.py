"""Stage 4, classify: a record's message becomes a kind, a level, a template id and fields.

``torch/`` reads PyTorch-distributed, torchrun, Gloo, CUDA and kernel Xid messages; ``bare.py``
NCCL's messages without a header, and ``neighbours.py`` the lines other programs print beside NCCL
(nccl-tests, verbs, CUDA texts, UCX, py-spy, Ray, Envoy). NCCL lines with a header
(``logdoc/nccl.py``, ``logdoc/templates.py``) and the Lark loader (``logdoc/grammar.py``) stand
beside this package for now.
"""
