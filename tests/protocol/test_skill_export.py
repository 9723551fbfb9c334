"""SKILL.md's front matter: Agent Skills' name rule, a description that names method, benchmark (and task file),
run, version and scores within 1024 characters; refusals for methods with no skill and for empty state."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from evoarena.methods import Ace, Frozen
from evoarena.protocol.skill_export import SkillExportError, description, skill_files, skill_name

ABOUT: dict[str, Any] = {
    "run": "units", "cell": "ace__m__s0", "condition": "ace", "method": "ace", "benchmark": "files",
    "tasks_file": "units.jsonl", "version": "0123456789abcdef", "version_is": "selected", "evidence": "scaled",
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
    assert text.startswith("Playbook evolved by ace on the files benchmark (units.jsonl) for tasks where the "
                           "instruction is: Convert units. Reply with a number. Use it")
    assert "version 0123456789ab, the selected one; val 0.50 on 4 tasks, test 0.75 on 1 task; evidence: scaled" in text
    assert len(description(ABOUT, "playbook", "x" * 5000)) == 1024


def test_skill_files_of_an_ace_tree() -> None:
    files = skill_files(ABOUT, Ace, {"system.md": "Convert units.\n", "memory/playbook.md": PLAYBOOK})
    head, _, body = files["SKILL.md"][4:].partition("\n---\n")
    assert yaml.safe_load(head)["name"] == "files-ace"
    assert "- Convert hours to minutes first. (helpful 1, harmful 0)" in body and body.endswith("Convert units.\n")
    assert sorted(files) == ["SKILL.md", "evoarena-export.json"]


def test_refusals() -> None:
    with pytest.raises(SkillExportError, match="frozen keeps no skill or playbook"):
        skill_files({**ABOUT, "method": "frozen"}, Frozen, {"system.md": "x"})
    with pytest.raises(SkillExportError, match="ace's playbook is empty in version 0123456789ab"):
        skill_files(ABOUT, Ace, {"system.md": "x", "memory/playbook.md": "## OTHERS\n"})
