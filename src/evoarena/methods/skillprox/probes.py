"""SkillProx's role probes: its diagnoser on one failed trajectory (with a passing one as contrast), its patcher on
that diagnosis; each reply judged by the parser the forward step uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from evoarena.api import Probe, ProbeExample, Reply, Verdict
from evoarena.api.probe import judged, mentions, non_answer, refused
from evoarena.methods.prompting import render_prompt
from evoarena.methods.skillprox.forward import adopt_patch, parse_diagnosis
from evoarena.methods.skillprox.skill import Skill, render


def check_diagnosis(example: ProbeExample, reply: Reply) -> Verdict:
    """Parsed by `parse_diagnosis`; usable when diagnosis or change mention what the feedback told (a
    word of it not in the task or the answer)."""
    parsed, why = parse_diagnosis(reply)
    if parsed is None:
        return refused(why)
    text = " ".join(parsed)
    if non_answer(text):
        return judged(False, "a request or refusal, not a diagnosis")
    return judged(mentions(text, [example.feedback], [example.task, example.output]),
                  "says nothing the feedback told")


def check_patch(skill: Skill, reply: Reply) -> Verdict:
    """Adopted by `adopt_patch` (which refuses a patch that changes nothing): a proposal that differs from its
    parent skill."""
    patch, why = adopt_patch(reply, skill)
    if patch is None or why:
        return refused(why)
    return judged(not non_answer(patch.summary), "a request or refusal, not a patch")


def _trajectory(ex: ProbeExample, passed: bool) -> dict[str, str | bool]:
    return {"id": ex.id, "prompt": ex.task, "output": ex.output.strip(), "feedback": ex.feedback,
            "passed": passed, "score": "1.000" if passed else "0.000"}


def skillprox_probes(skill: Mapping[str, str], examples: Sequence[ProbeExample], max_tokens: int) -> tuple[Probe, ...]:
    """Per example: a diagnosis of its failed trajectory and a patch of the initial skill from its lesson."""
    skill = dict(skill)
    out: list[Probe] = []
    for i, ex in enumerate(examples):
        others = [{**_trajectory(o, True), "feedback": "All checks passed."}
                  for j, o in enumerate(examples) if j != i]
        prompt = render_prompt(__package__, "diagnose", skill=render(skill), task=_trajectory(ex, False),
                               others=others, history=[], feedback="")
        out.append(Probe(f"diagnose/{ex.id}", "diagnoser", prompt, partial(check_diagnosis, ex)))
    for ex in examples:
        diagnoses = [{"task": ex.id, "passed": False, "score": "0.000", "diagnosis": ex.lesson,
                      "skill_change": f"Add to the skill: {ex.lesson}"}]
        prompt = render_prompt(__package__, "patch", skill=render(skill), diagnoses=diagnoses, patterns=[],
                               overlay=ex.lesson, history=[], feedback="")
        out.append(Probe(f"patch/{ex.id}", "patcher", prompt, partial(check_patch, skill), max_tokens=max_tokens))
    return tuple(out)
