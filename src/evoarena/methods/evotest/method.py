"""The `evotest` method: one practice step is one episode played by the configuration chosen last step; then the
episode feeds the rule-based memory, the win-freeze rules decide whether to exploit the best node, and otherwise the
node with the highest UCB is evolved by the evolver into the child that plays the next episode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import partial
from importlib import resources
from typing import Any, Literal

from pydantic import Field

import evoarena.methods.evotest.memory as mem
from evoarena.api import Attempt, Method, PracticeContext, Probe, ProbeExample, TaskView, method
from evoarena.api.method_base import harness_toml
from evoarena.harness import HarnessWorkspace, Manifest, tree_hash
from evoarena.methods.evotest.probes import check_evolution, probe_history
from evoarena.methods.evotest.reply import ReplyError, Scope, parse_reply
from evoarena.methods.evotest.state import (
    CONFIG,
    DEFAULT_EXTRACTOR,
    DEFAULT_GUIDE,
    EXTRACTOR,
    GUIDE,
    INSTRUCTIONS,
    KNOBS,
    LESSONS,
    PROGRAM,
    STATE,
    STATE_DIR,
    Choice,
    Episode,
    Node,
    State,
    choose_parent,
    config_of,
    end_episode,
    new_state,
    next_move,
    nodes_by_id,
    read_state,
    search_node,
    summary,
    temperature,
    trajectory_path,
    with_temperature,
)
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams, Message
from evoarena.search.tree_log import SEARCH_NODE

PART_OF = {GUIDE: "prompt", EXTRACTOR: "extract_state", KNOBS: "temperature", LESSONS: "memory"}


def program_source() -> str:
    """The step program every configuration runs as `harness.py` (step_program.py's text)."""
    return resources.files("evoarena.methods.evotest").joinpath("step_program.py").read_text("utf-8")


@method("evotest")
class EvoTest(Method):
    """EvoTest (He et al., arXiv 2510.13220; yf-he/EvoTest @f92474c): evolve the whole configuration between
    episodes of the same game, choosing what to evolve by UCB over a tree of configurations. docs/methods/evotest.md."""

    roles = ("solver", "evolver")

    class Params(Method.Params):
        mutate: Scope = Field("released", description="What the evolver changes: `released` the guiding prompt and "
                              "`extract_state`; `paper` also the lessons memory and the temperature; `prompt` the "
                              "guiding prompt only (the seed's prompt-only arm).")
        score_scale: Literal["raw", "unit"] = Field("raw", description="The score UCB's bonus is added to: `raw` the "
                                                    "game's own score (released), `unit` the score over the maximum.")
        selection: Literal["ucb", "greedy"] = Field("ucb", description="The parent to evolve: `ucb` by UCB; `greedy` "
                                                    "the best-scoring node (the paper's −UCB ablation).")
        c: float = Field(1.0, ge=0, description="UCB exploration constant (0 while frozen).")
        alpha: float = Field(0.8, gt=0, le=1, description="UCB's α.")
        memory: bool = Field(True, description="Rule-based cross-episode memory (the released `enable_cross_mem`).")
        failure_loops: int = Field(3, ge=0, description="Negative memory entries the evolver reads.")
        freeze_on_win: bool = Field(True, description="A victory freezes the tree and sets the win threshold.")
        win_freeze_threshold: float = Field(0.0, description="The score past which the best node is exploited.")
        force_best_after_drop: bool = Field(True, description="Exploit the best node after an episode fell "
                                                              "`drop_threshold` below it.")
        drop_threshold: float = Field(0.14, description="The fall that forces the best node.")
        initial_guide: str = Field(DEFAULT_GUIDE, min_length=11, description="The root's guiding prompt.")
        evolve_max_tokens: int = Field(3000, ge=1, description="The evolver's reply cap (a cut-off reply is "
                                                               "rejected).")
        evolve_temperature: float = Field(0.7, description="The evolver's sampling temperature.")

    params: Params

    @property
    def paper(self) -> bool:
        return self.params.mutate == "paper"

    @property
    def code(self) -> bool:
        """Whether the evolver writes a state extractor (every scope but `prompt`)."""
        return self.params.mutate != "prompt"

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        return summary(read_state(tree))

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        ws.write(INSTRUCTIONS, system_prompt)
        ws.write(GUIDE, self.params.initial_guide.strip() + "\n")
        ws.write(KNOBS, harness_toml(solver_params))
        ws.write(EXTRACTOR, DEFAULT_EXTRACTOR)
        ws.write(PROGRAM, program_source())
        if self.params.memory:
            ws.write(mem.SUCCESSES, "")

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """The paper scope's evolved success / failure memory (the rule-based memory is retrieved per step by the
        step program, by similarity to the observation)."""
        return render_prompt(__package__, "context", lessons=tree.get(LESSONS, "").strip()).strip()

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """One evolution per example: the initial configuration and a one-episode history made from the example's
        wrong output and feedback, sent as the evolver's prompt (its system text in front); the reply is read by the
        method's own parser."""
        guide = self.params.initial_guide.strip()
        system = render_prompt(__package__, "evolve_system", paper=self.paper, code=self.code).strip()
        return tuple(
            Probe(f"evolve/{ex.id}", "evolver",
                  system + "\n\n" + render_prompt(__package__, "evolve", paper=self.paper, code=self.code,
                                                  guide=guide, lessons="", temperature=0.0,
                                                  history=probe_history(ex), failures=""),
                  partial(check_evolution, self.params.mutate, guide),
                  max_tokens=self.params.evolve_max_tokens)
            for ex in examples)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        state = read_state(ctx.harness.tree()) or new_state(config_of(ctx.harness.tree()),
                                                             self.params.win_freeze_threshold)
        nodes = nodes_by_id(state)
        node = nodes[state.next]
        rejected: list[str] = []  # the parts of evolver / extractor output rejected in this step
        attempt = self._play(ctx, task, nodes, node, rejected)
        if attempt is None:  # a provider error (the unit is redone or recorded), or no attempt left for a replay
            ctx.harness.save_state(STATE, state)
            return None
        fb = ctx.feedback(task, attempt)
        episode = len(state.episodes) + 1
        score, won = float(fb.score), bool(fb.passed)
        raw = _raw_score(attempt, score)
        node.scores.append(score)
        node.raw_scores.append(raw)
        node.episodes.append(episode)
        ctx.harness.write(trajectory_path(node.id), (attempt.text.strip() or f"(no step was played: "
                                                        f"{attempt.parse_error})") + f"\n\nOutcome: {fb.message}\n")
        added = self._remember(ctx, attempt, episode) if self.params.memory else None
        end_episode(state, node.id, score, won, freeze_on_win=self.params.freeze_on_win)
        choice = self._start_episode(ctx, state, nodes, rejected)
        self._write_live(ctx, nodes[str(state.best)])
        state.episodes.append(Episode(episode=episode, node=node.id, score=score, raw_score=raw, won=won,
                                      steps=_steps(attempt), next=state.next, rejected=rejected,
                                      **choice.model_dump()))
        ctx.harness.save_state(STATE, state)
        view = summary(state)
        remembered = {} if added is None else {"positives": added[0], "negative": added[1]}
        ctx.log("evotest_episode", {**state.episodes[-1].model_dump(), **remembered, "auc": view["auc"],
                                    "late_mean": view["late_mean"], "nodes": len(nodes)})
        child = nodes[state.next]
        for shown in (node, child):
            ctx.log(SEARCH_NODE, search_node(shown).payload())
        return Manifest(intent=f"EvoTest episode {episode}: {node.id} scored {score:.3f}; next {child.id} "
                               f"({child.origin} of {child.parent})",
                        evidence=f"{fb.message}; AUC so far {view['auc']:.3f} over {episode} episode(s)")

    # -- playing a configuration -------------------------------------------------------------------------------
    def _play(self, ctx: PracticeContext, task: TaskView, nodes: dict[str, Node], node: Node,
              rejected: list[str]) -> Attempt | None:
        """The node's episode. Its extractor's smoke run is the episode's first step: when that fails (a harness
        failure before any step), the extractor is not kept — the node falls back to its parent's (or the initial
        one) — and the node plays again, when the step allows another attempt."""
        for _ in range(2):
            play = self._play_tree(ctx, node)
            self._register(ctx, nodes, node, play)
            attempt = ctx.solve(task, tree=play)
            if attempt.error:
                return None
            fallback = self._fallback(nodes, node)
            if not _smoke_failed(attempt) or fallback is None:
                return attempt
            ctx.reject("extract_state", node.config[EXTRACTOR], attempt.parse_error or "")
            rejected.append("extract_state")
            node.config[EXTRACTOR] = fallback
            node.adopted = [a for a in node.adopted if a != "extract_state"]
            node.refused.append(f"extract_state: {attempt.parse_error}")
            if ctx.attempt_limit is not None and ctx.submitted >= ctx.attempt_limit:
                return None
        return attempt

    @staticmethod
    def _fallback(nodes: Mapping[str, Node], node: Node) -> str | None:
        """The extractor to keep when the node's fails: its parent's, else the initial one (None: it is the
        initial one, so the failure is not the extractor's)."""
        own = node.config.get(EXTRACTOR, "")
        parent = nodes.get(node.parent or "")
        for source in (parent.config.get(EXTRACTOR) if parent else None, DEFAULT_EXTRACTOR):
            if source is not None and source != own:
                return str(source)
        return None

    @staticmethod
    def _play_tree(ctx: PracticeContext, node: Node) -> dict[str, str]:
        """The node's configuration with the files every configuration shares (instructions, step program, the
        rule-based memory as it stands), without EvoTest's own state."""
        base = {k: v for k, v in ctx.harness.tree().items() if not k.startswith(STATE_DIR) and k not in CONFIG}
        return {**base, **node.config}

    @staticmethod
    def _register(ctx: PracticeContext, nodes: Mapping[str, Node], node: Node, play: Mapping[str, str]) -> None:
        """The played tree as a candidate version, its parent the node's previous version or its parent's."""
        if node.versions and node.versions[-1] == tree_hash(play):
            return
        parent = nodes.get(node.parent or "")
        parents = node.versions[-1:] or (parent.versions[-1:] if parent else [])
        node.versions.append(ctx.candidate(play, parents=parents, intent=(
            f"EvoTest {node.id} ({node.origin}" + (f" of {node.parent})" if node.parent else ")")),
            evidence=", ".join(node.adopted) or "no evolved part"))

    # -- after the episode --------------------------------------------------------------------------------------
    @staticmethod
    def _remember(ctx: PracticeContext, attempt: Attempt, episode: int) -> tuple[int, str | None]:
        """The rule-based memory: a positive entry per score rise, a negative one for a failing last segment; how
        many positives were added and the negative's reason."""
        ep = mem.played(attempt.answer)
        if ep is None:
            return 0, None
        found = mem.positives(ep)
        for entry in found:
            ctx.harness.append_record(mem.SUCCESSES, entry)
        bad = mem.negative(ep, episode)
        if bad is not None:
            ctx.harness.append_record(mem.FAILURES, bad)
        return len(found), None if bad is None else bad.reason

    def _start_episode(self, ctx: PracticeContext, state: State, nodes: dict[str, Node], rejected: list[str]) -> Choice:
        """The released `start_episode`: exploit the best node (a copy of it plays) when frozen by a win, past the
        win threshold or after a large drop, unless it just unfroze; else evolve the argmax-UCB node (the
        best-scoring one under `selection: greedy`)."""
        p = self.params
        exploit, greedy = next_move(state, freeze_on_win=p.freeze_on_win,
                                    force_best_after_drop=p.force_best_after_drop,
                                    drop_threshold=p.drop_threshold)
        if exploit:
            best = str(state.best)
            self._child(state, nodes, nodes[best], None, "exploit")
            return Choice(action="exploit", source=best)
        c = 0.0 if greedy or p.selection == "greedy" else p.c  # the released UCB is the bare score once frozen
        chosen, ucb = choose_parent(state, c=c, alpha=p.alpha, raw=p.score_scale == "raw")
        parent = nodes[chosen]
        evolved = self._evolve(ctx, parent, rejected)
        child = self._child(state, nodes, parent, evolved, "evolved" if evolved else "copy")
        return Choice(action="evolve", source=parent.id, ucb=ucb, greedy=greedy, adopted=child.adopted)

    @staticmethod
    def _child(state: State, nodes: dict[str, Node], parent: Node, evolved: tuple[dict[str, str], list[str]] | None,
               origin: str) -> Node:
        """A new node under `parent` (as released, every episode's configuration is a node: an exploited or
        unevolved one is a copy of its parent), to be played next."""
        config, adopted = evolved or (dict(parent.config), [])
        child = Node(id=f"n{len(nodes)}", parent=parent.id, depth=parent.depth + 1, origin=origin, config=config,
                     adopted=adopted)
        parent.children.append(child.id)
        nodes[child.id] = child
        state.nodes.append(child)
        state.next = child.id
        return child

    # -- the evolver --------------------------------------------------------------------------------------------
    def evolve_prompt(self, ctx: PracticeContext, parent: Node) -> list[Message]:
        """What the evolver reads: the parent's guiding prompt (and, in the paper scope, its memory and
        temperature), its whole last episode, and the last failure patterns of the rule-based memory."""
        tree = ctx.harness.tree()
        negatives = ctx.harness.load_records(mem.FAILURES, mem.Negative)
        failures = mem.failure_block(negatives, self.params.failure_loops) if self.params.memory else ""
        config = parent.config
        user = render_prompt(__package__, "evolve", paper=self.paper, code=self.code,
                             guide=config.get(GUIDE, "").strip(), lessons=config.get(LESSONS, "").strip(),
                             temperature=temperature(config),
                             history=tree.get(trajectory_path(parent.id), "(no episode recorded)").strip(),
                             failures=failures)
        return [Message("system", render_prompt(__package__, "evolve_system", paper=self.paper,
                                                code=self.code).strip()),
                Message("user", user)]

    def _evolve(self, ctx: PracticeContext, parent: Node,
                rejected: list[str]) -> tuple[dict[str, str], list[str]] | None:
        """The child's configuration and the parts it changed, or None when nothing is kept (a provider error, a
        cut-off or malformed reply, or one that repeats the parent: each recorded as rejected, its part named in
        `rejected`)."""
        reply = ctx.chat_many("evolver", [self.evolve_prompt(ctx, parent)],
                              max_tokens=self.params.evolve_max_tokens,
                              temperature=self.params.evolve_temperature, reject_cut_off="evolver reply",
                              sample_indices=[len(parent.children)])[0]  # evolving a node again: a fresh sample
        if reply is None:
            rejected.append("evolver reply")
            return None
        try:
            evolved = parse_reply(reply.text, self.params.mutate)
        except ReplyError as err:
            ctx.reject("evolver reply", reply.text, str(err))
            rejected.extend([part for part, _ in err.refused] + ["evolver reply"])
            return None
        for part, why in evolved.refused:
            ctx.reject(part, reply.text, why, part=True)
            rejected.append(part)
        config = dict(parent.config)
        if evolved.prompt is not None:
            config[GUIDE] = evolved.prompt + "\n"
        if evolved.extractor is not None:
            config[EXTRACTOR] = evolved.extractor
        if evolved.lessons is not None:
            config[LESSONS] = evolved.lessons + "\n"
        if evolved.temperature is not None:
            config[KNOBS] = with_temperature(config.get(KNOBS, ""), evolved.temperature)
        changed = [PART_OF[p] for p in CONFIG if config.get(p) != parent.config.get(p)]
        if not changed:
            ctx.reject("evolver reply", reply.text, "the reply keeps the parent's configuration as it is")
            rejected.append("evolver reply")
            return None
        return config, changed

    # -- the live harness -----------------------------------------------------------------------------------------
    @staticmethod
    def _write_live(ctx: PracticeContext, best: Node) -> None:
        """The harness the protocol deploys: the best node's configuration (the highest episode score, the earliest
        among ties, as the released `best_node_idx`), with the memory as it stands."""
        live = ctx.harness.tree()
        for path in CONFIG:
            if path in best.config:
                if live.get(path) != best.config[path]:
                    ctx.harness.write(path, best.config[path])
            elif path in live:
                ctx.harness.delete(path)


def _smoke_failed(attempt: Attempt) -> bool:
    """The step program failed before the first step was played (the extractor's smoke run)."""
    return bool(attempt.parse_error and attempt.parse_error.startswith("harness program") and not attempt.text)


def _raw_score(attempt: Attempt, score: float) -> float:
    """The episode's final score on the game's own scale (the answer's `score`), else the normalised `score`."""
    try:
        raw = json.loads(attempt.answer or "{}").get("score")
    except (ValueError, TypeError, AttributeError):
        return score
    return float(raw) if isinstance(raw, int | float) else score


def _steps(attempt: Attempt) -> int:
    try:
        return int(json.loads(attempt.answer or "{}").get("steps", 0))
    except (ValueError, TypeError):
        return 0
