"""Plain input records for the report: graded tasks, ledger rows, cell budgets and run metadata."""

from __future__ import annotations

from dataclasses import dataclass, field

EVIDENCE_LEVELS: tuple[str, ...] = ("mechanism", "scaled", "replication")
SPLITS: tuple[str, ...] = ("test", "val")


@dataclass(frozen=True)
class ScoreRecord:
    """One graded task of one cell (condition x model x seed)."""

    condition: str  # method/condition label, e.g. "frozen", "reflexion"
    model: str  # model name from the spec
    seed: int
    split: str  # "test" or "val"
    task_id: str
    score: float  # 0..1
    error: bool = False  # provider error: excluded from accuracy, counted separately (never a failure)
    passed: bool | None = None  # the grader's all-or-nothing verdict ("hard"), when it gives one


@dataclass(frozen=True)
class CallRecord:
    """One ledger row: a single model call."""

    condition: str | None
    model: str | None
    seed: int | None
    role: str
    model_id: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    cached: bool
    error: str | None
    phase: str  # "practice" | "select" | "test"
    played_by: str | None = None  # the spec's model (a key of `models:`) that answered; None: not recorded
    input_tokens_evaluated: int | None = None  # prompt tokens the model computed; None: the backend did not say


@dataclass(frozen=True)
class CellBudget:
    """Evolution budget of one cell: its limits, what it used, and whether it ran out."""

    condition: str
    model: str
    seed: int
    limits: dict[str, int | float | None]  # max_attempts / max_calls / max_tokens / max_usd
    used: dict[str, int | float]  # attempts / calls / tokens / usd used during evolution
    exhausted: bool


@dataclass(frozen=True)
class RunMeta:
    """Identity of one run, copied verbatim into results.json."""

    run_id: str
    spec_name: str
    spec_hash: str
    code_version: str
    evidence: str  # "mechanism" | "scaled" | "replication"
    benchmark: str
    test_split_hash: str
    isolation: str
    started_at: str
    finished_at: str | None
    extra: dict[str, object] = field(default_factory=dict)
