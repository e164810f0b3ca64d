"""The floating-point environment the certified results are computed in.

A runtime may switch the calling thread to flush-to-zero / denormals-are-zero
(onnxruntime's ``session.set_denormal_as_zero`` does, when the session is
created): numpy in the same thread would then flush too, and a flushing
runtime would "agree" with a flushing oracle. So the certified results are
computed inside :func:`ieee_environment`, which saves the thread's
floating-point environment, installs the default one (IEEE: no FTZ/DAZ,
round to nearest), checks that subnormals survive, and restores the
runtime's environment afterwards, so that the runtime keeps running as it
was configured.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

_FE_DFL_ENV = ctypes.c_void_p(-1)
"""glibc's ``FE_DFL_ENV``: ``((const fenv_t *) -1)``."""
_ENV_BYTES = 64
"""Room for a ``fenv_t`` (28 or 32 bytes on x86-64 glibc, less elsewhere)."""


class FloatEnvironmentError(RuntimeError):
    """The certified results cannot be computed: subnormals are flushed and the
    default floating-point environment cannot be restored."""


def _libm() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if lib is None or not all(hasattr(lib, f) for f in ("fegetenv", "fesetenv")):
        return None
    return lib


_LIBM = _libm()


def flushes() -> bool:
    """True when this thread's floating-point unit flushes subnormals (FTZ or DAZ)."""
    tiny32 = np.array([np.float32(1e-39)])  # subnormal operand (DAZ) ...
    tiny64 = np.array([5e-324])
    with np.errstate(all="ignore"):
        daz = bool((tiny32 * np.float32(1.0))[0] == 0) or bool((tiny64 * 1.0)[0] == 0)
        ftz = bool((np.array([np.float32(2.0**-126)]) * np.float32(0.5))[0] == 0)  # ... result
    return daz or ftz


@contextmanager
def ieee_environment() -> Iterator[None]:
    """Run the body in the default floating-point environment, then restore the
    caller's. FloatEnvironmentError when subnormals are flushed all the same."""
    if not flushes():
        yield
        return
    if _LIBM is None:
        raise FloatEnvironmentError(
            "subnormals are flushed in this thread (FTZ/DAZ) and libm's fesetenv is not "
            "available to restore IEEE behaviour: the certified results cannot be computed"
        )
    saved = ctypes.create_string_buffer(_ENV_BYTES)
    _LIBM.fegetenv(saved)
    _LIBM.fesetenv(_FE_DFL_ENV)
    try:
        if flushes():
            raise FloatEnvironmentError(
                "subnormals are still flushed after restoring the default floating-point "
                "environment: the certified results cannot be computed in this process"
            )
        yield
    finally:
        _LIBM.fesetenv(saved)
