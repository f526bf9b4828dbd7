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
