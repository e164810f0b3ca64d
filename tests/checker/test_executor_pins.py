"""Issue 29: the executor's own rules (finding the profile error in a chain, which
error a run raises, feeding inputs by position, the device) each pinned by a test
that fails when that rule alone is changed (``make mutants`` left them unnoticed).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from sonnx_mul import ProfileError
from sonnx_mul.errors import ShapeError
from sonnx_mul.models import Backend, ModelReadError
from sonnx_mul.models.executor import CertifiedEvaluator, Mul, find_profile_error


def _chain(*excs: BaseException, context: bool = False) -> BaseException:
    """excs[0] caused (or, with ``context``, raised while handling) by excs[1] ..."""
    for outer, inner in itertools.pairwise(excs):
        if context:
            outer.__context__ = inner
        else:
            outer.__cause__ = inner
    return excs[0]


def test_the_profile_error_is_found_through_causes_and_contexts() -> None:
    p = ProfileError("refused", ("R4",))
    assert find_profile_error(_chain(TypeError("a"), ValueError("b"), p)) is p
    assert find_profile_error(_chain(TypeError("a"), p, context=True)) is p
    assert find_profile_error(p) is p


def test_a_chain_without_profile_error_gives_none_even_with_a_cycle() -> None:
    assert find_profile_error(ValueError("alone")) is None
    a, b = TypeError("a"), ValueError("b")
    a.__cause__, b.__cause__ = b, a  # a cycle: seen once each, then stop
    assert find_profile_error(a) is None


def _mul_model(shape_b: list[int | str], ir: int = 8) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node("Mul", ["a", "b"], ["c"], name="m")], "g",
        [h.make_tensor_value_info("a", T.FLOAT, ["n"]),
         h.make_tensor_value_info("b", T.FLOAT, shape_b)],
        [h.make_tensor_value_info("c", T.FLOAT, ["n"])],
    )  # fmt: skip
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = ir
    return m


def test_a_run_time_refusal_is_the_profile_error_itself() -> None:
    """Shapes undecided before the run (two free dims) and different at run time:
    the caller gets the ProfileError (its type, not the evaluator's wrapper)."""
    rep = Backend.prepare(_mul_model(["k"]))
    with pytest.raises(ProfileError) as refused:
        rep.run([np.ones(3, np.float32), np.ones(2, np.float32)])
    assert type(refused.value) is ShapeError  # mul's own error, not the evaluator's wrapper
    assert refused.value.requirements == ("R1",)
    assert refused.value.__cause__ is None  # re-raised as it came, not chained to itself


def test_any_other_run_error_is_raised_unchanged() -> None:
    """A failure that is no profile error (a missing feed) reaches the caller as the
    evaluator raised it: never swallowed, never replaced."""
    rep = Backend.prepare(_mul_model(["n"]))
    with pytest.raises(RuntimeError, match="Unable to find input 'b'"):
        rep.run({"a": np.ones(2, np.float32)})


def test_a_type_error_of_the_mul_itself_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Mul, a: object, b: object, **_: object) -> tuple[np.ndarray]:
        raise TypeError("not a profile error")

    monkeypatch.setattr(Mul, "_run", broken)
    ev = CertifiedEvaluator(_mul_model(["n"]))
    # OpRun.run's own wrapper (naming the operator), raised on: never a None result
    with pytest.raises(TypeError, match=r"\(operator 'Mul'\)"):
        ev.run(None, {"a": np.ones(2, np.float32), "b": np.ones(2, np.float32)})


def test_inputs_by_position_may_leave_out_overridable_initializers() -> None:
    """IR >= 4: an initializer also declared as a graph input has a default; a list
    of inputs by position may stop before it (zip, not strict)."""
    m = _mul_model([2])
    m.graph.initializer.append(nh.from_array(np.array([3.0, 4.0], np.float32), "b"))
    (out,) = Backend.prepare(m).run([np.array([2.0, 2.0], np.float32)])
    assert out.tobytes() == np.array([6.0, 8.0], np.float32).tobytes()


def test_only_the_cpu_device() -> None:
    with pytest.raises(ValueError, match="not supported"):
        Backend.prepare(_mul_model(["n"]), device="CUDA")
    assert Backend.supports_device("cpu") and not Backend.supports_device("CUDA")


def test_external_data_leaving_the_folder_by_a_symlink_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """external.load_external_data: a location whose target resolves outside the
    model's folder is not opened by the pre-check (it exists, but leaves the folder);
    onnx's loader then refuses it."""
    import sonnx_mul.models.external as external
    from models import external_initializer

    folder = tmp_path / "model"
    folder.mkdir()
    outside = tmp_path / "outside.bin"
    outside.write_bytes(bytes(24))
    (folder / "w.bin").symlink_to(outside)
    opened: list[Path] = []
    real = external.open_regular

    def spy(path: Path) -> object:
        opened.append(Path(path))
        return real(path)

    monkeypatch.setattr(external, "open_regular", spy)
    m = _mul_model([2, 3])
    m.graph.initializer.append(external_initializer("w.bin"))
    m.graph.node[0].input[1] = "w"
    with pytest.raises(ModelReadError, match=r"^cannot load the model's external data"):
        external.load_external_data(m, folder)
    assert all(p.resolve().is_relative_to(folder.resolve()) for p in opened), opened
