"""`history`: the method-independent reference of CLR-Bench (seed 003 §6): every earlier practice output and
its feedback, raw, in the solve prompt. There is no update step; an update note (the lesson conditions) is
kept in the harness and shown to the solver, since history has no other place to put it."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest
from evoarena.harness.state import parse_records
from evoarena.methods.prompting import render_prompt

HISTORY = "memory/history.jsonl"
NOTE = "memory/note.md"


class Entry(BaseModel):
    """One practice attempt: the task, the attempt's number, its output and feedback, raw."""

    task: str
    number: int
    output: str
    feedback: str

    def line(self) -> str:
        """The log's line as it has always been written (keys in order): the solver reads the log, and its bytes are
        part of every version's content address."""
        return json.dumps(self.model_dump(), ensure_ascii=False) + "\n"


def read_history(tree: Mapping[str, str]) -> list[Entry]:
    return parse_records(HISTORY, tree.get(HISTORY, ""), Entry)


@method("history")
class History(Method):

    class Params(Method.Params):
        max_trials: int = Field(1, ge=1, description="Attempts per practice step (fewer where the protocol caps "
                                                     "attempts).")

    params: Params

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return render_prompt(__package__, "context", note=tree.get(NOTE, "").strip(), entries=read_history(tree))

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.update_note:
            ctx.harness.write(NOTE, ctx.update_note.strip() + "\n")
        else:
            ctx.harness.delete(NOTE)
        trials = self.params.max_trials
        if ctx.attempt_limit is not None:
            trials = min(trials, ctx.attempt_limit)
        added = 0
        for _ in range(trials):
            attempt = ctx.solve(task)
            if attempt.error:
                break
            fb = ctx.feedback(task, attempt)
            entry = Entry(task=task.id, number=attempt.number, output=attempt.text.strip(), feedback=fb.message)
            ctx.harness.append(HISTORY, entry.line())
            added += 1
            if fb.passed:
                break
        return Manifest(intent="append raw attempts and feedback", evidence=task.id) if added else None
