"""`evoarena study NAME`: the model-free studies of search mechanisms (evoarena.studies), printed or as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from evoarena.cli_common import JsonOpt, emit_json, fail, out

study_app = typer.Typer(no_args_is_help=True, help="Model-free studies of search mechanisms (seconds on a CPU).")


@study_app.command(name="hgm-tree")
def hgm_tree(
    seeds: Annotated[int, typer.Option(min=2, help="Synthetic trees (seeds 0 .. N-1).")] = 30,
    budget: Annotated[int, typer.Option(min=1, help="Bernoulli task evaluations per search.")] = 800,
    as_json: JsonOpt = False,
) -> None:
    """HGM's synthetic tree (seed 000 §6): greedy vs node-level vs clade-level Thompson sampling (and DGM's and
    EvoTest's parent policies) on trees with "bad now, good descendants" branches; the picked node's true success
    rate, its regret, paired differences."""
    from evoarena.studies.hgm_tree import TreeSpec, study, table

    spec = TreeSpec(budget=budget)
    try:
        rows = study(seeds, spec)
    except ValueError as e:
        fail(str(e))
        return
    if as_json:
        emit_json({"study": "hgm-tree", "seeds": seeds, "spec": asdict(spec), "arms": [asdict(r) for r in rows]})
    else:
        out.print(table(rows, seeds, spec), soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(study_app, name="study")
