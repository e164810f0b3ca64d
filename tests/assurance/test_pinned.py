"""The pinned proofs' core (``sonnx_mul_assurance.pinned``) and what the Why3 and
WP checks build on it: one step-limit rule, one rule a check holds a goal to,
one manifest layout, and the Why3 run's reading of its answers
(``sonnx_mul_assurance.why3.runner``), without starting a prover."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp, wp_plan, wp_statements
from sonnx_mul_assurance.evidence import files
from sonnx_mul_assurance.why3 import driver, plan, runner

REPO = Path(__file__).resolve().parents[2]


def test_the_step_limit_is_twice_the_steps_and_a_slack() -> None:
    assert core.step_limit(0) == core.STEP_SLACK == 1000
    assert core.step_limit(16_734) == 2 * 16_734 + 1000
    assert core.step_pin("CVC4 1.8", 10, "a WP goal") == {"steps": 10, "steplimit": 1020}
    with pytest.raises(RuntimeError, match="z3 reported no step count for a WP goal"):
        core.step_pin("z3", -1, "a WP goal")


def test_both_checks_hold_a_goal_to_its_own_limit() -> None:
    pin = {"prover": "cvc5", "steplimit": 1020}
    assert core.within(1020, pin) and core.within(0, pin)
    assert not core.within(1021, pin) and not core.within(-1, pin)  # no count: not held
    assert core.within(10**9, {"prover": "Qed"})  # a goal pinned without a limit
    # the Why3 check and the WP check apply the one rule
    assert plan.proved(plan.Result("cvc5", "Valid", 0.1, 1020), pin)
    assert not plan.proved(plan.Result("cvc5", "Valid", 0.1, 1021), pin)
    assert plan.proved(plan.Result("z3", "Valid", 0.1, 10**9), pin)  # not the pinned prover
    run = wp.Run(wp.Unit("a.c", ["cvc5"], 300), 0, 1.0, 1, {}, {}, {}, "")
    run.goals = {"typed_f_ensures": wp.Goal("f", "cvc5", core.VALID, 0.1, 1021)}
    entry = {"goals": {"typed_f_ensures": {"function": "f", **pin}}, "functions": {}}
    assert wp.compare(run, entry) == [
        "a.c: goal typed_f_ensures proved by cvc5 in 1021 steps, over its limit of 1020"
    ]


def test_a_check_widens_the_nets_and_the_search_has_one_limit() -> None:
    assert core.check_net(300) == 300 * core.CHECK_NET_FACTOR
    assert wp.Unit("a.c", ["cvc4"], 300).safety_net(measure=False) == core.check_net(300)
    assert wp.Unit("a.c", ["cvc4"], 300).safety_net(measure=True) == 300
    assert plan.goal_limit({"steplimit": 5}).seconds == core.check_net(core.SAFETY_NET)
    assert wp.Unit("a.c", ["cvc4"], 300).search_steps("cvc4") == core.MEASURE_STEPS
    assert wp_plan.step_budget({}, "CVC4 1.8") == core.UNHELD_STEPS
    assert core.safety_net(0.1) == core.SAFETY_NET
    assert core.safety_net(163.67) == 3300  # 20 x 163.67 s in whole minutes


def test_the_largest_ratio_leaves_out_goals_without_a_limit_or_a_count() -> None:
    assert core.largest_ratio([]) == (0.0, None)
    proofs = [(50, 100, "a"), (90, 100, "b"), (10, 0, "no limit"), (-1, 100, "no count")]
    assert core.largest_ratio(proofs) == (0.9, "b")


def test_the_manifest_keeps_its_one_layout(tmp_path: Path) -> None:
    for proofs in (driver.PROOFS, wp.PROOFS):
        committed = (REPO / proofs.manifest).read_text()
        (tmp_path / proofs.manifest).parent.mkdir(parents=True, exist_ok=True)
        proofs.write_manifest(tmp_path, proofs.load_manifest(REPO))
        assert (tmp_path / proofs.manifest).read_text() == committed


def test_each_proof_set_names_its_files() -> None:
    assert driver.PROOFS.evidence_path(REPO) == REPO / files.OUT_DIR / files.WHY3
    assert wp.PROOFS.evidence_path(REPO) == REPO / files.OUT_DIR / files.WP
    for proofs in (driver.PROOFS, wp.PROOFS):
        listed = proofs.config_inputs(REPO)
        assert {proofs.manifest, proofs.template} <= listed
        assert any(p.parent.as_posix() == "proofs/drivers" for p in listed)
    with pytest.raises(ValueError, match="not an evidence file"):
        files.evidence_path("mutants-glue.json")


def test_a_rendered_configuration_drops_the_template_suffix(tmp_path: Path) -> None:
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs/wp-why3.conf.in").write_text('driver = "@DRIVERS@/x.drv"\n')
    assert wp.PROOFS.render_config(tmp_path) == tmp_path / "proofs/out/wp-why3.conf"


def test_a_version_line_is_the_first_line_or_what_its_absence_is_called() -> None:
    line = core.version_line([sys.executable, "--version"], 30, "missing", "unknown")
    assert line.startswith("Python 3")
    assert core.version_line(["/no/such/tool"], 30, "missing", "unknown") == "missing"
    silent = [sys.executable, "-c", "pass"]
    assert core.version_line(silent, 30, "not found", "empty") == "empty"


def test_why3_answers_are_read_in_order_with_each_task_numbered() -> None:
    answers = 'noise {"a": {"b": 1}} more {"c": 2}\n'
    assert runner.parse_json_stream(answers) == [{"a": {"b": 1}}, {"c": 2}]
    assert runner.base_name("mul_is_ieee#3") == "mul_is_ieee"
    entry = {"split_vc": ["A"], "transformations": {"B": ["split_vc", "eliminate_definition"]}}
    assert runner.transformations_of(entry, "A") == ["split_vc"]
    assert runner.transformations_of(entry, "B") == ["split_vc", "eliminate_definition"]
    assert runner.transformations_of(entry, "C") == []


def test_the_provers_needed_are_the_portfolio_and_the_pinned_ones(tmp_path: Path) -> None:
    entries = [{"goals": [{"prover": "gappa"}, {"prover": None}]}]
    assert runner.needed_provers(("z3", "cvc5"), entries) == ["cvc5", "gappa", "z3"]
    conf = tmp_path / "why3.conf"
    conf.write_text(
        '[prover]\nshortcut = "here"\ncommand = "' + sys.executable + ' --x %f"\n'
        '[prover]\nshortcut = "gone"\ncommand = "/no/such/prover %f"\n'
    )
    assert runner.prover_commands(conf) == {"here": sys.executable, "gone": "/no/such/prover"}
    versions, missing = runner.prover_versions(conf, ["gone", "here", "unknown"])
    assert list(versions) == ["here"] and versions["here"].startswith("Python 3")
    assert missing == [
        "prover missing: gone (/no/such/prover)",
        "prover missing: unknown (not configured)",
    ]


def test_a_stand_in_must_carry_the_proved_loops_contract_word_for_word() -> None:
    stands_in = wp_statements.STANDS_IN
    same = {f: f"/*@ ensures {p}; */" for f, p in stands_in.items()}
    same |= {p: f"/*@ ensures {p}; */" for p in stands_in.values()}
    assert wp_statements.stand_in_errors(same) == []
    hardware, proved = next(iter(stands_in.items()))
    weakened = {**same, hardware: "/*@ ensures \\true; */"}
    assert wp_statements.stand_in_errors(weakened) == [
        f"stand-in: {hardware} is not proved against {proved}'s contract:"
        f" /*@ ensures \\true; */ differs from {same[proved]}"
    ]
    assert wp_statements.stand_in_errors({k: v for k, v in same.items() if k != hardware}) == [
        f"stand-in: no contract printed for {hardware} or {proved}"
    ]


def test_a_manifest_written_by_update_manifest_reads_back(tmp_path: Path) -> None:
    manifest = {"units": [], "note": "é"}
    (tmp_path / "proofs").mkdir()
    wp.PROOFS.write_manifest(tmp_path, manifest)
    text = (tmp_path / wp.PROOFS.manifest).read_text()
    assert text == json.dumps(manifest, indent=1) + "\n"
    assert wp.PROOFS.load_manifest(tmp_path) == manifest
