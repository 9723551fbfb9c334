"""Shared by the scripted CLR role tests: one real CLR case (task, program, feedback, members), the scripted
lister and solver, and every update template rendered with realistic values."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from evoarena.benchmarks.clr.benchmark import ClrBenchmark
from evoarena.methods import render_prompt
from evoarena.methods.ace.playbook import Playbook, render_playbook
from evoarena.models import GenParams, Message
from evoarena.scripted.clr.membership import Member, member_line
from evoarena.scripted.clr.student import clr_student

ACE = "evoarena.methods.ace"


DC = "evoarena.methods.dynamic_cheatsheet"


EVOSKILL = "evoarena.methods.evoskill"


GEPA = "evoarena.methods.gepa"


RB = "evoarena.methods.reasoning_bank"


REFLEXION = "evoarena.methods.reflexion"


SKILLPROX = "evoarena.methods.skillprox"


TF_GRPO = "evoarena.methods.tf_grpo"


@dataclass(frozen=True)
class Case:
    """Layer 2 of the first chain, attempted with an empty state: its task, program and feedback."""

    system: str
    task: str
    program: str
    feedback: str
    members: tuple[Member, ...]  # the revealed member m0 of each active rule


@cache
def case() -> Case:
    bench = ClrBenchmark(chains=1)
    task = next(t for t in bench.build() if t.id.endswith("/L2/practice"))
    program = solve(task.prompt, bench.system_prompt())
    fb = bench.grade(task, bench.parse(program).answer, attempt=1)
    slots = bench.release["chains"][0]["slots"][:2]
    members = tuple((s["members"][0], s["label"]) for s in slots)
    assert not fb.passed and all(v in fb.message for v, _ in members)
    return Case(bench.system_prompt(), task.prompt, program, fb.message, members)


def executed(c: Case, feedback: str | None = None) -> str:
    """The solver's output as DC's curator and ReasoningBank see it (`methods.base.generator_output`): the text plus
    what running the program on the practice inputs showed."""
    return f"{c.program.strip()}\n\nExecution output:\n{c.feedback if feedback is None else feedback}"


def ask(prompt: str) -> str:
    """clr-student as a role model: one user message, as every method sends it."""
    return clr_student([Message("user", prompt)], GenParams())


def solve(task: str, system: str = "", context: str = "") -> str:
    user = f"{context.strip()}\n\n{task}" if context.strip() else task
    return clr_student([Message("system", system), Message("user", user)], GenParams())


def excluded_by(program: str) -> dict[str, set[str]]:
    literal = next(line for line in program.splitlines() if line.startswith("EXCLUDED = "))
    return {f: set(v) for f, v in ast.literal_eval(literal.removeprefix("EXCLUDED = ")).items()}


def assert_lists_members(text: str, members: tuple[Member, ...]) -> None:
    for m in members:
        assert member_line(m) in text


def assert_solver_excludes(context: str, members: tuple[Member, ...], system: str = "") -> None:
    """The exception-lister's solver, shown `context` as state, puts every member on its exclusion list."""
    program = solve(case().task, system, context)
    for value, _ in members:
        assert repr(value) in program.split("def solve")[0]


def rendered_templates() -> dict[tuple[str, str], str]:
    """Every update template, rendered with realistic CLR values (the update note in front, as methods put it)."""
    c = case()
    bench = ClrBenchmark(chains=1)
    lesson = bench.update_note("clr:lesson", next(t for t in bench.build() if t.split == "train"))
    ex = [{"inputs": c.task, "outputs": c.program, "feedback": c.feedback}]
    failures = [{"task": c.task, "output": c.program, "feedback": c.feedback, "score": "0", "ground_truth": "",
                 "id": "x"}]
    prompts = {
        ("reflexion", "reflector"): render_prompt(REFLEXION, "reflect", question=c.task, output=c.program,
                                                  feedback=c.feedback),
        ("ace", "reflector"): render_prompt(ACE, "reflect", question=c.task, output=c.program, answer=c.program,
                                            ground_truth=None, feedback=c.feedback, cited="(none)"),
        ("ace", "curator"): ace_curate_prompt("{}", render_playbook(Playbook())),
        ("dynamic_cheatsheet", "curator"): render_prompt(DC, "curate_cumulative", question=c.task,
                                                         output=executed(c), sheet="(empty)"),
        ("gepa", "proposer"): render_prompt(GEPA, "reflect", instruction=c.system.strip(), examples=ex),
        ("tf_grpo", "summarizer"): render_prompt(TF_GRPO, "summarize", question=c.task, experiences="(empty)",
                                                 output=c.program, reward=0.0, feedback=c.feedback),
        ("tf_grpo", "critic"): render_prompt(TF_GRPO, "critique", question=c.task, experiences="(empty)",
                                             summaries="Rollout 1 (reward 0): x", max_words=32),
        ("tf_grpo", "updater"): render_prompt(TF_GRPO, "update", experiences="(empty)", main=False, max_words=32,
                                              proposed=json.dumps({"option": "add", "experience": "x"})),
        ("reasoning_bank", "judge"): render_prompt(RB, "judge", query=c.task, output=executed(c)),
        ("reasoning_bank", "inducer"): render_prompt(RB, "induce_failure", query=c.task, output=executed(c)),
        ("evoskill", "proposer"): render_prompt(EVOSKILL, "propose", skills=[], history=[], failures=failures),
        ("evoskill", "skill_writer"): render_prompt(EVOSKILL, "write", action="create", target_skill="s",
                                                    proposed_skill="p", justification="j", existing=""),
        **skillprox_templates(c),
    }
    return {k: f"{lesson}\n\n{p}" for k, p in prompts.items()}


def skillprox_templates(c: Case, skill: dict[str, str] | None = None,
                        diagnoses: list[dict[str, str]] | None = None) -> dict[tuple[str, str], str]:
    """SkillProx's four update prompts on `skill` (default: the method's initial one) and the layer-2 trajectory."""
    from evoarena.methods.skillprox.method import INITIAL_SKILL
    from evoarena.methods.skillprox.prox import overlaps
    from evoarena.methods.skillprox.skill import render, units

    skill = skill or {"SKILL.md": INITIAL_SKILL["SKILL.md"] + "\n## Counting\nCount every record once.\n"}
    task = {"id": "t/L2/practice", "prompt": c.task, "output": c.program, "feedback": c.feedback, "passed": False,
            "score": "0.500"}
    diagnoses = diagnoses or [{"task": "t/L2/practice", "passed": False, "score": "0.500", "diagnosis": "d",
                               "skill_change": "c"}]
    shown = render(skill)
    target = units(skill)[-1]
    return {
        ("skillprox", "diagnoser"): render_prompt(SKILLPROX, "diagnose", skill=shown, task=task, others=[],
                                                  history=[], feedback=""),
        ("skillprox", "momentum"): render_prompt(SKILLPROX, "momentum", patterns=[], diagnoses=diagnoses,
                                                 feedback="", max_patterns=12),
        ("skillprox", "patcher"): render_prompt(SKILLPROX, "patch", skill=shown, diagnoses=diagnoses, patterns=[],
                                                overlay="", history=[], feedback=""),
        ("skillprox", "shrinker"): render_prompt(
            SKILLPROX, "shrink", skill=shown, target=target, u_cell="-0.0100", u_hard="+0.0000",
            overlaps=overlaps(target, units(skill))[:3], H="1.000", C="1.000", delta_h=0.0,
            delta_c=0.02),
    }


def ace_curate_prompt(reflection: str, playbook: str) -> str:
    return render_prompt(ACE, "curate", token_budget=80000, step=1, total=8, stats="{}", reflection=reflection,
                         playbook=playbook, question=case().task, sections="common mistakes, others")


def case_view() -> Any:
    from evoarena.api import TaskView

    return TaskView("t/L2/practice", "train", "t", case().task)
