"""The evolve agent's reply: one JSON object with AHE's change manifest (``changes``) and the new full text of every
file a change edits (``files: {path: text}``), checked before anything is adopted.

A reply that is not such an object, or whose manifest `ChangeManifest` refuses, is malformed as a whole (nothing
changes). A well-formed reply may still hold changes that cannot be adopted — a file outside the editable
components, a file whose text is missing (only a ``rollback`` change may leave its files out: they are restored from
the snapshot taken before the last round's changes), a change that leaves every file as it is. Those changes are
refused one by one; the rest are adopted, in the manifest's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evoarena.harness import ChangeEntry, ChangeManifest, ManifestError
from evoarena.methods.ahe.components import editable
from evoarena.methods.jsonparse import first_json, whole_and_fenced


@dataclass(frozen=True)
class Proposal:
    """What is adopted from one reply: the changes (a manifest, scored next round) and each change's new files
    (path → text, None = delete); the refused changes with their reasons."""

    manifest: ChangeManifest
    edits: tuple[dict[str, str | None], ...]
    refused: tuple[tuple[ChangeEntry, str], ...] = field(default_factory=tuple)


def parse_reply(raw: str, *, components: Sequence[str], current: Mapping[str, str],
                snapshot: Mapping[str, str] | None, iteration: int) -> Proposal:
    """The adoptable part of a reply, against the harness `current` (without AHE's state); raises `ManifestError`
    (one line) when the reply as a whole is malformed."""
    data = first_json(whole_and_fenced(raw), dict)
    if data is None:
        raise ManifestError("no JSON object with a 'changes' list in the reply")
    manifest = ChangeManifest.from_dict({"changes": data.get("changes"), "iteration": iteration})
    files = data.get("files", {})
    if not isinstance(files, Mapping) or not all(isinstance(v, str | None) for v in files.values()):
        raise ManifestError("'files' must map each path to its new text (a string)")
    kept: list[ChangeEntry] = []
    edits: list[dict[str, str | None]] = []
    refused: list[tuple[ChangeEntry, str]] = []
    for change in manifest.changes:
        edit, why = _edit(change, files, components, current, snapshot)
        if edit is None:
            refused.append((change, why))
        else:
            kept.append(change)
            edits.append(edit)
    return Proposal(ChangeManifest(tuple(kept), iteration), tuple(edits), tuple(refused))


def _edit(change: ChangeEntry, files: Mapping[str, str | None], components: Sequence[str],
          current: Mapping[str, str], snapshot: Mapping[str, str] | None) -> tuple[dict[str, str | None] | None, str]:
    """The files one change writes, or None and why it is refused."""
    if not change.files:
        return None, f"change {change.id!r} names no file"
    outside = [p for p in change.files if not editable(p, components)]
    if outside:
        return None, (f"change {change.id!r} edits {', '.join(outside)}, outside the editable components "
                      f"({', '.join(components)})")
    edit: dict[str, str | None] = {}
    for path in change.files:
        if path in files:
            edit[path] = files[path]
        elif change.type == "rollback" and snapshot is not None:
            edit[path] = snapshot.get(path)
        else:
            return None, f"change {change.id!r}: no new text for {path} in 'files'"
    if all(current.get(p) == t for p, t in edit.items()):
        return None, f"change {change.id!r} leaves {', '.join(change.files)} as they are"
    return edit, ""
