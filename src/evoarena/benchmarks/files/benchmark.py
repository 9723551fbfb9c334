"""`files`: your own tasks from a JSONL, JSON or CSV file (or a saved Hugging Face dataset), graded by a
deterministic grader (docs/own-tasks.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evoarena.api import Benchmark, Feedback, Parsed, Task, benchmark
from evoarena.api.grading import GradingModel
from evoarena.benchmarks.files.graders import Grader, make_grader
from evoarena.benchmarks.files.judge import ROLE, Judge
from evoarena.benchmarks.files.loader import FileTasksError, load, resolve
from evoarena.benchmarks.files.tasks import (
    Columns,
    check_ratio,
    check_splits,
    drafts,
    split_by_ratio,
    template_fields,
    to_tasks,
)
from evoarena.models.base import GenParams

DEFAULT_SYSTEM = "Answer the task. End your reply with a final line of the form `Answer: <your answer>`.\n"


@benchmark("files")
class FilesBenchmark(Benchmark):
    """Your own tasks from a JSONL, JSON or CSV file (or a `datasets` folder): field mapping, a prompt template,
    splits by ratio over source groups or by a column, and a grader (exact, normalized, numeric, regex, contains,
    choice, or module:function)."""

    defaults = {
        # the file and its columns
        "path": "", "format": "", "limit": 0,
        "input": "input", "answer": "answer", "id": "", "source": "", "split": "",
        # what the solver sees
        "template": "{input}", "system": DEFAULT_SYSTEM, "max_tokens": 256, "temperature": 0.0,
        # splits (when no split column)
        "ratio": [0.3, 0.2, 0.5], "seed": 0,
        # grading
        "grader": "exact", "parse": "", "reveal": False,
        "ignore_case": False, "drop_articles": True, "tolerance": 0.0, "rel_tolerance": 0.0, "pattern": "",
        "choices": "choices", "pass_threshold": 1.0,
        # the LLM judge (grader: judge)
        "rubric": "", "judge_max_tokens": 256,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        """Declared names and types, then everything that can be checked without reading the file: the file is
        there, the grader exists and its options apply, the ratio is usable. Called by the spec check, so these
        errors come before a run starts."""
        p = super().check_params(params)
        for name in ("path", "format", "input", "answer", "id", "source", "split", "template", "system", "grader",
                     "parse", "pattern", "choices", "rubric"):
            if not isinstance(p[name], str):
                raise FileTasksError(f"benchmark.params.{name}: expected a string, got {p[name]!r}")
        if not p["input"] or not p["answer"]:
            raise FileTasksError("benchmark.params.input/answer: name the columns that hold the input and answer")
        if p["split"] and "ratio" in params:
            raise FileTasksError("benchmark.params.ratio: not used when `split` names a column; give one of them")
        if p["limit"] < 0 or p["max_tokens"] < 1 or p["judge_max_tokens"] < 1:
            raise FileTasksError("benchmark.params.limit/max_tokens/judge_max_tokens: expected limit >= 0 and the "
                                 "token limits >= 1")
        if p["tolerance"] < 0 or p["rel_tolerance"] < 0:
            raise FileTasksError("benchmark.params.tolerance/rel_tolerance: expected non-negative numbers")
        check_ratio(p["ratio"])
        template_fields(p["template"])
        _grader(p, list(params))
        resolve(p["path"])
        return p

    @classmethod
    def grader_roles(cls, params: Mapping[str, Any]) -> tuple[str, ...]:
        """`judge` when the grader is the LLM judge."""
        return (ROLE,) if params.get("grader") == Judge.name else ()

    def bind_grader(self, models: Mapping[str, GradingModel]) -> None:
        super().bind_grader(models)
        if isinstance(self.grader, Judge):
            self.grader.bind(models[ROLE])

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.check_params(params)
        self.p = p
        self.ratio = check_ratio(p["ratio"])
        self.grader = _grader(p, list(params))
        self.columns = Columns(p["input"], p["answer"], p["id"], p["source"], p["split"])
        self._info: dict[str, Any] = {}

    def generate(self) -> list[Task]:
        p = self.p
        loaded = load(p["path"], p["format"])
        rows = loaded.rows[: p["limit"]] if p["limit"] else loaded.rows
        items, dropped = drafts(rows, loaded.columns, self.columns, p["template"], self.grader)
        if p["split"]:
            how = f"split column {p['split']!r}"
        else:
            items = split_by_ratio(items, self.ratio, int(p["seed"]))
            how = f"ratio {list(p['ratio'])} seed {p['seed']}"
        check_splits(items, how)
        tasks = to_tasks(items)
        self._info = {
            "path": str(loaded.path), "format": loaded.format, "sha256": loaded.sha256, "rows": len(rows),
            "duplicates_dropped": dropped, "split_by": how, "grader": self.grader.name if ":" not in p["grader"]
            else p["grader"], "parse": self.grader.parse_mode,
            "sizes": {s: sum(t.split == s for t in tasks) for s in ("train", "val", "test")},
            "sources": len({t.source_id for t in tasks}),
        }
        return tasks

    def parse(self, text: str) -> Parsed:
        return self.grader.parse(text)

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        if answer is None:
            feedback = Feedback(0.0, False, self.grader.missing)
        else:
            feedback = self.grader.grade(task.prompt, answer, task.meta.get("references", [task.reference]),
                                         task.meta.get("row", {}))
        if self.p["reveal"] and not feedback.passed and feedback.error is None:
            feedback = Feedback(feedback.score, feedback.passed,
                                f"{feedback.message} The expected answer is {task.reference!r}.")
        return feedback

    def system_prompt(self) -> str:
        text: str = self.p["system"]
        return text if text.endswith("\n") else text + "\n"

    def solver_params(self) -> GenParams:
        return GenParams(temperature=float(self.p["temperature"]), max_tokens=int(self.p["max_tokens"]))

    def info(self) -> dict[str, Any]:
        return {**super().info(), **self._info}


def _grader(p: Mapping[str, Any], given: list[str]) -> Grader:
    return make_grader(p["grader"], p, given=given, parse=p["parse"], extra=(Judge,))
