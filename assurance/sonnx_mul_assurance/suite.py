"""The test suite as ``make test`` runs it, and its reuse by ``make prove``.

``make test`` runs the whole suite (``-n 2 --dist loadfile``) through
:func:`run_suite`, its JUnit XML into ``proofs/out/suite/pytest.xml``.  When
the run passed, nothing narrowed it, and the tree's :func:`fingerprint` was
the same before and after it, a :class:`~..schema.SuiteRun` record goes
beside the JUnit (``run.json``).  ``make prove``'s tests step
(:func:`prove_step`) takes that JUnit as its evidence when the record's
fingerprint is the tree's now and the JUnit is the one recorded; otherwise
it runs the suite itself.  So the same tests on the same tree, interpreter,
packages and tools do not run twice (``.ci/run``: ``make test``, then
``make prove``), and a test run of any other tree is never evidence.

The fingerprint covers what pytest runs, listed by git or not: an ignored
test file is collected and an ignored module imported all the same.  (The
other way, pytest collecting only the files git lists, would still let a
listed test import an ignored module: it would need an import hook too.)

    python -m sonnx_mul_assurance.suite test [PYTEST ARGS]   (make test)
    python -m sonnx_mul_assurance.suite prove JUNIT          (make prove)
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from sonnx_mul.digest import sha256, walk
from sonnx_mul_assurance.evidence import files, schema
from sonnx_mul_assurance.report.hashes import binaries

RECORD = files.evidence_path(files.SUITE_RUN)
RUN_DIR = RECORD.parent
JUNIT = RUN_DIR / files.PYTEST
ORIGIN = schema.SUITE_ORIGIN

PYTEST_ARGS: tuple[str, ...] = ("-m", "pytest", "-n", "2", "--dist", "loadfile", "-q")
ENV_PREFIXES = ("SONNX_", "HYPOTHESIS_", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
"""Environment variables the suite reads (the ISA variant, Hypothesis' profile, pytest's)."""


PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
"""Files at the top of the tree pytest reads its configuration from."""
CACHES = frozenset({"__pycache__", ".pytest_cache"})
"""Folders of what Python and pytest write themselves (the byte code of the sources)."""
BUILD_OUTPUT = "build"
"""The top folder the project's builds write into (git ignores it). Tests write
there too (the probes' libraries under ``build/bench/``, built from tracked
sources the fingerprint covers): counting it would change the fingerprint
during every run, so that no run could ever be reused."""
MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())


def testpaths(root: Path) -> tuple[str, ...]:
    """The folders pytest collects from, as ``pyproject.toml`` names them
    (none: pytest collects test modules anywhere, which :func:`reached`'s
    module rule covers)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return ()
    options = tomllib.loads(path.read_text(encoding="utf-8"))
    ini = options.get("tool", {}).get("pytest", {}).get("ini_options", {})
    return tuple(str(p).strip("/") for p in ini.get("testpaths", []))


def reached(rel: str, collected: Sequence[str]) -> bool:
    """``rel`` (a file, from the top of the tree) is one pytest may collect or
    import: any file under a folder it collects from (the tests, their
    ``conftest.py``, the data they read); a module (``.py``, byte code,
    extension) at a path of identifiers, which ``python -m pytest`` can
    import from the top of the tree, ``src/``, ``assurance/`` or a test
    folder (namespace packages need no ``__init__``); pytest's configuration."""
    parts = rel.split("/")
    if CACHES & set(parts[:-1]) or parts[0] == BUILD_OUTPUT:
        return False
    if any(rel.startswith(folder + "/") for folder in collected):
        return True
    if len(parts) == 1 and parts[0] in PYTEST_CONFIGS:
        return True
    return rel.endswith(MODULE_SUFFIXES) and all(part.isidentifier() for part in parts[:-1])


def ignored_reached(root: Path) -> set[str] | None:
    """The files git ignores (``.gitignore``, ``.git/info/exclude``, the global
    excludes) that pytest may collect or import (:func:`reached`); None when
    git cannot list them.  Git lists a wholly ignored folder as one entry:
    it is walked, but for the folders no such file can be in (``.venv``, a
    copy of the tree under ``build/debian-python``)."""
    argv = ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    listed = _output(argv, root)
    if listed is None:
        return None
    collected = testpaths(root)
    found: set[str] = set()
    for entry in (e for e in listed.split("\0") if e):
        files = _below(root, entry.rstrip("/"), collected) if entry.endswith("/") else [entry]
        found |= {rel for rel in files if reached(rel, collected)}
    return found


def _below(root: Path, folder: str, collected: Sequence[str]) -> Iterator[str]:
    """The files under ``folder`` (from the top of the tree), not descending
    into caches nor, outside the collected folders, into a folder whose name
    is no identifier (nothing below it can be imported)."""
    for here, dirs, names in os.walk(root / folder):
        rel = Path(here).relative_to(root).as_posix()
        inside = any(rel == c or rel.startswith(c + "/") for c in collected)
        dirs[:] = [d for d in dirs if d not in CACHES and (inside or d.isidentifier())]
        if inside or all(part.isidentifier() for part in rel.split("/")):
            yield from (f"{rel}/{name}" for name in names)


def fingerprint(root: Path) -> str | None:
    """SHA-256 of everything a test verdict depends on, or None outside a git work tree.

    Every file git lists (tracked, and untracked unless ignored) by content;
    every file git ignores that pytest may collect or import
    (:func:`ignored_reached`: an ignored test file is run, an ignored module
    imported, whatever git says of them); the files under ``src/`` (the
    built extension is ignored by git); the interpreter, every installed
    distribution, every Debian package (why3, the provers, Frama-C, the
    compilers, qemu), the provers' executables and the environment variables
    the suite reads.
    """
    top = _output(["git", "rev-parse", "--show-toplevel"], root)
    if top is None or Path(top.strip()).resolve() != root.resolve():
        return None
    listed = _output(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    ignored = ignored_reached(root)
    if listed is None or ignored is None:
        return None
    files = {rel for rel in listed.split("\0") if rel} | ignored
    files |= {p.relative_to(root).as_posix() for p in walk(root / "src")}
    contents = {rel: (sha256(root / rel) if (root / rel).is_file() else None) for rel in files}
    state = {
        "files": dict(sorted(contents.items())),
        "python": [sys.version, str(Path(sys.executable).resolve()), platform.platform()],
        "distributions": sorted(
            f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
        ),
        "debian": _output(["dpkg-query", "-W", "-f", "${Package}=${Version}\n"], root),
        "tools": [(b["path"], b["sha256"]) for b in binaries(root, probe=False)],
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)},
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def _output(argv: Sequence[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _pytest(root: Path, junit: Path, args: Sequence[str]) -> int:
    argv = [sys.executable, *PYTEST_ARGS, f"--junitxml={junit}", *args]
    return subprocess.run(argv, cwd=root, check=False).returncode


def run_suite(root: Path, args: Sequence[str] = ()) -> int:
    """Run the suite (``args`` narrow it); record a whole passing run of an
    unchanged tree.  Returns pytest's exit code."""
    record = root / RECORD
    record.unlink(missing_ok=True)  # no record survives a later run
    before = fingerprint(root)
    start = time.perf_counter()
    code = _pytest(root, root / JUNIT, args)
    seconds = time.perf_counter() - start
    if code != 0 or args:
        return code
    if before is None or fingerprint(root) != before:
        print("suite: the tree changed during the run (or is no git work tree): not recorded")
        return code
    run = schema.SuiteRun(
        fingerprint=before,
        argv=[*PYTEST_ARGS, f"--junitxml={JUNIT}"],
        finished=datetime.now(UTC).isoformat(timespec="seconds"),
        seconds=round(seconds, 1),
        junit_sha256=sha256(root / JUNIT),
        environment=schema.junit_environment(root / JUNIT),
    )
    schema.dump(run, record)
    return code


def reusable(root: Path) -> tuple[schema.SuiteRun | None, str]:
    """make test's recorded run when it is evidence for the tree now, and why (not)."""
    path = root / RECORD
    if not path.is_file():
        return None, "no recorded make test run"
    try:
        run = schema.load(schema.SuiteRun, path)
    except schema.SchemaError as exc:
        return None, f"unreadable record: {exc}"
    if not (root / JUNIT).is_file() or sha256(root / JUNIT) != run.junit_sha256:
        return None, "the recorded run's JUnit XML is missing or not the one it wrote"
    if fingerprint(root) != run.fingerprint:
        return None, "the tree, interpreter, packages or tools changed since the recorded run"
    return run, f"make test's passing run of this tree, finished {run.finished}"


def prove_step(root: Path, junit: Path) -> int:
    """make prove's tests: make test's JUnit when :func:`reusable`, else a run of the suite."""
    origin = junit.parent / ORIGIN
    origin.unlink(missing_ok=True)
    run, why = reusable(root)
    if run is None:
        print(f"suite: running the tests ({why})", flush=True)
        return _pytest(root, junit, ())
    junit.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / JUNIT, junit)
    schema.dump(run, origin)
    print(f"suite: the tests' evidence is {why} ({RECORD}); not run again", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    # every argument after `test` is pytest's, -h included
    sub.add_parser("test", add_help=False, help="run the suite (make test); the rest: pytest's")
    prove = sub.add_parser("prove", help="make prove's tests step")
    prove.add_argument("junit", type=Path, help="the JUnit XML the report reads")
    args, rest = parser.parse_known_args(argv)
    root = Path.cwd()
    if args.command == "test":
        return run_suite(root, rest)
    if rest:
        parser.error(f"unknown arguments: {' '.join(rest)}")
    return prove_step(root, root / args.junit)


if __name__ == "__main__":
    sys.exit(main())
