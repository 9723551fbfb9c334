"""`files`: your own tasks from a JSONL, JSON or CSV file (or a saved Hugging Face dataset), graded by a
deterministic grader (docs/own-tasks.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from evoarena.api import Benchmark, Feedback, Parsed, Task, benchmark
from evoarena.api.grading import GradingModel
from evoarena.benchmarks.files.graders import Grader, make_grader
from evoarena.benchmarks.files.judge import ROLE, Judge
from evoarena.benchmarks.files.loader import FileTasksError, check_records, detect, load, resolve
from evoarena.benchmarks.files.tasks import (
    Columns,
    check_ratio,
    check_splits,
    drafts,
    split_by_ratio,
    template_fields,
    to_tasks,
)
from evoarena.codec import to_plain
from evoarena.models.base import GenParams

DEFAULT_SYSTEM = "Answer the task. End your reply with a final line of the form `Answer: <your answer>`.\n"


@benchmark("files")
class FilesBenchmark(Benchmark):
    """Your own tasks from a JSONL, JSON or CSV file (or a `datasets` folder): field mapping, a prompt template,
    splits by ratio over source groups or by a column, and a grader (exact, normalized, numeric, regex, contains,
    choice, or module:function)."""

    class Params(Benchmark.Params):
        path: str = Field("", description="The file: `.jsonl`/`.ndjson`, `.json` (an array of objects), `.csv`, "
                          "`.tsv`, or a directory written by `datasets`' `save_to_disk` (required). A relative path "
                          "resolves against the current directory.")
        format: str = Field("", description="`jsonl`, `json`, `csv`, `tsv` or `hf`; empty: from the suffix (a "
                                            "directory is `hf`).")
        records: str = Field("", description="A JSON file whose list of records sits inside an object: the dotted "
                             "path to it (`examples` for `{\"examples\": [...]}`, `data.items` nested); empty: the "
                             "file is the list.")
        limit: int = Field(0, ge=0, description="Use only the first N rows (0: all).")
        input: str = Field("input", min_length=1, description="The column with the task text (`{input}` in the "
                                                              "template).")
        answer: str = Field("answer", min_length=1, description="The column with the reference; a JSON list there is "
                            "a set of accepted answers (any one passes; the first is the label methods show).")
        id: str = Field("", description="A column of unique task ids; empty: `t` + a hash of the input and answer "
                                        "texts. Rows repeating the same prompt and answer are dropped.")
        source: str = Field("", description="A column grouping tasks that must stay on one side of the split; empty: "
                                            "every task is its own source.")
        split: str = Field("", description="A column saying `train`, `val` or `test` (`validation`, `dev`, `valid`, "
                                           "`training`, `testing` too); empty: split by `ratio`.")
        template: str = Field("{input}", description="The prompt; `{column}` inserts any column of the row (a literal "
                              "brace: `{{`); with the `choice` grader `{options}` is the lettered choices.")
        system: str = Field(DEFAULT_SYSTEM, description="The initial `system.md` of every harness.")
        max_tokens: int = Field(256, ge=1, description="The solver's generation default for its reply length.")
        temperature: float = Field(0.0, description="The solver's generation default for temperature.")
        ratio: list[int | float] = Field(default_factory=lambda: [0.3, 0.2, 0.5], description="Train / val / test "
                                         "shares when there is no split column (refused alongside one).")
        seed: int = Field(0, description="The seed of the ratio split.")
        grader: str = Field("exact", description="`exact`, `normalized`, `numeric`, `regex`, `contains`, `choice`, "
                                                 "`module:function`, or `judge` (an LLM).")
        parse: str = Field("", description="Which part of the output is the answer; empty: the grader's own "
                                           "default.")
        reveal: bool = Field(False, description="Append `The expected answer is '…'.` to failed feedback (train and "
                                                "val only).")
        ignore_case: bool = Field(False, description="`exact`, `regex`, `contains`: fold case.")
        drop_articles: bool = Field(True, description="`normalized`, `choice`: drop a/an/the when comparing texts.")
        tolerance: float = Field(0.0, ge=0, description="`numeric`: pass when the answer is within this of the "
                                                        "reference.")
        rel_tolerance: float = Field(0.0, ge=0, description="`numeric`: pass when the answer is within this times "
                                                            "the reference's size of it.")
        pattern: str = Field("", description="`regex`: a pattern whose first match in the output (its group 1, if "
                                             "it has groups) is the answer.")
        choices: str = Field("choices", description="`choice`: the column with the options (a list, a JSON array, or "
                                                    "text split on bars or new lines).")
        pass_threshold: float = Field(1.0, description="`module:function`, `judge`: the score at which an answer "
                                                       "counts as passed.")
        rubric: str = Field("", description="`judge`: your rubric template file (empty: `judge_rubric.md` next to the "
                                            "grader).")
        judge_max_tokens: int = Field(256, ge=1, description="`judge`: the judge's reply length limit; a reply cut "
                                                             "off there is an error, not a score.")

    params: Params

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> Any:
        """Declared names, types and ranges, then everything that can be checked without reading the file: the
        file is there, the grader exists and its options apply, the ratio is usable. Called by the spec check, so
        these errors come before a run starts."""
        p = super().check_params(params)
        if p.split and "ratio" in p.model_fields_set:
            raise FileTasksError("benchmark.params.ratio: not used when `split` names a column; give one of them")
        check_ratio(p.ratio)
        template_fields(p.template)
        _grader(p)
        check_records(p.records, detect(resolve(p.path), p.format))
        return p

    @classmethod
    def grader_roles(cls, params: Any) -> tuple[str, ...]:
        """`judge` when the grader is the LLM judge."""
        return (ROLE,) if params.grader == Judge.name else ()

    def bind_grader(self, models: Mapping[str, GradingModel]) -> None:
        super().bind_grader(models)
        if isinstance(self.grader, Judge):
            self.grader.bind(models[ROLE])

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        self.ratio = check_ratio(p.ratio)
        self.grader = _grader(p)
        self.columns = Columns(p.input, p.answer, p.id, p.source, p.split)
        self._info: dict[str, Any] = {}

    def generate(self) -> list[Task]:
        p = self.params
        loaded = load(p.path, p.format, p.records)
        rows = loaded.rows[: p.limit] if p.limit else loaded.rows
        items, dropped = drafts(rows, loaded.columns, self.columns, p.template, self.grader)
        if p.split:
            how = f"split column {p.split!r}"
        else:
            items = split_by_ratio(items, self.ratio, p.seed)
            how = f"ratio {list(p.ratio)} seed {p.seed}"
        check_splits(items, how)
        tasks = to_tasks(items)
        self._info = {
            "path": str(loaded.path), "format": loaded.format, "sha256": loaded.sha256, "rows": len(rows),
            "duplicates_dropped": dropped, "split_by": how, "grader": self.grader.name if ":" not in p.grader
            else p.grader, "parse": self.grader.parse_mode,
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
        if self.params.reveal and not feedback.passed and feedback.error is None:
            feedback = Feedback(feedback.score, feedback.passed,
                                f"{feedback.message} The expected answer is {task.reference!r}.")
        return feedback

    def system_prompt(self) -> str:
        text = self.params.system
        return text if text.endswith("\n") else text + "\n"

    def solver_params(self) -> GenParams:
        return GenParams(temperature=self.params.temperature, max_tokens=self.params.max_tokens)

    def info(self) -> dict[str, Any]:
        return {**super().info(), **self._info}


def _grader(p: FilesBenchmark.Params) -> Grader:
    """The grader the params name, with the params as its options (refused when one given does not apply)."""
    return make_grader(p.grader, to_plain(p), given=sorted(p.model_fields_set), parse=p.parse, extra=(Judge,))
