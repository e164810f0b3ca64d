"""The integer element types as the generated C spells them.

One row per integer type of the registry (``src/sonnx_mul/dtypes.py``, which
also generates the Why3 instances and the glue's kinds), in the kernel's
order.  The registry states width, signedness and limits; this module adds
the C facts that follow from the width: the type in which the exact product
of two operands fits (:data:`PRODUCT_BITS`) and how the limits are written
as constants of that type.  The templates (native/templates/) take these as
values, so that no template branches on the width.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from sonnx_mul import dtypes
from sonnx_mul.dtypes import ElementType

PRODUCT_BITS = MappingProxyType({8: 32, 16: 32, 32: 64})
"""Operand width -> width of a C type holding the exact product of two
operands (at least int, so that no promotion to signed int occurs).  64 bits
has none in C99: its loops take another path (no row)."""

MIN_SPELLINGS = MappingProxyType({32: "((-{magnitude}) - 1)", 64: "(-{magnitude}LL - 1LL)"})
"""Product width -> how a signed type's minimum -(magnitude + 1) is written as
a constant of the product's type: no literal beyond its type (-2^31 as
-(2^31 - 1) - 1), parenthesised (MISRA 12.1)."""


@dataclass(frozen=True)
class IntType:
    """One integer element type of the registry, with the names the C uses."""

    etype: ElementType

    @property
    def bits(self) -> int:
        return self.etype.bits

    @property
    def signed(self) -> bool:
        return self.etype.signed

    @property
    def suffix(self) -> str:
        """The kernel's name of the type (``i8``, ``u64``)."""
        return self.etype.kernel_suffix

    @property
    def ctype(self) -> str:
        """The C type of one element (``int8_t``)."""
        return self.etype.kernel_ctype

    @property
    def lo(self) -> int:
        return self.etype.lo

    @property
    def hi(self) -> int:
        return self.etype.hi

    @property
    def modulus(self) -> int:
        """2^bits: wrap mode computes modulo this."""
        return 1 << self.bits

    @property
    def is_i64(self) -> bool:
        """int64: the one type with a binary64 checked test beside the halves one."""
        return self.bits == 64 and self.signed

    @property
    def product_bits(self) -> int:
        """The width of the C type holding the exact product (:data:`PRODUCT_BITS`);
        a KeyError for 64 bits, which has none."""
        return PRODUCT_BITS[self.bits]

    @property
    def product_ctype(self) -> str:
        """The C type holding the exact product, of the operands' signedness."""
        return f"{'' if self.signed else 'u'}int{self.product_bits}_t"

    @property
    def product_literal(self) -> str:
        """The suffix of a constant of :attr:`product_ctype` (MISRA 7.2: ``U``
        on an unsigned one)."""
        return ("" if self.signed else "U") + ("LL" if self.product_bits == 64 else "")

    @property
    def max_constant(self) -> str:
        """The type's maximum as a constant of :attr:`product_ctype`."""
        return f"{self.hi}{self.product_literal}"

    @property
    def min_constant(self) -> str:
        """A signed type's minimum as a constant of :attr:`product_ctype`."""
        return MIN_SPELLINGS[self.product_bits].format(magnitude=self.hi)

    @property
    def out_of_range(self) -> str:
        """The C condition that a product ``p`` of :attr:`product_ctype`
        leaves the type's range."""
        if self.signed:
            return f"(p < {self.min_constant}) || (p > {self.max_constant})"
        return f"p > {self.max_constant}"


TYPES = tuple(IntType(t) for t in dtypes.kernel_order() if not t.is_float)
"""The registry's integer types, in the kernel's order."""
