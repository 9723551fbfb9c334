"""SKILL.md's front matter: Agent Skills' name rule, a description that names method, benchmark (and task file),
run, version and scores within 1024 characters; refusals for methods with no skill and for empty state; the skill of
a scripted CLR run of Dynamic Cheatsheet, EvoSkill and TF-GRPO."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evoarena.methods import Ace, Frozen
from evoarena.models import ResponseCache
from evoarena.protocol.export.bundle import ExportError, export
from evoarena.protocol.export.skill_folder import SkillExportError, description, skill_files, skill_name
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec

ABOUT: dict[str, Any] = {
    "run": "units", "cell": "ace__m__s0", "condition": "ace", "method": "ace", "benchmark": "files",
    "tasks_file": "units.jsonl", "task_set": "units", "version": "0123456789abcdef", "version_is": "selected",
    "evidence": "scaled",
    "val": {"mean": 0.5, "n": 4}, "test": {"mean": 0.75, "n": 1},
}
PLAYBOOK = "## OTHERS\n[oth-00001] helpful=1 harmful=0 :: Convert hours to minutes first.\n"


@pytest.mark.parametrize(("bench", "cond", "name"), [
    ("clr", "ace-self", "clr-ace-self"), ("files", "ACE (lesson)", "files-ace-lesson"), ("x", "--", "x"),
    ("a" * 70, "b", "a" * 64),
])
def test_skill_name_follows_the_agent_skills_rule(bench: str, cond: str, name: str) -> None:
    assert skill_name(bench, cond) == name


def test_description_names_what_where_and_how_well() -> None:
    text = description(ABOUT, "playbook", "Convert units. Reply with a number.")
    assert text.startswith("Playbook evolved by ace on the tasks of units.jsonl (the files benchmark) for tasks where "
                           "the instruction is: Convert units. Reply with a number. Use it")
    assert "version 0123456789ab, the selected one; val 0.50 on 4 tasks, test 0.75 on 1 task; evidence: scaled" in text
    assert len(description(ABOUT, "playbook", "x" * 5000)) == 1024


def test_skill_files_of_an_ace_tree() -> None:
    files = skill_files(ABOUT, Ace, {"system.md": "Convert units.\n", "memory/playbook.md": PLAYBOOK}).files
    head, _, body = files["SKILL.md"][4:].partition("\n---\n")
    assert yaml.safe_load(head)["name"] == "units-ace"  # named from the task set, not the benchmark
    assert "- Convert hours to minutes first. (helpful 1, harmful 0)" in body and body.endswith("Convert units.\n")
    assert sorted(files) == ["SKILL.md", "evoarena-export.json"]


def test_refusals() -> None:
    with pytest.raises(SkillExportError, match="frozen keeps no skill or playbook"):
        skill_files({**ABOUT, "method": "frozen"}, Frozen, {"system.md": "x"})
    with pytest.raises(SkillExportError, match="ace's playbook is empty in version 0123456789ab"):
        skill_files(ABOUT, Ace, {"system.md": "x", "memory/playbook.md": "## OTHERS\n"})


@pytest.fixture(scope="module")
def clr_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("skills") / "run"
    run_experiment(parse_spec({
        "name": "skills-clr", "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 2}},
        "methods": [{"name": "dynamic_cheatsheet"}, {"name": "evoskill"}, {"name": "tf_grpo"}],
        "models": {"s": {"backend": "scripted", "model": "clr-student"}}, "roles": {"solver": "s"},
    }), run_dir, cache=ResponseCache(run_dir.parent / "responses.sqlite"))
    return run_dir


@pytest.mark.parametrize(("method", "kind", "state"), [
    ("dynamic_cheatsheet", "Cheatsheet", "memory/cheatsheet.md"),
    ("evoskill", "Skill set", "skills/"),
    ("tf_grpo", "Experience library", "memory/experiences.json"),
])
def test_skill_export_of_a_run(clr_run: Path, tmp_path: Path, method: str, kind: str, state: str) -> None:
    source = export(clr_run, tmp_path / "sk", "skill", cell=method, version="final")
    assert any(p.startswith(state) for p in source.tree), "the scripted run evolved some state"
    head, _, body = (tmp_path / "sk" / "SKILL.md").read_text()[4:].partition("\n---\n")
    front = yaml.safe_load(head)
    assert front["name"] == f"clr-{method.replace('_', '-')}"
    assert front["description"].startswith(f"{kind} evolved by {method} on the clr benchmark")
    assert "belongs to" in body  # what the scripted clr-student learned: which values a label holds


def test_a_skill_needs_no_benchmark_but_a_prompt_does(clr_run: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from evoarena.benchmarks.clr.benchmark import ClrBenchmark

    def gone(self: object, **params: object) -> None:
        raise ValueError("benchmark.params.path: no such file 'tasks.jsonl'")

    monkeypatch.setattr(ClrBenchmark, "__init__", gone)  # as if a files run's task file had moved away
    export(clr_run, tmp_path / "sk", "skill", cell="dynamic", version="final")
    assert (tmp_path / "sk" / "SKILL.md").is_file()
    with pytest.raises(ExportError, match="cannot rebuild the run's method or benchmark: benchmark.params.path"):
        export(clr_run, tmp_path / "p", "prompt", cell="dynamic", version="final")
    assert not (tmp_path / "p").exists()
