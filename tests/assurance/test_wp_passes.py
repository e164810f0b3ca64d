"""How the WP driver selects the goals a later prover pass retries (no Frama-C needed)."""

from __future__ import annotations

from sonnx_mul_assurance import wp

SOURCE = """
/*@ assigns \\nothing;
    ensures wrap1: \\result == x * y; */
static int wrap1_i16(int x, int y) { return x * y; }
void f(int n) {
  /*@ loop invariant 0 <= i <= n; */
  for (int i = 0; i < n; i++) { /*@ assert wrap_elem: i < n; */ }
}
"""


def _open(function: str) -> wp.Goal:
    return wp.Goal(function, "CVC4 1.8", "Timeout")


def test_labels_are_the_named_properties() -> None:
    assert wp._labels(SOURCE) == {"wrap1", "wrap_elem"}


def test_named_open_goals_are_selected_by_function_and_name() -> None:
    open_goals = {
        "typed_f_assert_wrap_elem": _open("f"),
        "typed_wrap1_i16_ensures_wrap1": _open("wrap1_i16"),
    }
    assert wp._selection(open_goals, wp._labels(SOURCE)) == (
        ["f", "wrap1_i16"],
        ["wrap1", "wrap_elem"],
    )


def test_an_unnamed_open_goal_retries_its_whole_function() -> None:
    # negative control of the name filter: an invariant has no name to select
    open_goals = {
        "typed_f_assert_wrap_elem": _open("f"),
        "typed_f_loop_invariant_preserved": _open("f"),
    }
    assert wp._selection(open_goals, wp._labels(SOURCE)) == (["f"], [])


def test_an_rte_assertion_is_not_taken_for_a_label() -> None:
    open_goals = {"typed_f_assert_rte_mem_access": _open("f")}
    assert wp._selection(open_goals, wp._labels(SOURCE)) == (["f"], [])


def test_first_timeout_defaults_to_the_full_timeout() -> None:
    assert wp.Unit("a.c", ["cvc4"], 30).first_timeout == 30
    assert wp.Unit("a.c", ["cvc4"], 30, [], 3).first_timeout == 3
