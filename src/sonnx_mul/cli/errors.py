"""What every ``sonnx-mul`` subcommand shares: the command record, its errors, exit codes.

A subcommand is a :class:`Command`; the product's own are listed in
:mod:`sonnx_mul.cli`, others (the assurance tooling's ``prove``, ``report``,
``conform``) are found through the ``sonnx_mul.commands`` entry-point group,
so that the product never imports them. The error contract (the raising
parser, the one-line failure, the exit codes of an interrupt and a closed
pipe) is the verifier's (``sonnx_mul_verify``, standard library only,
outside the package), written once there: the verifier imports nothing of
the package, the package imports the contract from it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import sonnx_mul_verify as contract
from sonnx_mul_verify import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_OK

__all__ = [
    "EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "EXIT_VIOLATIONS",
    "CliError", "Command", "UsageError", "_Parser",
]  # fmt: skip

EXIT_VIOLATIONS = contract.EXIT_MISMATCH
"""1: violations found, a profile error or a failed step."""
EXIT_USAGE = contract.EXIT_UNREADABLE
"""2: a wrong call, an unreadable input, an unwritable output."""


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


class UsageError(CliError, contract.UsageError):
    """A wrong call, an unreadable input or an unwritable output (exit 2)."""

    exit_code = EXIT_USAGE


class _Parser(contract.Parser):
    """The verifier's parser (raises instead of printing usage and exiting, refuses a
    single-valued option given twice), raising this package's :class:`UsageError`."""

    usage_error = UsageError
