"""Harnesses as versioned directories of text files."""

from evoarena.harness.paths import HarnessPathError, check_relpath, resolve_inside
from evoarena.harness.rollback import rollback
from evoarena.harness.versions import (
    Manifest,
    diff_trees,
    lineage,
    load_tree,
    normalise,
    resolve_version,
    save_version,
    tree_hash,
)
from evoarena.harness.workspace import HarnessWorkspace, Tree

__all__ = [
    "HarnessPathError",
    "HarnessWorkspace",
    "Manifest",
    "Tree",
    "check_relpath",
    "diff_trees",
    "lineage",
    "load_tree",
    "normalise",
    "resolve_inside",
    "resolve_version",
    "rollback",
    "save_version",
    "tree_hash",
]
