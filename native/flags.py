"""The kernel's compile flags for one compiler: native/flags.mk's table, selected;
and the ISA variants with their hardware loops: native/isa.toml's table, read.

flags.mk holds the flags (plain ``NAME = words`` lines); this module picks
the rows for a compiler from what the compiler says of itself: its target
(the first word of ``CC -dumpmachine``: ``x86_64``, ``i686``, ``aarch64``,
``arm``, ``riscv64``) and its identity (``__clang__`` defined or not).
Standard library only: setup.py (the Python build), the Makefile
(``make c-kernel``: ``python3 native/flags.py CC``) and the assurance
tooling all call it, so every build takes the same flags.

    python3 native/flags.py gcc                  # the flags, one line
    python3 native/flags.py --target aarch64-linux-gnu-gcc   # the target key
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

FLAGS_FILE = Path(__file__).resolve().parent / "flags.mk"
ISA_FILE = Path(__file__).resolve().parent / "isa.toml"


class UnsupportedTarget(Exception):
    """The compiler targets an architecture flags.mk has no row for."""


def table(path: Path = FLAGS_FILE) -> dict[str, list[str]]:
    """Every ``NAME = words`` line of flags.mk (its only syntax), split on whitespace."""
    rows: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            rows[key.strip()] = shlex.split(value)
    return rows


def target(cc: str) -> str:
    """The architecture ``cc`` compiles for: the first word of ``cc -dumpmachine``."""
    machine = subprocess.run(
        [*shlex.split(cc), "-dumpmachine"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return machine.split("-", 1)[0]


def is_clang(cc: str) -> bool:
    """True when ``cc`` is clang (it predefines ``__clang__``)."""
    macros = subprocess.run(
        [*shlex.split(cc), "-dM", "-E", "-x", "c", "-"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return "#define __clang__ " in macros


def cflags(cc: str, path: Path = FLAGS_FILE) -> list[str]:
    """SONNX_CFLAGS, then the compiler's row, then the target's row.

    Raises UnsupportedTarget when flags.mk lists no row for the target:
    a kernel built without its target's flags is not the one checked.
    """
    rows = table(path)
    arch = target(cc)
    if arch not in rows["SONNX_TARGETS"]:
        raise UnsupportedTarget(
            f"{cc} targets {arch}; native/flags.mk has rows for {' '.join(rows['SONNX_TARGETS'])}"
        )
    compiler = "CLANG" if is_clang(cc) else "GCC"
    return [
        *rows["SONNX_CFLAGS"],
        *rows[f"SONNX_CFLAGS_{compiler}"],
        *rows[f"SONNX_CFLAGS_ARCH_{arch.upper()}"],
    ]


class Loop(NamedTuple):
    """A hardware loop of isa.toml: compiled from ``source`` with its variant's cflags
    plus its own, it stands in for the proved ``stands_in_for`` on ``kinds``."""

    name: str
    about: str
    source: str
    function: str
    cflags: tuple[str, ...]
    cpu: tuple[str, ...]
    stands_in_for: tuple[str, ...]
    kinds: tuple[str, ...]


class Variant(NamedTuple):
    """An ISA variant of isa.toml: the proved sources compiled with flags.mk's flags
    plus ``cflags``; ``cpu`` the features that code needs."""

    name: str
    about: str
    cflags: tuple[str, ...]
    cpu: tuple[str, ...]
    loops: tuple[Loop, ...]
    checked_from: str | None
    checked_kinds: tuple[str, ...]

    @property
    def runs_on(self) -> tuple[str, ...]:
        """The CPU features this variant needs to run: its own and its loops'."""
        return tuple(dict.fromkeys([*self.cpu, *(f for loop in self.loops for f in loop.cpu)]))

    def loop_cflags(self, loop: Loop) -> tuple[str, ...]:
        """The extra flags ``loop`` is compiled with in this variant."""
        return (*self.cflags, *loop.cflags)


def variants(path: Path = ISA_FILE) -> tuple[Variant, ...]:
    """The ISA variants of isa.toml in its order: the reference (the proved build
    as such) first, then the others, each with its hardware loops."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    loops = {
        row["name"]: Loop(
            row["name"],
            row["about"],
            row["source"],
            row["function"],
            tuple(row["cflags"]),
            tuple(row["cpu"]),
            tuple(row["stands_in_for"]),
            tuple(row["kinds"]),
        )
        for row in data["loop"]
    }
    return tuple(
        Variant(
            row["name"],
            row["about"],
            tuple(row["cflags"]),
            tuple(row["cpu"]),
            tuple(loops[name] for name in row["loops"]),
            row.get("checked_from"),
            tuple(row.get("checked_kinds", ())),
        )
        for row in data["variant"]
    )


def hardware_loops(path: Path = ISA_FILE) -> tuple[tuple[Variant, Loop], ...]:
    """(variant, loop) of every hardware loop, in isa.toml's order of the loops."""
    owners = {loop.name: v for v in variants(path) for loop in v.loops}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(
        (owners[row["name"]], loop)
        for row in data["loop"]
        for loop in owners[row["name"]].loops
        if loop.name == row["name"]
    )


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--target":
        print(target(argv[1]))
        return 0
    if len(argv) != 1:
        print("usage: flags.py CC | flags.py --target CC", file=sys.stderr)
        return 2
    try:
        print(" ".join(cflags(argv[0])))
    except UnsupportedTarget as error:
        print(f"native/flags.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
