"""Errors of the profile: each names the registry ids it violates.

Every class also subclasses the natural built-in exception, so callers that
catch ``ValueError`` / ``TypeError`` / ``ArithmeticError`` keep working.
"""

from __future__ import annotations

from . import requirements


class ProfileError(Exception):
    """A violation of the SONNX Mul profile.

    ``requirements`` holds the registry ids violated (at least one, all
    known); the message starts with them, e.g. ``"[R1, R4] ..."``.
    """

    requirements: tuple[str, ...]

    def __init__(self, message: str, requirements_violated: tuple[str, ...]) -> None:
        if not requirements_violated:
            raise ValueError("a ProfileError must name at least one requirement")
        for req_id in requirements_violated:
            requirements.get(req_id)  # unknown ids are a programming error
        self.requirements = tuple(requirements_violated)
        super().__init__(f"[{', '.join(self.requirements)}] {message}")


class ShapeError(ProfileError, ValueError):
    """Shapes of A and B violate R1 (and R4 when numpy would broadcast them)."""


class ElementTypeError(ProfileError, TypeError):
    """Element types violate R3 (not numeric, different, or not in the opset)."""


class SparseTensorError(ProfileError, TypeError):
    """An input is a sparse tensor (R2)."""


class NotAnArrayError(ProfileError, TypeError):
    """An input is not a plain numpy.ndarray: a list, a scalar, None, a subclass (R2-DENSE)."""


class ArgumentError(ProfileError, ValueError):
    """A bad ``opset``, ``overflow`` or ``out`` argument."""


class IntegerOverflowError(ProfileError, ArithmeticError):
    """overflow='error' and a product does not fit the integer type.

    ``index`` is the first offending flat index in C order; ``a_value`` and
    ``b_value`` are the operands there (Python ints).
    """

    def __init__(self, index: int, a_value: int, b_value: int, type_name: str) -> None:
        self.index = index
        self.a_value = a_value
        self.b_value = b_value
        super().__init__(
            f"{a_value} * {b_value} = {a_value * b_value} does not fit {type_name} "
            f"at flat index {index} (overflow='error'); nothing was written",
            ("F-CHECKED",),
        )
