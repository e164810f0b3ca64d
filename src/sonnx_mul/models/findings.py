"""What a check finds: one Violation per requirement and node, and the Report."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Violation:
    """One requirement a node violates or cannot be shown to satisfy.

    ``definite`` is True when the model certainly violates ``requirement``
    and False when the static information cannot show that it holds.
    """

    requirement: str
    node: str
    path: str
    message: str
    definite: bool = True

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Report:
    """The findings of one check and how many Mul nodes were judged."""

    violations: tuple[Violation, ...]
    mul_nodes: int

    @property
    def definite(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.definite)

    @property
    def undecided(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if not v.definite)

    def nodes(self, definite: bool) -> list[tuple[str, str]]:
        """(path, node) of the nodes with a definite finding, or with undecided ones only."""
        bad = dict.fromkeys((v.path, v.node) for v in self.definite)
        if definite:
            return list(bad)
        return list(
            dict.fromkeys((v.path, v.node) for v in self.undecided if (v.path, v.node) not in bad)
        )

    @property
    def verdict(self) -> str:
        """One of: conforms; violates (a definite finding); undecided (undecided findings only)."""
        if self.definite:
            return "violates"
        return "undecided" if self.violations else "conforms"
