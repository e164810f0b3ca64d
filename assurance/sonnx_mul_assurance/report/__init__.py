"""Traceability: requirement markers, evidence collection, the report and its gate.

Entry points: ``python -m sonnx_mul_assurance.report lint`` (marker lint) and
``python -m sonnx_mul_assurance.report report --out DIR [--evidence DIR]`` (the report
and gate), or :func:`main` / :func:`report_main` / :func:`lint_main` from Python.
"""

from __future__ import annotations

from sonnx_mul_assurance.report.cli import lint_main, main, report_main
from sonnx_mul_assurance.report.report import build_report, write_report

__all__ = ["build_report", "lint_main", "main", "report_main", "write_report"]
