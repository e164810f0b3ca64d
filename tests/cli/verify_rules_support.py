"""What several of the verifier's rule tests (``test_verify_rules_*.py``) build:
a small package to verify, and this interpreter's flags with some changed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def flags_with(**changed: int) -> argparse.Namespace:
    """``sys.flags`` with some fields changed."""
    names = [n for n in dir(sys.flags) if not n.startswith("_") and n not in ("count", "index")]
    return argparse.Namespace(**{n: getattr(sys.flags, n) for n in names} | changed)


def small_package(tmp_path: Path) -> Path:
    """``tmp_path/sonnx_mul``: an ``__init__.py``, a module and a data file."""
    pkg = tmp_path / "sonnx_mul"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "api.py").write_text("LIMIT = 1.0\n")
    (pkg / "data.txt").write_text("")
    return pkg
