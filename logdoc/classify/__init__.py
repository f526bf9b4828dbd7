"""Stage 4, classify: a record's message becomes a kind, a level, a template id and fields.

``catalog.py`` is the one catalog engine and ``formats.py`` its two dialects (printf for NCCL, brace
for PyTorch/Gloo). ``torch/`` reads PyTorch-distributed, torchrun, Gloo, CUDA and kernel Xid
messages; ``bare.py`` NCCL's messages without a header; ``nccltests.py`` nccl-tests' own lines;
``neighbours.py`` the lines other programs print beside NCCL (verbs, CUDA texts, UCX, py-spy, Ray,
Envoy). NCCL lines with a header (``logdoc/nccl.py``, with the NCCL catalog's front-end
``logdoc/templates.py``) and the Lark loader (``logdoc/grammar.py``) stand beside this package for
now.
"""
