"""The order of the checks proved in ``why3/api.mlw`` is the order ``api.mul`` runs.

The order has one source, the Why3 programs: :func:`why3_order` reads the
exceptions that ``Api.mul_api``, ``Api.mul_into`` and
``ApiChecked.mul_checked_into`` raise, in the order of their bodies (calls
to the ``ApiChecks`` functions expanded, ``check_dense ka`` / ``kb`` tagged
with the operand), and the Python error each exception stands for from its
``(* raises: Class [ids] *)`` declaration. :func:`check_order` then calls
the real :func:`sonnx_mul.api.mul` (and ``mul_reference`` when it applies)
on inputs violating every check alone and every pair of checks at once,
and requires the error of the check that comes first in the Why3 order:
an instance of the class named there, exact requirement ids, and the operand named first in the
message. A swap on either side, or an error mapped differently, fails.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from sonnx_mul import api
from sonnx_mul import errors as error_classes
from sonnx_mul.errors import ProfileError
from sonnx_mul.oracle import reference
from sonnx_mul_assurance.why3 import whyml

API = Path("why3/api.mlw")
REFINE = Path("why3/refine.mlw")
PROGRAMS: tuple[tuple[str, str], ...] = (
    ("Api", "mul_api"),
    ("Api", "mul_into"),
    ("ApiChecked", "mul_checked_into"),
)
OPERANDS: Mapping[str, str] = MappingProxyType({"ka": "A", "kb": "B"})
"""The model's names of the inputs whose kind is checked."""

# The annotation comment on an exception's declaration line.
_RAISES = re.compile(r"\(\*\s*raises:\s*(\w+)\s*\[([^\]]*)\]\s*\*\)")


@dataclass(frozen=True)
class Check:
    """One check: the Why3 exception, the operand it is about, the Python error."""

    exception: str
    operand: str | None
    error: str
    requirements: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.exception}@{self.operand}" if self.operand else self.exception


def declared_errors(root: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Exception -> (Python error class, requirement ids) from the declarations."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for file in (API, REFINE):
        text = (root / file).read_text()
        lines = text.splitlines()
        for _, decl in whyml.declarations(text):
            m = _RAISES.search(lines[decl.start - 1]) if decl.kind == "exception" else None
            if m:
                ids = tuple(i.strip() for i in m.group(2).split(",") if i.strip())
                found[decl.name] = (m.group(1), ids)
    return found


def _functions(text: str, module: str) -> dict[str, str]:
    """Program name -> its body (after the ``=`` line) in ``module`` of ``text``."""
    mod = next((m for m in whyml.parse(text) if m.name == module), None)
    if mod is None:
        return {}
    found = {}
    for decl in mod.declarations:
        if decl.kind.split()[0] == "let":
            body = whyml.definition(mod, decl.name, text)
            if body is not None:
                found[decl.name] = body
    return found


def why3_order(root: Path) -> tuple[list[Check], list[str]]:
    """The checks in the order the Why3 API programs raise them, and parse errors."""
    text = (root / API).read_text()
    declared = declared_errors(root)
    helpers = _functions(text, "ApiChecks")
    token = re.compile(
        r"\braise\s+(?P<exc>[A-Z]\w*)"
        + (
            r"|\b(?P<call>" + "|".join(map(re.escape, helpers)) + r")\s+(?P<arg>\w+)"
            if helpers
            else ""
        )
    )
    errors: list[str] = []

    def expand(body: str, operand: str | None) -> list[Check]:
        out: list[Check] = []
        for m in token.finditer(body):
            if m.group("exc"):
                exc = m.group("exc")
                error, ids = declared.get(exc, ("?", ()))
                if exc not in declared:
                    errors.append(f"{API}: exception {exc} has no (* raises: Class [ids] *)")
                out.append(Check(exc, operand, error, ids))
            else:
                arg = m.group("arg")
                out += expand(helpers[m.group("call")], OPERANDS.get(arg, operand))
        return out

    orders = []
    for module, program in PROGRAMS:
        body = _functions(text, module).get(program)
        if body is None:
            errors.append(f"{API}: {module}.{program} not found")
            continue
        orders.append((program, expand(body, None)))
    orders.sort(key=lambda p: len(p[1]))
    for (short_name, short), (long_name, long) in itertools.pairwise(orders):
        if long[: len(short)] != short:
            errors.append(
                f"{API}: {short_name} and {long_name} do not run the checks in the same order"
            )
    order = orders[-1][1] if orders else []
    keys = [c.key for c in order]
    if len(set(keys)) != len(keys):
        errors.append(f"{API}: a check is raised twice: {keys}")
    if not order:
        errors.append(f"{API}: no check found")
    return order, errors


class _Sparse:
    """A stand-in sparse tensor (``_looks_sparse``: it has ``tocsr``)."""

    def __init__(self, dense: np.ndarray) -> None:
        self.dense = dense

    def tocsr(self) -> np.ndarray:
        return self.dense


# How to violate each check (its key); the values violate nothing else that
# comes earlier, which the single-violation runs confirm.
VIOLABLE: frozenset[str] = frozenset(
    {
        "OpsetError", "ModeError", "SparseError@A", "NotDense@A", "SparseError@B",
        "NotDense@B", "TypeUnknown", "TypeMismatch", "TypeNotAllowed", "ShapeError",
        "DimError", "OutError", "IntegerOverflow",
    }
)  # fmt: skip
EXCLUSIVE: tuple[frozenset[str], ...] = (
    frozenset({"SparseError@A", "NotDense@A"}),
    frozenset({"SparseError@B", "NotDense@B"}),
)


def materialize(violated: frozenset[str]) -> tuple[Any, Any, dict[str, Any]]:
    """Arguments of ``mul`` violating exactly the checks ``violated`` (as far as they combine)."""
    v = violated
    opset = 0 if "OpsetError" in v else (13 if "TypeNotAllowed" in v else 14)
    overflow = "saturate" if "ModeError" in v else "error"
    base = np.int16 if "TypeNotAllowed" in v else np.int32  # int16 came with Mul-14
    dtype_a = np.bool_ if "TypeUnknown" in v else base
    dtype_b = np.int64 if "TypeMismatch" in v else base
    shape_a = (2, 0) if "DimError" in v else (2, 3)
    shape_b = (3, 2) if "ShapeError" in v else shape_a  # (3, 2) does not broadcast
    a = np.ones(shape_a, dtype_a)
    b = np.ones(shape_b, dtype_b)
    if "IntegerOverflow" in v and a.size and a.dtype != np.bool_:
        a.flat[-1] = np.iinfo(base).max
        b.flat[-1] = 2
    out = np.empty((7,) if "OutError" in v else shape_a, dtype_a)
    x: Any = a
    y: Any = b
    for key, wrap in (("SparseError", _Sparse), ("NotDense", np.ndarray.tolist)):
        if f"{key}@A" in v:
            x = wrap(a)
        if f"{key}@B" in v:
            y = wrap(b)
    return x, y, {"out": out, "opset": opset, "overflow": overflow}


def _outcome(call: Callable[..., object], *args: object, **kwargs: Any) -> ProfileError | None:
    try:
        call(*args, **kwargs)
    except ProfileError as err:
        return err
    return None


def _verdict(err: ProfileError | None, expected: Check | None) -> str | None:
    """None when ``err`` is the error of ``expected``, else what went wrong."""
    if expected is None:
        return None if err is None else f"raised {err!r}, expected no error"
    if err is None:
        return f"no error, expected {expected.error}{list(expected.requirements)}"
    got = (type(err).__name__, err.requirements)
    cls = getattr(error_classes, expected.error, None)
    if not (isinstance(cls, type) and isinstance(err, cls)) or got[1] != expected.requirements:
        want = f"{expected.error}{list(expected.requirements)}"
        return f"raised {got[0]}{list(got[1])}: {err}; expected {want}"
    message = str(err).split("] ", 1)[-1]
    if expected.operand and not message.startswith(f"{expected.operand} "):
        return f"raised for the wrong operand: {err}; expected {expected.operand}"
    return None


def check_order(root: Path) -> list[str]:
    """Every single and pairwise violation raises the error the Why3 order says."""
    order, errors = why3_order(root)
    keys = [c.key for c in order]
    for key in sorted(set(keys) - VIOLABLE):
        errors.append(f"{API}: check {key} has no violating input in check_order.py")
    for key in sorted(VIOLABLE - set(keys)):
        errors.append(f"{API}: check {key} of the Python is not in the Why3 order")
    if errors:
        return errors
    cases: list[tuple[frozenset[str], Check | None]] = [(frozenset(), None)]
    cases += [(frozenset({c.key}), c) for c in order]
    for first, second in itertools.combinations(order, 2):
        pair = frozenset({first.key, second.key})
        if not any(pair <= group for group in EXCLUSIVE):
            cases.append((pair, first))
    for violated, expected in cases:
        x, y, kwargs = materialize(violated)
        problem = _verdict(_outcome(api.mul, x, y, **kwargs), expected)
        if problem is None and "OutError" not in violated:
            kw = {k: v for k, v in kwargs.items() if k != "out"}
            problem = _verdict(_outcome(reference.mul_reference, x, y, **kw), expected)
            problem = problem and f"mul_reference {problem}"
        if problem:
            errors.append(f"violating {sorted(violated)}: {problem}")
    return errors
