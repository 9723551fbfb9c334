"""In-episode hooks: a method's episode agent acts through an `EpisodeContext` — meta-actions share the step budget,
its calls to other roles are made and traced, its harness edits stay inside the harness root and come back with the
attempt, and a provider error ends the episode as an error (in a method's own process:
test_isolated_episode_agents.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.api import AgentAction, EpisodeAgent, EpisodeContext, EpisodeEnd, EpisodeView, Manifest, TaskView
from evoarena.benchmarks.maze import MazeBenchmark
from evoarena.methods.frozen import Frozen
from evoarena.models import Completion, GenParams, Message, ModelCallError, Usage
from evoarena.protocol.solve.solve import solve


class Model:
    """A role's stand-in: a fixed reply, every call counted; fails at call `fail_at` when given."""

    def __init__(self, reply: str, fail_at: int | None = None) -> None:
        self.reply, self.fail_at = reply, fail_at
        self.calls: list[tuple[Message, ...]] = []

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        self.calls.append(tuple(messages))
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise ModelCallError("provider down")
        return Completion(self.reply, Usage(1, 1), call_id=100 + len(self.calls))


class Noting(EpisodeAgent):
    """Alternates a `note[...]` meta-action with an environment move; asks a critic every move; edits the harness."""

    meta_actions = ("note",)

    def __init__(self, escape: bool = False) -> None:
        self.escape = escape
        self.notes: list[str] = []
        self.views: list[EpisodeView] = []

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        self.views.append(view)
        if view.step % 2 == 0:
            return AgentAction(f"note[step {view.step}]", {}, {"why": "remember"})
        messages = ctx.step_messages(view, note="Notes: " + "; ".join(self.notes))
        move = ctx.parse(ctx.model("solver").complete(messages, ctx.solver_params).text).answer or ""
        ctx.model("critic").complete([Message("user", f"judge {move}")])
        ctx.edit("../outside.md" if self.escape else "memory/moves.md",
                 ctx.tree.get("memory/moves.md", "") + move + "\n")
        return AgentAction(move, {"solver": 1, "critic": 1}, {"candidates": [move]})

    def meta(self, name: str, argument: str, view: EpisodeView, ctx: EpisodeContext) -> str:
        self.notes.append(argument)
        return f"noted: {argument}"

    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        ctx.edit("memory/outcome.md", f"{outcome.final_score} {outcome.stopped} {len(outcome.actions)}")


class WithAgent(Frozen):
    name = "with-agent"

    def __init__(self, agent: EpisodeAgent, **params: Any) -> None:
        super().__init__(**params)
        self.agent = agent

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        return self.agent

    def practice(self, ctx: Any, task: TaskView) -> Manifest | None:
        return None


def _episode(agent: EpisodeAgent, solver: Model, critic: Model, max_steps: int = 6) -> tuple[Any, Any]:
    bench = MazeBenchmark(size=4, loops=2, max_steps=max_steps)
    task = next(t for t in bench.build() if t.split == "test")
    tree = {"system.md": "play", "memory/moves.md": ""}
    attempt = solve(WithAgent(agent), bench, tree, task.view(), solver, roles={"critic": critic})  # type: ignore[arg-type]
    return attempt, tree


def test_meta_actions_share_the_budget_and_every_call_is_traced() -> None:
    agent, solver, critic = Noting(), Model("north"), Model("fine")
    attempt, tree = _episode(agent, solver, critic, max_steps=6)
    out = json.loads(attempt.answer)
    assert out["steps"] == 6 and [s["kind"] for s in out["trace"]] == ["meta", "env"] * 3
    assert [s["observation"] for s in out["trace"][::2]] == ["noted: step 0", "noted: step 2", "noted: step 4"]
    assert len(solver.calls) == len(critic.calls) == 3  # only the env moves called the models
    env_steps = out["trace"][1::2]
    assert [s["call_ids"] for s in env_steps] == [[101, 101], [102, 102], [103, 103]]  # solver's and critic's ids
    assert env_steps[0]["agent"] == {"candidates": ["north"]} and out["trace"][0]["agent"] == {"why": "remember"}
    assert "Notes: step 0" in solver.calls[0][-1].content  # the agent's note is in front of the step's text
    assert agent.views[1].history[0].kind == "meta" and agent.views[1].steps_left == 5


def test_edits_come_back_with_the_attempt_and_the_input_tree_is_untouched() -> None:
    attempt, tree = _episode(Noting(), Model("north"), Model("fine"), max_steps=4)
    assert attempt.tree_after is not None
    assert attempt.tree_after["memory/moves.md"] == "north\nnorth\n"
    assert attempt.tree_after["memory/outcome.md"].endswith("budget 4")
    assert tree["memory/moves.md"] == ""  # the caller's tree is a copy's source, never written


def test_an_edit_outside_the_harness_root_ends_the_episode_unscored() -> None:
    attempt, _ = _episode(Noting(escape=True), Model("north"), Model("fine"))
    assert attempt.answer is None and attempt.error is None
    assert attempt.parse_error is not None and "harness edit refused" in attempt.parse_error
    assert attempt.tree_after is None


def test_a_provider_error_in_any_role_is_the_attempts_error() -> None:
    attempt, _ = _episode(Noting(), Model("north"), Model("fine", fail_at=2))
    assert attempt.answer is None and attempt.error is not None and "provider down" in attempt.error


def test_the_handle_has_no_store_and_an_unmapped_role_is_refused() -> None:
    seen: dict[str, Any] = {}

    class Peek(EpisodeAgent):
        def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
            handle = ctx.model("solver")
            seen["store"] = hasattr(handle, "store") or hasattr(ctx, "store")
            try:
                ctx.model("judge")
            except KeyError as err:
                seen["refused"] = str(err)
            return AgentAction("north")

    _episode(Peek(), Model("north"), Model("fine"), max_steps=1)
    assert seen["store"] is False and "judge" in seen["refused"]
