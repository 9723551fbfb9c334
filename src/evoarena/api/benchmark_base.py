"""What a benchmark is: a seeded source of tasks with hidden graders."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from evoarena.api.grading import GradingModel
from evoarena.api.params import Params as BaseParams
from evoarena.api.params import check_params, field_defaults, params_from_defaults
from evoarena.api.probe import GENERIC_EXAMPLES, ProbeExample
from evoarena.api.schedule import PracticeSelectTest, Schedule, schedule_named
from evoarena.api.task import Feedback, Parsed, Task, TaskView, TestSplitLocked
from evoarena.models.base import GenParams


class Benchmark(ABC):
    name: ClassVar[str]

    class Params(BaseParams):
        """Every parameter the benchmark accepts, with its default; unknown or ill-typed params are refused."""

    defaults: ClassVar[dict[str, Any]] = {}
    """The defaults of `Params`, in declaration order (a class that declares only these gets a `Params` built
    from them)."""
    params: Any
    """This benchmark's `Params`, validated: read as `self.params.name`."""
    schedule: ClassVar[type[Schedule]] = PracticeSelectTest
    """How the protocol runs a cell: `PracticeSelectTest` (train → checkpoint selection on val → test once) or
    `Curriculum` (ordered episodes of stages: practice attempts on a stage, then its test, state carried on)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A benchmark written for the older string attribute (`protocol = "curriculum"`) gets the schedule it
        named (an unknown name is refused when its class is defined), and one that declares only `defaults` gets a
        `Params` built from them."""
        super().__init_subclass__(**kwargs)
        legacy = cls.__dict__.get("protocol")
        if isinstance(legacy, str):
            cls.schedule = schedule_named(legacy)
        if "Params" not in vars(cls) and "defaults" in vars(cls):
            setattr(cls, "Params", params_from_defaults(cls.__name__, cls.defaults))  # noqa: B010
        cls.defaults = field_defaults(cls.Params)
        missing = [f for f in cls.schedule.needs if f not in cls.Params.model_fields]
        if missing:
            raise TypeError(f"{cls.__name__}: schedule {cls.schedule.name} needs {', '.join(missing)} in its Params")

    def __init__(self, **params: Any) -> None:
        self.params = self.check_params(params)
        self._locked = False

    @classmethod
    def probe_examples(cls) -> tuple[ProbeExample, ...]:
        """Tiny fixed update situations in this benchmark's own format (a task, a wrong answer, its feedback) for
        role probes; generic arithmetic and counting ones by default."""
        return GENERIC_EXAMPLES

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> Any:
        """The benchmark's `Params` from these values; unknown names and ill-typed or out-of-range values are
        refused."""
        return check_params(f"benchmark.params ({cls.name})", cls.Params, params)

    @classmethod
    def grader_roles(cls, params: Any) -> tuple[str, ...]:
        """The model roles grading calls with these params, a `Params` (the files benchmark's judge: ("judge",)). The
        spec must map each in `roles:`; the runner binds one ledgered model per role with `bind_grader`. None by
        default: grading is a pure function of the task and the answer."""
        return ()

    def bind_grader(self, models: Mapping[str, GradingModel]) -> None:
        """Receive a model for every `grader_roles` role, once, before any grading. Their calls are recorded in the
        ledger (phase "grading") and cached, and count against no method's budget."""
        missing = set(self.grader_roles(self.params)) - set(models)
        if missing:
            raise ValueError(f"benchmark {self.name!r}: no model for grading role(s) {sorted(missing)}")

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
        return {"name": self.name, "protocol": self.schedule.name}

    def solver_params(self) -> GenParams:
        return GenParams()

    def format_task(self, task: TaskView) -> str:
        """How the task appears at the end of the solve prompt."""
        return task.prompt
