"""`history`, CLR-Bench's method-independent reference, against its source: seed 003
(`/work/shared/seeds/003_9ce758357ab44640.txt` l.109 and l.121; docs/benchmarks/clr-notes.md §8.1). It has no
released code of its own. Each test names the line it checks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from evoarena.methods.history.method import HISTORY, Entry, History, read_history


class Harness:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def write(self, path: str, text: str) -> None:
        self.files[path] = text

    def delete(self, path: str) -> None:
        self.files.pop(path, None)

    def append(self, path: str, text: str) -> None:
        self.files[path] = self.files.get(path, "") + text


class Ctx:
    """The slice of a practice context these two methods use: the solver and the grader, nothing else."""

    def __init__(self, passes: list[bool]) -> None:
        self.harness, self.update_note, self.attempt_limit = Harness(), None, None
        self.passes, self.solves = passes, 0

    def solve(self, task: Any) -> Any:
        self.solves += 1
        return SimpleNamespace(error=None, number=self.solves, text=f"  program {self.solves}\n")

    def feedback(self, task: Any, attempt: Any) -> Any:
        passed = self.passes[attempt.number - 1]
        return SimpleNamespace(passed=passed, message=f"member X rejected ({attempt.number})")


TASK = SimpleNamespace(id="layer-1", prompt="write the program")


def test_history_puts_every_raw_practice_output_and_its_feedback_in_the_solve_prompt() -> None:
    """Seed 003 l.109 / l.121: "一个不依赖方法的历史参照，把原始练习程序和反馈放进求解提示" (the raw practice
    programs and feedback go into the solve prompt, across all layers so far, with no update step)."""
    entries = [Entry(task=f"layer-{i}", number=1, output=f"def f{i}(): ...", feedback=f"feedback {i}")
               for i in range(1, 4)]
    tree = {HISTORY: "".join(e.line() for e in entries)}
    text = History().context(tree, TASK)  # type: ignore[arg-type]
    for e in entries:
        assert e.output in text and e.feedback in text
    assert text.index("layer-1") < text.index("layer-2") < text.index("layer-3")


def test_history_has_no_update_step_only_the_solver_is_called() -> None:
    """Seed 003 l.121: the history reference shows what the evidence supports "在没有任何更新步骤时" (without any
    update step): one solve per step (CLR), its raw output and feedback appended as they are."""
    assert History.roles == ("solver",) and History.Params().max_trials == 1
    ctx = Ctx([False])
    assert History().practice(ctx, TASK) is not None  # type: ignore[arg-type]
    assert ctx.solves == 1
    assert read_history(ctx.harness.files) == [Entry(task="layer-1", number=1, output="program 1",
                                                     feedback="member X rejected (1)")]
