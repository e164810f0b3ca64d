"""What an evidence file is bound to: the SHA-256 of every file its verdict depends on.

A producer (Why3, WP, CrossHair, MISRA) lists the files its verdict depends
on from what it already reads (its manifest, the files the manifest names,
the drivers and configuration, its own code) and records :func:`digest` of
them in the evidence's ``inputs``.  The gate lists them again on the tree
with the same function and refuses the evidence when :func:`stale` finds a
difference: the evidence is then about other files than the tree's.

Paths inside ``root`` are recorded relative to it, others (the Why3 library
drivers, the installed tooling outside the tree) as absolute paths.  A file
that does not exist is recorded as :data:`ABSENT`, so that it appearing
later is a difference too.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib.machinery import ModuleSpec
from pathlib import Path

from sonnx_mul.digest import sha256

ABSENT = "absent"
"""The digest recorded for a file that does not exist."""

STALE_SHOWN = 8
"""How many differing files a refusal names (then it counts the rest)."""


def shown(path: Path, root: Path) -> str:
    """``path`` as evidence records it: relative to ``root`` inside it, else absolute."""
    resolved = path.resolve()
    top = root.resolve()
    return resolved.relative_to(top).as_posix() if resolved.is_relative_to(top) else str(resolved)


def digest(root: Path, paths: Iterable[Path]) -> dict[str, str]:
    """SHA-256 of each file of ``paths`` (absolute, or relative to ``root``),
    keyed as :func:`shown` names them; :data:`ABSENT` for a missing file."""
    out: dict[str, str] = {}
    for path in paths:
        full = path if path.is_absolute() else root / path
        out[shown(full, root)] = sha256(full) if full.is_file() else ABSENT
    return dict(sorted(out.items()))


def stale(evidence: str, recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The gate's refusals of ``evidence`` (its file name) when the files it
    recorded (``recorded``) are not the tree's now (``now``, the same list
    made on the tree): each changed, appeared or vanished file is named."""
    if not recorded:
        return [f"evidence file {evidence} records no input hashes: it is bound to no tree"]
    changed = sorted(p for p in set(recorded) & set(now) if recorded[p] != now[p])
    unrecorded = sorted(set(now) - set(recorded))
    gone = sorted(set(recorded) - set(now))
    lines = (
        [f"{p} changed" for p in changed]
        + [f"{p} is an input the run did not record" for p in unrecorded]
        + [f"{p} was an input and is no longer one" for p in gone]
    )
    if not lines:
        return []
    more = f" (and {len(lines) - STALE_SHOWN} more)" if len(lines) > STALE_SHOWN else ""
    return [
        f"evidence file {evidence} is stale: {'; '.join(lines[:STALE_SHOWN])}{more}"
        " since its run (run its producer again)"
    ]


def changed_during(
    evidence: str, root: Path, recorded: Mapping[str, str], paths: Iterable[Path]
) -> list[str]:
    """A producer's errors when the files its run started from (``recorded``:
    :func:`digest` of them then) are not those of ``paths`` now: the record
    says what was proved or analysed, and files edited meanwhile were not.
    ``evidence``: the file's name (:mod:`.files`), for the message."""
    now = digest(root, paths)
    return [f"inputs changed during the run: {line}" for line in stale(evidence, recorded, now)]


def duplicates(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    return sorted(n for n, k in Counter(names).items() if k > 1)


def named(names: Iterable[str], limit: int = 3) -> str:
    """A few of ``names`` for a refusal line, and how many there are."""
    listed = sorted(names)
    head = ", ".join(listed[:limit])
    return head + (f" ... ({len(listed)} in all)" if len(listed) > limit else "")


def module_file(name: str) -> Path | None:
    """The file the module ``name`` is loaded from (None: not found, or built in)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin)


_Stamp = tuple[tuple[str, int, int], ...]
_CLOSURES: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[list[Path], _Stamp]] = {}


def _stamp(files: Iterable[Path]) -> _Stamp:
    stats = [(str(f), f.stat()) for f in files if f.exists()]
    return tuple((name, st.st_mtime_ns, st.st_size) for name, st in stats)


def import_closure(modules: Iterable[str], packages: Iterable[str]) -> list[Path]:
    """:func:`find_closure`, remembered while none of its files changes (the
    gate lists the same closures for every report a process builds)."""
    key = (tuple(modules), tuple(sorted(packages)))
    known = _CLOSURES.get(key)
    if known is not None and _stamp(known[0]) == known[1]:
        return list(known[0])
    files = find_closure(*key)
    _CLOSURES[key] = (files, _stamp(files))
    return list(files)


def own_code(spec: ModuleSpec | None, name: str) -> list[Path]:
    """The files of a producer (its ``__spec__`` and ``__name__``) and of the
    tooling it imports.  Found by the module's real name: run as ``python
    -m``, a module's ``__name__`` is ``__main__``, whose closure is not the
    one the gate lists when it imports the module."""
    return import_closure([spec.name if spec is not None else name], ["sonnx_mul_assurance"])


def find_closure(modules: Iterable[str], packages: Iterable[str]) -> list[Path]:
    """The files of ``modules`` and of every module of ``packages`` (top-level
    names) they import, transitively: each import statement anywhere in a
    file (in functions too: a conservative reading), every enclosing package's
    ``__init__``, and ``from P import x`` as module ``P.x`` when that is one.
    Found through the import system, so the files are the ones that run."""
    tops = set(packages)
    todo = list(modules)
    seen: set[str] = set()
    files: set[Path] = set()

    def want(name: str) -> None:
        parts = name.split(".")
        if parts[0] not in tops:
            return
        for cut in range(1, len(parts) + 1):  # the packages on the way run their __init__
            prefix = ".".join(parts[:cut])
            if prefix not in seen:
                seen.add(prefix)
                todo.append(prefix)

    for name in list(todo):
        want(name)
    while todo:
        name = todo.pop()
        path = module_file(name)
        if path is None:
            continue
        files.add(path)
        if path.suffix != ".py":
            continue  # an extension module: its file is hashed, it has no source to read
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    want(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                want(base)
                for alias in node.names:
                    inside = base.split(".")[0] in tops
                    if inside and module_file(f"{base}.{alias.name}") is not None:
                        want(f"{base}.{alias.name}")
    return sorted(files)
