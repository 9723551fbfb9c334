"""Content-addressed harness versions: hashing, manifests, saving, loading and diffing."""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from evoarena.codec import to_plain, to_text
from evoarena.harness.files import check_tree
from evoarena.harness.paths import HarnessPathError
from evoarena.spec import HarnessLimits
from evoarena.store import RunStore
from evoarena.store.versions import cell_versions, insert_version, tree_blob, version_ids

Tree = Mapping[str, str]


@dataclass(frozen=True)
class Manifest:
    """Why a version exists: the evidence behind it, its intent and the tasks it should fix or break."""

    intent: str = ""
    evidence: str = ""
    expected_fixes: list[str] = field(default_factory=list)
    expected_regressions: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """The stored form (the `manifest` column): compact JSON, sorted keys."""
        return to_text(self, sort_keys=True)


def normalise(tree: Tree) -> dict[str, str]:
    return {k.replace("\\", "/"): v.replace("\r\n", "\n") for k, v in sorted(tree.items())}


def tree_hash(tree: Tree) -> str:
    """The content address of `tree`; a name or text UTF-8 cannot hold is a one-line error naming the file."""
    norm = normalise(tree)
    try:
        blob = json.dumps(norm, sort_keys=True, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        check_tree(norm, None)  # says which file
        raise
    return hashlib.sha256(blob).hexdigest()


def save_version(
    store: RunStore,
    cell: str,
    tree: Tree,
    *,
    parents: Sequence[str],
    method: str,
    manifest: Manifest,
    step: str,
    limits: HarnessLimits | None = None,
) -> str:
    """Store a snapshot and return its id; saving the same tree twice in a cell keeps the first record. A tree that
    could not be checked out as it is (`files.check_tree`; `limits`: the size caps) is refused in one line naming
    the file, the cell and the version, before anything is stored."""
    norm = check_version(cell, step, parents, tree, limits)
    return store_checked(store, cell, norm, parents=parents, method=method, manifest=manifest, step=step)


def store_checked(store: RunStore, cell: str, norm: Mapping[str, str], *, parents: Sequence[str], method: str,
                  manifest: Manifest, step: str) -> str:
    """`save_version` for a tree `check_version` already passed and normalised (a step's candidates are all checked
    before any is stored): store it and return its id."""
    vid = tree_hash(norm)
    blob = store.blobs.put(json.dumps(norm, sort_keys=True, ensure_ascii=False))
    insert_version(store, version_id=vid, cell=cell, parents=parents, method=method,
                   manifest_json=manifest.to_text(), tree_blob=blob, step=step)
    return vid


def place(cell: str, step: str, parents: Sequence[str], what: str = "version") -> str:
    """Where a harness error happened, for its one line: the cell, the step and the version being made (`what`:
    "version" or "candidate version"), named by its parents — its own id is the hash of the tree that was refused."""
    shown = ", ".join(p[:12] if p.isalnum() else repr(p[:12]) for p in parents[:3]) + (" …" if len(parents) > 3
                                                                                     else "")
    return f"cell {cell}, step {step}, " + (f"{what} after {shown}" if parents else f"new {what}")


@contextlib.contextmanager
def located(cell: str, step: str, parents: Sequence[str], what: str = "version") -> Iterator[None]:
    """Re-raise a harness error from the block with `place` in front of its one line."""
    try:
        yield
    except HarnessPathError as err:
        raise err.at(place(cell, step, parents, what)) from None


def check_version(cell: str, step: str, parents: Sequence[str], tree: Tree, limits: HarnessLimits | None,
                  what: str = "version") -> dict[str, str]:
    """`tree` normalised, once it passes `files.check_tree`; else a one-line error naming the file and `place`."""
    norm = normalise(tree)
    with located(cell, step, parents, what):
        check_tree(norm, limits)
    return norm


def resolve_version(store: RunStore, ref: str) -> str:
    """Accept a full id or a unique prefix (>= 4 characters)."""
    ids = version_ids(store, ref)
    if len(ref) < 4 or not ids:
        raise KeyError(f"no harness version {ref!r} in this run")
    if len(ids) > 1:
        raise KeyError(f"version prefix {ref!r} is ambiguous ({len(ids)} matches)")
    return ids[0]


def load_tree(store: RunStore, version_id: str) -> dict[str, str]:
    blob = tree_blob(store, version_id)
    if blob is None:
        raise KeyError(f"no harness version {version_id!r} in this run")
    tree: dict[str, str] = json.loads(store.blobs.get_text(blob))
    return tree


def diff_trees(a: Tree, b: Tree, a_label: str = "a", b_label: str = "b") -> str:
    """Unified diff of two trees, file by file, in path order."""
    out: list[str] = []
    for path in sorted(set(a) | set(b)):
        old, new = a.get(path), b.get(path)
        if old == new:
            continue
        out.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"{a_label}/{path}" if old is not None else "/dev/null",
                tofile=f"{b_label}/{path}" if new is not None else "/dev/null",
            )
        )
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
    return "".join(out)


def lineage(store: RunStore, cell: str) -> list[dict[str, object]]:
    """A cell's versions, oldest first, as plain records (for `evoarena versions --json`)."""
    return [to_plain(v) for v in cell_versions(store, cell)]
