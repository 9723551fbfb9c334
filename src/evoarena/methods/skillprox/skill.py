"""A SkillProx skill as knowledge units: parse, ablate, check structure, measure size.

A skill is a mapping {path relative to the skill root: text} holding `SKILL.md` (L1/L2: always loaded) and
`references/<name>.md` files (L3: loaded through pointers in `SKILL.md`). The knowledge units Q(X) are the L2
sections of `SKILL.md` (each `## ` heading with everything up to the next one) and the L3 reference files; the
text before the first `## ` heading (front matter, title) is the preamble and is never a unit. A pointer is a
Markdown link in `SKILL.md` whose target is `references/<name>.md` (optionally written `./references/…`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from evoarena.harness import diff_trees

ROOT = "skills/skillprox"
MAIN = "SKILL.md"
REF_PATH = re.compile(r"^references/[A-Za-z0-9][A-Za-z0-9_-]*\.md$")
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*([^)\s]+)(?:\s+\"[^\"\n]*\")?\s*\)")
_HEADING = re.compile(r"^## (?!#)(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
PREAMBLE = "preamble"

Skill = dict[str, str]


@dataclass(frozen=True)
class Section:
    title: str
    start: int  # index of the heading line in SKILL.md's lines
    end: int  # one past the section's last line

    @property
    def uid(self) -> str:
        return f"L2:{self.title}"


@dataclass(frozen=True)
class Pointer:
    target: str  # normalised link target ("./" and "#anchor" dropped)
    line: int  # index into SKILL.md's lines
    section: str | None  # title of the L2 section holding it; None for the preamble


@dataclass(frozen=True)
class Unit:
    uid: str  # "L2:<section title>" or "L3:<reference path>"
    kind: str  # "L2" or "L3"
    name: str  # section title or reference path
    text: str


def skill_of(tree: Mapping[str, str]) -> Skill:
    """The skill files of a harness tree, keyed relative to the skill root."""
    prefix = ROOT + "/"
    return {p[len(prefix) :]: t for p, t in sorted(tree.items()) if p.startswith(prefix)}


def with_skill(tree: Mapping[str, str], skill: Mapping[str, str]) -> dict[str, str]:
    """`tree` with its skill files replaced by `skill`."""
    out = {p: t for p, t in tree.items() if not p.startswith(ROOT + "/")}
    out.update({f"{ROOT}/{p}": t for p, t in skill.items()})
    return out


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _outside_fences(lines: list[str]) -> list[bool]:
    """Per line: True when it is Markdown text, False inside (or on) a fenced code block's fence."""
    out, fenced = [], False
    for line in lines:
        if _FENCE.match(line):
            out.append(False)
            fenced = not fenced
        else:
            out.append(not fenced)
    return out


def sections(main: str) -> list[Section]:
    """The L2 sections of a `SKILL.md` text, in order (headings inside code fences do not count)."""
    lines = _lines(main)
    text = _outside_fences(lines)
    starts = [(i, m.group(1).strip()) for i, line in enumerate(lines) if text[i] and (m := _HEADING.match(line))]
    return [Section(title, i, starts[k + 1][0] if k + 1 < len(starts) else len(lines))
            for k, (i, title) in enumerate(starts)]


def _target(raw: str) -> str | None:
    """The normalised target if a link points into `references/`, else None (not a pointer)."""
    t = raw.split("#", 1)[0]
    while t.startswith("./"):
        t = t[2:]
    return t if t.startswith("references/") else None


def pointers(main: str) -> list[Pointer]:
    """Every pointer (link into `references/`) of a `SKILL.md` text, outside code fences."""
    lines = _lines(main)
    text = _outside_fences(lines)
    owner: list[str | None] = [None] * len(lines)
    for s in sections(main):
        owner[s.start : s.end] = [s.title] * (s.end - s.start)
    out = []
    for i, line in enumerate(lines):
        if text[i]:
            for m in _LINK.finditer(line):
                target = _target(m.group(2))
                if target is not None:
                    out.append(Pointer(target, i, owner[i]))
    return out


def references(skill: Mapping[str, str]) -> list[str]:
    return sorted(p for p in skill if p != MAIN)


def active_references(skill: Mapping[str, str]) -> list[str]:
    """Reference files reached by a pointer, in order of their first pointer."""
    seen: list[str] = []
    for p in pointers(skill.get(MAIN, "")):
        if p.target in skill and p.target != MAIN and p.target not in seen:
            seen.append(p.target)
    return seen


def units(skill: Mapping[str, str]) -> list[Unit]:
    """Q(X): the L2 sections in order, then the L3 references (pointer order, then any unreferenced ones)."""
    main = skill.get(MAIN, "")
    lines = _lines(main)
    out = [Unit(s.uid, "L2", s.title, "".join(lines[s.start : s.end])) for s in sections(main)]
    active = active_references(skill)
    for path in active + [p for p in references(skill) if p not in active]:
        out.append(Unit(f"L3:{path}", "L3", path, skill[path]))
    return out


def unit_texts(skill: Mapping[str, str]) -> dict[str, str]:
    """{unit id: text} plus the preamble (id `preamble`), for comparing two versions unit by unit."""
    main = skill.get(MAIN, "")
    secs = sections(main)
    lines = _lines(main)
    out = {PREAMBLE: "".join(lines[: secs[0].start] if secs else lines)}
    out.update({u.uid: u.text for u in units(skill)})
    return out


def size(skill: Mapping[str, str]) -> int:
    """G(X): characters of `SKILL.md` plus every active (pointed-to) reference."""
    return len(skill.get(MAIN, "")) + sum(len(skill[p]) for p in active_references(skill))


def char_stats(skill: Mapping[str, str]) -> dict[str, int]:
    """Characters of the main file vs the active references, and unit counts (the paper's Table 4/14)."""
    main = skill.get(MAIN, "")
    refs = sum(len(skill[p]) for p in active_references(skill))
    return {"main_chars": len(main), "reference_chars": refs, "total_chars": len(main) + refs,
            "l2_sections": len(sections(main)), "l3_references": len(active_references(skill))}


def struct_problems(skill: Mapping[str, str]) -> list[str]:
    """Why a skill is structurally invalid (empty when `struct_ok`): a missing or empty SKILL.md, files other than
    SKILL.md and references/<name>.md, dangling pointers (a target that is not an existing reference file),
    duplicate pointers (a reference pointed to more than once), lost references (no pointer), empty references and
    duplicate `## ` headings (section titles identify L2 units)."""
    problems: list[str] = []
    main = skill.get(MAIN)
    if main is None or not main.strip():
        problems.append("SKILL.md is missing or empty")
        main = main or ""
    for path in references(skill):
        if not REF_PATH.match(path):
            problems.append(f"unexpected file {path!r} (allowed: SKILL.md, references/<name>.md)")
        elif not skill[path].strip():
            problems.append(f"empty reference {path}")
    counts: dict[str, int] = {}
    for p in pointers(main):
        counts[p.target] = counts.get(p.target, 0) + 1
        if not REF_PATH.match(p.target) or p.target not in skill:
            problems.append(f"dangling pointer to {p.target} (line {p.line + 1})")
    problems += [f"duplicate pointer to {t} ({n} pointers)" for t, n in counts.items() if n > 1 and t in skill]
    problems += [f"lost reference {p} (no pointer in SKILL.md)" for p in references(skill)
                 if REF_PATH.match(p) and p not in counts]
    titles = [s.title for s in sections(main)]
    problems += [f"duplicate section heading '## {t}'" for t in sorted({t for t in titles if titles.count(t) > 1})]
    problems += ["empty section heading '## '" for t in titles if not t]
    return problems


def struct_ok(skill: Mapping[str, str]) -> bool:
    return not struct_problems(skill)


def _drop_pointer(line: str, target: str) -> str | None:
    """The line without its links to `target` (label kept); None when the line holds no other pointer and so
    is wholly that pointer's line."""
    others = [m for m in _LINK.finditer(line) if (t := _target(m.group(2))) is not None and t != target]
    if not others:
        return None
    return _LINK.sub(lambda m: m.group(1) if _target(m.group(2)) == target else m.group(0), line)


def ablate(skill: Mapping[str, str], uid: str) -> Skill:
    """Remove one unit completely. An L2 section goes with every reference pointed to only from it (those would
    otherwise be lost); an L3 reference goes with every pointer to it (a line holding only that pointer is
    removed, a line with other pointers keeps them and the link's label). The result passes `struct_ok` when
    the input does."""
    out = dict(skill)
    main = out.get(MAIN, "")
    lines = _lines(main)
    if uid.startswith("L2:"):
        title = uid[3:]
        sec = next((s for s in sections(main) if s.title == title), None)
        if sec is None:
            raise KeyError(f"no unit {uid!r}")
        ptrs = pointers(main)
        inside = {p.target for p in ptrs if p.section == title}
        outside = {p.target for p in ptrs if p.section != title}
        out[MAIN] = "".join(lines[: sec.start] + lines[sec.end :])
        for path in inside - outside:
            out.pop(path, None)
        return out
    if uid.startswith("L3:") and uid[3:] in skill and uid[3:] != MAIN:
        path = uid[3:]
        out.pop(path)
        hits = {p.line for p in pointers(main) if p.target == path}
        kept = [_drop_pointer(line, path) if i in hits else line for i, line in enumerate(lines)]
        out[MAIN] = "".join(line for line in kept if line is not None)
        return out
    raise KeyError(f"no unit {uid!r}")


def skill_diff(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """Unified diff of two versions of the skill, file by file."""
    return diff_trees(dict(before), dict(after), "before", "after")


def render(skill: Mapping[str, str]) -> str:
    """The skill's files for a model prompt: SKILL.md first, then each file under a path header."""
    order = [MAIN, *references(skill)] if MAIN in skill else references(skill)
    return "\n".join(f"=== {p} ===\n{skill[p].rstrip()}\n" for p in order)


def read_rendered(block: str) -> Skill:
    """The files `render` wrote into `block` (its inverse; each file ends in one newline), for scripted roles that
    read a skill back from a prompt."""
    parts = re.split(r"^=== (.+?) ===\n", block, flags=re.M)
    return {parts[i]: parts[i + 1].rstrip() + "\n" for i in range(1, len(parts), 2)}
