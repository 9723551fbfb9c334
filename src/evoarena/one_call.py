"""`evoarena.evolve(tasks, method=…, model=…)`: one call that evolves a harness on your tasks and hands back the
selected version (files and solver prompt), its scores and the run directory.

Underneath it is an ordinary run: an ExperimentSpec with one method and one seed goes through `run_experiment`, so the
split, the selection on val, the single grading on test, the ledger and resuming are the protocol's own. Calling it
again with the same arguments resumes the same run directory and makes no new model calls."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoarena.api import ParamError, UnknownName
from evoarena.protocol import catalog
from evoarena.protocol.export.bundle import ExportError, instantiate, open_source, prompt_template
from evoarena.protocol.export.prompt_file import PromptTemplate
from evoarena.protocol.progress import Progress
from evoarena.protocol.progress_log import PlainLog
from evoarena.protocol.run.runner import default_run_dir, run_experiment
from evoarena.report.results_record import RESULTS_FILE, RunResults, SelectionResult
from evoarena.spec import EMBEDDED_SHORTHANDS, ExperimentSpec, SpecError, parse_spec
from evoarena.store.scores import version_scores
from evoarena.wording import unknown

TASK_FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")
Tasks = str | Path | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Evolved:
    """The harness version a run selected on val (the one graded on test), and where the run is."""

    run_dir: Path
    cell: str
    method: str
    version: str
    files: dict[str, str]
    prompt: PromptTemplate | None  # None when the method picks its context per task (see `prompt_note`)
    val: float | None
    test: float | None
    n_test: int
    evidence: str
    prompt_note: str = ""
    results: RunResults | None = field(default=None, repr=False)  # the run's record, as results.json holds it

    @property
    def system_prompt(self) -> str:
        return self.files.get("system.md", "")

    @property
    def selection(self) -> SelectionResult | None:
        """Why this version was selected ("val tie → earliest kept (…)", `.text`), with the candidates graded on
        val and a warning when the budget left the final version ungraded; None without a results record."""
        if self.results is None:
            return None
        return next((s for s in self.results.selections if s.selected == self.version), None)


def _model_spec(model: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the key the spec names it by, its ModelSpec fields): a mapping as given; `embedded`, `embedded-small`,
    `gemma` or a `.gguf` path for an embedded model; `scripted:POLICY` for a scripted one."""
    if isinstance(model, Mapping):
        return "model", dict(model)
    if model in EMBEDDED_SHORTHANDS:
        return model, {"backend": "embedded", "model": EMBEDDED_SHORTHANDS[model]}
    if model.lower().endswith(".gguf"):
        return "gguf", {"backend": "embedded", "model": model}
    if model.startswith("scripted:") and model[len("scripted:"):]:
        return "scripted", {"backend": "scripted", "model": model[len("scripted:"):]}
    also = "or PATH.gguf, scripted:POLICY, a ModelSpec mapping"
    raise SpecError(f"model: {unknown('model', model, EMBEDDED_SHORTHANDS, also)}")


def _tasks_file(rows: Sequence[Mapping[str, Any]], root: Path) -> Path:
    """A list of task dicts, written once as JSONL under `root/tasks/` (named by its content, so the spec and hence
    the run directory stay the same when the same list is passed again)."""
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise SpecError("tasks: expected a non-empty list of dicts, a task file path, or a benchmark name")
    text = "".join(json.dumps(dict(r), ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path = (root / "tasks" / f"tasks-{hashlib.sha256(text.encode()).hexdigest()[:12]}.jsonl").resolve()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def _benchmark(tasks: Tasks, params: Mapping[str, Any], root: Path) -> dict[str, Any]:
    if isinstance(tasks, str | Path) and (Path(tasks).suffix.lower() in TASK_FILE_SUFFIXES or Path(tasks).is_dir()):
        path = Path(tasks).expanduser()
        if not path.exists():
            raise SpecError(f"tasks: no such file {str(tasks)!r}")
        return {"name": "files", "params": {**params, "path": str(path.resolve())}}
    if isinstance(tasks, str | Path):
        return {"name": str(tasks), "params": dict(params)}
    return {"name": "files", "params": {**params, "path": str(_tasks_file(tasks, root))}}


def _grader_roles(bench: Mapping[str, Any]) -> tuple[str, ...]:
    """The model roles the benchmark grades with (the files benchmark's judge); () for a name the catalog does not
    know or params it refuses, which the spec check then reports."""
    try:
        cls = catalog.benchmark_class(str(bench["name"]), (Path.cwd(),))
        params = cls.check_params(bench["params"])
    except (UnknownName, ParamError):
        return ()
    return tuple(cls.grader_roles(params))


def build_spec(
    tasks: Tasks,
    *,
    method: str = "gepa",
    model: str | Mapping[str, Any] = "embedded",
    roles: Mapping[str, str | Mapping[str, Any]] | None = None,
    budget: int | Mapping[str, int] | None = None,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    method_params: Mapping[str, Any] | None = None,
    protocol: Mapping[str, Any] | None = None,
    name: str | None = None,
    root: Path = Path("runs"),
) -> ExperimentSpec:
    """The spec `evolve` runs: one method, one seed, every role on `model` but those `roles` maps to another model
    (e.g. `{"reflector": "embedded"}` beside a smaller solver). `budget` as an int caps model calls per cell
    (practice and selection); a mapping gives `max_attempts` / `max_calls` / `max_tokens`."""
    key, model_fields = _model_spec(model)
    models, role_map = {key: model_fields}, {"solver": key}
    for role, other in (roles or {}).items():
        other_key, fields = _model_spec(other)
        found = next((k for k, v in models.items() if v == fields), None)
        if found is None:
            found = f"{role}-{other_key}"
            models[found] = fields
        role_map[role] = found
    bench = _benchmark(tasks, params or {}, root)
    for role in _grader_roles(bench):  # a judge grader grades on `model` too, unless `roles` names another
        role_map.setdefault(role, key)
    limits = {"max_calls": budget} if isinstance(budget, int) else dict(budget or {})
    return parse_spec({
        "name": name or f"evolve-{method}",
        "benchmark": bench,
        "methods": [{"name": method, "params": dict(method_params or {})}],
        "models": models,
        "roles": role_map,
        "seeds": [seed],
        "budget": limits,
        "protocol": dict(protocol or {}),
    })


def evolve(
    tasks: Tasks,
    method: str = "gepa",
    model: str | Mapping[str, Any] = "embedded",
    *,
    roles: Mapping[str, str | Mapping[str, Any]] | None = None,
    budget: int | Mapping[str, int] | None = None,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    method_params: Mapping[str, Any] | None = None,
    protocol: Mapping[str, Any] | None = None,
    name: str | None = None,
    root: Path | str = Path("runs"),
    run_dir: Path | str | None = None,
    progress: Progress | None = None,
    quiet: bool = False,
) -> Evolved:
    """Evolve a harness with `method` on `tasks` (a JSONL/JSON/CSV path or a list of dicts, read by the `files`
    benchmark with `params` as its params, e.g. `input`, `answer`, `grader`; or a benchmark name with `params`),
    select on val, grade once on test, and return the selected version. `roles` puts named roles on other models.
    Resumes when the run directory exists. While it runs, each `CellProgress` goes to `progress`; by default a
    plain line per phase and every few seconds goes to stderr (`evoarena run`'s log lines); `quiet=True`: nothing."""
    root = Path(root)
    spec = build_spec(tasks, method=method, model=model, roles=roles, budget=budget, seed=seed, params=params,
                      method_params=method_params, protocol=protocol, name=name, root=root)
    target = Path(run_dir) if run_dir is not None else default_run_dir(spec, root)
    report = None if quiet else progress or PlainLog()
    results = RunResults.model_validate(run_experiment(spec, target, search=(Path.cwd(),), progress=report))
    return selected(target, results)


def selected(run_dir: Path, results: RunResults | None = None) -> Evolved:
    """The selected version of a one-cell run (or of its only cell), as `evolve` returns it; without `results`, the
    run's record is read from its results.json when there is one."""
    source = open_source(Path(run_dir), version="selected")
    val, test = version_scores(source.store, source.cell, source.version)
    prompt, note = None, ""
    try:
        prompt = prompt_template(source, *instantiate(source, (Path.cwd(),)))
    except ExportError as err:
        note = str(err)
    run = source.store.run() or {}
    return Evolved(run_dir=Path(run_dir), cell=source.cell, method=source.method_spec.name, version=source.version,
                   files=dict(source.tree), prompt=prompt, val=val.mean, test=test.mean, n_test=test.n_graded,
                   evidence=str(run.get("evidence")), prompt_note=note, results=results or _record(Path(run_dir)))


def _record(run_dir: Path) -> RunResults | None:
    path = run_dir / RESULTS_FILE
    return RunResults.read(path) if path.is_file() else None
