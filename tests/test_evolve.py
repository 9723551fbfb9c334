"""`evoarena.evolve`: one call on a 10-line JSONL file (or a list of dicts) with a scripted player returns the
selected harness, its prompt and scores, and the run directory; a second call resumes with no new model calls."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

import evoarena
from evoarena.api import policy
from evoarena.models import GenParams, Message
from evoarena.spec import SpecError
from evoarena.store import RunStore

LESSON = "Multiply the two numbers; 'times' means multiplication."


@policy("test-evolve-player")
def player(messages: Sequence[Message], params: GenParams) -> str:
    """Adds the two numbers of a task unless its prompt holds the lesson; as reflector, writes the lesson."""
    text = "\n\n".join(m.content for m in messages)
    if text.rstrip().endswith("Reflection:"):
        return LESSON
    a, b = (int(x) for x in re.findall(r"\d+", messages[-1].content.rsplit("What is", 1)[-1])[:2])
    return f"Answer: {a * b if 'Multiply the two numbers' in text else a + b}"


def _rows() -> list[dict[str, object]]:
    return [{"id": f"t{i}", "input": f"What is {i + 2} times {i + 3}?", "answer": (i + 2) * (i + 3)}
            for i in range(10)]


def _calls(run_dir: Path) -> int:
    return len(RunStore(run_dir).query("SELECT id FROM calls"))


def test_evolve_on_a_jsonl_file_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    kwargs = {"method": "reflexion", "model": "scripted:test-evolve-player", "budget": 40, "seed": 1,
              "params": {"grader": "numeric"}, "root": tmp_path / "runs"}
    got = evoarena.evolve(path, **kwargs)  # type: ignore[arg-type]
    assert got.run_dir.parent == tmp_path / "runs" and (got.run_dir / "results.json").is_file()
    assert got.method == "reflexion" and got.cell == "reflexion__scripted__s1" and got.evidence == "mechanism"
    assert got.n_test == 5 and got.test == 1.0 and got.val == 1.0  # the lesson reached the selected harness
    row = got.results.condition("reflexion", "scripted") if got.results else None
    assert row is not None and row.test is not None and row.test.mean == got.test and row.test.n_tasks == 5
    assert LESSON in got.files["memory/reflections.md"] and got.prompt is not None
    assert got.version == RunStore(got.run_dir).cells()[0]["selected_version"]
    rendered = got.prompt.render("What is 9 times 9?")
    assert LESSON in rendered[-1].content and rendered[-1].content.endswith("What is 9 times 9?")
    assert player(rendered, got.prompt.params) == "Answer: 81"
    calls = _calls(got.run_dir)
    assert calls > 0
    again = evoarena.evolve(path, **kwargs)  # type: ignore[arg-type]
    assert again.run_dir == got.run_dir and _calls(got.run_dir) == calls
    assert (again.version, again.test, again.val, again.files) == (got.version, got.test, got.val, got.files)


def test_evolve_on_a_list_of_dicts_writes_one_task_file(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = evoarena.evolve(_rows(), "frozen", "scripted:test-evolve-player", params={"grader": "numeric"}, root=root)
    assert first.test == 0.0 and first.n_test == 5 and first.prompt is not None
    assert first.prompt.render("x")[-1].content == "x"  # frozen: the task as the template renders it, nothing else
    again = evoarena.evolve(_rows(), "frozen", "scripted:test-evolve-player", params={"grader": "numeric"}, root=root)
    assert again.run_dir == first.run_dir and len(list((root / "tasks").iterdir())) == 1


def test_evolve_refuses_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="unknown model 'gpt'"):
        evoarena.evolve(_rows(), "frozen", "gpt", root=tmp_path)
    with pytest.raises(SpecError, match="no such file"):
        evoarena.evolve(tmp_path / "absent.jsonl", "frozen", "scripted:echo", root=tmp_path)
    with pytest.raises(SpecError, match="non-empty list of dicts"):
        evoarena.evolve([], "frozen", "scripted:echo", root=tmp_path)
    assert not (tmp_path / "tasks").exists()


def test_build_spec_puts_named_roles_on_other_models(tmp_path: Path) -> None:
    from evoarena.one_call import build_spec

    spec = build_spec("arith", method="reflexion", model="embedded-small",
                      roles={"reflector": "embedded", "curator": "embedded-small"}, budget={"max_attempts": 9},
                      params={"n_test": 4}, root=tmp_path)
    assert spec.roles == {"solver": "embedded-small", "reflector": "reflector-embedded", "curator": "embedded-small"}
    assert spec.models["embedded-small"].model == "qwen2.5-coder-0.5b-instruct"
    assert spec.models["reflector-embedded"].model == ""  # the shipped default, Qwen2.5-Coder-1.5B-Instruct
    assert spec.budget.max_attempts == 9 and spec.benchmark.model_dump() == {"name": "arith", "params": {"n_test": 4}}
    assert spec.derived_evidence() == "scaled" and [m.name for m in spec.methods] == ["reflexion"]


def test_a_judge_grader_grades_on_the_model_unless_roles_names_another(tmp_path: Path) -> None:
    from evoarena.one_call import build_spec

    rows = _rows()
    judged = build_spec(rows, method="frozen", model="embedded-small", params={"grader": "judge"}, root=tmp_path)
    assert judged.roles == {"solver": "embedded-small", "judge": "embedded-small"}
    other = build_spec(rows, method="frozen", model="embedded-small", roles={"judge": "embedded"},
                       params={"grader": "judge"}, root=tmp_path)
    assert other.roles == {"solver": "embedded-small", "judge": "judge-embedded"}
    assert "judge" not in build_spec(rows, method="frozen", model="embedded-small", root=tmp_path).roles


def test_no_public_name_of_the_package_is_also_a_submodule() -> None:
    """Importing a submodule sets the package attribute of its name, so a public function sharing a module's name
    (`evoarena.evolve`) would turn into that module once anything imports it."""
    import importlib.util

    import evoarena

    assert [n for n in evoarena.__all__ if importlib.util.find_spec(f"evoarena.{n}") is not None] == []


def test_evolve_reports_progress_events_prints_plain_lines_and_quiet_silences_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evoarena import CellProgress

    seen: list[CellProgress] = []
    kwargs = {"params": {"grader": "numeric"}, "root": tmp_path / "runs"}
    got = evoarena.evolve(_rows(), "frozen", "scripted:test-evolve-player", progress=seen.append,
                          **kwargs)  # type: ignore[arg-type]
    assert capsys.readouterr() == ("", "")  # a callback given: nothing printed
    assert all(isinstance(p, CellProgress) and p.cell == got.cell for p in seen)
    assert [p.phase for p in seen][0] == "practice" and seen[-1].phase == "done" and seen[-1].done == seen[-1].total
    assert seen[-1].calls == _calls(got.run_dir)
    evoarena.evolve(_rows(), "frozen", "scripted:test-evolve-player", quiet=True, **kwargs)  # type: ignore[arg-type]
    assert capsys.readouterr() == ("", "")
    evoarena.evolve(_rows(), "frozen", "scripted:test-evolve-player", **kwargs)  # type: ignore[arg-type]
    printed = capsys.readouterr()
    lines = printed.err.splitlines()
    assert printed.out == "" and lines[0].startswith(f"{got.cell}  practice  0/") and "eta " in lines[0]
    assert lines[-1].startswith(f"{got.cell}  done  ") and len(lines) == len(set(lines))
