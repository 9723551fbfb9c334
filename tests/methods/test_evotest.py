"""EvoTest on the maze with scripted roles (evidence: mechanism): one episode and one child per practice step, the
parent chosen by UCB as `ucb_scores` computes it, the evolver shown the whole trajectory and the last failure loops,
rule-based memory on score rises and plateaus, malformed replies and failing extractors not kept, the freeze on a
win, both mutation scopes, the step program's prompt, and the same run under process isolation."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from evotest_runs import BAD_START, EVOLVER_PROMPTS, episodes, final_state, rejected, run, trajectories
from own_process import own_process

from evoarena.harness.state import HarnessStateError, parse_records, record_line
from evoarena.methods.evotest import memory as mem
from evoarena.methods.evotest.reply import ReplyError, parse_reply
from evoarena.methods.evotest.state import (
    DEFAULT_EXTRACTOR,
    EXTRACTOR,
    GUIDE,
    KNOBS,
    LESSONS,
    STATE,
    end_episode,
    new_state,
    next_move,
    read_state,
    temperature,
)
from evoarena.methods.evotest.step_program import SMOKE_FAILED, build_messages, game_history, similar
from evoarena.scripted.evotest_maze import HISTORY_END, HISTORY_START
from evoarena.search import Scored, ucb_scores


# -- the search ------------------------------------------------------------------------------------------------------
def test_ucb_picks_the_parent_by_the_formula_and_every_episode_makes_one_child(tmp_path: Path,
                                                                              make_spec: Any) -> None:
    store = run(tmp_path, make_spec, episodes=6, seed=1)
    state, _ = final_state(store)
    nodes = {n["id"]: n for n in state["nodes"]}
    eps = episodes(store)
    assert [e["node"] for e in eps] == [f"n{k}" for k in range(6)] and len(nodes) == 7  # a node per episode + next
    assert all(e["action"] == "evolve" and e["score"] == 0.0 for e in eps)  # this maze is never won here
    for k, e in enumerate(eps):
        played = [nodes[f"n{i}"] for i in range(k + 1)]  # the tree when the parent was chosen
        archive = [Scored(n["id"], tuple(n["scores"]), n["parent"]) for n in played]
        ucb = ucb_scores(archive, 1.0, 0.8)
        assert e["source"] == archive[ucb.index(max(ucb))].id  # argmax, the earliest among ties
        assert e["ucb"] == pytest.approx(dict(zip([m.id for m in archive], ucb, strict=True)))
        child = nodes[f"n{k + 1}"]
        assert child["parent"] == e["source"] and child["depth"] == nodes[e["source"]]["depth"] + 1
        assert child["origin"] == "evolved" and "prompt" in child["adopted"]
    assert {n["id"]: len(n["children"]) for n in nodes.values()} == {
        i: sum(c["parent"] == i for c in nodes.values()) for i in nodes}
    assert len({e["source"] for e in eps}) > 1  # the exploration bonus moved the search between nodes
    assert all(n["versions"] for n in nodes.values() if n["scores"]) and not nodes["n6"]["versions"]
    init = store.query("SELECT id FROM harness_versions WHERE step='init'")[0]["id"]
    assert nodes["n0"]["versions"] == [init]  # the root is the initial harness


def test_the_evolver_reads_the_whole_trajectory_and_the_last_three_failure_loops(tmp_path: Path,
                                                                                make_spec: Any) -> None:
    EVOLVER_PROMPTS.clear()
    store = run(tmp_path, make_spec, episodes=5, seed=1, model="test-evotest-recording")
    texts, eps = trajectories(store), episodes(store)
    answers = [r["answer"] for r in store.query("SELECT answer FROM attempts WHERE phase='practice' ORDER BY id")]
    assert len(EVOLVER_PROMPTS) == len(eps) == 5
    for k, (prompt, e) in enumerate(zip(EVOLVER_PROMPTS, eps, strict=True)):
        shown = prompt.split(HISTORY_START, 1)[1].split(HISTORY_END, 1)[0]
        parent_episode = int(e["source"][1:])  # node n<i> played episode i + 1
        assert texts[parent_episode].strip() in shown  # the parent's whole episode, every step
        assert len(re.findall(r"(?m)^> ", shown)) == 30
        tails = [", ".join(t["action"] for t in json.loads(a)["trace"][-10:]) for a in answers[: k + 1]][-3:]
        assert prompt.count("Reason: plateau, Length: 30") == len(tails)
        assert all(f"Actions to avoid (tail): {tail}" in prompt for tail in tails)


def test_a_win_freezes_the_tree_on_the_best_node_and_memory_follows_the_score(tmp_path: Path,
                                                                             make_spec: Any) -> None:
    store = run(tmp_path, make_spec, episodes=6, seed=3)
    state, tree = final_state(store)
    eps = episodes(store)
    scores = [e["score"] for e in eps]
    assert scores[:2] == [0.0, 0.0] and scores[2:] == [1.0] * 4  # evolved into a win, then kept winning
    first_win = eps[2]["node"]
    assert [e["action"] for e in eps] == ["evolve", "evolve"] + ["exploit"] * 4
    assert all(e["source"] == first_win for e in eps[2:])  # exploit = a copy of the best node plays
    assert state["frozen"] and state["best"] == first_win and state["threshold"] == 1.0
    nodes = {n["id"]: n for n in state["nodes"]}
    assert all(nodes[f"n{k}"]["config"] == nodes[first_win]["config"] for k in range(3, 7))
    assert tree[GUIDE] == nodes[first_win]["config"][GUIDE]  # the live harness is the best node
    successes = parse_records(mem.SUCCESSES, tree[mem.SUCCESSES], mem.Positive)
    assert len(successes) == 4 and all(s.delta_score == 1.0 and "You see the goal" in s.state
                                       for s in successes)  # one per won episode: the step that reached the exit
    failures = parse_records(mem.FAILURES, tree[mem.FAILURES], mem.Negative)
    assert [f.episode for f in failures] == [1, 2] and {f.reason for f in failures} == {"plateau"}
    assert "".join(record_line(f) for f in failures) == tree[mem.FAILURES]
    assert [e["positives"] for e in eps] == [0, 0, 1, 1, 1, 1]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    cell = results["views"]["evotest"]["cells"][0]
    assert cell["scores"] == scores and cell["auc"] == pytest.approx(4 / 6) and cell["late_mean"] == 1.0


# -- what is not kept ------------------------------------------------------------------------------------------------
def test_a_malformed_reply_is_rejected_and_changes_nothing(tmp_path: Path, make_spec: Any) -> None:
    store = run(tmp_path, make_spec, episodes=3, model="test-evotest-malformed")
    state, tree = final_state(store)
    refused = [r for r in rejected(store) if r.get("what") == "evolver reply"]
    assert len(refused) == 3 and all("nothing a configuration can keep" in r["reason"] for r in refused)
    nodes = {n["id"]: n for n in state["nodes"]}
    assert all(n["config"] == nodes["n0"]["config"] for n in nodes.values())
    assert [n["origin"] for n in state["nodes"]] == ["root", "copy", "copy", "copy"]
    assert tree[GUIDE].strip() == BAD_START and tree[EXTRACTOR] == DEFAULT_EXTRACTOR


def test_an_extractor_that_raises_fails_its_smoke_run_and_is_not_kept(tmp_path: Path, make_spec: Any) -> None:
    store = run(tmp_path, make_spec, episodes=2, model="test-evotest-raising")
    state, _ = final_state(store)
    child = next(n for n in state["nodes"] if n["id"] == "n1")
    assert child["adopted"] == ["prompt"] and child["config"][EXTRACTOR] == DEFAULT_EXTRACTOR
    assert "Prefer: south, east" in child["config"][GUIDE]  # the rest of the reply is kept
    refused = [r for r in rejected(store) if r.get("what") == "extract_state"]
    assert len(refused) == 1 and SMOKE_FAILED in refused[0]["reason"]
    rows = store.query("SELECT unit_key, parse_error, score FROM attempts WHERE phase='practice' ORDER BY id")
    assert [r["unit_key"].split("/")[1] for r in rows] == ["e0", "e1", "e1"]  # the smoke failure, then the episode
    assert rows[1]["parse_error"].startswith("harness program") and rows[2]["parse_error"] is None
    assert episodes(store)[1]["steps"] > 0 and child["scores"] == [episodes(store)[1]["score"]]
    calls = store.query("SELECT COUNT(*) AS n FROM calls WHERE role='solver' AND unit LIKE 'practice/e1/%'")
    assert calls[0]["n"] == episodes(store)[1]["steps"]  # the failed smoke run made no model call


# -- scopes ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scope", ["released", "paper"])
def test_the_scopes_mutate_what_they_name(tmp_path: Path, make_spec: Any, scope: str) -> None:
    store = run(tmp_path, make_spec, episodes=3, model="test-evotest-everything", mutate=scope)
    state, _ = final_state(store)
    child = next(n for n in state["nodes"] if n["id"] == "n1")
    if scope == "released":
        assert sorted(child["adopted"]) == ["extract_state", "prompt"]
        assert LESSONS not in child["config"] and temperature(child["config"]) == 0.0
    else:
        assert sorted(child["adopted"]) == ["extract_state", "memory", "prompt", "temperature"]
        assert child["config"][LESSONS].strip() == "Dead end in the north-east."
        assert temperature(child["config"]) == 0.2 and "max_tokens = 16" in child["config"][KNOBS]
        call = store.query("SELECT params, request_blob FROM calls WHERE role='solver' AND unit LIKE 'practice/e1/%'"
                           " LIMIT 1")[0]
        assert json.loads(call["params"])["temperature"] == 0.2
        user = store.get_request(call["request_blob"])[-1].content
        assert "MEMORY (success and failure lessons from earlier episodes):\nDead end in the north-east." in user


def test_the_method_runs_alike_under_process_isolation(tmp_path: Path, make_spec: Any) -> None:
    here = run(tmp_path / "in", make_spec, episodes=4, seed=3, mutate="paper")
    apart = run(tmp_path / "out", make_spec, episodes=4, seed=3, mutate="paper", protocol=own_process())
    assert episodes(here) == episodes(apart) and [e["score"] for e in episodes(here)] == [0.0, 0.0, 1.0, 1.0]
    assert final_state(here)[0] == final_state(apart)[0]


# -- the parts, on their own -----------------------------------------------------------------------------------------
def test_the_reply_is_read_part_by_part() -> None:
    code = "<code>\n```python\ndef extract_state(h):\n    return 'x'\n```\n</code>"
    got = parse_reply(f"Go south first, always.\n{code}\n<memory>m</memory><temperature>9</temperature>", "paper")
    assert got.prompt == "Go south first, always." and got.extractor == "def extract_state(h):\n    return 'x'\n"
    assert got.lessons == "m" and got.temperature is None and got.refused[0][0] == "temperature"
    assert parse_reply(f"Go south first, always.\n{code}<memory>m</memory>", "released").lessons is None
    two_args = parse_reply("Go south first, always.\n<code>def extract_state(a, b):\n    return a</code>", "released")
    assert two_args.extractor is None and "one argument" in two_args.refused[0][1]
    placeholder = parse_reply("[Your generated prompt here]\n<memory>\n[Your memory here]\n</memory>\n" + code, "paper")
    assert placeholder.prompt is None and placeholder.lessons is None and placeholder.extractor is not None
    for bad in ("", "short", "<code>print(1)</code>", "tiny <code>def extract_state(:</code>",
                "[Your generated prompt here]\n<code>\ndef extract_state(game_history):\n    # [Return]\n</code>"):
        with pytest.raises(ReplyError):
            parse_reply(bad, "released")


def outcome(steps: Sequence[tuple[str, str, float]]) -> str:
    """An episode's answer with its trace: (action, observation, score after it) per step."""
    return json.dumps({"trace": [{"step": i, "kind": "env", "action": a, "observation": o, "score": s}
                                 for i, (a, o, s) in enumerate(steps)]})


def test_memory_rules_match_the_released_ones() -> None:
    scores = [0.0] * 3 + [1.0] + [1.0] * 8 + [2.0, 2.0]
    ep = mem.played(outcome([("east", f"room {i % 2}", s) for i, s in enumerate(scores)]))
    assert ep is not None and ep.states[0] == "" and ep.states[1] == "room 0"
    assert [(p.state, p.delta_score) for p in mem.positives(ep)] == [("room 0", 1.0), ("room 1", 1.0)]
    reason, states, _ = mem.loop_segment(ep) or ("", [], [])
    assert reason == "alternation" and len(states) == 14  # no plateau (the score rose 2 steps ago), but A↔B
    flat = mem.played(outcome([("west", f"room {i}", 0.0) for i in range(12)]))
    assert flat is not None and (mem.loop_segment(flat) or ("",))[0] == "plateau"
    wandering = mem.played(outcome([("west", f"room {i}", 0.0 if i < 5 else 1.0) for i in range(12)]))
    assert wandering is not None and mem.loop_segment(wandering) is None  # a recent rise, no A↔B
    short = mem.played(outcome([("east", f"room {i % 2}", 0.0) for i in range(11)]))
    assert short is not None and mem.loop_segment(short) is None
    assert mem.played(None) is None and mem.played(json.dumps({"score": 0})) is None


def test_the_freeze_rules_are_the_released_ones() -> None:
    state = new_state({})
    rule = {"freeze_on_win": True, "force_best_after_drop": True, "drop_threshold": 0.14}
    end_episode(state, "n0", 0.5, False, freeze_on_win=True)
    assert next_move(state, **rule) == (False, False)
    end_episode(state, "n1", 1.0, True, freeze_on_win=True)
    assert state.frozen and state.threshold == 1.0 and next_move(state, **rule) == (True, True)
    end_episode(state, "n2", 0.0, False, freeze_on_win=True)  # a miss while frozen: unfreeze, evolve next
    assert not state.frozen and state.threshold == 0.0 and next_move(state, **rule) == (False, False)
    assert next_move(state, **rule) == (True, False)  # then the drop from the best (1.0 -> 0.0) exploits
    end_episode(state, "n3", 0.9, False, freeze_on_win=True)
    assert next_move(state, **rule) == (False, False) and state.best == "n1"


def test_a_malformed_state_is_one_line_naming_the_file() -> None:
    with pytest.raises(HarnessStateError, match=r"^'memory/evotest/state\.json': not a valid State: next: Field"):
        read_state({STATE: '{"nodes": []}'})
    with pytest.raises(HarnessStateError, match=r"^'memory/evotest/failures\.jsonl' line 2: not a valid Negative"):
        parse_records(mem.FAILURES, '{"reason": "plateau", "length": 0, "states": [], "actions": [], "episode": 1, '
                                    '"episode_final_score": 0.0}\n{"reason": "plateau"}\n', mem.Negative)


def test_the_step_program_builds_the_released_prompt() -> None:
    files = {"instructions.md": "Play.", "system.md": "Go east.", "extract_state.py":
             "def extract_state(h):\n    return 'steps=' + str(h.count('ACTION TAKEN'))\n",
             "memory/successes.jsonl": "".join(json.dumps({"state": s, "action": a, "delta_score": 1.0}) + "\n"
                                               for s, a in [("a red door", "open"), ("a blue box", "take"),
                                                            ("a red box", "push"), ("a red red door", "kick")])}
    episode = {"start": "a hall", "history": [{"action": "north", "observation": "a red door"}],
               "observation": "a red door", "steps_left": 3}
    system, user = build_messages({"task": "TASK", "context": "CTX", "files": files, "episode": episode})
    assert system == {"role": "system", "content": "Play.\n\nFollow this guide: Go east."}
    text = user["content"]
    assert text.startswith("GAME STATE SUMMARY: steps=1\n\nCTX\n\n") and text.endswith("\n\nTASK")
    assert [e["action"] for e in similar([json.loads(x) for x in files["memory/successes.jsonl"].splitlines()],
                                         "a red door")] == ["open", "kick", "push"]
    assert "ACTION: open" in text and "ACTION: take" not in text
    assert game_history(episode) == "GAME HISTORY:\nStep 1:\nSTATE: a hall\nACTION TAKEN: north\n------------\n"
    broken = {**files, "extract_state.py": "def extract_state(h):\n    return h.split()[99]\n"}
    later = build_messages({"task": "T", "context": "", "files": broken, "episode": episode})
    assert "GAME STATE SUMMARY" not in later[1]["content"]  # a failure after the first step shows no summary
    with pytest.raises(RuntimeError, match=SMOKE_FAILED):  # at the first step it fails the smoke run
        build_messages({"task": "T", "context": "", "files": broken, "episode": {**episode, "history": []}})


def test_the_recipe_runs_its_arms_and_reports_their_curves(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "evotest-maze.yaml"
    result = CliRunner().invoke(app, ["run", str(recipe), "--model", "scripted", "--seeds", "0", "--run-dir",
                                      str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert data["evidence"] == "mechanism"
    view = {c["condition"]: c for c in data["views"]["evotest"]["cells"]}
    arms = ("evotest-released", "evotest-paper", "evotest-prompt-only", "evotest-no-ucb")
    assert set(view) == {"static", *arms}
    assert all(len(c["scores"]) == 10 for c in view.values())  # 10 episodes of the one maze (epochs)
    assert view["static"]["auc"] == 0.0 and view["static"]["source"] == "practice attempts"
    for arm in arms:
        assert view[arm]["source"] == "episodes" and view[arm]["auc"] > 0.5 and view[arm]["late_mean"] == 1.0
        assert view[arm]["failure_rate"] == 0.0  # the scripted evolver's replies are all kept
    assert "extractor failures" in (tmp_path / "run" / "report.html").read_text("utf-8")
    episodes = {c["condition"]: c for c in data["views"]["episodes"]["cells"]}  # the view of every arm's episodes
    assert episodes["static"]["scores"] == view["static"]["scores"]
    assert all(e["calls"] == {"solver": e["steps"]} and e["kinds"] == {"env": e["steps"]}
               for e in episodes["static"]["episodes"])  # the plain actor: one solver call per step
    assert all(e["tokens"].get("evolver", 0) > 0 for e in episodes["evotest-released"]["episodes"][:2])
