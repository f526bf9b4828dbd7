"""Gloo's `[file:line]` (and `[enforce fail at file:line]`) prefix names its source file in any build's
path: a Linux build's `/.../third_party/gloo/gloo/...`, a Windows build's `C:\\...\\gloo\\...`."""
from __future__ import annotations

import pytest

from logdoc.classify import torch as torchlines


@pytest.mark.parametrize("srcdir", ["/opt/pytorch/third_party/gloo/", "C:\\actions-runner\\_work\\pytorch\\third_party\\gloo\\"])
def test_a_gloo_location_in_any_builds_path(srcdir):
    loc = srcdir + ("gloo\\transport\\uv\\device.cc" if "\\" in srcdir else "gloo/transport/uv/device.cc")
    p = torchlines.classify(f"RuntimeError: [enforce fail at {loc}:154] rp != nullptr. Unable to find address for: node1")
    assert p is not None and p.template == "gloo:transport/uv/device.cc:154"
    assert p.fields["code_location"] == "gloo/transport/uv/device.cc:154"
