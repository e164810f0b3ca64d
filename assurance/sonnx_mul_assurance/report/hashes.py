"""SHA-256 of everything the claim depends on: sources, proofs, configuration, tools.

- :func:`claim_files`: every file of the repository the claim depends on
  (``CLAIM_PATHS``, common to every claim: the package, the C kernel, the
  tooling, ``pyproject.toml``, the lock file; plus each evidence source's own
  files, declared in :mod:`.protocol`: the Why3 theories, the prover drivers
  and configurations, the proof manifests, the MISRA deviations).
- :func:`binaries`: the provers' and Why3's executables, resolved through
  symbolic links, with their SHA-256 and ``--version`` line, and the Why3
  standard-library theories and Debian drivers the project's drivers use.
- :func:`package_files`: the files of an installed (or source) package
  directory, by path relative to it; what ``sonnx-mul verify-install`` compares.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from sonnx_mul.digest import sha256, walk

CLAIM_PATHS: tuple[str, ...] = (
    "src/sonnx_mul",  # the built extension sonnx_mul._native included
    "native",  # the C kernel, its header and pinned flags
    "setup.py",
    "assurance/sonnx_mul_assurance",
    "pyproject.toml",
    "requirements/dev.lock",
)
"""Files and directories (recursively) every claim depends on; each evidence
source adds its own (``protocol.Source.claims``, joined by ``protocol.claim_paths``)."""

WHY3_DATADIR = Path("/usr/share/why3")
WHY3_THEORIES: tuple[str, ...] = ("stdlib/ieee_float.mlw", "stdlib/bv.mlw")


def claim_files(root: Path, paths: tuple[str, ...]) -> dict[str, str]:
    """SHA-256 of every file under ``paths`` (relative to ``root``), by relative path."""
    out: dict[str, str] = {}
    for rel in paths:
        for path in walk(root / rel):
            out[path.relative_to(root).as_posix()] = sha256(path)
    return out


def _version(exe: str) -> str | None:
    try:
        done = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in (done.stdout or done.stderr).splitlines():
        if re.search(r"\d+\.\d+", line):
            return line.strip()
    return None


def prover_executables(root: Path) -> dict[str, str]:
    """Shortcut -> executable of every prover of ``proofs/why3.conf.in``, plus why3, gappa
    and gcc (which compiled the native kernel that runs)."""
    found: dict[str, str] = {}
    conf = root / "proofs" / "why3.conf.in"
    z3_pypi = Path(sys.executable).parent / "z3"
    if conf.is_file():
        for section in conf.read_text(encoding="utf-8").split("[prover]")[1:]:
            cmd = re.search(r'^command = "([^"\s]+)', section, re.M)  # not the closing quote
            short = re.search(r'^shortcut = "([^"]+)"', section, re.M)
            if cmd and short:
                exe = cmd.group(1).replace("@Z3_PYPI@", str(z3_pypi))
                found[short.group(1)] = exe
    for name in ("why3", "gappa", "gcc"):
        exe = shutil.which(name)
        if exe:
            found[name] = exe
    return found


def binaries(root: Path, probe: bool = True) -> list[dict[str, Any]]:
    """The tools' executables: shortcut(s), path, resolved path, SHA-256, version.

    A missing executable is listed with ``sha256: None`` (shown as absent).
    """
    by_path: dict[str, dict[str, Any]] = {}
    for short, exe in sorted(prover_executables(root).items()):
        entry = by_path.get(exe)
        if entry is not None:
            entry["names"].append(short)
            continue
        resolved = Path(exe).resolve() if Path(exe).exists() else None
        entry = {
            "names": [short],
            "path": exe,
            "resolved": str(resolved) if resolved else None,
            "sha256": sha256(resolved) if resolved and resolved.is_file() else None,
            "version": _version(exe) if probe and resolved else None,
        }
        by_path[exe] = entry
    return list(by_path.values())


def why3_library(root: Path, datadir: Path = WHY3_DATADIR) -> dict[str, str | None]:
    """SHA-256 of the Why3 theories and driver files the project's drivers use.

    Driver imports are followed transitively; imports of the project's own
    driver directory are hashed with the claim files and not repeated here.
    """
    drivers = root / "proofs" / "drivers"
    todo = sorted(drivers.iterdir()) if drivers.is_dir() else []
    conf = root / "proofs" / "why3.conf.in"
    if conf.is_file():
        text = conf.read_text(encoding="utf-8")
        todo += [Path(n) for n in re.findall(r'^driver = "(/[^"]+)"', text, re.M)]
    wanted: set[Path] = {datadir / t for t in WHY3_THEORIES}
    seen: set[Path] = set()
    while todo:
        drv = todo.pop()
        if drv in seen:
            continue
        seen.add(drv)
        if not drv.is_relative_to(drivers):
            wanted.add(drv)  # listed even when missing: shown as absent
        if not drv.is_file():
            continue
        for name in re.findall(r'import\s+"([^"]+)"', drv.read_text(encoding="utf-8")):
            path = Path(name)
            if not path.is_absolute():
                path = drv.parent / name
                if not path.is_file():
                    path = datadir / "drivers" / name
            todo.append(path)
    return {str(p): (sha256(p) if p.is_file() else None) for p in sorted(wanted)}
