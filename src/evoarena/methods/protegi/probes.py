"""ProTeGi's role probes: the optimizer asked, on each probe example, for a critique of a plain prompt (the example
as its one error), a rewrite from that example's lesson as the critique, and a paraphrase of the prompt; each reply
judged as `expand` adopts it (a `<START>…<END>` segment; not a copy of the prompt it improves)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evoarena.api import Probe, ProbeExample, Reply, Verdict
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import flaw
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.methods.protegi.expand import PACKAGE, ROLE, error_string, tagged

PROBE_PROMPT = "Solve the task. Reply with the final answer on the last line."


def check(template: str, ex: ProbeExample, reply: Reply, *, tagged_reply: bool = True) -> Verdict:
    if reply.cut_off:
        return refused("reply cut off at max_tokens")
    texts = tagged(reply.text) if tagged_reply else [reply.text.strip()] if reply.text.strip() else []
    if not texts:
        return refused("no <START>…<END> segment" if tagged_reply else "empty reply")
    bad = flaw(texts[0], template=template_text(PACKAGE, template),
               parent=None if template == "gradient" else PROBE_PROMPT)
    if bad is not None:
        return judged(False, bad.reason)
    if template == "gradient":
        return judged(mentions(texts[0], [ex.feedback], [PROBE_PROMPT]), "says nothing the feedback told")
    return judged(True, "")


def probes(examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
    out: list[Probe] = []
    for ex in examples:
        errors = error_string([{"text": ex.task, "label": f"(grader: {ex.feedback})", "prediction": ex.answer}])
        out += [
            Probe(f"critique/{ex.id}", ROLE, render_prompt(PACKAGE, "gradient", prompt=PROBE_PROMPT, errors=errors,
                                                           n=1), partial(check, "gradient", ex)),
            Probe(f"rewrite/{ex.id}", ROLE, render_prompt(PACKAGE, "edit", prompt=PROBE_PROMPT, errors=errors,
                                                          gradient=ex.lesson, n=1), partial(check, "edit", ex)),
            Probe(f"paraphrase/{ex.id}", ROLE, render_prompt(PACKAGE, "paraphrase", prompt=PROBE_PROMPT),
                  partial(check, "paraphrase", ex, tagged_reply=False)),
        ]
    return tuple(out)
