"""A benchmark names its schedule by class; the older string attribute is mapped to the class it named."""

from __future__ import annotations

from typing import Any

import pytest

from evoarena.api import Benchmark, Curriculum, Feedback, Parsed, PracticeSelectTest, Task


class _Base(Benchmark):
    name = "tiny"

    def generate(self) -> list[Task]:
        return []

    def parse(self, text: str) -> Parsed:
        return Parsed(text)

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        raise NotImplementedError

    def system_prompt(self) -> str:
        return ""


def test_a_benchmark_runs_practice_select_test_unless_it_names_another() -> None:
    class Staged(_Base):
        schedule = Curriculum
        defaults = {"max_attempts": 3}  # the curriculum's attempts per stage (`Curriculum.needs`)

    assert _Base.schedule is PracticeSelectTest and Staged.schedule is Curriculum
    assert Staged().info() == {"name": "tiny", "protocol": "curriculum"}  # what results.json records


def test_the_older_protocol_string_still_names_its_schedule() -> None:
    class Legacy(_Base):
        protocol = "curriculum"
        defaults = {"max_attempts": 3}

    assert Legacy.schedule is Curriculum


def test_an_unknown_protocol_string_is_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match=r"unknown protocol 'staged'.*schedule = Curriculum"):
        class Bad(_Base):
            protocol: Any = "staged"
