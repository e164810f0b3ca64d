"""CrossHair contracts on the REAL functions find bugs planted in those functions.

Each control copies the whole package under another name into ``tmp_path``
(its relative imports keep it self-contained), plants one fault in the real
function (validation.check_out, check_element_types, check_dense,
softfloat.mul_bits), runs ``crosshair check`` on the contract of
``contracts.py`` that calls it, through the project driver, and requires a
counterexample that re-runs as plain Python. The real package passes (the
``make prove`` CrossHair step runs every contract).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance.python import crosshair

pytestmark = pytest.mark.provers  # runs Why3 or CrossHair and the provers

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "sonnx_mul"
CONTRACTS = REPO / "assurance" / "sonnx_mul_assurance" / "python" / "contracts.py"

ACCEPT_VIEWS_OF_A = """

_real_check_out = check_out


def check_out(out, a, b, etype):  # planted: any view of A's buffer is accepted
    if isinstance(out, np.ndarray) and out.base is not None and out.base is a.base:
        return out
    return _real_check_out(out, a, b, etype)
"""

IGNORE_OPSET = """

_real_check_element_types = check_element_types


def check_element_types(a, b, opset):  # planted: the opset is not looked at
    return _real_check_element_types(a, b, MAX_KNOWN_OPSET)
"""

ACCEPT_SUBCLASSES = """

_real_check_dense = check_dense


def check_dense(x, name):  # planted: ndarray subclasses pass as dense
    if isinstance(x, np.ndarray):
        return x
    return _real_check_dense(x, name)
"""

FLUSH = (
    "        return sign_bit | m  # subnormal: biased exponent 0",
    "        return sign_bit  # planted: subnormal results flushed to zero",
)
TIES_AWAY = (
    "if rest > half or (rest == half and kept & 1):",
    "if rest >= half:  # planted: ties away from zero",
)
TRUNCATE = (
    "if rest > half or (rest == half and kept & 1):",
    "if False:  # planted: rounding toward zero",
)

# name: (file, appended code or (old, new) replacement, contract function)
CONTROLS: dict[str, tuple[str, str | tuple[str, str], str]] = {
    "check_out_accepts_views": ("validation.py", ACCEPT_VIEWS_OF_A, "check_out_c"),
    "check_element_types_ignores_opset": ("validation.py", IGNORE_OPSET, "check_element_types_c"),
    "check_dense_accepts_subclasses": ("validation.py", ACCEPT_SUBCLASSES, "check_dense_c"),
    "mul_bits_flushes_subnormals": ("oracle/softfloat.py", FLUSH, "mul_bits_rne_c"),
    "mul_bits_ties_away": ("oracle/softfloat.py", TIES_AWAY, "mul_bits_rne_c"),
    "mul_bits_truncates_bf16": ("oracle/softfloat.py", TRUNCATE, "mul_bits_rne_c"),
}


def planted_package(tmp_path: Path, tag: str, file: str, fault: str | tuple[str, str]) -> str:
    """Copy the package as ``sonnx_mul_<tag>`` with the fault planted; its contracts module.

    The contracts (assurance tooling) are copied into the planted package and
    import it instead of the real ``sonnx_mul``.
    """
    package = f"sonnx_mul_{tag}"
    shutil.copytree(SRC, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    contracts = CONTRACTS.read_text().replace("from sonnx_mul.", f"from {package}.")
    (tmp_path / package / "contracts.py").write_text(contracts)
    path = tmp_path / package / file
    text = path.read_text()
    if isinstance(fault, str):
        text += fault
    else:
        old, new = fault
        assert old in text, f"fault anchor not found in {file}: {old!r}"
        text = text.replace(old, new)
    path.write_text(text)
    return f"{package}.contracts"


def run(tmp_path: Path, module: str, function: str, timeout: float) -> crosshair.FunctionResult:
    path = tmp_path / module.replace(".", "/")
    results = crosshair.check_module(
        path.with_suffix(".py"), module, timeout, jobs=1, only=[function], extra_path=tmp_path
    )
    assert len(results) == 1
    return results[0]


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_crosshair_finds_a_fault_planted_in_the_real_function(tmp_path: Path, name: str) -> None:
    file, fault, function = CONTROLS[name]
    module = planted_package(tmp_path, name, file, fault)
    result = run(tmp_path, module, function, timeout=20.0)
    assert result.status == "counterexample", result
    assert any(f.status == "confirmed" for f in result.findings), result.findings
