"""SkillProx's files under `memory/skillprox/` as models: the plan and counters (`state.json`), the update history
(`history.jsonl`), the per-iteration records (`iterations.jsonl`) and the Prox record (`prox.json`). Keys that only
some records carry are `Absent` (left out of the file while unset), as the records were always written."""

from __future__ import annotations

from pydantic import BaseModel

from evoarena.harness.state import Absent

CharStats = dict[str, int]
"""`skill.char_stats`: characters of SKILL.md vs the active references, and unit counts."""


class TaskMark(BaseModel):
    passed: bool
    score: float


class BatchRow(BaseModel):
    """A batch's measured accuracies: H (every cell right), C (mean cell accuracy), and each task's."""

    H: float
    C: float
    tasks: dict[str, TaskMark] = {}


class Counters(BaseModel):
    """Running totals of the forward phase (the paper's efficiency ratios are made from them)."""

    diagnoses: int = 0
    diagnosis_chars: int = 0
    writes: int = 0
    chars_written: int = 0
    candidates: int = 0
    update_iterations: int = 0
    accepted_iterations: int = 0


class Plan(BaseModel):
    """What the first step found: the train size, the initially failing tasks (None: not evaluated) and those
    picked for the batches, with X_0's H and C when it was evaluated."""

    train: int
    failing: int | None
    selected: list[str]
    H0: Absent[float] = None
    C0: Absent[float] = None


class ForwardEnd(BaseModel):
    """Why and where the forward phase ended, with its counters and ratios and the skill it left (X_f)."""

    reason: str
    iterations: int
    update_iterations: int
    accepted_iterations: int
    candidates: int
    diagnoses: int
    writes: int
    accepted_share: float | None
    candidates_per_update_iteration: float | None
    writes_per_diagnosis: float | None
    chars_written_per_diagnosis: float | None
    diagnosis_chars_per_diagnosis: float | None
    G: int
    chars: CharStats


class Score(BaseModel):
    H: float
    C: float


class ProxSummary(BaseModel):
    """Prox in numbers: units audited, candidates, trials, accepted edits, G before and after, val accuracies; the
    whole skill diff in prox.json (state.json keeps the summary without it)."""

    val: int
    units: int
    candidates: int
    trials: int
    evaluated: int
    accepted: int
    stopped_by_soft_cap: bool
    G_f: int
    G_final: int
    compression: float
    baseline: Score
    final: Score
    chars_before: CharStats
    chars_after: CharStats
    val_rollouts: int
    diff: Absent[str] = None


class State(BaseModel):
    """`state.json`: the phase (forward | prox | done), the batch schedule and plan, the iteration reached, the
    all-correct streak, the momentum pattern record, the counters, and the summaries of the finished phases."""

    phase: str = "forward"
    curriculum: bool
    batches: list[list[str]] | None = None
    plan: Plan | None = None
    iteration: int = 0
    streak: int = 0
    patterns: list[str] = []
    forward_end: ForwardEnd | None = None
    prox: ProxSummary | None = None
    counters: Counters = Counters()


class HistoryEntry(BaseModel):
    """A line of `history.jsonl`: one candidate update, its outcome and the batch's H/C before and after it."""

    iteration: int
    candidate: int
    summary: str
    outcome: str
    reason: str
    H_before: float
    C_before: float
    H_after: float | None
    C_after: float | None
    writes: int


class Diagnosis(BaseModel):
    """The diagnoser's reading of one batch trajectory (its score as shown, to three decimals)."""

    task: str
    passed: bool
    score: str
    diagnosis: str
    skill_change: str


class CandidateRecord(BaseModel):
    """One candidate of an iteration: its patch (files, writes, diff), its gate outcome and what it was made from."""

    candidate: int
    summary: str
    outcome: str  # accepted | rejected | not_selected | malformed | committed
    reason: str
    after: BatchRow | None = None
    passed_gate: bool = False
    written: list[str] = []
    deleted: list[str] = []
    writes: int = 0
    chars_written: int = 0
    G_after: int | None = None
    chars_after: CharStats | None = None
    diff: str = ""
    diagnoses: list[Diagnosis] = []
    overlay: str = ""


class IterationRecord(BaseModel):
    """A line of `iterations.jsonl`: the batch, H/C and size before and after, the candidates and the chosen one,
    and the pattern record after the iteration."""

    iteration: int
    batch: list[str]
    before: BatchRow
    G_before: int
    chars_before: CharStats
    candidates: list[CandidateRecord] = []
    outcome: str = ""  # all_correct | accepted | committed | rolled_back | no_valid_patch
    chosen: int | None = None
    after: BatchRow | None = None
    G_after: int = 0
    chars_after: CharStats = {}
    patterns: list[str] = []


class UnitAudit(BaseModel):
    """A knowledge unit's audit: H and C on V without it, and its utilities (the drop its removal causes)."""

    uid: str
    kind: str
    name: str
    chars: int
    H: float
    C: float
    u_hard: float
    u_cell: float


class Trial(BaseModel):
    """One shrink trial on a candidate unit; the keys after `reason` only as far as the trial got."""

    uid: str
    u_cell: Absent[float] = None
    u_hard: Absent[float] = None
    G_before: Absent[int] = None
    verdict: str = ""  # accepted | rejected | refused | gone | not_tried
    reason: str = ""
    H: Absent[float] = None
    C: Absent[float] = None
    action: Absent[str] = None
    receiver: Absent[str] = None
    summary: Absent[str] = None
    G_after: Absent[int] = None
    diff: Absent[str] = None


class ProxRecord(BaseModel):
    """`prox.json`: V, the baseline on it, the unit audit, the candidate order, every trial and the summary."""

    val: list[str]
    baseline: BatchRow
    units: list[UnitAudit]
    order: list[str]
    trials: list[Trial]
    summary: ProxSummary
