"""EvoTest's scripted runs on the maze, shared by its tests: the evolver policies (recording, malformed, raising,
everything), a run of the method on one maze, and readers of its state, episodes, rejections and trajectories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import policy
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.evotest.state import STATE, read_state
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.evotest_maze import HISTORY_START, evolve
from evoarena.store import RunStore

BAD_START = "Explore the maze. Prefer: north, west, south, east"  # the explorer fails this maze until evolved
EVOLVER_PROMPTS: list[str] = []


def _evolver(text: str) -> bool:
    return HISTORY_START in text


@policy("test-evotest-recording")
def recording(messages: Sequence[Message], params: GenParams) -> str:
    """The scripted evolver (evotest-maze), keeping every prompt it is shown."""
    if _evolver(messages[-1].content):
        EVOLVER_PROMPTS.append(messages[-1].content)
        return evolve(messages[-1].content)
    return maze_explorer(messages, params)


@policy("test-evotest-malformed")
def malformed(messages: Sequence[Message], params: GenParams) -> str:
    if _evolver(messages[-1].content):
        return "ok\n<code>def extract_state(:\n    return 1</code>"  # a short prompt and code that does not compile
    return maze_explorer(messages, params)


@policy("test-evotest-raising")
def raising(messages: Sequence[Message], params: GenParams) -> str:
    """A new guiding prompt and an extractor that compiles but raises on its first call."""
    if _evolver(messages[-1].content):
        return ("Explore the maze carefully. Prefer: south, east\n"
                "<code>\ndef extract_state(game_history):\n    return game_history.split()[99]\n</code>")
    return maze_explorer(messages, params)


@policy("test-evotest-everything")
def everything(messages: Sequence[Message], params: GenParams) -> str:
    """Every part of a configuration, whatever the scope asks for."""
    if _evolver(messages[-1].content):
        return ("Head for the exit. Prefer: south, east, north, west\n<memory>\nDead end in the north-east.\n"
                "</memory>\n<temperature>0.2</temperature>\n<code>\ndef extract_state(game_history):\n"
                "    return 'moves: ' + str(game_history.count('ACTION TAKEN'))\n</code>")
    return maze_explorer(messages, params)


def run(tmp_path: Path, make_spec: Any, *, episodes: int = 6, seed: int = 1, model: str = "evotest-maze",
        protocol: dict[str, Any] | None = None, methods: list[dict[str, Any]] | None = None,
        **params: Any) -> RunStore:
    spec = make_spec(
        name="evotest",
        benchmark={"name": "maze", "params": {"seed": seed, "n_train": 1, "n_val": 0, "n_test": 1, "size": 6,
                                              "max_steps": 30}},
        methods=methods or [{"name": "evotest", "params": {"initial_guide": BAD_START, **params}}],
        models={"s": {"backend": "scripted", "model": model}}, roles={"solver": "s", "evolver": "s"},
        protocol={"epochs": episodes, "select": "last", **(protocol or {})})
    run_experiment(spec, tmp_path / "run", probe=False)
    return RunStore(tmp_path / "run")


def final_state(store: RunStore, cell: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    row = next(c for c in store.cells() if cell is None or c["cell"] == cell)
    tree = load_tree(store, row["current_version"])
    state = read_state(tree)
    assert state is not None and state_text(state) == tree[STATE]  # the file is the one JSON form of its model
    return state.model_dump(), tree


def episodes(store: RunStore) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='evotest_episode' ORDER BY id")]


def rejected(store: RunStore) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='rejected_output' ORDER BY id")]


def trajectories(store: RunStore) -> list[str]:
    rows = store.query("SELECT output_blob FROM attempts WHERE phase='practice' ORDER BY id")
    return [store.blobs.get_text(r["output_blob"]) if r["output_blob"] else "" for r in rows]
