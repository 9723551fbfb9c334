"""`textworld`: episodes in seeded TextWorld games (envs.textworld) — the text adventures of issue 15's studies
(EvoTest, JitRL; `--world-size 5 --nb-objects 10 --quest-length 5` by default) and the ALFWorld-like household
family. Each task is one game (a game seed of the chosen family and settings); the solver acts one command per step
until the game is won or lost or the step budget is spent; the score is the game's over its maximum. With `tasks`
(tw-household only) the games cycle through several task types, so one run covers the ALFWorld-like families and
each task's source id names its type (`tw-household/heat-<seed>`) for success per family. With `transfer`
(tw-keydoor only) the test games are transfer twins of the train games: the same seed, map and quest with the key
moved, the door's rule changed, or both (`tw-keydoor/<variant>-<seed>`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field, model_validator

from evoarena.api import InteractiveBenchmark, Split, Task, TaskView, benchmark
from evoarena.benchmarks.generated import seed_param, size_param
from evoarena.envs import Env
from evoarena.envs.textworld import FAMILIES, GameError, TextWorldEnv, make_game
from evoarena.models.base import GenParams

FamilyName = Literal["custom", "tw-cooking", "tw-treasure_hunter", "tw-coin_collector", "tw-keydoor", "tw-household"]
"""The keys of `envs.textworld.FAMILIES`."""
TaskType = Literal["pick", "look", "clean", "heat", "cool", "pick-two"]
"""The household task types (`envs.textworld.household.TASKS`)."""
Twin = Literal["key-moved", "door-rule", "key-moved-door-rule"]
"""The tw-keydoor variants other than `base` (`envs.textworld.keydoor.VARIANTS`)."""

SPLITS: tuple[Split, ...] = ("train", "val", "test")
PROMPT = ("You are playing a text adventure game. Read what the game says, work out the goal it gives you, and "
          "reach it. Reply with one command the game understands, e.g. one of the actions listed.")


@benchmark("textworld")
class TextWorldBenchmark(InteractiveBenchmark):
    """Seeded games of one TextWorld family, one per task, disjoint across splits (`docs/envs.md` § TextWorld)."""

    class Params(InteractiveBenchmark.Params):
        seed: int = seed_param()
        n_train: int = size_param("train", 3)
        n_val: int = size_param("val", 2)
        n_test: int = size_param("test", 3)
        family: FamilyName = Field("custom", description="The TextWorld game family (docs/envs.md § TextWorld).")
        settings: dict[str, Any] = Field(default_factory=dict, description="The family's generator settings.")
        max_steps: int = Field(50, ge=1, description="Commands per episode.")
        history_window: int = Field(8, ge=0, description="Earlier steps shown to the solver each step.")
        tasks: list[TaskType] = Field(default_factory=list, description="tw-household only: task types the games "
                                                                        "cycle through within each split.")
        transfer: list[Twin] = Field(default_factory=list, description="tw-keydoor only: test game i is train game "
                                     "i // k under variant transfer[i % k] (k variants); train and val stay base.")

        @model_validator(mode="after")
        def _fits_the_family(self) -> TextWorldBenchmark.Params:
            try:
                FAMILIES[self.family].settings(self.settings)
            except ValueError as err:
                raise ValueError(f"settings: {err}") from None
            if self.tasks and self.family != "tw-household":
                raise ValueError(f"tasks: household task types with family tw-household only, got {self.family}")
            if self.transfer:
                self._fits_the_twins()
            return self

        def _fits_the_twins(self) -> None:
            if self.family != "tw-keydoor":
                raise ValueError(f"transfer: twins of tw-keydoor games only, got family {self.family}")
            if self.settings.get("variant", "base") != "base":
                raise ValueError(f"transfer: the train games are the base variant, got {self.settings['variant']!r}")
            if len(set(self.transfer)) < len(self.transfer):
                raise ValueError(f"transfer: a variant twice in {self.transfer}")
            if self.n_test > self.n_train * len(self.transfer):
                raise ValueError(f"transfer: n_test {self.n_test} > n_train × variants "
                                 f"({self.n_train} × {len(self.transfer)}): a twin would repeat")

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.max_steps = self.params.max_steps
        self.history_window = self.params.history_window

    def generate(self) -> list[Task]:
        """Draw a game seed per task and make sure its game exists: TextWorld's generator fails for some seeds of
        small worlds, so a task takes the first of its seed, seed + 1, … that generates (and no other task has).
        Games are generated here, once, into the cache (about a second each), so a bad setting stops the run before
        any episode."""
        rng = random.Random(f"textworld-tasks:{self.params.seed}:{self.params.family}")
        counts = [getattr(self.params, f"n_{s}") for s in SPLITS]
        used: set[int] = set()
        if self.params.tasks:
            return self._household_mix(rng, counts, used)
        if self.params.transfer:
            return self._twins(rng, counts, used)
        seeds = [self._playable(s, used) for s in rng.sample(range(1_000_000), sum(counts))]
        return self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT, prefix="tw",
                                 source=self.params.family, reference="game won",
                                 meta={"family": self.params.family})

    def _household_mix(self, rng: random.Random, counts: list[int], used: set[int]) -> list[Task]:
        """Games cycling through `tasks` within each split (the i-th task of a split is type i mod len(tasks)), each
        a seed of its own type's settings; source ids `tw-household/<type>-<seed>`, meta `task_type`."""
        types = [str(t) for t in self.params.tasks]
        kinds = [types[i % len(types)] for n in counts for i in range(n)]
        seeds = [self._playable(s, used, task=kind) for s, kind in zip(rng.sample(range(1_000_000), len(kinds)),
                                                                         kinds, strict=True)]
        tasks = self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT, prefix="tw",
                                  source="tw-household", reference="game won", meta={"family": "tw-household"})
        self._task_types = {t.id: kind for t, kind in zip(tasks, kinds, strict=True)}
        return [replace(t, source_id=f"tw-household/{kind}-{t.meta['game_seed']}", meta={**t.meta, "task_type": kind})
                for t, kind in zip(tasks, kinds, strict=True)]

    def _twins(self, rng: random.Random, counts: list[int], used: set[int]) -> list[Task]:
        """Train and val games of the base variant; test game i is train game i // k under variant
        `transfer[i % k]`: the same game seed, so the same map, furniture, keys and quest (docs/envs.md § tw-keydoor
        lists what each variant changes). Source ids `tw-keydoor/<variant>-<seed>`, meta `variant` (+ `twin_of`)."""
        twins, (n_train, n_val, n_test) = [str(v) for v in self.params.transfer], counts
        k = len(twins)
        draws = rng.sample(range(1_000_000), n_train + n_val)
        base = [self._playable(s, used, variants=twins if i < n_train else ()) for i, s in enumerate(draws)]
        seeds = base + [base[i // k] for i in range(n_test)]
        variants = ["base"] * (n_train + n_val) + [twins[i % k] for i in range(n_test)]
        tasks = self.seeded_tasks(list(zip(SPLITS, counts, strict=True)), seeds, PROMPT, prefix="tw",
                                  source="tw-keydoor", reference="game won", meta={"family": "tw-keydoor"})
        self._variants = {t.id: v for t, v in zip(tasks, variants, strict=True)}
        twin_of = {t.id: tasks[i // k].id for i, t in enumerate(tasks[n_train + n_val:])}
        return [replace(t, source_id=f"tw-keydoor/{v}-{t.meta['game_seed']}",
                        meta={**t.meta, "variant": v, **({"twin_of": twin_of[t.id]} if t.id in twin_of else {})})
                for t, v in zip(tasks, variants, strict=True)]

    def _settings(self, task: str | None = None, variant: str | None = None) -> dict[str, Any]:
        settings = dict(self.params.settings)
        if task is not None:
            settings["task"] = task
        if variant is not None:
            settings["variant"] = variant
        return settings

    def _playable(self, seed: int, used: set[int], tries: int = 20, task: str | None = None,
                  variants: Sequence[str] = ()) -> int:
        """The first unused seed from `seed` whose game generates (and, for tw-keydoor, its `variants` too)."""
        family, settings = self.params.family, self._settings(task)
        last = ""
        for candidate in range(seed, seed + tries):
            if candidate in used:
                continue
            try:
                make_game(family, candidate, settings)
                for variant in variants:
                    make_game(family, candidate, self._settings(task, variant))
            except GameError as err:
                last = str(err)
                continue
            used.add(candidate)
            return candidate
        raise GameError(f"textworld: no game of {tries} seeds from {seed} generates ({last})")

    def episode(self, task: TaskView) -> tuple[Env, int]:
        kind = getattr(self, "_task_types", {}).get(task.id)
        variant = getattr(self, "_variants", {}).get(task.id)
        return TextWorldEnv(self.params.family, self._settings(kind, variant)), self.game_seed(task)

    def system_prompt(self) -> str:
        return "You play text adventure games. Reply with exactly one game command and nothing else."

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=24)
