"""The quickstart benchmark: arithmetic and counting word problems with exact-match grading."""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from pydantic import Field

from evoarena.api import Benchmark, Feedback, Parsed, Split, Task, TaskView, benchmark
from evoarena.benchmarks.arith.generator import DEFAULT_FAMILIES, Family, generate
from evoarena.benchmarks.generated import seed_param, size_param
from evoarena.models.base import GenParams

_INT = re.compile(r"-?\d+")


@benchmark("arith")
class ArithBenchmark(Benchmark):
    """Seeded word problems (add, sub, mul, two-step, count) and bare small sums (`small_sum`, which a
    small base model can learn from demonstrations). Splits are disjoint by question."""

    class Params(Benchmark.Params):
        seed: int = seed_param()
        n_train: int = size_param("train", 10)
        n_val: int = size_param("val", 10)
        n_test: int = size_param("test", 25)
        families: list[Family] = Field(default_factory=lambda: list(DEFAULT_FAMILIES), min_length=1,
                                       description="Problem families, cycled in this order (one listed twice comes "
                                                   "twice as often).")
        reply: Literal["number", "worked"] = Field(
            "number", description="number: the solver writes one line of at most 12 tokens and its first integer is "
                                  "the answer; worked: the solver may show its working in up to 160 tokens and the "
                                  "reply's last integer is the answer (a harness can ask for the working).")

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.seed = self.params.seed
        self.sizes: dict[Split, int] = {"train": self.params.n_train, "val": self.params.n_val,
                                        "test": self.params.n_test}
        self.families: list[str] = list(self.params.families)

    def generate(self) -> list[Task]:
        total = sum(self.sizes.values())
        problems = generate(self.seed, total, self.families)
        random.Random(f"arith-split:{self.seed}").shuffle(problems)
        tasks: list[Task] = []
        start = 0
        for split, size in self.sizes.items():
            for i, p in enumerate(problems[start : start + size]):
                tid = f"{split}-{i:03d}"
                tasks.append(Task(tid, split, tid, p.question, str(p.answer), {"family": p.family}))
            start += size
        return tasks

    def parse(self, text: str) -> Parsed:
        found = _INT.findall(text)
        if not found:
            return Parsed(None, f"no integer in output {text[:80]!r}")
        return Parsed(found[-1] if self.params.reply == "worked" else found[0])

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        if answer is None:
            return Feedback(0.0, False, "The output contained no number.")
        ok = answer.strip() == task.reference
        return Feedback(float(ok), ok, "Correct." if ok else f"The answer {answer} is wrong.")

    def system_prompt(self) -> str:
        return "Solve each word problem. Reply with the final answer as a single number.\n"

    def solver_params(self) -> GenParams:
        if self.params.reply == "worked":
            return GenParams(temperature=0.0, max_tokens=160)
        return GenParams(temperature=0.0, max_tokens=12, stop=("\n",))

    def format_task(self, task: TaskView) -> str:
        return f"Q: {task.prompt}\nA:"
