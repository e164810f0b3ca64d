"""The kernel's pinned flags, as every build takes them: native/flags.py over native/flags.mk;
and the ISA variants with their hardware loops, native/isa.toml's table.

The tooling loads the checkout's own ``native/flags.py`` (standard library
only; setup.py and the Makefile run the same file), so a harness built here
is compiled exactly as the extension and ``make c-kernel`` are.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any


def selector(root: Path) -> ModuleType:
    """The checkout's native/flags.py, loaded as a module."""
    path = root / "native" / "flags.py"
    spec = importlib.util.spec_from_file_location("sonnx_mul_native_flags", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(root: Path) -> dict[str, list[str]]:
    """Every ``NAME = words`` row of native/flags.mk."""
    rows: dict[str, list[str]] = selector(root).table(root / "native" / "flags.mk")
    return rows


def cflags(root: Path, cc: str = "gcc") -> list[str]:
    """The kernel's compile flags for ``cc``: SONNX_CFLAGS, the compiler's row, the target's row."""
    flags: list[str] = selector(root).cflags(cc, root / "native" / "flags.mk")
    return flags


def target(root: Path, cc: str) -> str:
    """The architecture ``cc`` compiles for (the first word of ``cc -dumpmachine``)."""
    arch: str = selector(root).target(cc)
    return arch


def variants(root: Path) -> tuple[Any, ...]:
    """native/isa.toml's ISA variants, the reference first (native/flags.py's ``Variant``)."""
    found: tuple[Any, ...] = selector(root).variants(root / "native" / "isa.toml")
    return found


def hardware_loops(root: Path) -> tuple[tuple[Any, Any], ...]:
    """(variant, loop) of every hardware loop of native/isa.toml (``Variant``, ``Loop``)."""
    found: tuple[tuple[Any, Any], ...] = selector(root).hardware_loops(root / "native" / "isa.toml")
    return found
