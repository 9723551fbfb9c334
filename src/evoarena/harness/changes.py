"""AHE's change manifests: one entry per change, validated, plus file-level rollback and a bridge from `Manifest`.

Agentic Harness Engineering (arXiv 2604.25850; released code china-qijizhifeng/agentic-harness-engineering
@96f3b64) has its evolve agent write, each round, a ``change_manifest.json``::

    {"iteration": N, "changes": [{"id", "type": "new|improvement|rollback", "description", "files",
      "failure_pattern", "predicted_fixes": [task ids], "risk_tasks": [task ids],
      "constraint_level", "why_this_component"}]}

(schema from ``agents/evolve_agent/evolve_prompt.md``; ``constraint_level`` is in the released prompt though not in
the issue's list, so it is kept as an optional field). The next round scores every change
(`evoarena.harness.change_scoring`). The released ``evaluate_changes`` reads the manifest leniently (a missing id
becomes ``"unknown"``, anything else is taken as given); here a malformed manifest is refused with a one-line
`ManifestError`: missing or duplicate ids, an unknown or missing type, task ids that are not a list of non-empty
strings, file paths that are absolute or contain ``..`` (the rules of `check_relpath`). Unknown keys are ignored,
repeated task ids or files inside one list are kept once (first occurrence), which leaves the released verdicts
unchanged.

Rollback in AHE is file-level and done by the evolve agent: the round report says HARMFUL changes "must rollback"
(INEFFECTIVE: "rollback or redesign") and to restore the named files from the previous round's workspace snapshot.
`rollback_files` is that restore as a pure function on ``{path: text}`` trees.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from evoarena.harness.paths import HarnessPathError, check_relpath

ChangeType = Literal["new", "improvement", "rollback"]
CHANGE_TYPES: tuple[ChangeType, ...] = ("new", "improvement", "rollback")
_TEXT_FIELDS = ("description", "failure_pattern", "why_this_component", "constraint_level")
_LIST_FIELDS = ("files", "predicted_fixes", "risk_tasks")


class ManifestError(ValueError):
    """A change manifest that cannot be scored: the message names the change and the field, on one line."""


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _task_ids(change_id: str, name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ManifestError(f"change {change_id!r}: {name} must be a list of task ids, got {type(value).__name__}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ManifestError(f"change {change_id!r}: {name} must hold non-empty strings, got {item!r}")
    return _unique(value)


def _file_paths(change_id: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ManifestError(f"change {change_id!r}: files must be a list of paths, got {type(value).__name__}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ManifestError(f"change {change_id!r}: files must hold strings, got {item!r}")
        try:
            out.append(str(check_relpath(item)))
        except HarnessPathError as exc:
            raise ManifestError(f"change {change_id!r}: bad file path {exc}") from None
    return _unique(out)


@dataclass(frozen=True)
class ChangeEntry:
    """One change of a round: what it touched, the failure it targets, and the tasks it should fix or may break."""

    id: str
    type: ChangeType
    description: str = ""
    files: tuple[str, ...] = ()
    failure_pattern: str = ""
    predicted_fixes: tuple[str, ...] = ()
    risk_tasks: tuple[str, ...] = ()
    why_this_component: str = ""
    constraint_level: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ManifestError(f"change id must be a non-empty string, got {self.id!r}")
        if self.type not in CHANGE_TYPES:
            raise ManifestError(f"change {self.id!r}: unknown type {self.type!r} "
                                f"(expected one of {', '.join(CHANGE_TYPES)})")
        for name in _TEXT_FIELDS:
            if not isinstance(getattr(self, name), str):
                raise ManifestError(f"change {self.id!r}: {name} must be a string, got {getattr(self, name)!r}")
        object.__setattr__(self, "files", _file_paths(self.id, self.files))
        object.__setattr__(self, "predicted_fixes", _task_ids(self.id, "predicted_fixes", self.predicted_fixes))
        object.__setattr__(self, "risk_tasks", _task_ids(self.id, "risk_tasks", self.risk_tasks))

    @classmethod
    def from_dict(cls, data: object, index: int = 0) -> ChangeEntry:
        """Build from one parsed JSON object; `index` only names the entry in error messages when the id is missing."""
        if not isinstance(data, Mapping):
            raise ManifestError(f"changes[{index}] must be an object, got {type(data).__name__}")
        cid = data.get("id")
        if not isinstance(cid, str) or not cid.strip():
            raise ManifestError(f"changes[{index}]: missing id" if cid is None else
                                f"changes[{index}]: id must be a non-empty string, got {cid!r}")
        if "type" not in data:
            raise ManifestError(f"change {cid!r}: missing type (expected one of {', '.join(CHANGE_TYPES)})")
        kwargs: dict[str, Any] = {"id": cid, "type": data["type"]}
        for name in _TEXT_FIELDS:
            if data.get(name) is not None:
                kwargs[name] = data[name]
        for name in _LIST_FIELDS:
            value = data.get(name, [])
            if not isinstance(value, list):
                what = "paths" if name == "files" else "task ids"
                raise ManifestError(f"change {cid!r}: {name} must be a list of {what}, got {type(value).__name__}")
            kwargs[name] = tuple(value)
        return cls(**kwargs)

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "type": self.type, "description": self.description, "files": list(self.files),
                "failure_pattern": self.failure_pattern, "predicted_fixes": list(self.predicted_fixes),
                "risk_tasks": list(self.risk_tasks), "constraint_level": self.constraint_level,
                "why_this_component": self.why_this_component}


@dataclass(frozen=True)
class ChangeManifest:
    """A round's changes (ids unique), as the evolve step wrote them; `iteration` is the producing round, if known."""

    changes: tuple[ChangeEntry, ...] = field(default_factory=tuple)
    iteration: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", tuple(self.changes))
        seen: set[str] = set()
        for change in self.changes:
            if not isinstance(change, ChangeEntry):
                raise ManifestError(f"changes must be ChangeEntry objects, got {type(change).__name__}")
            if change.id in seen:
                raise ManifestError(f"duplicate change id {change.id!r}")
            seen.add(change.id)
        if self.iteration is not None and (isinstance(self.iteration, bool) or not isinstance(self.iteration, int)):
            raise ManifestError(f"iteration must be an integer, got {self.iteration!r}")

    @classmethod
    def from_dict(cls, data: object) -> ChangeManifest:
        if not isinstance(data, Mapping):
            raise ManifestError(f"a change manifest must be a JSON object, got {type(data).__name__}")
        raw = data.get("changes")
        if not isinstance(raw, list):
            raise ManifestError("a change manifest needs a 'changes' list" if raw is None else
                                f"'changes' must be a list, got {type(raw).__name__}")
        return cls(tuple(ChangeEntry.from_dict(item, i) for i, item in enumerate(raw)), data.get("iteration"))

    @classmethod
    def from_json(cls, text: str) -> ChangeManifest:
        """Parse ``change_manifest.json`` text; anything malformed raises `ManifestError` with a one-line message."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(f"change manifest is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, object]:
        return {"iteration": self.iteration, "changes": [c.to_dict() for c in self.changes]}

    def to_text(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


class VersionManifestLike(Protocol):
    """What the bridge reads from evoarena's `Manifest` (evoarena.harness.versions)."""

    @property
    def intent(self) -> str: ...
    @property
    def evidence(self) -> str: ...
    @property
    def expected_fixes(self) -> Sequence[str]: ...
    @property
    def expected_regressions(self) -> Sequence[str]: ...


def from_version_manifest(manifest: VersionManifestLike, *, files: Iterable[str] = (), change_id: str = "version",
                          change_type: ChangeType = "improvement", iteration: int | None = None) -> ChangeManifest:
    """One implicit change covering a whole version: expected_fixes → predicted_fixes, expected_regressions →
    risk_tasks, intent → description, evidence → failure_pattern. Pass ``files=changed_files(parent, child)`` so
    that a HARMFUL verdict rolls back exactly what the version changed."""
    entry = ChangeEntry(id=change_id, type=change_type, description=manifest.intent, files=tuple(files),
                        failure_pattern=manifest.evidence, predicted_fixes=tuple(manifest.expected_fixes),
                        risk_tasks=tuple(manifest.expected_regressions))
    return ChangeManifest((entry,), iteration)


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    """Paths added, removed or edited between two ``{path: text}`` trees, sorted."""
    return tuple(sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p)))


def rollback_files(current_tree: Mapping[str, str], previous_tree: Mapping[str, str],
                   files: Iterable[str]) -> dict[str, str]:
    """`current_tree` with exactly `files` put back as they were in `previous_tree`.

    A named file that did not exist before is removed; a file deleted since is restored; every other file is left as
    it is. A name that is not a file in either tree but a directory prefix (``skills/foo``) covers the files under it
    in both trees, since AHE changes may name a new skill or sub-agent directory."""
    out = dict(current_tree)
    universe = set(current_tree) | set(previous_tree)
    for raw in files:
        name = str(check_relpath(raw))
        targets = {name} if name in universe else {p for p in universe if p.startswith(name + "/")}
        for path in targets:
            if path in previous_tree:
                out[path] = previous_tree[path]
            else:
                out.pop(path, None)
    return out
