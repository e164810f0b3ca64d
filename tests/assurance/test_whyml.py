"""The one WhyML reader: comments as Why3 lexes them, modules, declarations."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sonnx_mul_assurance.why3 import whyml

REPO = Path(__file__).resolve().parents[2]

SAMPLE = """\
(* a header (* with a nested comment *) still a comment: module Fake *)
module First
  use int.Int

  (** doc *) let function f (x : int) : int =
    let y = x in y   (* an inner let is no declaration *)

  lemma l: forall x. f x = x
  goal g: "a string (* that opens no comment" = "x"
  val ( * ) (x y : int) : int
  let (*) = 1
end

theory Second
  predicate p (x : int) = match x with | 0 -> true | _ -> false end
  axiom a: p 0
end
"""


def test_nested_comments_are_blanked_keeping_offsets() -> None:
    text = "a (* b (* c *) d *) e\n(* x\n y *)z"
    clean = whyml.strip_comments(text)
    assert len(clean) == len(text)
    assert clean.split() == ["a", "e", "z"]
    assert clean.count("\n") == text.count("\n")


def test_strings_and_the_star_operator_open_no_comment() -> None:
    clean = whyml.strip_comments('let s = "(* not *)" in ( * ) (*) x (* gone *)')
    assert '"(* not *)"' in clean and "(*) x" in clean and "gone" not in clean


def test_escaped_quote_inside_a_string() -> None:
    clean = whyml.strip_comments('"a \\" (* b" (* c *)')
    assert '"a \\" (* b"' in clean and "c" not in clean


def test_star_operator_inside_a_comment_does_not_nest() -> None:
    assert whyml.strip_comments("(* (*) *) x").split() == ["x"]


def test_unclosed_comment_blanks_to_the_end() -> None:
    assert whyml.strip_comments("x (* y\nz").split() == ["x"]


def test_modules_with_spans_and_declarations() -> None:
    first, second = whyml.parse(SAMPLE)
    assert (first.name, first.start, first.end) == ("First", 2, 12)
    assert (second.name, second.start, second.end) == ("Second", 14, 17)
    kinds = [(d.kind, d.name, d.start, d.end) for d in first.declarations]
    assert kinds == [
        ("let function", "f", 5, 7),
        ("lemma", "l", 8, 8),
        ("goal", "g", 9, 9),
        ("val", "( * )", 10, 10),
        ("let", "(*)", 11, 11),
    ], kinds
    assert [(d.kind, d.name) for d in second.declarations] == [("predicate", "p"), ("axiom", "a")]


def test_comment_text_is_no_module() -> None:
    assert whyml.module_names(SAMPLE) == ["First", "Second"]
    assert whyml.module_at(SAMPLE, 1) is None
    assert whyml.module_at(SAMPLE, 9) == "First"


def test_module_at_includes_both_ends_of_the_span() -> None:
    # First spans lines 2-12 (``module First`` .. ``end``), Second 14-17.
    assert [whyml.module_at(SAMPLE, n) for n in (2, 12, 13, 14, 17, 18)] == [
        "First", "First", None, "Second", "Second", None,
    ]  # fmt: skip


def test_parsed_modules_are_immutable() -> None:
    # parse() is cached: every caller shares the same Module objects.
    (module, _) = whyml.parse(SAMPLE)
    assert whyml.parse(SAMPLE)[0] is module
    with pytest.raises(dataclasses.FrozenInstanceError):
        module.name = "Other"  # type: ignore[misc]
    assert hash(module) == hash(whyml.parse(SAMPLE)[0])


def test_definition_is_the_body_after_the_equals_line() -> None:
    text = (
        "module M\n  let f (x : int) : int\n    requires { x > 0 }\n"
        "  = x + 1\n  lemma l: true\nend\n"
    )
    (module,) = whyml.parse(text)
    assert whyml.definition(module, "f", text) == "x + 1\n"
    assert whyml.definition(module, "missing", text) is None


@pytest.mark.parametrize("path", sorted((REPO / "why3").glob("*.mlw")), ids=lambda p: p.name)
def test_every_project_file_has_modules_whose_declarations_lie_inside(path: Path) -> None:
    modules = whyml.parse(path.read_text())
    assert modules
    for module in modules:
        assert module.start < module.end
        for decl in module.declarations:
            assert module.start < decl.start <= decl.end < module.end, (module.name, decl)
