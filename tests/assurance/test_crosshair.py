"""CrossHair finds planted faults through the contract wrappers (negative controls).

Each control copies ``kernel.py`` and ``contracts.py`` into ``tmp_path``,
plants one fault, runs ``crosshair check`` on one contract function with a
tight budget through the project driver, and requires a counterexample that
re-runs as plain Python. A missing CrossHair makes these tests fail.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance.python import contracts, crosshair

pytestmark = pytest.mark.provers  # runs Why3 or CrossHair and the provers

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "src" / "sonnx_mul" / "oracle" / "integers.py"
CONTRACTS = REPO / "assurance" / "sonnx_mul_assurance" / "python" / "contracts.py"


def planted_copy(
    tmp_path: Path, kernel_fault: tuple[str, str] | None, extra: str = "", tag: str = "real"
) -> str:
    """Write kernel_planted.py and contracts_planted.py; return the module name."""
    kernel = KERNEL.read_text()
    if kernel_fault is not None:
        old, new = kernel_fault
        assert old in kernel
        kernel = kernel.replace(old, new)
    (tmp_path / f"kernel_{tag}.py").write_text(kernel)
    text = CONTRACTS.read_text()
    text = text.replace(
        "from sonnx_mul.oracle import integers as kernel\n",
        f"import kernel_{tag} as kernel\n",
    )
    (tmp_path / f"contracts_{tag}.py").write_text(text + extra)
    return f"contracts_{tag}"  # unique names: the driver imports them to re-run findings


def run(
    tmp_path: Path, module: str, function: str, timeout: float = 10.0
) -> crosshair.FunctionResult:
    assert Path(crosshair.crosshair_executable()).exists() or shutil.which("crosshair"), (
        "crosshair is not installed"
    )
    results = crosshair.check_module(
        tmp_path / f"{module}.py", module, timeout, jobs=1, only=[function], extra_path=tmp_path
    )
    assert len(results) == 1
    return results[0]


SILENT_BROADCAST = """

_real_check_shapes = check_shapes


def check_shapes(a, b):  # planted: a size-1 B is silently broadcast
    if len(b.shape) > 0 and all(d == 1 for d in b.shape):
        return None
    return _real_check_shapes(a, b)
"""

CONTROLS = {
    "sign": (("c.append(prod(a[i], b[i]))", "c.append(prod(abs(a[i]), b[i]))"), "", "mul_exact_c"),
    "broadcast": (None, SILENT_BROADCAST, "shape_violations_c"),
    "wrap": (("return (x + h) % m - h", "return x % m - h"), "", "wrap_c"),
    "off_by_one": (
        (
            "        if p < lo or p > hi:\n            return i\n",
            "        if p < lo or p > hi:\n            return i + 1\n",
        ),
        "",
        "first_overflow_c",
    ),
}


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_negative_control_crosshair_finds_planted_fault(tmp_path, name):
    fault, extra, function = CONTROLS[name]
    module = planted_copy(tmp_path, fault, extra, tag=name)
    result = run(tmp_path, module, function)
    assert result.status == "counterexample", result
    assert any(f.status == "confirmed" for f in result.findings)


def test_crosshair_passes_the_real_contract(tmp_path):
    module = planted_copy(tmp_path, None)
    result = run(tmp_path, module, "mul_exact_c", timeout=3.0)
    assert result.status == "pass", result


def test_a_false_counterexample_is_recorded_as_unconfirmed():
    confirmed, detail = crosshair.confirm(
        contracts, "mul_exact_c([1, -2], [3, 4]) (which returns [3, -8])"
    )
    assert not confirmed and "holds" in detail
    confirmed, _ = crosshair.confirm(contracts, "wrap_c(300, 8, False)")
    assert not confirmed


def test_findings_are_parsed():
    line = "/x/contracts.py:42: error: false when calling wrap_c(1, 8, True) (which returns 1)"
    found = crosshair.FINDING.match(line)
    assert found and found.group("call").startswith("wrap_c(1, 8, True)")
