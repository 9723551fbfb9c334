"""`gepa` (Agrawal et al., 2025): reflective prompt evolution with a per-instance Pareto candidate pool.

State: `memory/gepa/pool.json` (every accepted candidate: id, parent, component texts, per-val-instance scores).
The harness's `system.md` is always the pool's best candidate by mean val score. One practice step = one GEPA
iteration. Differences from the released code are in docs/methods/gepa.md.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.benchmarks.base import TaskView
from evoarena.harness import Manifest
from evoarena.methods.base import Method, render_prompt
from evoarena.models import Message, ModelCallError
from evoarena.protocol.context import PracticeContext

POOL = "memory/gepa/pool.json"
COMPONENTS = ("system.md",)
PERFECT = 1.0


def read_pool(tree: Mapping[str, str]) -> dict[str, Any] | None:
    text = tree.get(POOL)
    return None if text is None else dict(json.loads(text))


def dump_pool(pool: Mapping[str, Any]) -> str:
    return json.dumps(pool, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def best_index(candidates: Sequence[Mapping[str, Any]]) -> int:
    """The candidate with the highest mean val score; ties go to the earliest."""
    best = 0
    for i, c in enumerate(candidates):
        if mean(c["scores"]) > mean(candidates[best]["scores"]):
            best = i
    return best


def pareto_weights(scores: Mapping[str, Sequence[float]]) -> dict[str, int]:
    """GEPA's parent weights: per val instance, the set of co-best candidates (its front); candidates dominated on
    every front they sit in are removed (lowest mean first, as released); each survivor's weight is the number
    of fronts it is in. With no val instances every candidate gets weight 1."""
    ids = list(scores)
    n = len(next(iter(scores.values()), []))
    if n == 0:
        return {i: 1 for i in ids}
    fronts: list[set[str]] = []
    for k in range(n):
        top = max(scores[i][k] for i in ids)
        fronts.append({i for i in ids if scores[i][k] == top})
    alive = set(ids)
    changed = True
    while changed:
        changed = False
        for y in sorted(alive, key=lambda i: (mean(scores[i]), ids.index(i))):
            others = alive - {y}
            mine = [f for f in fronts if y in f]
            if mine and all(f & others for f in mine):
                alive.remove(y)
                changed = True
                break
    return {i: sum(1 for f in fronts if i in f) for i in ids if i in alive}


def sample_parent(scores: Mapping[str, Sequence[float]], rng: random.Random) -> str:
    """A candidate id drawn with probability proportional to its Pareto weight."""
    weights = pareto_weights(scores)
    ids = [i for i in scores if weights.get(i, 0) > 0]
    return rng.choices(ids, weights=[weights[i] for i in ids])[0]


def parse_instruction(raw: str) -> tuple[str | None, str]:
    """The text between the first and last ``` (a language tag on the opening fence is dropped)."""
    start = raw.find("```")
    end = raw.rfind("```")
    if start < 0 or end <= start:
        return None, "no fenced ``` block in the proposer output"
    body = raw[start + 3 : end]
    first, _, rest = body.partition("\n")
    if first.strip() and " " not in first.strip() and rest.strip():  # ```text / ```markdown
        body = rest
    body = body.strip()
    if not body:
        return None, "empty instruction in the fenced block"
    return body + "\n", ""


class Gepa(Method):
    name = "gepa"
    roles = ("solver", "proposer")
    defaults = {"minibatch_size": 3, "use_merge": False}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.params["use_merge"]:
            raise ValueError("methods.gepa.params: use_merge is not implemented (see docs/methods/gepa.md)")

    @property
    def minibatch_size(self) -> int:
        return int(self.params["minibatch_size"])

    def _tree(self, ctx: PracticeContext, components: Mapping[str, str]) -> dict[str, str]:
        tree = dict(ctx.harness.tree())
        tree.update(components)
        return tree

    def _evaluate(
        self, ctx: PracticeContext, components: Mapping[str, str], tasks: Sequence[TaskView]
    ) -> tuple[list[float], list[dict[str, str]]]:
        """Scores on `tasks` (a provider error scores 0) and the reflective examples."""
        tree = self._tree(ctx, components)
        scores: list[float] = []
        examples: list[dict[str, str]] = []
        for task in tasks:
            attempt = ctx.solve(task, tree=tree)
            if attempt.error:
                scores.append(0.0)
                examples.append({"inputs": task.prompt, "outputs": "", "feedback": "(no output: provider error)"})
                continue
            fb = ctx.feedback(task, attempt)
            scores.append(float(fb.score))
            examples.append({"inputs": task.prompt, "outputs": attempt.text.strip(), "feedback": fb.message})
        return scores, examples

    def _seed(self, ctx: PracticeContext) -> dict[str, Any]:
        components = {c: ctx.harness.read(c, "") for c in COMPONENTS}
        scores, _ = self._evaluate(ctx, components, ctx.val)
        seed = {"id": "c0", "parent": None, "components": components, "scores": scores, "next_component": 0}
        pool = {"val_ids": [t.id for t in ctx.val], "candidates": [seed]}
        ctx.harness.write(POOL, dump_pool(pool))
        ctx.log("gepa_seed", {"val_mean": mean(scores)})
        return pool

    def _steps_needed(self, ctx: PracticeContext, seeded: bool) -> int:
        return (0 if seeded else len(ctx.val)) + 2 * self.minibatch_size + len(ctx.val)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        pool = read_pool(ctx.harness.tree())
        if ctx.attempt_limit is not None and ctx.attempt_limit < self._steps_needed(ctx, pool is not None):
            ctx.log("gepa_skip", {"reason": f"attempt_limit={ctx.attempt_limit} is too small for one iteration"})
            return None
        seeded_now = pool is None
        if pool is None:
            pool = self._seed(ctx)
        candidates: list[dict[str, Any]] = pool["candidates"]
        by_id = {c["id"]: c for c in candidates}
        parent = by_id[sample_parent({c["id"]: c["scores"] for c in candidates}, ctx.rng)]
        seed_manifest = (
            Manifest(intent="seed the GEPA pool with the initial harness", evidence="val scores of the seed")
            if seeded_now
            else None
        )

        train = list(ctx.train)
        if not train:
            return seed_manifest
        batch = ctx.rng.sample(train, min(self.minibatch_size, len(train)))
        before, examples = self._evaluate(ctx, parent["components"], batch)
        if all(s >= PERFECT for s in before):
            ctx.log("gepa_iteration", {"parent": parent["id"], "skipped": "all minibatch scores perfect"})
            return seed_manifest

        names = [c for c in COMPONENTS if c in parent["components"]]
        component = names[int(parent.get("next_component", 0)) % len(names)]
        parent["next_component"] = (int(parent.get("next_component", 0)) + 1) % len(names)
        prompt = render_prompt("gepa_reflect.md", instruction=parent["components"][component].strip(),
                               examples=examples)
        if ctx.update_note:
            prompt = f"{ctx.update_note.strip()}\n\n{prompt}"
        proposer = ctx.model("proposer")
        try:
            out = proposer.complete([Message("user", prompt)], proposer.default_params)
        except ModelCallError:
            ctx.harness.write(POOL, dump_pool(pool))
            return seed_manifest
        text, why = parse_instruction(out.text)
        if text is not None and out.finish_reason == "length":
            text, why = None, "proposer output cut off at max_tokens"
        if text is None:
            ctx.reject("instruction", out.text, why)
            ctx.harness.write(POOL, dump_pool(pool))
            return seed_manifest

        child_components = {**parent["components"], component: text}
        after, _ = self._evaluate(ctx, child_components, batch)
        accepted = sum(after) > sum(before)
        ctx.log("gepa_iteration", {"parent": parent["id"], "component": component, "minibatch": [t.id for t in batch],
                                   "before": before, "after": after, "accepted": accepted})
        if not accepted:
            ctx.harness.write(POOL, dump_pool(pool))
            return seed_manifest

        val_scores, _ = self._evaluate(ctx, child_components, ctx.val)
        child = {"id": f"c{len(candidates)}", "parent": parent["id"], "components": child_components,
                 "scores": val_scores, "next_component": 0}
        candidates.append(child)
        ctx.harness.write(POOL, dump_pool(pool))
        best = candidates[best_index(candidates)]
        for name, body in best["components"].items():
            ctx.harness.write(name, body)
        return Manifest(
            intent=f"GEPA: accept {child['id']} (parent {parent['id']}, {component}); harness = best {best['id']}",
            evidence=f"minibatch sum {sum(before):g} -> {sum(after):g}; val mean {mean(val_scores):.3f}",
            expected_fixes=[t.id for t, b, a in zip(batch, before, after, strict=True) if a > b],
        )
