"""Every test that starts an external prover or toolchain carries ``needs_prover``.

``make check`` runs ``-m "not needs_prover"``: lint and the tests that need
nothing ``make provers`` or ``make toolchains`` installs (apt-get as root).
``make test`` runs every test, marked or not; there this plugin (loaded by
``conftest.py``) watches each test's child processes through the
interpreter's audit hook (``subprocess.Popen`` events) and fails a test that
started one of :data:`TOOLS` without the marker, whether it started the
tool itself or through the tooling (``wp``, ``tables``, ``targets``, ...).
A tool started by a fixture counts for the test whose set-up ran it. What
it cannot see: a tool started by a grandchild (a Python child process that
runs the tooling); those tests are marked by hand, and a run of ``make
check`` without the tools on ``PATH`` finds a missing one.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Generator
from typing import Any

import pytest

MARKER = "needs_prover"
TOOLS = re.compile(
    r"why3|alt-ergo|z3|cvc[45]|coq[a-z]*|frama-c(-.*)?|cppcheck|clang(-[0-9.]+)?|"
    r"[a-z0-9_]+-linux-gnu[a-z]*-.*|qemu-.*"
)
"""Basenames of what make provers and make toolchains install: Why3 and its provers,
Coq (coqc), cppcheck, clang, the cross compilers and binutils, qemu-user. Not gcc (the
build of the product needs it)."""


class Starts:
    """The tools each test started, by node id (written by the audit hook only)."""

    def __init__(self) -> None:
        self._by_test: dict[str, set[str]] = {}

    def record(self, test: str, tool: str) -> None:
        self._by_test.setdefault(test, set()).add(tool)

    def pop(self, test: str) -> set[str]:
        return self._by_test.pop(test, set())


STARTS = Starts()


def tool_of(args: Any) -> str | None:
    """The tool ``args`` (a Popen argument list or command string) starts, if one of TOOLS."""
    if isinstance(args, str | bytes | os.PathLike):
        words = shlex.split(os.fsdecode(args)) if isinstance(args, str | bytes) else [args]
    else:
        try:
            words = list(args)
        except TypeError:
            return None
    if not words:
        return None
    name = os.path.basename(os.fsdecode(words[0]))
    return name if TOOLS.fullmatch(name) else None


def _node(current: str) -> str:
    """The node id in ``PYTEST_CURRENT_TEST`` (``FILE::TEST (call)``)."""
    return current.rsplit(" (", 1)[0]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen":
        return
    current = os.environ.get("PYTEST_CURRENT_TEST")
    tool = tool_of(args[1]) if len(args) > 1 else None
    if current and tool:
        STARTS.record(_node(current), tool)


def pytest_configure(config: pytest.Config) -> None:
    if not getattr(sys, "_sonnx_prover_audit", False):  # one hook per process
        sys.addaudithook(_hook)
        sys._sonnx_prover_audit = True  # type: ignore[attr-defined]


def unmarked(item: pytest.Item, tools: set[str]) -> str | None:
    """Why ``item`` fails the rule (it started ``tools`` without the marker), or None."""
    if not tools or item.get_closest_marker(MARKER) is not None:
        return None
    return (
        f"{item.nodeid} started {', '.join(sorted(tools))} but is not marked "
        f"{MARKER} (make check would run it without the tool): add "
        f"pytest.mark.{MARKER}"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if call.when != "call":  # the set-up's fixtures and the test itself have run
        return
    why = unmarked(item, STARTS.pop(item.nodeid))
    if why is not None and report.passed:
        report.outcome = "failed"
        report.longrepr = why
