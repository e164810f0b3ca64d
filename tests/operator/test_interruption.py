"""F-NOLOSS: an interruption never leaves ``out`` half written.

Every element is written by one call of the native glue, which runs no
Python code and checks no signal until it returns: a KeyboardInterrupt (or
any asynchronous exception) lands before that call (``out`` keeps its old
values) or after it (``out`` holds the complete product), and nothing
writes into ``out`` once ``mul`` has raised (no worker threads).

This replaces the threaded path of the old numpy wrapper, where an
interrupt landing between the start of the workers and the calling
thread's own first chunk left ``out`` half written (issue 20).
"""

from __future__ import annotations

import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul import IntegerOverflowError, _native, api, mul

PACKAGE = str(Path(sonnx_mul.__file__).resolve().parent)


def interrupted_at(
    step: int, call: Callable[[], object], where: tuple[str, ...] = (PACKAGE,)
) -> tuple[bool, BaseException | None]:
    """Run ``call`` with a KeyboardInterrupt raised at its ``step``-th bytecode
    inside the Python code of ``where`` (sonnx_mul's files); (whether that step
    was reached, what the call raised)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if not frame.f_code.co_filename.startswith(where):
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
            if count == step:
                raise KeyboardInterrupt(f"step {step}")
        return trace

    sys.settrace(trace)
    try:
        call()
    except BaseException as err:  # what the interrupted call raised
        return count >= step, err
    finally:
        sys.settrace(None)
    return count >= step, None


def state_of(out: np.ndarray, old: np.ndarray, new: np.ndarray) -> str:
    if np.array_equal(out, old):
        return "old"
    if np.array_equal(out, new):
        return "new"
    return "MIXED"


CALLS = {
    "plain lane": {},
    "full checks": {"overflow": "".join(["wr", "ap"])},
    "error mode": {"overflow": "error"},
    "opset 13": {"opset": 13},
}


def states_under_interrupts(
    kwargs: dict[str, Any], layout: str, where: tuple[str, ...] = (PACKAGE,)
) -> list[str]:
    """The state of out after an interrupt at each bytecode of mul in turn, then unhindered.

    2**21 elements: the size from which the retired numpy wrapper split the
    product over threads; this test found it leaving out half written
    (MIXED from the 337th bytecode of its 427, run on that code)."""
    n = 1 << 21
    a = np.arange(n, dtype=np.int32).reshape(8, -1)
    b = np.full(a.shape, 3, np.int32)
    if layout == "strided":
        a, b = a[:, ::-1], b[::-1]
    old = np.full(a.shape, -7, np.int32)
    new = a * b
    states = []
    step = 0
    while True:
        step += 1
        out = old.copy()
        reached, raised = interrupted_at(step, lambda out=out: mul(a, b, out=out, **kwargs), where)
        states.append(state_of(out, old, new))
        if not reached:
            assert raised is None and states[-1] == "new"
            return states
        assert isinstance(raised, KeyboardInterrupt)


@pytest.mark.parametrize("kwargs", CALLS.values(), ids=CALLS.keys())
@pytest.mark.parametrize("layout", ["C", "strided"])
def test_F_NOLOSS_an_interrupt_at_any_bytecode_leaves_out_old_or_complete(kwargs, layout):
    states = states_under_interrupts(kwargs, layout)
    assert "MIXED" not in states, states.index("MIXED")
    assert len(states) > 8  # the Python code around the kernel call was really stepped through
    assert states[0] == "old" and states[-1] == "new"


def test_negative_control_a_mul_written_in_two_native_calls_is_caught(monkeypatch):
    # Python between two kernel calls (as between the old threaded chunks):
    # an interrupt there leaves out half written, and the test above sees it.
    def two_calls(a: np.ndarray, b: np.ndarray, out: np.ndarray, checked: bool) -> np.ndarray:
        half = a.shape[0] // 2
        _native.multiply(a[:half], b[:half], out[:half], checked)
        _native.multiply(a[half:], b[half:], out[half:], checked)
        return out

    monkeypatch.setattr(api, "_PLAIN", None)  # the checked path, which calls _MULTIPLY
    monkeypatch.setattr(api, "_MULTIPLY", two_calls)
    states = states_under_interrupts({}, "C", (PACKAGE, __file__))
    assert "MIXED" in states


def test_F_NOLOSS_an_interrupt_never_splits_an_overflow_refusal():
    x = np.full(1000, 100, np.int8)
    out = np.full(1000, 1, np.int8)
    step = 0
    while True:
        step += 1
        reached, raised = interrupted_at(step, lambda: mul(x, x, out=out, overflow="error"))
        assert np.all(out == 1)  # refused or interrupted: nothing written, ever
        if not reached:
            assert isinstance(raised, IntegerOverflowError)
            break
        assert isinstance(raised, (KeyboardInterrupt, IntegerOverflowError))
    assert step > 8


def test_F_NOLOSS_real_sigints_never_split_a_call():
    """SIGINT from another thread at seeded random moments around large
    mul(..., out=out) calls (the GIL released inside): each interrupted call
    leaves out old or complete, and nothing changes it afterwards."""
    assert threading.current_thread() is threading.main_thread()  # signals go there
    main = threading.main_thread().ident
    assert main is not None
    n = 1 << 22
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2, np.float32)
    new, old = a * b, np.full(n, -1, np.float32)
    out = old.copy()
    start = time.perf_counter()
    mul(a, b, out=out)
    duration = time.perf_counter() - start
    rng = random.Random(20)
    in_call = [False]
    handled: list[bool] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        handled.append(in_call[0])
        if in_call[0]:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    states = []
    try:
        for _ in range(25):
            np.copyto(out, old)
            count = len(handled)
            timer = threading.Timer(
                rng.uniform(0, 1.5 * duration), signal.pthread_kill, (main, signal.SIGINT)
            )
            interrupted = False
            try:
                in_call[0] = True
                timer.start()
                mul(a, b, out=out)
                in_call[0] = False
            except KeyboardInterrupt:
                interrupted = True
                in_call[0] = False
            timer.join()
            while len(handled) == count:  # the signal is handled before the next round
                time.sleep(0.001)
            snapshot = out.copy()
            time.sleep(0.002)
            assert np.array_equal(out, snapshot)  # nothing writes after mul returned or raised
            state = (
                "new"
                if np.array_equal(out, new)
                else "old"
                if np.array_equal(out, old)
                else "MIXED"
            )
            states.append((interrupted, state))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert all(state != "MIXED" for _, state in states), states
    assert all(state == "new" for interrupted, state in states if not interrupted)
