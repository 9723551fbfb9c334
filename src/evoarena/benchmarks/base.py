"""What a benchmark is: a seeded source of tasks with hidden graders."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from evoarena.models.base import GenParams

Split = Literal["train", "val", "test"]


class TestSplitLocked(PermissionError):
    """Raised when anything but the evaluator reaches for the test split."""

    __test__ = False  # not a pytest class


@dataclass(frozen=True)
class TaskView:
    """What a method and the solver may see of a task."""

    id: str
    split: Split
    source_id: str
    prompt: str


@dataclass(frozen=True)
class Task:
    """A task with its hidden reference; only the runner and grader hold these."""

    id: str
    split: Split
    source_id: str
    prompt: str
    reference: str
    meta: dict[str, Any] = field(default_factory=dict)

    def view(self) -> TaskView:
        return TaskView(self.id, self.split, self.source_id, self.prompt)

    def payload_hash(self) -> str:
        blob = json.dumps([self.id, self.split, self.source_id, self.prompt, self.reference], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Parsed:
    """A parsed solver output: `answer` is None when the output could not be parsed."""

    answer: str | None
    error: str | None = None


@dataclass(frozen=True)
class Feedback:
    score: float
    passed: bool
    message: str


class Benchmark(ABC):
    name: ClassVar[str]
    protocol: ClassVar[str] = "practice-select-test"
    """"practice-select-test" (train → checkpoint selection on val → test once) or "curriculum" (ordered
    episodes of stages: practice attempts on a stage, then its test, state carried to the next stage)."""

    def __init__(self, **params: Any) -> None:
        self.params = params
        self._locked = False

    @abstractmethod
    def generate(self) -> list[Task]:
        """All tasks of all splits, deterministic given the benchmark's params."""

    def build(self) -> list[Task]:
        """Generate the tasks once; afterwards the benchmark is locked, so no later holder can regenerate
        the test split."""
        if self._locked:
            raise TestSplitLocked(f"benchmark {self.name!r} is locked: its tasks were already handed out")
        self._locked = True
        return self.generate()

    @abstractmethod
    def parse(self, text: str) -> Parsed: ...

    @abstractmethod
    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        """Grade an answer; `attempt` (1-based, per stage) lets practice feedback depend on the attempt."""

    @abstractmethod
    def system_prompt(self) -> str:
        """The initial `system.md` of a harness for this benchmark."""

    def update_note(self, note: str | None, task: Task) -> str | None:
        """The update note a method receives for a practice step on `task`. Benchmarks may define named notes
        (CLR's lesson and its ablations) and stage-dependent ones; plain text passes through."""
        return note

    def observation(self, feedback: Feedback) -> str | None:
        """What an agent sees when its answer is executed (a program's run on the practice inputs), for methods
        that show their update roles the execution output (Dynamic Cheatsheet, ReasoningBank). None where
        answers are only graded, so the grader's verdict never reaches those roles."""
        return None

    def diagnose(self, task: Task, answer: str | None, state: str = "") -> dict[str, Any] | None:
        """Optional extra analysis of a graded test answer and of the method's state (the harness text) that
        wrote it (CLR's value-level and state diagnostics); None if none."""
        return None

    def info(self) -> dict[str, Any]:
        """Facts about this benchmark build that reports must carry (e.g. certification status)."""
        return {"name": self.name, "protocol": self.protocol}

    def solver_params(self) -> GenParams:
        return GenParams()

    def format_task(self, task: TaskView) -> str:
        """How the task appears at the end of the solve prompt."""
        return task.prompt
