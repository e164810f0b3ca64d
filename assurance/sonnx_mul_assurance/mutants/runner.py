"""The runner: each mutant in a private copy of the repository, against its file's
fast checks, and the verdict.

``PYTHONPATH`` points at the copy's ``src`` and ``assurance`` (checked). The checks:
the target's tests (``pytest -x``) for Python, ``tables check`` plus the Why3 proof
of the mutated module for WhyML (for a theory whose goals are proved in Coq,
:data:`..why3.coq.THEORIES`, the Coq check of every goal instead: the SMT provers
prove none of them; for the generated ``why3/profile.mlw``, the tables check
alone: it has no goal), the glue's tests for the glue. For the glue, each
copy builds the extension once (:mod:`..c.glue_build`; the copy's
``sonnx_mul._native`` is then the one imported, checked), and each mutant
recompiles the glue alone and relinks; the unmutated module is put back after it.

A failing check kills a mutant (a crash too); a check running past the time limit
counts as killed ("timeout") only when the unmutated check takes at most half the
limit (:data:`TIMEOUT_MARGIN`), before the run (it refuses to start otherwise) and
again right after the timeout (else the mutant is a survivor). A glue mutant that
does not compile is "invalid" (out of the kill rate). A survivor listed in
``proofs/mutants-equivalent.json`` is "equivalent"."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue

from sonnx_mul_assurance.c import glue_build
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.mutants.mutant import Mutant, Outcome
from sonnx_mul_assurance.mutants.mutators.whyml import module_of
from sonnx_mul_assurance.mutants.targets import DEFAULT_PY_TIMEOUT, Targets
from sonnx_mul_assurance.why3 import coq
from sonnx_mul_assurance.why3.config import COQ_REALIZATIONS
from sonnx_mul_assurance.why3.tables import GENERATED

COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "proofs/out", "__pycache__", ".*_cache", "*.egg-info"
)
MLW_TIMEOUT = 600
COQ_TIMEOUT = 600
C_TIMEOUT = 300

TIMEOUT_MARGIN = 2
"""A check's unmutated run may take at most its time limit / this. A mutant whose check
then runs past the limit took more than this many times as long: a hang or a slow-down it
planted (a walk made quadratic, a loop that never ends), counted "timeout" among the dead.
With a baseline closer to the limit, a timeout would be the machine's load, not the
mutant's doing: the run refuses to start instead of counting such timeouts as kills."""

Check = tuple[list[str], int]  # a command and its time limit


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int) -> tuple[str, str]:
    """("pass" | "fail" | "timeout", tail of the output)."""
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return ("pass" if proc.returncode == 0 else "fail"), " | ".join(tail)[-300:]


def baseline_refusal(verdict: str, tail: str, seconds: float, timeout: int) -> str | None:
    """Why the unmutated run of a check cannot stand as the baseline (None: it can)."""
    if verdict == "timeout":
        return f"timed out after {timeout} s (choose faster tests for the file)"
    if verdict != "pass":
        return f"fails: {tail}"
    if seconds * TIMEOUT_MARGIN > timeout:
        return (
            f"took {seconds:.0f} s, more than 1/{TIMEOUT_MARGIN} of its {timeout} s limit: "
            "a mutant's timeout would not show a hang (choose faster tests for the file)"
        )
    return None


def _judge_timeout(copy: Path, argv: list[str], timeout: int) -> tuple[schema.MutantStatus, str]:
    """A mutant's check timed out: the unmutated check (the copy is restored) runs again
    now. Within half the limit, the mutant took more than twice as long under the same
    load: a kill ("timeout"). Slower (the machine's load grew since the baseline), the
    timeout says nothing of the mutant: it is a survivor, which fails the run until it
    is run again on a quieter machine (``--key``)."""
    began = time.monotonic()
    verdict, tail = _run(argv, copy, _env(copy), timeout)
    return timeout_verdict(verdict, tail, time.monotonic() - began, timeout)


def timeout_verdict(
    verdict: str, tail: str, seconds: float, timeout: int
) -> tuple[schema.MutantStatus, str]:
    """The status of a timed-out mutant given the unmutated check's run just after it."""
    refusal = baseline_refusal(verdict, tail, seconds, timeout)
    if refusal is None:
        return "timeout", f"the unmutated check then took {seconds:.0f} s of its {timeout} s"
    return "survived", f"timed out, but the unmutated check then {refusal}: not a kill"


def checks_for(mutant_file: str, module: str | None, targets: Targets) -> list[Check]:
    """The checks that must kill a mutant of ``mutant_file`` (of ``module``, for WhyML)."""
    python = sys.executable
    pytest = [python, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider"]
    if mutant_file.endswith(".py"):
        target = targets.python[mutant_file]
        return [([*pytest, *target.tests], target.timeout)]
    if mutant_file == targets.glue.file:  # run on the module rebuilt from the mutated glue
        return [([*pytest, *targets.glue.tests], C_TIMEOUT)]
    tables = ([python, "-m", "sonnx_mul_assurance.why3.tables", "check"], DEFAULT_PY_TIMEOUT)
    if mutant_file == GENERATED.as_posix():  # any change differs from what the registry generates
        return [tables]
    if mutant_file in {theory.as_posix() for theory in coq.THEORIES}:
        return [tables, ([python, "-m", "sonnx_mul_assurance.why3.coq", "check"], COQ_TIMEOUT)]
    modules = [module] if module else None
    prove = (
        "import sys; from pathlib import Path; "
        "from sonnx_mul_assurance.why3.driver import run_check; "
        f"sys.exit(run_check(Path('.'), [{mutant_file!r}], modules={modules!r}))"
    )
    return [tables, ([python, "-c", prove], MLW_TIMEOUT)]


def _env(copy: Path) -> dict[str, str]:
    """The copy's product and tooling first on the path (before the editable installs)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "src"), str(copy / "assurance")])
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def _make_copy(root: Path, into: Path, glue: bool = False) -> glue_build.GlueBuild | None:
    """A private copy of ``root`` at ``into``; with ``glue``, the extension built there
    (its build, for the glue's mutants). Checks that the copy's packages (and then its
    extension) are the ones its checks import."""
    shutil.copytree(root, into, ignore=COPY_IGNORE)
    # build/ is not copied; the Coq check reads Why3's compiled Coq realizations
    # there (built by make provers from Debian's sources, never mutated)
    if (root / COQ_REALIZATIONS).is_dir():
        (into / COQ_REALIZATIONS).parent.mkdir(parents=True, exist_ok=True)
        (into / COQ_REALIZATIONS).symlink_to((root / COQ_REALIZATIONS).resolve())
    build = glue_build.prepare(into) if glue else None
    modules = ["sonnx_mul", "sonnx_mul_assurance.report", *(["sonnx_mul._native"] if glue else [])]
    code = f"import {', '.join(modules)}; " + "; ".join(f"print({m}.__file__)" for m in modules)
    probe = subprocess.run(
        [sys.executable, "-c", code],
        cwd=into, env=_env(into), capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not all(line.startswith(str(into)) for line in probe.stdout.split()):
        raise RuntimeError(f"the copy's packages are not the ones imported: {probe.stdout}")
    return build


def run_mutant(
    copy: Path,
    mutant: Mutant,
    equivalent: dict[str, str],
    targets: Targets,
    glue: glue_build.GlueBuild | None = None,
) -> Outcome:
    """Plant ``mutant`` in ``copy``, run its checks, restore the copy. A mutant of the
    glue is compiled first (``glue``: the copy's build): one that does not compile is
    "invalid"; the module built from the unmutated glue is put back afterwards."""
    path = copy / mutant.file
    original = path.read_text()
    start = time.monotonic()
    status: schema.MutantStatus = "survived"
    detail = ""
    timed_out: Check | None = None  # the check that ran past its limit
    is_glue = mutant.file == targets.glue.file
    try:
        path.write_text(mutant.apply(original))
        module = module_of(original, mutant.start) if mutant.file.endswith(".mlw") else None
        built = True
        if is_glue:
            if glue is None:
                raise RuntimeError(f"{mutant.file}: a mutant of the glue needs the copy's build")
            built, detail = glue.rebuild()
            status = "survived" if built else "invalid"
        for argv, timeout in checks_for(mutant.file, module, targets) if built else []:
            verdict, tail = _run(argv, copy, _env(copy), timeout)
            if verdict != "pass":
                status, detail = ("timeout" if verdict == "timeout" else "killed"), tail
                timed_out = (argv, timeout) if verdict == "timeout" else None
                break
    finally:
        path.write_text(original)
        if is_glue and glue is not None:
            glue.restore()
    if timed_out is not None:
        status, detail = _judge_timeout(copy, *timed_out)
    if status == "survived" and mutant.key in equivalent:
        status, detail = "equivalent", equivalent[mutant.key]
    return Outcome(
        mutant.key, mutant.file, mutant.line, mutant.original, mutant.replacement,
        mutant.context, status, round(time.monotonic() - start, 1), detail,
    )  # fmt: skip


def run_all(
    root: Path,
    mutants: list[Mutant],
    targets: Targets,
    equivalent: dict[str, str],
    jobs: int,
    tmp: Path,
    progress: Callable[[str], None] = print,
) -> list[Outcome] | str:
    """Every mutant's outcome, ``jobs`` at a time, each job in its copy of ``root``
    under ``tmp``; or why the run refused to start (an unmutated file's checks do not
    pass within half their limit)."""
    start = time.monotonic()
    copies: Queue[Path] = Queue()
    files = sorted({m.file for m in mutants})
    builds: dict[Path, glue_build.GlueBuild | None] = {}
    for j in range(jobs):
        copy = tmp / f"copy{j}"
        builds[copy] = _make_copy(root, copy, glue=targets.glue.file in files)
        copies.put(copy)
    baseline_copy = copies.get()
    baseline: dict[tuple[str, ...], tuple[str, int]] = {}
    for file in files:  # the unmutated files must pass their checks (each set once)
        for argv_, timeout in checks_for(file, None, targets):
            baseline.setdefault(tuple(argv_), (file, timeout))
    for argv_t, (file, timeout) in baseline.items():
        began = time.monotonic()
        verdict, tail = _run(list(argv_t), baseline_copy, _env(baseline_copy), timeout)
        refusal = baseline_refusal(verdict, tail, time.monotonic() - began, timeout)
        if refusal is not None:
            return f"baseline of {file}: {refusal}"
    copies.put(baseline_copy)
    progress(f"{len(mutants)} mutants; baseline passes ({time.monotonic() - start:.0f} s)")

    def work(mutant: Mutant) -> Outcome:
        copy = copies.get()
        try:
            outcome = run_mutant(copy, mutant, equivalent, targets, builds[copy])
        finally:
            copies.put(copy)
        where = f"{mutant.file}:{mutant.line}"
        change = f"{mutant.original!r} -> {mutant.replacement!r}"
        progress(f"{outcome.status:<10} {outcome.seconds:6.1f}s {where} {change} [{mutant.key}]")
        return outcome

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(work, mutants))
