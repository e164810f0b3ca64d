"""Opening files named by a user: regular files only, never a blocking open.

The one helper every reader of the product goes through (models, IR XML,
``.npy`` inputs, a model's external data; ``verify-install``'s verifier,
outside the package, has its own copy of the same rule). The file is opened
with ``O_NONBLOCK`` (a FIFO then opens at once instead of waiting for a
writer) and judged by ``fstat`` on the open descriptor, so there is no race
between a check and the open: anything but a regular file — FIFO, character
or block device such as ``/dev/zero``, directory, socket — is refused with
:class:`NotRegularFileError` before a byte is read. ``follow_symlinks=False``
also refuses a symbolic link (``O_NOFOLLOW``).
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class NotRegularFileError(OSError):
    """The path names something that is not a regular file (or a refused symlink)."""


def kind(mode: int) -> str:
    """``'a FIFO'``, ``'a directory'``, ... for an ``st_mode`` that is not a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(
    path: str | os.PathLike[str], *, follow_symlinks: bool = True
) -> io.BufferedReader:
    """``path`` opened for binary reading; NotRegularFileError unless a regular file.

    Other failures (missing file, no permission, ``ELOOP`` for a refused
    symlink, which becomes NotRegularFileError) are the ``OSError`` of the open.
    """
    name = os.fspath(path)
    flags = _FLAGS | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(name):
            raise NotRegularFileError(
                f"{name!r} is a symbolic link, which is not followed"
            ) from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(f"{name!r} is {kind(info.st_mode)}, not a regular file")
        return io.open(fd, "rb", closefd=True)  # noqa: UP020  (an fd, not a path)
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str] | Path, limit: int) -> bytearray:
    """All bytes of the regular file ``path``; ValueError when over ``limit`` bytes.

    At most ``limit + 1`` bytes are read, so a file growing while it is read
    is refused too. The bytes land in one buffer of the announced size (no
    chunk list joined into a second copy): reading costs the file's size
    once, which bounds the checker's peak memory (issue 21).
    """
    with open_regular(path) as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        if size > limit:
            raise ValueError(f"{size} bytes, over the {limit}-byte cap")
        buffer = bytearray(size + 1)  # +1 to see growth
        view = memoryview(buffer)
        done = 0
        while done <= limit:
            if done == len(buffer):
                view.release()  # a buffer with a live view cannot be resized
                buffer.extend(bytes(min(1 << 20, limit + 1 - done)))  # it grew: read on
                view = memoryview(buffer)
            got = os.readv(fd, [view[done:]])
            if not got:
                break
            done += got
        view.release()
    if done > limit:
        raise ValueError(f"it grew over the {limit}-byte cap")
    del buffer[done:]
    return buffer
