"""The one core of the pinned proofs: their limits, manifests, comparison and evidence.

The Why3 check (:mod:`sonnx_mul_assurance.why3.driver`) and the Frama-C WP
check (:mod:`sonnx_mul_assurance.c.wp`) each prove goals that a manifest
pins: every goal to a prover, the steps its proof took and the limit it is
held to.  What the two share is here, once:

* the limits: a goal's **step limit** (:func:`step_limit`: the prover's own
  deterministic resource count, so that the verdict never depends on the
  machine's load), the wall-clock safety nets that only end a hung prover
  (:data:`SAFETY_NET`, widened :data:`CHECK_NET_FACTOR` times in a check),
  and the step limit of ``update-manifest``'s search (:data:`MEASURE_STEPS`);
* a goal's pin (:func:`step_pin`) and the rule a check holds it to
  (:func:`within`), and the largest steps / limit a check prints;
* a proof set (:class:`Proofs`): its manifest (read, written as
  ``json.dumps(indent=1)``), its Why3 prover configuration (rendered under
  ``proofs/out/``), the files every check of it depends on, and its evidence
  file (named in :mod:`sonnx_mul_assurance.evidence.files`);
* a tool's version line, as the evidence records it (:func:`version_line`).

Every limit constant of the proofs is defined here and nowhere else
(``tests/assurance/test_single_definitions.py``).
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sonnx_mul_assurance.evidence import files
from sonnx_mul_assurance.why3 import config as prover_config

VALID = "Valid"
"""The verdict of a proved goal, in Why3's and in WP's output."""

STEP_MARGIN = 2
"""A goal's step limit is ``STEP_MARGIN`` times the steps its proof took (plus
``STEP_SLACK``): the count is deterministic, the margin only absorbs a prover
build that counts slightly differently."""
STEP_SLACK = 1000

MEASURE_STEPS = 2_000_000_000
"""The step limit of ``update-manifest``'s search, for a goal no prover is
pinned to yet (below every prover's maximum); a WP unit may cap it per
prover (its ``measure_steps``)."""

UNHELD_STEPS = 1
"""The step limit of a WP prover the selected goals' pins never name: it passes
them on to their own provers at once instead of burning a limit meant for
other goals (up to the safety net, when the selection holds none of its)."""

CHECK_NET_FACTOR = 6
"""A check's wall-clock net over the one a goal is pinned with: a Why3 goal's
(``SAFETY_NET`` or its own ``safetynet``), a WP unit's ``timeout`` (300 s:
1800 s).  With four busy loops and a second ``make test`` beside ``make
prove``, ``f16_bits.mlw``'s ``bf16_mul_is_ieee#3`` (1.43M cvc5 steps, net
1260 s) reached its net after 103 CPU-s: cvc5's ``--tlimit-per`` (the net,
wall-clock) aborted it and Why3 reported a HighFailure on a true goal; WP's
largest goal, ``mul1_bf16``'s ``value`` (1.52M CVC4 steps, about 50 s idle),
reached 300 s beside a second unit and was reported unknown.  Time-only
provers keep their limit: there it decides."""

SAFETY_NET = 60
"""Seconds per Why3 goal: ends a hung prover, never decides a goal its steps
prove (the slowest goal takes 1.8 s with both cores saturated;
``why3/README.md``)."""
SAFETY_FACTOR = 20
"""A Why3 goal that takes more than SAFETY_NET / SAFETY_FACTOR seconds when it
is pinned gets a safety net of its own, SAFETY_FACTOR times that (whole
minutes): the net must never be what decides, on a loaded machine either."""
TIME_ONLY: frozenset[str] = frozenset({"gappa"})
"""Why3 provers without a deterministic step count: their goals keep a time
limit (``timelimit``), far above their measured times at full load."""


def step_limit(steps: int) -> int:
    """The step limit pinned for a goal whose proof took ``steps``."""
    return STEP_MARGIN * steps + STEP_SLACK


def check_net(seconds: int) -> int:
    """A check's wall-clock net for a goal pinned with a net of ``seconds``."""
    return seconds * CHECK_NET_FACTOR


def safety_net(seconds: float) -> int:
    """The wall-clock net of a goal proved in ``seconds``: SAFETY_NET, or
    SAFETY_FACTOR times its time in whole minutes for a slow goal."""
    return max(SAFETY_NET, 60 * math.ceil(seconds * SAFETY_FACTOR / 60))


def step_pin(prover: str, steps: int, what: str) -> dict[str, int]:
    """The manifest fields of a goal ``prover`` proved in ``steps``: the steps
    and the limit a check holds it to.  RuntimeError when the prover reported
    no count (``steps`` < 0; ``what`` names the goal's kind for the message)."""
    if steps < 0:
        raise RuntimeError(f"{prover} reported no step count for {what}")
    return {"steps": steps, "steplimit": step_limit(steps)}


def within(steps: int, pin: Mapping[str, Any]) -> bool:
    """A proof of ``steps`` is within the goal's pinned limit (a goal pinned
    without one, to Qed or a time-only prover, has none to be held to).  A
    run's limit is the widest of its goals': each is held to its own here."""
    return "steplimit" not in pin or 0 <= steps <= int(pin["steplimit"])


K = TypeVar("K")


def largest_ratio(proofs: Iterable[tuple[int, int, K]]) -> tuple[float, K | None]:
    """The largest steps / limit among ``proofs`` (steps, pinned limit, key) of
    goals proved by their pinned prover; those without a limit or a count are
    left out.  (0.0, None) when none is left."""
    ratios = [(steps / limit, key) for steps, limit, key in proofs if limit > 0 and steps >= 0]
    best = max(ratios, default=None, key=lambda pair: pair[0])
    return best if best is not None else (0.0, None)


@dataclass(frozen=True)
class Proofs:
    """One set of pinned proofs: its ``manifest`` (relative to the repository),
    the Why3 configuration ``template`` its provers are reached through, and
    the ``evidence`` file a check writes (a name of :mod:`..evidence.files`)."""

    manifest: Path
    template: Path
    evidence: str

    def load_manifest(self, root: Path) -> dict[str, Any]:
        """The manifest under ``root``, as JSON."""
        data: dict[str, Any] = json.loads((root / self.manifest).read_text())
        return data

    def write_manifest(self, root: Path, manifest: Mapping[str, Any]) -> None:
        """Write the manifest under ``root`` in its one layout (one-space indent)."""
        (root / self.manifest).write_text(json.dumps(manifest, indent=1) + "\n")

    def render_config(self, root: Path) -> Path:
        """Write ``proofs/out/<template's name without .in>`` from the committed
        template, with absolute paths (:func:`..why3.config.render`)."""
        return prover_config.render(root, self.template, self.template.name.removesuffix(".in"))

    def config_inputs(self, root: Path) -> set[Path]:
        """The files every check of this set depends on, whatever its manifest
        lists: the manifest, the configuration template and every file of the
        project's drivers folder (relative to ``root``)."""
        drivers = (root / prover_config.DRIVERS).glob("*")
        return {self.manifest, self.template} | {
            p.relative_to(root) for p in drivers if p.is_file()
        }

    def evidence_path(self, root: Path) -> Path:
        """Where a check of this set writes its evidence under ``root``."""
        return root / files.evidence_path(self.evidence)


def version_line(argv: Sequence[str], timeout: int, absent: str, empty: str) -> str:
    """The first line a tool prints for ``argv`` (its version), as evidence
    records it: ``absent`` when it cannot be run or does not answer within
    ``timeout`` seconds, ``empty`` when it prints nothing."""
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return absent
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else empty
