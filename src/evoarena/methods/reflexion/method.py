"""`reflexion` (Shinn et al., 2023): after a failed trial, reflect verbally and retry with the reflection.

State: `memory/reflections.md`, one "- " bullet per reflection, shown to the solver under a header.
Differences from the released code are in docs/methods/reflexion.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from pydantic import Field

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, Reply, TaskView, Verdict, method
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import flaw
from evoarena.harness import Manifest
from evoarena.methods.prompting import render_prompt, template_text

MEMORY = "memory/reflections.md"


def read_reflections(tree: Mapping[str, str]) -> list[str]:
    text = tree.get(MEMORY, "")
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]


def clean_reflection(raw: str, max_chars: int) -> tuple[str | None, str]:
    """One line of reflection, or (None, reason) when the output is unusable."""
    text = " ".join(raw.strip().split())
    if not text:
        return None, "empty reflection"
    if len(text) > max_chars:
        return None, f"reflection longer than {max_chars} characters"
    return text, ""


def reflect_prompt(question: str, output: str, feedback: str) -> str:
    return render_prompt(__package__, "reflect", question=question, output=output.strip(), feedback=feedback)


def check_reflection(example: ProbeExample, max_chars: int, reply: Reply) -> Verdict:
    """A probe reply judged as `practice` adopts it (not cut off, `clean_reflection`), usable when it mentions the
    feedback and passes the shared check `practice` applies (no refusal or echo)."""
    if reply.cut_off:
        return refused("reflection cut off at max_tokens")
    text, why = clean_reflection(reply.text, max_chars)
    if text is None:
        return refused(why)
    bad = flaw(text, template=template_text(__package__, "reflect"))
    if bad is not None:
        return judged(False, bad.reason)
    return judged(mentions(text, [example.feedback], [example.task, example.output]),
                  "says nothing the feedback told")


@method("reflexion")
class Reflexion(Method):
    roles = ("solver", "reflector")

    class Params(Method.Params):
        max_trials: int = Field(2, ge=1, description="Attempts per practice step (fewer where the protocol caps "
                                                     "attempts).")
        max_reflections: int = Field(5, ge=1, description="Reflections kept in memory (the newest).")
        max_tokens: int = Field(250, ge=1, description="The reflector's reply cap.")
        max_chars: int = Field(600, ge=1, description="A reflection longer than this is refused.")

    params: Params

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return render_prompt(__package__, "context", reflections=read_reflections(tree))

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """One reflection per example, on its wrong answer and feedback."""
        return tuple(
            Probe(f"reflect/{ex.id}", "reflector", reflect_prompt(ex.task, ex.output, ex.feedback),
                  partial(check_reflection, ex, self.params.max_chars),
                  max_tokens=self.params.max_tokens, stop=("\n\n",))
            for ex in examples
        )

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        added: list[str] = []
        trials = self.params.max_trials if ctx.attempt_limit is None else min(self.params.max_trials, ctx.attempt_limit)
        for trial in range(trials):
            attempt = ctx.solve(task, sample_index=trial)
            if attempt.error:
                break
            fb = ctx.feedback(task, attempt)
            if fb.passed:
                break
            # reflect after every failed trial: the next trial, the next task or the next stage reads it
            prompt = reflect_prompt(task.prompt, attempt.text, fb.message)
            reply = ctx.ask("reflector", prompt, max_tokens=self.params.max_tokens, stop=("\n\n",),
                            reject_cut_off="reflection")
            if reply is None:  # a provider error, or a cut-off reflection (recorded as rejected)
                break
            reflection, why = clean_reflection(reply.text, self.params.max_chars)
            if reflection is None:
                ctx.reject("reflection", reply.text, why)
                break
            kept = (read_reflections(ctx.harness.tree()) + [reflection])[-self.params.max_reflections :]
            bad = flaw(reflection, template=template_text(__package__, "reflect"), items=kept)
            if bad is not None:
                ctx.reject("reflection", reply.text, bad.reason, kind=bad.kind)
                break
            ctx.harness.write(MEMORY, "".join(f"- {r}\n" for r in kept))
            added.append(reflection)
        if not added:
            return None
        return Manifest(
            intent="add reflections after failed trials",
            evidence=f"failed trial on {task.id}",
            expected_fixes=[task.id],
        )
