"""The `maze` benchmark: an interactive benchmark whose tasks are episodes — seeded mazes split disjointly, one
solver call per step, the outcome graded as the final score over the maximum, provider errors never scored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Feedback, InteractiveBenchmark
from evoarena.benchmarks.maze import MazeBenchmark
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.methods.frozen import Frozen
from evoarena.models import Completion, GenParams, Message, ModelCallError, Usage
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.solve.solve import solve
from evoarena.store import RunStore


class Scripted:
    """A solver stand-in that answers with a policy and counts calls; fails at call `fail_at` when given."""

    def __init__(self, fail_at: int | None = None, reply: str | None = None) -> None:
        self.calls: list[tuple[Message, ...]] = []
        self.fail_at, self.reply = fail_at, reply

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        self.calls.append(tuple(messages))
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise ModelCallError("provider down")
        text = self.reply if self.reply is not None else maze_explorer(messages, params or GenParams())
        return Completion(text, Usage(1, 1))


def built(**params: Any) -> tuple[MazeBenchmark, dict[str, Any]]:
    bench = MazeBenchmark(**params)
    tasks = {t.id: t for t in bench.build()}
    return bench, tasks


def test_tasks_are_seeded_and_disjoint() -> None:
    a, ta = built(seed=1)
    b, tb = built(seed=1)
    assert [t.meta for t in ta.values()] == [t.meta for t in tb.values()]
    seeds = {t.split: set() for t in ta.values()}
    for t in ta.values():
        seeds[t.split].add(t.meta["game_seed"])
    assert not (seeds["train"] & seeds["test"]) and not (seeds["val"] & seeds["test"])
    assert isinstance(a, InteractiveBenchmark)


def test_an_episode_is_one_call_per_step_and_grades_to_won() -> None:
    bench, tasks = built(size=4, loops=2, max_steps=60)
    task = tasks["maze-test-000"]
    solver = Scripted()
    attempt = solve(Frozen(), bench, {"system.md": bench.system_prompt()}, task.view(), solver)  # type: ignore[arg-type]
    outcome = json.loads(attempt.answer or "")
    assert outcome["steps"] == len(solver.calls) == attempt.text.count("\n> ") + 1
    fb = bench.grade(task, attempt.answer)
    assert fb == Feedback(1.0, True, fb.message) if outcome["won"] else fb.score == 0.0
    assert solver.calls[0][0] == Message("system", bench.system_prompt())  # the harness's prompt, every step
    assert "Now:" in solver.calls[-1][-1].content and "Steps left:" in solver.calls[-1][-1].content


def test_the_budget_ends_an_episode_and_a_bad_reply_spends_a_step() -> None:
    bench, tasks = built(max_steps=5)
    solver = Scripted(reply="I would rather not")
    attempt = solve(Frozen(), bench, {"system.md": "s"}, tasks["maze-test-001"].view(), solver)  # type: ignore[arg-type]
    outcome = json.loads(attempt.answer or "")
    trace = outcome.pop("trace")
    assert outcome == {"max_score": 1.0, "score": 0.0, "stopped": "budget", "steps": 5, "won": False}
    assert [s["action"] for s in trace] == [""] * 5 and all(s["admissible"] for s in trace)
    assert len(solver.calls) == 5 and "Unknown action" in attempt.text


def test_a_provider_error_ends_the_episode_as_an_error_never_a_score() -> None:
    bench, tasks = built()
    solver = Scripted(fail_at=3)
    attempt = solve(Frozen(), bench, {"system.md": "s"}, tasks["maze-test-002"].view(), solver)  # type: ignore[arg-type]
    assert attempt.error and "provider down" in attempt.error and attempt.answer is None


def test_the_harness_steers_the_episode() -> None:
    bench, tasks = built(size=6, max_steps=30)
    view = tasks["maze-test-003"].view()
    plain = solve(Frozen(), bench, {"system.md": "s"}, view, Scripted())  # type: ignore[arg-type]
    steered = solve(Frozen(), bench, {"system.md": "s. Prefer: south, west"}, view, Scripted())  # type: ignore[arg-type]
    assert plain.text != steered.text  # the note in the system prompt changed the moves


def test_a_run_on_mazes_records_every_step_in_the_ledger(tmp_path: Path) -> None:
    from evoarena.spec import parse_spec

    spec = parse_spec({"name": "maze", "benchmark": {"name": "maze", "params": {"n_train": 2, "n_val": 1,
                                                                                "n_test": 3, "max_steps": 20}},
                       "methods": [{"name": "frozen"}],
                       "models": {"s": {"backend": "scripted", "model": "maze-explorer"}},
                       "roles": {"solver": "s"}, "seeds": [0]})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    tests = store.query("SELECT answer, score FROM attempts WHERE phase='test'")
    assert len(tests) == 3 and all(r["score"] in (0.0, 1.0) for r in tests)
    steps = sum(json.loads(r["answer"])["steps"] for r in tests)
    calls = store.query("SELECT COUNT(*) AS n FROM calls WHERE phase='test' AND role='solver'")[0]["n"]
    assert calls == steps  # one solver call per step of every test episode


@pytest.mark.parametrize("params", [{"size": 1}, {"max_steps": 0}, {"n_test": 0}])
def test_bad_params_fail_in_one_line(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="benchmark.params"):
        MazeBenchmark(**params)


def test_a_harness_program_is_given_the_whole_episode() -> None:
    program = ("def build_messages(request):\n"
               "    ep = request['episode']\n"
               "    seen = f\"TURNS {len(ep['history'])} LEFT {ep['steps_left']} START {ep['start'][:22]}\"\n"
               "    return [{'role': 'user', 'content': request['task'] + '\\n' + seen}]\n")
    bench, tasks = built(max_steps=12)
    solver = Scripted(reply="north")
    attempt = solve(Frozen(), bench, {"system.md": "s", "harness.py": program}, tasks["maze-test-001"].view(),
                    solver)  # type: ignore[arg-type]
    turns = [int(c[-1].content.rsplit("TURNS ", 1)[1].split()[0]) for c in solver.calls]
    assert turns == list(range(12))  # every turn so far, past the benchmark's window of 8
    assert all("START You are in a maze" in c[-1].content for c in solver.calls)
    assert "LEFT 1 " in solver.calls[-1][-1].content
    outcome = json.loads(attempt.answer or "")
    assert outcome["steps"] == 12 and [s["action"] for s in outcome["trace"]] == ["north"] * 12


def test_the_first_observation_stays_in_view_after_the_first_step() -> None:
    from evoarena.api import Turn

    bench, tasks = built()
    view = tasks["maze-test-000"].view()
    first = bench.format_step(view, "THE QUEST", [], None, 10, start="THE QUEST")
    later = bench.format_step(view, "now", [Turn("east", "o")] * 20, None, 10, start="THE QUEST")
    assert first.count("THE QUEST") == 1  # at step 0 it is the observation itself
    assert "At the start: THE QUEST" in later and later.count("> east") == bench.history_window
