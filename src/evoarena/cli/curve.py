"""`evoarena curve RUN`: grade every checkpoint a run graded on val on its locked test split too, so the score-vs-spend
curves show test scores; then rebuild the run's report with them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, fail, open_run, out
from evoarena.spec import SpecError


def curve(
    run_dir: RunDirArg,
    import_from: Annotated[list[Path] | None, typer.Option(
        "--import-from", help="A directory `module:Name` references in the run's spec are imported from (the "
        "spec's directory when it ran; repeatable; the current directory is always searched).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Grade on the test split, with each cell's own models, every checkpoint selection graded on val except the
    selected version (the run graded that one): what the score-vs-spend curves need to read test scores rather than
    val. The run's test hash is checked first; calls are ledgered in phase "curve" (outside every budget) and cached;
    a checkpoint graded before is read back. results.json gains (or updates) `spend_curves`, on test; the run's own
    results are unchanged."""
    from evoarena.protocol.run.curve import run_curve
    from evoarena.protocol.run.reporting import rebuild_report

    open_run(run_dir)
    try:
        done = run_curve(run_dir, search=tuple(p.resolve() for p in import_from or ()))
    except (SpecError, ValueError, RuntimeError) as e:
        fail(str(e))
        return
    results = rebuild_report(open_run(run_dir))
    curves = results.spend_curves
    if as_json:
        emit_json(curves.model_dump() if curves else None)
        return
    graded = sum(not c.reused for c in done)
    out.print(f"{graded} checkpoint(s) graded on test, {len(done) - graded} read back; the curves are on "
              f"{curves.split if curves else 'nothing (no checkpoint graded on val)'}")
    out.print(f"wrote {run_dir / 'results.json'} and {run_dir / 'report.html'}")
