"""SHA-256 of files: the one hashing function of the project.

The assurance tooling imports it for the report's artifact hashes and its
``package`` block; ``verify-install``'s verifier (``sonnx_mul_verify``,
outside this package, so it cannot import it) hashes with its own
stdlib-only copy, tested to agree: every byte, read in blocks, never a
prefix or a sample.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .regular import open_regular

SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
SKIP_SUFFIXES = (".pyc", ".pyo")
BLOCK = 1 << 16


def sha256(path: Path) -> str:
    """Hex SHA-256 of the whole content of the regular file ``path``.

    Opened by :func:`sonnx_mul.regular.open_regular`: a FIFO or a device is
    refused (``NotRegularFileError``), never waited on or read forever.
    """
    digest = hashlib.sha256()
    with open_regular(path) as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def walk(base: Path) -> list[Path]:
    """Files under ``base`` in sorted order, without caches and build metadata."""
    if base.is_file():
        return [base]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
        )
        found += [Path(dirpath) / f for f in sorted(filenames) if not f.endswith(SKIP_SUFFIXES)]
    return found


def package_files(package_dir: Path) -> dict[str, str]:
    """SHA-256 of every file of a package directory, by path relative to it."""
    return {p.relative_to(package_dir).as_posix(): sha256(p) for p in walk(package_dir)}
