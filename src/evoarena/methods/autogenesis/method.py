"""`autogenesis` (Zhang et al., Autogenesis: A Self-Evolving Agent Protocol, arXiv 2604.15034; DVampire/Autogenesis
@6a8c122): the harness as registered resources with versions, status and a learnability mask (registry.py), updated by
SEPL's Reflect → Select → Improve → Evaluate → Commit.

One practice step: the live harness is evaluated on a batch (the step's task and `batch_size - 1` other train tasks,
one rollout batch); a reflection call reads the results and selects ONE learnable resource (and prompt section);
an improvement call rewrites it, registered as a new version (patch bump, made current); the batch is evaluated
again; `rollback: never` keeps the new version whatever the result (as released: the optimiser has commit/rollback
APIs but never rolls back), `gated` restores the previous version (the new one ARCHIVED) when the batch score fell.
Differences: docs/methods/autogenesis.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import Field

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest
from evoarena.methods.autogenesis.registry import Registry, RegistryError, join_sections, sections
from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.prompting import render_prompt
from evoarena.methods.replies import parse_instruction

STATE = "memory/autogenesis/registry.json"
RESOURCES = {"prompt": ("prompt", "system.md"), "memory": ("memory", "memory/notes.md")}
_CLIP = 1200
Resource = Literal["prompt", "memory"]
"""The keys of `RESOURCES`."""


@method("autogenesis")
class Autogenesis(Method):
    roles = ("solver", "proposer")

    class Params(Method.Params):
        learnable: list[Resource] = Field(default_factory=lambda: list(get_args(Resource)),
                                          description="The resources the proposer may change (`require_grad` per "
                                                      "resource).")
        frozen_sections: list[str] = Field(default_factory=list, description="Prompt sections no change may touch.")
        rollback: Literal["never", "gated"] = Field("never", description="`never` (as released): a new version "
                                                    "stays; `gated`: restored when the batch's total score fell.")
        batch_size: int = Field(3, ge=1, description="Tasks evaluated per step: the step's task and batch_size - 1 "
                                                     "other train tasks.")

    params: Params

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return tree.get(RESOURCES["memory"][1], "").strip()

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        registry = self._registry(ctx)
        others = [t for t in ctx.train if t.id != task.id]
        batch = [task, *ctx.rng.sample(others, min(self.params.batch_size - 1, len(others)))]
        before, examples = self._evaluate(ctx, batch)
        chosen = self._reflect(ctx, registry, examples)
        if chosen is None:
            ctx.harness.save_state(STATE, registry.file())
            return None
        name, section, reflection, change = chosen
        res = registry.resources[name]
        current = res.text()
        parts = sections(current) if res.type == "prompt" else {}
        target = parts.get(section, current) if section else current
        reply = ctx.ask("proposer", render_prompt(__package__, "improve", target=f"{name}/{section}" if section
                                                  else name, current=target, reflection=reflection, change=change),
                        reject_cut_off="improvement")
        if reply is None:
            ctx.harness.save_state(STATE, registry.file())
            return None
        text, why = parse_instruction(reply.text, "strict")
        if text is None or text.strip() == target.strip():
            ctx.reject("improvement", reply.text, why or "the new text repeats the current one")
            ctx.harness.save_state(STATE, registry.file())
            return None
        new_text = join_sections({**parts, section: text.strip()}) if section else text
        old_version = res.current
        version = registry.set_version(name, new_text, step=ctx.step, description=change[:_CLIP])
        ctx.harness.write(res.path, new_text)
        after, _ = self._evaluate(ctx, batch)
        kept = self.params.rollback == "never" or sum(after) >= sum(before)
        if not kept:  # gated: the previous version comes back, the new one is archived
            registry.restore(name, old_version, archive_current=True)
            ctx.harness.write(res.path, res.text())
        ctx.harness.save_state(STATE, registry.file())
        ctx.log("autogenesis_step", {"resource": name, "section": section, "version": version, "kept": kept,
                                     "before": before, "after": after, "batch": [t.id for t in batch]})
        if not kept:
            return None
        return Manifest(intent=f"Autogenesis: {name}{'/' + section if section else ''} -> {version}",
                        evidence=f"batch {sum(before):g} -> {sum(after):g}; {reflection[:300]}",
                        expected_fixes=[t.id for t, b, a in zip(batch, before, after, strict=True) if a > b])

    # -- the registry --------------------------------------------------------------------------------
    def _registry(self, ctx: PracticeContext) -> Registry:
        text = ctx.harness.read(STATE, "")
        if text:
            return Registry.loads(text, STATE)
        registry = Registry()
        frozen = {str(s).lower() for s in self.params.frozen_sections}
        for name, (type_, path) in RESOURCES.items():
            body = ctx.harness.read(path, "")
            sub = {s: s not in frozen for s in sections(body)} if type_ == "prompt" else None
            registry.register(name, type_, path, body, require_grad=name in self.params.learnable, step=ctx.step,
                              sub_grad=sub)
        return registry

    # -- reflect and select --------------------------------------------------------------------------
    def _reflect(self, ctx: PracticeContext, registry: Registry, examples: Sequence[Mapping[str, Any]]
                 ) -> tuple[str, str, str, str] | None:
        """(resource, section or "", reflection, change) of the reflection's choice; None (recorded) when the reply
        names nothing learnable."""
        shown = [{"name": r.name, "type": r.type, "learnable": r.require_grad, "text": r.text() or "(empty)",
                  "variables": r.sub_grad} for r in registry.resources.values()]
        reply = ctx.ask("proposer", render_prompt(__package__, "reflect", resources=shown, examples=examples),
                        reject_cut_off="reflection")
        if reply is None:
            return None
        found = first_json(whole_and_fenced(reply.text), dict) or {}
        name, section = str(found.get("resource", "")).strip(), str(found.get("section", "") or "").strip().lower()
        try:
            if not registry.learnable(name):
                raise RegistryError(f"{name!r} is not a learnable resource")
            res = registry.resources[name]
            if section and (res.type != "prompt" or not res.sub_grad.get(section, False)):
                raise RegistryError(f"{name}/{section}: not a learnable section")
        except RegistryError as err:
            ctx.reject("selection", reply.text, str(err))
            return None
        return name, section, str(found.get("reflection", "")), str(found.get("change", "") or "improve it")

    @staticmethod
    def _evaluate(ctx: PracticeContext, batch: Sequence[TaskView]) -> tuple[list[float], list[dict[str, Any]]]:
        """The live harness on the batch (one rollout batch; a provider error scores 0) and what the reflection
        reads of it."""
        scores, examples = [], []
        for t, a in zip(batch, ctx.rollouts(list(batch)), strict=True):
            fb = None if a.error else ctx.feedback(t, a)
            scores.append(float(fb.score) if fb else 0.0)
            examples.append({"task": t.prompt[:_CLIP], "output": a.text.strip()[:_CLIP], "passed": bool(fb and
                             fb.passed), "feedback": fb.message[:_CLIP] if fb else "(no output: provider error)"})
        return scores, examples
