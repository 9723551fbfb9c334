"""In-episode hooks: a method that acts inside an episode (JitRL's reranker, BPE's meta-actions, Continual Harness's
refiner) gives the protocol an `EpisodeAgent` (`Method.episode_agent`); the protocol asks it for each step's action
through an `EpisodeContext` that holds only the step's view, the harness (an in-memory copy the agent may edit) and
the roles' models as ledgered calls — no store, no benchmark, no other task."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evoarena.api.context import RoleHandle
from evoarena.api.environment import Turn
from evoarena.api.task import Parsed, TaskView
from evoarena.models import GenParams, Message


@dataclass(frozen=True)
class EpisodeView:
    """One step as the agent sees it: the task, the episode's first observation, the steps so far (env actions and
    meta-actions, each with what came back), the current observation, the actions the environment offers (None when
    it does not know them), the steps left of the shared budget and the score so far."""

    task: TaskView
    step: int
    observation: str
    start: str
    history: tuple[Turn, ...]
    admissible: tuple[str, ...] | None
    steps_left: int
    score: float


@dataclass(frozen=True)
class AgentAction:
    """The agent's choice for one step: an environment action or a meta-action `name[argument]` the agent offers,
    the harness calls it made for it by type, and what it wants kept in the step's trace (candidates, priors…)."""

    action: str
    calls: Mapping[str, int] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeEnd:
    """How the episode ended, for `EpisodeAgent.end`: the per-step scores (cumulative), final score, maximum, won,
    why it stopped ("done" | "budget") and the steps' actions and kinds."""

    scores: tuple[float, ...]
    final_score: float
    max_score: float
    won: bool
    stopped: str
    actions: tuple[str, ...]
    kinds: tuple[str, ...]


class EpisodeContext(Protocol):
    """What an agent acts through. `tree` is the live harness of this episode (an in-memory copy): `edit` changes it
    for the following steps and marks the file edited; in practice the method receives the edited tree with the
    attempt (`Attempt.tree_after`) and decides what to keep, in val and test the edits end with the episode."""

    @property
    def tree(self) -> Mapping[str, str]: ...

    @property
    def solver_params(self) -> GenParams:
        """The harness's solver parameters (harness.toml over the benchmark's defaults)."""
        ...

    @property
    def sample_index(self) -> int: ...

    def edit(self, path: str, text: str) -> None:
        """Change a harness file for the rest of the episode (a path outside the harness root is refused)."""
        ...

    def step_messages(self, view: EpisodeView, *, note: str = "") -> list[Message]:
        """The harness's own prompt for this step (the method's `build_messages`, or a harness program), with `note`
        (e.g. the agent's state block or its meta-actions) put in front of the step's text."""
        ...

    def parse(self, text: str) -> Parsed:
        """The benchmark's reading of an action from a reply."""
        ...

    def model(self, role: str) -> RoleHandle:
        """A role's model (the solver and the method's other roles), every call ledgered; KeyError otherwise."""
        ...


class EpisodeAgent(ABC):
    """Acts in one episode (built per attempt by `Method.episode_agent`). Meta-actions it names in `meta_actions`
    share the episode's step budget with environment actions; `end` sees the outcome (e.g. to consolidate memory
    into the harness through `ctx.edit`)."""

    meta_actions: Sequence[str] = ()

    @abstractmethod
    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        """The next step's action."""

    def meta(self, name: str, argument: str, view: EpisodeView, ctx: EpisodeContext) -> str:
        """Answer the meta-action `name[argument]` (one of `meta_actions`): what the agent is shown next."""
        raise NotImplementedError(f"{type(self).__name__} names meta-action {name!r} but does not answer it")

    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        """After the episode (the harness may still be edited); nothing by default."""
        return None
