"""Why3 proves the kernel file CPython runs; planted faults leave goals unproved.

Uses the project's Why3 configuration (``why3.driver.PROOFS.render_config``)
and Why3's Python frontend directly: ``why3 prove -a split_vc -a
eliminate_definition --json`` (the transformations kernel.py is proved with)
on pieces of ``src/sonnx_mul/oracle/integers.py`` cut out verbatim, so that the tests
stay fast; the whole file is proved by ``make prove`` from the manifest. A
missing why3 or prover makes these tests fail, never skip.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.why3 import driver as why3_driver
from sonnx_mul_assurance.why3 import runner

# runs Why3 and the provers
pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "src" / "sonnx_mul" / "oracle" / "integers.py"
PROVER = "cvc5"
TRANSFORMS = ("split_vc", "eliminate_definition")


def kernel_steps() -> int:
    """The widest step limit the manifest pins to a goal of the kernel file:
    every piece's goal is one of them (the same text, cut out)."""
    manifest = why3_driver.PROOFS.load_manifest(ROOT)
    (entry,) = [e for e in manifest["files"] if e["path"] == "src/sonnx_mul/oracle/integers.py"]
    return max(int(g["steplimit"]) for g in entry["goals"] if g["prover"] == PROVER)


def prove(path: Path, prover: str = PROVER) -> list[tuple[int, str, str]]:
    """[(line, explanation, answer)] of every goal, each within the kernel's
    widest pinned step limit (deterministic; the time limit is only the
    safety net); zero goals is an error."""
    assert shutil.which("why3"), "why3 is not installed (apt-get install why3)"
    conf = why3_driver.PROOFS.render_config(ROOT)
    cmd = ["why3", "-C", str(conf), "prove", "-L", str(ROOT / "why3"), "--json"]
    cmd += ["-P", prover, "-s", str(kernel_steps()), "-t", str(core.SAFETY_NET)]
    cmd += [arg for t in TRANSFORMS for arg in ("-a", t)]
    cmd.append(str(path))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=path.parent, check=False)
    assert proc.returncode in (0, 2), proc.stderr
    goals = [
        (
            int(obj["term"]["loc"]["line"]),
            ",".join(obj["term"].get("explanations", [])),
            str(obj["prover-result"]["answer"]),
        )
        for obj in runner.parse_json_stream(proc.stdout)
    ]
    assert goals, f"{path.name} yielded no goal: {proc.stderr}"
    return goals


MARK = "# @" + "relation"  # split so that the marker linter does not read it here


def kernel_piece(start: str, end: str) -> str:
    text = KERNEL.read_text()
    return text[text.index(start) : text.index(end)]


def wrap_piece() -> str:
    """pow2 and wrap, verbatim."""
    return kernel_piece("def pow2(", MARK + "(F-WRAP, scope=range_end)")


def product_piece() -> str:
    """prod, pow2, wrap and mul_exact, verbatim."""
    return kernel_piece("#@ function", MARK + "(F-WRAP, scope=range_start)\ndef mul_wrap")


def unproved(goals: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    return [g for g in goals if g[2] != "Valid"]


def test_F_F_WRAP_why3_proves_kernel_pieces(tmp_path):
    piece = tmp_path / "product_piece.py"
    piece.write_text(product_piece())
    goals = prove(piece)
    assert len(goals) >= 25
    assert unproved(goals) == []


@pytest.mark.parametrize(
    ("name", "piece", "old", "new"),
    [
        # a loop invariant that does not hold (off by one power of two)
        ("invariant", wrap_piece, "#@ invariant p == pow(2, k)", "#@ invariant p == pow(2, k + 1)"),
        # the signed wrap formula without the offset
        ("formula", wrap_piece, "return (x + h) % m - h", "return x % m - h"),
        # a wrong element-wise product
        ("product", product_piece, "c.append(prod(a[i], b[i]))", "c.append(prod(a[i], b[i]) + 1)"),
        # a wrong scalar product: the contracts are on `a[i] * b[i]`, not on `prod`
        ("prod", product_piece, "    return x * y\n", "    return x * y + 1\n"),
    ],
)
def test_negative_control_why3_rejects_a_planted_kernel_fault(tmp_path, name, piece, old, new):
    source = piece()
    assert old in source
    planted = tmp_path / f"planted_{name}.py"
    planted.write_text(source.replace(old, new))
    refused = unproved(prove(planted))
    assert refused, f"the planted {name} fault was proved"
    # refused within the steps, not for want of time
    assert not [g for g in refused if "Timeout" in g[2]], refused


def test_a_file_with_no_goal_is_a_failure(tmp_path):
    empty = tmp_path / "no_goal.py"
    empty.write_text("from typing import List\n\n\ndef f(x: int) -> int:\n    return x\n")
    with pytest.raises(AssertionError, match=r"no goal|why3"):
        prove(empty)
