"""Role-probe summaries: per role × method × model, the share of well-formed and usable probe replies, the tokens
spent, and the warning a share below the threshold earns (shown in results.json, the report and the CLI)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.codec import to_plain
from evoarena.store.probes import ProbeRow

DEFAULT_THRESHOLD = 0.5
"""A role × method whose usable share is below this gets a warning."""


@dataclass(frozen=True)
class ProbeSummary:
    method: str
    role: str
    model: str
    conditions: tuple[str, ...]
    n: int
    well_formed: int
    usable: int
    tokens: int
    errors: int
    reasons: tuple[str, ...]

    @property
    def usable_share(self) -> float:
        return self.usable / self.n if self.n else 0.0

    @property
    def well_formed_share(self) -> float:
        return self.well_formed / self.n if self.n else 0.0

    def warning(self, threshold: float) -> str | None:
        """The line a low usable share earns, or None."""
        if self.n == 0 or self.usable_share >= threshold:
            return None
        return (f"{self.role} ({self.model}) produced {self.usable}/{self.n} usable {self.method} updates in probes: "
                "a null here is uninformative")

    def row(self, threshold: float) -> dict[str, Any]:
        return {**to_plain(self), "well_formed_share": round(self.well_formed_share, 4),
                "usable_share": round(self.usable_share, 4), "warning": self.warning(threshold)}


def summarise(rows: Iterable[ProbeRow]) -> list[ProbeSummary]:
    """One summary per (method, role, model), in that order; the most frequent refusal reasons first."""
    groups: dict[tuple[str, str, str], list[ProbeRow]] = defaultdict(list)
    for r in rows:
        groups[(r.method, r.role, r.model)].append(r)
    out = []
    for (method, role, model), group in sorted(groups.items()):
        rs = [r for r in group if r.error is None]  # a probe whose call failed has no verdict yet: in `errors`
        counts: dict[str, int] = defaultdict(int)
        for r in rs:
            if r.reason:
                counts[r.reason] += 1
        out.append(ProbeSummary(
            method=method, role=role, model=model,
            conditions=tuple(sorted({c for r in group for c in r.conditions})), n=len(rs),
            well_formed=sum(r.well_formed for r in rs), usable=sum(r.usable for r in rs),
            tokens=sum(r.tokens for r in rs), errors=len(group) - len(rs),
            reasons=tuple(sorted(counts, key=lambda k: (-counts[k], k))[:3]),
        ))  # fmt: skip
    return out


def warnings_by_condition(summaries: Sequence[ProbeSummary], threshold: float) -> dict[str, list[str]]:
    """condition -> the warning lines of the roles it uses."""
    out: dict[str, list[str]] = defaultdict(list)
    for s in summaries:
        line = s.warning(threshold)
        if line:
            for c in s.conditions:
                out[c].append(line)
    return dict(out)


def probes_section(rows: Sequence[ProbeRow], threshold: float) -> dict[str, Any]:
    """results.json's `probes`: the threshold and one row per role × method × model."""
    return {"threshold": threshold, "rows": [s.row(threshold) for s in summarise(rows)]}
