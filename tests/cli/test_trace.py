"""`evoarena trace` and `evoarena calls` on a store the test builds with a RoleModel and an in-test backend."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.models import CallScope, Completion, GenParams, Message, ResponseCache, RoleModel, Usage
from evoarena.spec import ModelSpec
from evoarena.store import AttemptRow, RunStore

runner = CliRunner()
SYSTEM = "SYSTEM PROMPT: answer with one number.\nLine two of the prompt."


class Backend:
    backend_name = "test"
    model_id = "test:trace"
    endpoint = "trace"

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        return Completion(text=f"ANSWER to <{messages[-1].content}>", usage=Usage(5, 1), finish_reason="stop")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two practice units (t1: a solver and a reflector call; t2: a solver call), a test unit whose two attempts
    link to their calls, and a cached repeat of t1's solver call."""
    store = RunStore(tmp_path / "run")
    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:1/v1")
    base = RoleModel(
        role="solver",
        model_name="m",
        backend=Backend(),
        spec=spec,
        store=store,
        cache=ResponseCache(tmp_path / "cache.sqlite"),
    )

    def ask(role: str, phase: str, unit: str, question: str) -> Completion:
        model = base.scoped(CallScope(cell="frozen__scripted__s0", phase=phase, unit=unit))
        model.role = role
        return model.complete([Message("system", SYSTEM), Message("user", question)])

    ask("solver", "practice", "practice/e0/0000/t1", "What is 2 + 3?")
    ask("reflector", "practice", "practice/e0/0000/t1", "Why was 2 + 3 wrong?")
    ask("solver", "practice", "practice/e0/0001/t2", "What is 7 * 6?")
    a = ask("solver", "test", "test/v1", "What is 9 - 4?")
    b = ask("solver", "test", "test/v1", "What is 1 + 1?")
    store.finish_unit("frozen__scripted__s0", "test/v1", {"n": 2}, [
        AttemptRow(phase="test", task_id="t9", version_id="v1", answer="5", call_id=a.call_id),
        AttemptRow(phase="test", task_id="t10", version_id="v1", answer="2", call_id=b.call_id),
    ])  # fmt: skip
    ask("solver", "practice", "practice/e1/0000/t1", "What is 2 + 3?")  # served from the cache
    store.close()
    return tmp_path / "run"


def trace(run_dir: Path, *args: str) -> str:
    result = runner.invoke(app, ["trace", str(run_dir), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_trace_prints_the_exact_messages_and_responses(run_dir: Path) -> None:
    text = trace(run_dir, "--role", "reflector")
    assert f"--- system\n{SYSTEM}\n--- user\nWhy was 2 + 3 wrong?\n" in text
    assert "--- response (finish: stop)\nANSWER to <Why was 2 + 3 wrong?>\n" in text
    assert "call 2 · cell frozen__scripted__s0 · unit practice/e0/0000/t1 · phase practice · role reflector" in text
    assert "What is 7 * 6?" not in text and text.count("=== call") == 1


def test_trace_filters_by_task_attempt_and_shows_a_cached_calls_prompt(run_dir: Path) -> None:
    t1 = trace(run_dir, "--task", "t1")
    assert t1.count("=== call") == 3 and "What is 7 * 6?" not in t1  # two units name t1, one cached
    assert "cached yes" in t1 and t1.count("--- user\nWhat is 2 + 3?\n") == 2
    t9 = trace(run_dir, "--task", "t9")  # linked only through attempts.call_id (unit key test/v1)
    assert t9.count("=== call") == 1 and "What is 9 - 4?" in t9
    store = RunStore.open_existing(run_dir)
    second = store.query("SELECT id, call_id FROM attempts ORDER BY id")[1]
    by_attempt = trace(run_dir, "--attempt", str(second["id"]))
    assert by_attempt.count("=== call") == 1 and f"=== call {second['call_id']} " in by_attempt
    assert "--- user\nWhat is 1 + 1?\n--- response (finish: stop)\nANSWER to <What is 1 + 1?>\n" in by_attempt
    assert trace(run_dir, "--phase", "test", "--limit", "1").count("=== call") == 1
    missing = runner.invoke(app, ["trace", str(run_dir), "--attempt", "999"])
    assert missing.exit_code == 2 and "no attempt 999" in missing.output


def test_trace_json_parses_with_the_exact_messages(run_dir: Path) -> None:
    data = json.loads(trace(run_dir, "--cell", "frozen", "--task", "t2", "--json"))
    assert len(data) == 1
    (call,) = data
    assert call["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is 7 * 6?"}]
    assert call["response"] == {"text": "ANSWER to <What is 7 * 6?>", "finish_reason": "stop", "logprobs": None}
    assert call["kept"] and call["role"] == "solver" and call["unit"] == "practice/e0/0001/t2"
    assert json.loads(trace(run_dir, "--role", "nobody", "--json")) == []


def test_trace_of_a_call_recorded_before_texts_were_kept_says_so(run_dir: Path) -> None:
    store = RunStore.open_existing(run_dir)
    store.execute("UPDATE calls SET request_blob=NULL, response_blob=NULL WHERE id=1")
    store.close()
    text = trace(run_dir, "--task", "t1", "--limit", "3")
    assert "texts not kept" in text and text.count("=== call") == 3
    (old,) = [c for c in json.loads(trace(run_dir, "--json")) if c["id"] == 1]
    assert old["kept"] is False and old["messages"] is None


def test_calls_command_filters_the_ledger(run_dir: Path) -> None:
    result = runner.invoke(app, ["calls", str(run_dir), "--role", "solver", "--phase", "practice", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["unit"] for r in rows] == ["practice/e0/0000/t1", "practice/e0/0001/t2", "practice/e1/0000/t1"]
    assert [r["cached"] for r in rows] == [False, False, True]
    result = runner.invoke(app, ["calls", str(run_dir), "--task", "t10", "--json"])
    assert [r["unit"] for r in json.loads(result.stdout)] == ["test/v1"]
    table = runner.invoke(app, ["calls", str(run_dir), "--limit", "2"])
    assert table.exit_code == 0 and "last 2 calls" in table.stdout


def test_an_episode_is_shown_step_by_step(tmp_path: Path) -> None:
    """`evoarena trace --episode ID`: every step of an interactive benchmark's attempt with the call behind it."""
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.spec import parse_spec
    from evoarena.store import RunStore

    spec = parse_spec({"name": "maze", "benchmark": {"name": "maze", "params": {"n_train": 1, "n_val": 1,
                                                                                "n_test": 2, "max_steps": 12}},
                       "methods": [{"name": "frozen"}],
                       "models": {"s": {"backend": "scripted", "model": "maze-explorer"}},
                       "roles": {"solver": "s"}, "seeds": [0]})
    run_experiment(spec, tmp_path / "run", probe=False)
    row = RunStore(tmp_path / "run").query("SELECT id, answer FROM attempts WHERE phase='test' LIMIT 1")[0]
    result = runner.invoke(app, ["trace", str(tmp_path / "run"), "--episode", str(row["id"]), "--json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)
    assert len(steps) == json.loads(row["answer"])["steps"] and [s["step"] for s in steps] == list(range(len(steps)))
    assert all(s["call"]["response"]["text"].strip() == s["action"] for s in steps)  # the reply behind each move
    assert "Now:" in steps[-1]["call"]["messages"][-1]["content"]
    shown = runner.invoke(app, ["trace", str(tmp_path / "run"), "--episode", str(row["id"])])
    assert shown.exit_code == 0 and "episode of attempt" in shown.stdout
    missing = runner.invoke(app, ["trace", str(tmp_path / "run"), "--episode", "999999"])
    assert missing.exit_code != 0 and "no attempt 999999" in missing.output
    # with --cell: the cell's N-th episode of a phase (the cell by a unique prefix), the same table as its attempt id
    nth = runner.invoke(app, ["trace", str(tmp_path / "run"), "--cell", "frozen", "--phase", "test",
                                "--episode", "1", "--json"])
    assert nth.exit_code == 0, nth.output
    assert nth.stdout == result.stdout  # row is the first test attempt, the only cell's
    second = runner.invoke(app, ["trace", str(tmp_path / "run"), "--cell", "frozen", "--phase", "test",
                                   "--episode", "2", "--json"])
    assert second.exit_code == 0 and second.stdout != result.stdout
    past = runner.invoke(app, ["trace", str(tmp_path / "run"), "--cell", "frozen", "--phase", "test",
                                 "--episode", "3"])
    assert past.exit_code != 0 and "has 2 test episodes" in past.output
    mixed = runner.invoke(app, ["trace", str(tmp_path / "run"), "--episode", "1", "--role", "solver"])
    assert mixed.exit_code != 0 and "--episode takes --cell and --phase only" in mixed.output
