"""The `textworld` benchmark: seeded TextWorld games as episodes — a run plays them one command per step, every
step a solver call in the ledger, the score the game's over its maximum; bad params fail in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.benchmarks.textworld import TextWorldBenchmark
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore

SETTINGS = {"world_size": 3, "nb_objects": 4, "quest_length": 1}


def test_a_run_plays_games_step_by_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    monkeypatch.setenv("EVOARENA_TEXTWORLD_DIR", str(tmp_path / "games"))
    spec = parse_spec({"name": "tw", "benchmark": {"name": "textworld", "params": {
        "n_train": 1, "n_val": 1, "n_test": 2, "settings": SETTINGS, "max_steps": 15}},
        "methods": [{"name": "frozen"}], "models": {"s": {"backend": "scripted", "model": "textworld-explorer"}},
        "roles": {"solver": "s"}, "seeds": [0]})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT answer, score, passed FROM attempts WHERE phase='test'")
    assert len(rows) == 2
    outcomes = [json.loads(r["answer"]) for r in rows]
    for r, o in zip(rows, outcomes, strict=True):
        assert o["max_score"] >= 1 and r["score"] == pytest.approx(o["score"] / o["max_score"])
        assert bool(r["passed"]) == o["won"] and len(o["trace"]) == o["steps"] <= 15
        assert all(s["admissible"] for s in o["trace"] if not s["done"])  # TextWorld lists its actions
    calls = store.query("SELECT COUNT(*) AS n FROM calls WHERE phase='test' AND role='solver'")[0]["n"]
    assert calls == sum(o["steps"] for o in outcomes)
    assert any((tmp_path / "games").rglob("*.z8"))  # the games were generated into the cache named by the env


@pytest.mark.parametrize(("params", "what"), [({"family": "zork"}, "family"),
                                               ({"settings": {"rooms": 3}}, "settings"),
                                               ({"max_steps": 0}, "max_steps"),
                                               ({"tasks": ["heat"]}, "tasks"),
                                               ({"family": "tw-household", "tasks": ["bake"]}, "tasks"),
                                               ({"transfer": ["door-rule"]}, "transfer"),
                                               ({"family": "tw-keydoor", "transfer": ["base"]}, "transfer"),
                                               ({"family": "tw-keydoor", "transfer": ["door-rule"],
                                                 "settings": {"variant": "key-moved"}}, "transfer"),
                                               ({"family": "tw-keydoor", "transfer": ["door-rule"] * 2}, "transfer"),
                                               ({"family": "tw-keydoor", "transfer": ["door-rule"], "n_train": 1,
                                                 "n_test": 2}, "transfer")])
def test_bad_params_fail_in_one_line(params: dict[str, Any], what: str) -> None:
    with pytest.raises(ValueError, match=rf"^benchmark\.params \(textworld\)\.{what}\b") as info:
        TextWorldBenchmark(**params)
    assert "\n" not in str(info.value)


def test_household_tasks_cycle_through_their_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tasks` (tw-household): each split's i-th game is type i mod len(tasks), its source id names the type, and its
    episode plays a game of that type."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    monkeypatch.setenv("EVOARENA_TEXTWORLD_DIR", str(tmp_path / "games"))
    bench = TextWorldBenchmark(family="tw-household", tasks=["heat", "look"], n_train=2, n_val=0, n_test=1,
                               settings={"objects": 1})
    tasks = bench.build()
    assert [(t.split, t.meta["task_type"]) for t in tasks] == [("train", "heat"), ("train", "look"), ("test", "heat")]
    assert [t.source_id for t in tasks] == [f"tw-household/{t.meta['task_type']}-{t.meta['game_seed']}" for t in tasks]
    env, seed = bench.episode(tasks[1].view())
    try:
        assert env.reset(seed).startswith("Your task is to: look at the ")  # type: ignore[attr-defined]
    finally:
        env.close()  # type: ignore[attr-defined]
