"""Run an experiment spec into a run directory: plan cells, lock the test split, run, report."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from evoarena.models import Halt, ResponseCache, RunHalted, default_cache_path
from evoarena.protocol.progress import Progress
from evoarena.protocol.run.cell import CellPlan
from evoarena.protocol.run.cell_work import build_parts, cell_runner, plan_cells
from evoarena.protocol.run.evaluate import Evaluator
from evoarena.protocol.run.grading import bind_grading
from evoarena.protocol.run.probes import DEFAULT_THRESHOLD, ProbeSummary, plan_probes, run_probes
from evoarena.protocol.scheduler import Scheduler
from evoarena.protocol.splits import task_rows
from evoarena.protocol.validate import Resolved
from evoarena.sandbox import isolation_level, sweep_scratch
from evoarena.spec import ExperimentSpec, SpecError, safe_name
from evoarena.store import DB_NAME, RunStore, now_iso
from evoarena.store.run_events import ProbesRan, RunFinished, RunInterrupted, RunStarted, write_event
from evoarena.version import __version__

__all__ = ["ProbeWarningStop", "RunDirConflict", "code_version", "default_run_dir", "plan_cells", "run_experiment"]


class RunDirConflict(RuntimeError):
    """The run directory already holds a run of a different spec."""


class ProbeWarningStop(RuntimeError):
    """A role probe warned and the run was asked to stop on a probe warning: no cell ran."""


@functools.cache
def code_version() -> str:
    """evoarena's version and the checkout's commit (`.dirty` with local edits), asked of git once per process: the
    code a process runs is what it imported, and two git calls cost ~15 ms of every run."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha, dirty = "", ""
    return f"{__version__}+{sha}{'.dirty' if dirty else ''}" if sha else __version__


def default_run_dir(spec: ExperimentSpec, root: Path = Path("runs")) -> Path:
    """`root/<name>-<hash>`, the name made a safe directory name (never one outside `root`)."""
    return root / f"{safe_name(spec.name)}-{spec.spec_hash()[:10]}"


def run_experiment(
    spec: ExperimentSpec,
    run_dir: Path,
    *,
    progress: Progress | None = None,
    cache: ResponseCache | None = None,
    cells_in_parallel: int = 1,
    search: tuple[Path, ...] = (),
    probe: bool = True,
    probe_threshold: float = DEFAULT_THRESHOLD,
    on_probes: Callable[[list[ProbeSummary], float], None] | None = None,
    concurrency: int | None = None,
    resolved: Resolved | None = None,
    stop_on_probe_warning: bool = False,
) -> dict[str, Any]:
    """Run (or resume) `spec` in `run_dir`; returns results.json's content. The spec is checked whole, the
    benchmark built and the backends made before anything is written, so a bad spec leaves no run directory.
    `search`: directories (besides the current one) where `module:Name` references are imported from. With `probe`,
    the role probes run first (stored ones reused) and `on_probes` sees their summaries and the threshold.
    `concurrency` (default: the spec's `protocol.concurrency`): independent work and model calls in flight at once;
    the results do not depend on it. `resolved`: `validate_run(spec, search)`'s answer when the caller has it (the
    spec is then not validated again). `stop_on_probe_warning`: a probe warning stops the run before any cell runs
    (ProbeWarningStop; the run is left interrupted, its probes kept for a resume). The typed record of the content
    is `RunResults.model_validate(...)`."""
    parts = build_parts(spec, search, resolved)
    _check_cache_apart(spec, cache.path if cache is not None else default_cache_path(), run_dir)
    locked, benchmark = parts.locked, parts.benchmark
    existing = RunStore(run_dir).run() if (Path(run_dir) / DB_NAME).is_file() else None
    spec_hash = spec.spec_hash()
    if existing is not None and existing["spec_hash"] != spec_hash:
        raise RunDirConflict(f"{run_dir} holds a run of another spec ({existing['spec_hash'][:10]}); "
                             "use another --run-dir")
    if existing is not None and existing["test_hash"] != locked.hash:
        raise RunDirConflict(f"{run_dir}: the benchmark's test split changed since the run started")
    store = RunStore(run_dir)
    store.upsert_run(
        id=spec_hash[:16], name=spec.name, spec_json=spec.model_dump_json(), spec_hash=spec_hash,
        code_version=code_version(), evidence=spec.derived_evidence(), test_hash=locked.hash,
        isolation=isolation_level(), status="running",
        started_at=existing["started_at"] if existing else now_iso(), finished_at=None,
    )
    store.record_tasks(task_rows(parts.tasks))
    sweep_scratch()  # what a killed run of this (or any) spec left in the temp dir
    libraries = {c: f"{m.library} {m.library_version()}" for c, m in parts.resolved.methods.items() if m.library}
    references = [m.condition for m in spec.methods if parts.resolved.methods[m.condition].reference_harness]
    write_event(store, RunStarted(resumed=existing is not None, spec_hash=spec_hash, benchmark=benchmark.info(),
                                  libraries=libraries or None, references=references or None))
    evaluator = Evaluator(locked, benchmark)
    cache = cache if cache is not None else ResponseCache()
    halt = Halt()  # set by the first cell that stops the run: no cell makes another model call after it
    bind_grading(spec, benchmark, parts.backends, store, cache, halt)  # the judge's models, if its grader calls one
    if probe:
        summaries = run_probes(spec, plan_probes(spec, parts.resolved.methods, parts.resolved.benchmark), store, cache,
                               parts.backends)
        write_event(store, ProbesRan(threshold=probe_threshold, summaries=len(summaries),
                                     warnings=sum(s.warning(probe_threshold) is not None for s in summaries)))
        if on_probes is not None:
            on_probes(summaries, probe_threshold)
        warned = [s for s in summaries if s.warning(probe_threshold) is not None]
        if stop_on_probe_warning and warned:
            first = warned[0]
            line = (f"stopped before any cell: {len(warned)} role probe warning(s), first {first.role} of "
                    f"{first.method} ({first.model}) at {first.usable}/{first.n} usable")
            store.update_run(spec_hash[:16], status="interrupted")
            write_event(store, RunInterrupted(error=line))
            raise ProbeWarningStop(line)

    limit = concurrency if concurrency is not None else spec.protocol.concurrency
    plans = plan_cells(spec)
    try:
        if spec.executor.kind == "ray":
            from evoarena.protocol.run.ray_executor import run_on_ray

            run_on_ray(plans, parts=parts, search=search, store=store, cache=cache, halt=halt, concurrency=limit,
                       progress=progress)
        else:
            scheduler = Scheduler(limit)
            try:
                run_cell = cell_runner(parts, store=store, evaluator=evaluator, cache=cache, halt=halt,
                                       scheduler=scheduler, progress=progress)
                _run_all(plans, run_cell, max(cells_in_parallel, limit), halt)
            finally:
                scheduler.close()
    except BaseException as err:
        store.update_run(spec_hash[:16], status="interrupted")
        write_event(store, RunInterrupted(error=f"{type(err).__name__}: {err}"))
        raise
    store.update_run(spec_hash[:16], status="finished", finished_at=now_iso())
    write_event(store, RunFinished(cells=len(plans)))
    from evoarena.protocol.run.reporting import rebuild_report

    return rebuild_report(store).model_dump()


def _check_cache_apart(spec: ExperimentSpec, cache_path: Path, run_dir: Path) -> None:
    """A method's process writes its harness, inside the run directory: the response cache may not lie there, or a
    method could write it."""
    if spec.protocol.isolation == "process" and cache_path.resolve().is_relative_to(Path(run_dir).resolve()):
        raise SpecError(f"the response cache ({cache_path}) lies inside the run directory ({run_dir}), where a "
                        "method's process may write; set EVOARENA_CACHE_DIR elsewhere")


def _run_all(plans: list[CellPlan], run_cell: Callable[[CellPlan], str], parallel: int, halt: Halt) -> None:
    """Run the cells, `parallel` at a time. The first failure stops the run: cells not started are cancelled, running
    ones end at their next model call (`RunHalted`), and the failure that stopped it is raised (not a `RunHalted`)."""
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(run_cell, p) for p in plans]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
        except BaseException:  # Ctrl-C in the main thread: the workers stop at their next call
            halt.set("interrupted")
            raise
        finally:
            if halt.is_set():
                for f in futures:
                    f.cancel()
        wait(futures)
    failures = [f.exception() for f in futures if _failed(f)]
    first = next((e for e in failures if not isinstance(e, RunHalted)), failures[0] if failures else None)
    if first is not None:
        raise first


def _failed(future: Future[str]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is not None

