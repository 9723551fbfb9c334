"""`evoarena study NAME`: the model-free studies of search and runtime mechanisms (evoarena.studies), printed or as
JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from evoarena.cli.common import JsonOpt, emit_json, fail, out

study_app = typer.Typer(no_args_is_help=True, help="Model-free studies of mechanisms (seconds on a CPU).")


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


@study_app.command(name="observation-pack")
def observation_pack(
    seeds: Annotated[int, typer.Option(min=1, help="Seeded sessions (seeds 0 .. N-1), each under both keyings.")] = 10,
    requests: Annotated[int, typer.Option(min=1, help="Context sends (model requests) per session.")] = 100,
    repeat_share: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of outputs that repeat an earlier one."
                                                )] = 0.3,
    as_json: JsonOpt = False,
) -> None:
    """SoL-Pi's ObservationPack (seed 000 §10) over hand-built tool outputs: bytes of tool output the requests carry
    with the pack vs without, the "whole twice, then the handle" rule, and exact paged recall of every stored output.
    No model is called."""
    from evoarena.runtime import EXCERPT_BYTES, FULL_SENDS, PAGE_CHARS, THRESHOLD_BYTES
    from evoarena.studies.observation_pack import study, table

    rows = study(seeds, requests, repeat_share)
    if as_json:
        emit_json({"study": "observation-pack", "seeds": seeds, "requests": requests, "repeat_share": repeat_share,
                   "settings": {"threshold_bytes": THRESHOLD_BYTES, "full_sends": FULL_SENDS,
                                "excerpt_bytes": EXCERPT_BYTES, "page_chars": PAGE_CHARS},
                   "rows": [r.as_dict() for r in rows]})
    else:
        out.print(table(rows), soft_wrap=True, highlight=False)
