"""The history log: entries typed, each line written as the log has always been (keys in order, non-ASCII kept)."""

from __future__ import annotations

import json

import pytest

from evoarena.harness.state import HarnessStateError
from evoarena.methods.history.method import HISTORY, Entry, read_history


def test_an_entry_line_is_the_logs_own_form_and_reads_back() -> None:
    entry = Entry(task="t1", number=2, output="x = 4 — done", feedback="wrong")
    line = json.dumps({"task": "t1", "number": 2, "output": "x = 4 — done", "feedback": "wrong"},
                      ensure_ascii=False) + "\n"
    assert entry.line() == line
    assert read_history({HISTORY: line + line}) == [entry, entry]


def test_a_malformed_line_is_one_line_naming_the_file_and_line() -> None:
    with pytest.raises(HarnessStateError, match=r"^'memory/history\.jsonl' line 2: not a valid Entry: number"):
        read_history({HISTORY: Entry(task="t", number=1, output="", feedback="").line() + '{"task": "t"}\n'})
