"""Reading untrusted model files: regular files only, a byte cap, no blocking.

Files are opened through :mod:`sonnx_mul.regular` (``O_NONBLOCK``, judged by
``fstat`` on the open descriptor): anything but a regular file — FIFO,
character or block device such as ``/dev/zero``, directory, socket — is
refused before a single byte is read. At most ``limit + 1`` bytes are read,
so a file that grows while being read cannot exceed the cap either.
"""

from __future__ import annotations

import os

from ..regular import read_bytes


class ModelReadError(ValueError):
    """The model could not be read (missing file, not an ONNX model, invalid, ...)."""


MAX_MODEL_BYTES = (2 << 30) - 1
"""ONNX models: protobuf's own 2 GiB message limit (a bigger file cannot parse)."""

MAX_IR_BYTES = 256 << 20
"""OpenVINO IR XML: weights live in the .bin file, never read; 256 MiB of XML is ample."""


def read_limited(path: str | os.PathLike[str], limit: int, what: str) -> bytearray:
    """The bytes of a regular file of at most ``limit`` bytes; ModelReadError otherwise.

    Opened by :func:`sonnx_mul.regular.open_regular` (non-blocking, refused
    unless a regular file), the one helper for every file a user names.
    """
    try:
        return read_bytes(path, limit)
    except (OSError, ValueError) as exc:
        raise ModelReadError(f"cannot read {what}: {exc}") from exc
