"""What the lineage pages show of a cell's versions: each version's scores by phase, its clade's means and its
parent policy's statistic (`report.lineage_tree`), the update calls of the step that made it, its manifest and the
verdict of its change on the next attempts of the tasks it names (`report.change_report.score_cell`, computed as
`results.json` does; nothing is stored)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evoarena.report.change_report import ChangeResult, score_cell
from evoarena.report.lineage_tree import NodeStats, node_stats, with_policy
from evoarena.store import RunStore
from evoarena.store.queries import CellRow, practice_attempts, unit_keys, version_results
from evoarena.store.versions import VersionRow, cell_versions
from evoarena.store.view_lineage import PhaseMean, update_calls, version_means
from evoarena.store.view_trace import CallBrief

PHASES = (("practice", "practice"), ("rollout", "rollouts"), ("select", "val"), ("test", "test"))
# events methods log about their search over versions: the policy's statistics and decisions, step by step
LINEAGE_EVENTS = ("gepa_seed", "gepa_iteration", "gepa_merge", "hgm_step", "evoskill_seed", "evoskill_iteration",
                  "evoskill_discarded", "evoskill_skip", "ahe_round", "autogenesis_step", "skillprox_candidate",
                  "skillprox_iteration", "skillprox_prox", "evotest_episode", "rollback", "search_node")


@dataclass(frozen=True)
class Node:
    """One version as the lineage page shows it."""

    row: VersionRow
    means: Mapping[str, PhaseMean]  # phase -> mean and count
    stats: NodeStats | None  # clade pools and the policy's statistic
    children: tuple[str, ...]
    selected: bool
    current: bool
    change: ChangeResult | None  # its manifest scored on later attempts (versions with a parent)
    made_by: tuple[CallBrief, ...] = ()  # the update calls of the step that recorded it (proposer, reflector…)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def val(self) -> PhaseMean | None:
        return self.means.get("select")

    @property
    def step_label(self) -> str:
        """The step without its phase ("e2/0003/train-011": epoch, step, task), short enough for a node's box."""
        parts = self.row.step.split("/")
        return "/".join(parts[1:]) if len(parts) > 2 else self.row.step

    @property
    def clade_val(self) -> PhaseMean | None:
        pool = self.stats.clade_val if self.stats and self.children else ()
        return PhaseMean(sum(pool) / len(pool), len(pool)) if pool else None

    @property
    def manifest(self) -> Mapping[str, Any]:
        return self.row.manifest

    def scores(self) -> list[tuple[str, PhaseMean]]:
        return [(label, self.means[phase]) for phase, label in PHASES if phase in self.means]


@dataclass(frozen=True)
class CellLineage:
    cell: CellRow
    policy: str | None  # the cell's parent policy (hgm), from the spec
    nodes: tuple[Node, ...]  # in the order they were made
    by_id: Mapping[str, Node] = field(default_factory=dict)


def changes(store: RunStore, cell: str, versions: Sequence[VersionRow]) -> dict[str, ChangeResult]:
    """Each change's verdict, when some manifest of the cell names a task (else there is nothing to score and the
    cell's practice attempts are not read)."""
    if not any(v.manifest.get("expected_fixes") or v.manifest.get("expected_regressions") for v in versions):
        return {}
    scored = score_cell(versions, practice_attempts(store, cell), unit_keys(store, cell))
    return {r.change.version: r for r in scored.changes}


def cell_lineage(store: RunStore, cell: CellRow, policy: str | None) -> CellLineage:
    """Every version of `cell` with its scores, clade means, policy statistic and change verdict."""
    versions = cell_versions(store, cell.cell)
    means = version_means(store, cell.cell)
    pooled = version_results(store, cell.cell, ("rollout", "select"))  # what clade means and policies pool
    stats = {s.id: s for s in with_policy(node_stats(versions, pooled), policy)}
    verdicts = changes(store, cell.cell, versions)
    calls = update_calls(store, cell.cell)
    kids: dict[str, list[str]] = {}
    for v in versions:
        for p in v.parent_ids:
            kids.setdefault(p, []).append(v.id)
    nodes = tuple(Node(v, means.get(v.id, {}), stats.get(v.id), tuple(kids.get(v.id, ())),
                       v.id == cell.selected_version, v.id == cell.current_version, verdicts.get(v.id),
                       tuple(calls.get(v.step, ())))
                  for v in versions)
    return CellLineage(cell, policy, nodes, {n.id: n for n in nodes})
