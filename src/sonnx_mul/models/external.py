"""External data of a model, for ``sonnx-mul run`` only (the checker never loads it).

Read through onnx's own checked loader (``onnx.load_external_data_for_model``:
no location may leave the model's folder); each file it would open is first
opened through :func:`sonnx_mul.regular.open_regular`, so a FIFO or a device
is refused instead of blocking. Every failure is a ``ModelReadError``.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx.external_data_helper import _get_all_tensors  # every tensor, subgraphs included

from ..regular import open_regular
from .reading import ModelReadError


def load_external_data(model: onnx.ModelProto, base_dir: Path) -> None:
    """Load external weights with onnx's own path checks (no escape from base_dir).

    onnx opens the files with a plain ``open()``: each file it would read is
    first opened through :func:`sonnx_mul.regular.open_regular`, so a FIFO or a
    device is refused (exit 2) instead of blocking the command. Locations
    that leave ``base_dir`` are not opened here at all: onnx refuses them.
    """
    base = base_dir.resolve()
    for tensor in _get_all_tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        path = Path(location)
        if not location or path.is_absolute() or ".." in path.parts:
            continue
        target = (base / path).resolve()
        if not target.is_relative_to(base) or not os.path.lexists(base / path):
            continue
        try:
            open_regular(target).close()
        except OSError as exc:
            raise ModelReadError(f"cannot load the model's external data: {exc}") from exc
    try:
        onnx.load_external_data_for_model(model, str(base_dir))
    except Exception as exc:
        raise ModelReadError(f"cannot load the model's external data: {exc}") from exc
