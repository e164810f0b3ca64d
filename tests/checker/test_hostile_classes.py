"""The bench's hostile classes (tests/hostile_files.py, ``bench_classes``) are what their
rows say they are, and the bench builds them from that support module only.

Each class gets the verdict its row names: lists at the cap are checked, lists summing
past it and a merged tensor's repeats are refused within the memory bound, ints
interleaved with floats are invalid as onnx.checker says, nesting at the decoding limit
is checked, the 11-byte varint is unreadable (the walker refuses it, protobuf too), and
the interleaved-list files conform. The bench (benchmarks/) imports no test module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hostile_files
from sonnx_mul.models import ModelReadError, check_report, wire

ROOT = Path(__file__).resolve().parents[2]
CLASSES = hostile_files.bench_classes()
EXPECTED = {
    "lists at the cap": "checked",
    "lists summing past the cap": "memory bound",
    "repeated singular field": "memory bound",
    "interleaved fields: ints with floats": "onnx.checker",
    "nesting": "checked",
    "the 11-byte varint": "cannot read",
    "interleaved fields: ints with the name": "checked",
}


def _expected(name: str) -> str:
    (verdict,) = [v for prefix, v in EXPECTED.items() if name.startswith(prefix)]
    return verdict


def test_every_class_of_the_bound_has_a_row() -> None:
    for prefix in EXPECTED:
        assert any(name.startswith(prefix) for name in CLASSES), prefix
    sizes = [len(d) for n, d in CLASSES.items() if n.startswith("interleaved fields: ints with")]
    assert len(sizes) == 5  # the floats and the four sizes of the linearity rows
    mb = [len(d) / 2**20 for n, d in CLASSES.items() if n.endswith(" MB")]
    assert [round(x) for x in mb] == [1, 2, 4, 8]


@pytest.mark.parametrize(
    "name", [n for n in CLASSES if not n.endswith((" 2 MB", " 4 MB", " 8 MB"))]
)
def test_each_class_gets_the_verdict_its_row_names(name: str) -> None:
    data = CLASSES[name]
    expected = _expected(name)
    if expected == "checked":
        report = check_report(data)
        assert report.mul_nodes >= 1 or name.startswith("lists at the cap")
        return
    with pytest.raises(ModelReadError, match=expected):
        check_report(data)


def test_the_long_varint_is_refused_by_the_walker_itself() -> None:
    with pytest.raises(wire.WireError, match="malformed varint"):
        wire.strip_lists(hostile_files.long_varint_file(), hostile_files.LIMIT)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_the_bench_imports_no_test_module() -> None:
    bench = ROOT / "benchmarks" / "checker_hostile.py"
    assert "hostile_files" in _imports(bench)
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tests = {m for m in _imports(path) if m.split(".")[-1].startswith("test_")}
        assert tests == set(), path.name
