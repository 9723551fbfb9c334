"""Interactive tasks: the environment protocol and the benchmark whose tasks are episodes in one.

An `Env` is acted on step by step; an `InteractiveBenchmark`'s task is an episode of its environment (the task says
which initial state), and the protocol solves it by letting the solver act — one solver call per step — until the
episode ends or the benchmark's step budget is spent. The attempt's answer is the episode's outcome (final score,
maximum, won); grading divides the score by the maximum. Methods see the trajectory as the attempt's text."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evoarena.api.benchmark_base import Benchmark
from evoarena.api.task import Feedback, Parsed, Split, Task, TaskView


@dataclass(frozen=True)
class Step:
    """What one action did: the new observation, the episode's score so far (cumulative, as text games report
    it), whether the episode ended, and anything else the environment tells (`info`)."""

    observation: str
    score: float
    done: bool
    info: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Env(Protocol):
    """An interactive environment. `reset(seed)` starts an episode in the initial state of `seed` (the same seed,
    the same state: a game replayed K episodes resets to it each time) and returns the first observation."""

    name: str

    @property
    def max_score(self) -> float: ...

    @property
    def won(self) -> bool: ...

    def reset(self, seed: int) -> str: ...

    def step(self, action: str) -> Step: ...

    def admissible_actions(self) -> list[str] | None:
        """The actions that do something now, when the environment knows them; None when it does not."""
        ...

    def clone(self) -> Env | None:
        """An independent copy of the current state (for verifiers that look ahead), or None when not possible."""
        ...


@dataclass(frozen=True)
class Turn:
    """One past step as the solver is shown it: the action taken and what came back (`kind` "meta" for a harness
    meta-action, whose answer came from the harness, not the environment)."""

    action: str
    observation: str
    kind: str = "env"


class InteractiveBenchmark(Benchmark):
    """A benchmark whose tasks are episodes. Subclasses say which environment and initial state a task is
    (`episode`), how one step is shown to the solver (`format_step`) and how an action is read from its reply
    (`parse` gives the action as `answer`)."""

    max_steps: int = 50
    history_window: int = 8  # past turns shown with each step

    @abstractmethod
    def episode(self, task: TaskView) -> tuple[Env, int]:
        """A fresh environment for `task` and the seed its episode starts from."""

    def seeded_tasks(self, splits: Sequence[tuple[Split, int]], seeds: Sequence[int], prompt: str, *, prefix: str,
                     source: str, reference: str, meta: Mapping[str, Any] | None = None) -> list[Task]:
        """One task per game seed, `seeds` taken in order across `splits` ((split, count) pairs): ids
        `{prefix}-{split}-{i:03d}`, source ids `{source}-{seed}`, meta `game_seed` (+ `meta`); remembered for
        `game_seed`."""
        tasks, k = [], 0
        self._game_seeds: dict[str, int] = {}
        for split, n in splits:
            for i in range(n):
                tid = f"{prefix}-{split}-{i:03d}"
                self._game_seeds[tid] = seeds[k]
                tasks.append(Task(tid, split, f"{source}-{seeds[k]}", prompt,
                                  reference=reference, meta={"game_seed": seeds[k], **(meta or {})}))
                k += 1
        return tasks

    def game_seed(self, task: TaskView) -> int:
        """The game seed `seeded_tasks` gave `task`; KeyError for a task it did not make."""
        seeds: dict[str, int] = getattr(self, "_game_seeds", {})
        if task.id not in seeds:
            raise KeyError(f"{self.name}: unknown task {task.id!r}")
        return seeds[task.id]

    def format_step(self, task: TaskView, observation: str, history: Sequence[Turn],
                    admissible: Sequence[str] | None, steps_left: int, start: str = "") -> str:
        """The user message of one step: the goal, the episode's first observation from the second step on (a text
        game states its quest there, and the turns shown hold only what came after actions), the last turns, the
        observation, the actions, the budget."""
        lines = [task.prompt.strip(), ""]
        if start and history:
            lines += [f"At the start: {start.strip()}", ""]
        if history:
            lines.append("Recent steps:")
            lines += [f"> {t.action}\n{t.observation.strip()}" for t in history[-self.history_window:]]
            lines.append("")
        lines.append(f"Now: {observation.strip()}")
        if admissible:
            lines.append(f"Actions you can take: {', '.join(admissible)}")
        lines.append(f"Steps left: {steps_left}. Reply with one action.")
        return "\n".join(lines)

    def parse(self, text: str) -> Parsed:
        """The action: the reply's first non-empty line, without a leading '>' (an empty reply is a parse error)."""
        for line in text.strip().splitlines():
            action = line.strip().lstrip(">").strip()
            if action:
                return Parsed(action)
        return Parsed(None, "empty reply: no action")

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        """The episode's outcome (the attempt's answer, written by the protocol: `episode_answer`) as a score: the
        final score over the environment's maximum; passed = won."""
        if answer is None:
            return Feedback(0.0, False, "the episode produced no score")
        out = json.loads(answer)
        score, max_score, won = float(out["score"]), float(out["max_score"]), bool(out["won"])
        return Feedback(score / max_score if max_score > 0 else 0.0, won,
                        f"episode score {score:g} of {max_score:g} in {out['steps']} steps"
                        + (", won" if won else f", not won ({out['stopped']})"))


def episode_answer(score: float, max_score: float, won: bool, steps: int, stopped: str,
                   trace: Sequence[Mapping[str, Any]] = ()) -> str:
    """What an episode's attempt answers: its outcome as JSON (the protocol writes it, never the model), with the
    step-by-step trace when given (`evoarena trace --episode` reads it)."""
    out: dict[str, Any] = {"score": score, "max_score": max_score, "won": won, "steps": steps, "stopped": stopped}
    if trace:
        out["trace"] = list(trace)
    return json.dumps(out, sort_keys=True)
