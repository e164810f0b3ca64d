"""Files of ``sonnx-mul run``: inputs checked before they are used, outputs named safely.

An input ``.npy`` is refused (``UsageError``, naming the input) unless its
header is a plain ``.npy`` header whose data the file really holds, and its
element type and shape are the ones the model declares for that input (a
bfloat16 input may be stored as ``np.save`` writes an ml_dtypes bfloat16
array: ``|V2``, two raw bytes per element). A file in the
other byte order is read by value (numpy swaps standard types) or refused:
raw bytes whose header names the other order (``'>V2'``) would be
reinterpreted, and are refused (exit 2). The
header is read and checked before any array is allocated, so a header
claiming a huge shape costs nothing. Output files are named from the output
names; two outputs that would land in the same file are refused.
"""

from __future__ import annotations

import ast
import math
import os
import re
import struct
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import helper
from onnx.reference.op_run import OpRun

from ..dtypes import element_type
from ..regular import open_regular
from ..validation import describe_dtype
from .errors import UsageError

Dim = int | str | None
"""A declared dimension: a size, a symbol, or unknown."""


def input_files(specs: list[str]) -> dict[str, str]:
    """``NAME=FILE`` specs as a dict; malformed or repeated names are UsageError."""
    files: dict[str, str] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise UsageError(f"--input expects NAME=FILE.npy, got {spec!r}")
        if name in files:
            raise UsageError(f"--input {name}= is given twice ({files[name]} and {file})")
        files[name] = file
    return files


def read_inputs(model: onnx.ModelProto, files: dict[str, str]) -> dict[str, np.ndarray]:
    """Every declared graph input read from its file, checked against its declaration."""
    initialized = {t.name for t in model.graph.initializer}
    declared = {v.name: v for v in model.graph.input}
    required = [name for name in declared if name not in initialized]
    missing = [name for name in required if name not in files]
    unknown = [name for name in files if name not in declared]
    if missing or unknown:
        raise UsageError(f"missing inputs {missing}, unknown inputs {unknown}")
    bound: dict[str, tuple[int, str]] = {}  # symbolic dim -> (size, input that fixed it)
    return {name: _read_input(name, file, declared[name], bound) for name, file in files.items()}


def _read_input(
    name: str, file: str, info: onnx.ValueInfoProto, bound: dict[str, tuple[int, str]]
) -> np.ndarray:
    dtype, shape = _declared(name, info)
    try:
        with open_regular(file) as f:  # a FIFO or a device is refused, never waited on
            found_dtype, found_shape, fortran = _header(name, file, f)
            raw_bfloat16 = dtype == BFLOAT16 and _bfloat16_on_disk(found_dtype)
            if raw_bfloat16:
                _refuse_foreign_raw_order(name, file, f)
                found_dtype = BFLOAT16
            if dtype is not None and found_dtype.newbyteorder("=") != dtype:
                raise UsageError(
                    f"input {name!r}: {file} holds {type_label(found_dtype)}, the model "
                    f"declares {type_label(dtype)}"
                )
            _check_shape(name, file, found_shape, shape, bound)
            f.seek(0)
            array: np.ndarray = np.lib.format.read_array(f, allow_pickle=False)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UsageError(f"cannot read input {name!r} from {file}: {why}") from exc
    del fortran
    return array.view(BFLOAT16) if raw_bfloat16 else array


BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
"""The bfloat16 of the profile (what onnx.numpy_helper returns for BFLOAT16)."""


def _bfloat16_on_disk(found: np.dtype) -> bool:
    """The header type ``np.save`` writes for an ml_dtypes bfloat16 array: ``<V2``/``|V2``.

    The .npy format has no name for bfloat16, so numpy stores it as two raw
    bytes; when the model declares bfloat16 for the input, those bytes are
    read as bfloat16 (``view``: no conversion). A structured or padded type of
    two bytes is not this form and stays refused.
    """
    return (
        found.kind == "V"
        and found.itemsize == 2
        and found.fields is None
        and found.subdtype is None
    )


NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"


def _refuse_foreign_raw_order(name: str, file: str, f: Any) -> None:
    """Raw bytes (``V``) whose header names the other byte order are refused (exit 2).

    numpy keeps no byte order for a ``V`` type (``'>V2'`` loads as ``'|V2'``),
    so two raw bytes written big-endian would be read as little-endian bfloat16
    bits: other values. Standard types (``'>f4'``, ``'>i2'``) are read by
    value (numpy swaps them); raw bytes are read only in this machine's order
    (``'|V2'``, or ``'<V2'`` on a little-endian machine: what ``np.save``
    writes for an ml_dtypes bfloat16 array here), never reinterpreted.
    """
    descr = _header_descr(f)
    if isinstance(descr, str) and descr[:1] in "<>" and descr[:1] != NATIVE_ORDER:
        order = "big" if descr[0] == ">" else "little"
        raise UsageError(
            f"input {name!r}: {file} holds {descr!r}: raw bytes stored {order}-endian, "
            f"which this {sys.byteorder}-endian machine would reinterpret; raw-byte types "
            "(bfloat16 as np.save writes it) are read only in the machine's byte order "
            "(the .npy byte-order rule: by value or refused)"
        )


def _header_descr(f: Any) -> object:
    """The ``descr`` field of a .npy header exactly as written (the file is left at 0).

    The header was checked by :func:`_header`; this reads its text again, since
    numpy's parsed dtype has dropped the byte order of raw-byte types.
    """
    f.seek(0)
    version = np.lib.format.read_magic(f)
    size = struct.unpack("<H" if version == (1, 0) else "<I", f.read(2 if version == (1, 0) else 4))
    header = f.read(size[0]).decode("latin1")
    f.seek(0)
    fields = ast.literal_eval(header)
    return fields.get("descr") if isinstance(fields, dict) else None


def _header(name: str, file: str, f: Any) -> tuple[np.dtype, tuple[int, ...], bool]:
    """dtype, shape, fortran order of a .npy header whose data the file holds."""
    fmt = np.lib.format
    start = f.read(6)
    f.seek(0)
    if start[:4] == b"PK\x03\x04":
        raise UsageError(
            f"input {name!r}: {file} is a .npz archive; give each array as its own .npy file"
        )
    try:
        version = fmt.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(f)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except ValueError as exc:
        raise UsageError(f"input {name!r}: {file} is not a readable .npy file: {exc}") from exc
    if dtype.hasobject:
        raise UsageError(f"input {name!r}: {file} holds Python objects, which are never loaded")
    nbytes = math.prod(shape) * dtype.itemsize
    available = os.fstat(f.fileno()).st_size - f.tell()
    if nbytes > available:
        raise UsageError(
            f"input {name!r}: {file} claims shape {shape} ({nbytes} bytes of data) but holds "
            f"{available} bytes"
        )
    return dtype, shape, fortran


def _declared(name: str, info: onnx.ValueInfoProto) -> tuple[np.dtype | None, list[Dim] | None]:
    """The element type and shape the model declares for input ``name`` (None: unknown)."""
    kind = info.type.WhichOneof("value")
    if kind is None:
        return None, None
    if kind != "tensor_type":
        raise UsageError(f"input {name!r} is a {kind}, not a tensor; a .npy file cannot give it")
    tensor = info.type.tensor_type
    dtype = (
        np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)) if tensor.elem_type else None
    )
    if not tensor.HasField("shape"):
        return dtype, None
    dims: list[Dim] = [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim
    ]
    return dtype, dims


def _check_shape(
    name: str,
    file: str,
    found: tuple[int, ...],
    declared: list[Dim] | None,
    bound: dict[str, tuple[int, str]],
) -> None:
    if declared is None:
        return
    shown = "(" + ", ".join("?" if d is None else str(d) for d in declared) + ")"
    if len(found) != len(declared) or any(
        isinstance(d, int) and d != n for d, n in zip(declared, found, strict=False)
    ):
        raise UsageError(f"input {name!r}: {file} has shape {found}, the model declares {shown}")
    for d, n in zip(declared, found, strict=True):
        if isinstance(d, str):
            size, first = bound.setdefault(d, (n, name))
            if size != n:
                raise UsageError(
                    f"input {name!r}: {file} has {d}={n} in shape {found}, but input "
                    f"{first!r} has {d}={size}"
                )


def type_label(dtype: np.dtype) -> str:
    """The API's vocabulary (``validation.describe_dtype``): ``float (float32)``, ``int8``.

    Types outside the profile (a model input may be bool or string) get
    their ONNX name by the same rule when ONNX has one.
    """
    if element_type(dtype) is not None:
        return describe_dtype(dtype)
    native = dtype.newbyteorder("=")
    try:
        onnx_name = onnx.TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(native)).lower()
    except (KeyError, TypeError, ValueError):
        return describe_dtype(dtype)
    return onnx_name if onnx_name == native.name else f"{onnx_name} ({native.name})"


def output_files(model: onnx.ModelProto, out_dir: Path) -> list[tuple[str, Path]]:
    """(output name, file) in graph order; UsageError when two would share a file."""
    targets: list[tuple[str, Path]] = []
    owners: dict[str, str] = {}
    for output in model.graph.output:
        filename = f"{safe_filename(output.name)}.npy"
        key = filename.casefold()  # case-insensitive file systems
        if key in owners:
            raise UsageError(
                f"outputs {owners[key]!r} and {output.name!r} would both be written to "
                f"{out_dir / filename}; nothing was run"
            )
        owners[key] = output.name
        targets.append((output.name, out_dir / filename))
    return targets


def safe_filename(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_.-]`` replaced by ``_``."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return cleaned if cleaned.strip(".") else f"_{cleaned}"


def failing_node(exc: BaseException) -> str | None:
    """``'name' (OpType)`` of the innermost operator whose frame raised ``exc`` (or its causes)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    found: str | None = None
    while current is not None and id(current) not in seen and found is None:
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            op = tb.tb_frame.f_locals.get("self")
            if isinstance(op, OpRun) and getattr(op, "onnx_node", None) is not None:
                node = op.onnx_node
                found = (
                    f"{node.name or '(unnamed)'!r} ({node.op_type}, outputs {list(node.output)})"
                )
            tb = tb.tb_next
        current = current.__cause__ or current.__context__
    return found
