"""Test-wide settings.

Property tests are derandomized by default, so a CI run is reproducible: the same examples on every
machine, and a red run can be replayed. ``HYPOTHESIS_PROFILE=explore python -m pytest`` draws fresh
random examples instead (and more of them), which is how new counter-examples are found;
``tools/fuzz.py --minutes N`` is the long fuzz run of the whole pipeline.
"""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# The files that take longest (each over half a minute on a 2-core machine: one Pyodide run, one site
# build per file, fresh venvs, a browser) run first. With `-n auto --dist loadfile` each file goes to
# one process as a whole, so a long file started last would keep one core busy while the other idles.
SLOW_FIRST = ("tests/pyodide/", "tests/web/test_web_page.py", "tests/web/test_web_install.py",
              "tests/test_install.py", "tests/test_hostile_regex.py", "tests/web/test_web_build.py")


def _slow_rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for i, prefix in enumerate(SLOW_FIRST):
        if path.startswith(prefix):
            return i
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_slow_rank)  # stable: the order within a file and among the others is kept
