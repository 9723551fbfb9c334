"""BPE in episodes and runs (evidence: mechanism): the meta-actions on the shared step budget, the ablations
removing their block and their meta-actions, BPE off being `frozen`, consolidation (a new version; malformed replies
and invalid operations rejected; the rule option), the frozen mode never touching the experience files, and the
household recipe with `--model scripted`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from evoarena.api import Attempt, policy
from evoarena.benchmarks.maze import MazeBenchmark
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.bpe import BPE
from evoarena.methods.bpe.experience import Bank
from evoarena.methods.bpe.method import STATE, read_state
from evoarena.methods.frozen import Frozen
from evoarena.models import Completion, GenParams, Message, Usage
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.solve.solve import solve
from evoarena.scripted.bpe_household import CONSOLIDATOR, consolidator
from evoarena.store import RunStore

HOUSEHOLD = ["pick", "look", "clean", "heat", "cool", "pick-two"]
SEED_ENTRY = {"store": "general", "text": "In a maze, keep heading east and south towards the exit."}


# -- scripted roles for the maze ----------------------------------------------------------------------------------
def _state(text: str) -> str:
    return text.split("\nHarness actions (", 1)[0] if "Harness state:" in text else ""


@policy("test-bpe-maze")
def bpe_maze(messages: Sequence[Message], params: GenParams) -> str:
    """Recall once, note once, then the maze explorer; as consolidator, bpe-household's."""
    text = messages[-1].content
    if CONSOLIDATOR in text:
        return consolidator(text)
    if "\n- recall[" in text and "nothing recalled yet" in _state(text):
        return "recall[maze exit east]"
    if "\n- note[" in text and "Notes this episode" not in _state(text):
        return "note[corridors to the south-east lead to the exit]"
    return maze_explorer(messages, params)


@policy("test-bpe-malformed")
def bpe_malformed(messages: Sequence[Message], params: GenParams) -> str:
    if CONSOLIDATOR in messages[-1].content:
        return "Sure! Here is the update:\nADD general: keep going east"
    return bpe_maze(messages, params)


@policy("test-bpe-invalid-ops")
def bpe_invalid_ops(messages: Sequence[Message], params: GenParams) -> str:
    if CONSOLIDATOR in messages[-1].content:
        return "ADD search: head east first\nREMOVE g99\n- ADD general: Dead ends in the north-west."
    return bpe_maze(messages, params)


def maze_run(tmp_path: Path, make_spec: Any, *, model: str = "test-bpe-maze", episodes: int = 3,
             **params: Any) -> RunStore:
    spec = make_spec(
        name="bpe", benchmark={"name": "maze", "params": {"seed": 1, "n_train": 1, "n_val": 0, "n_test": 1,
                                                          "size": 5, "max_steps": 20}},
        methods=[{"name": "bpe", "params": {"initial_experience": [SEED_ENTRY], **params}}],
        models={"s": {"backend": "scripted", "model": model}}, roles={"solver": "s", "consolidator": "s"},
        protocol={"epochs": episodes, "select": "last"})
    run_experiment(spec, tmp_path / "run", probe=False)
    return RunStore(tmp_path / "run")


def versions(store: RunStore) -> list[dict[str, str]]:
    return [load_tree(store, r["id"]) for r in store.query("SELECT id FROM harness_versions ORDER BY created_at")]


def events(store: RunStore, kind: str) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind=? ORDER BY id",
                                                          [kind])]


# -- the agent on the shared budget ------------------------------------------------------------------------------
class Model:
    """A solver stand-in replying from a list (cycling), keeping every prompt."""

    def __init__(self, *replies: str) -> None:
        self.replies, self.calls = list(replies), []  # type: ignore[var-annotated]

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        self.calls.append(list(messages))
        return Completion(self.replies[(len(self.calls) - 1) % len(self.replies)], Usage(1, 1))


def episode(method: Any, solver: Model, *, max_steps: int = 6, tree: dict[str, str] | None = None) -> tuple[
        Attempt, dict[str, Any], dict[str, str]]:
    bench = MazeBenchmark(size=4, loops=2, max_steps=max_steps)
    task = next(t for t in bench.build() if t.split == "test")
    tree = initial_tree(method, bench) if tree is None else tree
    attempt = solve(method, bench, tree, task.view(), solver)  # type: ignore[arg-type]
    return attempt, json.loads(attempt.answer or "{}"), tree


def initial_tree(method: Any, bench: Any) -> dict[str, str]:
    class Writer:
        def __init__(self) -> None:
            self.files: dict[str, str] = {}

        def write(self, path: str, text: str) -> None:
            self.files[path] = text

        def save_state(self, path: str, value: BaseModel) -> None:
            self.files[path] = state_text(value)

    w = Writer()
    method.initialize(w, bench.system_prompt(), bench.solver_params())
    return w.files


def test_meta_actions_spend_the_shared_budget() -> None:
    attempt, out, _ = episode(BPE(), Model("track[world]", "commit[reach the exit: todo]"), max_steps=6)
    assert out["steps"] == 6 and out["stopped"] == "budget" and [s["kind"] for s in out["trace"]] == ["meta"] * 6
    assert out["trace"][0]["observation"].startswith("Belief (world):")
    assert out["trace"][-1]["observation"].startswith("Progress updated")
    _, mixed, _ = episode(BPE(), Model("track[world]", "east"), max_steps=6)
    assert [s["kind"] for s in mixed["trace"]] == ["meta", "env"] * 3  # half the budget went to the harness


def test_commit_past_the_cap_is_refused_in_an_episode() -> None:
    replies = [f"commit[goal {i}: todo]" for i in range(10)]
    _, out, _ = episode(BPE(), Model(*replies), max_steps=10)
    assert all("Progress: goal" in s["observation"] for s in out["trace"][:8])
    assert all(s["observation"].startswith("Nothing committed: progress holds its maximum of 8")
               for s in out["trace"][8:])


@pytest.mark.parametrize(("off", "names", "block"), [
    ("belief", ("track",), "Belief"), ("progress", ("commit",), "Progress ("),
    ("experience", ("recall", "note"), "Experience")])
def test_each_ablation_removes_its_block_and_its_meta_actions(off: str, names: tuple[str, ...], block: str) -> None:
    full, ablated = BPE(), BPE(**{off: False})
    solver = Model(f"{names[0]}[world]")
    _, out, tree = episode(ablated, solver, max_steps=2)
    prompt = solver.calls[0][-1].content
    assert not set(names) & set(ablated.config.meta_actions) and set(names) <= set(full.config.meta_actions)
    assert not any(f"- {n}[" in prompt for n in names) and f"\n{block}" not in prompt.split("Harness actions")[0]
    assert [s["kind"] for s in out["trace"]] == ["env", "env"]  # the meta-action is now an unknown game command
    assert not any(f"{n}[...]" in tree["system.md"] for n in names)
    others = [n for n in full.config.meta_actions if n not in names]
    assert all(f"- {n}[" in prompt for n in others)
    _, out_full, _ = episode(full, Model(f"{names[0]}[world]"), max_steps=2)
    assert [s["kind"] for s in out_full["trace"]] == ["meta", "meta"]


def test_bpe_off_entirely_is_the_frozen_harness() -> None:
    off = BPE(belief=False, progress=False, experience=False)
    bench = MazeBenchmark(size=4, loops=2, max_steps=4)
    assert off.episode_agent({}, bench.build()[0].view()) is None
    assert initial_tree(off, bench) == initial_tree(Frozen(), bench)
    a, b = Model("east"), Model("east")
    episode(off, a, max_steps=4)
    episode(Frozen(), b, max_steps=4)
    assert a.calls == b.calls  # the same prompts, step by step: ReAct (act-only) is `frozen`


# -- the method through the protocol (maze) --------------------------------------------------------------------------
def test_evolving_consolidates_into_a_new_version_and_keeps_recall_usage(tmp_path: Path, make_spec: Any) -> None:
    store = maze_run(tmp_path, make_spec, episodes=3)
    trees = versions(store)
    assert len(trees) == 4  # init + one per episode
    banks = [Bank.from_tree(t) for t in trees]
    assert [b.get("g1").usage for b in banks] == [0, 1, 2, 3]  # type: ignore[union-attr]  # each recall, kept
    assert [len(b) for b in banks] == [1, 2, 2, 2]  # episode 1's note added once (a repeat is refused as a duplicate)
    cons = events(store, "bpe_consolidation")
    assert len(cons) == 3 and cons[0]["counts"]["add"] == 1 and cons[0]["changes"][0]["text"].startswith("corridors")
    assert cons[1]["refused"] and "already in the store" in cons[1]["refused"][0]["why"]
    eps = events(store, "bpe_episode")
    assert all(e["meta"] == {"recall": 1, "note": 1} and e["kinds"]["meta"] == 2 for e in eps)
    assert eps[0]["recalled"] == ["g1"] and eps[1]["recalled"] == ["g1", "g2"]  # g2: episode 1's note
    test = store.query("SELECT version_id FROM attempts WHERE phase='test'")[0]["version_id"]
    cell = store.cells()[0]
    assert test == cell["selected_version"] == cell["current_version"]  # the test did not change the harness
    state = json.loads(trees[-1][STATE])
    assert state["evidence"]["g1"]["recalled_won"] + state["evidence"]["g1"]["recalled_failed"] == 3
    assert all(state_text(read_state(t)) == t[STATE] for t in trees if STATE in t)  # the model's one JSON form


def test_frozen_experience_never_changes_the_experience_files(tmp_path: Path, make_spec: Any) -> None:
    store = maze_run(tmp_path, make_spec, episodes=3, experience_mode="frozen")
    trees = versions(store)
    files = [{k: v for k, v in t.items() if k.startswith("experience/")} for t in trees]
    assert all(f == files[0] for f in files) and Bank.from_tree(trees[0]).get("g1").usage == 0  # type: ignore[union-attr]
    assert not events(store, "bpe_consolidation") and not store.query(
        "SELECT id FROM calls WHERE role='consolidator'")
    assert all(e["recalled"] == ["g1"] for e in events(store, "bpe_episode"))  # it was recalled every episode


def test_a_malformed_consolidation_is_rejected_and_changes_nothing(tmp_path: Path, make_spec: Any) -> None:
    store = maze_run(tmp_path, make_spec, episodes=2, model="test-bpe-malformed", consolidate_every=1)
    rejected = events(store, "rejected_output")
    assert len(rejected) == 2 and all(r["what"] == "consolidator reply" and "not an operation" in r["reason"]
                                      for r in rejected)
    assert [len(Bank.from_tree(t)) for t in versions(store)] == [1, 1, 1]


def test_invalid_operations_are_refused_one_by_one(tmp_path: Path, make_spec: Any) -> None:
    store = maze_run(tmp_path, make_spec, episodes=1, model="test-bpe-invalid-ops")
    rejected = events(store, "rejected_output")
    assert [r["what"] for r in rejected] == ["consolidator operation"] * 2
    assert "<object> is in/on <place>" in rejected[0]["reason"] and "no entry g99" in rejected[1]["reason"]
    bank = Bank.from_tree(versions(store)[-1])
    assert [e.text for e in bank.entries()] == [SEED_ENTRY["text"], "Dead ends in the north-west."]


def test_rule_consolidation_calls_no_model(tmp_path: Path, make_spec: Any) -> None:
    store = maze_run(tmp_path, make_spec, episodes=2, consolidation="rule")
    assert not store.query("SELECT id FROM calls WHERE role='consolidator'")
    cons = events(store, "bpe_consolidation")
    assert [c["mode"] for c in cons] == ["rule", "rule"] and cons[0]["counts"]["add"] >= 1


# -- the household recipe ------------------------------------------------------------------------------------------
def test_the_household_recipe_runs_its_six_arms(games: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    recipe = Path(__file__).resolve().parents[3] / "recipes" / "bpe-household.yaml"
    result = CliRunner().invoke(app, ["run", str(recipe), "--model", "scripted", "--seeds", "0", "--run-dir",
                                      str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["evidence"] == "mechanism"
    view = {c["condition"]: c for c in data["views"]["bpe"]["conditions"]}
    assert set(view) == {"react", "bpe", "bpe-wo-belief", "bpe-wo-progress", "bpe-wo-experience",
                         "bpe-frozen-experience"}
    assert all(set(c["families"]) == set(HOUSEHOLD) and c["episodes"] == 6 for c in view.values())
    meta = {k: c["meta_per_episode"] for k, c in view.items()}
    assert all(v == 0 for v in meta["react"].values())
    assert meta["bpe"]["track"] > 0 and meta["bpe"]["commit"] > 0 and meta["bpe"]["recall"] > 0
    assert meta["bpe-wo-belief"]["track"] == 0 and meta["bpe-wo-belief"]["commit"] > 0
    assert meta["bpe-wo-progress"]["commit"] == 0 and meta["bpe-wo-progress"]["track"] > 0
    assert meta["bpe-wo-experience"]["recall"] == meta["bpe-wo-experience"]["note"] == 0
    assert all(view[k]["steps"] > view["react"]["steps"] for k in view if k != "react")  # the harness costs steps
    assert view["bpe"]["consolidator_calls"] == 1  # one epoch of 6 episodes: one consolidation at its boundary
    assert view["bpe-frozen-experience"]["consolidator_calls"] == 0
    cells = {c["condition"]: c for c in data["views"]["bpe"]["cells"]}
    assert cells["bpe"]["pollution_test"] is not None and cells["bpe"]["pollution_practice"]["entries"] > 0
    assert cells["bpe-frozen-experience"]["pollution_practice"]["entries"] == 0
