"""`reference`: installs the harness the spec gives — a system prompt, files, or a directory of files — and never
changes it, so a run can show what the best known harness scores (the headroom over `frozen`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from evoarena.api import Method, ParamError, PracticeContext, TaskView, method
from evoarena.harness import HarnessPathError, HarnessWorkspace, Manifest, check_relpath, read_tree
from evoarena.models import GenParams

SYSTEM = "system.md"
KNOBS = "harness.toml"


@method("reference")
class Reference(Method):
    """The given harness, unchanged: practice solves each task once (as `frozen` does, so budgets compare)."""

    reference_harness = True

    class Params(Method.Params):
        system: str = Field("", description="The solver's system prompt (`system.md`); empty: the benchmark's own, "
                                            "or `system.md` of `files` / `dir`.")
        files: dict[str, str] = Field(default_factory=dict, description="Harness files by relative path "
                                      "(`system.md`, `harness.toml`, any other text shown before each task).")
        dir: str = Field("", description="A directory of harness files (e.g. one `evoarena export` wrote); a "
                                         "relative path resolves against the spec's directory.")

        @model_validator(mode="after")
        def _one_source(self) -> Reference.Params:
            if not (self.system or self.files or self.dir):
                raise ValueError("system: give the harness: `system`, `files` or `dir`")
            if self.files and self.dir:
                raise ValueError("dir: give `files` or `dir`, not both")
            if self.system and SYSTEM in self.files:
                raise ValueError("system: `files` has a system.md too; give one of them")
            for rel in self.files:
                try:
                    check_relpath(rel)
                except HarnessPathError as err:
                    raise ValueError(f"files: {err}") from None
            return self

    @classmethod
    def bind_params(cls, params: Mapping[str, Any], base: Path) -> dict[str, Any]:
        """`dir` read into `files` (relative to `base`, the spec's directory), so the cell's method holds the harness
        itself, wherever it runs; a missing, empty or unreadable directory is a one-line ParamError."""
        where = f"methods.{cls.name}.params.dir"
        raw = params.get("dir")
        if not isinstance(raw, str) or not raw:
            return dict(params)
        path = Path(raw).expanduser()
        full = path if path.is_absolute() else Path(base) / path
        if not full.is_dir():
            raise ParamError(f"{where}: no such directory {raw!r} (relative paths resolve against the spec's "
                             f"directory {Path(base).resolve()})")
        try:
            tree = read_tree(full, None)
        except HarnessPathError as err:
            raise ParamError(f"{where}: {err}") from None
        if not tree:
            raise ParamError(f"{where}: {raw!r} holds no files")
        return {**{k: v for k, v in params.items() if k != "dir"}, "files": tree}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        if self.params.dir:  # not bound to a spec's directory (a spec checked in Python): the current one
            self.params = self.check_params(self.bind_params(self.params.model_dump(), Path.cwd()))
        super().initialize(ws, system_prompt, solver_params)
        for rel, text in sorted(self.params.files.items()):
            ws.write(rel, text)
        if self.params.system:
            ws.write(SYSTEM, self.params.system)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """Every file but `system.md` and `harness.toml`, by path, each under a `### path` header."""
        shown = [f"### {rel}\n{text.strip()}" for rel, text in sorted(tree.items())
                 if rel not in (SYSTEM, KNOBS) and text.strip()]
        return "\n\n".join(shown)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        ctx.solve(task)
        return None
