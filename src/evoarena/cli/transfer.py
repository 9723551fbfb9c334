"""`evoarena transfer RUN --model M`: grade each cell's selected harness with another model on the run's locked test
split, then print the matrix (evolved on A → tested on B) and rebuild the run's report with it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, fail, open_run, out
from evoarena.spec import SpecError

if TYPE_CHECKING:
    from evoarena.report.results_record import TransferMatrix


def transfer(
    run_dir: RunDirArg,
    model: Annotated[str, typer.Option(
        help="The model to test with: a key of the run's `models`, or a shorthand as `evoarena run --model` takes "
        "(embedded, embedded-small, gemma, a .gguf path, scripted).")],
    import_from: Annotated[list[Path] | None, typer.Option(
        "--import-from", help="A directory `module:Name` references in the run's spec are imported from (the "
        "spec's directory when it ran; repeatable; the current directory is always searched).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Grade each finished cell's selected harness with another model on the same locked test split (the run's test
    hash is checked first). Calls are ledgered in phase "transfer" and go through the response cache; a cell graded
    before with that model is read back, so re-running resumes. results.json gains a `transfer` section and
    report.html the matrix, with per-condition CIs; the run's own results are unchanged."""
    from evoarena.protocol.run.reporting import rebuild_report
    from evoarena.protocol.run.transfer import run_transfer

    open_run(run_dir)
    try:
        done = run_transfer(run_dir, model, search=tuple(p.resolve() for p in import_from or ()))
    except (SpecError, ValueError, RuntimeError) as e:
        fail(str(e))
        return
    if not done:
        fail(f"{run_dir}: no finished cell to transfer to {model}: none has a selected version, or every one was "
             "evolved with that model (its own test score is that grading)")
    results = rebuild_report(open_run(run_dir))
    assert results.transfer is not None  # a graded cell makes the section
    if as_json:
        emit_json(results.transfer.model_dump())
        return
    graded = sum(not c.reused for c in done)
    out.print(f"transfer to {done[0].result.model}: {graded} cell(s) graded, {len(done) - graded} read back")
    print_matrix(results.transfer)
    out.print(f"wrote {run_dir / 'results.json'} and {run_dir / 'report.html'}")


def print_matrix(matrix: TransferMatrix) -> None:
    """Rows: condition × the model it evolved with; columns: the model it was tested with (mean [95% CI])."""
    table = Table(title="evolved on → tested on (test split, mean [95% CI])")
    table.add_column("condition")
    table.add_column("evolved on")
    for m in matrix.models:
        table.add_column(m, justify="right")
    for cond, evolved in matrix.rows():
        cells = []
        for m in matrix.models:
            t = matrix.cell(cond, evolved, m)
            cells.append("–" if t is None or t.mean is None or t.ci_low is None or t.ci_high is None else
                         f"{t.mean:.3f} [{t.ci_low:.3f}, {t.ci_high:.3f}]")
        table.add_row(cond, evolved, *cells)
    out.print(table)
