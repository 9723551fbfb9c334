"""JitRL's study arms on the maze with scripted roles (evidence: mechanism): the union option set lets the paper
variant pick an action only the memory knows; the same-memory prompt baseline shows the neighbours to the actor and
leaves its prior alone; the score-delta control never calls the evaluator; the seed's A.5 perturbations do what they
say in the memory they write; and the recipes that name these arms (jitrl-beta, jitrl-controls). The module's one run
plays 8 arms × 4 episodes of the maze (about 2 s on one core): every arm is needed by one of the tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.harness import load_tree
from evoarena.methods.jitrl.memory import ROWS
from evoarena.methods.jitrl.step_memory import discounted_returns
from evoarena.models import GenParams, Message, PolicyReply
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.jitrl_maze import jitrl_maze
from evoarena.spec import load_spec, parse_spec
from evoarena.store import RunStore

MAZE = {"seed": 2, "n_train": 1, "n_val": 0, "n_test": 1, "size": 5, "max_steps": 30}
PAPER = {"variant": "paper", "prior": "logprobs", "rewards": "paper"}
ARMS = [{"name": "jitrl", "label": "union", "params": {**PAPER, "options": 2, "config": {"memory_action_prior": 0.25}}},
        {"name": "jitrl", "label": "closed", "params": {**PAPER, "options": 2}},
        {"name": "jitrl", "label": "evaluated", "params": {**PAPER, "step_scores": "evaluator"}},
        {"name": "jitrl", "label": "score-delta", "params": {**PAPER, "step_scores": "none"}},
        {"name": "jitrl", "label": "prompt", "params": {**PAPER, "memory_use": "prompt"}},
        {"name": "jitrl", "label": "wrong", "params": {**PAPER, "perturb": "wrong_retrieval"}},
        {"name": "jitrl", "label": "noise", "params": {**PAPER, "perturb": "reward_noise", "reward_noise": 0.5}},
        {"name": "jitrl", "label": "inverted", "params": {**PAPER, "perturb": "reward_inversion"}}]
PROMPTS: list[str] = []  # what the spy policy was asked (the calls that were not cached)


@policy("test-jitrl-spy")
def spy(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    """The jitrl-maze roles, recording every prompt."""
    PROMPTS.append(messages[-1].content)
    return jitrl_maze(messages, params)


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    root = tmp_path_factory.mktemp("jitrl-study-arms")
    spec = parse_spec({"name": "jitrl-arms", "benchmark": {"name": "maze", "params": MAZE}, "methods": ARMS,
                       "models": {"s": {"backend": "scripted", "model": "test-jitrl-spy"}},
                       "roles": {"solver": "s", "evaluator": "s"}, "seeds": [0],
                       "protocol": {"epochs": 4, "select": "last"}})
    PROMPTS.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        run_experiment(spec, root / "run", probe=False)
    return RunStore(root / "run")


def cell(store: RunStore, condition: str) -> str:
    return next(c["cell"] for c in store.cells() if c["condition"] == condition)


def steps(store: RunStore, condition: str) -> list[dict[str, Any]]:
    """Every practice step's agent record of one arm."""
    rows = store.query("SELECT answer FROM attempts WHERE cell=? AND phase='practice' ORDER BY id",
                       (cell(store, condition),))
    return [s["agent"] for r in rows for s in json.loads(r["answer"])["trace"]]


def memory_rows(store: RunStore, condition: str) -> list[dict[str, Any]]:
    current = next(c["current_version"] for c in store.cells() if c["condition"] == condition)
    return [json.loads(line) for line in load_tree(store, current)[ROWS].splitlines() if line.strip()]


def test_the_union_picks_an_action_only_the_memory_knows(arms: RunStore) -> None:
    """Seed 000 l.734: the candidate set is the model's actions ∪ the neighbours' actions (memory-only ones at score 0),
    which "finds old actions the model missed this time". With k = 2 the bad prior proposes two of three open moves;
    the union arm picks the third from memory, the closed arm never leaves its two options."""
    union = steps(arms, "union")
    joined = [a for a in union if a["joined"]]
    assert joined and all(set(a["joined"]).isdisjoint(a["options"][:len(a["options"]) - len(a["joined"])])
                          for a in joined)
    assert any(a["chosen"] in a["joined"] for a in joined)  # an action no proposal of this step named
    closed = steps(arms, "closed")
    assert all(not a["joined"] and len(a["options"]) <= 2 and a["chosen"] in a["options"] for a in closed)


def test_the_prompt_baseline_shows_the_neighbours_and_keeps_the_prior(arms: RunStore) -> None:
    """Seed 000 l.853 (the same-memory prompt baseline) and Table 8 (prompt-update vs logit-update, the same retrieved
    information): the neighbours JitRL would use are put in the actor's prompt, and its decision is π′ = π₀."""
    prompt = steps(arms, "prompt")
    assert sum(a["prompt_neighbours"] > 0 for a in prompt) > 10
    for a in prompt:
        assert not a["neighbours"] and a["scores"] == pytest.approx(a["prior"])
    shown = [p for p in PROMPTS if "Experience from similar past states" in p]
    assert shown and all("Which option is the best next action?" in p or "propose" in p for p in shown)
    assert all("prompt_neighbours" not in a for a in steps(arms, "evaluated"))  # the JitRL arms show nothing


def test_the_score_delta_control_never_asks_the_evaluator(arms: RunStore) -> None:
    """Seed 000 l.852: a control arm rewarded only by the true score increments. Its rows learn from the env
    reward (the score delta); the evaluated arm's from the evaluator's step scores."""
    evaluator = arms.query("SELECT cell, count(*) n FROM calls WHERE role='evaluator' GROUP BY cell")
    assert {r["cell"] for r in evaluator} == {cell(arms, "evaluated")}
    control = memory_rows(arms, "score-delta")
    assert control and all(r["step_score"] is None and r["reward"] == r["delta"] for r in control)
    evaluated = memory_rows(arms, "evaluated")
    assert all(r["reward"] == r["step_score"] for r in evaluated) and any(r["reward"] != r["delta"] for r in evaluated)


def test_wrong_retrieval_gives_only_memories_of_other_states(arms: RunStore) -> None:
    """Seed 000 l.842 (A.5, wrong retrieval): every neighbour the decision used is below the step's threshold."""
    wrong = [a for a in steps(arms, "wrong") if a["neighbours"]]
    assert len(wrong) > 10
    assert all(n["similarity"] < a["threshold"] for a in wrong for n in a["neighbours"])
    right = [n for a in steps(arms, "score-delta") for n in a["neighbours"]]
    assert right and all(n["similarity"] >= 0.95 for n in right)


def test_reward_noise_and_inversion_change_what_the_memory_learns(arms: RunStore) -> None:
    """Seed 000 l.842 (A.5, reward noise and reward inversion): the rows keep the true env reward; the noisy arm
    learns from it plus noise, the inverted arm from its negation, and the returns are the paper's G of those."""
    noisy = memory_rows(arms, "noise")
    gaps = [r["reward"] - r["delta"] for r in noisy]
    assert all(g != 0 for g in gaps) and 0.3 < (sum(g * g for g in gaps) / len(gaps)) ** 0.5 < 0.7  # σ = 0.5
    inverted = memory_rows(arms, "inverted")
    assert any(r["delta"] > 0 for r in inverted) and all(r["reward"] == -r["delta"] for r in inverted)
    for rows in (noisy, inverted):
        for ep in {r["episode"] for r in rows}:
            mine = [r for r in rows if r["episode"] == ep]
            assert [r["return"] for r in mine] == pytest.approx(discounted_returns([r["reward"] for r in mine], 0.5))


RECIPES = Path(__file__).resolve().parents[3] / "recipes"


def test_the_beta_recipe_sweeps_only_beta() -> None:
    """β is not given by the seed (l.791–792 list no value; l.742: larger β trusts the memory more): the sweep arms
    are the paper-faithful arm of jitrl-maze with β ∈ {0, 0.5, 1, 2, 4} and nothing else changed."""
    faithful = next(m for m in load_spec(RECIPES / "jitrl-maze.yaml").methods if m.label == "jitrl-paper").params
    assert faithful["config"] == {"memory_action_prior": 0.25}  # the union option set is on in the paper arm
    arms = load_spec(RECIPES / "jitrl-beta.yaml").methods
    assert [m.params["config"]["beta"] for m in arms] == [0.0, 0.5, 1.0, 2.0, 4.0]
    for m in arms:
        assert {**m.params, "config": {k: v for k, v in m.params["config"].items() if k != "beta"}} == faithful
        assert m.label == f"jitrl-paper-beta{m.params['config']['beta']:g}"


def test_the_controls_recipe_changes_one_thing_per_arm() -> None:
    """Each control or A.5 arm differs from the paper-faithful arm in exactly the param it is named after."""
    spec = load_spec(RECIPES / "jitrl-controls.yaml")
    faithful = next(m for m in load_spec(RECIPES / "jitrl-maze.yaml").methods if m.label == "jitrl-paper").params
    by = {m.label: m.params for m in spec.methods}
    assert by["jitrl-paper"] == faithful and by["static"] == {}
    changed = {label: {k: v for k, v in p.items() if faithful.get(k) != v} for label, p in by.items()
               if label not in ("jitrl-paper", "static")}
    assert changed == {"jitrl-paper-score-delta": {"step_scores": "none"},
                       "jitrl-paper-prompt": {"memory_use": "prompt"},
                       "jitrl-paper-wrong-retrieval": {"perturb": "wrong_retrieval"},
                       "jitrl-paper-reward-noise": {"perturb": "reward_noise", "reward_noise": 5.0},
                       "jitrl-paper-reward-inversion": {"perturb": "reward_inversion"}}
