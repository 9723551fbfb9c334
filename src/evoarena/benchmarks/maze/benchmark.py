"""`maze`: episodes in seeded, partially observable grid mazes (envs.Maze) — the fast interactive benchmark for
mechanism tests and Continual Harness's minimal experiment (seed 000 §3). Each task is one maze (a game seed); the
solver acts one move per step until it reaches the goal (score 1) or the step budget is spent (score 0)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from evoarena.api import InteractiveBenchmark, ParamError, Parsed, Split, Task, TaskView, benchmark
from evoarena.benchmarks.generated import check_sizes
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

    defaults = {"seed": 0, "n_train": 6, "n_val": 3, "n_test": 6, "size": 6, "loops": 4, "view": 3,
                "max_steps": 40}

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        p = super().check_params(params)
        check_sizes(p)
        for name, low in (("size", 2), ("max_steps", 1), ("view", 1)):
            if p[name] < low:
                raise ParamError(f"benchmark.params.{name}: expected at least {low}, got {p[name]}")
        return p

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.p = self.check_params(params)
        self.max_steps = int(self.p["max_steps"])

    def generate(self) -> list[Task]:
        rng = random.Random(f"maze-tasks:{self.p['seed']}")
        counts = [int(self.p[f"n_{s}"]) for s in SPLITS]
        seeds = rng.sample(range(1_000_000), sum(counts))
        return self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT.format(size=self.p["size"]),
                                 prefix="maze", source="maze", reference="exit reached")

    def episode(self, task: TaskView) -> tuple[Env, int]:
        return Maze(int(self.p["size"]), int(self.p["loops"]), int(self.p["view"])), self.game_seed(task)

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
