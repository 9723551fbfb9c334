"""RunResults: the typed run record. results.json is dumped from it; the CLI, the viewer, `evolve()` and report.html
read it. Its fields are results.json's sections as they are on disk (same keys, same values), so a record read back
from a file dumps to the same bytes.

Sections a run may lack (`probes`, `views`, a condition's `probe_warnings`) are left out of the file when None,
as they always were. `meta.extra` and `views` stay open mappings: the first is what the protocol copies in verbatim,
the second each view's own data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .records import RunMeta

RESULTS_FILE = "results.json"


def _absent(value: object) -> bool:
    return value is None


class Section(BaseModel):
    """A part of results.json: closed (an unknown key is an error, so nothing is dropped silently) and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(Section):
    """A mean with its bootstrap CI; None where there was nothing to average."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None


class SeedInterval(Interval):
    """The CI over per-seed means, and how many seeds it spans."""

    n_seeds: int


class SeedMean(Section):
    seed: int
    mean: float | None
    n_tasks: int
    n_errors: int


class SplitSummary(Interval):
    """Accuracy of one condition × model on one split: the task-resampled CI and its counts."""

    n_tasks: int
    n_graded: int
    n_errors: int
    n_seeds: int
    per_seed: list[SeedMean]
    seed_ci: SeedInterval | None
    pass_rate: Interval | None


class ConditionResult(Section):
    """One condition × model: its test and val accuracy, and the role-probe warnings it earned."""

    condition: str
    model: str
    test: SplitSummary | None
    val: SplitSummary | None
    probe_warnings: list[str] | None = Field(default=None, exclude_if=_absent)


class Versus(Section):
    """One condition against the baseline graded by the same model: the paired per-task difference on test."""

    condition: str
    model: str
    baseline: str
    n_paired: int
    mean: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    # the smallest difference these paired tasks detect at 80% power, α 0.05; left out for the baseline itself (and
    # in results.json files written before it existed)
    mde: float | None = Field(default=None, exclude_if=_absent)


class CallStats(Section):
    """Counts and sums over ledger rows; cached calls count in every total and are broken out too."""

    calls: int
    cached_calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    cached_input_tokens: int
    cached_output_tokens: int
    cached_cost_usd: float
    # of input_tokens, those the model computed (the rest reused from a kept prefix or a server's prompt cache, and
    # none for cache hits); absent when no backend reported it (scripted, older runs)
    input_tokens_evaluated: int | None = Field(default=None, exclude_if=_absent)


class CallBreakdown(Section):
    totals: CallStats
    by_role: dict[str, CallStats]
    by_phase: dict[str, CallStats]


class ConditionCalls(CallBreakdown):
    condition: str | None  # None: calls made outside any cell


class CallCell(CallStats):
    """The calls of one condition × model × role × phase."""

    condition: str | None
    model: str | None
    role: str
    phase: str


class Calls(CallBreakdown):
    by_condition: list[ConditionCalls]
    rows: list[CallCell]


class RolePlay(Section):
    """Which model played one role of one condition (None: calls outside any cell), with its calls, from the ledger."""

    condition: str | None
    role: str
    models: dict[str, int]


class HeadroomShare(Section):
    """Another condition's paired difference to the baseline, and its share of the headroom (None unless the
    headroom is positive) with the share's bootstrap CI (a side None: the CI cannot bound it, as when resampled
    headrooms reach 0)."""

    condition: str
    diff: float | None
    share: float | None
    share_ci_low: float | None = None
    share_ci_high: float | None = None


class Headroom(Section):
    """The reference harness against the baseline graded by the same model: the paired difference with its CI and
    MDE, whether the CI leaves 0 (`note` says what it means when it does not), and every other condition's share."""

    model: str
    baseline: str
    control: str  # the reference condition
    n_paired: int
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    mde: float | None
    detectable: bool
    note: str | None
    shares: list[HeadroomShare]


class BudgetResult(Section):
    """One cell's evolution budget: limits (`max_*`), what it used, the used share of each limit."""

    condition: str
    model: str
    seed: int
    limits: dict[str, int | float | None]
    used: dict[str, int | float]
    fraction_used: dict[str, float]
    exhausted: bool


class SelectionCandidate(Section):
    """A version selection could keep: the practice steps done when it was taken (0: the initial version) and its
    val mean (None: not graded; `skipped` when the budget could not pay for grading it)."""

    version: str
    step: int
    val: float | None
    skipped: bool


class SelectionResult(Section):
    """Why one cell tested the version it did: the reason (a closed set: best, tie, final_lower, final_unscored,
    unchanged, no_val, select_last) and its line, the candidates graded on val, the tie rule, and a warning when
    the budget left the final version ungraded."""

    condition: str
    model: str
    seed: int
    reason: str
    text: str
    selected: str
    final: str
    n_val: int
    rule: str
    candidates: list[SelectionCandidate]
    warning: str | None


class ProbeResult(Section):
    """One role × method × model probed before the run."""

    method: str
    role: str
    model: str
    conditions: list[str]
    n: int
    well_formed: int
    usable: int
    tokens: int
    errors: int
    reasons: list[str]
    well_formed_share: float
    usable_share: float
    warning: str | None


class Probes(Section):
    threshold: float
    rows: list[ProbeResult]


class UpdateQuality(Section):
    """What one update role of one condition × model wrote during practice (all seeds): its replies, the usable
    ones, and the rejections by kind (`parts`: how many of them refused only a part of a reply)."""

    condition: str
    model: str
    role: str
    replies: int
    usable: int
    echo: int
    duplicate: int
    repeated: int
    refused: int
    malformed: int
    parts: int


class StatsNotes(Section):
    """How the intervals were computed: the level, the resamples, and a sentence per choice."""

    ci_level: float
    n_resamples: int
    method: str
    unit: str
    seed_ci: str
    bootstrap_seed: str
    errors: str
    pass_rate: str
    versus_baseline: str
    mde: str | None = Field(default=None, exclude_if=_absent)  # how versus_baseline's MDE is computed


class TransferCell(Section):
    """One condition's selected harnesses, evolved with one model and tested with another (or the same: the run's own
    test score), pooled over seeds: per-task means over seeds, then their mean and bootstrap CI."""

    condition: str
    evolved_on: str
    tested_on: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_tasks: int
    n_seeds: int
    n_errors: int


class TransferSpend(Section):
    """What grading with one model in phase transfer cost (outside `calls`, which counts the run's own phases)."""

    model: str
    calls: int
    cached_calls: int
    tokens: int
    cost_usd: float


class TransferMatrix(Section):
    """Evolved on A (rows: condition × model) → tested on B (columns: `models`), from `evoarena transfer`."""

    models: list[str]
    cells: list[TransferCell]
    spend: list[TransferSpend]

    def rows(self) -> list[tuple[str, str]]:
        """The matrix's rows: each condition × the model it evolved with, in order."""
        return list(dict.fromkeys((c.condition, c.evolved_on) for c in self.cells))

    def cell(self, condition: str, evolved_on: str, tested_on: str) -> TransferCell | None:
        return next((c for c in self.cells if (c.condition, c.evolved_on, c.tested_on) ==
                     (condition, evolved_on, tested_on)), None)


class CurvePoint(Section):
    """At one spend: the val score of the checkpoint each seed would have selected by then, averaged over seeds per
    task, with its bootstrap CI over val tasks; `n_seeds` cells had a graded checkpoint by then."""

    spend: float
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_seeds: int


class SpendCurve(Section):
    """One condition × model's score against what its practice spent on one axis (calls, tokens or usd)."""

    condition: str
    model: str
    axis: str
    points: list[CurvePoint]


class SpendCurves(Section):
    """Score-vs-spend (`protocol.spend_curves`): the split the score is on and how it is read, and the curves."""

    split: str
    note: str
    curves: list[SpendCurve]


class RunResults(Section):
    """One run's results: what results.json holds."""

    schema_version: int
    meta: RunMeta
    evidence: str
    stats: StatsNotes
    conditions: list[ConditionResult]
    versus_baseline: list[Versus]
    calls: Calls
    roles: list[RolePlay] = Field(default_factory=list)  # which model played each role, per condition
    budgets: list[BudgetResult]
    headroom: list[Headroom] | None = Field(default=None, exclude_if=_absent)  # with a reference condition only
    selections: list[SelectionResult] = Field(default_factory=list)  # per cell that selects, as budgets are ordered
    probes: Probes | None = Field(default=None, exclude_if=_absent)
    update_quality: list[UpdateQuality] = Field(default_factory=list)  # per condition × model × update role
    views: dict[str, Any] | None = Field(default=None, exclude_if=_absent)  # each view's data, by view name
    transfer: TransferMatrix | None = Field(default=None, exclude_if=_absent)  # only once a transfer was graded
    spend_curves: SpendCurves | None = Field(default=None, exclude_if=_absent)  # only with protocol.spend_curves

    def to_text(self) -> str:
        """results.json's text: sorted keys, indent 2, no NaN, UTF-8 as is, a final newline."""
        return json.dumps(self.model_dump(), sort_keys=True, indent=2, allow_nan=False, ensure_ascii=False) + "\n"

    @classmethod
    def read(cls, path: Path) -> RunResults:
        """The record a results.json file holds (pydantic.ValidationError if it is not one of this shape)."""
        return cls.model_validate_json(Path(path).read_text("utf-8"))

    def condition(self, condition: str, model: str) -> ConditionResult | None:
        """The row of a condition × model, if the run has one."""
        return next((c for c in self.conditions if c.condition == condition and c.model == model), None)

    def selection(self, condition: str, model: str, seed: int) -> SelectionResult | None:
        """Why a cell tested the version it did, if the cell selects one."""
        return next((s for s in self.selections if (s.condition, s.model, s.seed) == (condition, model, seed)), None)

    def played_by(self, condition: str | None, role: str) -> list[str]:
        """The models that played a role of a condition, by name ([] when the ledger has no such call)."""
        return next((list(p.models) for p in self.roles if (p.condition, p.role) == (condition, role)), [])

    def views_data(self) -> Mapping[str, Any]:
        """The views' sections, by view name ({} without any)."""
        return self.views or {}
