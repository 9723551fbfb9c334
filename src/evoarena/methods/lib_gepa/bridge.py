"""The bridge between the `gepa` package and a practice step: its adapter, reflection LM, progress callback and stop.

Every call the library makes reaches the cell: the adapter's `evaluate` runs the solver through `ctx.rollouts` and
grades through `ctx.feedback` (the library's metric calls are the cell's graded attempts), the reflection LM asks the
cell's `proposer` role. The first exception a cell call raises (the cell's budget refusing, a halted run) is kept in
`Bridge.stopped` and re-raised, and `Bridge.should_stop` ends the library's loop at its next check, so the best
candidate the library reported so far can still become the harness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evoarena.api import Attempt, PracticeContext, TaskView
from evoarena.methods.lib_gepa.state import COMPONENT, CandidateRecord

NO_OUTPUT = "(no output: provider error)"


def user_input(task: TaskView, attempt: Attempt) -> str:
    """What the DefaultAdapter calls the data's `input`: the user message the solver was sent (the benchmark's
    rendering of the task), else the task's text."""
    users = [m.content for m in attempt.messages if m.role == "user"]
    return users[-1] if users else task.prompt


def prompt_text(prompt: str | list[dict[str, Any]]) -> str:
    """The reflection prompt as one user message (a multimodal prompt's text parts; arith-like tasks have no
    images)."""
    if isinstance(prompt, str):
        return prompt
    parts: list[str] = []
    for message in prompt:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "\n\n".join(parts)


@dataclass
class Bridge:
    """One `gepa.optimize` run inside a practice step: the adapter, the reflection LM, the callback and the stop."""

    ctx: PracticeContext
    stopped: BaseException | None = None
    """The first exception a cell call raised; the library's loop stops at its next check."""
    records: list[CandidateRecord] = field(default_factory=list)
    """Every candidate the library added to its pool, in index order, as it reported them."""
    best: int | None = None
    """The index of the library's best candidate so far (its own `is_best_program`)."""
    accepted: int = 0
    rejected: int = 0
    proposals: int = 0

    # -- the cell's calls --------------------------------------------------------------------------------------------
    def _cell(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except BaseException as err:
            if self.stopped is None:
                self.stopped = err
            raise

    # -- GEPAAdapter ---------------------------------------------------------------------------------------------------
    propose_new_texts = None
    """No proposer of the adapter's own: the library's default instruction proposal runs, with `reflection_lm`."""

    def evaluate(self, batch: list[TaskView], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        """The DefaultAdapter's `evaluate` under the cell: the candidate's text as the system message, the task as the
        user message (the method's `build_messages`), one rollout per task in one request, graded by the cell. A
        provider error scores 0 with no output, as the DefaultAdapter's failure score."""
        from gepa.core.adapter import EvaluationBatch

        tree = dict(self.ctx.harness.tree())
        tree["system.md"] = candidate[COMPONENT]
        attempts = self._cell(self.ctx.rollouts, list(batch), tree=tree)
        outputs: list[dict[str, str]] = []
        scores: list[float] = []
        trajectories: list[dict[str, Any]] = []
        for task, attempt in zip(batch, attempts, strict=True):
            if attempt.error:
                score, text, message = 0.0, "", NO_OUTPUT
            else:
                fb = self._cell(self.ctx.feedback, task, attempt)
                score, text, message = float(fb.score), attempt.text, fb.message
            outputs.append({"full_assistant_response": text})
            scores.append(score)
            trajectories.append({"data": {"input": user_input(task, attempt), "id": task.id},
                                 "full_assistant_response": text, "feedback": message})
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=trajectories if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str]) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """The DefaultAdapter's records, key for key: Inputs, Generated Outputs, Feedback."""
        (component,) = components_to_update
        items = [{"Inputs": t["data"]["input"], "Generated Outputs": t["full_assistant_response"],
                  "Feedback": t["feedback"]} for t in eval_batch.trajectories or ()]
        if not items:
            raise ValueError("No valid predictions found for any module.")
        return {component: items}

    # -- reflection LM -------------------------------------------------------------------------------------------------
    def reflection_lm(self, prompt: str | list[dict[str, Any]]) -> str:
        """The library's `reflection_lm`: one call in the cell's `proposer` role. A failed call raises, and the
        library skips that proposal (as it does when its own LM fails)."""
        self.proposals += 1
        reply = self._cell(self.ctx.ask, "proposer", prompt_text(prompt))
        if reply is None:
            raise RuntimeError("the proposer call failed (recorded in the ledger)")
        return str(reply.text)

    # -- stop condition ------------------------------------------------------------------------------------------------
    def should_stop(self, state: Any) -> bool:
        """A `StopperProtocol`: stop once a cell call was refused."""
        return self.stopped is not None

    # -- GEPACallback --------------------------------------------------------------------------------------------------
    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        """Keep every candidate the library adds (with its val scores and parents) and its best so far."""
        idx = int(event["candidate_idx"])
        parents = [int(p) for p in event["parent_ids"] if p is not None]
        record = CandidateRecord(index=idx, parents=parents, text=event["candidate"][COMPONENT],
                                 val_mean=float(event["average_score"]),
                                 val_scores={str(k): float(v) for k, v in event["scores_by_val_id"].items()})
        self.records = [r for r in self.records if r.index != idx] + [record]
        if event["is_best_program"]:
            self.best = idx

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        self.accepted += 1

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        self.rejected += 1


class QuietLogger:
    """The library's logger, kept in memory (its default prints to stdout; with a run dir it writes a file)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(str(message))
