"""Action Fusion (SoL-Pi, seed 000 §10): one tool call = a file edit/write + a follow-up test declared with it.

Why: agents keep making the same pair of turns — change a file, then run something to check it. Fusing the two saves
one model round trip (one full context resend) per pair. What must not be lost in the fusion: the order (the edit's
result, then the test's), a failing test (its exit status, stdout and stderr come back verbatim, never summarised or
turned into a success), and the rule that a test is run only on an edit that applied (an edit that fails stops
before the test, and says the test was skipped).

Here the "repository" is a `Workspace`: a mapping of relative file names to text, which the project's sandbox writes
next to the test program (`evoarena.sandbox.run_python`'s `files`). The test is a Python program run as `main.py` in
a fresh sandbox (time/memory limits, no network) with a snapshot of the workspace taken after the edit, so nothing
can change the files between the edit and the test (the released code re-hashes the file for the same reason).

Edits follow the usual coding-agent contract: `Write(path, content)` creates or replaces a file; `Edit(path, old,
new)` replaces `old`, which must occur exactly once in an existing file. A failed edit leaves the workspace unchanged.
An edit whose test then fails is kept (the released behaviour: "a non-zero exit is reported but keeps the edit").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from evoarena.runtime.text import sha256_text
from evoarena.sandbox import SandboxLimits, SandboxResult, run_python

#: Marks in the combined observation (the released extension's `then_run` markers).
SUCCEEDED = "[then_run:succeeded]"
FAILED = "[then_run:failed]"
SKIPPED = "[then_run:skipped]"
#: The sandbox writes the test program itself to this name, so the workspace cannot hold a file there.
RESERVED = "main.py"

Runner = Callable[..., SandboxResult]


@dataclass(frozen=True)
class Write:
    """Create or replace `path` with `content`."""

    path: str
    content: str


@dataclass(frozen=True)
class Edit:
    """Replace `old` with `new` in `path`; `old` must occur exactly once."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class ThenRun:
    """The follow-up test, declared in the same call as the edit: a Python program (run as `main.py` next to the
    workspace's files) and its stdin and sandbox limits. Its exit status is the verdict."""

    code: str
    stdin: str = ""
    limits: SandboxLimits = field(default_factory=lambda: SandboxLimits(wall_s=20.0, cpu_s=20))


@dataclass(frozen=True)
class EditOutcome:
    """What the edit did: `ok`, a one-line `message`, and the file's SHA-256 before and after (None: absent)."""

    ok: bool
    path: str
    message: str
    before_sha256: str | None = None
    after_sha256: str | None = None


@dataclass(frozen=True)
class Fused:
    """One fused call's result, in order: the edit, then the test (None when skipped). `test_error` is set when the
    runner itself raised (the test could not be run); the test's own failures are in `test` verbatim."""

    edit: EditOutcome
    test: SandboxResult | None
    test_error: str | None = None

    @property
    def skipped(self) -> bool:
        """True when the test did not run because the edit failed."""
        return not self.edit.ok

    @property
    def ok(self) -> bool:
        """The edit applied and the test exited 0 within its limits."""
        return self.edit.ok and self.test is not None and self.test.ok()

    def steps(self) -> tuple[tuple[str, object], ...]:
        """The results in the order they happened: ("edit", EditOutcome), then ("test", SandboxResult) if it ran."""
        return (("edit", self.edit),) + ((("test", self.test),) if self.test is not None else ())

    def observation(self) -> str:
        """The one tool result the agent sees: the edit's line, then the test's marker, exit status, stdout and
        stderr verbatim (or why the test was skipped / could not run)."""
        head = self.edit.message
        if self.skipped:
            return f"{head}\n\n{SKIPPED} the edit did not apply; the test was not run."
        if self.test is None:
            return f"{head}\n\n{FAILED} the test could not be run: {self.test_error}"
        t = self.test
        status = "killed: " + (t.killed_for() or "limit") if t.returncode is None else f"exit status {t.returncode}"
        mark = SUCCEEDED if t.ok() else FAILED
        parts = [head, "", f"{mark} {status}" + (" (output truncated by the sandbox)" if t.truncated else ""),
                 "[stdout]", t.stdout, "[stderr]", t.stderr]
        return "\n".join(parts)


def check_path(path: str) -> str | None:
    """Why `path` cannot be a workspace file (None: it can). Same rules as the sandbox's `files` keys."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return f"invalid file name {path!r}"
    for flavour in (PurePosixPath, PureWindowsPath):
        p = flavour(path)
        if p.is_absolute() or p.drive or p.root or ".." in p.parts:
            return f"file names must be relative and stay inside the workspace: {path!r}"
    parts = tuple(x for x in PureWindowsPath(path).parts if x != ".")
    if not parts:
        return f"invalid file name {path!r}"
    if parts == (RESERVED,):
        return f"{RESERVED!r} is reserved for the test program"
    return None


class Workspace:
    """A small repository as text files (relative name -> content): what edits change and tests run against."""

    def __init__(self, files: Mapping[str, str] | None = None) -> None:
        self._files: dict[str, str] = {}
        for name, content in (files or {}).items():
            why = check_path(name)
            if why:
                raise ValueError(why)
            self._files[name] = content

    @property
    def files(self) -> dict[str, str]:
        """A copy of the files (a snapshot: later edits do not change it)."""
        return dict(self._files)

    def apply(self, change: Write | Edit) -> EditOutcome:
        """Apply one change; on failure the workspace is unchanged and `ok` is False with the reason."""
        why = check_path(change.path)
        if why:
            return EditOutcome(False, str(change.path), f"{type(change).__name__.lower()} failed: {why}")
        before = self._files.get(change.path)
        before_sha = None if before is None else sha256_text(before)
        if isinstance(change, Write):
            after = change.content
            verb = "wrote" if before is None else "rewrote"
            msg = f"{verb} {change.path} ({len(after)} characters)"
        else:
            if before is None:
                return EditOutcome(False, change.path, f"edit failed: {change.path} does not exist")
            if not change.old:
                return EditOutcome(False, change.path, "edit failed: the text to replace is empty", before_sha,
                                   before_sha)
            n = before.count(change.old)
            if n != 1:
                found = "not found" if n == 0 else f"found {n} times (must be unique)"
                return EditOutcome(False, change.path, f"edit failed: the text to replace is {found} in {change.path}",
                                   before_sha, before_sha)
            after = before.replace(change.old, change.new, 1)
            msg = f"edited {change.path} (1 replacement)"
        self._files[change.path] = after
        return EditOutcome(True, change.path, msg, before_sha, sha256_text(after))


class ActionFusion:
    """Run fused calls against one workspace. `runner` defaults to the project's sandbox (`run_python`); a caller
    may pass another with its signature (code, *, stdin, files, limits)."""

    def __init__(self, workspace: Workspace, *, runner: Runner = run_python) -> None:
        self.workspace = workspace
        self.runner = runner
        self.calls = 0
        self.tests_run = 0

    def call(self, change: Write | Edit, then_run: ThenRun) -> Fused:
        """Apply `change`; if it applied, run `then_run` on the files as they are now; return both, in order."""
        self.calls += 1
        edit = self.workspace.apply(change)
        if not edit.ok:
            return Fused(edit, None)
        snapshot = self.workspace.files
        self.tests_run += 1
        try:
            kwargs: dict[str, Any] = {"stdin": then_run.stdin, "files": snapshot, "limits": then_run.limits}
            result = self.runner(then_run.code, **kwargs)
        except Exception as e:  # the runner could not run it: reported as a failure, never as a pass
            return Fused(edit, None, f"{type(e).__name__}: {e}")
        return Fused(edit, result)
