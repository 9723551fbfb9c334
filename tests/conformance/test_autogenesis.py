"""Autogenesis against its released code (DVampire/Autogenesis @6a8c122, harness-systems-as-released.md
§ Autogenesis, lines 77-83) and the seed's digest (seeds-digest-batch2.md §11, lines 106-114). Each test names the
line it checks."""

from __future__ import annotations

from types import SimpleNamespace

from evoarena.methods.autogenesis.method import Autogenesis
from evoarena.methods.autogenesis.registry import STATUSES, Registry
from evoarena.methods.prompting import render_prompt


def test_the_optimiser_never_rolls_back_by_default() -> None:
    """harness-systems-as-released.md l.82-83: "Commit/rollback exist as APIs but the optimizer never rolls back";
    the paper's Accept test (seeds-digest-batch2.md §11 l.109, "rollback possible") is `rollback: gated`."""
    p = Autogenesis.Params()
    assert p.rollback == "never"
    assert list(p.learnable) == ["prompt", "memory"]


def test_versions_have_the_three_released_statuses_and_patch_bump_from_1_0_0() -> None:
    """harness-systems-as-released.md l.79-80: "history {current_version, versions{version → status
    ACTIVE|DEPRECATED|ARCHIVED ...}}; patch-bump versions from 1.0.0; restore(name, version)"."""
    assert STATUSES == ("ACTIVE", "DEPRECATED", "ARCHIVED")
    reg = Registry()
    res = reg.register("memory", "memory", "memory/notes.md", "v0", require_grad=True, step=0)
    assert res.current == "1.0.0"
    assert reg.set_version("memory", "v1", step=1, description="d") == "1.0.1"
    assert reg.set_version("memory", "v2", step=2, description="d") == "1.0.2"


def test_a_failed_change_restores_the_original_text() -> None:
    """seeds-digest-batch2.md §11 l.110 (the seed's stage 1): "allow modification of 1; deliberately fail once and
    confirm the original state is restored"."""
    reg = Registry()
    reg.register("prompt", "prompt", "system.md", "ORIGINAL", require_grad=True, step=0)
    reg.set_version("prompt", "BROKEN", step=1, description="bad")
    reg.restore("prompt", "1.0.0", archive_current=True)
    res = reg.resources["prompt"]
    assert res.text() == "ORIGINAL" and res.get("1.0.1").status == "ARCHIVED"


def test_the_reflection_shows_the_learnability_mask_per_resource_and_section() -> None:
    """harness-systems-as-released.md l.80-81: "Learnability mask `require_grad` per resource and per prompt
    sub-variable"; l.82: the optimizer step starts with reflect."""
    resources = [SimpleNamespace(name="prompt", type="prompt", learnable=True, variables={"role": False,
                                                                                        "rules": True}, text="P"),
                 SimpleNamespace(name="memory", type="memory", learnable=False, variables={}, text="M")]
    examples = [SimpleNamespace(passed=False, task="T", output="O", feedback="F")]
    text = render_prompt("evoarena.methods.autogenesis", "reflect", resources=resources, examples=examples)
    assert "----- prompt (prompt, learnable; sections: role (frozen), rules (learnable)) -----" in text
    assert "----- memory (memory, frozen) -----" in text
    assert "## Task 1: failed" in text and "choose ONE learnable resource" in text
