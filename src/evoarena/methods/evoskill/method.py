"""`evoskill`: skill discovery with a top-k frontier of programs (EvoSkill, as released; see docs/methods/evoskill.md).

State: `memory/evoskill/frontier.json` (at most `frontier_size` programs, each a full set of skill files plus its
val scores) and `memory/evoskill/history.jsonl` (append-only feedback history). The harness's live skills
(`skills/<name>/SKILL.md`) are always the best frontier member's. One practice step = one EvoSkill iteration, its
evaluations run as rollouts; where the protocol counts submitted attempts (the curriculum), the step first submits
one attempt with the live skills, and that attempt is the parent's score on the step's task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, Reply, TaskView, Verdict, method
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import Flaw, flaw
from evoarena.harness import Manifest
from evoarena.harness.state import parse_records, parse_state
from evoarena.methods.front_matter import strip_front_matter
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.methods.scoring import Outcome, rollouts_by_id, scored, valset
from evoarena.search import BoundedFrontier, Scored, StrictImprovement, best_index, mean

FRONTIER = "memory/evoskill/frontier.json"
HISTORY = "memory/evoskill/history.jsonl"
SKILL_RE = re.compile(r"^skills/([^/]+)/SKILL\.md$")
NAME_RE = re.compile(r"^[a-z0-9-]+$")
IMPROVED = StrictImprovement("max")
"""A kept child IMPROVED the run iff its score is strictly above the frontier's best before it (ties refused)."""


class Program(BaseModel):
    """A frontier member: a full set of skills ({name: SKILL.md}), its val scores and their mean."""

    id: str
    parent: str | None
    skills: dict[str, str]
    scores: dict[str, float] = {}
    score: float = 0.0


class Frontier(BaseModel):
    """EvoSkill's state: the frontier, the next program number and the iterations since the last improvement."""

    programs: list[Program]
    next_id: int = 1
    no_improve: int = 0


class HistoryEntry(BaseModel):
    """A line of the feedback history: the proposal, its outcome and the child's val score change."""

    action: str
    target_skill: str
    proposed_skill: str
    justification: str
    outcome: str  # IMPROVED | KEPT | DISCARDED
    score_change: float
    child: str
    parent: str


def history_line(entry: HistoryEntry) -> str:
    """The history's line as it has always been written (keys in order, ASCII): a harness file, so its bytes are
    part of every version's content address."""
    return json.dumps(entry.model_dump()) + "\n"


def read_frontier(tree: Mapping[str, str]) -> Frontier | None:
    text = tree.get(FRONTIER)
    return None if text is None else parse_state(FRONTIER, text, Frontier)


def read_history(tree: Mapping[str, str]) -> list[HistoryEntry]:
    return parse_records(HISTORY, tree.get(HISTORY, ""), HistoryEntry)


def skills_of(tree: Mapping[str, str]) -> dict[str, str]:
    """{name: SKILL.md text} for every `skills/<name>/SKILL.md` in the tree."""
    out = {}
    for path, text in sorted(tree.items()):
        m = SKILL_RE.match(path)
        if m:
            out[m.group(1)] = text
    return out


def best_of(programs: Sequence[Program]) -> int:
    """Index of the program with the highest val score; ties go to the earliest (`search.BestMean`)."""
    return best_index([Scored(p.id, (p.score,)) for p in programs])


def admit(programs: list[Program], child: Program, size: int) -> bool:
    """EvoSkill's acceptance, as released (`search.BoundedFrontier`): add if the frontier has room, else replace
    the worst member if the child is strictly better; otherwise discard. Mutates `programs`."""
    got = BoundedFrontier(size).admit([p.score for p in programs], child.score)
    if got.evicted is not None:
        programs[got.evicted] = child
    elif got.admitted:
        programs.append(child)
    return got.admitted


def parse_proposal(raw: str, existing: Mapping[str, str]) -> tuple[dict[str, str] | None, str]:
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object in the proposer output"
    try:
        obj = json.loads(raw[start : end + 1])
    except json.JSONDecodeError as e:
        return None, f"invalid JSON: {e}"
    if not isinstance(obj, dict):
        return None, "proposal is not a JSON object"
    keys = ("action", "target_skill", "proposed_skill", "justification")
    if any(not isinstance(obj.get(k), str) or not obj[k].strip() for k in keys):
        return None, f"proposal needs non-empty string fields {', '.join(keys)}"
    prop = {k: obj[k].strip() for k in keys}
    if prop["action"] not in ("create", "edit"):
        return None, f"action must be create or edit, not {prop['action']!r}"
    if not NAME_RE.match(prop["target_skill"]):
        return None, f"skill name {prop['target_skill']!r} is not [a-z0-9-]+"
    if prop["action"] == "edit" and prop["target_skill"] not in existing:
        return None, f"edit of unknown skill {prop['target_skill']!r}"
    return prop, ""


def parse_skill(raw: str, name: str) -> tuple[str | None, str]:
    """A SKILL.md with front matter `name` (must equal `name`) and `description`; an outer ``` fence is dropped."""
    text = raw.strip()
    fence = re.match(r"^```[\w-]*\n(.*)\n```$", text, flags=re.S)
    if fence:
        text = fence.group(1).strip()
    m = re.match(r"^---\n(.*?)\n---\n?(.*)$", text, flags=re.S)
    if not m:
        return None, "SKILL.md has no --- front matter"
    fields = dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in m.group(1).splitlines()) if k.strip()
    )
    if fields.get("name") != name:
        return None, f"front matter name {fields.get('name')!r} is not {name!r}"
    if not fields.get("description"):
        return None, "front matter has no description"
    if not m.group(2).strip():
        return None, "SKILL.md has no body"
    return text + "\n", ""


def proposal_flaw(prop: Mapping[str, str]) -> Flaw | None:
    """The shared check of what a proposal says the skill should teach (no refusal, no copy of the template)."""
    return flaw(prop["proposed_skill"], template=template_text(__package__, "propose"))


def skill_flaw(skill: str, existing: str) -> Flaw | None:
    """The shared check of a written skill: no refusal or copy of the template, not the skill it edits again."""
    return flaw(skill, template=template_text(__package__, "write"), parent=existing or None)


def check_proposal(example: ProbeExample, reply: Reply) -> Verdict:
    """Parsed by `parse_proposal` (no skills yet, so a create); usable when what the skill should teach draws on the
    feedback (a word of it not in the task or the output)."""
    if reply.cut_off:
        return refused("proposal cut off at max_tokens")
    prop, why = parse_proposal(reply.text, {})
    if prop is None:
        return refused(why)
    bad = proposal_flaw(prop)
    if bad is not None:
        return judged(False, bad.reason)
    return judged(mentions(f"{prop['proposed_skill']} {prop['justification']}", [example.feedback],
                           [example.task, example.output]), "the proposal says nothing the feedback told")


def check_skill(example: ProbeExample, name: str, reply: Reply) -> Verdict:
    """Parsed by `parse_skill` (front matter naming the skill); usable when its body teaches the proposed lesson."""
    if reply.cut_off:
        return refused("skill cut off at max_tokens")
    skill, why = parse_skill(reply.text, name)
    if skill is None:
        return refused(why)
    bad = skill_flaw(skill, "")
    if bad is not None:
        return judged(False, bad.reason)
    return judged(mentions(skill.split("---", 2)[-1], [example.lesson], [example.task]),
                  "the skill's body does not teach the proposed lesson")


@method("evoskill")
class EvoSkill(Method):
    roles = ("solver", "proposer", "skill_writer")
    skill_kind = "skill set"

    class Params(Method.Params):
        frontier_size: int = Field(3, ge=1, description="Programs kept on the frontier (the best by val score).")
        failure_threshold: float = Field(0.8, description="A sampled task scoring below this is a failure the "
                                                          "proposer sees.")
        extra_samples: int = Field(2, ge=0, description="Train tasks sampled beside the step's task.")
        patience: int = Field(5, ge=1, description="Iterations without improvement before the search stops.")

    params: Params

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """The live skills, one `## <name>` section each (the solver is shown all of them), with their descriptions."""
        parts = []
        for name, text in skills_of(tree).items():
            fields, body = strip_front_matter(text)
            about = fields.get("description", "")
            parts.append(f"## {name}\n\n" + (f"{about}\n\n" if about else "") + body.strip() + "\n")
        if not parts:
            return {"SKILL.md": ""}
        return {"SKILL.md": "# Skills\n\nApply any that fit the task.\n\n" + "\n".join(parts)}

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        """The iteration history and the live skills ({name: SKILL.md}) held in a harness tree."""
        return {"history": [h.model_dump() for h in read_history(tree)], "skills": skills_of(tree)}

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per example: the proposer on it as the one failure of a skill-less agent, the skill writer on its lesson
        as a proposed new skill."""
        out: list[Probe] = []
        for ex in examples:
            failure = {"task": ex.task, "output": ex.output.strip(), "feedback": ex.feedback, "score": "0",
                       "ground_truth": "(not available)", "id": ex.id}
            out.append(Probe(f"propose/{ex.id}", "proposer", render_prompt(
                __package__, "propose", skills=[], history=[], failures=[failure]), partial(check_proposal, ex)))
            name = f"{ex.id}-skill"
            out.append(Probe(f"write/{ex.id}", "skill_writer", render_prompt(
                __package__, "write", action="create", target_skill=name, proposed_skill=ex.lesson,
                justification=ex.feedback, existing=""), partial(check_skill, ex, name)))
        return tuple(out)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        skills = skills_of(tree)
        if not skills:
            return ""
        return render_prompt(__package__, "context", skills=[{"name": n, "body": b.strip()} for n, b in skills.items()])

    def _tree(self, ctx: PracticeContext, skills: Mapping[str, str]) -> dict[str, str]:
        tree = {p: t for p, t in ctx.harness.tree().items() if not SKILL_RE.match(p)}
        tree.update({f"skills/{n}/SKILL.md": t for n, t in skills.items()})
        return tree

    def _attempts(self, ctx: PracticeContext, tasks: Sequence[TaskView], tree: Mapping[str, str],
                  skip: Container[str] = ()) -> dict[str, Outcome]:
        """(score, output, feedback) of a rollout of each task not in `skip`, run concurrently; a provider error
        scores 0."""
        ran = rollouts_by_id(ctx, tasks, tree, skip)
        return {t.id: scored(ctx, t, ran[t.id]) for t in tasks if t.id in ran}

    def _score(self, ctx: PracticeContext, program: Program, known: Mapping[str, Outcome]) -> None:
        """Fill `program`'s val scores on instances it has not met (the curriculum's valset grows), then its mean."""
        tree = self._tree(ctx, program.skills)
        live = program.skills == skills_of(ctx.harness.tree())
        missing = [t for t in valset(ctx) if t.id not in program.scores]
        reused = {t.id: known[t.id] for t in missing if live and t.id in known}
        ran = self._attempts(ctx, missing, tree, skip=reused)
        for t in missing:
            program.scores[t.id] = (reused[t.id] if t.id in reused else ran[t.id])[0]
        program.score = mean([program.scores[t.id] for t in valset(ctx)])

    def _set_live(self, ctx: PracticeContext, skills: Mapping[str, str]) -> None:
        for name in skills_of(ctx.harness.tree()):
            if name not in skills:
                ctx.harness.delete(f"skills/{name}/SKILL.md")
        for name, text in skills.items():
            ctx.harness.write(f"skills/{name}/SKILL.md", text)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        p = self.params
        known: dict[str, Outcome] = {}
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live skills
            known[task.id] = scored(ctx, task, ctx.solve(task))
        state = read_frontier(ctx.harness.tree())
        if state is not None and state.no_improve >= p.patience:
            ctx.log("evoskill_skip", {"reason": f"stopped: {p.patience} iterations without improvement"})
            return None
        seeded = state is None
        if state is None:
            state = Frontier(programs=[Program(id="p0", parent=None, skills=skills_of(ctx.harness.tree()))])
        programs = state.programs
        for program in programs:
            self._score(ctx, program, known)
        ctx.harness.save_state(FRONTIER, state)
        if seeded:
            ctx.log("evoskill_seed", {"val_mean": programs[0].score})
        seed_manifest = Manifest(intent="seed the EvoSkill frontier with the initial harness",
                                 evidence="val scores of the seed") if seeded else None
        parent = programs[best_of(programs)]
        ptree = self._tree(ctx, parent.skills)
        reuse = known if parent.skills == skills_of(ctx.harness.tree()) else {}
        train = [t for t in ctx.train if t.id != task.id]
        extra = min(p.extra_samples, len(train))

        failures = []
        sample = [task, *ctx.rng.sample(train, extra)]
        ran = self._attempts(ctx, sample, ptree, skip=reuse)
        for t in sample:
            score, output, feedback = reuse[t.id] if t.id in reuse else ran[t.id]
            if score < p.failure_threshold:
                try:
                    truth = ctx.label(t)
                except Exception:  # noqa: BLE001 - not every benchmark exposes labels
                    truth = "(not available)"
                failures.append({"task": t.prompt, "output": output, "feedback": feedback, "score": f"{score:g}",
                                 "ground_truth": truth, "id": t.id})
        if not failures:
            ctx.log("evoskill_skip", {"reason": "no failures", "parent": parent.id})
            return seed_manifest

        history = read_history(ctx.harness.tree())
        skill_list = [{"name": n, "body": b.strip()} for n, b in parent.skills.items()]
        prompt = render_prompt(__package__, "propose", skills=skill_list, history=history, failures=failures)
        reply = ctx.ask("proposer", prompt, reject_cut_off="proposal")
        if reply is None:
            return seed_manifest
        prop, why = parse_proposal(reply.text, parent.skills)
        if prop is None:
            ctx.reject("proposal", reply.text, why)
            return seed_manifest
        bad = proposal_flaw(prop)
        if bad is not None:
            ctx.reject("proposal", reply.text, bad.reason, kind=bad.kind)
            return seed_manifest

        name = prop["target_skill"]
        write = render_prompt(
            __package__, "write", existing=parent.skills.get(name, "") if prop["action"] == "edit" else "", **prop)
        reply = ctx.ask("skill_writer", write, note=False, reject_cut_off="skill")  # the writer sees no update note
        if reply is None:
            return seed_manifest
        skill, why = parse_skill(reply.text, name)
        if skill is None:
            ctx.reject("skill", reply.text, why)
            return seed_manifest
        bad = skill_flaw(skill, parent.skills.get(name, "") if prop["action"] == "edit" else "")
        if bad is not None:  # an edit that writes the skill again is not paid for with rollouts
            ctx.reject("skill", reply.text, bad.reason, kind=bad.kind)
            return seed_manifest

        child = Program(id=f"p{state.next_id}", parent=parent.id, skills={**parent.skills, name: skill})
        self._score(ctx, child, {})
        state.next_id += 1
        gain = IMPROVED.decide([q.score for q in programs], [child.score])
        added = admit(programs, child, p.frontier_size)
        improved = added and gain.accepted
        outcome = "IMPROVED" if improved else "KEPT" if added else "DISCARDED"
        state.no_improve = 0 if improved else state.no_improve + 1
        change = child.score - parent.score
        ctx.harness.append(HISTORY, history_line(HistoryEntry(**prop, outcome=outcome, score_change=change,
                                                              child=child.id, parent=parent.id)))
        ctx.harness.save_state(FRONTIER, state)
        ctx.log("evoskill_iteration", {"parent": parent.id, "child": child.id, "action": prop["action"],
                                       "skill": name, "failures": [f["id"] for f in failures],
                                       "parent_score": parent.score, "child_score": child.score,
                                       "outcome": outcome, "frontier": [q.id for q in programs]})
        if not added:
            ctx.log("evoskill_discarded", {"child": child.id, "score": child.score})
            return seed_manifest
        best = programs[best_of(programs)]
        self._set_live(ctx, best.skills)
        return Manifest(
            intent=f"EvoSkill: {prop['action']} skill {name} -> {child.id} ({outcome}); harness = best {best.id}",
            evidence=f"val mean {parent.score:.3f} (parent {parent.id}) -> {child.score:.3f}",
            expected_fixes=[f["id"] for f in failures],
        )
