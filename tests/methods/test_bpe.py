"""BPE (evidence: mechanism): the rule-based belief on real tw-household text, the experience bank (top-3 keyword
recall raising usage, LFU eviction at the cap), the progress cap, the meta-actions on the shared step budget, the
ablations removing their block and their meta-actions, BPE off being `frozen`, consolidation (a new version; malformed
replies and invalid operations rejected; the rule option), the frozen mode never touching the experience files, the
usage counts coming back through `end()`, the pollution measure, and the household recipe with `--model scripted`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
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
from evoarena.methods.bpe.agent import STATUSES, Progress
from evoarena.methods.bpe.belief import HAND, Belief, replay
from evoarena.methods.bpe.consolidate import ConsolidationError, Op, apply_ops, parse_ops, rule_ops
from evoarena.methods.bpe.evidence import check_prior, pollution, update_evidence
from evoarena.methods.bpe.experience import Bank, location_prior, tokens
from evoarena.methods.bpe.goal import family, goal
from evoarena.methods.bpe.method import STATE, read_state
from evoarena.methods.frozen import Frozen
from evoarena.models import Completion, GenParams, Message, Usage
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.solve.solve import solve
from evoarena.scripted.bpe_household import CONSOLIDATOR, consolidator
from evoarena.store import RunStore

HOUSEHOLD = ["pick", "look", "clean", "heat", "cool", "pick-two"]
SEED_ENTRY = {"store": "general", "text": "In a maze, keep heading east and south towards the exit."}


@pytest.fixture(scope="session")
def tw_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One TextWorld game cache for this module's tests (a household game costs 1–2 s to generate)."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    return tmp_path_factory.mktemp("bpe_games")


@pytest.fixture
def games(tw_games: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("EVOARENA_TEXTWORLD_DIR", str(tw_games))
    yield tw_games


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


# -- the belief on real tw-household text --------------------------------------------------------------------------
def test_the_belief_parser_follows_a_real_household_game(games: Path) -> None:
    from evoarena.envs.textworld import TextWorldEnv

    env = TextWorldEnv("tw-household", {"task": "heat", "objects": 3})
    try:
        first = env.reset(3)
        belief = Belief()
        belief.observe(None, first)
        plan = env.policy()
        take = next(c for c in plan if c.startswith("take "))
        thing, source = take.removeprefix("take ").split(" from ")
        assert belief.room == "Room" and "sink basin" in belief.receptacles and "microwave" in belief.receptacles
        steps = []
        for command in ["open cabinet", "close cabinet", *plan[:plan.index(take) + 1], "inventory", *plan[plan.index(
                take) + 1:]]:
            before = dict(belief.where)
            text = env.step(command).observation
            steps.append(("env", command, text))
            belief.observe(command, text)
            if command == "open cabinet" and "You open the cabinet" in text:
                assert belief.opened["cabinet"] is True and "cabinet" in belief.looked
            if command == "close cabinet" and "You close" in text:
                assert belief.opened["cabinet"] is False
            if command == take:
                assert belief.where[thing] == HAND and belief.held == [thing] and before.get(thing) == source
            if command.startswith("heat "):
                assert "hot" in belief.states[thing] and "hot" in belief.describe(thing)
        goal_place = plan[-1].split(" on " if " on " in plan[-1] else " into ")[-1]
        assert belief.first_seen[thing] == source and belief.where[thing] == goal_place
        assert env.won and re.search(rf"{goal_place}: [^;\n]*\b{thing}\b", belief.world())
        assert replay(first, steps).facts() == belief.facts()  # the trace alone gives the same evidence
    finally:
        env.close()


def test_the_belief_reads_alfworld_wording_too() -> None:
    b = Belief()
    b.observe(None, "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around "
                    "you, you see a cabinet 1, a countertop 1, a fridge 1.\n\nYour task is to: put a cool mug in "
                    "cabinet.")
    b.observe("go to countertop 1", "You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.")
    b.observe("take mug 2 from countertop 1", "You pick up the mug 2 from the countertop 1.")
    b.observe("open fridge 1", "You open the fridge 1. The fridge 1 is open. In it, you see a egg 1.")
    b.observe("cool mug 2 with fridge 1", "You cool the mug 2 using the fridge 1.")
    assert b.room is None and b.at == "countertop 1" and b.opened == {"fridge 1": True}
    assert b.where == {"apple 1": "countertop 1", "mug 2": HAND, "egg 1": "fridge 1"} and b.states["mug 2"] == ["cool"]
    assert b.first_seen["mug 2"] == "countertop 1" and b.looked == ["countertop 1", "fridge 1"]
    assert "cabinet 1" in b.world() and check_prior("mug", "countertop", b.facts()) == "hit"


def test_goals_and_families() -> None:
    assert goal("Your task is to: put a hot mug on the dining table.\n\n-= Room =-").kind == "heat"
    g = goal("Your task is to: put two soap bars in the cabinet.")
    assert (g.kind, g.thing, g.place) == ("pick-two", "soap bar", "cabinet")
    assert goal("Your task is to: look at the cellphone under the desk lamp.").thing == "cellphone"
    assert goal("Your task is to: heat some egg and put it in garbagecan 1.").kind == "heat"
    assert goal("Your task is to: put a book on the shelf.").kind == "pick" and goal("go east").kind is None
    assert family("tw-household/pick-two-55") == "pick-two" and family("maze-7") == "maze"


# -- the experience bank -------------------------------------------------------------------------------------------
def test_recall_is_keyword_top3_per_store_and_raises_usage() -> None:
    bank = Bank()
    texts = ["heat the mug with the microwave", "the mug goes in the microwave to heat", "microwave heats food",
             "heat anything with the microwave", "cool things in the fridge"]
    for t in texts:
        bank.add("task", t, 1)
    bank.add("search", "The mug is usually in the cabinet.", 1)
    found = bank.recall("heat mug microwave")
    assert [e.text for e in found["task"]] == texts[:3]  # 3 shared keywords, 3, then 2 (the older of two)
    assert [e.id for e in found["search"]] == ["s1"] and "general" not in found
    assert [e.usage for e in bank.stores["task"]] == [1, 1, 1, 0, 0]
    assert bank.retrieve("fridge")["task"][0].usage == 0 and bank.stores["task"][4].usage == 0  # retrieve: no side
    assert tokens("Two Soap Bars in the boxes") == {"two", "soap", "bar", "box"}


def test_a_full_store_evicts_the_least_used_entry() -> None:
    bank = Bank(cap=80)
    for i in range(80):
        bank.add("mistakes", f"mistake number {i}", i)
    for e in bank.stores["mistakes"]:
        e.usage = 0 if e.id in ("m7", "m30") else 2
    entry, evicted = bank.add("mistakes", "a new one", 81)
    assert evicted is not None and evicted.id == "m7" and len(bank.stores["mistakes"]) == 80  # least used, oldest
    assert entry.id == "m81" and bank.get("m30") is not None
    _, again = bank.add("mistakes", "another", 82)
    assert again is not None and again.id == "m30"  # the other unused one, older than the newcomer
    _, third = bank.add("mistakes", "and another", 83)
    assert third is not None and third.id == "m81"  # then the newcomers (usage 0), oldest first
    bank.remove("m83")
    assert bank.add("mistakes", "no id reuse", 84)[0].id == "m84"
    assert location_prior("The mug was found in/on the cabinet.") == ("mug", "cabinet")
    assert location_prior("Always open containers first") is None


def test_progress_holds_at_most_its_cap() -> None:
    progress = Progress(8)
    answers = [progress.commit(f"subgoal {i}: todo") for i in range(10)]
    assert len(progress.items) == 8 and all("Nothing committed" in a for a in answers[8:])
    assert "-> tried" in progress.commit("subgoal 3: tried") and progress.items[3] == ["subgoal 3", "tried"]
    assert "must be one of" in progress.commit("subgoal 1: done") and STATUSES == ("tried", "todo", "blocked")


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


# -- consolidation and evidence on their own ---------------------------------------------------------------------
def test_the_consolidator_reply_is_parsed_strictly() -> None:
    assert parse_ops("NONE") == []
    ops = parse_ops("```\n- ADD search: The mug is in the cabinet.\n2. UPDATE [g3]: new text\nREMOVE m1\n```")
    assert ops == [Op("add", "search", "The mug is in the cabinet."), Op("update", "g3", "new text"),
                   Op("remove", "m1")]
    assert parse_ops("ADD common mistakes: do not loop")[0].target == "mistakes"
    for bad in ("", "ADD: no store", "ADD recipes: x", "UPDATE g1 new text", "REMOVE the old one",
                "Here you go:\nADD general: x", "NONE\nADD general: x"):
        with pytest.raises(ConsolidationError):
            parse_ops(bad)


def test_rules_add_update_and_remove() -> None:
    bank = Bank()
    bank.add("search", "The mug is in the cabinet.", 1)  # s1, wrong below
    bank.add("search", "The apple is in the fridge.", 1)  # s2, contradicted, apple not seen
    bank.add("general", "Always look under the sofa.", 1)  # g1, recalled in two failed episodes
    evidence: dict[str, dict[str, int]] = {}
    won = {"won": True, "task_type": "heat", "thing": "mug", "first_seen": {"mug": "countertop"},
           "looked": ["countertop", "fridge"], "recalled": ["g1"], "notes": ["heat before placing"],
           "effective": ["take mug from countertop", "heat mug with microwave"], "actions": [], "stopped": "done"}
    lost = {"won": False, "task_type": "pick", "thing": "book", "first_seen": {}, "looked": [], "recalled": ["g1"],
            "notes": [], "effective": [], "actions": ["look"] * 5, "stopped": "budget"}
    won["checks"] = update_evidence(evidence, bank.entries(), won)
    assert [(c["id"], c["result"]) for c in won["checks"]] == [("s1", "miss"), ("s2", "miss")]
    update_evidence(evidence, bank.entries(), lost)
    update_evidence(evidence, bank.entries(), lost)
    ops = rule_ops(bank, [won, lost], evidence)
    assert Op("update", "s1", "The mug was found in/on the countertop.") in ops and Op("remove", "s2") in ops
    assert Op("add", "task", "[heat] heat before placing") in ops and Op("remove", "g1") not in ops  # won once
    assert any(o.kind == "add" and o.target == "mistakes" and "'look' 5 times" in o.text for o in ops)
    evidence["g1"] = {**evidence["g1"], "recalled_won": 0}
    assert Op("remove", "g1") in rule_ops(bank, [], evidence)
    done, refused = apply_ops(bank, ops, 3, source="rule", max_ops=8, evidence=evidence)
    assert apply_ops(bank, [Op("add", "general", "Check <place> first")], 3, source="model", max_ops=8,
                     evidence=evidence)[1][0][1].startswith("the text holds a placeholder")
    assert not refused and evidence["s1"]["checks"] == 0 and bank.get("s1").location == "countertop"  # type: ignore[union-attr]


def test_pollution_flags_wrong_priors_and_entries_only_failed_episodes_used() -> None:
    bank = Bank()
    bank.add("search", "The mug is in the cabinet.", 0)  # s1: right once, wrong twice -> polluted
    bank.add("search", "The pen is on the desk.", 0)  # s2: right -> clean
    bank.add("task", "heat things in the microwave", 0)  # t1: recalled in a failed episode only -> suspect
    bank.add("general", "never recalled", 0)  # g1: no evidence
    evidence: dict[str, dict[str, int]] = {}
    records = [{"won": True, "first_seen": {"mug": "cabinet", "pen": "desk"}, "looked": [], "recalled": []},
               {"won": False, "first_seen": {"red mug": "shelf"}, "looked": [], "recalled": ["t1"]},
               {"won": False, "first_seen": {}, "looked": ["cabinet"], "recalled": []}]
    for r in records:
        update_evidence(evidence, bank.entries(), r)
    assert evidence["s1"] == {"recalled_won": 0, "recalled_failed": 0, "checks": 3, "hits": 1, "misses": 2}
    view = pollution(bank.entries(), evidence)
    assert view["polluted_ids"] == ["s1"] and view["suspect_ids"] == ["t1"]
    assert (view["judged"], view["flagged"], view["rate"], view["unjudged"]) == (3, 2, 2 / 3, 1)
    assert view["location_rate"] == 0.5 and view["suspect_rate"] == 1.0


# -- the household recipe ------------------------------------------------------------------------------------------
def test_the_household_recipe_runs_its_six_arms(games: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "bpe-household.yaml"
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
