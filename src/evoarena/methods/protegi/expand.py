"""One beam prompt's expansion (the released `ProTeGi.expand_candidates`): its errors on a train minibatch, critiques
("gradients") of the prompt from groups of those errors, one rewrite per critique, Monte-Carlo paraphrases of each
rewrite. The `paraphrase` arm replaces all of it with as many paraphrases of the beam prompt itself (no errors, no
critiques). Every model call of a stage is one batched request over the whole beam."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evoarena.api import PracticeContext, Reply
from evoarena.api.reply_check import flaw
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.methods.protegi.state import Candidate, Kind
from evoarena.methods.scoring import rollouts_of_trees

ROLE = "optimizer"
PACKAGE = "evoarena.methods.protegi"
_TAGGED = re.compile(r"<START>(.*?)<END>", re.S)


def tagged(text: str) -> list[str]:
    """The non-empty segments between `<START>` and `<END>` (the release's `parse_tagged_text`)."""
    return [s.strip() for s in _TAGGED.findall(text) if s.strip()]


@dataclass
class Errors:
    """A beam prompt and the train tasks of its minibatch it got wrong, as the error examples the templates show."""

    parent: Candidate
    examples: list[dict[str, str]] = field(default_factory=list)


def find_errors(ctx: PracticeContext, parents: Sequence[Candidate], tree: Mapping[str, str],
                size: int) -> list[Errors]:
    """Each parent on its own minibatch of `size` train tasks, every rollout in one request; a wrong or unparsed
    answer is an error (its true label from `ctx.label`), a provider error is none."""
    batches = [ctx.rng.sample(list(ctx.train), min(size, len(ctx.train))) for _ in parents]
    ran = rollouts_of_trees(ctx, [({**tree, "system.md": p.text}, b, ()) for p, b in zip(parents, batches,
                                                                                          strict=True)])
    out = []
    for parent, batch, attempts in zip(parents, batches, ran, strict=True):
        errors = Errors(parent)
        for task in batch:
            attempt = attempts[task.id]
            if attempt.error or ctx.feedback(task, attempt).passed:
                continue
            shown = attempt.answer if attempt.answer is not None else attempt.text.strip()
            errors.examples.append({"text": task.prompt.strip(), "label": ctx.label(task), "prediction": shown})
        out.append(errors)
    return out


def error_string(examples: Sequence[Mapping[str, str]]) -> str:
    return render_prompt(PACKAGE, "errors", examples=examples)


@dataclass
class Proposal:
    """A new prompt text, the candidate it came from, how it was made, and the critique it answers."""

    parent: Candidate
    kind: Kind
    text: str
    critique: str | None = None
    source: str = ""
    """The text it was made from (its parent's, or the rewrite a paraphrase varies)."""


def _adopt(ctx: PracticeContext, what: str, template: str, reply: Reply | None, text: str | None,
           parent: str) -> str | None:
    if reply is None:
        return None
    if not text:
        ctx.reject(what, reply.text, "no <START>…<END> segment" if what != "paraphrase" else "empty reply")
        return None
    bad = flaw(text, template=template_text(PACKAGE, template), parent=parent)
    if bad is not None:
        ctx.reject(what, reply.text, bad.reason, kind=bad.kind)
        return None
    return text


def critiques(ctx: PracticeContext, errors: Sequence[Errors], per_parent: int, errors_per: int,
              reasons: int) -> list[tuple[Errors, str, str]]:
    """`per_parent` critique calls per parent with errors, each on its own random group of `errors_per` errors,
    each asking for `reasons` reasons: (errors, the error string shown, one reason) per reason read."""
    jobs = []
    for e in errors:
        if not e.examples:
            continue
        for _ in range(per_parent):
            group = ctx.rng.sample(e.examples, min(errors_per, len(e.examples)))
            jobs.append((e, error_string(group)))
    prompts = [render_prompt(PACKAGE, "gradient", prompt=e.parent.text, errors=s, n=reasons) for e, s in jobs]
    replies = ctx.ask_many(ROLE, prompts, sample_indices=list(range(len(prompts))), reject_cut_off="critique")
    out = []
    for (e, s), reply in zip(jobs, replies, strict=True):
        if reply is None:
            continue
        found = tagged(reply.text)[:reasons]
        if not found:
            ctx.reject("critique", reply.text, "no <START>…<END> reason")
        out += [(e, s, r) for r in found]
    return out


def rewrites(ctx: PracticeContext, graded: Sequence[tuple[Errors, str, str]], per_critique: int) -> list[Proposal]:
    """One edit call per critique, asking for `per_critique` improved prompts."""
    prompts = [render_prompt(PACKAGE, "edit", prompt=e.parent.text, errors=s, gradient=r, n=per_critique)
               for e, s, r in graded]
    replies = ctx.ask_many(ROLE, prompts, sample_indices=list(range(len(prompts))), reject_cut_off="rewrite")
    out = []
    for (e, _, r), reply in zip(graded, replies, strict=True):
        texts: list[str | None] = list(tagged(reply.text)[:per_critique]) if reply is not None else []
        for text in texts or [None]:
            kept = _adopt(ctx, "rewrite", "edit", reply, text, e.parent.text)
            if kept is not None:
                out.append(Proposal(e.parent, "rewrite", kept, r, e.parent.text))
    return out


def paraphrases(ctx: PracticeContext, sources: Sequence[tuple[Candidate, str, str | None]],
                n: int) -> list[Proposal]:
    """`n` paraphrases of each (parent, source text, critique): the Monte-Carlo step (`generate_synonyms`)."""
    jobs = [(p, src, crit) for p, src, crit in sources for _ in range(n)]
    prompts = [render_prompt(PACKAGE, "paraphrase", prompt=src) for _, src, _ in jobs]
    replies = ctx.ask_many(ROLE, prompts, sample_indices=list(range(len(prompts))), reject_cut_off="paraphrase")
    out = []
    for (p, src, crit), reply in zip(jobs, replies, strict=True):
        kept = _adopt(ctx, "paraphrase", "paraphrase", reply, reply.text.strip() if reply else None, src)
        if kept is not None:
            out.append(Proposal(p, "paraphrase", kept, crit, src))
    return out
