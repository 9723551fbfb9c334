"""ACE's playbook: parse and render `## section` headers with `[slug-00042] helpful=H harmful=K :: content`
bullets, apply ADD operations and reflector tags, and pull JSON out of model output (as released)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evoarena.methods.jsonparse import first_json, whole_and_fenced

SECTIONS = (
    "strategies & insights",
    "formulas & calculations",
    "code snippets & templates",
    "common mistakes",
    "problem-solving heuristics",
    "context clues",
    "others",
)
BULLET = re.compile(r"^\[([a-z]+)-(\d{5})\] helpful=(\d+) harmful=(\d+) :: (.*)$")


@dataclass
class Bullet:
    slug: str
    number: int
    helpful: int
    harmful: int
    content: str

    @property
    def id(self) -> str:
        return f"{self.slug}-{self.number:05d}"

    def line(self) -> str:
        return f"[{self.id}] helpful={self.helpful} harmful={self.harmful} :: {self.content}"


@dataclass
class Playbook:
    sections: dict[str, list[Bullet]] = field(default_factory=lambda: {s: [] for s in SECTIONS})

    def bullets(self) -> list[Bullet]:
        return [b for bs in self.sections.values() for b in bs]

    def find(self, bullet_id: str) -> Bullet | None:
        return next((b for b in self.bullets() if b.id == bullet_id), None)

    def max_number(self) -> int:
        return max((b.number for b in self.bullets()), default=0)

    def stats(self) -> dict[str, int]:
        bs = self.bullets()
        return {
            "total_bullets": len(bs),
            "high_performing": sum(1 for b in bs if b.helpful > 5 and b.harmful < 2),
            "problematic": sum(1 for b in bs if b.harmful >= b.helpful and b.harmful > 0),
            "unused": sum(1 for b in bs if b.helpful + b.harmful == 0),
        }


def normalise_section(name: str) -> str:
    """Map a curator's section name onto one of the 7 sections; unknown names go to "others"."""
    text = re.sub(r"[_\s]+", " ", str(name).strip().lower()).replace(" and ", " & ")
    return text if text in SECTIONS else "others"


def slug_of(section: str) -> str:
    return re.sub(r"[^a-z]", "", section)[:3] or "oth"


def parse_playbook(text: str) -> Playbook:
    pb = Playbook()
    current = "others"
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            current = normalise_section(line[3:])
            continue
        m = BULLET.match(line)
        if m:
            slug, num, helpful, harmful, content = m.groups()
            pb.sections[current].append(Bullet(slug, int(num), int(helpful), int(harmful), content))
    return pb


def render_playbook(pb: Playbook) -> str:
    parts = []
    for section in SECTIONS:
        lines = [f"## {section.upper()}"] + [b.line() for b in pb.sections[section]]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def apply_tags(pb: Playbook, tags: Any) -> int:
    """Reflector `bullet_tags`: helpful +1, harmful +1, neutral (or anything else) nothing. Returns changes."""
    changed = 0
    for tag in tags if isinstance(tags, list) else []:
        if not isinstance(tag, dict):
            continue
        bullet = pb.find(str(tag.get("id", "")))
        kind = str(tag.get("tag", "")).strip().lower()
        if bullet is None or kind not in ("helpful", "harmful"):
            continue
        if kind == "helpful":
            bullet.helpful += 1
        else:
            bullet.harmful += 1
        changed += 1
    return changed


def apply_operations(pb: Playbook, operations: Any, next_id: int) -> tuple[list[Bullet], int]:
    """Apply only well-formed ADD ops (UPDATE/MERGE/DELETE are ignored, as released). Returns (added, next_id)."""
    added: list[Bullet] = []
    for op in operations if isinstance(operations, list) else []:
        if not isinstance(op, dict) or str(op.get("type", "")).strip().upper() != "ADD":
            continue
        content = " ".join(str(op.get("content") or "").split())
        if not content:
            continue
        section = normalise_section(str(op.get("section", "")))
        bullet = Bullet(slug_of(section), next_id, 0, 0, content)
        next_id += 1
        pb.sections[section].append(bullet)
        added.append(bullet)
    return added, next_id


def _balanced_objects(text: str) -> list[str]:
    out, depth, start, in_str, esc = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(text[start : i + 1])
    return out


def extract_json(text: str) -> dict[str, Any] | None:
    """The released order: whole text, then ```json blocks, then balanced-brace spans. None when none parse."""
    value: dict[str, Any] | None = first_json([*whole_and_fenced(text), *_balanced_objects(text)], dict)
    return value
