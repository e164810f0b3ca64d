"""Concurrency: many threads calling mul at once give identical results; no mutable module state."""

import importlib
import pkgutil
import signal
import threading
import time
import types

import numpy as np
import pytest

import sonnx_mul
from sonnx_mul import IntegerOverflowError, fastpath, mul
from support import assert_same_bits

MUTABLE = (list, dict, set, bytearray)


def test_F_many_threads_on_shared_read_only_inputs_agree(monkeypatch):
    monkeypatch.setattr(fastpath, "PARALLEL_MIN_ELEMENTS", 4096)  # nest the threaded path too
    rng = np.random.default_rng(9)
    a = rng.standard_normal((64, 100)).astype(np.float32)
    b = rng.standard_normal((64, 100)).astype(np.float32)
    ints = rng.integers(-(2**40), 2**40, 6400, dtype=np.int64)
    for x in (a, b, ints):
        x.flags.writeable = False
    expected = mul(a, b)
    results: list[np.ndarray] = []
    problems: list[BaseException] = []
    barrier = threading.Barrier(16)

    def worker() -> None:
        try:
            barrier.wait()
            for _ in range(50):
                results.append(mul(a, b))
                with pytest.raises(IntegerOverflowError):
                    mul(ints, ints, overflow="error")
        except BaseException as err:
            problems.append(err)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:3]
    assert len(results) == 16 * 50
    for result in results:
        assert_same_bits(result, expected)


def test_F_ieee_quiet_state_does_not_leak_into_the_caller():
    before = np.geterr()
    mul(np.array([1e308]), np.array([1e308]))
    assert np.geterr() == before


def test_no_mutable_module_state():
    modules = [sonnx_mul] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(sonnx_mul.__path__, "sonnx_mul.")
        if not info.name.endswith("__main__")
    ]
    found = [
        f"{module.__name__}.{name}"
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("__") and isinstance(value, MUTABLE)
    ]
    # The one exception: the recycled result buffers, only read or changed
    # with arena._lock held (tests/operator/test_arena.py hammers it from threads).
    assert found == ["sonnx_mul.arena._buffers"], f"module-level mutable containers: {found}"


@pytest.mark.parametrize(("sender", "written"), [(0, False), (-1, True)])
def test_F_NOLOSS_interrupted_threaded_mul_leaves_no_worker_writing(monkeypatch, sender, written):
    """Ctrl-C during a threaded mul(out=...): mul raises only after every worker ended.

    Worker ``sender`` sends SIGINT to the main thread, then dawdles before
    its chunk: the first one while the others are being started (no worker
    may write), the last one while the main thread waits (all must finish).
    When mul propagates the KeyboardInterrupt no worker may be alive, and
    out must be untouched or completely written, and stay so.
    """
    assert threading.current_thread() is threading.main_thread()  # signals go there
    main_id = threading.main_thread().ident
    assert main_id is not None
    sent = threading.Event()

    class InterruptingThread(threading.Thread):
        def start(self) -> None:
            if sender == 0 and self is made[1]:
                time.sleep(0.3)  # the signal from worker 0 lands here, mid start-up
            super().start()

        def run(self) -> None:
            if self is made[sender]:
                time.sleep(0.0 if sender == 0 else 0.1)  # the main thread is past start-up
                sent.set()
                signal.pthread_kill(main_id, signal.SIGINT)
            time.sleep(0.3)
            super().run()

    made: list[threading.Thread] = []

    def make_thread(*args, **kwargs):
        made.append(InterruptingThread(*args, **kwargs))
        return made[-1]

    fake = types.SimpleNamespace(Thread=make_thread, Event=threading.Event)
    monkeypatch.setattr(fastpath, "threading", fake)
    monkeypatch.setattr(fastpath, "_THREADS", 4)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    n = fastpath.PARALLEL_MIN_ELEMENTS
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 2, np.float32)
    out = np.full(n, -1, np.float32)
    try:
        with pytest.raises(KeyboardInterrupt):
            mul(a, b, out=out)
        alive = [t for t in made if t.is_alive()]
        snapshot = out.copy()
        time.sleep(0.5)
    finally:
        signal.signal(signal.SIGINT, previous)
        for thread in made:
            if thread.ident is not None:  # started
                thread.join()
    assert made and not alive
    assert_same_bits(out, snapshot)  # nothing was written after mul raised
    assert sent.is_set()
    expected = a * b if written else np.full(n, -1, np.float32)
    assert_same_bits(snapshot, expected)


def test_F_FLOAT_small_lane_while_its_quiet_context_is_busy():
    """Another thread inside the quiet context: mul takes the other quiet path, same bits."""
    from sonnx_mul import api

    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        entered.set()
        release.wait()

    holder = threading.Thread(target=api._QUIET_CONTEXT.run, args=(hold,))
    holder.start()
    try:
        assert entered.wait(5)
        with pytest.raises(RuntimeError):  # the context is really busy
            api._QUIET_CONTEXT.run(int)
        a = np.array([3e38, 1e-45, 0.0, np.inf], np.float32)
        b = np.array([10.0, 0.5, np.inf, -0.0], np.float32)
        with np.errstate(all="raise"):  # IEEE exceptions are results, whatever the caller set
            got = mul(a, b)
    finally:
        release.set()
        holder.join()
    with np.errstate(all="ignore"):
        assert_same_bits(got, a * b)


def test_F_threaded_in_place_product_is_computed_once():
    """out is a: chunks are never redone (a second pass would multiply twice)."""
    n = fastpath.PARALLEL_MIN_ELEMENTS
    a = np.arange(n, dtype=np.int64)
    b = np.full(n, 3, np.int64)
    assert mul(a, b, out=a) is a
    assert np.array_equal(a, np.arange(n, dtype=np.int64) * 3)


def test_F_NOLOSS_a_worker_error_is_raised_in_the_caller(monkeypatch):
    """An exception in a worker thread is the one mul raises, once every worker ended."""

    class WorkerFault(Exception):
        pass

    real_multiply = np.multiply

    def multiply(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            raise WorkerFault
        return real_multiply(*args, **kwargs)

    monkeypatch.setattr(fastpath, "_THREADS", 2)
    n = fastpath.PARALLEL_MIN_ELEMENTS
    a, out = np.ones(n, np.float32), np.zeros(n, np.float32)
    monkeypatch.setattr(np, "multiply", multiply)
    with pytest.raises(WorkerFault):
        mul(a, a, out=out)
    monkeypatch.undo()
    assert_same_bits(out[: n // 2], np.ones(n // 2, np.float32))  # the caller's own chunk
