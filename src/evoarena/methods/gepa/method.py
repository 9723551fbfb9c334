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

from pydantic import BaseModel, Field

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
from evoarena.harness.state import Absent, parse_state
from evoarena.methods.gepa.merge import MergeState, accepts, attempt, schedule_after_accept, subsample
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.methods.replies import parse_instruction
from evoarena.methods.scoring import rollouts_by_id, valset
from evoarena.search import ParetoSampler, Scored, StrictImprovement, best_index, mean, pareto_weights
from evoarena.search.tree_log import SEARCH_NODE, SearchNode

POOL = "memory/gepa/pool.json"
COMPONENTS = ("system.md",)
PERFECT = 1.0
SELECT = ParetoSampler()
"""Parent selection: proportional to the number of val instances a candidate is co-best on (see search.pareto)."""
ACCEPT = StrictImprovement("sum")
"""Acceptance: the child's minibatch sum strictly above the parent's (a tie is refused)."""


class Candidate(BaseModel):
    """One accepted candidate: its component texts, its score per val task id met so far, and which component its
    next mutation edits (round robin). A merged candidate has a second parent, `merge_parent`."""

    id: str
    parent: str | None
    components: dict[str, str]
    scores: dict[str, float]
    next_component: int = 0
    merge_parent: Absent[str] = None


class Pool(BaseModel):
    """GEPA's state: every accepted candidate, in order of acceptance (`c0` is the seed), and the merge proposer's
    counters once merge is on."""

    candidates: list[Candidate]
    merge: Absent[MergeState] = None


def read_pool(tree: Mapping[str, str]) -> Pool | None:
    text = tree.get(POOL)
    return None if text is None else parse_state(POOL, text, Pool)


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


def aligned(candidates: Sequence[Candidate], ids: Sequence[str]) -> tuple[Scored, ...]:
    """The pool as a search archive: every candidate with its scores on `ids`, in order, in pool order."""
    return tuple(Scored(c.id, tuple(c.scores[i] for i in ids), c.parent) for c in candidates)


@method("gepa")
class Gepa(Method):
    roles = ("solver", "proposer")

    class Params(Method.Params):
        minibatch_size: int = Field(3, ge=1, description="Tasks per reflective mutation, the step's task first "
                                                         "(GEPA's `reflection_minibatch_size`).")
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

    def _evaluate(
        self, ctx: PracticeContext, components: Mapping[str, str], tasks: Sequence[TaskView],
        known: Mapping[str, tuple[Attempt, Feedback]] | None = None,
    ) -> tuple[list[float], list[dict[str, str]]]:
        """Scores on `tasks` by rollouts (a provider error scores 0) and the reflective examples. `known` holds
        results already in hand for these components (the step's submitted attempt), reused as GEPA's cache."""
        tree = self._tree(ctx, components)
        scores: list[float] = []
        examples: list[dict[str, str]] = []
        ran = rollouts_by_id(ctx, tasks, tree, skip=known or {})  # the minibatch at once
        for task in tasks:
            if known and task.id in known:
                attempt, fb = known[task.id]
            else:
                attempt = ran[task.id]
                if attempt.error:
                    scores.append(0.0)
                    examples.append({"inputs": task.prompt, "outputs": "", "feedback": "(no output: provider error)"})
                    continue
                fb = ctx.feedback(task, attempt)
            scores.append(float(fb.score))
            examples.append({"inputs": task.prompt, "outputs": attempt.text.strip(), "feedback": fb.message})
        return scores, examples

    def _fill_scores(self, ctx: PracticeContext, candidates: list[Candidate], known: Mapping[str, Any]) -> None:
        """Score every candidate on val instances it has not met yet (the curriculum's valset grows)."""
        live = {c: ctx.harness.read(c, "") for c in COMPONENTS}
        for cand in candidates:
            missing = [t for t in valset(ctx) if t.id not in cand.scores]
            if missing:
                scores, _ = self._evaluate(ctx, cand.components, missing,
                                           known if cand.components == live else None)
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
        by_id = {c.id: c for c in candidates}
        parent = by_id[SELECT.select(archive, ctx.rng).id]
        outcome = self._iterate(ctx, task, pool, parent, known)
        if outcome is not None and pool.merge is not None:
            schedule_after_accept(pool.merge, self.params.max_merge_invocations)
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

    def _iterate(
        self, ctx: PracticeContext, task: TaskView, pool: Pool, parent: Candidate,
        known: Mapping[str, tuple[Attempt, Feedback]],
    ) -> Manifest | None:
        """One reflective mutation of `parent` on a minibatch led by the step's task; mutates `pool`."""
        candidates = pool.candidates
        others = [t for t in ctx.train if t.id != task.id]
        batch = [task, *ctx.rng.sample(others, min(self.params.minibatch_size - 1, len(others)))]
        live = {c: ctx.harness.read(c, "") for c in COMPONENTS}
        before, examples = self._evaluate(ctx, parent.components, batch,
                                          known if parent.components == live else None)
        if all(s >= PERFECT for s in before):
            ctx.log("gepa_iteration", {"parent": parent.id, "skipped": "all minibatch scores perfect"})
            return None

        names = [c for c in COMPONENTS if c in parent.components]
        component = names[parent.next_component % len(names)]
        parent.next_component = (parent.next_component + 1) % len(names)
        prompt = render_prompt(__package__, "reflect", instruction=parent.components[component].strip(),
                               examples=examples)
        reply = ctx.ask("proposer", prompt, reject_cut_off="instruction")
        if reply is None:
            return None
        text, why = parse_instruction(reply.text, self.params.fences)
        if text is None:
            ctx.reject("instruction", reply.text, why)
            return None
        bad = flaw(text, template=template_text(__package__, "reflect"), parent=parent.components[component])
        if bad is not None:  # no rollouts are paid for a refusal, an echo or a copy of the parent
            ctx.reject("instruction", reply.text, bad.reason, kind=bad.kind)
            if bad.kind == "duplicate":
                ctx.log("gepa_iteration", {"parent": parent.id, "component": component, "skipped": SAME})
            return None

        child_components = {**parent.components, component: text}
        after, _ = self._evaluate(ctx, child_components, batch)
        accepted = ACCEPT.decide(before, after).accepted
        ctx.log("gepa_iteration", {"parent": parent.id, "component": component, "minibatch": [t.id for t in batch],
                                   "before": before, "after": after, "accepted": accepted})
        if not accepted:
            ctx.log(SEARCH_NODE, SearchNode(node=None, parents=[parent.id], accepted=False, score=sum(after),
                                            score_label=f"minibatch sum (parent {sum(before):g})", text=text,
                                            component=component).payload())
            return None

        vals = valset(ctx)
        val_scores, _ = self._evaluate(ctx, child_components, vals)
        child = Candidate(id=f"c{len(candidates)}", parent=parent.id, components=child_components,
                          scores={t.id: s for t, s in zip(vals, val_scores, strict=True)})
        candidates.append(child)
        ctx.log(SEARCH_NODE, SearchNode(node=child.id, parents=[parent.id], accepted=True, score=mean(val_scores),
                                        score_label="val mean", text=text, component=component).payload())
        best = self._adopt_best(ctx, pool, [t.id for t in vals])
        return Manifest(
            intent=f"GEPA: accept {child.id} (parent {parent.id}, {component}); harness = best {best.id}",
            evidence=f"minibatch sum {sum(before):g} -> {sum(after):g}; val mean {mean(val_scores):.3f}",
            expected_fixes=[t.id for t, b, a in zip(batch, before, after, strict=True) if a > b],
        )
