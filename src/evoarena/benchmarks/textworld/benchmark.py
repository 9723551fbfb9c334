"""`textworld`: episodes in seeded TextWorld games (envs.textworld) — the text adventures of issue 15's studies
(EvoTest, JitRL; `--world-size 5 --nb-objects 10 --quest-length 5` by default) and the ALFWorld-like household
family. Each task is one game (a game seed of the chosen family and settings); the solver acts one command per step
until the game is won or lost or the step budget is spent; the score is the game's over its maximum. With `tasks`
(tw-household only) the games cycle through several task types, so one run covers the ALFWorld-like families and
each task's source id names its type (`tw-household/heat-<seed>`) for success per family."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evoarena.api import InteractiveBenchmark, ParamError, Split, Task, TaskView, benchmark
from evoarena.benchmarks.generated import check_sizes
from evoarena.envs import Env
from evoarena.envs.textworld import FAMILIES, GameError, TextWorldEnv, make_game
from evoarena.envs.textworld.household import TASKS as HOUSEHOLD_TASKS
from evoarena.models.base import GenParams

SPLITS: tuple[Split, ...] = ("train", "val", "test")
PROMPT = ("You are playing a text adventure game. Read what the game says, work out the goal it gives you, and "
          "reach it. Reply with one command the game understands, e.g. one of the actions listed.")


@benchmark("textworld")
class TextWorldBenchmark(InteractiveBenchmark):
    """Seeded games of one TextWorld family, one per task, disjoint across splits (`docs/envs.md` § TextWorld)."""

    defaults = {"seed": 0, "n_train": 3, "n_val": 2, "n_test": 3, "family": "custom", "settings": {},
                "max_steps": 50, "history_window": 8, "tasks": []}

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        p = super().check_params(params)
        check_sizes(p)
        if p["family"] not in FAMILIES:
            raise ParamError(f"benchmark.params.family: {p['family']!r} is not one of {', '.join(FAMILIES)}")
        try:
            FAMILIES[p["family"]].settings(p["settings"])
        except ValueError as err:
            raise ParamError(f"benchmark.params.settings: {err}") from None
        if p["max_steps"] < 1 or p["history_window"] < 0:
            raise ParamError("benchmark.params.max_steps / history_window: expected >= 1 / >= 0")
        if p["tasks"] and (p["family"] != "tw-household" or not set(p["tasks"]) <= set(HOUSEHOLD_TASKS)):
            raise ParamError(f"benchmark.params.tasks: household task types ({', '.join(HOUSEHOLD_TASKS)}) with "
                             f"family tw-household only, got {list(p['tasks'])} with {p['family']}")
        return p

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.p = self.check_params(params)
        self.max_steps = int(self.p["max_steps"])
        self.history_window = int(self.p["history_window"])

    def generate(self) -> list[Task]:
        """Draw a game seed per task and make sure its game exists: TextWorld's generator fails for some seeds of
        small worlds, so a task takes the first of its seed, seed + 1, … that generates (and no other task has).
        Games are generated here, once, into the cache (about a second each), so a bad setting stops the run before
        any episode."""
        rng = random.Random(f"textworld-tasks:{self.p['seed']}:{self.p['family']}")
        counts = [int(self.p[f"n_{s}"]) for s in SPLITS]
        used: set[int] = set()
        if self.p["tasks"]:
            return self._household_mix(rng, counts, used)
        seeds = [self._playable(s, used) for s in rng.sample(range(1_000_000), sum(counts))]
        return self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT, prefix="tw",
                                 source=str(self.p["family"]), reference="game won",
                                 meta={"family": self.p["family"]})

    def _household_mix(self, rng: random.Random, counts: list[int], used: set[int]) -> list[Task]:
        """Games cycling through `tasks` within each split (the i-th task of a split is type i mod len(tasks)), each
        a seed of its own type's settings; source ids `tw-household/<type>-<seed>`, meta `task_type`."""
        types = [str(t) for t in self.p["tasks"]]
        kinds = [types[i % len(types)] for n in counts for i in range(n)]
        seeds = [self._playable(s, used, task=kind) for s, kind in zip(rng.sample(range(1_000_000), len(kinds)),
                                                                         kinds, strict=True)]
        tasks = self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT, prefix="tw",
                                  source="tw-household", reference="game won", meta={"family": "tw-household"})
        self._task_types = {t.id: kind for t, kind in zip(tasks, kinds, strict=True)}
        return [replace(t, source_id=f"tw-household/{kind}-{t.meta['game_seed']}", meta={**t.meta, "task_type": kind})
                for t, kind in zip(tasks, kinds, strict=True)]

    def _settings(self, task: str | None = None) -> dict[str, Any]:
        settings = dict(self.p["settings"])
        return {**settings, "task": task} if task is not None else settings

    def _playable(self, seed: int, used: set[int], tries: int = 20, task: str | None = None) -> int:
        family, settings = str(self.p["family"]), self._settings(task)
        last = ""
        for candidate in range(seed, seed + tries):
            if candidate in used:
                continue
            try:
                make_game(family, candidate, settings)
            except GameError as err:
                last = str(err)
                continue
            used.add(candidate)
            return candidate
        raise GameError(f"textworld: no game of {tries} seeds from {seed} generates ({last})")

    def episode(self, task: TaskView) -> tuple[Env, int]:
        kind = getattr(self, "_task_types", {}).get(task.id)
        return TextWorldEnv(str(self.p["family"]), self._settings(kind)), self.game_seed(task)

    def system_prompt(self) -> str:
        return "You play text adventure games. Reply with exactly one game command and nothing else."

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=24)
