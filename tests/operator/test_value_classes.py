"""The value classes of `make bench` (benchmarks/value_classes.py) hold what
their names say: a class timed as "subnormal results" whose products are
normal, or a checked class that overflows (an error, not a product), would
make the spread figure of issue 28 measure something else.  Each float class
is checked on its operands' and its products' encodings (products by
``mul``), each integer class on its mode and on not overflowing; a planted
mislabelled class is refused by the same checks.  No time is asserted."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul import mul
from sonnx_mul.errors import IntegerOverflowError
from support import bits_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import value_classes

Fields = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(sign, exponent field, fraction field) of every element, as uint64."""


def fields(x: np.ndarray, name: str) -> Fields:
    _, eb, fb = value_classes.FLOAT_FORMATS[name]
    u = bits_of(x).astype(np.uint64)
    return (
        u >> np.uint64(eb + fb),
        (u >> np.uint64(fb)) & np.uint64((1 << eb) - 1),
        u & np.uint64((1 << fb) - 1),
    )


def kinds(x: np.ndarray, name: str) -> dict[str, np.ndarray]:
    """Boolean masks of each encoding class of the elements of x."""
    _, eb, fb = value_classes.FLOAT_FORMATS[name]
    sign, exponent, fraction = fields(x, name)
    top = (1 << eb) - 1
    nan = (exponent == top) & (fraction != 0)
    return {
        "zero": (exponent == 0) & (fraction == 0),
        "subnormal": (exponent == 0) & (fraction != 0),
        "normal": (exponent != 0) & (exponent != top),
        "infinite": (exponent == top) & (fraction == 0),
        "nan": nan,
        "signalling": nan & ((fraction >> np.uint64(fb - 1)) == 0),
        "negative": sign == 1,
    }


def share(mask: np.ndarray) -> float:
    return float(np.count_nonzero(mask)) / mask.size


def claim_holds(label: str, a: np.ndarray, b: np.ndarray, name: str) -> bool:
    """What the class named ``label`` claims of its operands and products."""
    ka, kb, kc = kinds(a, name), kinds(b, name), kinds(mul(a, b), name)
    normal_b = share(kb["normal"]) == 1.0
    claims: dict[str, Callable[[], bool]] = {
        "normal": lambda: share(ka["normal"]) == share(kc["normal"]) == 1.0 and normal_b,
        "zeros": lambda: share(ka["zero"]) == share(kc["zero"]) == 1.0,
        "subnormal operands": lambda: share(ka["subnormal"]) == 1.0 and normal_b,
        # every product below the least normal (rounding may give zero or the least normal)
        "subnormal results": lambda: (
            share(kc["subnormal"]) > 0.9
            and share(kc["normal"] | kc["subnormal"] | kc["zero"]) == 1.0
        ),
        "overflow": lambda: share(kc["infinite"]) == 1.0 and share(ka["normal"]) == 1.0,
        "inf and NaN": lambda: share(ka["infinite"]) >= 0.5 and share(ka["nan"]) > 0.2,
        "NaN payloads": lambda: (
            share(ka["nan"]) == share(kc["nan"]) == 1.0
            and 0.4 < share(ka["signalling"]) < 0.6
            and 0.4 < share(ka["negative"]) < 0.6
            and normal_b
        ),
        "random bits": lambda: all(share(ka[k]) > 0 for k in ("normal", "negative")),
    }
    return claims[label]()


@pytest.fixture(scope="module")
def float_classes() -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    rng = np.random.default_rng(20261203)
    return {name: value_classes.float_classes(name, rng) for name in value_classes.FLOAT_FORMATS}


@pytest.mark.parametrize("name", sorted(value_classes.FLOAT_FORMATS))
def test_every_float_class_holds_what_its_name_says(
    float_classes: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]], name: str
) -> None:
    classes = float_classes[name]
    assert "NaN payloads" in classes and "subnormal results" in classes
    for label, (a, b) in classes.items():
        assert a.size == b.size == value_classes.N
        assert claim_holds(label, a, b, name), (name, label)


def test_negative_control_a_mislabelled_class_is_refused(
    float_classes: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]],
) -> None:
    classes = float_classes["float32"]
    # normal operands under the subnormal-results label, the canonical NaN
    # under the payloads label, subnormal operands under the normal label
    assert not claim_holds("subnormal results", *classes["normal"], "float32")
    assert not claim_holds("NaN payloads", *classes["inf and NaN"], "float32")
    assert not claim_holds("normal", *classes["subnormal operands"], "float32")


@pytest.mark.parametrize("name", value_classes.INT_TYPES)
def test_no_checked_integer_class_overflows(name: str) -> None:
    classes = value_classes.int_classes(name, np.random.default_rng(5))
    checked = [label for label, (_, _, mode) in classes.items() if mode == "error"]
    assert len(checked) == 4
    for label in checked:
        a, b, _ = classes[label]
        wrapped = mul(a, b, overflow="wrap")
        np.testing.assert_array_equal(mul(a, b, overflow="error"), wrapped, err_msg=label)
    # the control: the boundary values times themselves do overflow
    boundary = classes["boundary (error)"][0]
    with pytest.raises(IntegerOverflowError):
        mul(boundary, boundary, overflow="error")
