"""Reading untrusted model files: regular files only, a byte cap, no blocking.

The file is opened with ``O_NONBLOCK`` (a FIFO then opens without waiting
for a writer) and judged by ``fstat`` on the open descriptor (no race with a
rename between check and read): anything but a regular file — FIFO,
character or block device such as ``/dev/zero``, directory, socket — is
refused before a single byte is read. At most ``limit + 1`` bytes are read,
so a file that grows while being read cannot exceed the cap either.
"""

from __future__ import annotations

import os
import stat


class ModelReadError(ValueError):
    """The model could not be read (missing file, not an ONNX model, invalid, ...)."""


MAX_MODEL_BYTES = (2 << 30) - 1
"""ONNX models: protobuf's own 2 GiB message limit (a bigger file cannot parse)."""

MAX_IR_BYTES = 256 << 20
"""OpenVINO IR XML: weights live in the .bin file, never read; 256 MiB of XML is ample."""


def read_limited(path: str | os.PathLike[str], limit: int, what: str) -> bytearray:
    """The bytes of a regular file of at most ``limit`` bytes; ModelReadError otherwise."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ModelReadError(f"cannot read {what}: {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _kind(info.st_mode)
            raise ModelReadError(f"cannot read {what}: {name!r} is {kind}, not a regular file")
        if info.st_size > limit:
            raise ModelReadError(
                f"cannot read {what}: {info.st_size} bytes, over the {limit}-byte cap"
            )
        # One buffer of the announced size (+1 to see growth): no chunk list joined
        # into a second copy, so reading costs the file's size once (issue 21, memory).
        buffer = bytearray(info.st_size + 1)
        view = memoryview(buffer)
        size = 0
        while size <= limit:
            if size == len(buffer):
                view.release()  # a buffer with a live view cannot be resized
                buffer.extend(bytes(min(1 << 20, limit + 1 - size)))  # it grew: read on
                view = memoryview(buffer)
            got = os.readv(fd, [view[size:]])
            if not got:
                break
            size += got
        view.release()
        if size > limit:
            raise ModelReadError(f"cannot read {what}: it grew over the {limit}-byte cap")
        del buffer[size:]
        return buffer
    except OSError as exc:
        raise ModelReadError(f"cannot read {what}: {exc}") from exc
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"
