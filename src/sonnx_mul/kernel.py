"""Which multiply runs: the proved native kernel, and nothing else unless asked for.

``multiply(a, b, out, checked)`` is ``sonnx_mul._native.multiply``: the C99
kernel of ``native/`` (proved with Frama-C WP) behind a thin numpy glue,
built by the package's own build (``pip install`` from the checkout, i.e.
``make install``). Without it ``import sonnx_mul`` fails with a message
that says so: there is no silent fallback. For diagnosis only, the
environment variable ``SONNX_MUL_KERNEL=numpy`` (read once, at import)
selects numpy's multiply loops instead (``sonnx_mul.numpy_loops``, same
contract); ``NAME`` then says ``"numpy"``, and so do the self-test and
``sonnx-mul selftest``.

On x86-64 the native kernel has three variants, one chosen at import
(``isa()``): ``portable`` (the proved sources for SSE2), ``avx2`` and
``avx512`` (the same sources built for those ISAs; float16 by an F16C loop
verified exhaustively). ``SONNX_MUL_ISA=portable|avx2|avx512`` chooses one;
unset, the widest the CPU supports (docs/native-kernel.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from .numpy_loops import multiply as numpy_multiply

ENV = "SONNX_MUL_KERNEL"
"""Environment variable naming the kernel: ``native`` (default) or ``numpy`` (diagnosis)."""

ISA_ENV = "SONNX_MUL_ISA"
"""Environment variable naming the variant (read by the extension, which refuses a value
that names none of native/isa.toml's variants: a ConfigurationError here)."""


class ConfigurationError(ImportError):
    """An environment variable that selects the kernel has a value it cannot take.

    A wrong call, not a broken build: the command line reports it as one line,
    exit 2 (the message says which variable and what it may be).
    """


Multiply = Callable[[np.ndarray, np.ndarray, "np.ndarray | None", bool], "np.ndarray | int"]

MISSING = (
    "sonnx_mul: the native kernel (the compiled extension sonnx_mul._native) cannot be "
    "imported: {error}. Build it with the package's own build from the checkout "
    "(`make install`, or `pip install .`; it needs gcc and the Python headers). sonnx_mul has "
    "no fallback to another multiply; to diagnose with numpy's loops instead, set "
    f"{ENV}=numpy (never for production use)."
)


try:  # the compiled extension; its absence becomes the clear ImportError of _select
    from ._native import BUILD_FLAGS, COMPILER
    from ._native import isa as native_isa
    from ._native import isas as native_isas
    from ._native import multiply as native_multiply
    from ._native import plain as native_plain

    NATIVE_ERROR: ImportError | None = None
except ImportError as error:
    NATIVE_ERROR = error


# @relation(F, F-FLOAT, F-WRAP, F-CHECKED, F-LAYOUT, scope=function)
def _select(choice: str) -> tuple[str, Multiply, str]:
    """(kernel name, its multiply, how it was built) for the value of ``ENV``."""
    if NATIVE_ERROR is not None and str(NATIVE_ERROR).startswith(f"sonnx_mul._native: {ISA_ENV}="):
        # no such variant, or one this CPU cannot run: a wrong setting, not a missing build
        # (whichever kernel is asked for: a misspelt value is never silently ignored)
        raise ConfigurationError(str(NATIVE_ERROR)) from NATIVE_ERROR
    if choice == "numpy":
        return "numpy", numpy_multiply, f"numpy {np.__version__} multiply loops ({ENV}=numpy)"
    if choice != "native":
        raise ConfigurationError(
            f"sonnx_mul: {ENV}={choice!r}: expected 'native' (default) or 'numpy'"
        )
    if NATIVE_ERROR is not None:
        raise ImportError(MISSING.format(error=NATIVE_ERROR)) from NATIVE_ERROR
    return "native", native_multiply, f"{COMPILER}: {BUILD_FLAGS}"


NAME, multiply, BUILD = _select(os.environ.get(ENV, "native"))
"""The kernel in use, its multiply, and its compiler with the compile command."""

Plain = Callable[[object, object, object, object, object, int], "np.ndarray | int | None"]
plain: Plain | None = native_plain if NAME == "native" else None
"""``mul``'s plain lane in one native call (``sonnx_mul._native.plain``), or None
when numpy's loops run (they do not re-check the kernel's preconditions)."""


def reference_isa() -> str:
    """The variant every other is compared with: the proved sources as such (the
    first of native/isa.toml's table; ``sonnx_mul._native.isas()[0]``, always run)."""
    return native_isas()[0]


def isa() -> str:
    """The native kernel's variant in use: ``portable``, ``avx2`` or ``avx512``
    (``sonnx_mul._native.isa()``), or ``"-"`` when numpy's loops run."""
    return native_isa() if NAME == "native" else "-"


def multiply_on(
    variant: str, a: np.ndarray, b: np.ndarray, out: np.ndarray | None, checked: bool
) -> np.ndarray | int:
    """The native kernel's multiply on the given variant (the self-test compares
    the variant in use with the portable build); ValueError when the CPU
    cannot run it."""
    return native_multiply(a, b, out, checked, variant)
