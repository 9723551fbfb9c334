"""`reasoning_gym`: any dataset of the reasoning-gym package by name, seeded, graded by the dataset's own
`score_answer` (docs/benchmarks/reasoning_gym.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

import evoarena.benchmarks.reasoning_gym.library as library
from evoarena.api import Benchmark, Feedback, Parsed, Split, Task, benchmark
from evoarena.benchmarks.files.graders import region
from evoarena.benchmarks.prompts import prompt_template
from evoarena.benchmarks.reasoning_gym.library import GymError
from evoarena.models.base import GenParams

Mode = Literal["tag", "answer", "last_line", "first_line", "full"]
"""`tag`: reasoning_gym's own <answer>…</answer>; the others (`files.parsing.PARSE_MODES`) read the output as the
files benchmark does."""
SPLITS: tuple[Split, ...] = ("train", "val", "test")
DRAWS_PER_TASK = 4
"""Indices tried per wanted task before giving up on finding enough distinct questions."""


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


@benchmark("reasoning_gym")
class ReasoningGymBenchmark(Benchmark):
    """Any reasoning-gym dataset by name (`dataset`, its own `config`), seeded, split into train/val/test by size,
    graded by the dataset's own `score_answer`."""

    class Params(Benchmark.Params):
        dataset: str = Field("", description="The dataset's registered name (required); an unknown one is refused "
                                             "with the closest names.")
        config: dict[str, Any] = Field(default_factory=dict, description="The dataset's config fields, checked by its "
                                       "own `validate()` (a YAML list becomes a tuple and a string an enum member "
                                       "where the field's default is one; `seed` and `size` are the benchmark's).")
        seed: int = Field(0, description="The dataset's seed (item `i` is generated from `seed + i`).")
        n_train: int = Field(20, ge=1, description="Tasks in the train split.")
        n_val: int = Field(10, ge=1, description="Tasks in the val split.")
        n_test: int = Field(30, ge=1, description="Tasks in the test split.")
        parse: Mode = Field("tag", description="How the answer is read: `tag` is reasoning-gym's own "
                            "`extract_answer` (inside the last `<answer>…</answer>`); the others as the `files` "
                            "benchmark reads them (docs/own-tasks.md).")
        system: str = Field("", description="The initial `system.md`; empty: reasoning-gym's default for `tag`, else "
                                            "a one-line instruction for the parse mode.")
        max_tokens: int = Field(512, ge=1, description="The solver's generation default for its reply length.")
        temperature: float = Field(0.0, description="The solver's generation default for temperature.")
        pass_threshold: float = Field(1.0, gt=0, le=1, description="The score at which an answer counts as passed "
                                                                   "(several datasets give partial credit).")
        reveal: bool = Field(False, description="Append `A correct answer is '…'.` to failed feedback (train and val "
                                                "only).")

    params: Params

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> Any:
        """Declared names, types and ranges, then the dataset name and its config, checked by building the config:
        called by the spec check, so an unknown dataset or config field stops the run before anything is
        written."""
        p = super().check_params(params)
        if not p.dataset:
            raise GymError("benchmark.params.dataset: required (a reasoning_gym dataset name, e.g. basic_arithmetic)")
        library.make_config(p.dataset, p.config, seed=p.seed, size=cls.size(p))
        return p

    @staticmethod
    def size(p: ReasoningGymBenchmark.Params) -> int:
        """How many indices of the dataset may be drawn to find the distinct questions the splits need."""
        return DRAWS_PER_TASK * (p.n_train + p.n_val + p.n_test) + 20

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.dataset: Any = None
        self._info: dict[str, Any] = {}

    def generate(self) -> list[Task]:
        """The first distinct questions of the seeded dataset, in index order: train, then val, then test. A question
        drawn again is skipped, so no question is on both sides of the split."""
        p = self.params
        self.dataset = library.make_dataset(p.dataset, p.config, seed=p.seed, size=self.size(p))
        wanted: list[Split] = [s for s in SPLITS for _ in range(getattr(p, f"n_{s}"))]
        tasks: list[Task] = []
        seen: set[str] = set()
        index = 0
        while len(tasks) < len(wanted) and index < len(self.dataset):
            entry = self.dataset[index]
            question = str(entry["question"])
            if question not in seen:
                seen.add(question)
                digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:10]
                split = wanted[len(tasks)]
                tasks.append(Task(f"{p.dataset}-{index:04d}", split, f"q{digest}", question,
                                  str(entry["answer"]), {"entry": entry, "index": index}))
            index += 1
        if len(tasks) < len(wanted):
            raise GymError(f"benchmark.params: {p.dataset} gave only {len(tasks)} distinct questions in "
                           f"{index} draws with this config; ask for fewer than {len(wanted)} tasks")
        self._info = {"dataset": p.dataset, "config": dict(p.config), "seed": p.seed,
                      "reasoning_gym": library.package_version(), "parse": p.parse,
                      "sizes": {s: wanted.count(s) for s in SPLITS},
                      "duplicates_skipped": index - len(tasks)}
        return tasks

    def parse(self, text: str) -> Parsed:
        mode = self.params.parse
        if mode == "tag":
            found = library.extract_tag(text)
            return Parsed(found) if found else Parsed(None, "no <answer>…</answer> in the output")
        picked = region(text, mode)
        return Parsed(picked) if picked is not None else Parsed(None, "empty output")

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        if answer is None:
            missing = ("No <answer>…</answer> was found in the output." if self.params.parse == "tag"
                       else "The output was empty.")
            feedback = Feedback(0.0, False, missing)
        else:
            feedback = self._score(task, answer)
        if self.params.reveal and not feedback.passed:
            feedback = Feedback(feedback.score, feedback.passed,
                                f"{feedback.message} A correct answer is {task.reference!r}.")
        return feedback

    def _score(self, task: Task, answer: str) -> Feedback:
        """The dataset's own `score_answer`, clipped to [0, 1]; passed at `pass_threshold`."""
        if self.dataset is None:
            self.dataset = library.make_dataset(self.params.dataset, self.params.config, seed=self.params.seed,
                                                size=self.size(self.params))
        try:
            raw = float(self.dataset.score_answer(answer, task.meta["entry"]))
        except Exception as err:  # the library's scorer choking on a malformed answer is a wrong answer
            return Feedback(0.0, False, f"The answer {_quote(answer)} could not be scored "
                                        f"({type(err).__name__}); it is not in the form the task asks for.")
        score = min(max(raw, 0.0), 1.0)
        if score >= self.params.pass_threshold:
            return Feedback(score, True, "Correct." if score == 1.0 else f"Accepted (score {score:.2f}).")
        if score > 0.0:
            return Feedback(score, False, f"The answer {_quote(answer)} is not correct (partial score "
                                          f"{score:.2f}).")
        return Feedback(0.0, False, f"The answer {_quote(answer)} is not correct.")

    def system_prompt(self) -> str:
        mode = self.params.parse
        text: str = self.params.system or (library.default_system_prompt() if mode == "tag" else
                                         prompt_template(__name__.rpartition(".")[0], f"system_{mode}.md").render())
        return text if text.endswith("\n") else text + "\n"

    def solver_params(self) -> GenParams:
        return GenParams(temperature=self.params.temperature, max_tokens=self.params.max_tokens)

    def info(self) -> dict[str, Any]:
        return {**super().info(), **self._info}
