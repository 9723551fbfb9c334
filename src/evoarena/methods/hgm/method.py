"""`hgm` (Huxley-Gödel Machine, Wang et al., arXiv 2510.21614; metauto-ai/HGM @013872d): a tree of harness versions
grown and measured apart — expand a node chosen by Thompson sampling over its *clade's* results (HGM's CMP estimate)
or evaluate a node chosen by Thompson sampling over its *own* results on one task it has not met, expanding while
`n_evals ** 0.6 >= nodes - 1 + pending` (evoarena.search.clade).

State: `memory/hgm/tree.json` (every node: id, parent, its system prompt, {task id: score}, its last failures). One
practice step plans `actions_per_step` actions the way HGM's workers draw them (pending expansions count, pending
evaluations do not), then runs the step's expansions (diagnose, then improve: two proposer calls each) and
evaluations (one rollout per (node, task), all in one `ctx.rollouts` batch, so the run's scheduler runs them at once).
The harness's `system.md` is the node with the best posterior mean (1 + s) / (2 + n) of its own results among those
evaluated at least `min_own_evals` times (never an unevaluated node; the root while none qualifies). Where the
protocol counts submitted attempts (the curriculum), the step first submits one attempt with the live harness and
counts it as that node's evaluation. Differences from the released code: docs/methods/hgm.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, Rollout, TaskView, method
from evoarena.harness import Manifest
from evoarena.harness.state import Absent, parse_state
from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.prompting import render_prompt
from evoarena.methods.replies import parse_instruction
from evoarena.methods.scoring import scored
from evoarena.search import PARENT_POLICIES, NothingToExpand, Scored, expand_now, posterior_mean, to_evaluate
from evoarena.search.tree_log import SEARCH_NODE, SearchNode

STATE = "memory/hgm/tree.json"
_KEEP_FAILURES = 4  # failures kept per node for its diagnosis (the newest)
_CLIP = 1500  # characters of an output or feedback kept for a diagnosis


class Failure(BaseModel):
    """A failed evaluation kept for a diagnosis (each text clipped)."""

    task: str
    output: str
    feedback: str


class Node(BaseModel):
    """One harness version of the tree: its system prompt, its own results {task id: score} and newest failures;
    `problem` is the diagnosis it was made from (not the root's), `version` its id in the run's archive."""

    id: str
    parent: str | None
    system: str
    results: dict[str, float] = {}
    failures: dict[str, Failure] = {}
    problem: Absent[str] = None
    version: Absent[str] = None


class Tree(BaseModel):
    """HGM's state: every node in order of creation and the count of evaluations run."""

    nodes: list[Node]
    n_evals: int = 0


def read_tree(tree: Mapping[str, str]) -> Tree | None:
    text = tree.get(STATE)
    return None if text is None else parse_state(STATE, text, Tree)


ParentPolicy = Literal["clade", "node", "greedy", "dgm", "ucb"]
"""The keys of `search.clade.PARENT_POLICIES`."""


@dataclass(frozen=True)
class _Plan:
    kind: str  # "expand" | "eval"
    node: str
    task: str = ""


@method("hgm")
class Hgm(Method):
    roles = ("solver", "proposer")

    class Params(Method.Params):
        alpha: float = Field(0.6, description="Expand while n_task_evals ** alpha >= nodes - 1 + pending expands.")
        actions_per_step: int = Field(4, ge=1, description="Actions (expansions and evaluations) planned and run "
                                                           "together per practice step.")
        max_task_evals: int = Field(800, ge=0, description="Evaluations over the run.")
        parent_policy: ParentPolicy = Field("clade", description="`clade` (HGM), `node` (Thompson sampling over own "
                                            "results), `greedy` (best own mean), `dgm` or `ucb` (DGM's and EvoTest's, "
                                            "in HGM's loop).")
        min_own_evals: int = Field(1, ge=1, description="Own evaluations a node needs to be the live harness (the "
                                   "best posterior mean among them; the root while none has them).")

    params: Params

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        state = ctx.harness.load_state(STATE, Tree, default=Tree(nodes=[self._root(ctx)]))
        nodes = {n.id: n for n in state.nodes}
        if nodes["n0"].version is None:  # the root joins the run's archive of versions (the initial harness's id)
            nodes["n0"].version = ctx.candidate(self._candidate_tree(ctx, nodes["n0"]), intent="HGM root")
            self._log_node(ctx, nodes["n0"])
        live_before = self._live(nodes)
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            attempt = ctx.solve(task)
            if not attempt.error and task.id not in nodes[live_before].results:
                self._record(ctx, state, nodes[live_before], task, attempt)
        tasks = {t.id: t for t in ctx.train}
        plans = self._plan(ctx, state, nodes, tasks)
        made = self._expand(ctx, state, nodes, [p for p in plans if p.kind == "expand"])
        self._evaluate(ctx, state, nodes, tasks, [p for p in plans if p.kind == "eval"])
        for evaluated in dict.fromkeys(p.node for p in plans if p.kind == "eval"):
            self._log_node(ctx, nodes[evaluated])
        live = self._live(nodes)
        ctx.harness.write("system.md", nodes[live].system)
        ctx.harness.save_state(STATE, state)
        ctx.log("hgm_step", {"plans": [p.__dict__ for p in plans], "made": made, "nodes": len(nodes),
                             "n_evals": state.n_evals, "live": live})
        if live == live_before and not made:
            return None
        best = nodes[live]
        belief = posterior_mean(list(best.results.values()))
        return Manifest(intent=f"HGM: {len(made)} node(s) made; live harness = {live} "
                               f"(parent {best.parent}, posterior mean {belief:.3f})",
                        evidence=f"{len(best.results)} evaluations of {live}; {state.n_evals} in all")

    # -- the tree -------------------------------------------------------------------------------
    @staticmethod
    def _root(ctx: PracticeContext) -> Node:
        return Node(id="n0", parent=None, system=ctx.harness.read("system.md", ""))

    @staticmethod
    def _candidate_tree(ctx: PracticeContext, node: Node) -> dict[str, str]:
        """A node's harness: the live one with the node's `system.md`, without HGM's own state (so a node keeps one
        content address, the version id its rollouts are recorded under)."""
        base = {k: v for k, v in ctx.harness.tree().items() if not k.startswith("memory/hgm/")}
        return {**base, "system.md": node.system}

    def _live(self, nodes: Mapping[str, Node]) -> str:
        """The node with the best posterior mean of its own results among those with at least `min_own_evals` of
        them (the earliest among ties; the root while none has): the release logs each node's mean and count and
        picks no agent itself, and an unevaluated node's prior mean 0.5 is no evidence."""
        known = [n for n in nodes.values() if len(n.results) >= self.params.min_own_evals]
        if not known:
            return "n0"
        return max(known, key=lambda n: posterior_mean(list(n.results.values()))).id

    def _archive(self, nodes: Mapping[str, Node]) -> list[Scored]:
        return [Scored(n.id, tuple(n.results.values()), n.parent) for n in nodes.values()]

    def _plan(self, ctx: PracticeContext, state: Tree, nodes: Mapping[str, Node],
              tasks: Mapping[str, TaskView]) -> list[_Plan]:
        """This step's actions, drawn one after another as HGM's workers draw them."""
        plans: list[_Plan] = []
        pending_expand = 0
        pending_eval: set[tuple[str, str]] = set()
        archive = self._archive(nodes)
        parent_policy = PARENT_POLICIES[self.params.parent_policy]
        for _ in range(self.params.actions_per_step):
            if state.n_evals + len(pending_eval) >= self.params.max_task_evals:
                break
            if expand_now(state.n_evals, len(nodes), pending_expand, self.params.alpha):
                try:
                    plans.append(_Plan("expand", parent_policy.select(archive, ctx.rng).id))
                    pending_expand += 1
                    continue
                except NothingToExpand:  # HGM's root arrives evaluated; here the first steps evaluate it
                    pass
            open_ = [c for c in archive
                     if any(t not in nodes[c.id].results and (c.id, t) not in pending_eval for t in tasks)]
            if not open_:
                break
            node = to_evaluate(open_, ctx.rng).id
            unseen = [t for t in tasks if t not in nodes[node].results and (node, t) not in pending_eval]
            chosen = ctx.rng.choice(unseen)  # eval_random_level 1.0: a random unseen task
            pending_eval.add((node, chosen))
            plans.append(_Plan("eval", node, chosen))
        return plans

    # -- expansion: diagnose a failure of the parent, then rewrite its harness --------------------
    def _expand(self, ctx: PracticeContext, state: Tree, nodes: dict[str, Node],
                plans: Sequence[_Plan]) -> list[str]:
        if not plans:
            return []
        entries = [self._entry(ctx, nodes[p.node]) for p in plans]
        replies = ctx.ask_many("proposer", [render_prompt(
            __package__, "diagnose", harness=nodes[p.node].system.strip(), **entry) for p, entry in zip(
            plans, entries, strict=True)], reject_cut_off="diagnosis")
        problems: list[tuple[_Plan, str]] = []
        for plan, reply in zip(plans, replies, strict=True):
            if reply is None:
                continue
            found = first_json(whole_and_fenced(reply.text), dict)
            problem = str((found or {}).get("problem_description") or (found or {}).get("improvement_proposal") or "")
            if not problem.strip():
                ctx.reject("diagnosis", reply.text, "no JSON object with a problem_description")
                continue
            problems.append((plan, problem.strip()))
        improved = ctx.ask_many("proposer", [render_prompt(
            __package__, "improve", harness=nodes[p.node].system.strip(), problem=problem)
            for p, problem in problems],
            reject_cut_off="harness") if problems else []
        made = []
        for (plan, problem), reply in zip(problems, improved, strict=True):
            if reply is None:
                continue
            text, why = parse_instruction(reply.text, "strict")
            if text is None or text.strip() == nodes[plan.node].system.strip():
                ctx.reject("harness", reply.text, why or "the rewrite repeats its parent")
                ctx.log(SEARCH_NODE, SearchNode(node=None, parents=[plan.node], accepted=False,
                                                text=text or reply.text, component="system.md").payload())
                continue
            cid = f"n{len(nodes)}"
            child = Node(id=cid, parent=plan.node, system=text, problem=problem[:_CLIP])
            child.version = ctx.candidate(self._candidate_tree(ctx, child), parents=[str(nodes[plan.node].version)],
                                             intent=f"HGM {cid} (from {plan.node}): {problem[:200]}")
            nodes[cid] = child
            state.nodes.append(child)
            made.append(cid)
            self._log_node(ctx, child)
        return made

    @staticmethod
    def _log_node(ctx: PracticeContext, node: Node) -> None:
        """The node as the search tree shows it: its parent, its own mean result so far, its system prompt."""
        own = list(node.results.values())
        ctx.log(SEARCH_NODE, SearchNode(node=node.id, parents=[node.parent] if node.parent else [], accepted=True,
                                        score=sum(own) / len(own) if own else None,
                                        score_label=f"own mean (n={len(own)})", text=node.system,
                                        component="system.md", version=node.version).payload())

    @staticmethod
    def _entry(ctx: PracticeContext, node: Node) -> dict[str, str]:
        """The task the diagnosis looks at: one of the node's failures at random (HGM's polyglot rule: a random
        unresolved task), else a note that it has failed none yet."""
        failures = node.failures
        if not failures:
            return {"task": "(no failed task recorded yet)", "output": "", "feedback": ""}
        tid = ctx.rng.choice(sorted(failures))
        return failures[tid].model_dump()

    # -- evaluation: one rollout per (node, task) -----------------------------------------------
    def _evaluate(self, ctx: PracticeContext, state: Tree, nodes: Mapping[str, Node],
                  tasks: Mapping[str, TaskView], plans: Sequence[_Plan]) -> None:
        if not plans:
            return
        items = [Rollout(tasks[p.task], self._candidate_tree(ctx, nodes[p.node])) for p in plans]
        for plan, attempt in zip(plans, ctx.rollouts(items), strict=True):
            self._record(ctx, state, nodes[plan.node], tasks[plan.task], attempt)

    @staticmethod
    def _record(ctx: PracticeContext, state: Tree, node: Node, task: TaskView, attempt: Any) -> None:
        """A node's result on a task (a provider error scores 0, as a failed evaluation does in HGM)."""
        score, output, message = scored(ctx, task, attempt)
        node.results[task.id] = score
        state.n_evals += 1
        if score < 1.0:
            node.failures[task.id] = Failure(task=task.prompt[:_CLIP], output=output[:_CLIP],
                                             feedback=message[:_CLIP])
            for old in sorted(node.failures)[:-_KEEP_FAILURES]:
                del node.failures[old]
