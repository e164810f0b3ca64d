"""``sonnx-mul verify-install REPORT.json``: is the imported code the code the report covers?

The report's ``package`` block holds the SHA-256 of every file of
``src/sonnx_mul`` when the report was written. This command hashes the files
of the ``sonnx_mul`` package that Python imports now (wherever it is
installed) and compares: same set of files, same hashes. Exit 0 when they
match, 1 when a file differs, is missing or is extra, 2 when the report
cannot be read or has no ``package`` block. Compiled caches (``__pycache__``,
``.pyc``) are not compared: Python rebuilds them from the sources.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .digest import package_files

EXIT_OK, EXIT_MISMATCH, EXIT_UNREADABLE = 0, 1, 2


@dataclass
class Outcome:
    package_dir: str
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra)


def installed_package_dir() -> Path:
    """The directory of the ``sonnx_mul`` package this interpreter imports."""
    import sonnx_mul

    return Path(sonnx_mul.__file__).resolve().parent


def compare(expected: Mapping[str, str], package_dir: Path) -> Outcome:
    """Compare the report's hashes with the files of ``package_dir``."""
    actual = package_files(package_dir)
    out = Outcome(str(package_dir))
    out.changed = sorted(p for p in expected if p in actual and actual[p] != expected[p])
    out.missing = sorted(p for p in expected if p not in actual)
    out.extra = sorted(p for p in actual if p not in expected)
    return out


def read_expected(report_path: Path) -> dict[str, str]:
    """The ``package.files`` block of a report; ValueError when absent or malformed."""
    data = json.loads(report_path.read_text(encoding="utf-8"))
    files = data.get("package", {}).get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError("the report has no package.files block (written by an older version?)")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError("package.files must map file names to SHA-256 strings")
    return {str(k): str(v) for k, v in files.items()}


def verify(report_path: Path, package_dir: Path | None = None) -> int:
    """Print the verdict and return the exit code (see the module docstring)."""
    try:
        expected = read_expected(report_path)
    except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
        print(f"sonnx-mul: error: cannot read {report_path}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    outcome = compare(expected, package_dir or installed_package_dir())
    for label, paths in (
        ("changed", outcome.changed),
        ("missing", outcome.missing),
        ("extra", outcome.extra),
    ):
        for path in paths:
            print(f"{label}: {path}")
    if outcome.ok:
        print(
            f"verify-install: OK: {len(expected)} files of {outcome.package_dir} "
            f"are the files {report_path} covers"
        )
        return EXIT_OK
    count = len(outcome.changed) + len(outcome.missing) + len(outcome.extra)
    print(
        f"verify-install: MISMATCH: {outcome.package_dir} is not the code {report_path} "
        f"covers ({count} files differ)",
        file=sys.stderr,
    )
    return EXIT_MISMATCH
