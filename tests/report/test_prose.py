"""The report's prose about the running code is rendered from the data.

The "Running code" paragraph, the meaning of an absent native-exhaustive.json,
Frama-C WP's trusted-base entry and the formal-methods objective name the
units WP proves with their goal counts (``proofs/wp-manifest.json``) and the
loops the selected ISA variant runs; they change when the manifest does, and
no sentence of them, of ``setup.py`` or of the glue calls a WP-proved loop
unproved (with the stale sentences this replaced as negative controls).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul_assurance.report import prose, protocol, trusted

ROOT = Path(__file__).resolve().parents[2]
MANIFEST: dict[str, Any] = json.loads((ROOT / prose.WP_MANIFEST).read_text())
UNITS = prose.wp_units(MANIFEST)
F16C = "native/hw/sonnx_mul_f16c.c"
STREAM8 = "native/hw/sonnx_mul_stream8.c"

STALE = (
    # the absent-evidence text this module replaced
    "the compiled kernel's own exhaustive checks did not run: the loops WP does not prove "
    "(float16 conversions, the F16C and streaming loops) have no evidence of their own.",
    # setup.py's docstring before
    "(source in native/hw, object stem, extra flags) of the loops that are not "
    "WP-proved (verified exhaustively): the float16 F16C loop",
    # the glue's comment before
    "The int8/uint8 wrap loops with streaming stores (32- and 64-byte; the products by "
    "the variant's proved loop, the copy verified exhaustively, not WP-proved)",
)


def _modified() -> dict[str, Any]:
    """The manifest with the F16C unit gone and one goal fewer in the streaming unit's."""
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["units"] = [u for u in manifest["units"] if u["source"] != F16C]
    stream8 = next(u for u in manifest["units"] if u["source"] == STREAM8)
    stream8["goals"].pop(sorted(stream8["goals"])[0])
    return manifest


def _goals(source: str, units: tuple[prose.WpUnit, ...] = UNITS) -> int:
    return next(u.goals for u in units if u.source == source)


def test_every_wp_unit_has_names_a_sentence_may_give_it() -> None:
    assert UNITS and prose.check_aliases(UNITS) == []
    assert prose.check_aliases((*UNITS, prose.WpUnit("native/hw/new_loop.c", 1, 1))) == [
        "native/hw/new_loop.c"
    ]


@pytest.mark.parametrize("isa", ["avx512", "avx2", "portable", None])
def test_running_code_lists_the_proved_units_and_the_loops_that_run(isa: str | None) -> None:
    text = prose.running_code(UNITS, isa, 786432)
    for unit in UNITS:  # every unit, with its goal count
        assert f"{unit.source} ({unit.goals} goals)" in text
    f16c = f"{F16C}: WP proves {_goals(F16C)} goals"
    assert f16c in text
    hardware = isa in ("avx2", "avx512")
    assert ("The loops that run: " in text) and (
        ("the F16C float16 loop (float16), " + f16c in text) == hardware
    )
    assert ("would also run: the F16C float16 loop" in text) == (not hardware)
    assert "786432 elements" in text or not hardware
    assert prose.unproved_claims(text, UNITS) == []


def test_the_machine_independent_prose_is_the_same_on_every_cpu() -> None:
    """The screenshots are taken on one machine and checked on any other:
    what they record of the paragraph must not depend on the CPU."""
    texts = {isa: prose.running_code(UNITS, isa, 786432) for isa in (*prose.ISAS, None)}
    assert len(set(texts.values())) == len(texts)  # the paragraph itself does
    independent = {prose.machine_independent(text) for text in texts.values()}
    assert len(independent) == 1
    (kept,) = independent
    assert prose.wp_summary(UNITS) in kept and "On this CPU" not in kept
    # and what depends on the manifest stays in it
    after = prose.running_code(prose.wp_units(_modified()), "avx512", 786432)
    assert prose.machine_independent(after) != kept


def test_the_prose_changes_when_the_manifest_changes() -> None:
    modified = prose.wp_units(_modified())
    before = prose.running_code(UNITS, "avx512", 786432)
    after = prose.running_code(modified, "avx512", 786432)
    assert before != after
    assert f"{F16C}: no unit in proofs/wp-manifest.json, not proved by WP" in after
    assert f"{STREAM8}: WP proves {_goals(STREAM8) - 1} goals" in after
    total = sum(u.goals for u in modified)
    assert f"{total} goals in all" in after and f"{total} goals in all" not in before
    # and the texts for absent evidence, the trusted base and the objectives
    assert prose.native_exhaustive_absent(UNITS) != prose.native_exhaustive_absent(modified)
    assert trusted.as_json(UNITS) != trusted.as_json(modified)
    wp = trusted.wp_component(modified)
    assert f"{STREAM8} ({_goals(STREAM8) - 1} goals)" in wp.trusted_for and F16C not in (
        wp.trusted_for
    )


def test_the_absent_evidence_text_is_read_from_the_checkouts_manifest(tmp_path: Path) -> None:
    source = protocol.BY_KEY["native-exhaustive"]
    here = source.meaning(ROOT)
    assert f"{F16C}: WP proves {_goals(F16C)} goals" in here
    (tmp_path / "proofs").mkdir()
    (tmp_path / prose.WP_MANIFEST).write_text(json.dumps(_modified()))
    there = source.meaning(tmp_path)
    assert there != here and f"{F16C}: no unit in proofs/wp-manifest.json" in there
    # a source whose meaning does not depend on the data keeps its text
    assert protocol.BY_KEY["targets"].meaning(tmp_path) == protocol.BY_KEY["targets"].absent


def _texts() -> dict[str, str]:
    """Every text the report renders about what is proved, and the build's comments."""
    meanings = {f"absent {s.key}": s.meaning(ROOT) for s in protocol.SOURCES}
    meanings |= {f"static absent {s.key}": s.absent for s in protocol.SOURCES}
    report = trusted.as_json(UNITS)
    return {
        **meanings,
        **{f"running code on {isa}": prose.running_code(UNITS, isa, 786432) for isa in prose.ISAS},
        "trusted base and objectives": "\n\n".join(prose.strings(report)),
        "setup.py": (ROOT / "setup.py").read_text(),
        "_native_variants.c": (ROOT / "src/sonnx_mul/_native_variants.c").read_text(),
        "_native.c": (ROOT / "src/sonnx_mul/_native.c").read_text(),
    }


def test_no_sentence_calls_a_wp_proved_loop_unproved() -> None:
    found = {name: prose.unproved_claims(text, UNITS) for name, text in _texts().items()}
    assert {name: claims for name, claims in found.items() if claims} == {}


@pytest.mark.parametrize("stale", STALE)
def test_negative_control_the_stale_sentences_are_found(stale: str) -> None:
    assert prose.unproved_claims(stale, UNITS) == [stale]
    # and a loop without a unit may be called unproved
    without = tuple(
        u for u in UNITS if u.source not in (F16C, STREAM8, "native/src/sonnx_mul_float.c")
    )
    assert prose.unproved_claims(stale, without) == []


def test_negative_control_a_report_calling_a_proved_loop_unproved_is_found(
    tmp_path: Path,
) -> None:
    # the checks read the texts it is given: a planted sentence in a copy of setup.py
    copy = tmp_path / "setup.py"
    shutil.copy(ROOT / "setup.py", copy)
    copy.write_text(copy.read_text() + "\n# The streaming loop is not proved.\n")
    assert prose.unproved_claims(copy.read_text(), UNITS) == ["# The streaming loop is not proved."]
