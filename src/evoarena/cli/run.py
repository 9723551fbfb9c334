"""`evoarena run SPEC`: run (or resume) an experiment with its progress per cell (`live`), after the lines a run
prints at its start: the run's target and evidence, the methods' confinement and the promises it lacks, and which
model plays each role of each condition."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evoarena.cli.common import JsonOpt, check_range, emit_json, fail, out
from evoarena.cli.fit import WideOpt
from evoarena.cli.live import run_progress
from evoarena.cli.plan import run_warning
from evoarena.cli.probe import probe_warnings
from evoarena.cli.results import print_results
from evoarena.spec import ExecutorSpec, ExperimentSpec, SpecError, load_spec

if TYPE_CHECKING:
    from evoarena.protocol.validate import Resolved


PROBE_STOP_EXIT = 3
"""`run --stop-on-probe-warning`'s exit code when a role probe warned (2: any other error)."""


def run(
    spec_path: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    model: Annotated[str | None, typer.Option(help="Map every role to this model (e.g. scripted, embedded).")] = None,
    run_dir: Annotated[Path | None, typer.Option(help="Where to write the run (default runs/<name>-<hash>).")] = None,
    seeds: Annotated[str | None, typer.Option(help="Comma-separated seeds, overriding the spec's.")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE set in the spec before it is read (repeatable): a dotted path, e.g. "
        "benchmark.params.seed=1 or methods.2.params.beta=0; the value is YAML; part of the spec and its hash.",
    )] = None,
    parallel: Annotated[int, typer.Option(
        help="Cells to run at once, 1 to 1024 (at least; --concurrency runs more).")] = 1,
    concurrency: Annotated[int | None, typer.Option(
        help="Work and model calls in flight at once, 1 to 1024: cells, episodes, a step's rollouts and asks, "
        "val/test grading (default: the spec's protocol.concurrency, 1). The results do not depend on it.")] = None,
    executor: Annotated[str | None, typer.Option(
        help="Where cells run: `local`, or `ray` / `ray:ADDRESS` (ADDRESS: auto, local, host:port, ray://host:port) "
        "for Ray tasks on a cluster (default: the spec's executor). The results do not depend on it.")] = None,
    no_probe: Annotated[bool, typer.Option("--no-probe", help="Skip the role probes before the run.")] = False,
    probe_threshold: Annotated[float, typer.Option(
        help="Warn when a role's usable probe share (0 to 1) is below.")] = 0.5,
    stop_on_probe_warning: Annotated[bool, typer.Option(
        "--stop-on-probe-warning", help="Stop before any cell runs when a role probe warns: one line on stderr, exit "
        f"code {PROBE_STOP_EXIT}; the probes stay in the run store, so a later run reuses them.")] = False,
    certified: Annotated[bool, typer.Option(
        "--certified", help="Run each cell's method in a process of its own under bubblewrap (protocol.isolation: "
        "process), which never holds the test split, the grader's data, the run database or the response cache; "
        "refuses to start where bubblewrap does not work, unless the spec asks for a weaker "
        "protocol.method_confinement (docs/security.md).")] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Run (or resume) an experiment. Re-running the same command resumes and makes no repeated calls. The role
    probes run first (`evoarena probe-roles`; cached, kept in the run store); a role below the threshold warns. Before
    any method runs, one power-check line warns when a comparison cannot detect protocol.min_effect or the baseline
    sits at the floor or ceiling of the spec's last pilot (`evoarena plan`; no model call). The summary says why each
    cell tested the version it did, and warns when the budget left a final version ungraded on val (a call budget
    holds that grading's cost back from practice: docs/protocol.md, "Budgets")."""
    from evoarena.protocol.run.runner import (
        ProbeWarningStop,
        RunDirConflict,
        default_run_dir,
        plan_cells,
        run_experiment,
    )
    from evoarena.protocol.validate import validate_run

    check_range("--parallel", parallel, 1, 1024)
    check_range("--concurrency", concurrency, 1, 1024)
    check_range("--probe-threshold", probe_threshold, 0, 1)
    if stop_on_probe_warning and no_probe:
        fail("--stop-on-probe-warning needs the role probes: drop --no-probe")
    try:
        spec = load_spec(spec_path, set_ or ())
        if model:
            spec = spec.with_model(model)
        if seeds:
            spec = spec.with_seeds(_seeds(seeds))
        if certified:
            spec = spec.model_copy(update={"protocol": spec.protocol.model_copy(update={"isolation": "process"})})
        if executor:
            spec = spec.model_copy(update={"executor": _executor(spec, executor)})
        resolved = validate_run(spec, (spec_path.resolve().parent,))
    except (SpecError, ValueError) as e:
        fail(str(e))
        return
    target = run_dir or default_run_dir(spec)
    evidence = spec.derived_evidence()
    if not as_json:
        try:  # it builds the benchmark's splits: a bad task file fails here, in one line, before the banner
            warning = run_warning(spec, (spec_path.resolve().parent,), resolved)
        except (SpecError, ValueError) as e:
            fail(str(e))
            return
        print_banner(spec, target, evidence)
        print_roles(spec, resolved)
        if warning:
            out.print(f"[yellow]{warning}[/]", highlight=False, soft_wrap=True)
    plans = plan_cells(spec)
    with run_progress([p.cell for p in plans], quiet=as_json) as progress:
        try:
            results = run_experiment(spec, target, progress=progress, cells_in_parallel=parallel,
                                     concurrency=concurrency, search=(spec_path.resolve().parent,), probe=not no_probe,
                                     probe_threshold=probe_threshold,
                                     on_probes=None if as_json else _probe_warnings, resolved=resolved,
                                     stop_on_probe_warning=stop_on_probe_warning)
        except ProbeWarningStop as e:
            fail(str(e), PROBE_STOP_EXIT)
            return
        except (RunDirConflict, SpecError, ValueError, RuntimeError) as e:
            fail(str(e))
            return
    if as_json:
        emit_json({"run_dir": str(target), **results})
    else:
        from evoarena.report.results_record import RunResults

        print_results(RunResults.model_validate(results), wide)
        out.print(f"wrote {target / 'results.json'} and {target / 'report.html'}")


def _probe_warnings(summaries: list[Any], threshold: float) -> None:
    """Before the cells start: each role × method whose probes fell below the threshold, in one line."""
    probe_warnings([s.row(threshold) for s in summaries])


def _executor(spec: ExperimentSpec, value: str) -> ExecutorSpec:
    """`--executor local | ray | ray:ADDRESS` over the spec's executor."""
    kind, _, address = value.partition(":")
    if kind not in ("local", "ray") or (kind == "local" and address):
        raise SpecError(f"--executor: expected local, ray or ray:ADDRESS, got {value!r}")
    update: dict[str, Any] = {"kind": kind, **({"address": address} if address else {})}
    return spec.executor.model_copy(update=update)


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise SpecError(f"--seeds: expected comma-separated integers, got {text!r}") from None


def print_roles(spec: ExperimentSpec, resolved: Resolved) -> None:
    """Under the run's first line: which model plays each role of each condition, and where the solver's stands in."""
    from evoarena.protocol.roles import role_lines

    plays = {condition: cls.roles for condition, cls in resolved.methods.items()}
    for line in role_lines(spec, plays, resolved.benchmark.grader_roles(resolved.benchmark_params)):
        out.print(f"  roles  {line}", markup=False, highlight=False, soft_wrap=True)


def print_banner(spec: ExperimentSpec, target: Path, evidence: str) -> None:
    """The run's first line; under process isolation, the methods' confinement and (below bubblewrap) a second line
    with the promises that do not hold at that level."""
    from evoarena.protocol.confinement import promises

    level = spec.protocol.method_confinement
    isolation = "" if spec.protocol.isolation == "in-process" else f"   methods: [bold]own process, {level}[/]"
    out.print(f"[bold]{spec.name}[/] → {target}   evidence: [bold]{evidence}[/]{isolation}")
    lacks = promises(level)["lacks"] if spec.protocol.isolation == "process" else []
    if lacks:
        out.print(f"[yellow]method confinement {level} (protocol.method_confinement): a method {'; '.join(lacks)}[/]",
                  markup=True, highlight=False)
