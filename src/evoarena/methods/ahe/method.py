"""The `ahe` method: one AHE round per practice step (every `round_every` steps) — evaluate, score the last
manifest, roll back harmful files, let the evolve agent write a manifest, adopt it one change (one version) at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, field_validator

from evoarena.api import Attempt, Method, PracticeContext, Rollout, TaskView, method
from evoarena.harness import (
    ChangeManifest,
    ChangeVerdict,
    Manifest,
    ManifestError,
    PredictionPR,
    RoundScore,
    harmful_files,
    mean_pr,
    pooled_pr,
    rollback_files,
    score_round,
    task_outcomes,
)
from evoarena.methods.ahe.components import (
    STATE,
    LastRound,
    RoundPR,
    State,
    component_tree,
    editable,
    read_state,
    render_context,
    resolve_components,
)
from evoarena.methods.ahe.reply import Proposal, parse_reply
from evoarena.methods.prompting import render_prompt

_CLIP = 600  # characters of a task, an output or a feedback shown to the evolve agent


def _pr_kept(pr: PredictionPR) -> RoundPR:
    """A round's P/R as kept in the state (enough to rebuild it for pooling)."""
    return RoundPR(predicted=list(pr.predicted), actual=list(pr.actual), hits=list(pr.hits), n_tasks=pr.n_tasks,
                   summed_predictions=pr.summed_predictions, summed_hits=pr.summed_hits)


def _pr(kept: RoundPR) -> PredictionPR:
    return PredictionPR(tuple(kept.predicted), tuple(kept.actual), tuple(kept.hits), kept.n_tasks,
                        kept.summed_predictions, kept.summed_hits)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CLIP else text[:_CLIP] + " …"


Verdict = Literal["HARMFUL", "MIXED", "EFFECTIVE", "PARTIALLY_EFFECTIVE", "INEFFECTIVE"]
"""The values of `ChangeVerdict`."""
HARMFUL: Verdict = "HARMFUL"


@method("ahe")
class Ahe(Method):
    """Agentic Harness Engineering: components as files, a change manifest per round, each change scored on the next
    round and harmful files rolled back. Released behaviour and every difference: docs/methods/ahe.md."""

    roles = ("solver", "evolver")

    class Params(Method.Params):
        components: list[str] = Field(default_factory=lambda: ["all"], description="What the evolve agent may edit: "
                                      "`prompt`, `tools`, `middleware`, `memory`, `skills` (also `prompt-only` …), "
                                      "`all`, or the paths themselves.")
        rollouts: int = Field(2, ge=1, description="k, rollouts of each of a round's tasks.")
        max_tasks: int = Field(0, ge=0, description="A round's tasks: the first this many of the train split (0: "
                                                    "all).")
        round_every: int = Field(1, ge=1, description="A round runs on every this-many-th practice step.")
        max_rounds: int = Field(0, ge=0, description="Rounds in all (0: no cap).")
        max_failures: int = Field(8, ge=0, description="Failed tasks shown in detail to the evolve agent (0: all).")
        rollback_verdicts: list[Verdict] = Field(default_factory=lambda: [HARMFUL], description="The verdicts "
                                                 "whose changes are rolled back (add `INEFFECTIVE` for the stricter "
                                                 "reading).")
        evolve_max_tokens: int = Field(2048, ge=1, description="The evolve agent's reply cap.")
        infra_failures: Literal["fail", "exception"] = Field("fail", description="A rollout with no output (a "
                                                            "provider error or time-out): `fail` as the paper "
                                                            "counts it, or `exception`, kept apart as the released "
                                                            "code does.")

        @field_validator("components")
        @classmethod
        def _known(cls, names: list[str]) -> list[str]:
            try:
                resolve_components(names)
            except ValueError as err:
                raise ValueError(str(err).removeprefix("methods.ahe.params.components: ")) from None
            return names

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.components = resolve_components(self.params.components)
        self.rollback_verdicts = tuple(ChangeVerdict(v) for v in self.params.rollback_verdicts)

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        state = read_state(tree)
        kept = {} if state is None else state.model_dump(mode="json")
        return {} if state is None else {k: kept.get(k) for k in ("round", "last", "pooled_pr", "mean_pr")}

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """Every component the harness holds (tools, skills, memory, middleware), never AHE's own state."""
        return render_context(component_tree(tree))

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            ctx.solve(task)
        state = ctx.harness.load_state(STATE, State, default=State())
        cap = self.params.max_rounds
        if ctx.step % self.params.round_every or (cap and state.round >= cap):
            return None
        state.round += 1
        base = component_tree(ctx.harness.tree())
        live = state.live or ctx.candidate(base, intent="AHE seed harness")
        outcomes, failures = self._evaluate(ctx, base)
        score, live, base, rolled = self._score_and_roll_back(ctx, state, outcomes, live, base)
        proposal = self._evolve(ctx, state, outcomes, failures, score, rolled, base)
        snapshot = base
        for change, edit in zip(proposal.manifest.changes, proposal.edits, strict=True):  # one version per change
            base = {p: t for p, t in {**base, **edit}.items() if t is not None}
            live = ctx.candidate(base, parents=[live], intent=f"AHE {change.id} ({change.type}): {change.description}",
                                 evidence=change.failure_pattern)
        self._write(ctx, base)
        n_pass = sum(o == "pass" for o in outcomes.values())
        state.live, state.manifest = live, proposal.manifest.to_dict()
        state.outcomes, state.snapshot = outcomes, snapshot
        state.last = LastRound(round=state.round, pass_rate=n_pass / max(1, len(outcomes)),
                               evaluation=score.summary() if score else "", rolled_back=rolled,
                               adopted=[c.id for c in proposal.manifest.changes],
                               refused=[c.id for c, _ in proposal.refused])
        ctx.harness.save_state(STATE, state)
        changes = proposal.manifest.changes
        return Manifest(
            intent=f"AHE round {state.round}: {len(changes)} change(s) adopted"
                   + (f", {len(rolled)} file(s) rolled back" if rolled else ""),
            evidence=self._evidence(state, n_pass, len(outcomes), score),
            expected_fixes=sorted({t for c in changes for t in c.predicted_fixes}),
            expected_regressions=sorted({t for c in changes for t in c.risk_tasks}))

    # -- the round's evaluation: k rollouts per task, one batch ------------------------------------------------
    def _tasks(self, ctx: PracticeContext) -> tuple[TaskView, ...]:
        """The round's tasks: the train split, or its first `max_tasks` (the same tasks every round, so that a task
        can flip or regress between rounds)."""
        cap = self.params.max_tasks
        return ctx.train[:cap] if cap else ctx.train

    def _evaluate(self, ctx: PracticeContext, tree: Mapping[str, str]) -> tuple[dict[str, str], list[dict[str, str]]]:
        """Task outcomes (`outcomes`) and the first failed rollout of each failed task (task, output, feedback)."""
        tasks = self._tasks(ctx)
        k = self.params.rollouts
        attempts = ctx.rollouts([Rollout(t, tree, i) for t in tasks for i in range(k)])
        rewards: dict[str, list[float | None]] = {}
        failures: dict[str, dict[str, str]] = {}
        for n, attempt in enumerate(attempts):
            t = tasks[n // k]
            reward, message = self._grade(ctx, t, attempt)
            rewards.setdefault(t.id, []).append(reward)
            if (reward is None or reward < 1.0) and t.id not in failures:
                failures[t.id] = {"id": t.id, "task": _clip(t.prompt), "output": _clip(attempt.text),
                                  "feedback": _clip(message)}
        outcomes = self.outcomes(rewards)
        return outcomes, [failures[t] for t in outcomes if outcomes[t] != "pass" and t in failures]

    def outcomes(self, rewards: Mapping[str, Sequence[float | None]]) -> dict[str, str]:
        """Per task: pass iff every rollout passed; a rollout without output (None) is a fail with `infra_failures:
        fail` (the paper: infra failures and time-outs count as fail), else an exception as in the released code."""
        fail = self.params.infra_failures == "fail"
        return dict(task_outcomes(rewards, self.params.rollouts, exception_as_fail=fail))

    @staticmethod
    def _grade(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> tuple[float | None, str]:
        if attempt.error:
            return None, "(no output: provider error)"
        fb = ctx.feedback(task, attempt)
        return float(fb.score), fb.message

    # -- scoring the last manifest and file-level rollback --------------------------------------------------------
    def _score_and_roll_back(self, ctx: PracticeContext, state: State, outcomes: Mapping[str, str],
                             live: str, base: dict[str, str]) -> tuple[RoundScore | None, str, dict[str, str],
                                                                       list[str]]:
        """Score the previous round's manifest on this round, keep its P/R, and restore the files of the changes
        judged `rollback_verdicts` (HARMFUL) from the snapshot taken before them — one version for the rollback."""
        if not state.manifest or state.outcomes is None:
            return None, live, base, []
        score = score_round(ChangeManifest.from_dict(state.manifest), state.outcomes, outcomes)
        state.fix_prs.append(_pr_kept(score.fix))
        state.regression_prs.append(_pr_kept(score.regression))
        fixes, regressions = [_pr(d) for d in state.fix_prs], [_pr(d) for d in state.regression_prs]
        state.pooled_pr = {"fix": pooled_pr(fixes), "regression": pooled_pr(regressions)}
        state.mean_pr = {"fix": mean_pr(fixes), "regression": mean_pr(regressions)}
        files = [f for f in harmful_files(score, self.rollback_verdicts) if f != STATE]
        restored = rollback_files(base, state.snapshot or {}, files) if files else base
        rolled = sorted(p for p in set(base) | set(restored) if base.get(p) != restored.get(p))
        if rolled:
            bad = [c.change_id for c in score.changes if c.verdict in self.rollback_verdicts]
            live = ctx.candidate(restored, parents=[live], intent=f"AHE rollback of {', '.join(bad)}: "
                                 f"{', '.join(rolled)}", evidence=score.summary())
            self._write(ctx, restored)
        ctx.log("ahe_round", {"round": state.round, "outcomes": dict(outcomes), "evaluation": score.to_dict(),
                              "verdicts": {c: v.value for c, v in score.verdicts().items()},
                              "unattributed_regressions": list(score.unattributed_regressions),
                              "fix_precision": score.fix.precision, "fix_recall": score.fix.recall,
                              "regression_precision": score.regression.precision,
                              "regression_recall": score.regression.recall, "rolled_back": rolled,
                              "pooled_pr": state.pooled_pr, "mean_pr": state.mean_pr})
        return score, live, restored, rolled

    # -- the evolve agent -----------------------------------------------------------------------------------------
    def _evolve(self, ctx: PracticeContext, state: State, outcomes: Mapping[str, str],
                failures: Sequence[dict[str, str]], score: RoundScore | None, rolled: Sequence[str],
                base: Mapping[str, str]) -> Proposal:
        empty = Proposal(ChangeManifest((), state.round), ())
        prompt = self.evolve_prompt(state.round, outcomes, failures, score, rolled, base)
        reply = ctx.ask("evolver", prompt, max_tokens=self.params.evolve_max_tokens, reject_cut_off="manifest")
        if reply is None:
            return empty
        try:
            proposal = parse_reply(reply.text, components=self.components, current=base,
                                   snapshot=state.snapshot, iteration=state.round)
        except ManifestError as err:
            ctx.reject("manifest", reply.text, str(err))
            return empty
        for _, why in proposal.refused:
            ctx.reject("change", reply.text, why, part=True)
        return proposal

    def evolve_prompt(self, round_: int, outcomes: Mapping[str, str], failures: Sequence[dict[str, str]],
                      score: RoundScore | None, rolled: Sequence[str], base: Mapping[str, str]) -> str:
        """The overview (pass rate, per-task outcome, the last changes' evaluation), the harness and per-task detail
        of the failures, as the evolve agent reads them."""
        k = self.params.rollouts
        table = [f"- {t}: {o}" for t, o in outcomes.items()]
        files = {p: t for p, t in base.items() if p != "harness.toml"}
        for comp in self.components:
            if not comp.endswith("/") and comp not in files:
                files[comp] = "(empty: not written yet)"
        editable_names = ", ".join(c + "*.md" if c.endswith("/") else c for c in self.components)
        shown = list(failures)[: self.params.max_failures or None]
        return render_prompt(__package__, "evolve", round=round_, k=k,
                             n_pass=sum(o == "pass" for o in outcomes.values()), n_tasks=len(outcomes), table=table,
                             evaluation=self._evaluation_text(score, rolled), files=files, editable=editable_names,
                             failures=shown)

    @staticmethod
    def _evaluation_text(score: RoundScore | None, rolled: Sequence[str]) -> str:
        if score is None:
            return "(none: this is the first round, or your last reply made no change)"
        if not score.changes:
            return "(your last reply made no change)"
        lines = [f"- {c.change_id}: {c.verdict.value} (fixed {c.hit_rate_text} predicted: {', '.join(c.fixed) or '-'};"
                 f" predicted risks that regressed: {', '.join(c.risk_realised) or '-'})" for c in score.changes]
        lines.append(f"Flipped fail->pass: {', '.join(score.flipped) or '-'}; regressed pass->fail: "
                     f"{', '.join(score.regressed) or '-'}; regressions nobody predicted: "
                     f"{', '.join(score.unattributed_regressions) or '-'}.")
        if rolled:
            lines.append(f"Rolled back to their state before those changes: {', '.join(rolled)}.")
        return "\n".join(lines)

    @staticmethod
    def _evidence(state: State, n_pass: int, n_tasks: int, score: RoundScore | None) -> str:
        text = f"round {state.round}: {n_pass}/{n_tasks} tasks pass"
        if score is not None:
            text += f"; last changes: {score.summary() or '(none)'}"
        pooled = state.pooled_pr
        if pooled:
            fix, reg = ("/".join("n/a" if v is None else f"{v:.2f}" for v in pooled[k]) for k in ("fix", "regression"))
            text += f"; pooled fix P/R {fix}, regression P/R {reg}"
        return text

    # -- writing the live harness ------------------------------------------------------------------------------
    def _write(self, ctx: PracticeContext, tree: Mapping[str, str]) -> None:
        """Make the harness's editable files those of `tree` (AHE's state and the other files are left alone)."""
        current = component_tree(ctx.harness.tree())
        for path in sorted(set(current) | set(tree)):
            if tree.get(path) == current.get(path):
                continue
            if path in tree:
                ctx.harness.write(path, tree[path])
            elif editable(path, resolve_components(["all"])):
                ctx.harness.delete(path)
