"""An exported skill is named from the task set and the condition, and a playbook of repeated bullets exports each
lesson once (saying how many were dropped), or is refused when no bullet is left."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evoarena.protocol import catalog
from evoarena.protocol.export.bullets import bullet_key, deduplicate
from evoarena.protocol.export.skill_folder import SkillExportError, skill_files, skill_name

ABOUT: dict[str, Any] = {
    "run": "units", "cell": "ace__s__s0", "condition": "ace", "method": "ace", "seed": 0, "benchmark": "files",
    "tasks_file": "units.jsonl", "task_set": "units", "version": "c94c0354e8ea77", "version_is": "selected",
    "val": {"mean": 0.75, "n": 4}, "test": {"mean": 0.5, "n": 10}, "evidence": "mechanism",
}


def playbook(*bullets: tuple[str, str, int]) -> dict[str, str]:
    """An ACE harness tree whose playbook holds (section, content, helpful) bullets."""
    sections: dict[str, list[str]] = {}
    for n, (section, content, helpful) in enumerate(bullets, 1):
        sections.setdefault(section, []).append(f"[ctx-{n:05d}] helpful={helpful} harmful=0 :: {content}")
    text = "\n\n".join(f"## {s.upper()}\n" + "\n".join(lines) for s, lines in sections.items()) + "\n"
    return {"system.md": "Convert the units.\n", "memory/playbook.md": text}


def test_the_skill_is_named_from_the_task_set_and_condition() -> None:
    tree = playbook(("strategies & insights", "Sixty to a minute.", 0))
    folder = skill_files(ABOUT, catalog.method_class("ace"), tree)
    head = folder.files["SKILL.md"].split("\n---\n", 1)[0]
    assert "name: units-ace\n" in head and "files-ace" not in head
    assert "on the tasks of units.jsonl (the files benchmark)" in head
    assert skill_name("My Tasks v2", "ace-big") == "my-tasks-v2-ace-big"


def test_repeated_bullets_are_exported_once() -> None:
    tree = playbook(("strategies & insights", "Sixty seconds to a minute.", 3),
                    ("strategies & insights", "sixty seconds  to a minute", 1),
                    ("common mistakes", "Sixty seconds to a minute.", 0), ("common mistakes", "Check the units.", 0),
                    ("strategies & insights", "Twenty-four hours to a day.", 2))
    folder = skill_files(ABOUT, catalog.method_class("ace"), tree)
    body = folder.files["SKILL.md"]
    assert body.count("ixty seconds") == 1 and "- Sixty seconds to a minute. (helpful 3, harmful 0)" in body
    assert "Check the units." in body and "Twenty-four hours to a day." in body
    assert folder.notes() == ("2 repeated bullets dropped",)
    about = json.loads(folder.files["evoarena-export.json"])
    assert about["bullets_dropped"] == {"repeated": 2, "empty": 0}


def test_a_playbook_with_no_bullet_left_is_refused() -> None:
    tree = {"system.md": "x", "skills/s/SKILL.md": ""}
    body = "# Cheatsheet\n\n- ** Count: 2\n- (helpful 1, harmful 0)\n"
    with pytest.raises(SkillExportError, match=r"has no bullet left once 0 repeated and 2 empty ones are dropped"):
        skill_files(ABOUT, catalog.method_class("dynamic_cheatsheet"), {**tree, "memory/cheatsheet.md": body})


def test_deduplicate_keeps_the_first_and_its_continuation_lines() -> None:
    text = ("# Notes\n\n## A\n\n- Keep this.\n  more of it\n- keep THIS (helpful 9, harmful 1)\n  its tail\n"
            "- Other.\n\n## B\n\n- Other\n- ** Count: 4\n\n## C\n\nA paragraph.\n- other.\n")
    out = deduplicate(text)
    assert (out.repeated, out.empty, out.kept) == (3, 1, 2)
    assert out.text == "# Notes\n\n## A\n\n- Keep this.\n  more of it\n- Other.\n\n## C\n\nA paragraph.\n"
    assert bullet_key("Sixty to a minute. ** Count: 3") == bullet_key("sixty to a  minute") != bullet_key("sixty")
