"""The `jitrl` method on the maze with scripted roles (evidence: mechanism): the step memory overrides a bad prior
(the `jitrl-maze` prior loops in this maze's dead ends) and the maze gets solved, while β = 0 or an empty memory stays
with the prior; one memory version per practice episode, none from test episodes; malformed replies recorded and
replaced by a stated fallback; decisions replayed from the seed; option-index logprobs read as the prior; the
evaluator's step scores in the returns; and the strict readers of every reply."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.harness import load_tree
from evoarena.harness.state import record_line
from evoarena.methods.jitrl import replies
from evoarena.methods.jitrl.agent import NO_HISTORY, step_key
from evoarena.methods.jitrl.memory import (
    EPISODES,
    ROWS,
    EpisodeLine,
    StepRecord,
    episode_rows,
    load_memory,
    read_episodes,
    read_rows,
)
from evoarena.methods.jitrl.method import JitRLMethod, summary
from evoarena.models import GenParams, Message, TokenLogprob
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.jitrl_maze import RANK_WEIGHTS, jitrl_maze
from evoarena.spec import parse_spec
from evoarena.store import RunStore

MAZE = {"seed": 2, "n_train": 1, "n_val": 0, "n_test": 2, "size": 5, "max_steps": 30}  # the prior loops here
ARMS = [{"name": "frozen", "label": "static"},
        {"name": "jitrl", "label": "released", "params": {"variant": "released"}},
        {"name": "jitrl", "label": "paper", "params": {"variant": "paper"}},
        {"name": "jitrl", "label": "paper-beta0", "params": {"variant": "paper", "config": {"beta": 0.0}}},
        {"name": "jitrl", "label": "released-blind", "params": {"variant": "released", "read_memory": False}},
        {"name": "jitrl", "label": "released-evaluated",
         "params": {"variant": "released", "prior": "confidence", "rewards": "released", "step_scores": "evaluator"}}]


@policy("test-jitrl-garbled")
def garbled(messages: Sequence[Message], params: GenParams) -> Any:
    """The jitrl-maze roles, but the confidence reply is prose and the evaluator's has a score out of range."""
    text = messages[-1].content
    if "give your confidence from 0 to 100" in text:
        return "I would go with the first option, it looks best."
    if "You are scoring game actions" in text:
        return "0: 11"
    return jitrl_maze(messages, params)


def run(root: Path, methods: list[dict[str, Any]], *, model: str = "jitrl-maze", episodes: int = 10,
        seeds: Sequence[int] = (0,)) -> tuple[dict[str, Any], RunStore]:
    spec = parse_spec({"name": "jitrl", "benchmark": {"name": "maze", "params": MAZE}, "methods": methods,
                       "models": {"s": {"backend": "scripted", "model": model}},
                       "roles": {"solver": "s", "evaluator": "s"}, "seeds": list(seeds),
                       "protocol": {"epochs": episodes, "select": "last"}})
    with pytest.MonkeyPatch.context() as mp:  # a response cache of its own (the autouse fixture is per test)
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        results = run_experiment(spec, root / "run", probe=False)
    return results, RunStore(root / "run")


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], RunStore]:
    return run(tmp_path_factory.mktemp("jitrl-arms"), ARMS)


def cell(store: RunStore, condition: str) -> str:
    return next(c["cell"] for c in store.cells() if c["condition"] == condition)


def attempts(store: RunStore, condition: str, phase: str = "practice") -> list[dict[str, Any]]:
    return store.query("SELECT id, version_id, answer, score FROM attempts WHERE cell=? AND phase=? ORDER BY id",
                       (cell(store, condition), phase))


def trace(row: dict[str, Any]) -> list[dict[str, Any]]:
    return list(json.loads(row["answer"])["trace"])


def curve(store: RunStore, condition: str) -> list[float]:
    return [float(a["score"]) for a in attempts(store, condition)]


# -- learning over episodes ------------------------------------------------------------------------------------------
def test_the_memory_overrides_the_bad_prior_and_the_maze_gets_solved(arms: tuple[dict[str, Any], RunStore]) -> None:
    results, store = arms
    assert curve(store, "static") == [0.0] * 10  # the prior alone loops in this maze's dead ends
    released = curve(store, "released")
    assert released[0] == 0.0 and sum(released) >= 6 and released[-3:] == [1.0] * 3
    # its first episode, on an empty memory, is the static arm's: the prior's most likely option at every step
    first, static = trace(attempts(store, "released")[0]), trace(attempts(store, "static")[0])
    assert [s["action"] for s in first] == [s["action"] for s in static]
    assert all(not s["agent"]["neighbours"] for s in first)
    # in a won episode the memory made it leave the prior: a step whose pick is not the prior's favourite
    won = next(a for a in attempts(store, "released") if a["score"] == 1.0)
    overruled = [s["agent"] for s in trace(won) if s["agent"]["chosen"] != s["agent"]["options"][
        max(range(len(s["agent"]["prior"])), key=s["agent"]["prior"].__getitem__)]]
    assert overruled and all(a["neighbours"] for a in overruled)
    assert all(a["advantages"][a["options"].index(a["chosen"])] > 0 for a in overruled)
    view = {c["condition"]: c for c in results["views"]["jitrl"]["cells"]}
    assert view["released"]["source"] == "episodes" and view["static"]["source"] == "practice attempts"
    assert view["released"]["auc"] > 0.5 and view["static"]["auc"] == 0.0
    assert view["released"]["scores"] == released and view["released"]["memory"] > 0


def test_beta_zero_stays_with_the_prior(arms: tuple[dict[str, Any], RunStore]) -> None:
    _, store = arms
    steps = [s["agent"] for a in attempts(store, "paper-beta0") for s in trace(a)]
    assert sum(bool(a["neighbours"]) for a in steps) > 100  # it retrieves, and the advantages are not all 0 …
    assert any(any(x != 0 for x in a["advantages"]) for a in steps)
    for a in steps:  # … but π′ = π₀ at every step
        assert a["scores"] == pytest.approx(a["prior"])
        assert a["weight"] == 0.0
    # the paper variant samples from π′: with β = 1 the same memory moves π′ away from π₀
    moved = [s["agent"] for a in attempts(store, "paper") for s in trace(a)]
    assert any(a["scores"] != pytest.approx(a["prior"]) for a in moved if a["neighbours"])


def test_a_blind_arm_writes_memory_but_never_reads_it(arms: tuple[dict[str, Any], RunStore]) -> None:
    results, store = arms
    steps = [s["agent"] for a in attempts(store, "released-blind") for s in trace(a)]
    assert steps and not any(a["neighbours"] for a in steps)  # no decision saw a neighbour …
    assert curve(store, "released-blind") == [0.0] * 10  # … so the bad prior keeps looping, where `released` learns
    view = {c["condition"]: c for c in results["views"]["jitrl"]["cells"]}
    assert view["released-blind"]["memory"] > 0  # the episodes were still written


def test_logprob_priors_are_the_option_index_tokens(arms: tuple[dict[str, Any], RunStore]) -> None:
    _, store = arms
    ranked = [s["agent"] for a in attempts(store, "paper") for s in trace(a)
              if s["agent"].get("prior_source") == "logprobs"]
    assert ranked and all(a["index_position"] == 0 and "below_top" not in a for a in ranked)
    for a in ranked:  # the scripted ranks weigh 60/25/10/5: π₀ is a subset of them, renormalised over the options
        assert any(sorted(a["prior"]) == pytest.approx(sorted(w / sum(ws) for w in ws))
                   for ws in itertools.combinations(RANK_WEIGHTS, len(a["prior"])))
    confident = [s["agent"] for a in attempts(store, "released-evaluated") for s in trace(a)
                 if s["agent"].get("prior_source") == "confidence"]
    assert confident and all(a["prior"] == [round(p, 2) for p in a["prior"]] for a in confident)  # conf / 100


# -- the memory as harness versions ---------------------------------------------------------------------------------
def test_every_practice_episode_writes_a_memory_version(arms: tuple[dict[str, Any], RunStore]) -> None:
    _, store = arms
    played = attempts(store, "released")
    current = next(c["current_version"] for c in store.cells() if c["condition"] == "released")
    final = load_tree(store, current)
    versions = [a["version_id"] for a in played] + [current]
    assert len(set(versions)) == 11  # the initial harness, then one version per episode
    for e, (before, after) in enumerate(zip(versions, versions[1:], strict=False)):
        rows_before = read_jsonl(load_tree(store, before), ROWS)
        rows_after = read_jsonl(load_tree(store, after), ROWS)
        steps = json.loads(played[e]["answer"])["steps"]
        assert len(rows_after) - len(rows_before) == steps and {r["episode"] for r in rows_after[len(rows_before):]} \
            == {e}
        assert len(read_jsonl(load_tree(store, after), EPISODES)) == e + 1
    memory = load_memory(final, 0.5)
    assert memory.episodes == 10 and len(memory) == sum(json.loads(a["answer"])["steps"] for a in played)
    view = JitRLMethod.state_view(final)
    assert view["episodes"] == 10 and view["scores"] == curve(store, "released")


def test_test_episodes_read_the_memory_and_do_not_change_the_harness(arms: tuple[dict[str, Any], RunStore]) -> None:
    _, store = arms
    final = next(c["current_version"] for c in store.cells() if c["condition"] == "released")
    tested = attempts(store, "released", "test")
    assert len(tested) == 2 and {a["version_id"] for a in tested} == {final}
    assert store.query("SELECT count(*) n FROM harness_versions WHERE cell=?", (cell(store, "released"),))[0]["n"] \
        == 11  # no version from the test episodes
    tree = load_tree(store, final)
    assert len(read_jsonl(tree, EPISODES)) == 10  # their episodes are not in the memory
    # each test episode's agent started from the final memory (10 episodes in it: the released episode weight)
    weights = [s["agent"]["weight"] for a in tested for s in trace(a) if s["agent"]["neighbours"]]
    assert weights and all(w == pytest.approx(1 + 10 / 50 * 0.5) for w in weights)


# -- fallbacks, reproducibility, the evaluator ----------------------------------------------------------------------
def test_a_malformed_reply_is_recorded_and_falls_back(tmp_path: Path) -> None:
    _, store = run(tmp_path, [ARMS[-1]], model="test-jitrl-garbled", episodes=2)
    steps = [s["agent"] for a in attempts(store, "released-evaluated") for s in trace(a)]
    chose = [a for a in steps if a["prior_source"] != "single option"]
    assert chose and all(a["prior_source"] == "uniform (fallback)" for a in chose)
    for a in chose:
        assert "not a `number: confidence` line" in a["prior_error"] and a["prior_reply"].startswith("I would")
        assert a["prior"] == pytest.approx([1 / len(a["options"])] * len(a["options"]))
    final = load_tree(store, next(c["current_version"] for c in store.cells()))
    lines = read_jsonl(final, EPISODES)
    assert [ln["prior_fallbacks"] for ln in lines] == [
        sum(s["agent"]["prior_source"] == "uniform (fallback)" for s in trace(a))
        for a in attempts(store, "released-evaluated")]
    assert [ln["step_scores"] for ln in lines] == ["rejected", "rejected"]  # the evaluator's reply too …
    rejected = store.query("SELECT payload FROM events WHERE kind='rejected_output'")
    assert len(rejected) == 2 and "outside -10..10" in rejected[0]["payload"]
    assert all(r["step_score"] is None for r in read_jsonl(final, ROWS))  # … so the rows keep the env rewards


def test_the_evaluators_scores_make_the_returns(arms: tuple[dict[str, Any], RunStore]) -> None:
    _, store = arms
    final = load_tree(store, next(c["current_version"] for c in store.cells()
                                  if c["condition"] == "released-evaluated"))
    rows = read_jsonl(final, ROWS)
    assert all(ln["step_scores"] == "evaluator" for ln in read_jsonl(final, EPISODES))
    assert all(r["step_score"] is not None for r in rows) and any(r["step_score"] == 10 for r in rows)
    for ep in {r["episode"] for r in rows}:
        mine = [r for r in rows if r["episode"] == ep]
        expect = episode_rows([StepRecord(r["state"], r["history"], r["action"], r["delta"]) for r in mine],
                              [r["step_score"] for r in mine], won=any(r["delta"] > 0 for r in mine),
                              rewards="released", gamma=0.5, episode=ep)
        assert [r["return"] for r in mine] == pytest.approx([r.return_ for r in expect])


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_decisions_replay_from_the_seed(tmp_path: Path, variant: str) -> None:
    def decisions(root: Path, seed: int) -> list[Any]:
        arm = {"name": "jitrl", "label": variant, "params": {"variant": variant, "seed": seed}}
        _, store = run(root, [arm], episodes=4)
        return [[s["agent"] for s in trace(a)] for a in attempts(store, variant)]

    once = decisions(tmp_path / "a", 7)
    assert once == decisions(tmp_path / "b", 7)
    if variant == "paper":  # it samples: another seed draws otherwise
        assert once != decisions(tmp_path / "c", 8)


# -- the pieces -------------------------------------------------------------------------------------------------------
def test_keys_are_the_observation_and_the_history() -> None:
    first = step_key("You are in a maze cell. Open directions: north, east.", [], [], None)
    assert first.state == "You are in a maze cell Open directions north east" and first.history == NO_HISTORY
    later = step_key("Kitchen.", ["go north", "take key", "open door"], ["take key"], 2)
    assert later.history == "take key take key open door"  # progress, then the last two actions


def test_proposals_keep_distinct_admissible_actions() -> None:
    options, dropped = replies.proposed_options("1. Open door.\n2. dance\n3) open door\n4: Go North", 3,
                                                ["open door", "go north", "take key"])
    assert options == ["open door", "go north"] and dropped == ["dance", "open door"]
    assert replies.proposed_options("1. jump\n2. sing", 3, None) == (["jump", "sing"], [])
    # lines without numbers count against the admissible actions; without those, numbered lines win over prose
    assert replies.proposed_options("Go east\n- Inspect phone\n> take key", 3, ["go east", "take key"]) == (
        ["go east", "take key"], ["Inspect phone"])
    assert replies.proposed_options("Here are my ideas:\n1. jump\n2) sing", 3, None) == (["jump", "sing"], [])
    for bad, why in (("\n  \n", "no action line"), ("1. dance", "none of the proposed"),
                     ("open the door", "none of the proposed")):
        with pytest.raises(replies.ReplyError, match=why):
            replies.proposed_options(bad, 3, ["open door"])


def test_index_logprobs_sum_the_spellings_and_floor_the_unlisted() -> None:
    lead = TokenLogprob("The", -0.5, (("The", -0.5), ("Option", -2.0)))  # no option number at position 0
    pick = TokenLogprob("2", -0.4, (("2", -0.4), (" 2", -2.0), ("1", -1.5), ("x", -6.0)))
    read = replies.index_logprobs([lead, pick], 3)
    assert read.position == 1 and read.generated == 2 and read.below_top == (3,)
    assert read.logprobs[2] == pytest.approx(math.log(math.exp(-0.4) + math.exp(-2.0)))
    assert read.logprobs[1] == -1.5 and read.logprobs[3] == -6.0  # floored at the least likely listed token
    with pytest.raises(replies.ReplyError, match="no token logprobs"):
        replies.index_logprobs(None, 3)
    with pytest.raises(replies.ReplyError, match="no top logprobs"):
        replies.index_logprobs([TokenLogprob("2", -0.1)], 3)
    with pytest.raises(replies.ReplyError, match="no generated position"):
        replies.index_logprobs([lead], 3)


def test_confidences_and_step_scores_are_read_strictly() -> None:
    assert replies.confidences("1: 70\n\n2: 20%\n3. 10", 3) == {1: 70.0, 2: 20.0, 3: 10.0}
    for bad, why in (("1: 70\n2: 30", "no confidence for 3"), ("1: 70\n1: 20\n3: 10", "two confidences"),
                     ("1: 170\n2: 0\n3: 0", "outside"), ("1: 70\n2: 20\n3: 10\nbecause", "not a"),
                     ("4: 10\n1: 1\n2: 2\n3: 3", "unknown number")):
        with pytest.raises(replies.ReplyError, match=why):
            replies.confidences(bad, 3)
    assert replies.step_scores("0: 5\n1: -10\nStep 2: 0", 3) == [5.0, -10.0, 0.0]
    with pytest.raises(replies.ReplyError, match="outside"):
        replies.step_scores("0: 11", 1)


def read_jsonl(tree: dict[str, str], path: str) -> list[dict[str, Any]]:
    """A memory file's lines as the JSON they are."""
    return [json.loads(line) for line in tree.get(path, "").splitlines()]


def test_the_return_rules() -> None:
    steps = [StepRecord(f"s{t}", "h", a, d) for t, (a, d) in enumerate([("a", 0.0), ("b", 0.0), ("c", 1.0)])]
    paper = episode_rows(steps, None, won=True, rewards="paper", gamma=0.5, episode=0)
    assert [r.return_ for r in paper] == [0.25, 0.5, 1.0]
    released = episode_rows(steps, None, won=True, rewards="released", gamma=0.5, episode=0)
    assert [r.return_ for r in released] == [0.0, 0.0, None]  # a won episode's last step is not stored
    failed = episode_rows(steps[:2], None, won=False, rewards="released", gamma=0.5, episode=0)
    assert [r.return_ for r in failed] == [-5.0, -10.0]  # a failed episode's last reward is −10
    scored = episode_rows(steps, [2.0, 0.0, 0.0], won=True, rewards="paper", gamma=0.5, episode=0)
    assert [r.return_ for r in scored] == [2.0, 0.0, 0.0]  # paper: the evaluator's r_t
    lines = [EpisodeLine(episode=e, steps=0, final_score=0, max_score=1, won=False, stopped="done", stored=0,
                         start="", prior_fallbacks=0, proposal_fallbacks=0, step_scores=None) for e in (0, 1)]
    tree = {ROWS: "".join(record_line(r) for r in released), EPISODES: "".join(record_line(ln) for ln in lines)}
    assert [r.model_dump(by_alias=True) for r in read_rows(tree)] == [r.model_dump(by_alias=True) for r in released]
    assert '"final_score": 0,' in tree[EPISODES] and read_episodes(tree) == lines  # an int score stays an int
    memory = load_memory(tree, 0.5)
    assert memory.episodes == 2 and len(memory) == 2  # the unstored step and the empty episode still count
    assert summary({ROWS: ""}) == {"episodes": 0, "scores": [], "won": [], "auc": 0.0, "late_mean": 0.0,
                                   "memory": 0, "prior_fallbacks": 0, "proposal_fallbacks": 0}


def test_params_are_checked() -> None:
    assert JitRLMethod(variant="released", config={"alpha": 2.0}).config.alpha == 2.0
    assert JitRLMethod(retrieval={"k": 3}).config.retrieval.k == 3
    assert JitRLMethod().config.retrieval.mode == "paper"
    for bad in ({"variant": "both"}, {"prior": "vibes"}, {"options": 12}, {"config": {"betta": 1.0}},
                {"retrieval": {"mode": "released"}}, {"history_window": 0}):
        with pytest.raises(ValueError):
            JitRLMethod(**bad)


# -- the recipes ------------------------------------------------------------------------------------------------------
RECIPES = Path(__file__).resolve().parents[3] / "recipes"


def test_the_maze_recipe_runs_its_three_arms_and_reports_their_curves(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    result = CliRunner().invoke(app, ["run", str(RECIPES / "jitrl-maze.yaml"), "--model", "scripted", "--seeds", "0",
                                      "--run-dir", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["evidence"] == "mechanism"
    view = {c["condition"]: c for c in data["views"]["jitrl"]["cells"]}
    assert set(view) == {"static", "jitrl-paper", "jitrl-released"}
    assert all(len(c["scores"]) == 10 for c in view.values())  # 10 episodes of the one maze (epochs)
    assert view["static"]["auc"] == 0.0 and view["static"]["source"] == "practice attempts"
    assert view["jitrl-released"]["auc"] > 0.5 and view["jitrl-released"]["late_mean"] == 1.0
    assert view["jitrl-paper"]["source"] == "episodes" and view["jitrl-paper"]["memory"] > 0
    # `evoarena trace --episode` shows the agent's notes: options with prior > score, the pick, the neighbours
    store = RunStore(tmp_path / "run")
    row = store.query("SELECT a.id FROM attempts a JOIN cells c ON a.cell = c.cell WHERE c.condition = "
                      "'jitrl-released' AND a.phase = 'practice' ORDER BY a.id DESC LIMIT 1")[0]
    shown = CliRunner().invoke(app, ["trace", str(tmp_path / "run"), "--episode", str(row["id"])])
    assert shown.exit_code == 0 and "agent" in shown.stdout and "neighbours)" in shown.stdout


def test_the_textworld_recipe_is_the_issues_study() -> None:
    from evoarena.protocol.validate import validate_spec
    from evoarena.spec import load_spec

    spec = load_spec(RECIPES / "textworld-learning.yaml")
    validate_spec(spec)
    assert [m.label for m in spec.methods] == ["static", "evotest", "jitrl-paper", "jitrl-paper-beta0",
                                                 "jitrl-released", "jitrl-released-blind"]
    params = spec.benchmark.params
    assert params["settings"] == {"world_size": 3, "nb_objects": 4, "quest_length": 2} and params["n_train"] == 1
    assert params["max_steps"] == 20 and spec.protocol.epochs == 10
    assert spec.models["embedded"].model == "qwen2.5-coder-1.5b-instruct" and spec.roles["solver"] == "embedded"
