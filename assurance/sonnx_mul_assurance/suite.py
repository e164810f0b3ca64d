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

    python -m sonnx_mul_assurance.suite test [PYTEST ARGS]   (make test)
    python -m sonnx_mul_assurance.suite prove JUNIT          (make prove)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from sonnx_mul.digest import sha256, walk
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report.hashes import binaries

RUN_DIR = Path("proofs/out/suite")
JUNIT = RUN_DIR / "pytest.xml"
RECORD = RUN_DIR / "run.json"
ORIGIN = schema.SUITE_ORIGIN

PYTEST_ARGS: tuple[str, ...] = ("-m", "pytest", "-n", "2", "--dist", "loadfile", "-q")
ENV_PREFIXES = ("SONNX_", "HYPOTHESIS_", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
"""Environment variables the suite reads (the ISA variant, Hypothesis' profile, pytest's)."""


def fingerprint(root: Path) -> str | None:
    """SHA-256 of everything a test verdict depends on, or None outside a git work tree.

    Every file git lists (tracked, and untracked unless ignored) by content,
    the files under ``src/`` (the built extension is ignored by git), the
    interpreter, every installed distribution, every Debian package (why3,
    the provers, Frama-C, the compilers, qemu), the provers' executables and
    the environment variables the suite reads.
    """
    top = _output(["git", "rev-parse", "--show-toplevel"], root)
    if top is None or Path(top.strip()).resolve() != root.resolve():
        return None
    listed = _output(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    if listed is None:
        return None
    files = {rel for rel in listed.split("\0") if rel}
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
