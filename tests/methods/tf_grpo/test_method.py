"""Training-Free GRPO's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evoarena.api import TaskView, policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import HarnessWorkspace, load_tree
from evoarena.methods.tf_grpo.method import MEMORY, TfGrpo, dump_library, read_library
from evoarena.models import GenParams, Message
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student, naive_answer, solve_correctly
from evoarena.store import RunStore

TASK = TaskView(id="t1", split="train", source_id="t1", prompt="Q: 2 + 3")


class FakeCtx:
    """Just enough of PracticeContext: `rewards` script the group, `replies` script the critic and updater."""

    ask = StepContext.ask  # the real `ask`, over this fake's model(), reject() and update_note

    def ask_many(self, role: str, prompts: Sequence[str], *, sample_indices: Sequence[int] | None = None,
                 **kw: Any) -> list[Any]:
        """The batch as the asks one after another (the fake has no scheduler)."""
        indices = sample_indices or [0] * len(prompts)
        return [self.ask(role, p, sample_index=i, **kw) for p, i in zip(prompts, indices, strict=True)]

    def __init__(self, root: Path, rewards: list[float], replies: dict[str, str], limit: int | None = None) -> None:
        self.harness = HarnessWorkspace(root)
        self.rewards, self.replies = rewards, replies
        self.update_note: str | None = None
        self.attempt_limit = limit
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.rejected: list[tuple[str, str]] = []
        self.calls: list[str] = []
        self.prompts: list[str] = []
        self.cut: set[str] = set()  # roles whose replies stop at max_tokens
        self.solves = 0
        self.n_rollouts = 0

    def solve(self, task: TaskView, *, sample_index: int = 0) -> Any:
        self.solves += 1
        return SimpleNamespace(error=None, text=f"answer {sample_index}", score=self.rewards[sample_index])

    def rollout(self, task: TaskView, *, sample_index: int = 0) -> Any:
        self.n_rollouts += 1
        return SimpleNamespace(error=None, text=f"answer {sample_index}", score=self.rewards[sample_index])

    def rollouts(self, items: Sequence[Any]) -> list[Any]:
        return [self.rollout(r.task, sample_index=r.sample_index) for r in items]

    def feedback(self, task: TaskView, attempt: Any) -> Any:
        return SimpleNamespace(score=attempt.score, passed=attempt.score == 1.0, message="graded")

    def model(self, role: str) -> Any:
        def complete(messages: Sequence[Message], params: GenParams, sample_index: int = 0) -> Any:
            self.calls.append(role)
            self.prompts.append(messages[-1].content)
            return SimpleNamespace(text=self.replies.get(role, "ok"),
                                   finish_reason="length" if role in self.cut else "stop")

        return SimpleNamespace(default_params=GenParams(), complete=complete)

    def reject(self, what: str, raw: str, reason: str, **_: Any) -> None:
        self.rejected.append((what, reason))

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))


def step(tmp_path: Path, rewards: list[float], critic: Any, updater: Any, library: list[str] | None = None,
         **params: Any) -> FakeCtx:
    ctx = FakeCtx(tmp_path / "h", rewards, {"critic": json.dumps(critic), "updater": json.dumps(updater)})
    if library is not None:
        ctx.harness.write(MEMORY, dump_library(library))
    TfGrpo(**params).practice(ctx, TASK)  # type: ignore[arg-type]
    return ctx


ADD = [{"option": "add", "experience": "Check the operation before computing."}]


@pytest.mark.parametrize("rewards", [[1.0] * 5, [0.0] * 5])
def test_nothing_is_extracted_from_uniform_groups(tmp_path: Path, rewards: list[float]) -> None:
    ctx = step(tmp_path, rewards, ADD, ADD)
    assert (ctx.solves, ctx.n_rollouts) == (1, 4) and ctx.calls == []
    assert [k for k, _ in ctx.events] == ["no_mixed_group"]
    assert not ctx.harness.exists(MEMORY)


def test_mixed_group_applies_exactly_one_op(tmp_path: Path) -> None:
    ctx = step(tmp_path, [1.0, 0.0, 1.0, 0.0, 0.0], ADD, ADD, library=["Old rule."])
    assert ctx.calls == ["summarizer"] * 5 + ["critic", "updater"]
    assert read_library(ctx.harness.tree()) == ["Old rule.", "Check the operation before computing."]


def test_only_the_critic_sees_the_update_note(tmp_path: Path) -> None:
    ctx = FakeCtx(tmp_path / "h", [1.0, 0.0], {"critic": json.dumps(ADD), "updater": json.dumps(ADD)})
    ctx.update_note = "NOTE: be brief."
    TfGrpo(group_size=2).practice(ctx, TASK)  # type: ignore[arg-type]
    assert ctx.calls == ["summarizer", "summarizer", "critic", "updater"]
    assert [p.startswith("NOTE: be brief.\n\n") for p in ctx.prompts] == [False, False, True, False]


@pytest.mark.parametrize("role", ["summarizer", "critic", "updater"])
def test_a_cut_off_reply_is_rejected_once_and_ends_the_step(tmp_path: Path, role: str) -> None:
    ctx = FakeCtx(tmp_path / "h", [1.0, 0.0], {"critic": json.dumps(ADD), "updater": json.dumps(ADD)})
    ctx.cut = {role}
    TfGrpo(group_size=2, max_tokens=50).practice(ctx, TASK)  # type: ignore[arg-type]
    assert ctx.rejected == [(role, f"{role} cut off at max_tokens=50")]
    assert ctx.calls[-1] == role and not ctx.harness.exists(MEMORY)


def test_critic_with_two_ops_is_rejected(tmp_path: Path) -> None:
    ctx = step(tmp_path, [1.0, 0.0, 0, 0, 0], ADD * 2, ADD)
    assert ctx.rejected and "exactly 1" in ctx.rejected[0][1]
    assert not ctx.harness.exists(MEMORY)


def test_modify_replaces_the_named_experience(tmp_path: Path) -> None:
    mod = [{"option": "modify", "experience": "New second.", "modified_from": "G1"}]
    ctx = step(tmp_path, [1.0, 0, 0, 0, 0], mod, mod, library=["First.", "Second.", "Third."])
    assert read_library(ctx.harness.tree()) == ["First.", "New second.", "Third."]


def test_merge_needs_two_ids_and_renumbers(tmp_path: Path) -> None:
    bad = [{"option": "merge", "experience": "Both.", "merged_from": ["G0"]}]
    ctx = step(tmp_path, [1.0, 0, 0, 0, 0], ADD, bad, library=["A.", "B.", "C."])
    assert ctx.rejected and "at least 2" in ctx.rejected[0][1]
    assert read_library(ctx.harness.tree()) == ["A.", "B.", "C."]
    good = [{"option": "merge", "experience": "A and C.", "merged_from": ["G0", "G2"]}]
    ctx = step(tmp_path / "2", [1.0, 0, 0, 0, 0], ADD, good, library=["A.", "B.", "C."])
    assert json.loads(ctx.harness.read(MEMORY)) == {"G0": "B.", "G1": "A and C."}


def test_delete_only_in_main_variant_and_overrides(tmp_path: Path) -> None:
    ops = [{"option": "delete", "delete_id": "G0"}, {"option": "modify", "experience": "X.", "modified_from": "G0"}]
    ctx = step(tmp_path, [1.0, 0, 0, 0, 0], ADD, ops, library=["A.", "B."])
    assert ctx.rejected and read_library(ctx.harness.tree()) == ["A.", "B."]
    ctx = step(tmp_path / "2", [1.0, 0, 0, 0, 0], ADD, ops, library=["A.", "B."], variant="main")
    assert not ctx.rejected and json.loads(ctx.harness.read(MEMORY)) == {"G0": "B."}


def test_long_experience_and_bad_json_are_rejected(tmp_path: Path) -> None:
    long = [{"option": "add", "experience": " ".join(["word"] * 33)}]
    ctx = step(tmp_path, [1.0, 0, 0, 0, 0], long, ADD)
    assert ctx.rejected and "32 words" in ctx.rejected[0][1]
    ctx = FakeCtx(tmp_path / "2", [1.0, 0, 0, 0, 0], {"critic": "I think we should add a rule"})
    TfGrpo().practice(ctx, TASK)  # type: ignore[arg-type]
    assert ctx.rejected and not ctx.harness.exists(MEMORY)


def test_one_submitted_attempt_and_the_rest_of_the_group_as_rollouts(tmp_path: Path) -> None:
    ctx = FakeCtx(tmp_path / "h", [1.0, 0.0, 0.0, 0.0], {}, limit=1)
    ctx.replies = {"critic": json.dumps(ADD), "updater": json.dumps(ADD)}
    TfGrpo(group_size=4).practice(ctx, TASK)  # type: ignore[arg-type]
    assert (ctx.solves, ctx.n_rollouts) == (1, 3)
    assert read_library(ctx.harness.tree()) == ["Check the operation before computing."]


_calls = {"n": 0}


@policy("test-tfgrpo-student")
def tfgrpo_student(messages: Sequence[Message], params: GenParams) -> str:
    """Without a lesson, the solver is right on every other sample; critic and updater state the family's rule."""
    text = "\n\n".join(m.content for m in messages)
    q = re.search(r"^Question: (.+)$", text, flags=re.M)
    if text.rstrip().endswith("Summary:"):
        return "It answered."
    if text.rstrip().endswith("Critique (JSON):") and q:
        return json.dumps([{"option": "add", "experience": RULES[family_of(q.group(1).removeprefix("Q: "))]}])
    if text.rstrip().endswith("Updated operations (JSON):"):
        proposed = text.split("Proposed operation:\n", 1)[1].split("\n", 1)[0]
        return f"[{proposed}]"
    questions = re.findall(r"^Q: (.+)$", text, flags=re.M)
    if not questions or "[G" in text:
        return arith_student(messages, params)
    _calls["n"] += 1
    question = questions[-1]
    return f" {solve_correctly(question) if _calls['n'] % 2 else naive_answer(question)}"


def test_run_experiment_builds_a_library(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(methods=[{"name": "tf_grpo", "params": {"group_size": 3}}],
                     models={"s": {"backend": "scripted", "model": "test-tfgrpo-student"}}, roles={"solver": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    tree = load_tree(store, store.cells()[0]["current_version"])
    assert "temperature = 0.7" in tree["harness.toml"]
    assert read_library(tree)
    assert store.query("SELECT payload FROM events WHERE kind='tf_grpo_update'")
