"""Continual Harness on the maze with scripted roles (evidence: mechanism): the released cadence, the refiner's edits
changing the rest of the same episode, malformed refiner output recorded and not applied, the auto-revert of a skill
whose stuck rate rose, practice saving each refined harness as a version that the next episode continues from, and
val/test edits that end with their episode."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.maze import MazeBenchmark
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.continual_harness import Cadence, ContinualHarness, refines_at
from evoarena.methods.continual_harness.cadence import schedule
from evoarena.methods.continual_harness.reply import ReplyError, parse_memory, parse_prompt, parse_skills, slug
from evoarena.methods.continual_harness.state import CARRY, LOG, read_carry, read_log
from evoarena.methods.continual_harness.stuck import StepRec, revert_due, stuck_flags, window_stats
from evoarena.models import Completion, GenParams, Message, Usage
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.solve.solve import solve
from evoarena.scripted.continual_maze import refiner
from evoarena.store import RunStore

BAD_START = "Explore the maze. Prefer: north, west, south, east"  # the explorer does not find this maze's exit
MARK = "REFINER PASS: "


def run(tmp_path: Path, make_spec: Any, *, episodes: int = 1, seed: int = 2, model: str = "continual-maze",
        n_test: int = 1, methods: list[dict[str, Any]] | None = None, max_steps: int = 60,
        **params: Any) -> RunStore:
    spec = make_spec(
        name="continual",
        benchmark={"name": "maze", "params": {"seed": seed, "n_train": 1, "n_val": 0, "n_test": n_test, "size": 6,
                                              "max_steps": max_steps}},
        methods=methods or [{"name": "continual_harness", "params": {"initial_prompt": BAD_START, **params}}],
        models={"s": {"backend": "scripted", "model": model}}, roles={"solver": "s", "refiner": "s"},
        protocol={"epochs": episodes, "select": "last"})
    run_experiment(spec, tmp_path / "run", probe=False)
    return RunStore(tmp_path / "run")


def answers(store: RunStore, phase: str = "practice", cell: str = "") -> list[dict[str, Any]]:
    rows = store.query("SELECT answer FROM attempts WHERE phase=? AND cell LIKE ? ORDER BY id", [phase, f"{cell}%"])
    return [json.loads(r["answer"]) for r in rows]


def refinements(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["agent"]["refinement"] for s in answer["trace"] if "refinement" in (s.get("agent") or {})]


def solver_prompts(store: RunStore, unit: str, cell: str = "") -> list[str]:
    """The user message of every solver call of the units starting with `unit` (in cells starting with `cell`)."""
    rows = store.query("SELECT request_blob FROM calls WHERE role='solver' AND unit LIKE ? AND cell LIKE ? ORDER BY id",
                       [unit + "%", cell + "%"])
    return [store.get_request(r["request_blob"])[-1].content for r in rows]


def request(store: RunStore, call_id: int) -> str:
    """The user message of a ledgered call."""
    row = store.query("SELECT request_blob FROM calls WHERE id=?", [call_id])[0]
    return store.get_request(row["request_blob"])[-1].content


def final_tree(store: RunStore, cell: str = "") -> dict[str, str]:
    row = next(c for c in store.cells() if c["cell"].startswith(cell))
    return load_tree(store, row["current_version"])


# -- the cadence -----------------------------------------------------------------------------------------------------
def test_the_released_cadence() -> None:
    assert schedule(260) == [*range(10, 201, 10), 225, 250]
    assert not any(refines_at(s) for s in range(-1, 10))  # never before step 10
    assert refines_at(10) and refines_at(200) and not refines_at(210) and refines_at(225) and not refines_at(230)
    assert schedule(160, Cadence(every=50)) == [50, 100, 150]  # F overrides both periods
    assert schedule(30, Cadence(every=4)) == [12, 16, 20, 24, 28]  # ... after the same warm-up
    with pytest.raises(ValueError):
        Cadence(every=0)


class Model:
    """A role's stand-in: `reply(messages)` per call, every call kept."""

    default_params = GenParams()

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.calls: list[tuple[Message, ...]] = []

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        self.calls.append(tuple(messages))
        return Completion(self.reply(messages), Usage(1, 1), call_id=len(self.calls))


def test_a_long_episode_refines_at_10_20_to_200_then_225() -> None:
    bench = MazeBenchmark(size=10, max_steps=230)
    task = next(t for t in bench.build() if t.split == "train").view()
    solver = Model(lambda m: "north")  # the start's north is the maze's edge: 230 bumps, never done
    refiner_model = Model(lambda m: "nothing useful")
    tree = {"system.md": "play", "prompt.md": "Explore."}
    attempt = solve(ContinualHarness(clock="episode"), bench, tree, task, solver,  # type: ignore[arg-type]
                    roles={"refiner": refiner_model})  # type: ignore[dict-item]
    out = json.loads(attempt.answer or "{}")
    assert out["steps"] == 230
    assert [r["step"] for r in refinements(out)] == [*range(10, 201, 10), 225]
    assert len(refiner_model.calls) == 21 * 3  # the prompt, skills and memory passes each time
    assert all(r["window"] == {"steps": 10, "stuck": 10, "pct": 100} for r in refinements(out))  # every bump stuck
    step10 = out["trace"][10]
    assert step10["call_ids"] == [1, 2, 3, 11]  # the refiner's three calls, then the solver's, on the same step


# -- the refiner inside the episode ---------------------------------------------------------------------------------
def test_the_same_episode_improves_after_a_refinement(tmp_path: Path, make_spec: Any) -> None:
    store = run(tmp_path, make_spec, methods=[
        {"name": "continual_harness", "label": "never", "params": {"initial_prompt": BAD_START, "warmup": 10_000}},
        {"name": "continual_harness", "label": "refined", "params": {"initial_prompt": BAD_START}}])
    never, refined = answers(store, cell="never")[0], answers(store, cell="refined")[0]
    assert never["won"] is False and never["steps"] == 60 and refinements(never) == []
    assert refined["won"] is True and 10 < refined["steps"] < 60  # won in the same episode, after step 10
    first = refinements(refined)[0]
    assert first["step"] == 10 and first["passes"]["prompt"]["status"] == "rewritten"
    assert [(s["action"], s["observation"]) for s in refined["trace"][:10]] == [
        (s["action"], s["observation"]) for s in never["trace"][:10]]  # the same start
    prompts = solver_prompts(store, "practice", "refined")
    assert "Prefer: north, west" in prompts[9] and "Prefer: south, east" not in prompts[9]
    assert "Prefer: south, east" in prompts[10] and "[junction_rule]" in prompts[10]  # step 11 sees the edits
    assert "HARNESS EVOLUTION completed" in prompts[10] and "Strategic prompt: rewritten" in prompts[10]
    calls = store.query("SELECT COUNT(*) AS n FROM calls WHERE role='refiner' AND unit LIKE 'practice/%'"
                        " AND cell LIKE 'refined%'")
    assert calls[0]["n"] == 3 * len(refinements(refined))


@policy("test-continual-malformed")
def malformed(messages: Sequence[Message], params: GenParams) -> str:
    """Prose for the prompt pass, broken JSON and a bad entry for the skills pass, a good memory pass."""
    text = messages[-1].content
    if text.startswith(MARK + "prompt"):
        return "I would tell the agent to go south. Prefer: south, east"
    if text.startswith(MARK + "skills"):
        return '{"add": [{"id": "x", "description": "go"' if "### Step 1\n" in text else json.dumps(
            {"add": [{"id": "ok", "description": "Go south.", "effectiveness": "great"}]})
    return refiner(text) or maze_explorer(messages, params)


def test_a_malformed_refiner_reply_is_recorded_and_not_applied(tmp_path: Path, make_spec: Any) -> None:
    store = run(tmp_path, make_spec, model="test-continual-malformed")
    out = answers(store)[0]
    assert out["steps"] == 60 and out["stopped"] == "budget"  # the episode went on to its budget
    recs = refinements(out)
    assert [r["step"] for r in recs] == [10, 20, 30, 40, 50]
    for r in recs:
        assert r["passes"]["prompt"]["status"] == "rejected" and "<prompt>" in r["passes"]["prompt"]["reason"]
        assert r["passes"]["memory"]["status"] == "applied"
    assert recs[0]["passes"]["skills"]["status"] == "rejected" and "JSON" in recs[0]["passes"]["skills"]["reason"]
    later = recs[1]["passes"]["skills"]
    assert later["status"] == "unchanged" and "effectiveness" in later["refused"][0]["reason"]
    tree = final_tree(store)
    assert tree["prompt.md"].strip() == BAD_START and not any(p.startswith("skills/") for p in tree)
    assert "memory/progress.md" in tree  # the good pass was applied
    rejected = [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='rejected_output' ORDER BY id")]
    whats = [r["what"] for r in rejected]
    at_end = read_carry(tree).at_end  # the refinement due after the last step (60), made in practice for the next
    assert at_end is not None and at_end.clock == 60 and at_end.passes["prompt"].status == "rejected"
    assert state_text(read_carry(tree)) == tree[CARRY] and state_text(read_log(tree)) == tree[LOG]  # one JSON form
    assert whats.count("refiner prompt reply") == 6 and whats.count("refiner skills reply") == 1
    assert whats.count("refiner skills entry") == 5
    assert read_log(tree).root[0].rejected == 12 and read_log(tree).root[0].at == [10, 20, 30, 40, 50, 60]
    prompts = solver_prompts(store, "practice")
    assert all("Prefer: north, west" in p for p in prompts)  # no rejected prompt ever reached the solver


# -- the auto-revert -------------------------------------------------------------------------------------------------
HUG = "Hug the walls: push north."


@policy("test-continual-reverting")
def reverting(messages: Sequence[Message], params: GenParams) -> str:
    """Refiner: adds a harmless skill at step 10, rewrites it into a harmful one at step 20, then leaves it. Solver:
    the explorer, bumping into a wall while the harmful skill is in force."""
    text = messages[-1].content
    if text.startswith(MARK + "skills"):
        if "[walls]" not in text:
            return json.dumps({"add": [{"id": "walls", "name": "Walls", "description": "Keep moving."}]})
        if "### Step 11\n" in text:
            return json.dumps({"update": [{"id": "walls", "description": HUG}]})
        return json.dumps({"analysis": "keep", "update": []})
    if text.startswith(MARK):
        return refiner(text) or ""
    if HUG in text:
        options = re.findall(r"Open directions: ([a-z, ]+)\.", text.rsplit("Now:", 1)[-1])[0].split(", ")
        return next(d for d in ("north", "west", "south", "east") if d not in options)
    return maze_explorer(messages, params)


def test_a_skill_whose_stuck_rate_rose_is_reverted(tmp_path: Path, make_spec: Any) -> None:
    store = run(tmp_path, make_spec, model="test-continual-reverting", passes=["skills"])
    out = answers(store)[0]
    recs = {r["step"]: r for r in refinements(out)}
    assert recs[10]["passes"]["skills"]["added"] == ["walls"] and recs[10]["reverted"] == []
    assert recs[20]["checked"] == [{"skill": "walls", "new": True, "before": recs[10]["window"],
                                    "after": recs[20]["window"], "due": False, "reverted": False}]
    assert recs[20]["passes"]["skills"]["updated"] == ["walls"]
    assert recs[30]["window"]["pct"] == 100 and recs[20]["window"]["pct"] == 0  # every step under the harmful text
    assert recs[30]["reverted"] == ["walls"] and recs[30]["checked"][0]["due"] is True
    assert recs[40]["window"]["pct"] == 0 and recs[40]["checked"] == []  # restored: no more bumps, nothing watched
    tree = final_tree(store)
    assert tree["skills/walls.md"] == "# Walls\nKeep moving.\n\nEffectiveness: medium\n"
    prompts = solver_prompts(store, "practice")
    assert HUG in prompts[20] and HUG not in prompts[30]  # the revert holds from the next step on
    entry = read_log(tree).root[0]
    assert entry.reverted == ["walls"] and entry.stuck["stuck"] == 10


def test_the_revert_rule_and_the_stuck_steps() -> None:
    bump = StepRec(0, "north", "cell", "You bump into a wall.\ncell", 0.0, ("south", "east"))
    move = StepRec(1, "east", "cell", "cell", 0.0, ("south", "east"))  # a corridor: same text, but it moved
    same = StepRec(2, "look", "a room", "A Room", 0.0)  # no list offered: the unchanged text says it
    scored = StepRec(3, "north", "cell", "cell", 1.0, ("south",))
    assert stuck_flags([bump, move, same, scored]) == [True, False, True, False]
    again = StepRec(4, "east", "cell", "other", 0.0, ("south", "east"))
    assert stuck_flags([move, again], "repeat") == [False, True] and stuck_flags([move, again]) == [False, False]
    assert window_stats([True, False, False]) == {"steps": 3, "stuck": 1, "pct": 33}
    low, high = {"steps": 3, "pct": 10}, {"steps": 3, "pct": 26}
    assert revert_due(low, high) and not revert_due(low, {"steps": 3, "pct": 25})  # more than 15 points
    assert not revert_due({"steps": 2, "pct": 0}, high)  # both windows need 3 steps
    assert not revert_due(low, high, threshold=20)


# -- practice, versions, val and test -------------------------------------------------------------------------------
def test_practice_saves_each_refined_harness_as_a_version_and_the_next_episode_continues(tmp_path: Path,
                                                                                        make_spec: Any) -> None:
    store = run(tmp_path, make_spec, episodes=3)
    versions = store.query("SELECT id, step FROM harness_versions ORDER BY rowid")
    assert [v["step"].split("/")[1] if "/" in v["step"] else v["step"] for v in versions] == ["init", "e0", "e1", "e2"]
    trees = [load_tree(store, v["id"]) for v in versions]
    assert trees[0]["prompt.md"].strip() == BAD_START and "skills/junction_rule.md" not in trees[0]
    assert "Prefer: south, east" in trees[1]["prompt.md"] and "skills/junction_rule.md" in trees[1]
    assert trees[1]["memory/progress.md"] != trees[2]["memory/progress.md"]  # each episode's refinements kept
    outs = answers(store)
    ages = [read_carry(t).age for t in trees]
    assert ages == [0, outs[0]["steps"], outs[0]["steps"] + outs[1]["steps"], sum(o["steps"] for o in outs)]
    clocks = [[r["clock"] for r in refinements(o)] for o in outs]
    assert clocks[1] and all(c % 10 == 0 and ages[1] < c <= ages[2] for c in clocks[1])  # the run's clock goes on
    first_of_second = solver_prompts(store, "practice/e1")[0]
    assert "Prefer: south, east" in first_of_second and "[progress]" in first_of_second  # from step 0 on
    view = ContinualHarness.state_view(trees[-1])
    assert view["episodes"] == 3 and view["age"] == ages[-1] and view["skills"] == ["junction_rule"]
    log = [e.model_dump() for e in read_log(trees[-1]).root]
    assert [e["episode"] for e in log] == [1, 2, 3] and log[0]["changed"] == [
        "memory/progress.md", "prompt.md", "skills/junction_rule.md"]
    events = [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='continual_episode' ORDER BY id")]
    assert [e["score"] for e in events] == [e["score"] for e in log] and events[-1]["auc"] == pytest.approx(
        sum(e["score"] for e in log) / 3)


@pytest.mark.parametrize("refine_in_test", [True, False])
def test_test_episodes_refine_but_their_edits_end_with_the_episode(tmp_path: Path, make_spec: Any,
                                                                  refine_in_test: bool) -> None:
    store = run(tmp_path, make_spec, seed=1, n_test=2, refine_in_test=refine_in_test)
    practice_end = final_tree(store)
    tests = answers(store, "test")
    assert len(tests) == 2
    refiner_calls = store.query("SELECT COUNT(*) AS n FROM calls WHERE role='refiner' AND unit LIKE 'test%'")[0]["n"]
    if not refine_in_test:
        assert all(refinements(t) == [] for t in tests) and refiner_calls == 0
        return
    assert all(refinements(t) for t in tests) and refiner_calls > 0
    tested = {r["version_id"] for r in store.query("SELECT version_id FROM attempts WHERE phase='test'")}
    assert tested == {store.cells()[0]["current_version"]}  # both graded under the practice-end harness
    assert len(store.query("SELECT id FROM harness_versions")) == 2  # init + the one practice step: none from test
    first_test, second_test = ([request(store, s["call_id"]) for s in t["trace"]] for t in tests)
    after = refinements(tests[0])[0]["step"] + 1
    assert "HARNESS EVOLUTION completed" not in first_test[after - 1] and "HARNESS EVOLUTION" in first_test[after]
    memory = practice_end["memory/progress.md"].split("\n")[1]
    assert memory in first_test[0] and memory not in first_test[-1]  # the test refiner rewrote it mid-episode ...
    assert memory in second_test[0]  # ... and the next test episode starts from the practice harness again
    assert CARRY in practice_end and read_carry(practice_end).age == answers(store)[0]["steps"]


# -- the parts, on their own -----------------------------------------------------------------------------------------
def test_the_replies_are_read_strictly() -> None:
    assert parse_prompt("ok <prompt>\nGo south first.\n</prompt> done") == "Go south first."
    for bad in ("Go south first.", "<prompt>short</prompt>", "<prompt>[new prompt]</prompt>",
                "<prompt>Go south first.</prompt><prompt>Go east then.</prompt>", "<prompt>Go south first, always",
                "<prompt>Go south.\n## Recent agent trajectory (last 10 steps)\n### Step 1\nAction: east</prompt>"):
        with pytest.raises(ReplyError):
            parse_prompt(bad)
    current = {"walls": "# Walls\nKeep moving.\n\nEffectiveness: medium\n"}
    edits = parse_skills('```json\n{"add": [{"name": "Dead End!", "description": "Turn back."}], "update": ['
                         '{"id": "walls", "effectiveness": "high"}, {"id": "ghost", "description": "x"}]}\n```',
                         current)
    assert edits.added == ["dead_end"] and edits.updated == ["walls"]
    assert edits.files["walls"] == "# Walls\nKeep moving.\n\nEffectiveness: high\n"
    assert edits.files["dead_end"] == "# Dead End!\nTurn back.\n\nEffectiveness: medium\n"
    assert "no skill 'ghost'" in edits.refused[0][1]
    for bad in ("no json here", '{"add": "x"}', '{"other": 1}', "[1, 2]", '{"analysis": 3}'):
        with pytest.raises(ReplyError):
            parse_skills(bad, current)
    mem = parse_memory('{"add": [{"title": "Exit", "content": "South-east.", "importance": "4"}, '
                       '{"title": "Bad", "content": "x", "importance": 9}]} trailing words', {})
    assert mem.files == {"exit": "# Exit\nSouth-east.\n\nImportance: 4\n"} and "importance" in mem.refused[0][1]
    assert slug("  Open Door!! v2 ") == "open_door_v2" and slug("../../etc") == "etc" and slug("") == "unnamed"


def test_params_are_checked() -> None:
    with pytest.raises(ValueError, match="tools"):
        ContinualHarness(passes=["prompt", "subagents"])
    for bad in ({"passes": ["skill"]}, {"passes": []}, {"clock": "wall"}, {"stuck": "loops"}, {"every": 0},
                {"window": -1}):
        with pytest.raises(ValueError):
            ContinualHarness(**bad)
    assert ContinualHarness(every=50).config.window == 50  # one F, as the released flag: cadence and window
    assert ContinualHarness().config.window == 10 and ContinualHarness(every=50, window=20).config.window == 20


def test_the_recipe_runs_its_arms_and_reports_the_refinements(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "continual-harness-maze.yaml"
    result = CliRunner().invoke(app, ["run", str(recipe), "--model", "scripted", "--seeds", "0", "--run-dir",
                                      str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["evidence"] == "mechanism"
    view = {c["condition"]: c for c in data["views"]["continual_harness"]["cells"]}
    assert set(view) == {"static", "continual-frozen-at-test", "continual-updating"}
    assert all(len(c["scores"]) == 5 for c in view.values())
    assert view["static"]["auc"] == 0.0 and view["static"]["refinements"] is None
    for arm in ("continual-frozen-at-test", "continual-updating"):
        assert view[arm]["auc"] == 1.0 and view[arm]["refinements"] > 0 and view[arm]["windows"]
    assert view["continual-frozen-at-test"]["test"]["refinements"] == 0
    assert view["continual-updating"]["test"]["refinements"] > 0
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Continual Harness: refinements inside the episodes" in html
