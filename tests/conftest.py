import os
import sys

from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # tests/support.py

settings.register_profile("ci", max_examples=150, deadline=None)
settings.register_profile("long", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
