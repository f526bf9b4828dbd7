"""tools/field_damage.py: logdoc's right answers on the field corpus survive paste damage.

Each transform is one kind of damage seen in real pastes (tools/field_damage.py says which); the
floors are what logdoc reached, so a change that loses answers under some damage fails here.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# kept share (%) per transform, at least
FLOORS = {
    "evidence": 97, "bare": 92, "last-error": 89, "masked": 98, "cut-host": 95,
    "prefix-job": 98, "prefix-ray": 98, "prefix-stream": 96, "prefix-cri": 98,
    "quote": 99, "indent": 99, "wrap80": 89, "wrap120": 94, "crlf": 99, "ansi": 99,
}


def _load():
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location("field_damage", ROOT / "tools" / "field_damage.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    fd = _load()
    assert set(FLOORS) == set(fd.TRANSFORMS)
    out = tmp_path_factory.mktemp("damage") / "out.txt"
    import contextlib

    with out.open("w") as fh, contextlib.redirect_stdout(fh):
        assert fd.main([]) == 0
    got = {}
    for line in out.read_text().splitlines():
        m = re.match(r"damage: (\S+)\s+kept (\d+)/(\d+)", line)
        if m:
            got[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return got


@pytest.mark.parametrize("transform", sorted(FLOORS))
def test_answers_survive_damage(figures, transform):
    kept, total = figures[transform]
    assert total > 0
    assert 100 * kept >= FLOORS[transform] * total, f"{transform}: kept {kept}/{total}, floor {FLOORS[transform]}%"


def test_transforms_damage_what_they_say():
    fd = _load()
    line = "gpu-node-17:1234:5678 [3] misc/shmutils.cc:72 NCCL WARN Error while creating shared memory segment"
    assert fd.TEXT_TRANSFORMS["masked"](line).startswith("gpu-node-17:XXXXXX:XXXXXX [3] misc/")
    assert fd.TEXT_TRANSFORMS["cut-host"](line).startswith("-ode-17:1234:5678 [3] misc/")
    assert fd._bare(line) == "Error while creating shared memory segment"
    assert fd.TEXT_TRANSFORMS["wrap80"](line + line).split("\n")[0] == (line + line)[:80]
    assert fd.TEXT_TRANSFORMS["quote"]("a\nb") == "> a\n> b"
