"""SkillProx's skill structure, patch format and plan helpers, without a model (evidence: mechanism)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from evoarena.methods.skillprox.method import schedule
from evoarena.methods.skillprox.patch import Patch, locality_problems, parse_patch
from evoarena.methods.skillprox.prox import candidates, overlaps
from evoarena.methods.skillprox.skill import (
    ablate,
    char_stats,
    pointers,
    sections,
    size,
    struct_ok,
    struct_problems,
    units,
)
from evoarena.methods.skillprox.state import UnitAudit
from evoarena.protocol.catalog import build_method

MAIN = """---
name: s
description: d
---
# Skill

Intro.

## Dates
Normalise dates first.
- [Date formats](references/dates.md): read when a column holds dates

## Lookups
Use exact matches.
See [lookups](./references/lookups.md#top) and [dates again](references/dates-extra.md).

```
## not a heading
[not a pointer](references/ghost.md)
```

## Checks
Recalculate.
"""
SKILL = {
    "SKILL.md": MAIN,
    "references/dates.md": "ISO 8601.\n",
    "references/lookups.md": "INDEX/MATCH.\n",
    "references/dates-extra.md": "Excel serials.\n",
}


def pointer_targets(skill: dict[str, str]) -> list[str]:
    return [p.target for p in pointers(skill["SKILL.md"])]


def test_parse_units_sections_and_pointers() -> None:
    assert [s.title for s in sections(MAIN)] == ["Dates", "Lookups", "Checks"]  # fenced heading ignored
    assert [(p.target, p.section) for p in pointers(MAIN)] == [
        ("references/dates.md", "Dates"), ("references/lookups.md", "Lookups"),
        ("references/dates-extra.md", "Lookups")]
    assert [u.uid for u in units(SKILL)] == ["L2:Dates", "L2:Lookups", "L2:Checks", "L3:references/dates.md",
                                             "L3:references/lookups.md", "L3:references/dates-extra.md"]
    assert struct_ok(SKILL)
    assert size(SKILL) == len(MAIN) + len("ISO 8601.\n") + len("INDEX/MATCH.\n") + len("Excel serials.\n")
    stats = char_stats(SKILL)
    assert stats["main_chars"] == len(MAIN) and stats["l2_sections"] == 3 and stats["l3_references"] == 3


@pytest.mark.parametrize("uid", [u.uid for u in units(SKILL)])
def test_ablate_removes_the_unit_completely_and_leaves_no_dangling_pointer(uid: str) -> None:
    out = ablate(SKILL, uid)
    assert struct_ok(out), struct_problems(out)
    assert uid not in {u.uid for u in units(out)}
    assert all(t in out for t in pointer_targets(out))
    assert size(out) < size(SKILL)


def test_ablate_details() -> None:
    # an L3 unit: the file and its pointer line go; a line with another pointer keeps it and the label
    out = ablate(SKILL, "L3:references/lookups.md")
    assert "references/lookups.md" not in out and "lookups.md" not in out["SKILL.md"]
    assert "See lookups and [dates again](references/dates-extra.md)." in out["SKILL.md"]
    out = ablate(SKILL, "L3:references/dates.md")
    assert "Date formats" not in out["SKILL.md"] and "Normalise dates first." in out["SKILL.md"]
    # an L2 unit takes the references only it points to
    out = ablate(SKILL, "L2:Lookups")
    assert set(out) == {"SKILL.md", "references/dates.md"} and "## Lookups" not in out["SKILL.md"]
    with pytest.raises(KeyError):
        ablate(SKILL, "L2:Nope")


def test_struct_ok_catches_dangling_duplicate_and_lost() -> None:
    dangling = {**SKILL, "SKILL.md": MAIN + "- [x](references/missing.md)\n"}
    assert any("dangling pointer to references/missing.md" in p for p in struct_problems(dangling))
    bad_form = {**SKILL, "SKILL.md": MAIN + "- [x](references/../system.md)\n"}
    assert any("dangling pointer" in p for p in struct_problems(bad_form))
    duplicate = {**SKILL, "SKILL.md": MAIN + "- [again](references/dates.md)\n"}
    assert struct_problems(duplicate) == ["duplicate pointer to references/dates.md (2 pointers)"]
    lost = {**SKILL, "references/orphan.md": "Nobody points here.\n"}
    assert struct_problems(lost) == ["lost reference references/orphan.md (no pointer in SKILL.md)"]
    heading = {**SKILL, "SKILL.md": MAIN + "\n## Checks\nAgain.\n"}
    assert struct_problems(heading) == ["duplicate section heading '## Checks'"]
    assert struct_problems({"references/a.md": "x"})[0] == "SKILL.md is missing or empty"
    assert any("unexpected file" in p for p in struct_problems({**SKILL, "scripts/run.py": "x"}))


def patch(files: dict[str, Any], **extra: str) -> str:
    return "Here:\n```json\n" + json.dumps({"files": files, "summary": "s", **extra}) + "\n```"


def test_parse_patch_is_strict_and_stays_in_the_skill() -> None:
    ok = parse_patch(patch({"references/dates.md": "YYYY-MM-DD", "references/lookups.md": None}), SKILL)
    assert isinstance(ok, Patch)
    assert ok.skill["references/dates.md"] == "YYYY-MM-DD\n" and "references/lookups.md" not in ok.skill
    assert ok.written == ("references/dates.md",) and ok.deleted == ("references/lookups.md",) and ok.writes == 2
    for path in ("../system.md", "/etc/passwd", "references/../../x.md", "references/sub/x.md", "notes.md",
                 "references/x.txt"):
        assert "outside the skill" in str(parse_patch(patch({path: "x"}), SKILL))
    assert parse_patch(patch({"SKILL.md": None}), SKILL) == "SKILL.md cannot be deleted"
    assert parse_patch(patch({"SKILL.md": MAIN}), SKILL) == "the patch changes nothing"
    assert "non-empty" in str(parse_patch(patch({"SKILL.md": "  "}), SKILL))
    assert parse_patch("no json", SKILL) == "no JSON object in the reply"
    assert "summary" in str(parse_patch(json.dumps({"files": {"SKILL.md": "x"}}), SKILL))
    assert "'action' must be a string" in str(parse_patch(patch({"SKILL.md": "x"}), SKILL, extra=("action",)))
    shrink = parse_patch(patch({"SKILL.md": "x"}, action="delete", receiver=""), SKILL, extra=("action", "receiver"))
    assert isinstance(shrink, Patch) and shrink.extra == {"action": "delete", "receiver": ""}


def test_locality_allows_the_target_and_one_receiver() -> None:
    target = "L2:Checks"
    plain = ablate(SKILL, target)
    assert locality_problems(SKILL, plain, target) == []
    merged = {**plain, "SKILL.md": plain["SKILL.md"].replace("Use exact matches.", "Use exact matches. Recalc.")}
    assert locality_problems(SKILL, merged, target) == []
    two = {**merged, "SKILL.md": merged["SKILL.md"].replace("Normalise dates first.", "Dates.")}
    assert any("at most one" in p for p in locality_problems(SKILL, two, target))
    demoted = {**merged, "references/checks.md": "Recalculate.\n",
               "SKILL.md": merged["SKILL.md"].replace("Recalc.", "Recalc.\n- [Checks](references/checks.md)")}
    assert locality_problems(SKILL, demoted, target) == []
    assert any("still there" in p for p in locality_problems(SKILL, SKILL, target))
    # removing the last section leaves the one before it at the end of the file: its lost blank line is no edit
    into_dates = plain["SKILL.md"].replace("Normalise dates first.", "Normalise dates first. Recalc.")
    assert locality_problems(SKILL, {**plain, "SKILL.md": into_dates.rstrip() + "\n"}, target) == []
    assert any("at most one" in p for p in locality_problems(SKILL, {**two, "SKILL.md": two["SKILL.md"].rstrip()},
                                                             target))
    # an L3 target cannot be "demoted" into a new reference
    moved = {**ablate(SKILL, "L3:references/lookups.md"), "references/lk.md": "INDEX/MATCH.\n"}
    moved["SKILL.md"] = moved["SKILL.md"].replace("Use exact matches.", "Use exact matches. [lk](references/lk.md)")
    assert any("adds L3:references/lk.md" in p for p in locality_problems(SKILL, moved, "L3:references/lookups.md"))


def test_candidates_are_below_tau_in_lexicographic_order() -> None:
    audit = [UnitAudit(uid=uid, kind="L2", name=uid, chars=1, H=0.0, C=0.0, u_cell=c, u_hard=h)
             for uid, c, h in (("a", -0.1, 0.0), ("b", -0.2, 0.1), ("c", -0.1, -0.05), ("d", -0.001, -1.0),
                               ("e", 0.3, -1.0))]
    assert [a.uid for a in candidates(audit, -0.001)] == ["b", "c", "a"]
    assert [a.uid for a in candidates(audit, 0.0)] == ["b", "c", "a", "d"]


def test_overlap_hint_ranks_the_most_similar_unit_first() -> None:
    us = units({**SKILL, "SKILL.md": MAIN + "\n## Dates again\nNormalise dates first, always.\n"})
    target = next(u for u in us if u.uid == "L2:Dates again")
    assert overlaps(target, us)[0]["uid"] == "L2:Dates"


def test_schedule_partitions_then_cycles() -> None:
    ids = [f"t{i}" for i in range(40)]
    batches = schedule(ids, 4, 10, random.Random(0))
    assert len(batches) == 10 and sorted(sum(batches, [])) == sorted(ids)  # 40 tasks, batch 4: one pass
    short = schedule(ids[:6], 4, 5, random.Random(0))
    assert [len(b) for b in short] == [4, 2, 4, 2, 4]
    assert schedule([], 4, 10, random.Random(0)) == []


def test_params_are_checked() -> None:
    bads: list[dict[str, object]] = [
        {"forward": "sideways"}, {"prox": "yes"}, {"batch_size": 0}, {"tau": "low"},
        {"initial_skill": {"SKILL.md": "x\n- [a](references/a.md)\n"}}, {"nope": 1},
    ]
    for bad in bads:
        with pytest.raises(ValueError):
            build_method("skillprox", bad)
    m = build_method("skillprox", {"initial_skill": SKILL})
    assert m.roles == ("solver", "diagnoser", "patcher", "shrinker")
