"""The strict file-patch format the patcher and the shrinker reply in, and the shrinker's locality rule.

A patch is one JSON object: {"files": {"SKILL.md": "<full new text>", "references/<name>.md": "<text>" | null},
"summary": "<one line>"} (the shrinker adds "action" and "receiver"). Listed files are replaced in full (null
deletes a reference); unlisted files stay. Paths are relative to the skill root and must be `SKILL.md` or
`references/<name>.md`, so a patch cannot reach outside the skill; the harness write API refuses anything
outside the harness as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.skillprox.skill import MAIN, REF_PATH, Skill, ablate, unit_texts


@dataclass(frozen=True)
class Patch:
    skill: Skill  # the skill after the patch
    summary: str
    written: tuple[str, ...]  # files created or replaced
    deleted: tuple[str, ...]
    extra: dict[str, str] = field(default_factory=dict)  # the shrinker's "action" / "receiver"

    @property
    def writes(self) -> int:
        """File writes of this patch (writes and deletions): the paper's "write calls"."""
        return len(self.written) + len(self.deleted)

    @property
    def chars_written(self) -> int:
        return sum(len(self.skill[p]) for p in self.written)


def json_object(raw: str) -> dict[str, object] | None:
    """The first JSON object in a reply: the whole text, a fenced block, or the span from the first { to the last }."""
    cands = whole_and_fenced(raw)
    start, end = raw.find("{"), raw.rfind("}")
    if 0 <= start < end:
        cands.append(raw[start : end + 1])
    value = first_json(cands, dict)
    return None if value is None else dict(value)


def _clean(text: str) -> str:
    return text.replace("\r\n", "\n").rstrip() + "\n"


def parse_patch(raw: str, current: Mapping[str, str], extra: tuple[str, ...] = ()) -> Patch | str:
    """The patched skill, or why the reply is refused. `extra` names further required string fields.
    Unknown top-level keys are ignored; everything that is adopted is checked."""
    obj = json_object(raw)
    if obj is None:
        return "no JSON object in the reply"
    files, summary = obj.get("files"), obj.get("summary")
    if not isinstance(files, dict) or not files:
        return "'files' must be a non-empty object {path: text or null}"
    if not isinstance(summary, str) or not summary.strip():
        return "'summary' must be a non-empty string"
    values: dict[str, str] = {}
    for key in extra:
        v = obj.get(key)
        if not isinstance(v, str):
            return f"{key!r} must be a string"
        values[key] = v.strip()
    skill = dict(current)
    written, deleted = [], []
    for path, text in files.items():
        if path != MAIN and not REF_PATH.match(path):
            return f"path {path!r} is outside the skill (allowed: SKILL.md, references/<name>.md)"
        if text is None:
            if path == MAIN:
                return "SKILL.md cannot be deleted"
            if path in skill:
                del skill[path]
                deleted.append(path)
            continue
        if not isinstance(text, str) or not text.strip():
            return f"{path}: text must be a non-empty string (null deletes a reference)"
        if skill.get(path) != _clean(text):
            skill[path] = _clean(text)
            written.append(path)
    if dict(skill) == dict(current):
        return "the patch changes nothing"
    return Patch(skill, summary.strip(), tuple(written), tuple(deleted), values)


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, str | None]:
    """The `files` of a patch that turns `before` into `after`: each changed file's new text, None for a deleted one."""
    return {p: after.get(p) for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)}


def _layout_free(text: str | None) -> str | None:
    """A unit's text without trailing spaces and blank lines, which carry no content (a unit that now ends the
    file loses its blank separator line)."""
    return None if text is None else "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def locality_problems(before: Mapping[str, str], after: Mapping[str, str], target: str) -> list[str]:
    """The shrinker may touch only its target and at most one receiving unit (the preamble counts as one). The
    target must be gone; compared with plain removal (`ablate`), at most one other existing unit may differ, and
    one new reference may appear only when an L2 target is demoted to L3."""
    base = unit_texts(ablate(before, target))
    new = unit_texts(after)
    problems = []
    if target in new:
        problems.append(f"the target {target} is still there")
    changed = sorted(u for u in base if u != target and _layout_free(new.get(u)) != _layout_free(base[u]))
    added = sorted(u for u in new if u not in base and u != target)
    if len(changed) > 1:
        problems.append(f"touches {len(changed)} units besides the target ({', '.join(changed)}); at most one")
    demotion = target.startswith("L2:") and len(added) == 1 and added[0].startswith("L3:")
    if added and not demotion:
        problems.append(f"adds {', '.join(added)} (only an L2 target may be demoted into one new reference)")
    return problems
