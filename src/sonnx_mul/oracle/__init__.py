"""The pure-Python oracle: Mul element by element, with no numpy arithmetic.

:mod:`.integers` is the integer kernel Why3 proves (the file itself, through
Why3's Python frontend); :mod:`.softfloat` multiplies IEEE bit patterns in
integer arithmetic; :func:`mul_reference` validates like :func:`sonnx_mul.mul`
and computes through them. It is the oracle the running kernel is compared
with bit for bit, and it is slow.
"""

from .reference import mul_reference

__all__ = ["mul_reference"]
