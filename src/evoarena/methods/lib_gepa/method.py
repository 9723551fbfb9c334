"""`gepa.optimize`: the `gepa` package's own optimiser run under the cell (its splits, budget, ledger and roles).

One practice step runs the library's whole `gepa.optimize` on the train split (reflective minibatches) and the val
split (its Pareto valset; the train split when there is none, as the library defaults); the steps after it change
nothing. The library's best candidate becomes `system.md`, its pool `memory/gepa.optimize/result.json`. The bridge
(`bridge.py`) routes every call through the cell. Differences from calling the library directly:
docs/methods/gepa.optimize.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from evoarena.api import BudgetExhausted, Method, PracticeContext, Probe, ProbeExample, Reply, TaskView, Verdict, method
from evoarena.api.probe import judged, non_answer, refused
from evoarena.harness import Manifest, tree_hash
from evoarena.methods.lib_gepa.bridge import Bridge, QuietLogger
from evoarena.methods.lib_gepa.state import COMPONENT, RESULT, CandidateRecord, OptimizeResult, read_result
from evoarena.models import Message

GUARD_PASSES = 50
"""With no `max_metric_calls`, the library stops at the cell's budget or after this many metric calls per train and
val task (a cell without a budget still ends)."""
PROBE_INSTRUCTION = "Solve the task. Reply with the final answer on the last line."


def budget_stop(err: BaseException) -> bool:
    """Whether a cell call was refused by the cell's budget; any other refusal is passed on."""
    return isinstance(err, BudgetExhausted)


def import_gepa() -> Any:
    """The `gepa` package, imported only when a run needs it; litellm (if anything loads it) reads its local cost
    map instead of fetching one."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import gepa

    return gepa


def check_proposal(reply: Reply) -> Verdict:
    """A probe reply read by the library's own `output_extractor`: usable when it is a new instruction."""
    from gepa.strategies.instruction_proposal import InstructionProposalSignature

    if reply.cut_off:
        return refused("instruction cut off at max_tokens")
    text = InstructionProposalSignature.output_extractor(reply.text)["new_instruction"]
    if not text.strip():
        return refused("empty instruction")
    if non_answer(text):
        return judged(False, "a request or refusal, not an instruction")
    return judged(text.strip() != PROBE_INSTRUCTION, "the proposal repeats its parent")


@method("gepa.optimize")
class GepaOptimize(Method):
    """The `gepa` package's `optimize` with evoarena's cell as its adapter and reflection LM."""

    roles = ("solver", "proposer")
    library = "gepa"

    class Params(Method.Params):
        max_metric_calls: int | None = Field(None, ge=1, description="The library's stop: metric calls (rollouts "
                                             "on train and val). None: the cell's budget stops it (capped at 50 "
                                             "per train and val task).")
        reflection_minibatch_size: int = Field(3, ge=1, description="Train tasks per reflective mutation (the "
                                               "library's epoch-shuffled sampler).")
        candidate_selection_strategy: Literal["pareto", "current_best", "epsilon_greedy", "top_k_pareto"] = Field(
            "pareto", description="How the library picks the parent to mutate.")
        use_merge: bool = Field(False, description="The library's merge of two Pareto candidates with a common "
                                                   "ancestor.")
        max_merge_invocations: int = Field(5, ge=0, description="Merges the library may accept (with `use_merge`).")
        skip_perfect_score: bool = Field(True, description="Skip a mutation when the parent is perfect on the "
                                                           "minibatch.")
        perfect_score: float = Field(1.0, description="The score the library counts as perfect.")
        acceptance_criterion: Literal["strict_improvement", "improvement_or_equal"] = Field(
            "strict_improvement", description="The library's minibatch test: the child's sum above (or at least) "
                                              "the parent's.")
        cache_evaluation: bool = Field(False, description="The library's cache of (candidate, task) scores: a "
                                                          "repeated evaluation costs no metric call.")

    params: Params

    def build_messages(self, tree: Mapping[str, str], task_text: str, task: TaskView) -> list[Message]:
        """The DefaultAdapter's messages: the candidate's text as it is as the system message, the task as the user
        message."""
        return [Message("system", tree.get("system.md", "")), Message("user", task_text)]

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        result = read_result(tree)
        return {} if result is None else result.model_dump(exclude={"candidates"}) | {
            "candidates": len(result.candidates)}

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """The proposer on the library's own reflection prompt: each example alone, then all as one minibatch."""
        import_gepa()
        from gepa.strategies.instruction_proposal import InstructionProposalSignature

        batches = [(ex.id, [ex]) for ex in examples] + ([("all", list(examples))] if len(examples) > 1 else [])
        return tuple(
            Probe(f"propose/{name}", "proposer", str(InstructionProposalSignature.prompt_renderer({
                "current_instruction_doc": PROBE_INSTRUCTION,
                "dataset_with_feedback": [{"Inputs": ex.task, "Generated Outputs": ex.output,
                                           "Feedback": ex.feedback} for ex in batch],
            })), check_proposal)
            for name, batch in batches
        )

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:
            raise ValueError("gepa.optimize runs the library's whole optimisation in one step and submits no "
                             "attempt: the curriculum protocol is not supported")
        if ctx.harness.exists(RESULT):
            return None  # the library's run is done
        bridge = Bridge(ctx)
        seed = ctx.rng.randrange(2**31)
        result: Any = None
        try:
            result = self._optimize(ctx, bridge, seed)
        except Exception:
            if bridge.stopped is None or not budget_stop(bridge.stopped) or not bridge.records:
                raise
        if bridge.stopped is not None and not budget_stop(bridge.stopped):
            raise bridge.stopped
        return self._keep(ctx, bridge, seed, result)

    def _optimize(self, ctx: PracticeContext, bridge: Bridge, seed: int) -> Any:
        gepa = import_gepa()
        from gepa.utils import MaxMetricCallsStopper

        p = self.params
        limit = p.max_metric_calls or GUARD_PASSES * (len(ctx.train) + len(ctx.val))
        return gepa.optimize(
            seed_candidate={COMPONENT: ctx.harness.read("system.md", "")},
            trainset=list(ctx.train), valset=list(ctx.val) or None, adapter=bridge,
            reflection_lm=bridge.reflection_lm, candidate_selection_strategy=p.candidate_selection_strategy,
            skip_perfect_score=p.skip_perfect_score, reflection_minibatch_size=p.reflection_minibatch_size,
            perfect_score=p.perfect_score, use_merge=p.use_merge, max_merge_invocations=p.max_merge_invocations,
            stop_callbacks=[bridge.should_stop, MaxMetricCallsStopper(limit)], logger=QuietLogger(),
            callbacks=[bridge], cache_evaluation=p.cache_evaluation, seed=seed,
            acceptance_criterion=p.acceptance_criterion, display_progress_bar=False,
        )

    def _keep(self, ctx: PracticeContext, bridge: Bridge, seed: int, result: Any) -> Manifest:
        """The library's best candidate as `system.md`, its pool as the result record, each accepted candidate in
        the archive under its parents."""
        records = sorted(bridge.records, key=lambda r: r.index)
        best = int(result.best_idx) if result is not None else (bridge.best or 0)
        stopped = None if bridge.stopped is None else str(bridge.stopped)
        kept = OptimizeResult(
            library_version=self.library_version() or "?", seed=seed, candidates=records, best_idx=best,
            accepted=bridge.accepted, rejected=bridge.rejected, proposals=bridge.proposals,
            total_metric_calls=None if result is None else result.total_metric_calls,
            val_ids=[t.id for t in (ctx.val or ctx.train)], stopped_by=stopped,
        )
        self._lineage(ctx, records)
        by_index = {r.index: r for r in records}
        ctx.harness.write("system.md", by_index[best].text)
        ctx.harness.save_state(RESULT, kept)
        ctx.log("gepa_optimize", {
            "candidates": len(records), "accepted": kept.accepted, "rejected": kept.rejected,
            "proposals": kept.proposals, "best_idx": best, "best_val_mean": by_index[best].val_mean,
            "seed_val_mean": by_index[0].val_mean if 0 in by_index else None,
            "total_metric_calls": kept.total_metric_calls, "stopped_by": stopped,
            "final_candidate": by_index[best].text,
        })
        return Manifest(
            intent=f"gepa.optimize: the library's best candidate {best} of {len(records)} "
                   f"({kept.accepted} accepted)",
            evidence=f"val mean {by_index[best].val_mean:.3f}" + (f"; stopped: {stopped}" if stopped else ""),
        )

    def _lineage(self, ctx: PracticeContext, records: Sequence[CandidateRecord]) -> None:
        """Every candidate after the seed, kept in the run's archive with the candidates it came from (the seed is
        the step's starting version, whose id is its tree's content address)."""
        base = dict(ctx.harness.tree())
        versions: dict[int, str] = {0: tree_hash(base)}
        for r in records:
            if r.index == 0:
                continue
            versions[r.index] = ctx.candidate(
                {**base, "system.md": r.text}, parents=[versions[p] for p in r.parents if p in versions],
                intent=f"gepa.optimize candidate {r.index}", evidence=f"val mean {r.val_mean:.3f}")
