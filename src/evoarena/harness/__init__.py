"""Harnesses as versioned directories of text files."""

from evoarena.harness.change_scoring import (
    ChangeScore,
    ChangeVerdict,
    PredictionPR,
    RoundScore,
    harmful_files,
    mean_pr,
    pooled_pr,
    score_round,
    task_outcomes,
    task_pass,
)
from evoarena.harness.changes import (
    ChangeEntry,
    ChangeManifest,
    ManifestError,
    changed_files,
    from_version_manifest,
    rollback_files,
)
from evoarena.harness.files import HarnessFileError, check_tree, read_tree
from evoarena.harness.paths import HarnessPathError, check_relpath, resolve_inside
from evoarena.harness.rollback import rollback
from evoarena.harness.state import HarnessStateError
from evoarena.harness.versions import (
    Manifest,
    check_version,
    diff_trees,
    lineage,
    load_tree,
    located,
    normalise,
    resolve_version,
    save_version,
    store_checked,
    tree_hash,
)
from evoarena.harness.workspace import HarnessWorkspace, Tree

__all__ = [
    "ChangeEntry",
    "ChangeManifest",
    "ChangeScore",
    "ChangeVerdict",
    "HarnessFileError",
    "HarnessPathError",
    "HarnessStateError",
    "HarnessWorkspace",
    "Manifest",
    "ManifestError",
    "PredictionPR",
    "RoundScore",
    "Tree",
    "changed_files",
    "check_relpath",
    "check_tree",
    "check_version",
    "diff_trees",
    "from_version_manifest",
    "harmful_files",
    "lineage",
    "load_tree",
    "located",
    "mean_pr",
    "normalise",
    "pooled_pr",
    "read_tree",
    "resolve_inside",
    "resolve_version",
    "rollback",
    "rollback_files",
    "save_version",
    "store_checked",
    "score_round",
    "task_outcomes",
    "task_pass",
    "tree_hash",
]
