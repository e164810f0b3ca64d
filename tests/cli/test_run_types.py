"""Issue 29, item 4: every element type of the profile through ``sonnx-mul run``, from files.

A model ``z = Mul(x, y)`` of each of the 12 types is run from ``.npy`` files
written by ``np.save`` (bfloat16: the ml_dtypes array, which ``np.save``
stores as ``<V2``, two raw bytes per element); the output file, read back
(bfloat16 viewed from its ``V2`` bytes), has the bits of ``sonnx_mul.mul``.
Before issue 29 the bfloat16 input was refused (the ``V2`` header is not
bfloat16), so no bfloat16 model could be run from the command line.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper as h

from models import mul_model
from sonnx_mul import mul
from sonnx_mul.cli import main
from sonnx_mul.dtypes import ALL_TYPES, ElementType
from support import assert_same_bits

BF16 = np.dtype(ml_dtypes.bfloat16)


def operands(etype: ElementType) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(29)
    if etype.is_float:
        a = rng.normal(0, 100, (2, 3)).astype(np.float32).astype(etype.dtype)
        b = rng.normal(0, 100, (2, 3)).astype(np.float32).astype(etype.dtype)
        return a, b
    lo, hi = max(etype.lo, -1000), min(etype.hi, 1000)
    return (rng.integers(lo, hi, (2, 3)).astype(etype.dtype),
            rng.integers(lo, hi, (2, 3)).astype(etype.dtype))  # fmt: skip


def read_output(path: Path, dtype: np.dtype) -> np.ndarray:
    """An output .npy as the type the model gives (bfloat16: its V2 bytes viewed)."""
    array = np.load(path, allow_pickle=False)
    return array.view(BF16) if dtype == BF16 and array.dtype.kind == "V" else array


def test_the_profile_has_twelve_types() -> None:
    assert len(ALL_TYPES) == 12


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_F_run_every_element_type_from_npy_files(
    etype: ElementType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = h.np_dtype_to_tensor_dtype(etype.dtype)
    path = tmp_path / "m.onnx"
    onnx.save(mul_model((2, 3), (2, 3), code, opset=14), path)
    a, b = operands(etype)
    np.save(tmp_path / "x.npy", a)
    np.save(tmp_path / "y.npy", b)
    if etype.dtype == BF16:  # the on-disk form np.save gives an ml_dtypes bfloat16 array
        assert np.load(tmp_path / "x.npy").dtype == np.dtype("V2")
    argv = ["run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
            "--input", f"y={tmp_path / 'y.npy'}", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    result = read_output(tmp_path / "out" / "z.npy", etype.dtype)
    assert result.dtype == etype.dtype and result.shape == (2, 3)
    assert_same_bits(result, mul(a, b))


def test_negative_control_two_raw_bytes_are_not_float16(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The V2 form is read as bfloat16 only where the model declares bfloat16: for a
    float16 input, and as a structured 2-byte type for a bfloat16 input, it is refused."""
    raw = np.ones((2, 3), BF16)
    for code, stored, name in (
        (onnx.TensorProto.FLOAT16, raw, "float16"),
        (onnx.TensorProto.BFLOAT16, np.zeros((2, 3), [("hi", "u1"), ("lo", "u1")]), "bfloat16"),
    ):
        path = tmp_path / f"{name}.onnx"
        onnx.save(mul_model((2, 3), (2, 3), code), path)
        np.save(tmp_path / "x.npy", stored)
        np.save(tmp_path / "y.npy", stored)
        argv = ["run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                "--input", f"y={tmp_path / 'y.npy'}", "--out", str(tmp_path / "out")]  # fmt: skip
        assert main(argv) == 2
        assert "input 'x'" in capsys.readouterr().err
