"""The report of a run: ``proofs/out/mutants.json`` (killed, equivalent, survived and
invalid counts, per file too, and every outcome), the summary printed, the exit code
(1 on a survivor not listed as equivalent)."""

from __future__ import annotations

from pathlib import Path

from sonnx_mul_assurance.evidence import files, schema
from sonnx_mul_assurance.mutants.mutant import Outcome

OUT = files.evidence_path(files.MUTANTS)


def report(root: Path, outcomes: list[Outcome], elapsed: float, out: Path = OUT) -> int:
    by_file: dict[str, dict[str, int]] = {}
    for o in outcomes:
        counts = by_file.setdefault(o.file, {})
        counts[o.status] = counts.get(o.status, 0) + 1
    dead = sum(o.status in ("killed", "timeout") for o in outcomes)
    equivalent = sum(o.status == "equivalent" for o in outcomes)
    invalid = sum(o.status == "invalid" for o in outcomes)
    survivors = [o for o in outcomes if o.status == "survived"]
    total = len(outcomes)
    counted = total - equivalent - invalid  # a mutant that does not compile tests nothing
    rate = dead / counted if counted > 0 else 1.0
    data = schema.MutantsRecord(
        mutants=total, killed=dead, equivalent=equivalent, survived=len(survivors),
        kill_rate=round(rate, 4), seconds=round(elapsed, 1), by_file=by_file, outcomes=outcomes,
        invalid=invalid,
    )  # fmt: skip
    schema.dump(data, root / out)
    for file, counts in sorted(by_file.items()):
        print(f"  {file}: {counts}")
    for o in survivors:
        print(
            f"SURVIVED {o.key} {o.file}:{o.line} {o.original!r} -> {o.replacement!r}  {o.context}"
        )
    timeouts = sum(o.status == "timeout" for o in outcomes)
    print(
        f"mutants: {total}, killed {dead} ({timeouts} by timeout), equivalent {equivalent}, "
        f"survived {len(survivors)}, "
        f"invalid {invalid}; kill rate {100 * rate:.1f}% of the non-equivalent valid ones; "
        f"{elapsed:.0f} s"
    )
    return 1 if survivors else 0
