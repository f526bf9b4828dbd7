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


def test_a_check_is_read_as_a_row_of_the_file_that_printed_it():
    """`rv == 0. ...` is a condition of many Gloo files (linux.cc's sysfs reads, device.cc's getaddrinfo):
    cut after it, the text alone reads as another file's row; the location names the file, and no row
    of another file is taken when the catalog has rows of that one."""
    p = torchlines.classify("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:99] rv == 0. -")
    assert p is not None and not (p.template or "").startswith("gloo:common/linux.cc"), p.template
    linux = torchlines.classify("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/common/linux.cc:80] "
                                "rv == 0. No such file or directory")
    assert linux is not None and linux.template == "gloo:common/linux.cc:80"
