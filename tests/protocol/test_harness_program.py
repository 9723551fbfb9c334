"""Harness programs run in the sandbox on each task: their messages are checked, their failures are the harness's
(a parse error, no model call), and what they cannot do there is tried (attack tests)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evoarena.api import TaskView
from evoarena.harness.program import PROGRAM
from evoarena.protocol.solve.harness_program import HarnessProgramError, check_messages, program_messages

ECHO = """
import json
def build_messages(request):
    print("a program's own print goes to stderr")
    notes = request["files"].get("memory/notes.md", "")
    return [{"role": "system", "content": request["files"]["system.md"] + "|" + notes},
            {"role": "user", "content": request["context"] + "|" + request["task"]}]
"""


def tree(source: str, **files: str) -> dict[str, str]:
    return {PROGRAM: textwrap.dedent(source), "system.md": "be brief", **files}


def test_the_program_builds_the_messages_from_task_context_and_files() -> None:
    msgs = program_messages(tree(ECHO, **{"memory/notes.md": "n1", "memory/state/x.json": "{}"}), "2+2?", "ctx")
    assert [(m.role, m.content) for m in msgs] == [("system", "be brief|n1"), ("user", "ctx|2+2?")]


@pytest.mark.parametrize(("source", "why"), [
    ("def build_messages(r):\n    raise KeyError('nope')\n", "KeyError: 'nope'"),
    ("def build_messages(r):\n    while True: pass\n", "limit"),
    ("def build_messages(r):\n    return 'hi'\n", "non-empty list"),
    ("def build_messages(r):\n    return [{'role': 'system', 'content': 's'}]\n", "last message must be the user's"),
    ("def build_messages(r):\n    return [{'role': 'tool', 'content': 's'}]\n", "role must be"),
    ("def build_messages(r):\n    return [{'role': 'user', 'content': 's', 'x': 1}]\n", "exactly `role` and `content`"),
    ("import sys\ndef build_messages(r):\n    sys.exit(0)\n", "wrote no messages"),
    ("def build_messages(r):\n    return [{'role': 'user', 'content': float('nan')}]\n", "role must be"),
])
def test_failures_are_one_line_errors(source: str, why: str) -> None:
    with pytest.raises(HarnessProgramError) as info:
        program_messages(tree(source), "t", "")
    assert why in str(info.value) and "\n" not in str(info.value)


def test_check_messages_caps() -> None:
    with pytest.raises(HarnessProgramError, match="at most"):
        check_messages([{"role": "user", "content": "x"}] * 100)
    with pytest.raises(HarnessProgramError, match="characters"):
        check_messages([{"role": "user", "content": "x" * 300_000}])


def test_attack_a_program_cannot_reach_the_host(tmp_path: Path) -> None:
    """The run store, the test split and anything else on the host are out of reach; writes stay in the sandbox;
    the network is off."""
    secret = tmp_path / "run.sqlite"
    secret.write_text("TEST SPLIT ANSWERS")
    marker = tmp_path / "written-by-the-program"
    source = f"""
    import json, os, socket
    def attempt(f):
        try:
            return repr(f())
        except Exception as e:
            return "refused: " + type(e).__name__
    def build_messages(request):
        seen = {{
            "read": attempt(lambda: open({str(secret)!r}).read()),
            "write": attempt(lambda: open({str(marker)!r}, "w").write("x")),
            "net": attempt(lambda: socket.create_connection(("127.0.0.1", 22), timeout=1)),
            "cwd": sorted(os.listdir(".")),
        }}
        return [{{"role": "user", "content": json.dumps(seen)}}]
    """
    seen = json.loads(program_messages(tree(source), "t", "")[0].content)
    assert "TEST SPLIT ANSWERS" not in seen["read"] and seen["read"].startswith("refused")
    assert not marker.exists()
    assert seen["net"].startswith("refused")
    assert "run.sqlite" not in seen["cwd"] and set(seen["cwd"]) <= {"harness.py", "main.py", "__pycache__"}


def test_a_failing_program_is_a_parse_error_without_a_model_call() -> None:
    from evoarena.benchmarks.arith import ArithBenchmark
    from evoarena.methods.frozen import Frozen
    from evoarena.protocol.solve.solve import solve

    class NoCalls:
        def complete(self, *a, **k):  # type: ignore[no-untyped-def]
            raise AssertionError("a failing harness program must not reach the model")

    task = TaskView("t1", "train", "t1", "What is 2 + 2?")
    attempt = solve(Frozen(), ArithBenchmark(), tree("def build_messages(r):\n    raise ValueError('bad')\n"), task,
                    NoCalls())  # type: ignore[arg-type]
    assert attempt.answer is None and attempt.error is None
    assert attempt.parse_error is not None and "ValueError: bad" in attempt.parse_error
