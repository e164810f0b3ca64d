"""The registry is well formed and every error names registered ids."""

import pytest

from sonnx_mul import errors, requirements


def test_registry_has_the_sonnx_ids_first():
    assert requirements.TOP_LEVEL == ("R1", "R2", "R3", "R4", "C1", "F")


def test_every_derived_id_has_a_registered_top_level_parent():
    for req in requirements.REGISTRY.values():
        if req.parent is not None:
            assert req.parent in requirements.TOP_LEVEL, req.id
            assert req.id.startswith(req.parent + "-"), req.id


def test_top_level_statements_quote_the_sonnx_text():
    with open(_seed_path()) as seed:
        text = seed.read()
    for req_id in ("R1", "R2", "R3", "R4"):
        statement = requirements.get(req_id).statement.replace(f" [{req_id}]", "")
        assert statement.replace("`", "") in text.replace("`", ""), req_id


def test_unknown_id_is_refused_by_the_registry_and_by_errors():
    with pytest.raises(KeyError, match="R9"):
        requirements.get("R9")
    with pytest.raises(KeyError):
        errors.ShapeError("x", ("R9",))
    with pytest.raises(ValueError):
        errors.ShapeError("x", ())


def test_error_message_names_its_requirements():
    err = errors.ShapeError("shapes differ", ("R1", "R4"))
    assert err.requirements == ("R1", "R4")
    assert str(err).startswith("[R1, R4] ")


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (errors.ShapeError, ValueError),
        (errors.ArgumentError, ValueError),
        (errors.ElementTypeError, TypeError),
        (errors.SparseTensorError, TypeError),
        (errors.IntegerOverflowError, ArithmeticError),
    ],
)
def test_errors_subclass_profile_error_and_the_natural_builtin(cls, builtin):
    assert issubclass(cls, errors.ProfileError)
    assert issubclass(cls, builtin)


def _seed_path() -> str:
    import os

    return os.path.join(
        os.path.dirname(__file__), "..", "..", "docs", "spec", "sonnx_mul_profile.md"
    )
