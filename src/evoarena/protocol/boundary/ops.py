"""The method boundary, declared once: every request that crosses between a method and its cell is an `Op` here — a
frozen pydantic model whose fields are checked on arrival and whose type parameter is the type of its answer.
Three families share the one envelope and codec (`codec`): what a method's `ctx` asks of its step (`Complete` …
`Event`), what an episode agent in the method's process asks of its episode (`EpisodeEdit` …), and what the cell
tells a method in a process of its own to do (`Hello` … `Stop`). A side that answers ops is a `Server`: its
methods marked `@handles(SomeOp)` are found by the op's type."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, model_validator

from evoarena.api import AgentAction, Attempt, EpisodeEnd, EpisodeView, Feedback, Parsed, TaskView, Turn
from evoarena.harness import Manifest
from evoarena.models import Completion, GenParams, Message

R = TypeVar("R")
Tree = dict[str, str]

#: strict (no coercion: a bool is not an int, a number not a text), closed (no unknown field), immutable; floats
#: that are not finite cross as JSON's `Infinity`/`NaN` constants rather than null
WIRE = ConfigDict(frozen=True, strict=True, extra="forbid", ser_json_inf_nan="constants")


class Op(BaseModel, Generic[R]):
    """One request. `reply` is its answer's type (the class's type parameter); `op`, a literal in each subclass,
    names it on the wire. Defining a subclass registers it (`OPS`): the codec reads every registered op."""

    model_config = WIRE
    reply: ClassVar[Any] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for base in cls.__mro__:
            meta = getattr(base, "__pydantic_generic_metadata__", None)
            if meta and meta["origin"] is Op and meta["args"]:
                cls.reply = meta["args"][0]
                break
        field = cls.model_fields.get("op")
        if field is None:  # `Op[X]` itself, not a request
            return
        name, known = field.default, OPS.get(field.default, cls)
        if not isinstance(name, str) or (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
            raise TypeError(f"{cls.__name__}: `op` must default to a name no other op has, not {name!r}")
        OPS[name] = cls  # (the same class again: its module was imported again)


#: every op by its name on the wire, in the order defined
OPS: dict[str, type[Op[Any]]] = {}


class Plain(BaseModel):
    """A value that is part of a request or an answer and has no evoarena type of its own."""

    model_config = WIRE


def _same_length(a: tuple[Any, ...], b: tuple[int, ...], what: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"expected {what} and sample indices of one length ({len(a)} and {len(b)})")


# -- a practice step's requests (`boundary.client.StepContext` sends them, `run.step_service` answers) -------------
class Complete(Op[Completion]):
    """One call of a role's model (`RoleClient.complete`); a provider error after retries raises ModelCallError."""

    op: Literal["complete"] = "complete"
    role: str
    messages: tuple[Message, ...]
    params: GenParams | None = None
    sample_index: int = 0


class CompleteMany(Op[list[Completion | None]]):
    """One user-message call per prompt (`ctx.ask_many`), made concurrently; None where a call failed."""

    op: Literal["complete_many"] = "complete_many"
    role: str
    prompts: tuple[str, ...]
    params: GenParams
    sample_indices: tuple[int, ...]

    @model_validator(mode="after")
    def _paired(self) -> CompleteMany:
        _same_length(self.prompts, self.sample_indices, "prompts")
        return self


class ChatMany(Op[list[Completion | None]]):
    """One call per conversation (`ctx.chat_many`; tools in the params), made concurrently; None where one failed."""

    op: Literal["chat_many"] = "chat_many"
    role: str
    conversations: tuple[tuple[Message, ...], ...]
    params: GenParams
    sample_indices: tuple[int, ...]

    @model_validator(mode="after")
    def _paired(self) -> ChatMany:
        _same_length(self.conversations, self.sample_indices, "conversations")
        return self


class MakeAttempt(Op[Attempt]):
    """A submitted attempt (`ctx.solve`, `submit`) or a rollout (`ctx.rollout`); `tree` None: the live harness."""

    op: Literal["attempt"] = "attempt"
    task_id: str
    tree: Tree | None = None
    sample_index: int = 0
    submit: bool


class RolloutItem(Plain):
    """One of `Rollouts`' evaluations."""

    task_id: str
    tree: Tree | None = None
    sample_index: int = 0


class Rollouts(Op[list[Attempt]]):
    """Internal evaluations run concurrently (`ctx.rollouts`), answered in request order."""

    op: Literal["rollouts"] = "rollouts"
    items: tuple[RolloutItem, ...]


class Grade(Op[Feedback]):
    """The grader's feedback on a train/val attempt's answer (`ctx.feedback`)."""

    op: Literal["grade"] = "grade"
    task_id: str
    answer: str | None
    number: int


class Observe(Op[Union[str, None]]):  # noqa: UP007 - a runtime type argument
    """The execution output of a train/val attempt's answer (`ctx.observation`)."""

    op: Literal["observation"] = "observation"
    task_id: str
    answer: str | None
    number: int


class Label(Op[str]):
    """The reference answer of a train task (`ctx.label`)."""

    op: Literal["label"] = "label"
    task_id: str


class AddCandidate(Op[str]):
    """A harness the method searches over, kept with the step (`ctx.candidate`); answered with its content address."""

    op: Literal["candidate"] = "candidate"
    tree: Tree
    parents: tuple[str, ...] = ()
    intent: str = ""
    evidence: str = ""


class Event(Op[None]):
    """An event in the run's log, stored as the method's (`ctx.log`, `ctx.reject`)."""

    op: Literal["event"] = "event"
    kind: str
    payload: dict[str, Any]


# -- an episode agent's requests from the method's process (`isolated_episode` sends and answers them) ------------
class StepView(Plain):
    """An `EpisodeView` without its task (the cell puts back its own)."""

    step: int
    observation: str
    start: str
    history: tuple[Turn, ...]
    admissible: tuple[str, ...] | None
    steps_left: int
    score: float

    @classmethod
    def of(cls, view: EpisodeView) -> StepView:
        return cls(step=view.step, observation=view.observation, start=view.start, history=view.history,
                   admissible=view.admissible, steps_left=view.steps_left, score=view.score)

    def view(self, task: TaskView) -> EpisodeView:
        return EpisodeView(task, self.step, self.observation, self.start, self.history, self.admissible,
                           self.steps_left, self.score)


class RoleInfo(Plain):
    """What a method's process needs to build a role's handle."""

    model_name: str
    default_params: GenParams
    function_calling: bool


class EpisodeEdit(Op[None]):
    """`EpisodeContext.edit`: a harness file of the episode written (the cell refuses a path out of the root)."""

    op: Literal["episode_edit"] = "episode_edit"
    path: str
    text: str


class EpisodeSolverParams(Op[GenParams]):
    """`EpisodeContext.solver_params`, as the episode's harness sets them."""

    op: Literal["episode_solver_params"] = "episode_solver_params"


class EpisodeStepMessages(Op[list[Message]]):
    """`EpisodeContext.step_messages`: the solver's prompt for a step, the cell's task put back in its view."""

    op: Literal["episode_step_messages"] = "episode_step_messages"
    view: StepView
    note: str = ""


class EpisodeParse(Op[Parsed]):
    """`EpisodeContext.parse`: the benchmark's reading of a reply."""

    op: Literal["episode_parse"] = "episode_parse"
    text: str


class EpisodeModel(Op[RoleInfo]):
    """`EpisodeContext.model`: what the method's process needs to make a role's handle (its calls are `Complete`)."""

    op: Literal["episode_model"] = "episode_model"
    role: str


# -- the cell's commands to a method in its own process (`isolated` sends them, `method_child` answers) -----------
class StepArgs(Plain):
    """What a method's process needs to rebuild a step's context (everything but the channel, which it has)."""

    train: tuple[TaskView, ...]
    val: tuple[TaskView, ...]
    rng: tuple[int, tuple[int, ...], float | None]  # `random.Random.getstate()`
    step: int
    update_note: str | None
    attempt_limit: int | None
    roles: dict[str, tuple[str, GenParams]]
    function_calling: tuple[str, ...]


class AgentRef(Plain):
    """An episode agent living in the method's process: its number there and its meta-actions."""

    id: int
    meta: tuple[str, ...]


class Hello(Op[None]):
    """The method's class (`module:qualname`), its checked params and its harness directory."""

    op: Literal["hello"] = "hello"
    method: str
    params: dict[str, Any]
    harness: str
    sys_path: tuple[str, ...] = ()


class Initialize(Op[None]):
    """`Method.initialize` on the method's own harness directory."""

    op: Literal["initialize"] = "initialize"
    system_prompt: str
    solver_params: GenParams


class Practice(Op[Union[Manifest, None]]):  # noqa: UP007 - a runtime type argument
    """`Method.practice` for one step; the context's requests come back up while it runs."""

    op: Literal["practice"] = "practice"
    step: StepArgs
    task: TaskView


class BuildMessages(Op[list[Message]]):
    """`Method.build_messages`: a solver prompt (also asked while a practice step waits for its attempt)."""

    op: Literal["build_messages"] = "build_messages"
    tree: Tree
    task_text: str
    task: TaskView


class ReadReply(Op[Parsed]):
    """`Method.read_reply`: the part of a solver reply the benchmark parses, or why the method cannot read it."""

    op: Literal["read_reply"] = "read_reply"
    tree: Tree
    text: str


class ContextText(Op[str]):
    """`Method.context` of a harness for a task."""

    op: Literal["context"] = "context"
    tree: Tree
    task: TaskView


class OpenAgent(Op[Union[AgentRef, None]]):  # noqa: UP007 - a runtime type argument
    """`Method.episode_agent`: the agent stays in the method's process, the cell gets a reference to it."""

    op: Literal["episode_agent"] = "episode_agent"
    tree: Tree
    task: TaskView


class AgentAct(Op[AgentAction]):
    """`EpisodeAgent.act` of the agent numbered `agent`, at the episode's `sample_index`."""

    op: Literal["agent_act"] = "agent_act"
    agent: int
    view: EpisodeView
    sample_index: int


class AgentMeta(Op[str]):
    """`EpisodeAgent.meta`: the agent's answer to one of its meta-actions."""

    op: Literal["agent_meta"] = "agent_meta"
    agent: int
    name: str
    argument: str
    view: EpisodeView
    sample_index: int


class AgentEnd(Op[None]):
    """`EpisodeAgent.end`; the method's process then forgets the agent."""

    op: Literal["agent_end"] = "agent_end"
    agent: int
    outcome: EpisodeEnd
    sample_index: int


class Stop(Op[None]):
    """The method's process ends."""

    op: Literal["stop"] = "stop"


# -- dispatch by type -----------------------------------------------------------------------------------------------
AnOp = TypeVar("AnOp", bound=Op[Any])
Handler = Callable[[Any, AnOp], Any]


def handles(op_type: type[AnOp]) -> Callable[[Handler[AnOp]], Handler[AnOp]]:
    """Marks a `Server` method as the answer to `op_type`."""

    def mark(fn: Handler[AnOp]) -> Handler[AnOp]:
        fn.__handles__ = op_type  # type: ignore[attr-defined]
        return fn

    return mark


class Server:
    """A side that answers ops: its `@handles` methods (its bases' too), found by the op's type."""

    _handlers: ClassVar[Mapping[type[Op[Any]], Handler[Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[type[Op[Any]], Handler[Any]] = {}
        for base in reversed(cls.__mro__):
            for fn in vars(base).values():
                if (op_type := getattr(fn, "__handles__", None)) is not None:
                    table[op_type] = fn
        cls._handlers = table

    def answer(self, op: Op[R]) -> R:
        """The answer to `op`; an op this side does not answer is refused (ValueError)."""
        fn = self._handlers.get(type(op))
        if fn is None:
            raise ValueError(f"unknown request {type(op).__name__}")
        out: R = fn(self, op)
        return out
