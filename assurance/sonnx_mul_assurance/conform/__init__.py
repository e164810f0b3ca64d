"""``sonnx-mul conform``: bit-exact conformance of other runtimes' Mul.

Public interface: :func:`run_conformance` (``run.py``), the runtime adapters
and the plug-in protocol (``runtimes.py``), the renderings (``output.py``).
The certified product never imports this package.
"""

from __future__ import annotations

from sonnx_mul_assurance.conform.run import SCHEMA, run_conformance
from sonnx_mul_assurance.conform.runtimes import (
    BackendRuntime,
    CallableRuntime,
    OnnxRuntime,
    OpenVinoRuntime,
    Runtime,
    RuntimeUnavailable,
    load_plugin,
)

__all__ = [
    "SCHEMA",
    "BackendRuntime",
    "CallableRuntime",
    "OnnxRuntime",
    "OpenVinoRuntime",
    "Runtime",
    "RuntimeUnavailable",
    "load_plugin",
    "run_conformance",
]
