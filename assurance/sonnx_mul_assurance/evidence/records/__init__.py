"""The record dataclasses of the evidence files, one module per kind of evidence:
:mod:`.analyses` (Why3, CrossHair, Frama-C WP, MISRA), :mod:`.every_input` (the
exhaustive runs and the kernel on every target), :mod:`.runs` (the pipeline, the
test suite and its environment, JUnit cases, mutation testing), :mod:`.coverage`
(structural coverage and its exemptions).  Read and written through
:mod:`sonnx_mul_assurance.evidence.schema`, which re-exports every one."""
