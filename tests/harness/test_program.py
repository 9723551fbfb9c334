"""The harness-program interface check (compiled, never run) and what a program may read."""

from __future__ import annotations

import pytest

from evoarena.harness.program import PROGRAM, is_program, program_files, program_interface

GOOD = "def build_messages(request):\n    return [{'role': 'user', 'content': request['task']}]\n"


@pytest.mark.parametrize(("source", "why"), [
    (GOOD, ""),
    ("def build_messages(*args):\n    return []\n", ""),
    ("def build_messages(request:\n", "does not compile"),
    ("def other(request):\n    return []\n", "defines no top-level function build_messages"),
    ("def build_messages():\n    return []\n", "must take one argument"),
    ("def build_messages(a, b):\n    return []\n", "must take one argument"),
    ("class K:\n    def build_messages(self, r):\n        return []\n", "defines no top-level"),
    ("x = 1\n" * 20_000, "longer than"),
])
def test_interface_check(source: str, why: str) -> None:
    got = program_interface(source)
    assert (got == "") if not why else (why in got)


def test_the_check_never_runs_the_program(tmp_path: object) -> None:
    source = "raise SystemExit('ran')\nimport os\nos._exit(3)\ndef build_messages(r):\n    return []\n"
    assert program_interface(source) == ""  # compiled only: the process is still here to say so


def test_program_files_leave_out_the_program_and_method_state() -> None:
    tree = {PROGRAM: GOOD, "system.md": "s", "memory/notes.md": "n", "memory/meta_harness/summary.jsonl": "secret",
            "harness.toml": "[solver]\n", "skills/a.md": "a"}
    assert is_program(tree) and not is_program({"system.md": "s"})
    assert program_files(tree) == {"system.md": "s", "memory/notes.md": "n", "harness.toml": "[solver]\n",
                                   "skills/a.md": "a"}
