"""The suite prints nothing between pytest's progress dots: no test switches capturing off or
writes to the real terminal; what a test wants to say goes into its assertion message."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
LOUD = re.compile(r"\b(?:capsys|capfd)\.disabled\(|sys\.__std(?:out|err)__|os\.write\([12],")


def test_no_test_writes_past_pytest_capture():
    loud = [f"{p.relative_to(TESTS)}:{n}: {line.strip()}"
            for p in sorted(TESTS.rglob("*.py")) if p.name != Path(__file__).name
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if LOUD.search(line)]
    assert not loud, "\n".join(loud)
