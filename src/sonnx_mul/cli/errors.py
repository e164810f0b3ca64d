"""What every ``sonnx-mul`` subcommand shares: the command record, its errors, exit codes.

A subcommand is a :class:`Command`; the product's own are listed in
:mod:`sonnx_mul.cli`, others (the assurance tooling's ``prove``, ``report``,
``conform``) are found through the ``sonnx_mul.commands`` entry-point group,
so that the product never imports them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from sonnx_mul_verify import StoreOnce

EXIT_OK, EXIT_VIOLATIONS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class CliError(Exception):
    """A failure reported by ``main`` as one line with ``exit_code``."""

    exit_code = EXIT_VIOLATIONS


class UsageError(CliError):
    """A wrong call, an unreadable input or an unwritable output (exit 2)."""

    exit_code = EXIT_USAGE


_StoreOnce = StoreOnce
"""A single-valued option given twice is a wrong call: the verifier's definition
(``sonnx_mul_verify.StoreOnce``), shared so that every subcommand, verify-install
included, judges a repeat alike."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, and
    refuses a single-valued option given twice (``_StoreOnce``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")
