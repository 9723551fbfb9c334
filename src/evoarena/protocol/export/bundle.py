"""`evoarena export`: one harness version of a run as the solver's prompt, as its files, or as an Agent Skill.

Everything is computed before anything is written, so an error (one line, an ExportError) leaves DEST untouched.
The prompt comes from `solve.solver_request`, the function the solver's own calls are built by."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evoarena.api import Benchmark, Method, TaskView, UnknownName
from evoarena.harness import HarnessPathError, HarnessWorkspace, check_tree, lineage, load_tree, resolve_version
from evoarena.harness.program import PROGRAM, is_program
from evoarena.models import Message
from evoarena.protocol import catalog
from evoarena.protocol.export.prompt_file import SLOT, PromptTemplate, prompt_files
from evoarena.protocol.export.skill_folder import SkillExportError, skill_files
from evoarena.protocol.roles import role_params
from evoarena.protocol.solve.solve import solver_request
from evoarena.protocol.validate import validate_spec
from evoarena.spec import ExperimentSpec, MethodSpec, SpecError
from evoarena.store import RunStore
from evoarena.store.cell_lookup import NoSuchCell, find_cell
from evoarena.store.scores import version_scores

MODES: tuple[str, ...] = ("prompt", "files", "skill")
_SENTINEL = "EVOARENA-TASK-SLOT-5c1e0d"


class ExportError(ValueError):
    """Why nothing was exported, in one line."""


@dataclass(frozen=True)
class ExportSource:
    """One harness version of one cell of a run, with what is needed to show it as the solver saw it."""

    store: RunStore
    spec: ExperimentSpec
    cell: str
    method_spec: MethodSpec
    seed: int
    solver_model: str
    version: str
    which: str  # "selected", "final" or "id"
    tree: dict[str, str]
    chosen_by: str = ""  # how the cell was picked when not by name: `best val` (`--cell best`)
    notes: tuple[str, ...] = ()  # what the export left out (`3 repeated bullets dropped`)

    def describe(self) -> dict[str, Any]:
        """Provenance recorded in every export: run, cell, method, benchmark, version and its scores."""
        run = self.store.run() or {}
        val, test = version_scores(self.store, self.cell, self.version)
        return {
            "run": run.get("name"), "run_dir": str(self.store.run_dir), "spec_hash": run.get("spec_hash"),
            "evidence": run.get("evidence"), "code_version": run.get("code_version"), "cell": self.cell,
            "condition": self.method_spec.condition, "method": self.method_spec.name, "seed": self.seed,
            "benchmark": self.spec.benchmark.name, "tasks_file": _file_name(self.spec.benchmark.params.get("path")),
            "task_set": _task_set(self.spec),
            "version": self.version, "version_is": self.which,
            "val": {"mean": val.mean, "n": val.n_graded}, "test": {"mean": test.mean, "n": test.n_graded},
        }


def _file_name(path: Any) -> str | None:
    """The task file's name, for benchmarks that read one (`files`)."""
    return Path(path).name if isinstance(path, str) and path else None


def _task_set(spec: ExperimentSpec) -> str:
    """What the tasks are called: the task file's name without its suffix (`units` for units.jsonl), else the
    benchmark's name."""
    name = _file_name(spec.benchmark.params.get("path"))
    return Path(name).stem if name else spec.benchmark.name


BEST = "best"
"""`--cell best`: the cell of the condition with the best val."""


def best_cell(store: RunStore, spec: ExperimentSpec) -> dict[str, Any]:
    """The condition whose selected versions have the best val mean (averaged over its seeds; ties go to the one
    listed first in the spec), and of its cells the one with the best val (ties: the spec's first seed)."""
    scored = []
    for row in store.cells():
        if row.get("selected_version"):
            val, _ = version_scores(store, str(row["cell"]), str(row["selected_version"]))
            if val.mean is not None:
                scored.append((row, val.mean))
    if not scored:
        raise ExportError("--cell best: no cell has a selected version graded on val (unfinished, select: last, or "
                          "a curriculum run); name a cell with --cell")
    return pick_best(scored, [m.condition for m in spec.methods], list(spec.seeds))


def pick_best(scored: list[tuple[dict[str, Any], float]], conditions: list[str], seeds: list[int]) -> dict[str, Any]:
    """Of (cell row, val mean) pairs: the best condition by its mean over its cells, then its best cell; ties go to
    the condition and the seed listed first."""
    by_condition: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for row, val in scored:
        by_condition.setdefault(str(row["condition"]), []).append((row, val))
    rank = {c: i for i, c in enumerate(conditions)}
    best = max(by_condition, key=lambda c: (sum(v for _, v in by_condition[c]) / len(by_condition[c]),
                                            -rank.get(c, len(rank))))
    order = {s: i for i, s in enumerate(seeds)}
    return max(by_condition[best], key=lambda p: (p[1], -order.get(int(p[0]["seed"]), len(order))))[0]


def pick_cell(store: RunStore, cell: str | None, spec: ExperimentSpec | None = None) -> dict[str, Any]:
    """The named cell (or a unique prefix of one); the only cell when none is named; `best` (with the run's spec):
    `best_cell`."""
    cells = store.cells()
    names = [str(c["cell"]) for c in cells]
    if not cells:
        raise ExportError(f"{store.run_dir} has no cells yet")
    if cell == BEST and spec is not None and BEST not in names:
        return best_cell(store, spec)
    if cell is None:
        if len(cells) == 1:
            return cells[0]
        raise ExportError(f"this run has {len(cells)} cells; pass --cell (best, or one of: {', '.join(names)})")
    try:
        return find_cell(store, cell, also=[BEST])
    except NoSuchCell as e:
        raise ExportError(str(e)) from None


def pick_version(store: RunStore, row: Mapping[str, Any], ref: str) -> tuple[str, str]:
    """(version id, which): `selected` is what the cell graded on test, `final` its last version, else an id or a
    unique prefix of one of the cell's versions."""
    cell = str(row["cell"])
    ids = [str(v["id"]) for v in lineage(store, cell)]
    if ref == "selected":
        if not row.get("selected_version"):
            raise ExportError(f"cell {cell} has no selected version (unfinished, or a curriculum cell); "
                              "use --version final or a version id")
        return str(row["selected_version"]), "selected"
    if ref == "final":
        vid = row.get("current_version") or (ids[-1] if ids else None)
        if not vid:
            raise ExportError(f"cell {cell} has no version yet")
        return str(vid), "final"
    try:
        vid = resolve_version(store, ref)
    except KeyError as err:
        raise ExportError(f"{err.args[0]} (use selected, final, or an id of at least 4 characters)") from None
    if vid not in ids:
        raise ExportError(f"version {vid[:12]} is not a version of cell {cell}")
    return vid, "id"


def open_source(run_dir: Path, *, cell: str | None = None, version: str = "selected") -> ExportSource:
    """Find the cell and version in a run directory and load the version's tree."""
    try:
        store = RunStore.open_existing(run_dir)
    except FileNotFoundError as err:
        raise ExportError(str(err)) from None
    run = store.run()
    if run is None:
        raise ExportError(f"{run_dir} holds no run")
    spec = ExperimentSpec.model_validate_json(run["spec_json"])
    row = pick_cell(store, cell, spec)
    vid, which = pick_version(store, row, version)
    method_spec = next((m for m in spec.methods if m.condition == row["condition"]), None)
    if method_spec is None:
        raise ExportError(f"cell {row['cell']}: its condition {row['condition']!r} is not in the run's spec")
    return ExportSource(store=store, spec=spec, cell=str(row["cell"]), method_spec=method_spec, seed=int(row["seed"]),
                        solver_model=str(row["model"]), version=vid, which=which, tree=load_tree(store, vid),
                        chosen_by="best val" if cell == BEST and cell != row["cell"] else "")


def instantiate(source: ExportSource, search: Iterable[Path] = ()) -> tuple[Method, Benchmark]:
    """The cell's method and the run's benchmark, made as the runner made them (the benchmark is not built)."""
    try:
        resolved = validate_spec(source.spec, tuple(search))
        method = resolved.methods[source.method_spec.condition](**source.method_spec.params)
        benchmark = resolved.benchmark(**source.spec.benchmark.params)
    except (SpecError, ValueError) as err:
        raise ExportError(f"cannot rebuild the run's method or benchmark: {err}") from None
    return method, benchmark


def prompt_template(source: ExportSource, method: Method, benchmark: Benchmark) -> PromptTemplate:
    """The solver's request for any task, with `{task}` where the task's prompt goes: the request of a probe task
    whose prompt is a sentinel, built by `solver_request`. Refused when the method's context is chosen per task."""
    name = source.method_spec.name
    if is_program(source.tree):
        raise ExportError(f"the harness is a program ({PROGRAM}) that builds its prompt per task in the sandbox; "
                          "export --as files instead")
    if method.context_is_per_task():
        raise ExportError(f"{name} chooses its context per task (retrieval), so no single prompt shows what the "
                          "solver sees; export --as files instead")
    probes = [TaskView(f"export-probe-{k}", "test", f"export-probe-{k}", _SENTINEL) for k in "ab"]
    a, b = (solver_request(method, benchmark, source.tree, t) for t in probes)
    if a.messages != b.messages:
        raise ExportError(f"{name}'s context depends on the task's id, so no single prompt shows what the solver "
                          "sees; export --as files instead")
    if not any(_SENTINEL in m.content for m in a.messages):
        raise ExportError(f"the {source.spec.benchmark.name} benchmark does not show the task's prompt as given "
                          "(format_task), so there is no slot to put it in")
    slot = SLOT
    while any(slot in m.content for m in a.messages):  # the harness itself mentions the slot: pick another
        slot = "{" + slot + "}"
    messages = tuple(Message(m.role, m.content.replace(_SENTINEL, slot)) for m in a.messages)
    seed = role_params(source.spec, "solver", source.seed).seed  # the seed the run's solver calls were made with
    params = a.params if a.params.seed is not None else replace(a.params, seed=seed)
    model = {"name": source.solver_model, **source.spec.models[source.solver_model].dumped()}
    return PromptTemplate(messages, params, slot, model, source.describe())


def export_files(source: ExportSource, mode: str, search: Iterable[Path] = (),
                 ) -> tuple[dict[str, str], tuple[str, ...]]:
    """({relative path: text}, what was left out) of an export in `mode`; raises ExportError before anything is
    written."""
    if mode == "files":
        return dict(source.tree), ()
    if mode not in MODES:
        raise ExportError(f"--as {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "prompt":
        return prompt_files(prompt_template(source, *instantiate(source, search))), ()
    try:  # a skill needs only the method's class: the benchmark (and its task file) need not be there
        method_cls = catalog.method_class(source.method_spec.name, tuple(search))
    except UnknownName as err:
        raise ExportError(f"cannot find the run's method: {err}") from None
    try:
        folder = skill_files(source.describe(), method_cls, source.tree)
    except SkillExportError as err:
        raise ExportError(str(err)) from None
    return folder.files, folder.notes()


def check_dest(dest: Path, *, force: bool = False) -> None:
    """DEST must be a directory or absent, and hold no files unless `force`."""
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest} exists and is not a directory")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise ExportError(f"{dest} already holds files (pass --force to write over them)")


def write_export(dest: Path, files: Mapping[str, str], *, force: bool = False) -> None:
    """Write `files` under `dest` (checked by `check_dest`); `force` overwrites files of the same name and removes
    nothing."""
    check_dest(dest, force=force)
    ws = HarnessWorkspace(dest)
    for rel, text in sorted(files.items()):
        ws.write(rel, text)


def export(run_dir: Path, dest: Path, mode: str, *, cell: str | None = None, version: str = "selected",
           force: bool = False, search: Iterable[Path] = ()) -> ExportSource:
    """Export one version of a run into `dest` (the whole of `evoarena export`); returns what was exported."""
    if mode not in MODES:
        raise ExportError(f"--as {mode!r}: expected one of {', '.join(MODES)}")
    check_dest(dest, force=force)  # before any work
    source = open_source(run_dir, cell=cell, version=version)
    files, notes = export_files(source, mode, search)
    try:
        check_tree(files, None)  # a version stored before names were checked: refused before anything is written
    except HarnessPathError as err:
        raise ExportError(f"version {source.version[:12]} of {source.cell}: {err}") from None
    write_export(dest, files, force=force)
    return replace(source, notes=notes)


def summary(source: ExportSource) -> str:
    """One line naming what was exported."""
    d = source.describe()
    chosen = f", the {source.chosen_by}" if source.chosen_by else ""
    left_out = f"; {', '.join(source.notes)}" if source.notes else ""
    return (f"{d['cell']} version {source.version[:12]} ({source.which}{chosen}; val {_num(d['val']['mean'])}, "
            f"test {_num(d['test']['mean'])}{left_out})")


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"
