"""`evoarena trace` shows exactly what a model was shown: a CLR practice attempt's solver messages and an ACE
curator call's prompt, compared with what the scripted model itself received during the run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evoarena.api import policy
from evoarena.cli import app
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.clr.student import clr_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore

SEEN: list[tuple[tuple[tuple[str, str], ...], str]] = []


@policy("test-trace-recorder")
def recorder(messages: Sequence[Message], params: GenParams) -> str:
    """clr-student, recording every conversation it is shown and what it answered."""
    text = clr_student(messages, params)
    SEEN.append((tuple((m.role, m.content) for m in messages), text))
    return text


def trace(run_dir: Path, *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["trace", str(run_dir), *args, "--json"])
    assert result.exit_code == 0, result.output
    calls: list[dict[str, Any]] = json.loads(result.stdout)
    return calls


def test_trace_shows_the_exact_messages_of_a_clr_attempt_and_an_ace_curator_call(tmp_path: Path) -> None:
    SEEN.clear()
    spec = parse_spec({
        "name": "trace-clr", "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 2}},
        "methods": [{"name": "ace"}], "models": {"s": {"backend": "scripted", "model": "test-trace-recorder"}},
        "roles": {"solver": "s", "reflector": "s", "curator": "s"},
    })
    run_experiment(spec, tmp_path / "run")
    seen = {messages: text for messages, text in SEEN}
    store = RunStore(tmp_path / "run")
    attempt = store.query("SELECT id, task_id FROM attempts WHERE phase='practice' ORDER BY id LIMIT 1")[0]
    [solved] = trace(tmp_path / "run", "--attempt", str(attempt["id"]))
    shown = tuple((m["role"], m["content"]) for m in solved["messages"])
    assert shown in seen and solved["response"]["text"] == seen[shown]
    assert solved["role"] == "solver" and attempt["task_id"] in solved["unit"]
    by_task = trace(tmp_path / "run", "--task", attempt["task_id"], "--role", "solver")
    assert solved["id"] in [c["id"] for c in by_task]
    curated = trace(tmp_path / "run", "--role", "curator")
    assert curated, "ACE's curator ran in practice"
    for call in curated:
        shown = tuple((m["role"], m["content"]) for m in call["messages"])
        assert shown in seen and call["response"]["text"] == seen[shown]
        assert "playbook" in call["messages"][-1]["content"].lower()
