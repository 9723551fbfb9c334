"""`protegi` (Pryzant et al., EMNLP 2023): prompt optimisation with textual "gradients" and beam search.

One practice step is one search round, until `rounds` are done: each beam prompt's errors on a train minibatch are
criticised, each critique gives a rewrite, each rewrite Monte-Carlo paraphrases; the beam and the new candidates
are scored on train by a bandit (UCB, or uniform) over one evaluation budget and the best `beam_size` kept. After
the last round the beam member with the best val mean becomes the harness's `system.md` (the paper max-pools its
final beam on test; we never look at test). State: `memory/protegi/state.json`. Differences from the paper and the
released code: docs/methods/protegi.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, TaskView, method
from evoarena.harness import Manifest
from evoarena.methods.protegi.bandit import Allocated, Allocation, allocate
from evoarena.methods.protegi.expand import Proposal, critiques, find_errors, paraphrases, rewrites
from evoarena.methods.protegi.label_check import label_check
from evoarena.methods.protegi.probes import probes
from evoarena.methods.protegi.state import STATE, Candidate, State
from evoarena.methods.scoring import rollouts_of_trees, valset
from evoarena.search import mean
from evoarena.search.tree_log import SEARCH_NODE, SearchNode

PROMPT = "system.md"
MAX_CLASSES = 10
"""A train split with more distinct references than this is not read as a classification task (no label check)."""
Expansion = Literal["feedback", "paraphrase"]


@method("protegi")
class Protegi(Method):
    roles = ("solver", "optimizer")

    class Params(Method.Params):
        rounds: int = Field(3, ge=1, description="Search rounds, one per practice step (the seed's experiment: 3; "
                            "the release: 6).")
        beam_size: int = Field(2, ge=1, description="Prompts kept per round (seed: 2; release: 4).")
        expansion: Expansion = Field("feedback", description="`feedback`: errors → critiques → rewrites → "
                                     "paraphrases; `paraphrase`: the equal-budget arm, as many paraphrases of each "
                                     "beam prompt and no critique.")
        minibatch_size: int = Field(64, ge=1, description="Train tasks a beam prompt is run on to find its errors "
                                    "(release: 64; capped at the train split).")
        critiques: int = Field(2, ge=1, description="Critique calls per beam prompt, each on its own error group "
                               "(the release's `n_gradients`; seed: 2).")
        errors_per_critique: int = Field(4, ge=1, description="Errors shown to one critique call "
                                         "(`errors_per_gradient`).")
        reasons_per_critique: int = Field(1, ge=1, description="Reasons asked of one critique call "
                                          "(`gradients_per_error`).")
        rewrites_per_critique: int = Field(1, ge=1, description="Improved prompts asked per reason "
                                           "(`steps_per_gradient`).")
        paraphrases_per_rewrite: int = Field(1, ge=0, description="Monte-Carlo paraphrases of each rewrite "
                                             "(`mc_samples_per_step`; seed: as many as rewrites).")
        max_expansion: int = Field(8, ge=1, description="New candidates kept per beam prompt and round, a random "
                                   "sample beyond it (`max_expansion_factor`).")
        allocation: Allocation = Field("ucb", description="How the evaluation budget is spread: `ucb` (the "
                                       "paper's bandit) or `uniform` (its Table 2 arm).")
        ucb_c: float = Field(1.0, ge=0, description="The UCB exploration constant (`c`).")
        eval_rounds: int = Field(8, ge=1, description="Evaluation rounds of the bandit (`eval_rounds`).")
        prompts_per_round: int = Field(8, ge=1, description="Candidates scored per evaluation round "
                                       "(`eval_prompts_per_round`).")
        samples_per_eval: int = Field(32, ge=1, description="Train queries per chosen candidate and evaluation "
                                      "round (`samples_per_eval`; capped at the train split).")

    params: Params

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per example: a critique, a rewrite and a paraphrase asked of the optimizer (`probes.py`)."""
        return probes(examples)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            ctx.solve(task)
        state = ctx.harness.load_state(STATE, State) if ctx.harness.exists(STATE) else self._seed(ctx)
        if state.round >= self.params.rounds:
            return None
        state.round += 1
        tree = dict(ctx.harness.tree())
        beam = [state.by_id(i) for i in state.beam]
        new = self._expand(ctx, state, beam, tree)
        pool = beam + [c for c in new if not c.capped]
        allocated = self._score(ctx, pool, tree)
        means = allocated.arms.means()
        order = sorted(range(len(pool)), key=lambda i: (-means[i], i))
        state.beam = [pool[i].id for i in order[: self.params.beam_size]]
        self._record(ctx, state, pool, new, allocated)
        chosen = state.by_id(state.beam[0])
        why = f"round {state.round}: beam {', '.join(state.beam)} by bandit mean on train"
        if state.round == self.params.rounds:
            chosen, why = self._final(ctx, state, tree)
        ctx.harness.write(PROMPT, chosen.text)
        ctx.harness.save_state(STATE, state)
        made = [c for c in new if not c.capped]
        return Manifest(intent=f"ProTeGi round {state.round}: {len(made)} new candidates; prompt = {chosen.id}",
                        evidence=why)

    def _record(self, ctx: PracticeContext, state: State, pool: Sequence[Candidate], new: Sequence[Candidate],
                allocated: Allocated) -> None:
        """The round's selection log (`protegi_round`: every scored candidate, the capped ones, each evaluation
        round's choices and scores, the beam) and a `search_node` per new candidate and beam member."""
        means = allocated.arms.means()
        ctx.log("protegi_round", {
            "round": state.round, "expansion": self.params.expansion, "allocation": self.params.allocation,
            "candidates": [{"id": c.id, "parent": c.parent, "kind": c.kind, "new": c.round == state.round,
                            "score": means[i], "queries": allocated.arms.counts[i],
                            "flip": bool(c.check and c.check.flip and c.round == state.round)}
                           for i, c in enumerate(pool)],
            "capped": [c.id for c in new if c.capped], "bandit": allocated.log, "beam": state.beam})
        for i, c in enumerate(pool):
            kept = c.id in state.beam
            if c.round == state.round or kept:
                ctx.log(SEARCH_NODE, SearchNode(
                    node=c.id, parents=[c.parent] if c.parent else [], accepted=kept or c.round < state.round,
                    score=means[i], score_label=f"bandit mean on train ({allocated.arms.counts[i]:g} queries)",
                    text=c.text, component=c.kind).payload())
        for c in new:
            if c.capped:  # kept as a node, so a scored paraphrase of a capped rewrite has its parent in the tree
                ctx.log(SEARCH_NODE, SearchNode(node=c.id, parents=[c.parent] if c.parent else [], accepted=False,
                                                score_label="capped: not scored", text=c.text,
                                                component=c.kind).payload())

    def _seed(self, ctx: PracticeContext) -> State:
        """The initial prompt as `p0`, and the labels the check reads (the distinct train references)."""
        labels = sorted({ctx.label(t) for t in ctx.train})
        labels = labels if 2 <= len(labels) <= MAX_CLASSES else []
        ctx.log("protegi_labels", {"labels": labels})
        seed = Candidate(id="p0", parent=None, kind="seed", round=0, text=ctx.harness.read(PROMPT, ""))
        ctx.log(SEARCH_NODE, SearchNode(node="p0", parents=[], accepted=True, text=seed.text,
                                        component="seed").payload())
        return State(beam=["p0"], candidates=[seed], labels=labels)

    def _expand(self, ctx: PracticeContext, state: State, beam: Sequence[Candidate],
                tree: Mapping[str, str]) -> list[Candidate]:
        """This round's new candidates, each kept in the state (those over the cap marked `capped`)."""
        p = self.params
        made: list[Candidate] = []

        def add(prop: Proposal) -> Candidate | None:
            known = {c.text for c in state.candidates}
            cand = Candidate(id=state.new_id(), parent=prop.parent.id, kind=prop.kind, round=state.round,
                             text=prop.text, critique=prop.critique,
                             check=label_check(prop.source, prop.text, state.labels) if state.labels else None)
            if prop.text in known:
                ctx.reject(prop.kind, prop.text, "the same text as an earlier candidate", kind="duplicate")
                return None
            state.candidates.append(cand)
            made.append(cand)
            return cand

        if p.expansion == "feedback":
            errors = find_errors(ctx, beam, tree, p.minibatch_size)
            ctx.log("protegi_errors", {"round": state.round,
                                       "errors": {e.parent.id: len(e.examples) for e in errors}})
            said = critiques(ctx, errors, p.critiques, p.errors_per_critique, p.reasons_per_critique)
            firsts = [c for c in map(add, rewrites(ctx, said, p.rewrites_per_critique)) if c is not None]
            if p.paraphrases_per_rewrite:
                for r in paraphrases(ctx, [(c, c.text, c.critique) for c in firsts], p.paraphrases_per_rewrite):
                    add(r)
        else:
            n = p.critiques * p.reasons_per_critique * p.rewrites_per_critique * (1 + p.paraphrases_per_rewrite)
            for r in paraphrases(ctx, [(c, c.text, None) for c in beam], n):
                add(r)
        by_root = {b.id: b.id for b in beam}
        for c in made:  # a paraphrase of a rewrite counts against the rewrite's beam prompt
            by_root[c.id] = by_root[c.parent or ""]
        for b in beam:
            mine = [c for c in made if by_root[c.id] == b.id]
            if len(mine) > p.max_expansion:
                keep = {c.id for c in ctx.rng.sample(mine, p.max_expansion)}
                for c in mine:
                    if c.id not in keep:
                        c.capped = True
        return made

    def _score(self, ctx: PracticeContext, pool: Sequence[Candidate], tree: Mapping[str, str]) -> Allocated:
        """The bandit over the round's pool: each evaluation round one fresh sample of train tasks, every chosen
        candidate on all of it in one request; a candidate's sample score is its mean (a provider error scores 0)."""
        samples = min(self.params.samples_per_eval, len(ctx.train))

        def evaluate(chosen: list[int]) -> list[float]:
            batch = ctx.rng.sample(list(ctx.train), samples)
            return [mean(s) for s in self._run(ctx, [pool[i] for i in chosen], batch, tree)]

        return allocate(len(pool), self.params.eval_rounds, self.params.prompts_per_round, samples,
                        self.params.allocation, self.params.ucb_c, ctx.rng, evaluate)

    @staticmethod
    def _run(ctx: PracticeContext, cands: Sequence[Candidate], tasks: Sequence[TaskView],
             tree: Mapping[str, str]) -> list[list[float]]:
        ran = rollouts_of_trees(ctx, [({**tree, PROMPT: c.text}, tasks, ()) for c in cands])
        return [[0.0 if a[t.id].error else float(ctx.feedback(t, a[t.id]).score) for t in tasks] for a in ran]

    def _final(self, ctx: PracticeContext, state: State, tree: Mapping[str, str]) -> tuple[Candidate, str]:
        """The final beam on val, one request; the best mean wins (ties: the better bandit rank). Never test."""
        beam = [state.by_id(i) for i in state.beam]
        vals = valset(ctx)
        scores = [mean(s) for s in self._run(ctx, beam, vals, tree)]
        best = max(range(len(beam)), key=lambda i: (scores[i], -i))
        ctx.log("protegi_final", {"beam": [{"id": c.id, "val": s} for c, s in zip(beam, scores, strict=True)],
                                  "chosen": beam[best].id, "val_tasks": len(vals)})
        return beam[best], "final beam on val: " + ", ".join(f"{c.id} {s:.3f}" for c, s in
                                                                zip(beam, scores, strict=True))
