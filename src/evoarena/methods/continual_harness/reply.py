"""The refiner's replies, one format per pass, read strictly: the prompt pass answers the whole new strategic
guidance between `<prompt>` and `</prompt>`; the skills and memory passes answer the released JSON object
(`{"analysis", "add": [...], "update": [...]}`). A reply that does not hold its format raises `ReplyError` (nothing of
it is applied); an entry that is ill-formed is refused on its own and the others are kept."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evoarena.methods.jsonparse import first_json, leading_object, whole_and_fenced

EFFECTIVENESS = ("low", "medium", "high")
# headings of the prompt pass's own template (continual_refine_prompt.md) and of the trajectory window
ECHO_MARKS = ("## The agent's system prompt", "## Current strategic guidance", "## Recent agent trajectory",
              "## Your task", "## Output format", "### Step ")
_PROMPT = re.compile(r"<prompt>(.*?)</prompt>", re.S | re.I)
_NAME = re.compile(r"\A# (.+)\n")
_TAIL = re.compile(r"\n\n(Effectiveness|Importance): (\S+)\n*\Z")


class ReplyError(ValueError):
    """A refiner reply that does not hold its pass's format."""


@dataclass
class Edits:
    """What a skills or memory reply changes: the new text of each file by entry id, which ids it adds and which it
    updates, the entries refused (entry, reason) and the refiner's analysis."""

    files: dict[str, str] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    analysis: str = ""


def slug(raw: str) -> str:
    """The released `_slugify_id`: lower case, runs of other characters to `_`, at most 48 characters."""
    s = re.sub(r"[^a-z0-9_\-]+", "_", (raw or "").strip().lower())
    s = re.sub(r"_+", "_", s).strip("_-")
    return s[:48] or "unnamed"


def parse_prompt(text: str) -> str:
    """The new strategic guidance: the one `<prompt>…</prompt>` block, at least 10 characters, not a copy of the
    refiner's own prompt (a small model echoes its input: the trajectory would become the solver's guidance)."""
    blocks = _PROMPT.findall(text)
    if len(blocks) != 1:
        raise ReplyError(f"expected one <prompt>…</prompt> block, found {len(blocks)}")
    prompt = blocks[0].strip()
    if len(prompt) < 10 or (prompt.startswith("[") and prompt.endswith("]")):
        raise ReplyError("the <prompt> block is empty, a placeholder or shorter than 10 characters")
    echoed = next((m for m in ECHO_MARKS if m in prompt), None)
    if echoed is not None:
        raise ReplyError(f"the <prompt> block copies the refiner's prompt ({echoed.strip()!r})")
    return prompt


def _object(text: str) -> dict[str, Any]:
    found = first_json(whole_and_fenced(text), dict)
    if found is None:
        lead = leading_object(text)
        found = first_json([lead], dict) if lead else None
    if found is None:
        raise ReplyError("no JSON object in the reply")
    for key in ("add", "update"):
        if key in found and not isinstance(found[key], list):
            raise ReplyError(f"{key!r} must be a list, got {type(found[key]).__name__}")
    if not any(key in found for key in ("add", "update", "analysis")):
        raise ReplyError("the object has none of 'analysis', 'add', 'update'")
    if not isinstance(found.get("analysis", ""), str):
        raise ReplyError("'analysis' must be a string")
    return dict(found)


def _text(item: Mapping[str, Any], key: str) -> str | None:
    value = item.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def render_entry(name: str, body: str, tail_key: str, tail_value: str) -> str:
    """A skill or memory file: `# name`, the body, then `Effectiveness: …` / `Importance: …`."""
    return f"# {name}\n{body.strip()}\n\n{tail_key}: {tail_value}\n"


def read_entry(text: str) -> tuple[str, str, str]:
    """(name, body, tail value) of a skill or memory file written by `render_entry` (lenient for hand-written ones)."""
    name_match = _NAME.match(text)
    name = name_match.group(1).strip() if name_match else ""
    rest = text[name_match.end():] if name_match else text
    tail = _TAIL.search(rest)
    body = rest[: tail.start()] if tail else rest
    return name, body.strip(), tail.group(2) if tail else ""


def _effectiveness(item: Mapping[str, Any], default: str) -> str:
    value = item.get("effectiveness", default)
    if not isinstance(value, str) or value.strip().lower() not in EFFECTIVENESS:
        raise ReplyError(f"effectiveness must be one of {', '.join(EFFECTIVENESS)}, got {value!r}")
    return value.strip().lower()


def _importance(item: Mapping[str, Any], default: int) -> int:
    value = item.get("importance", default)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise ReplyError(f"importance must be an integer from 1 to 5, got {value!r}")
    return value


def _entries(text: str, current: Mapping[str, str], build: Any) -> Edits:
    obj = _object(text)
    edits = Edits(analysis=str(obj.get("analysis", "")).strip())
    for action in ("add", "update"):
        for item in obj.get(action, []):
            label = f"{action} {str(item)[:120]}"
            try:
                if not isinstance(item, dict):
                    raise ReplyError(f"an entry must be an object, got {type(item).__name__}")
                eid, body = build(action, item, {**current, **edits.files})
            except ReplyError as err:
                edits.refused.append((label, str(err)))
                continue
            if body == {**current, **edits.files}.get(eid):
                continue  # the entry as it stands: nothing to change
            (edits.updated if eid in current else edits.added).append(eid)
            edits.files[eid] = body
    edits.added = list(dict.fromkeys(edits.added))
    edits.updated = list(dict.fromkeys(u for u in edits.updated if u not in edits.added))
    return edits


def parse_skills(text: str, current: Mapping[str, str]) -> Edits:
    """The skills pass: `add` entries (id or name, description, effectiveness) and `update` entries (an existing id,
    a full replacement description and/or effectiveness). `current`: {skill id: file text}. An `add` naming an
    existing id replaces that skill."""

    def build(action: str, item: Mapping[str, Any], known: Mapping[str, str]) -> tuple[str, str]:
        raw_id = _text(item, "id") or (_text(item, "name") if action == "add" else None)
        if raw_id is None:
            raise ReplyError("an entry needs an id" + (" or a name" if action == "add" else ""))
        eid = slug(raw_id)
        if action == "update" and eid not in known:
            raise ReplyError(f"no skill {eid!r} to update (skills: {', '.join(sorted(known)) or 'none'})")
        old_name, old_body, old_eff = read_entry(known.get(eid, ""))
        body = _text(item, "description") or _text(item, "code") or old_body
        if not body:
            raise ReplyError("a new skill needs a description")
        name = _text(item, "name") or old_name or raw_id
        return eid, render_entry(name, body, "Effectiveness", _effectiveness(item, old_eff or "medium"))

    return _entries(text, current, build)


def parse_memory(text: str, current: Mapping[str, str]) -> Edits:
    """The memory pass: `add` entries (id or title, content, importance 1–5) and `update` entries (an existing id,
    content and/or importance). `current`: {memory id: file text}."""

    def build(action: str, item: Mapping[str, Any], known: Mapping[str, str]) -> tuple[str, str]:
        raw_id = _text(item, "id") or (_text(item, "title") if action == "add" else None)
        if raw_id is None:
            raise ReplyError("an entry needs an id" + (" or a title" if action == "add" else ""))
        eid = slug(raw_id)
        if action == "update" and eid not in known:
            raise ReplyError(f"no memory {eid!r} to update (memory: {', '.join(sorted(known)) or 'none'})")
        old_title, old_body, old_imp = read_entry(known.get(eid, ""))
        body = _text(item, "content") or old_body
        if not body:
            raise ReplyError("a new memory entry needs content")
        title = _text(item, "title") or old_title or raw_id
        default = int(old_imp) if old_imp.isdigit() else 3
        return eid, render_entry(title, body, "Importance", str(_importance(item, default)))

    return _entries(text, current, build)
