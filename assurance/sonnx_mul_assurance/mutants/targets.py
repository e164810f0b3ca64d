"""The targets of mutation testing: data kept next to the tests
(``tests/mutation-targets.toml``, its format in its header), read here and checked
against the test tree (:func:`missing`: every file and every ``file::test`` named
exists)."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sonnx_mul_assurance.c import glue_build

TARGETS = Path("tests/mutation-targets.toml")
"""The targets' file, relative to the repository's root."""

DEFAULT_MAX_PY = 25
"""Mutants per Python file when neither its ``max`` nor ``--max-py`` says."""

DEFAULT_PY_TIMEOUT = 300
"""Seconds a Python file's check may run when its ``timeout`` does not say: a mutant
whose check runs longer is a hang (if the unmutated check stays within half of it)."""


class TargetsError(ValueError):
    """The targets' file is not in its format."""


@dataclass(frozen=True)
class PythonTarget:
    tests: tuple[str, ...]  # test files and ``file::test`` selections, sets expanded
    max: int = DEFAULT_MAX_PY
    timeout: int = DEFAULT_PY_TIMEOUT  # seconds


@dataclass(frozen=True)
class GlueTarget:
    file: str
    functions: tuple[str, ...]
    tests: tuple[str, ...]
    max: int


@dataclass(frozen=True)
class Targets:
    sets: Mapping[str, tuple[str, ...]]  # each set's tests, expanded
    python: Mapping[str, PythonTarget]  # in the file's order: the order of the run
    glue: GlueTarget


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TargetsError(f"{where}: a list of strings expected, got {value!r}")
    return tuple(value)


def _table(value: object, keys: set[str] | None, required: set[str], where: str) -> dict[str, Any]:
    """``value``, a table with the ``required`` keys and no other than ``keys`` (None:
    any key)."""
    if not isinstance(value, dict):
        raise TargetsError(f"{where}: a table expected")
    if keys is not None and (unknown := set(value) - keys):
        raise TargetsError(f"{where}: unknown keys {sorted(unknown)}")
    if absent := required - set(value):
        raise TargetsError(f"{where}: missing keys {sorted(absent)}")
    return value


def _count(value: object, where: str, key: str = "max", least: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise TargetsError(f"{where}: {key} must be an integer of at least {least}, got {value!r}")
    return value


def parse(data: Mapping[str, object]) -> Targets:
    """The targets from the TOML's tables; "@NAME" in a list of tests is expanded to
    the set's tests, in place."""
    top = _table(dict(data), {"sets", "python", "glue"}, {"python", "glue"}, "targets")
    raw_sets = _table(top.get("sets", {}), None, set(), "sets")
    sets: dict[str, tuple[str, ...]] = {}

    def expand(tests: tuple[str, ...], where: str, seen: tuple[str, ...] = ()) -> tuple[str, ...]:
        out: list[str] = []
        for test in tests:
            if not test.startswith("@"):
                out.append(test)
                continue
            name = test[1:]
            if name not in raw_sets:
                raise TargetsError(f"{where}: {test} names no set")
            if name in seen:
                raise TargetsError(f"{where}: {test} names itself, through {seen}")
            if name not in sets:
                at = f"sets.{name}"
                body = _table(raw_sets[name], {"tests"}, {"tests"}, at)
                sets[name] = expand(_strings(body["tests"], at), at, (*seen, name))
            out += sets[name]
        if not out:
            raise TargetsError(f"{where}: no test")
        return tuple(out)

    for name in raw_sets:
        expand((f"@{name}",), "sets")
    python: dict[str, PythonTarget] = {}
    for file, entry in _table(top["python"], None, set(), "python").items():
        where = f"python.{file!r}"
        entry = _table(entry, {"tests", "max", "timeout"}, {"tests"}, where)
        tests = expand(_strings(entry["tests"], where), where)
        python[file] = PythonTarget(
            tests,
            _count(entry.get("max", DEFAULT_MAX_PY), where),
            _count(entry.get("timeout", DEFAULT_PY_TIMEOUT), where, "timeout", 1),
        )
    glue_keys = {"file", "functions", "tests", "max"}
    glue = _table(top["glue"], glue_keys, glue_keys, "glue")
    if glue["file"] != glue_build.GLUE:
        raise TargetsError(f"glue: the glue the build knows is {glue_build.GLUE}")
    return Targets(
        MappingProxyType(sets),
        MappingProxyType(python),
        GlueTarget(
            glue_build.GLUE,
            _strings(glue["functions"], "glue.functions"),
            expand(_strings(glue["tests"], "glue.tests"), "glue.tests"),
            _count(glue["max"], "glue"),
        ),
    )


def load(root: Path) -> Targets:
    """The targets of the repository at ``root``."""
    with (root / TARGETS).open("rb") as f:
        return parse(tomllib.load(f))


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def missing_selections(tests: tuple[str, ...], root: Path) -> list[str]:
    """The entries of a target's tests that name no test file, or no test in it
    (``file::name``, read with ast: nothing is run)."""
    found = []
    for entry in tests:
        file, _, name = entry.partition("::")
        path = root / file
        if not path.is_file() or (name and name not in _test_names(path)):
            found.append(entry)
    return found


def missing(targets: Targets, root: Path) -> list[str]:
    """What the targets name that the tree at ``root`` lacks: a target file, a test
    file, a ``file::test`` (a renamed test would make pytest fail the baseline with
    "not found", or worse, select nothing)."""
    found = []
    for file, target in targets.python.items():
        if not (root / file).is_file():
            found.append(f"{file}: no such file")
        found += [f"{file}: {t}" for t in missing_selections(target.tests, root)]
    glue = targets.glue
    if not (root / glue.file).is_file():
        found.append(f"{glue.file}: no such file")
    found += [f"{glue.file}: {t}" for t in missing_selections(glue.tests, root)]
    return found
