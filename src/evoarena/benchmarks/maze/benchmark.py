"""`maze`: episodes in seeded, partially observable grid mazes (envs.Maze) — the fast interactive benchmark for
mechanism tests and Continual Harness's minimal experiment (seed 000 §3). Each task is one maze (a game seed); the
solver acts one move per step until it reaches the goal (score 1) or the step budget is spent (score 0)."""

from __future__ import annotations

import random
import re
from typing import Any

from pydantic import Field

from evoarena.api import InteractiveBenchmark, Parsed, Split, Task, TaskView, benchmark
from evoarena.benchmarks.generated import seed_param, size_param
from evoarena.envs import Env, Maze
from evoarena.envs.maze import MOVES
from evoarena.models.base import GenParams

SPLITS: tuple[Split, ...] = ("train", "val", "test")
_MOVE = re.compile(r"\b(north|south|east|west)\b", re.IGNORECASE)
PROMPT = ("Goal: find the exit of a {size} x {size} maze. You start in the north-west corner; the exit is in the "
          "south-east corner. You see only the open directions of your cell and the exit when it is in sight.")


@benchmark("maze")
class MazeBenchmark(InteractiveBenchmark):
    """Seeded mazes, one per task, disjoint across splits; `max_steps` moves per episode (bumping a wall is one)."""

    class Params(InteractiveBenchmark.Params):
        seed: int = seed_param()
        n_train: int = size_param("train", 6)
        n_val: int = size_param("val", 3)
        n_test: int = size_param("test", 6)
        size: int = Field(6, ge=2, description="Side of the square maze, in cells.")
        loops: int = Field(4, description="Extra passages beyond a perfect maze, so that more than one route "
                                          "exists.")
        view: int = Field(3, ge=1, description="How many cells along an open direction the goal is seen.")
        max_steps: int = Field(40, ge=1, description="Moves per episode (bumping a wall is one).")

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.max_steps = self.params.max_steps

    def generate(self) -> list[Task]:
        rng = random.Random(f"maze-tasks:{self.params.seed}")
        counts = [getattr(self.params, f"n_{s}") for s in SPLITS]
        seeds = rng.sample(range(1_000_000), sum(counts))
        return self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT.format(size=self.params.size),
                                 prefix="maze", source="maze", reference="exit reached")

    def episode(self, task: TaskView) -> tuple[Env, int]:
        return Maze(self.params.size, self.params.loops, self.params.view), self.game_seed(task)

    def parse(self, text: str) -> Parsed:
        """The first direction word in the reply (north, south, east or west)."""
        match = _MOVE.search(text)
        if match is None:
            return Parsed(None, f"no move in the reply (one of {', '.join(MOVES)})")
        return Parsed(match.group(1).lower())

    def system_prompt(self) -> str:
        return ("You are exploring a maze one step at a time. Reply with exactly one move: north, south, east or "
                "west.")

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=16)
