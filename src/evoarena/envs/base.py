"""The environment protocol: an interactive task acted on step by step (a text game, a maze). Every environment
resets to a seeded initial state, takes one action at a time, and reports its score, whether the episode is over
and whether it was won; it lists its admissible actions when it knows them and may clone its state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


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
