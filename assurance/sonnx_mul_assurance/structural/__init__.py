"""Structural coverage of the running code by the requirement-based tests (``make coverage``).

What it builds, in ``build/coverage/`` (the venv's gcc build is not touched):

- the extension ``sonnx_mul._native`` by the repository's own ``setup.py``
  (the kernel, its ISA variants, the hardware loops and the glue), every
  compilation and the link through clang-19 with ``-fprofile-instr-generate
  -fcoverage-mapping -fcoverage-mcdc`` (a one-line compiler wrapper, so that
  setup.py's pinned flags stay exactly what they are), installed into a copy
  of ``src/`` that ``PYTHONPATH`` puts before the editable install;
- the portable C harness and the example (``native/verify/portable.c``,
  ``native/example/example.c``) against the kernel compiled the same way.

What it runs: the requirement-based tests (:data:`TESTS`: the operator, the
CLI and the checker; not the proofs' negative controls, the report's or the
documents' tests, which test the tooling, not the product) once under
coverage.py (statements and branches, one context per test) with the CPU's
best ISA variant; :data:`VARIANT_TESTS` again with each other variant the CPU
can run (``SONNX_MUL_ISA``); then the C harnesses.  llvm-cov merges every
run; a line, branch or MC/DC condition of a source compiled several times
(the variants) counts as covered when any of its builds covered it.

What it writes: ``proofs/out/coverage.json`` (:class:`schema.CoverageEvidence`):
per file and per function the statements, branches (decisions) and MC/DC
conditions covered, every uncovered item (a *gap*), and per requirement the
statements and branches of the product's Python covered by the tests that
carry its id (the report's mapping of tests to ids).  coverage.py measures
no MC/DC: Python's MC/DC figures are absent (``None``), not 100 %.

The gate (:func:`gate_problems`, applied by the report): every gap is listed
in :data:`EXEMPTIONS` with its reason, and every exemption still names a gap.

    python -m sonnx_mul_assurance.structural run   [--root DIR]
    python -m sonnx_mul_assurance.structural check [--root DIR]
    python -m sonnx_mul_assurance.structural add-unlisted   # gaps -> exemptions
    python -m sonnx_mul_assurance.structural rekey [--from REV]  # moved gaps keep reasons

Its modules, one job each: :mod:`.scope` (what is built, run and measured),
:mod:`.build` (the instrumented builds and the measuring interpreter),
:mod:`.run` (the test runs), :mod:`.parse` (llvm-cov's, coverage.py's and gcov's
outputs as schema records), :mod:`.collect` (merging them into coverage.json),
:mod:`.gate` (the gate and the exemption file), :mod:`.rekey` (exemptions carried
to their moved gaps), :mod:`.__main__` (the command line).
"""
