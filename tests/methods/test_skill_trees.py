"""The built-in methods' `skill_tree`: each one's state, read from a harness tree, as SKILL.md's body and supporting
files (empty when the state is; None for methods whose state is no skill or playbook), and what that state is
called."""

from __future__ import annotations

import pytest

import evoarena.methods  # noqa: F401  (registers the built-in methods)
from evoarena.api.registry import REGISTRY
from evoarena.methods.tf_grpo.method import dump_library


def builtin_skill_tree(method: str, tree: dict[str, str]) -> dict[str, str] | None:
    return REGISTRY.get("method", method).skill_tree(tree)  # type: ignore[no-any-return]

PLAYBOOK = ("## STRATEGIES & INSIGHTS\n[str-00001] helpful=3 harmful=0 :: Read the units first.\n\n"
            "## COMMON MISTAKES\n[com-00002] helpful=0 harmful=1 :: Do not add the totals twice.\n\n## OTHERS\n")

def test_ace_lists_bullets_by_section_and_drops_empty_sections() -> None:
    body = builtin_skill_tree("ace", {"memory/playbook.md": PLAYBOOK})["SKILL.md"]  # type: ignore[index]
    assert "## Strategies & insights\n\n- Read the units first. (helpful 3, harmful 0)" in body
    assert "## Common mistakes\n\n- Do not add the totals twice. (helpful 0, harmful 1)" in body
    assert "## Others" not in body and "[str-00001]" not in body
    assert builtin_skill_tree("ace", {"memory/playbook.md": "## OTHERS\n"}) == {"SKILL.md": ""}

def test_cheatsheet_and_experiences() -> None:
    sheet = builtin_skill_tree("dynamic_cheatsheet", {"memory/cheatsheet.md": "Convert units before adding.\n"})
    assert sheet is not None and sheet["SKILL.md"].endswith("Convert units before adding.\n")
    lib = builtin_skill_tree("tf_grpo", {"memory/experiences.json": dump_library(["Check the sign.", "Round late."])})
    assert lib is not None and "[G0]. Check the sign.\n[G1]. Round late." in lib["SKILL.md"]
    assert builtin_skill_tree("tf_grpo", {}) == {"SKILL.md": ""}

def test_skillprox_keeps_its_pointed_references_and_drops_its_front_matter() -> None:
    tree = {
        "skills/skillprox/SKILL.md": "---\nname: skillprox\ndescription: x\n---\n# Sheets\n\n## Scan\nSee "
                                     "[the example](references/scan.md).\n",
        "skills/skillprox/references/scan.md": "Walk the rows top down.\n",
        "skills/skillprox/references/orphan.md": "never pointed to\n",
    }
    form = builtin_skill_tree("skillprox", tree)
    assert form == {"SKILL.md": "# Sheets\n\n## Scan\nSee [the example](references/scan.md).\n",
                    "references/scan.md": "Walk the rows top down.\n"}

def test_evoskill_shows_every_live_skill_with_its_description() -> None:
    tree = {"skills/unit-check/SKILL.md": "---\nname: unit-check\ndescription: When units differ.\n---\nConvert.\n",
            "skills/sign/SKILL.md": "---\nname: sign\ndescription: Negative results.\n---\nKeep the sign.\n"}
    body = builtin_skill_tree("evoskill", tree)["SKILL.md"]  # type: ignore[index]
    assert "## sign\n\nNegative results.\n\nKeep the sign.\n" in body
    assert "## unit-check\n\nWhen units differ.\n\nConvert.\n" in body and "---" not in body

@pytest.mark.parametrize("method", ["frozen", "reflexion", "bootstrap_fewshot", "history", "gepa", "reasoning_bank"])
def test_other_methods_have_no_skill_form(method: str) -> None:
    assert builtin_skill_tree(method, {"system.md": "x"}) is None

@pytest.mark.parametrize(("method", "kind"), [("ace", "playbook"), ("dynamic_cheatsheet", "cheatsheet"),
                                              ("tf_grpo", "experience library"), ("skillprox", "skill"),
                                              ("evoskill", "skill set"), ("reflexion", "skill")])
def test_skill_kind_names_the_state(method: str, kind: str) -> None:
    assert REGISTRY.get("method", method).skill_kind == kind
