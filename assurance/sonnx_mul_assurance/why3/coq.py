"""The Coq proofs of Why3 goals, checked headless by coqc.

Why3 1.5.1 cannot create a proof session without its IDE, so the check does
what a session's replay would, from committed files alone:

1. Why3 prints every goal of each theory of :data:`THEORIES` as a Coq file
   (``why3 prove -D proofs/coq/coq.drv -o DIR``: ieee_float realized by
   Why3's Coq realization, whose ``round`` is Flocq's, subnormals included).
2. Each printed goal must have its committed proof, ``proofs/coq/<same name>``:
   the printed text up to the goal marker, verbatim, then helper lemmas
   (from :data:`HELPERS_MARK`), then
   the marker and the printed statement, verbatim, then the proof.  The
   statement Coq checks is therefore the one Why3 prints today: a theory
   changed without its proof fails here, before coqc.
3. The helpers, the proof and the library of lemmas they require
   (:data:`LIBRARY`) may declare nothing unproved (:data:`FORBIDDEN`),
   and coqc must compile the file with ``Print Assumptions`` of the goal, whose
   axioms must be Coq's classical reals (:data:`COQ_AXIOMS`) or a definition
   Why3 printed as a parameter and its defining axiom (``f`` and ``f'def``,
   from a ``function`` with a body: the theory may declare no axiom or
   abstract function, :data:`THEORY_FORBIDDEN`, and use no other project
   theory, :func:`project_uses`).

``check`` fails on zero goals, on a missing or altered proof, on a committed
proof of no goal Why3 prints (:func:`expected_proofs`) and on any coqc
failure, and writes ``proofs/out/coq.json``
(:class:`~..evidence.schema.CoqEvidence`: each goal's theory, module, proof
file and verdict, tool versions, SHA-256 of every input).  The traceability
report reads it (``report.protocol``): it maps each goal to requirement ids
through the theory's markers, refuses a record whose inputs are not the
tree's (:func:`inputs`) or whose goals are not the committed proofs'
(:func:`expected_proofs`).  ``transplant`` (negative controls only) puts a
committed proof under a changed theory's statement: coqc must then refuse it.

    python -m sonnx_mul_assurance.why3.coq check
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.evidence import binding, files, schema
from sonnx_mul_assurance.why3 import config as prover_config
from sonnx_mul_assurance.why3 import whyml

THEORIES = (Path("why3/f64_round.mlw"),)
"""The theories whose goals are proved in Coq (and only in Coq)."""
PROOF_DIR = Path("proofs/coq")
LIBRARY = PROOF_DIR / "SonnxF64Round.v"
"""The proofs' own Coq lemmas (logical path ``Sonnx.SonnxF64Round``),
compiled first; the goal files ``Require`` it."""
LIBRARY_PREFIX = "Sonnx"
TEMPLATE = PROOF_DIR / "why3-coq.conf.in"
BUILD_SCRIPT = Path("proofs/build-why3-coq.sh")
GOAL_MARK = "(* Why3 goal *)"
HELPERS_MARK = "(* sonnx-mul: helper lemmas"
"""Where a committed proof's own lemmas start (after Why3's declarations)."""
OUT = files.evidence_path(files.COQ)
"""Where the check writes its record, relative to the repository."""
COQC_TIMEOUT = 600
"""Seconds: a hung coqc only (the proof takes a few seconds)."""

FORBIDDEN = re.compile(
    r"\b(Admitted|admit|give_up|Abort|Axiom|Axioms|Parameter|Parameters|Hypothesis|"
    r"Hypotheses|Variable|Variables|Conjecture|Context)\b"
)
"""What a committed helper or proof may not contain: a hole or an assumption."""
THEORY_FORBIDDEN = re.compile(
    r"\b(axiom|val)\b|\bfunction\s+\w+\s*(\([^)]*\)\s*)*:\s*\w+\s*$", re.M
)
"""What a Coq-proved theory may not declare: an axiom, or an abstract symbol
(a ``function`` without body), whose Coq axiom would not be a definition."""
COQ_AXIOMS = frozenset(
    {
        "ClassicalDedekindReals.sig_not_dec",
        "ClassicalDedekindReals.sig_forall_dec",
        "FunctionalExtensionality.functional_extensionality_dep",
        "Classical_Prop.classic",
    }
)
"""The axioms of Coq's standard library the real numbers (and Why3's
realizations) rest on: the only ones a proof may use besides definitions."""


@dataclass(frozen=True)
class Goal:
    """One printed goal of theory ``theory`` (module ``module``) and the
    verdict on its committed proof."""

    name: str  # the Coq file's name (Why3's <file>_<module>_<goal>.v)
    goal: str  # the theorem's name
    errors: tuple[str, ...]
    theory: str  # the theory file, relative to the root (why3/f64_round.mlw)
    module: str  # the goal's module ("": none of the theory's names the file)

    @property
    def proved(self) -> bool:
        return not self.errors


def _run(argv: list[str], cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def print_goals(root: Path, theory: Path, out: Path) -> dict[str, str]:
    """Why3's Coq file of every goal of ``theory`` (file name -> text)."""
    conf = prover_config.render(root, TEMPLATE, TEMPLATE.name.removesuffix(".in"))
    argv = ["why3", "-C", str(conf), "prove", "-D", str(root / prover_config.COQ_DRIVER)]
    argv += ["-L", str(root / "why3"), str(root / theory), "-o", str(out)]
    done = _run(argv, root, 300)
    if done.returncode != 0:
        raise RuntimeError(f"why3 could not print the goals of {theory}: {done.stderr.strip()}")
    return {p.name: p.read_text() for p in sorted(out.glob("*.v"))}


def goal_module(theory: Path, modules: list[str], name: str) -> str:
    """The module of the goal Why3 printed as ``name``
    (``<theory stem>_<module>_<goal>.v``): the longest of the theory's
    ``modules`` that name's prefix spells ("" when none does; module and goal
    names may hold underscores, so the name alone cannot be split)."""
    spelt = [m for m in modules if name.startswith(f"{theory.stem}_{m}_")]
    return max(spelt, key=len, default="")


def split_goal(text: str) -> tuple[str, str, str]:
    """(text before the goal marker, statement up to ``Proof.``, the rest
    from ``Proof.``) of a Coq goal file; ValueError when it is not one."""
    if text.count(GOAL_MARK) != 1:
        raise ValueError(f"expected one {GOAL_MARK!r} marker")
    before, after = text.split(GOAL_MARK)
    statement, sep, proof = after.partition("\nProof.")
    if not sep:
        raise ValueError("no Proof. after the goal")
    return before, statement, "Proof." + proof


def goal_name(statement: str) -> str:
    """The theorem's name in a printed statement."""
    match = re.search(r"^(?:Theorem|Lemma)\s+(\S+)\s*:", statement, re.M)
    if match is None:
        raise ValueError("no Theorem in the statement")
    return match.group(1)


def definitions(printed_prefix: str) -> set[str]:
    """The parameters Why3 printed with a defining axiom (``f`` and
    ``f'def``): definitions, the only non-library axioms a proof may rest on."""
    params = set(re.findall(r"^Parameter\s+([\w']+)\s*:", printed_prefix, re.M))
    defs = set(re.findall(r"^Axiom\s+([\w']+)'def\s*:", printed_prefix, re.M))
    both = params & defs
    return both | {f"{name}'def" for name in both}


def assumptions(coqc_output: str) -> set[str]:
    """The axiom names ``Print Assumptions`` printed (``Closed under the
    global context`` prints none)."""
    if "Closed under the global context" in coqc_output:
        return set()
    _, sep, listed = coqc_output.partition("Axioms:")
    if not sep:
        raise ValueError("no Print Assumptions output")
    return {m.group(1) for m in re.finditer(r"^([^\s:]+)(?:\s*:|$)", listed, re.M)}


def assemble(printed: str, committed: str, transplant: bool) -> tuple[str, list[str]]:
    """The file coqc compiles, and what is wrong with the committed proof:
    the printed prefix and statement with the committed helpers and proof.
    Unless ``transplant``, the committed file must carry the printed prefix
    and statement verbatim (it then is the file compiled)."""
    errors = []
    p_before, p_statement, _ = split_goal(printed)
    c_before, c_statement, c_proof = split_goal(committed)
    start = c_before.find(HELPERS_MARK)
    helpers = c_before[start:] if start >= 0 else ""
    if not transplant:
        if c_before != p_before + helpers:
            errors.append("the committed proof's declarations are not what Why3 prints today")
        if c_statement != p_statement:
            errors.append("the committed proof's statement is not what Why3 prints today")
    for part, text in (("helpers", helpers), ("proof", c_proof)):
        for hit in sorted(set(FORBIDDEN.findall(text))):
            errors.append(f"{hit} in the committed {part}")
    return p_before + helpers + GOAL_MARK + p_statement + "\n" + c_proof, errors


def coqc(root: Path, source: Path, library: Path) -> subprocess.CompletedProcess[str]:
    """coqc on ``source`` (in its folder) with Why3's realizations and the
    compiled library on the load path."""
    realizations = str(root / prover_config.COQ_REALIZATIONS)
    argv = ["coqc", "-q", "-R", realizations, "Why3", "-R", str(library), LIBRARY_PREFIX]
    return _run([*argv, source.name], source.parent, COQC_TIMEOUT)


def compile_library(root: Path, library: Path) -> list[str]:
    """Compile :data:`LIBRARY` into ``library``; what is wrong with it.  A
    ``library`` that already holds this very text compiled (its ``.vo``
    written by coqc from it) is reused, not compiled again."""
    text = (root / LIBRARY).read_text()
    errors = [f"{hit} in {LIBRARY}" for hit in sorted(set(FORBIDDEN.findall(text)))]
    library.mkdir(parents=True, exist_ok=True)
    source = library / LIBRARY.name
    compiled = source.with_suffix(".vo")
    if compiled.exists() and source.exists() and source.read_text() == text:
        return errors
    compiled.unlink(missing_ok=True)  # a failed compilation leaves no stale .vo behind
    source.write_text(text)
    done = coqc(root, source, library)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        errors.append(f"coqc refused {LIBRARY}: " + " ".join(lines[:6]))
    return errors


def check_goal(
    root: Path,
    theory: Path,
    modules: list[str],
    name: str,
    printed: str,
    transplant: bool,
    work: Path,
    library: Path,
) -> Goal:
    """Compile the committed proof of one printed goal of ``theory`` (whose
    modules are ``modules``; see the module doc)."""
    committed_path = root / PROOF_DIR / name
    _, statement, _ = split_goal(printed)
    goal = goal_name(statement)
    where = {"theory": theory.as_posix(), "module": goal_module(theory, modules, name)}
    if not committed_path.exists():
        return Goal(name, goal, (f"no committed proof {PROOF_DIR / name}",), **where)
    text, errors = assemble(printed, committed_path.read_text(), transplant)
    source = work / name
    source.write_text(text + f"\nPrint Assumptions {goal}.\n")
    done = coqc(root, source, library)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        errors.append("coqc refused the proof: " + " ".join(lines[:6]))
    else:
        allowed = COQ_AXIOMS | definitions(split_goal(printed)[0])
        extra = assumptions(done.stdout) - allowed
        if extra:
            errors.append(f"the proof rests on axioms: {', '.join(sorted(extra))}")
    return Goal(name, goal, tuple(errors), **where)


def check(
    root: Path,
    theories: tuple[Path, ...] = THEORIES,
    transplant: bool = False,
    only: frozenset[str] | None = None,
    library: Path | None = None,
) -> list[Goal]:
    """Every goal of ``theories`` and its verdict; ``theories`` relative to
    ``root``.  ``only`` (the negative controls): the goals of these names
    alone are compiled and returned.  ``library``: where the proofs' library
    is compiled (a temporary folder when None; one holding the same library
    compiled is reused, see :func:`compile_library`)."""
    results = []
    with tempfile.TemporaryDirectory(prefix="sonnx-coq-") as tmp:
        library = library if library is not None else Path(tmp) / "library"
        library_errors = compile_library(root, library)
        for theory in theories:
            text = _strip_comments((root / theory).read_text())
            refused = theory_refused(root, theory, text)
            if refused:
                results.append(Goal(str(theory), "-", (refused,), theory.as_posix(), ""))
                continue
            printed_dir = Path(tmp) / "printed" / theory.stem
            printed_dir.mkdir(parents=True)
            work = Path(tmp) / "work" / theory.stem
            work.mkdir(parents=True)
            modules = whyml.module_names((root / theory).read_text())
            for name, printed in print_goals(root, theory, printed_dir).items():
                if only is not None and goal_name(split_goal(printed)[1]) not in only:
                    continue
                goal = check_goal(root, theory, modules, name, printed, transplant, work, library)
                if library_errors:
                    goal = dataclasses.replace(goal, errors=(*library_errors, *goal.errors))
                results.append(goal)
    return results


def theory_refused(root: Path, theory: Path, text: str) -> str | None:
    """Why ``theory`` (its comment-free ``text``) cannot be proved in Coq
    under the check's rules: an axiom or abstract symbol, or a use of another
    project theory (None: neither)."""
    hit = THEORY_FORBIDDEN.search(text)
    if hit:
        return f"{theory} declares {hit.group(0).strip()!r}"
    unchecked = project_uses(root, theory, text)
    if unchecked:
        return f"{theory} uses project theories: {', '.join(unchecked)}"
    return None


def project_uses(root: Path, theory: Path, text: str) -> list[str]:
    """The project files (why3/*.mlw other than ``theory``) the theory uses:
    refused, since the rule on axioms is checked on ``theory`` alone (the
    standard library's axioms are Coq Axioms, which Print Assumptions lists)."""
    used = re.findall(r"\buse\s+(?:export\s+|import\s+)*(\w+)\.", text)
    return sorted(
        {f for f in used if f != theory.stem and (root / theory.parent / f"{f}.mlw").exists()}
    )


def _strip_comments(text: str) -> str:
    return re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)


def inputs(root: Path) -> list[Path]:
    """Every file the verdict depends on: the committed ones (relative to
    ``root``) and this checker's own code (as the other producers list theirs)."""
    listed = set(THEORIES) | {TEMPLATE, prover_config.COQ_DRIVER, BUILD_SCRIPT}
    listed |= {p.relative_to(root) for p in (root / PROOF_DIR).glob("*.v")}
    listed |= {p.relative_to(root) for p in (root / "why3").glob("*.mlw")}
    listed |= set(binding.own_code(__spec__, __name__))
    return sorted(listed)


def expected_proofs(root: Path) -> set[str]:
    """The goals a complete check proves, by proof file name: every committed
    ``proofs/coq/*.v`` but the library (a goal Why3 prints has its proof
    there, or the check fails it; a proof there whose goal Why3 no longer
    prints is a goal the record lacks)."""
    return {p.name for p in (root / PROOF_DIR).glob("*.v") if p.name != LIBRARY.name}


def tool_versions(root: Path) -> dict[str, str]:
    """why3's and coqc's version lines, the Flocq package's version, the
    realizations' build stamp (why3 source version and coqc)."""
    stamp = root / prover_config.COQ_REALIZATIONS / ".stamp"
    flocq = ["dpkg-query", "-W", "-f", "libcoq-flocq ${Version}\n", "libcoq-flocq"]
    return {
        "why3": core.version_line(["why3", "--version"], 20, "missing", "unknown"),
        "coqc": core.version_line(["coqc", "--version"], 20, "missing", "unknown"),
        "flocq": core.version_line(flocq, 20, "missing", "unknown"),
        "realizations": stamp.read_text().strip() if stamp.exists() else "missing",
    }


def evidence(root: Path, goals: list[Goal], seconds: float) -> schema.CoqEvidence:
    """The record :data:`OUT` holds."""
    return schema.CoqEvidence(
        tool_versions=tool_versions(root),
        inputs=binding.digest(root, inputs(root)),
        goals=[
            schema.CoqGoal(g.theory, g.module, g.goal, g.name, g.proved, list(g.errors))
            for g in goals
        ],
        proved=sum(g.proved for g in goals),
        total=len(goals),
        seconds=round(seconds, 1),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check"])
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    root = args.root.resolve()
    started = time.perf_counter()
    goals = check(root)
    record = evidence(root, goals, time.perf_counter() - started)
    schema.dump(record, root / OUT)
    for g in goals:
        print(f"{g.goal} ({g.name}): {'proved' if g.proved else 'FAILED'}")
        for error in g.errors:
            print(f"  {error}")
    print(f"coq: {record.proved}/{record.total} goals proved ({record.seconds} s)")
    if not goals:
        print("coq: FAILED: no goal (a theory that prints none proves nothing)")
        return 1
    stale = sorted(expected_proofs(root) - {g.name for g in goals})
    for name in stale:
        print(f"coq: FAILED: {(PROOF_DIR / name).as_posix()} proves no goal Why3 prints")
    return 0 if record.proved == record.total and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
