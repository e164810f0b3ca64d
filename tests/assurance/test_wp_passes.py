"""The WP check's plan: which goals each prover pass tries (no Frama-C needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp, wp_plan, wp_statements
from sonnx_mul_assurance.evidence import schema

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
    [retry] = wp_plan.retry(open_goals, KNOWN, ["z3-debian"], 5000, 60)
    assert retry == wp_plan.Invocation(
        ("z3-debian",), 5000, 60, ("f", "wrap1_i16"), ("wrap1", "wrap_elem")
    )
    assert retry.selection_argv() == ["-wp-fct", "f,wrap1_i16", "-wp-prop=wrap1,wrap_elem"]


def test_an_open_lemma_is_retried_by_name_in_a_run_of_its_own() -> None:
    # a lemma's goal belongs to <globals>, which -wp-fct does not accept
    open_goals = {"typed_lemma_tie64": wp_plan.GLOBALS, "typed_f_assert_wrap_elem": "f"}
    runs = wp_plan.retry(open_goals, KNOWN, ["cvc5-frame"], 5000, 60)
    assert [r.selection_argv() for r in runs] == [
        ["-wp-fct", "f", "-wp-prop=wrap_elem"],
        ["-wp-prop=tie64"],
    ]
    assert wp_plan.retry({}, KNOWN, ["cvc5-frame"], 5000, 60) == []


def test_an_unnamed_open_goal_retries_its_whole_function() -> None:
    # negative control of the name filter: an invariant has no name to select
    open_goals = {"typed_f_assert_wrap_elem": "f", "typed_f_loop_invariant_preserved": "f"}
    [retry] = wp_plan.retry(open_goals, KNOWN, ["z3-debian"], 5000, 60)
    assert retry.properties == ()


def test_a_selection_narrows_the_retry_of_an_unnamed_goal() -> None:
    # a planted fault's false loop invariant, selected by "done": cvc5 tries
    # that property, not the 20 other goals of its function pinned to it
    # (49 s of a 52 s negative control before)
    open_goals = {"typed_f_loop_invariant_done_preserved": "f"}
    [retry] = wp_plan.retry(open_goals, KNOWN, ["cvc5-frame"], 5000, 60, {}, ("done",))
    assert retry.selection_argv() == ["-wp-fct", "f", "-wp-prop=done"]
    # negative control: without the selection it is the whole function
    [whole] = wp_plan.retry(open_goals, KNOWN, ["cvc5-frame"], 5000, 60, {})
    assert whole.selection_argv() == ["-wp-fct", "f"]


def test_a_whole_function_retry_leaves_out_what_is_pinned_elsewhere() -> None:
    # the float unit: cvc5 retried mul1_f16 whole, and spent 4.3 million steps
    # (3.5 minutes) on the assert pinned to Z3
    pins = {
        "typed_f_loop_invariant_preserved": {"function": "f", "prover": "CVC5 1.0.3 (frame)"},
        "typed_f_assert_wrap_elem": {"function": "f", "prover": "Z3 4.8.12"},
        "typed_wrap1_i16_ensures_wrap1": {"function": "wrap1_i16", "prover": "Qed"},
        "typed_g_loop_invariant_preserved": {"function": "g", "prover": "CVC5 1.0.3 (frame)"},
    }
    todo = {"typed_f_loop_invariant_preserved": "f", "typed_g_loop_invariant_preserved": "g"}
    leave_out = wp_plan.elsewhere(pins, "CVC5 1.0.3 (frame)", todo, KNOWN)
    assert leave_out == {"f": {"wrap_elem"}}
    runs = wp_plan.retry(todo, KNOWN, ["cvc5-frame"], 5000, 60, leave_out)
    assert [r.selection_argv() for r in runs] == [
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
        ["-wp-fct", "g"],
    ]
    # negative control: a goal still open for this prover is never left out
    todo_too = dict(todo, typed_f_assert_wrap_elem="f")
    assert wp_plan.elsewhere(pins, "CVC5 1.0.3 (frame)", todo_too, KNOWN) == {}


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
    every = wp_plan.first_pass((), skipped, "cvc4", 5000, 60)
    assert [r.selection_argv() for r in every] == [
        ["-wp-skip-fct", "f"],
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
    ]
    some = wp_plan.first_pass(("f", "g"), skipped, "cvc4", 5000, 60)
    assert [r.selection_argv() for r in some] == [
        ["-wp-fct", "g"],
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
    ]
    # lemmas are not any function's: -wp-skip-fct leaves them out, a run of their own takes them
    with_lemmas = wp_plan.first_pass((), skipped, "cvc4", 5000, 60, lemmas=True)
    assert [r.selection_argv() for r in with_lemmas] == [
        ["-wp-skip-fct", "f"],
        ["-wp-prop=@lemma"],
        ["-wp-fct", "f", "-wp-prop=-wrap_elem"],
    ]
    # without pins: one run on everything
    assert wp_plan.first_pass((), {}, "cvc4", 5000, 60) == [wp_plan.Invocation(("cvc4",), 5000, 60)]


def test_each_pass_gets_the_widest_step_limit_of_its_prover() -> None:
    pins = {
        "typed_f_assert_wrap_elem": {"function": "f", "prover": "Z3 4.8.12", "steplimit": 900},
        "typed_g_ensures": {"function": "g", "prover": "CVC4 1.8", "steplimit": 7000},
        "typed_g_variant": {"function": "g", "prover": "CVC4 1.8", "steplimit": 3000},
        "typed_g_assigns": {"function": "g", "prover": "Qed"},
    }
    assert wp_plan.step_budget(pins, "CVC4 1.8") == 7000
    assert wp_plan.step_budget(pins, "Z3 4.8.12") == 900
    # nothing pinned to a prover: it decides nothing, only passes goals on
    assert wp_plan.step_budget(pins, "CVC5 1.0.3") == core.UNHELD_STEPS


def _run(goals: dict[str, wp.Goal]) -> wp.Run:
    unit = wp.Unit("a.c", ["cvc4"], 60)
    return wp.Run(unit, 0, 1.0, len(goals), goals, {}, {}, "")


def test_a_goal_proved_over_its_own_step_limit_fails() -> None:
    # a run's limit is the widest of its goals': compare holds each to its own
    pinned = {
        "functions": {},
        "goals": {
            "typed_g_ensures": {"function": "g", "prover": "CVC4 1.8", "steplimit": 7000},
            "typed_g_variant": {"function": "g", "prover": "CVC4 1.8", "steplimit": 3000},
        },
    }
    within = _run(
        {
            "typed_g_ensures": wp.Goal("g", "CVC4 1.8", "Valid", 0.1, 6999),
            "typed_g_variant": wp.Goal("g", "CVC4 1.8", "Valid", 0.1, 3000),
        }
    )
    assert wp.compare(within, pinned) == []
    over = _run(
        {
            "typed_g_ensures": wp.Goal("g", "CVC4 1.8", "Valid", 0.1, 6999),
            "typed_g_variant": wp.Goal("g", "CVC4 1.8", "Valid", 0.1, 3001),
        }
    )
    assert wp.compare(over, pinned) == [
        "a.c: goal typed_g_variant proved by CVC4 1.8 in 3001 steps, over its limit of 3000"
    ]


def test_the_largest_step_ratio_reads_each_goal_against_its_own_unit() -> None:
    # the streaming and float16 hardware loops both have a function `loop`:
    # the same goal name in two units, with different pins
    name = "typed_loop_loop_invariant_kept_preserved"
    manifest = {
        "units": [
            {"source": "a.c", "goals": {name: {"prover": "CVC4 1.8", "steplimit": 400000}}},
            {"source": "b.c", "goals": {name: {"prover": "CVC4 1.8", "steplimit": 40000}}},
        ]
    }

    def unit(source: str, steps: int) -> schema.WpUnit:
        goal = schema.WpGoal("loop", "CVC4 1.8", "Valid", 0.1, steps)
        return schema.WpUnit(source, "", "", 0.1, {name: goal}, [])

    ratio, worst = wp.largest_ratio(manifest, [unit("a.c", 200000), unit("b.c", 30000)])
    assert (ratio, worst) == (0.75, f"b.c: {name}")


def test_steps_are_read_from_the_verdict_line() -> None:
    log = (
        "[wp] [CVC4 1.8] Goal typed_g_ensures : Valid (Qed:4ms) (50ms) (16734)\n"
        "[wp] [Qed] Goal typed_g_assigns : Valid (2ms)\n"
    )
    goals = wp.parse_goals(log, ["g"])
    assert goals["typed_g_ensures"].steps == 16734
    assert goals["typed_g_assigns"].steps == -1


def test_a_property_filter_narrows_every_first_pass_run() -> None:
    runs = wp_plan.first_pass(("f", "g"), {"f": {"wrap_elem"}}, "cvc4", 5000, 60, ("mem_access",))
    assert [r.selection_argv() for r in runs] == [
        ["-wp-fct", "g", "-wp-prop=mem_access"],
        ["-wp-fct", "f", "-wp-prop=mem_access,-wrap_elem"],
    ]


def test_a_property_selects_its_own_goals_only() -> None:
    # as -wp-prop does: the name after the goal's kind, not any substring
    assert wp_plan.selects("typed_mul1_f16_assert_finish", ["finish"])
    assert not wp_plan.selects("typed_mul1_f16_assert_nan_finish", ["finish"])
    assert wp_plan.selects("typed_sonnx_mul_f32_loop_invariant_done_preserved", ["done"])
    assert wp_plan.selects("typed_f_assert_rte_mem_access_2", ["mem_access"])
    # a function named like the property is not the property
    assert wp_plan.selects("typed_excess_i64_ensures_excess", ["excess"])
    assert not wp_plan.selects("typed_excess_i64_assert_halves", ["excess"])
    assert not wp_plan.selects("typed_f_ensures_value", [])
    # a lemma by its name, as -wp-prop=tie32 selects it
    assert wp_plan.selects("typed_lemma_tie32", ["tie32"])
    assert not wp_plan.selects("typed_lemma_tie32", ["tie64"])
    assert not wp_plan.selects("typed_lemma_tie320", ["tie32"])


def test_a_unit_caps_a_provers_search_and_keeps_the_cap_on_a_re_pin() -> None:
    entry = {"source": "s.c", "provers": ["cvc4", "cvc5-opaque"], "timeout": 300}
    plain, capped = wp.units({"units": [entry, {**entry, "measure_steps": {"cvc5-opaque": "7"}}]})
    assert plain.measure_steps == {}
    assert capped.measure_steps == {"cvc5-opaque": 7}
    assert capped.search_steps("cvc5-opaque") == 7
    assert capped.search_steps("cvc4") == plain.search_steps("cvc5-opaque") == core.MEASURE_STEPS
    run = wp.Run(capped, 0, 1.0, 0, {}, {}, {}, "")
    assert wp.manifest_entry(run)["measure_steps"] == {"cvc5-opaque": 7}
    # negative control: a unit without a cap writes none (update-manifest keeps the file as is)
    assert "measure_steps" not in wp.manifest_entry(wp.Run(plain, 0, 1.0, 0, {}, {}, {}, ""))


@pytest.mark.needs_prover  # frama-c
def test_a_check_gives_every_frama_c_run_the_wide_net_and_a_re_pin_the_unit_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 28's certificate: the wall-clock net of a check must not be what
    # decides a goal on a busy machine (the 300 s net was, with four busy loops)
    source = tmp_path / "s.c"
    source.write_text(SOURCE)
    unit = wp.Unit("s.c", ["cvc4"], 300)
    argvs: list[list[str]] = []

    def run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        argvs.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(wp, "printed_functions", lambda src, inc: ({"f": "0"}, {"f": ""}))
    monkeypatch.setattr(wp.subprocess, "run", run)
    nets = {}
    for measure in (False, True):
        argvs.clear()
        wp.prove(Path.cwd(), unit, source=source, measure=measure)
        assert argvs
        nets[measure] = {argv[argv.index("-wp-timeout") + 1] for argv in argvs}
    assert nets == {False: {str(300 * core.CHECK_NET_FACTOR)}, True: {"300"}}
    assert core.CHECK_NET_FACTOR >= 6  # 50 s of the largest goal, six times slower


GHOST_PRINTED = """/*@ ghost
  /@ admit ensures
       modular: (uint64_t)\\old(x) == \\old(x) % 18446744073709551616;
     assigns \\nothing;
   @/
  void u64_of_i64(int64_t x)
  {
    return;
  }

*/

int f(int x)
{
  /*@ ghost u64_of_i64(x); */
  return x;
}
"""


def test_a_ghost_function_is_a_function_with_its_contract_pinned() -> None:
    # WP proves ghost functions (int64's binary64 test has three): each is
    # pinned by its own hash and contract, not folded into the globals, and
    # so an edited clause shows as a changed statement of that function
    hashes, contracts = wp_statements.split_functions(GHOST_PRINTED)
    assert set(hashes) == {"u64_of_i64", "f", wp_plan.GLOBALS}
    assert contracts["u64_of_i64"].startswith("/*@ admit ensures modular:")
    assert contracts["u64_of_i64"].endswith("assigns \\nothing; */")
    weakened, _ = wp_statements.split_functions(
        GHOST_PRINTED.replace("% 18446744073709551616", "% 2")
    )
    assert weakened["u64_of_i64"] != hashes["u64_of_i64"]
    assert weakened[wp_plan.GLOBALS] == hashes[wp_plan.GLOBALS] and weakened["f"] == hashes["f"]
