"""The WP check's plan: which goals each prover pass tries (no Frama-C needed)."""

from __future__ import annotations

from sonnx_mul_assurance import wp, wp_plan

SOURCE = """
/*@ assigns \\nothing;
    ensures wrap1: \\result == x * y; */
static int wrap1_i16(int x, int y) { return x * y; }
void f(int n) {
  /*@ loop invariant 0 <= i <= n; */
  for (int i = 0; i < n; i++) { /*@ assert wrap_elem: i < n; */ }
}
"""
KNOWN = wp_plan.labels(SOURCE)
CONF = """
[prover]
name = "Z3"
shortcut = "z3-debian"
version = "4.8.12"

[prover]
command = "/usr/bin/cvc4 --tlimit-per=%t000 --lang=smt2 %f"
name = "CVC4"
shortcut = "cvc4"
version = "1.8"
"""


def test_labels_are_the_named_properties() -> None:
    assert wp_plan.labels(SOURCE) == {"wrap1", "wrap_elem"}


def test_prover_names_are_those_wp_prints() -> None:
    assert wp_plan.prover_names(CONF) == {"z3-debian": "Z3 4.8.12", "cvc4": "CVC4 1.8"}


def test_named_open_goals_are_retried_by_function_and_name() -> None:
    open_goals = {"typed_f_assert_wrap_elem": "f", "typed_wrap1_i16_ensures_wrap1": "wrap1_i16"}
    retry = wp_plan.retry(open_goals, KNOWN, ["z3-debian"], 30)
    assert retry == wp_plan.Invocation(
        ("z3-debian",), 30, ("f", "wrap1_i16"), ("wrap1", "wrap_elem")
    )
    assert retry.selection_argv() == ["-wp-fct", "f,wrap1_i16", "-wp-prop=wrap1,wrap_elem"]


def test_an_unnamed_open_goal_retries_its_whole_function() -> None:
    # negative control of the name filter: an invariant has no name to select
    open_goals = {"typed_f_assert_wrap_elem": "f", "typed_f_loop_invariant_preserved": "f"}
    assert wp_plan.retry(open_goals, KNOWN, ["z3-debian"], 30).properties == ()


def test_an_rte_assertion_is_not_taken_for_a_label() -> None:
    assert wp_plan.named_property("typed_f_assert_rte_mem_access", "f", KNOWN) is None
    assert wp_plan.named_property("typed_f_assert_wrap_elem", "f", KNOWN) == "wrap_elem"


def test_the_first_pass_leaves_out_what_the_manifest_pins_elsewhere() -> None:
    pins = {
        "typed_f_assert_wrap_elem": {"function": "f", "prover": "Z3 4.8.12"},
        "typed_f_loop_invariant_preserved": {"function": "f", "prover": "Z3 4.8.12"},  # unnamed
        "typed_g_ensures": {"function": "g", "prover": "CVC4 1.8"},
        "typed_g_assigns": {"function": "g", "prover": "Qed"},
    }
    skipped = wp_plan.skipped_properties(pins, "CVC4 1.8", KNOWN)
    assert skipped == {"f": {"wrap_elem"}}
    every = wp_plan.first_pass((), skipped, "cvc4", 3)
    assert [r.selection_argv() for r in every] == [
        ["-wp-skip-fct", "f"],
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
    ]
    some = wp_plan.first_pass(("f", "g"), skipped, "cvc4", 3)
    assert [r.selection_argv() for r in some] == [
        ["-wp-fct", "g"],
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
    ]
    # without pins: one run on everything
    assert wp_plan.first_pass((), {}, "cvc4", 3) == [wp_plan.Invocation(("cvc4",), 3)]


def test_first_timeout_defaults_to_the_full_timeout() -> None:
    assert wp.Unit("a.c", ["cvc4"], 30).first_timeout == 30
    assert wp.Unit("a.c", ["cvc4"], 30, [], 3).first_timeout == 3


def test_a_property_filter_narrows_every_first_pass_run() -> None:
    runs = wp_plan.first_pass(("f", "g"), {"f": {"wrap_elem"}}, "cvc4", 5, ("mem_access",))
    assert [r.selection_argv() for r in runs] == [
        ["-wp-fct", "g", "-wp-prop=mem_access"],
        ["-wp-fct", "f", "-wp-prop=mem_access,-wrap_elem"],
    ]
