"""`evoarena study NAME`: the model-free studies of search and runtime mechanisms (evoarena.studies), printed or as
JSON."""

from __future__ import annotations

from typing import Annotated

import typer

from evoarena.cli.common import JsonOpt, emit_json, fail, out
from evoarena.codec import to_plain

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
        emit_json({"study": "hgm-tree", "seeds": seeds, "spec": to_plain(spec), "arms": to_plain(rows)})
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
                   "rows": [r.row() for r in rows]})
    else:
        out.print(table(rows), soft_wrap=True, highlight=False)


@study_app.command(name="action-fusion")
def action_fusion(
    seeds: Annotated[int, typer.Option(min=1, help="Seeded sessions (seeds 0 .. N-1).")] = 10,
    pairs: Annotated[int, typer.Option(min=1, help="Planned edit→test pairs per session (a crash adds its undo).")
                     ] = 12,
    as_json: JsonOpt = False,
) -> None:
    """SoL-Pi's Action Fusion (seed 000 §10) on seeded edit→test sessions in the sandbox: model round trips fused vs
    unfused, and on every pair the order, a test's output verbatim, skip-after-a-failed-edit and the edited files
    seen by the test. No model is called."""
    from evoarena.studies.action_fusion import reading, study, table

    rows = study(seeds, pairs)
    if as_json:
        emit_json({"study": "action-fusion", "seeds": seeds, "pairs": pairs, "rows": [r.row() for r in rows],
                   "reading": reading(rows)})
    else:
        out.print(table(rows) + "\n\n" + reading(rows), soft_wrap=True, highlight=False)


@study_app.command(name="compaction-gate")
def compaction_gate(
    seeds: Annotated[int, typer.Option(min=1, help="Synthetic sessions (seeds 0 .. N-1).")] = 30,
    ratio: Annotated[list[float] | None, typer.Option(
        min=1.0, help="Cache write/read price ratio (repeat for several; default 1, 1.25, 2, 5, 12.5).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """SoL-Pi's online compaction gate (seed 000 §10) on seeded plan-step sessions: the gate vs never vs always
    compacting at each step boundary — tokens sent (read/write-priced), compactions, the gate's breakeven decisions
    and their agreement with hindsight. No model is called."""
    from evoarena.studies.compaction_gate import RATIOS, reading, study, summarise_rows, table

    ratios = tuple(ratio) if ratio else RATIOS
    rows = study(seeds, ratios)
    if as_json:
        emit_json({"study": "compaction-gate", "seeds": seeds, "ratios": list(ratios),
                   "summary": to_plain(summarise_rows(rows)), "rows": [r.row() for r in rows],
                   "reading": reading(rows)})
    else:
        out.print(table(rows) + "\n\n" + reading(rows), soft_wrap=True, highlight=False)


@study_app.command(name="reducer")
def reducer(
    seeds: Annotated[int, typer.Option(min=1, help="Seeds 0 .. N-1, each a set of built logs.")] = 10,
    logs: Annotated[int, typer.Option(min=2, help="Logs per seed.")] = 24,
    as_json: JsonOpt = False,
) -> None:
    """SoL-Pi's evidence-preserving reducer (seed 000 §10) on built build/test logs with a scripted reducer,
    faithful or unfaithful in each way the checks guard against: receipts accepted, bytes saved, every unfaithful
    receipt rejected and no credential-like log sent. No model is called."""
    from evoarena.runtime.reducer import MAX_EVIDENCE, MAX_REPLY_BYTES, MIN_BYTES
    from evoarena.studies.reducer import reading, study, table

    rows = study(seeds, logs)
    if as_json:
        emit_json({"study": "reducer", "seeds": seeds, "logs": logs,
                   "settings": {"min_bytes": MIN_BYTES, "max_reply_bytes": MAX_REPLY_BYTES,
                                "max_evidence": MAX_EVIDENCE},
                   "rows": [r.row() for r in rows], "reading": reading(rows)})
    else:
        out.print(table(rows) + "\n\n" + reading(rows), soft_wrap=True, highlight=False)
