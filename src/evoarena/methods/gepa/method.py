"""`gepa` (Agrawal et al., 2025): reflective prompt evolution with a per-instance Pareto candidate pool.

State: `memory/gepa/pool.json` (every accepted candidate: id, parent, component texts, {val task id: score}).
The harness's `system.md` is always the pool's best candidate by mean val score. One practice step = one GEPA
iteration, its evaluations run as rollouts; where the protocol counts submitted attempts (the curriculum), the
step first submits one attempt with the live harness. Differences from the released code: docs/methods/gepa.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal

from pydantic import Field

from evoarena.api import (
    Attempt,
    Feedback,
    Method,
    PracticeContext,
    Probe,
    ProbeExample,
    Reply,
    TaskView,
    Verdict,
    method,
)
from evoarena.api.probe import judged, refused
from evoarena.api.reply_check import flaw
from evoarena.harness import Manifest
from evoarena.methods.gepa.merge import MergeState, accepts, attempt, schedule_after_accept, subsample
from evoarena.methods.gepa.pool import POOL, Candidate, Pool, aligned
from evoarena.methods.gepa.proposals import Examples, Known, Proposal, evaluate_many, sample
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.methods.replies import parse_instruction
from evoarena.methods.scoring import valset
from evoarena.search import ParetoSampler, StrictImprovement, best_index, mean, pareto_weights
from evoarena.search.tree_log import SEARCH_NODE, SearchNode

COMPONENTS = ("system.md",)
PERFECT = 1.0
SELECT = ParetoSampler()
"""Parent selection: proportional to the number of val instances a candidate is co-best on (see search.pareto)."""
ACCEPT = StrictImprovement("sum")
"""Acceptance: the child's minibatch sum strictly above the parent's (a tie is refused)."""


Fences = Literal["released", "strict"]
"""How a proposer reply becomes an instruction: `released` as GEPA's `output_extractor` (no fenced pair: the whole
reply, minus a lone opening or closing fence); `strict` refuses a reply without a fenced pair."""


SAME = "identical to parent"
"""The skip of a child whose components equal its parent's: not evaluated (`gepa_iteration`'s `skipped`)."""

PROBE_INSTRUCTION = "Solve the task. Reply with the final answer on the last line."


def check_instruction(parent: str, fences: str, reply: Reply) -> Verdict:
    """A probe reply judged as `_iterate` adopts it (not cut off, `parse_instruction`); usable when it passes the
    shared check `_iterate` applies (no refusal, echo or copy of its parent)."""
    if reply.cut_off:
        return refused("instruction cut off at max_tokens")
    text, why = parse_instruction(reply.text, fences)
    if text is None:
        return refused(why)
    bad = flaw(text, template=template_text(__package__, "reflect"), parent=parent)
    return judged(bad is None, bad.reason if bad else "")


@method("gepa")
class Gepa(Method):
    roles = ("solver", "proposer")

    class Params(Method.Params):
        minibatch_size: int = Field(3, ge=1, description="Tasks per reflective mutation, the step's task first "
                                                         "(GEPA's `reflection_minibatch_size`).")
        parents_per_iteration: int = Field(1, ge=1, description="Parents drawn per iteration, each mutated "
                                           "`mutations_per_parent` times (P of gepa's `PxNSampling(p, n)`; 1 x 1 "
                                           "is its default, `SingleMutationSampling`).")
        mutations_per_parent: int = Field(1, ge=1, description="Proposals per parent, each on its own minibatch "
                                          "(N of `PxNSampling`); an iteration's proposals are evaluated together.")
        use_merge: bool = Field(False, description="GEPA's merge of two Pareto candidates with a common ancestor, "
                                "tried after a step that added a candidate (`gepa.optimize`'s default: off).")
        max_merge_invocations: int = Field(5, ge=0, description="Merges that may be accepted in a run "
                                           "(`max_merge_invocations`).")
        merge_val_overlap_floor: int = Field(5, ge=1, description="Val instances two parents must share before a "
                                             "merge (`merge_val_overlap_floor`; a smaller valset never merges).")
        fences: Fences = Field("released", description="`released`: an unfenced reply is the instruction, as GEPA's "
                               "`output_extractor`; `strict`: a reply without a fenced pair is refused.")

    params: Params

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """The proposer on each example alone, then on all of them as one minibatch."""
        batches = [(ex.id, [ex]) for ex in examples] + ([("all", list(examples))] if len(examples) > 1 else [])
        return tuple(
            Probe(f"propose/{name}", "proposer", render_prompt(
                __package__, "reflect", instruction=PROBE_INSTRUCTION,
                examples=[{"inputs": ex.task, "outputs": ex.output.strip(), "feedback": ex.feedback} for ex in batch],
            ), partial(check_instruction, PROBE_INSTRUCTION, self.params.fences))
            for name, batch in batches
        )

    def _tree(self, ctx: PracticeContext, components: Mapping[str, str]) -> dict[str, str]:
        tree = dict(ctx.harness.tree())
        tree.update(components)
        return tree

    def _evaluate(self, ctx: PracticeContext, components: Mapping[str, str], tasks: Sequence[TaskView],
                  known: Known | None = None) -> tuple[list[float], Examples]:
        """Scores on `tasks` by rollouts (a provider error scores 0) and the reflective examples. `known` holds
        results already in hand for these components (the step's submitted attempt), reused as GEPA's cache."""
        return evaluate_many(ctx, [(self._tree(ctx, components), tasks, known)])[0]

    def _fill_scores(self, ctx: PracticeContext, candidates: list[Candidate], known: Known) -> None:
        """Score every candidate on val instances it has not met yet (the curriculum's valset grows), all of them
        in one request (the engine's `_evaluate_programs_on_valset`)."""
        live = {c: ctx.harness.read(c, "") for c in COMPONENTS}
        todo = [(c, [t for t in valset(ctx) if t.id not in c.scores]) for c in candidates]
        todo = [(c, missing) for c, missing in todo if missing]
        if not todo:
            return
        got = evaluate_many(ctx, [(self._tree(ctx, c.components), missing, known if c.components == live else None)
                                  for c, missing in todo])
        for (cand, missing), (scores, _) in zip(todo, got, strict=True):
            cand.scores.update({t.id: s for t, s in zip(missing, scores, strict=True)})

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        known: dict[str, tuple[Attempt, Feedback]] = {}
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            attempt = ctx.solve(task)
            if not attempt.error:
                known[task.id] = (attempt, ctx.feedback(task, attempt))
        seeded_now = not ctx.harness.exists(POOL)
        seed = Candidate(id="c0", parent=None, components={c: ctx.harness.read(c, "") for c in COMPONENTS}, scores={})
        pool = ctx.harness.load_state(POOL, Pool, default=Pool(candidates=[seed]))
        candidates = pool.candidates
        self._fill_scores(ctx, candidates, known)
        ids = [t.id for t in valset(ctx)]
        archive = aligned(candidates, ids)
        if seeded_now:
            ctx.log("gepa_seed", {"val_mean": archive[0].mean})
            ctx.log(SEARCH_NODE, SearchNode(node="c0", parents=[], accepted=True, score=archive[0].mean,
                                            score_label="val mean").payload())
        if self.params.use_merge:
            state = pool.merge = pool.merge or MergeState()
            due = state.due > 0 and state.last_found_new
            state.last_found_new = False
            if due:
                tried, manifest = self._merge(ctx, pool, ids)
                if tried:  # a merge evaluated, accepted or not, is the whole iteration (engine.py)
                    ctx.harness.save_state(POOL, pool)
                    return manifest
        proposals = sample(ctx.rng, SELECT, archive, {c.id: c for c in candidates}, task, ctx.train,
                           self.params.minibatch_size, self.params.parents_per_iteration,
                           self.params.mutations_per_parent)
        outcome = self._iterate(ctx, pool, proposals, known)
        ctx.harness.save_state(POOL, pool)
        if outcome is not None:
            return outcome
        if seeded_now:
            return Manifest(intent="seed the GEPA pool with the initial harness", evidence="val scores of the seed")
        return None

    def _merge(self, ctx: PracticeContext, pool: Pool, ids: Sequence[str]) -> tuple[bool, Manifest | None]:
        """One merge attempt (`MergeProposer.propose` and the engine's acceptance): (whether a merged candidate was
        evaluated, the manifest if it joined the pool)."""
        state = pool.merge
        assert state is not None
        cands = pool.candidates
        index = {c.id: k for k, c in enumerate(cands)}
        archive = aligned(cands, ids)
        weights = pareto_weights(archive)
        front = sorted(index[c] for c, w in weights.items() if w > 0)
        agg = [a.mean for a in archive]
        parents = [[index[p] for p in (c.parent, c.merge_parent) if p is not None] for c in cands]
        found = attempt(
            ctx.rng, [c.components for c in cands], parents, front, agg, state,
            lambda i, j: len(cands[i].scores.keys() & cands[j].scores.keys()) >= self.params.merge_val_overlap_floor)
        if found is None:
            ctx.log("gepa_merge", {"merged": False, "reason": "no merge candidates"})
            return False, None
        components, (i, j, anc) = found
        p1, p2 = cands[i], cands[j]
        sub = subsample(ctx.rng, {k: p1.scores[k] for k in ids}, {k: p2.scores[k] for k in ids})
        tasks = {t.id: t for t in valset(ctx)}
        got, _ = self._evaluate(ctx, components, [tasks[k] for k in dict.fromkeys(sub)])
        by_task = dict(zip(dict.fromkeys(sub), got, strict=True))
        after = [by_task[k] for k in sub]
        before = [sum(p1.scores[k] for k in sub), sum(p2.scores[k] for k in sub)]
        accepted = accepts(after, before)
        ctx.log("gepa_merge", {"merged": True, "parents": [p1.id, p2.id], "ancestor": cands[anc].id,
                               "subsample": sub, "before": before, "after": after, "accepted": accepted})
        if not accepted:  # a refused merge leaves the counters as they were (engine.py)
            ctx.log(SEARCH_NODE, SearchNode(node=None, parents=[p1.id, p2.id], accepted=False, score=sum(after),
                                            score_label=f"subsample sum (parents {before[0]:g}, {before[1]:g})",
                                            component="merge").payload())
            return True, None
        state.due -= 1
        state.tested += 1
        vals = valset(ctx)
        val_scores, _ = self._evaluate(ctx, components, vals)
        child = Candidate(id=f"c{len(cands)}", parent=p1.id, merge_parent=p2.id, components=components,
                          scores={t.id: s for t, s in zip(vals, val_scores, strict=True)})
        cands.append(child)
        ctx.log(SEARCH_NODE, SearchNode(node=child.id, parents=[p1.id, p2.id], accepted=True,
                                        score=mean(val_scores), score_label="val mean", component="merge").payload())
        best = self._adopt_best(ctx, pool, [t.id for t in vals])
        return True, Manifest(
            intent=f"GEPA: merge {p1.id} + {p2.id} (ancestor {cands[anc].id}) into {child.id}; "
                   f"harness = best {best.id}",
            evidence=f"subsample sums {before[0]:g}, {before[1]:g} -> {sum(after):g}; val mean {mean(val_scores):.3f}",
        )

    def _adopt_best(self, ctx: PracticeContext, pool: Pool, ids: Sequence[str]) -> Candidate:
        """The pool's best candidate by mean val score becomes the harness."""
        best = pool.candidates[best_index(aligned(pool.candidates, ids))]
        for name, body in best.components.items():
            ctx.harness.write(name, body)
        return best

    def _iterate(self, ctx: PracticeContext, pool: Pool, proposals: list[Proposal], known: Known) -> Manifest | None:
        """One iteration's reflective mutations (`ReflectiveMutationProposer.propose`, then the engine's
        `_run_reflective_batch` with `AllImprovements`): parents on their minibatches, the proposer's calls, the
        children on the same minibatches, each stage in one batched request; then acceptance in proposal order.
        Mutates `pool`."""
        live = {c: ctx.harness.read(c, "") for c in COMPONENTS}
        keys = [(p.parent.id, tuple(t.id for t in p.batch)) for p in proposals]
        first: dict[tuple[str, tuple[str, ...]], Proposal] = {}
        for key, p in zip(keys, proposals, strict=True):
            first.setdefault(key, p)  # one evaluation per (parent, minibatch)
        done = dict(zip(first, evaluate_many(ctx, [
            (self._tree(ctx, p.parent.components), p.batch, known if p.parent.components == live else None)
            for p in first.values()]), strict=True))
        ready = []
        for p, key in zip(proposals, keys, strict=True):
            p.before, p.examples = done[key]
            if all(s >= PERFECT for s in p.before):
                ctx.log("gepa_iteration", {"parent": p.parent.id, "skipped": "all minibatch scores perfect"})
                continue
            names = [c for c in COMPONENTS if c in p.parent.components]
            p.component = names[p.parent.next_component % len(names)]
            p.parent.next_component = (p.parent.next_component + 1) % len(names)
            ready.append(p)
        if not ready:
            return None
        prompts = [render_prompt(__package__, "reflect", instruction=p.parent.components[p.component].strip(),
                                 examples=p.examples) for p in ready]
        replies = ctx.ask_many("proposer", prompts, reject_cut_off="instruction")
        children = [p for p, reply in zip(ready, replies, strict=True) if self._adopt(ctx, p, reply)]
        if not children:
            return None
        after = evaluate_many(ctx, [(self._tree(ctx, p.child), p.batch, None) for p in children])
        accepted: list[Proposal] = []
        for p, (scores, _) in zip(children, after, strict=True):
            p.after = scores
            if self._accepts(ctx, p, [a.child for a in accepted]):
                accepted.append(p)
        if not accepted:
            return None
        vals = valset(ctx)
        val_scores = evaluate_many(ctx, [(self._tree(ctx, p.child), vals, None) for p in accepted])
        joined = []
        for p, (scores, _) in zip(accepted, val_scores, strict=True):
            child = Candidate(id=f"c{len(pool.candidates)}", parent=p.parent.id, components=p.child,
                              scores={t.id: s for t, s in zip(vals, scores, strict=True)})
            pool.candidates.append(child)
            joined.append((child, p, mean(scores)))
            ctx.log(SEARCH_NODE, SearchNode(node=child.id, parents=[p.parent.id], accepted=True, score=mean(scores),
                                            score_label="val mean", text=p.text, component=p.component).payload())
            if pool.merge is not None:
                schedule_after_accept(pool.merge, self.params.max_merge_invocations)
        best = self._adopt_best(ctx, pool, [t.id for t in vals])
        return accepted_manifest(joined, best.id)

    def _adopt(self, ctx: PracticeContext, p: Proposal, reply: Reply | None) -> bool:
        """Whether the proposer's reply for `p` gives a new component text (kept in `p.text`); otherwise it is
        recorded as rejected and no rollouts are paid for it (a refusal, an echo, a copy of the parent)."""
        if reply is None:
            return False
        text, why = parse_instruction(reply.text, self.params.fences)
        if text is None:
            ctx.reject("instruction", reply.text, why)
            return False
        bad = flaw(text, template=template_text(__package__, "reflect"), parent=p.parent.components[p.component])
        if bad is not None:
            ctx.reject("instruction", reply.text, bad.reason, kind=bad.kind)
            if bad.kind == "duplicate":
                ctx.log("gepa_iteration", {"parent": p.parent.id, "component": p.component, "skipped": SAME})
            return False
        p.text = text
        return True

    @staticmethod
    def _accepts(ctx: PracticeContext, p: Proposal, taken: Sequence[Mapping[str, str]]) -> bool:
        """The acceptance of one evaluated child, logged; a child equal to one already accepted this iteration is
        turned away (the engine's de-duplication)."""
        accepted = ACCEPT.decide(p.before, p.after).accepted
        payload: dict[str, Any] = {"parent": p.parent.id, "component": p.component,
                                   "minibatch": [t.id for t in p.batch], "before": p.before, "after": p.after,
                                   "accepted": accepted}
        if accepted and p.child in taken:
            accepted = payload["accepted"] = False
            payload["duplicate"] = True
        ctx.log("gepa_iteration", payload)
        if not accepted:
            ctx.log(SEARCH_NODE, SearchNode(node=None, parents=[p.parent.id], accepted=False, score=sum(p.after),
                                            score_label=f"minibatch sum (parent {sum(p.before):g})", text=p.text,
                                            component=p.component).payload())
        return accepted


def accepted_manifest(joined: Sequence[tuple[Candidate, Proposal, float]], best: str) -> Manifest:
    """The step's manifest: every child that joined the pool, its minibatch sums and val mean."""
    evidence = [f"minibatch sum {sum(p.before):g} -> {sum(p.after):g}; val mean {m:.3f}" for _, p, m in joined]
    if len(joined) > 1:
        evidence = [f"{c.id}: {e}" for (c, _, _), e in zip(joined, evidence, strict=True)]
    return Manifest(
        intent="GEPA: accept " + ", ".join(f"{c.id} (parent {p.parent.id}, {p.component})" for c, p, _ in joined)
               + f"; harness = best {best}",
        evidence="; ".join(evidence),
        expected_fixes=list(dict.fromkeys(t.id for _, p, _ in joined
                                          for t, b, a in zip(p.batch, p.before, p.after, strict=True) if a > b)),
    )
