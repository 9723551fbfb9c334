"""The method (evolver) interface: initialise a harness, build the solve prompt, practise and update."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evoarena.api.params import ParamError, check_params, field_defaults, params_from_defaults
from evoarena.api.params import Params as BaseParams
from evoarena.api.task import Parsed, TaskView
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.models import GenParams, Message

if TYPE_CHECKING:
    from evoarena.api.context import PracticeContext
    from evoarena.api.episode_agent import EpisodeAgent
    from evoarena.api.probe import Probe, ProbeExample


def harness_toml(params: GenParams) -> str:
    return (
        "# Harness knobs. [solver] overrides the benchmark's generation defaults.\n"
        "[solver]\n"
        f"temperature = {params.temperature}\n"
        f"max_tokens = {params.max_tokens}\n"
    )


class Method(ABC):
    """An evolution method. Its state is plain files in the harness; it never sees the test split."""

    name: ClassVar[str]
    roles: ClassVar[tuple[str, ...]] = ("solver",)

    class Params(BaseParams):
        """Every parameter the method accepts, with its default; unknown names are refused."""

    defaults: ClassVar[dict[str, Any]] = {}
    """The defaults of `Params`, in declaration order (a class that declares only these gets a `Params` built
    from them)."""
    library: ClassVar[str | None] = None
    """The PyPI distribution whose optimiser this method runs (`gepa`, `dspy`, `textgrad`), or None for evoarena's
    own: a spec naming it fails in one line when it is not installed, and its version is recorded with the run."""
    reference_harness: ClassVar[bool] = False
    """True for a method that installs a known harness unchanged (a positive control): its difference to the
    baseline is the run's headroom in the report."""
    skill_kind: ClassVar[str] = "skill"
    """What `skill_tree`'s state is called in an exported skill's description ("playbook", "cheatsheet"…)."""
    params: Any
    """This method's `Params`, validated: read as `self.params.name`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Params" not in vars(cls) and "defaults" in vars(cls):
            setattr(cls, "Params", params_from_defaults(cls.__name__, cls.defaults))  # noqa: B010
        cls.defaults = field_defaults(cls.Params)

    def __init__(self, **params: Any) -> None:
        self.params = self.check_params(params)

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> Any:
        """The method's `Params` from these values; unknown or ill-typed names are refused. `update_note`, the
        benchmark's note for update prompts, is every method's: the cell reads it from the spec, so it is checked
        here and left out of the model."""
        note = params.get("update_note")
        if note is not None and not isinstance(note, str):
            raise ParamError(f"methods.{cls.name}.params.update_note: expected a string, got {type(note).__name__} "
                             f"{note!r}")
        rest = {k: v for k, v in params.items() if k != "update_note"}
        return check_params(f"methods.{cls.name}.params", cls.Params, rest, also=("update_note",))

    @classmethod
    def bind_params(cls, params: Mapping[str, Any], base: Path) -> dict[str, Any]:
        """The spec's params made independent of where the spec lives (`base`: its directory), before they are
        checked: a method whose params name files reads or resolves them here. The default keeps them as given."""
        return dict(params)

    @classmethod
    def library_version(cls) -> str | None:
        """`library`'s installed version (None: no library, or not installed)."""
        if cls.library is None:
            return None
        try:
            return metadata.version(cls.library)
        except metadata.PackageNotFoundError:
            return None

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        """A method's own reading of its state in a harness tree (for reports and viewers); {} when none."""
        return {}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        ws.write("system.md", system_prompt)
        ws.write("harness.toml", harness_toml(solver_params))

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """Method state shown to the solver before the task (reflections, demos, playbook…)."""
        return ""

    def context_is_per_task(self) -> bool:
        """True when `context` is chosen per task (retrieval over memory), so no single prompt template shows what
        the solver sees; `evoarena export --as prompt` refuses such a method."""
        return False

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """The method's state as an Agent Skills folder: `SKILL.md`'s body (no front matter) and supporting files,
        for methods whose state is a skill or playbook; None for the rest (`evoarena export --as skill`)."""
        return None

    def build_messages(self, tree: Mapping[str, str], task_text: str, task: TaskView) -> list[Message]:
        block = self.context(tree, task).strip()
        user = f"{block}\n\n{task_text}" if block else task_text
        return [Message("system", tree.get("system.md", "").strip()), Message("user", user)]

    def read_reply(self, tree: Mapping[str, str], text: str) -> Parsed:
        """The part of the solver's reply under `tree` that the benchmark parses (`Parsed(text)`), or why the method
        cannot read it (`Parsed(None, reason)`: a parse error). For a method whose program formats the reply itself
        (DSPy's `[[ ## answer ## ]]` fields); the default hands the benchmark the whole reply."""
        return Parsed(text)

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        """For interactive tasks: an agent that acts inside the episode (built per attempt, see
        `api.episode_agent`); None (the default) lets the solver act one call per step with `build_messages`."""
        return None

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Canned update calls (built from this method's own templates, filled with `examples`) that show whether a
        role's model can play the role before a run spends its budget (see docs/probes.md); none by default."""
        return ()

    @abstractmethod
    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        """One practice step on a train task; may update the harness through `ctx.harness`.
        Returns a manifest describing the change (None when nothing changed)."""
