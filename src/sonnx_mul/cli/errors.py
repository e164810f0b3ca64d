"""What every ``sonnx-mul`` subcommand shares: the command record, its errors, exit codes.

A subcommand is a :class:`Command`; the product's own are listed in
:mod:`sonnx_mul.cli`, others (the assurance tooling's ``prove``, ``report``,
``conform``) are found through the ``sonnx_mul.commands`` entry-point group,
so that the product never imports them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

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


class _StoreOnce(argparse._StoreAction):
    """A single-valued option given twice is a wrong call (argparse keeps the last).

    Repeatable options use ``action="append"``; their repeats are judged by
    the subcommand (the same ``--dim NAME`` twice is refused there).
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_given_once", set())
        if option_string is not None and self.dest in seen:
            parser.error(f"{option_string} is given more than once")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, and
    refuses a single-valued option given twice (``_StoreOnce``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")
