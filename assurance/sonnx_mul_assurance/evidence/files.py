"""Where the evidence files live: each name written once, here.

The report's protocol (:mod:`sonnx_mul_assurance.report.protocol`) declares
what each file means and how it is read; the producers (the Why3 and WP
drivers, the Coq check, MISRA, CrossHair, the exhaustive runs, the targets check,
structural coverage, the test suite) write the same files.  Both take the
names from this module, which imports nothing of the project: the protocol
imports the producers (their ``inputs`` and version probes), so a producer
cannot import the protocol.  A second spelling of a name anywhere in the
assurance code fails ``tests/assurance/test_single_definitions.py``.
"""

from __future__ import annotations

from pathlib import Path

OUT_DIR = Path("proofs/out")
"""The evidence directory, relative to the repository."""

WHY3 = "why3.json"
COQ = "coq.json"
"""The Coq check's record (:mod:`..why3.coq`): goals, verdicts, tool versions, hashes."""
CROSSHAIR = "crosshair.json"
WP = "wp.json"
MISRA = "misra.json"
EXHAUSTIVE = "exhaustive.json"
NATIVE_EXHAUSTIVE = "native-exhaustive.json"
TARGETS = "targets.json"
COVERAGE = "coverage.json"
PYTEST = "pytest.xml"
"""pytest's JUnit XML (the suite's run, and make prove's copy of it)."""

NAMES: tuple[str, ...] = (
    WHY3,
    COQ,
    CROSSHAIR,
    WP,
    MISRA,
    EXHAUSTIVE,
    NATIVE_EXHAUSTIVE,
    TARGETS,
    COVERAGE,
    PYTEST,
)
"""Every evidence file the report reads (``protocol.SOURCES``, in its order)."""

PIPELINE = "pipeline.json"
"""``make prove``'s record of its steps (:mod:`..pipeline`)."""
SUITE_RUN = "suite/run.json"
"""``make test``'s record of a passing run of the whole suite (:mod:`..suite`)."""
MUTANTS = "mutants.json"
"""``make mutants``' record of a mutation run (:mod:`..mutants`; the other
Makefile targets name their own file with ``--out``)."""
RECORDS: tuple[str, ...] = (PIPELINE, SUITE_RUN, MUTANTS)
"""The pipeline's and the mutation runs' records beside the evidence."""


def evidence_path(name: str) -> Path:
    """Where a producer writes the evidence file or record ``name`` (one of
    :data:`NAMES` or :data:`RECORDS`), relative to the repository:
    ``proofs/out/<name>``."""
    if name not in NAMES + RECORDS:
        raise ValueError(f"not an evidence file of the protocol: {name}")
    return OUT_DIR / name
