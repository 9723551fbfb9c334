"""DSPy 3.4's teleprompters as registered methods, each `Params` named as DSPy names its arguments (defaults as
DSPy's unless said): `dspy.LabeledFewShot`, `dspy.BootstrapFewShot`, `dspy.BootstrapFewShotWithRandomSearch`,
`dspy.MIPROv2`, `dspy.COPRO`, `dspy.SIMBA`, `dspy.GEPA`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from evoarena.api import PracticeContext, Probe, ProbeExample, method
from evoarena.methods.lib_dspy.bridge import cell_lm
from evoarena.methods.lib_dspy.method import DSPyMethod
from evoarena.methods.lib_dspy.probes import proposal_probes


@method("dspy.LabeledFewShot")
class LabeledFewShot(DSPyMethod):
    """`dspy.LabeledFewShot`: k train examples with their labels as demos (no model call)."""

    optimiser = "LabeledFewShot"

    class Params(DSPyMethod.Params):
        k: int = Field(16, ge=0, description="Demos sampled from the trainset (`random.Random(0)`, as DSPy).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        return dspy.LabeledFewShot(k=self.params.k)


class _Bootstrap(DSPyMethod.Params):
    max_bootstrapped_demos: int = Field(4, ge=0, description="Demos from traces the metric passed.")
    max_labeled_demos: int = Field(16, ge=0, description="Caps all demos; labeled ones fill what bootstrapping "
                                                          "left (and seed the teacher).")
    max_rounds: int = Field(1, ge=1, description="Attempts per train example (later ones at temperature 1).")
    metric_threshold: float | None = Field(None, description="A trace passes when the metric is at least this "
                                                             "(None: when it is truthy).")


@method("dspy.BootstrapFewShot")
class BootstrapFewShot(DSPyMethod):
    """`dspy.BootstrapFewShot`: the teacher (the program with labeled demos) runs each train example; a trace the
    metric passes becomes a demo; labeled examples fill the rest."""

    optimiser = "BootstrapFewShot"

    class Params(_Bootstrap):
        """DSPy's `BootstrapFewShot` arguments."""

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        return dspy.BootstrapFewShot(metric=metric, metric_threshold=p.metric_threshold,
                                     max_bootstrapped_demos=p.max_bootstrapped_demos,
                                     max_labeled_demos=p.max_labeled_demos, max_rounds=p.max_rounds)

    def partial(self, teleprompter: Any, trainset: list[Any]) -> Any | None:
        """DSPy's own `_train` on the traces bootstrapped before the stop (the rest of the trainset is the labeled
        pool, shuffled as `_bootstrap` leaves it)."""
        traces = getattr(teleprompter, "name2traces", None)
        if traces is None:
            return None
        done = {d.question for demos in traces.values() for d in demos}
        teleprompter.validation = [x for x in trainset if x.question not in done]
        random.Random(0).shuffle(teleprompter.validation)
        return teleprompter._train()


@method("dspy.BootstrapFewShotWithRandomSearch")
class BootstrapFewShotWithRandomSearch(DSPyMethod):
    """`dspy.BootstrapFewShotWithRandomSearch`: zero-shot, labeled-only, unshuffled and shuffled bootstrapped demo
    sets, each scored on val; the best is kept."""

    optimiser = "BootstrapFewShotWithRandomSearch"

    class Params(_Bootstrap):
        num_candidate_programs: int = Field(16, ge=1, description="Random bootstrapped demo sets tried (besides "
                                                                  "the three fixed ones).")
        stop_at_score: float | None = Field(None, description="Stop once a candidate scores at least this.")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        return dspy.BootstrapFewShotWithRandomSearch(
            metric=metric, max_bootstrapped_demos=p.max_bootstrapped_demos, max_labeled_demos=p.max_labeled_demos,
            max_rounds=p.max_rounds, num_candidate_programs=p.num_candidate_programs, num_threads=1,
            stop_at_score=p.stop_at_score, metric_threshold=p.metric_threshold)

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset, valset=valset or None)


class _Proposing(DSPyMethod):
    """An optimiser with a prompt model: DSPy's `prompt_model` is the cell's `proposer` role, probed with the
    optimiser's own proposal signature (`probes.proposal_probes`)."""

    roles = ("solver", "proposer")

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        return proposal_probes(self.optimiser, examples)


@method("dspy.MIPROv2")
class MIPROv2(_Proposing):
    """`dspy.MIPROv2`: bootstrapped demo sets and proposed instructions, combined by Optuna's TPE search on val."""

    optimiser = "MIPROv2"

    class Params(DSPyMethod.Params):
        auto: Literal["light", "medium", "heavy"] | None = Field("light", description="DSPy's preset run size "
                                                                 "(None: `num_candidates` and `num_trials`).")
        num_candidates: int | None = Field(None, ge=1, description="Instruction and demo-set candidates (with "
                                                                   "`auto: null`).")
        num_trials: int | None = Field(None, ge=1, description="Optuna trials (with `auto: null`).")
        max_bootstrapped_demos: int = Field(4, ge=0, description="Bootstrapped demos per demo set.")
        max_labeled_demos: int = Field(4, ge=0, description="Labeled demos per demo set.")
        minibatch: bool = Field(True, description="Score trials on val minibatches (full val every few).")
        minibatch_size: int = Field(35, ge=1, description="Val examples per minibatch.")
        minibatch_full_eval_steps: int = Field(5, ge=1, description="Trials between full val evaluations.")
        init_temperature: float = Field(1.0, ge=0, description="The proposer's temperature.")
        program_aware_proposer: bool = Field(True, description="Show the proposer the program's code.")
        data_aware_proposer: bool = Field(True, description="Show the proposer a summary of the trainset.")
        tip_aware_proposer: bool = Field(True, description="Give the proposer a random prompting tip.")
        fewshot_aware_proposer: bool = Field(True, description="Show the proposer bootstrapped demos.")
        seed: int | None = Field(None, description="DSPy's seed (None: drawn from the cell's seeded stream; "
                                                   "DSPy's own default is 9).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        self._seed = self.seed(p.seed, ctx)
        return dspy.MIPROv2(metric=metric, prompt_model=cell_lm(ctx, "proposer"), task_model=cell_lm(ctx, "solver"),
                            max_bootstrapped_demos=p.max_bootstrapped_demos, max_labeled_demos=p.max_labeled_demos,
                            auto=p.auto, num_candidates=p.num_candidates, num_threads=1, seed=self._seed,
                            init_temperature=p.init_temperature, verbose=False, track_stats=False)

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        p = self.params
        return teleprompter.compile(
            student, trainset=trainset, valset=valset or None, num_trials=p.num_trials, seed=self._seed,
            minibatch=p.minibatch, minibatch_size=p.minibatch_size,
            minibatch_full_eval_steps=p.minibatch_full_eval_steps, program_aware_proposer=p.program_aware_proposer,
            data_aware_proposer=p.data_aware_proposer, tip_aware_proposer=p.tip_aware_proposer,
            fewshot_aware_proposer=p.fewshot_aware_proposer)


@method("dspy.COPRO")
class COPRO(_Proposing):
    """`dspy.COPRO`: coordinate ascent over instructions proposed by the prompt model, scored on the trainset."""

    optimiser = "COPRO"

    class Params(DSPyMethod.Params):
        breadth: int = Field(10, ge=2, description="Instructions proposed per round.")
        depth: int = Field(3, ge=1, description="Rounds of proposal from the best so far.")
        init_temperature: float = Field(1.4, ge=0, description="The proposer's temperature.")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        return dspy.COPRO(prompt_model=cell_lm(ctx, "proposer"), metric=metric, breadth=p.breadth, depth=p.depth,
                          init_temperature=p.init_temperature)

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset, eval_kwargs={"num_threads": 1,
                                                                            "display_progress": False})


@method("dspy.SIMBA")
class SIMBA(_Proposing):
    """`dspy.SIMBA`: stochastic mini-batch ascent; on the hardest examples the prompt model writes rules (or a demo
    is added) and the best candidates survive."""

    optimiser = "SIMBA"

    class Params(DSPyMethod.Params):
        bsize: int = Field(32, ge=1, description="Mini-batch size.")
        num_candidates: int = Field(6, ge=1, description="New candidate programs per step.")
        max_steps: int = Field(8, ge=1, description="Optimisation steps.")
        max_demos: int = Field(4, ge=0, description="Demos a predictor may hold.")
        temperature_for_sampling: float = Field(0.2, ge=0, description="Softmax temperature picking programs to "
                                                                       "sample trajectories from.")
        temperature_for_candidates: float = Field(0.2, ge=0, description="Softmax temperature picking the source "
                                                                         "program for new candidates.")
        seed: int | None = Field(None, description="DSPy's seed (None: drawn from the cell's seeded stream; "
                                                   "DSPy's own default is 0).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        self._seed = self.seed(p.seed, ctx)
        return dspy.SIMBA(metric=metric, bsize=p.bsize, num_candidates=p.num_candidates, max_steps=p.max_steps,
                          max_demos=p.max_demos, prompt_model=cell_lm(ctx, "proposer"), num_threads=1,
                          temperature_for_sampling=p.temperature_for_sampling,
                          temperature_for_candidates=p.temperature_for_candidates)

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset, seed=self._seed)


@method("dspy.GEPA")
class GEPA(_Proposing):
    """`dspy.GEPA`: the `gepa` library's reflective instruction evolution driven through DSPy (the reflection LM is
    the proposer role; the metric's score becomes GEPA's feedback, "This trajectory got a score of …", as DSPy
    writes it for a metric without feedback)."""

    optimiser = "GEPA"

    class Params(DSPyMethod.Params):
        auto: Literal["light", "medium", "heavy"] | None = Field("light", description="DSPy's preset budget (None: "
                                                                 "`max_metric_calls` or `max_full_evals`).")
        max_metric_calls: int | None = Field(None, ge=1, description="Metric calls GEPA may make (with `auto: null`).")
        max_full_evals: int | None = Field(None, ge=1, description="Full train+val evaluations (with `auto: null`).")
        reflection_minibatch_size: int = Field(3, ge=1, description="Train examples shown per reflection.")
        candidate_selection_strategy: Literal["pareto", "current_best"] = Field(
            "pareto", description="How the candidate to mutate is picked.")
        skip_perfect_score: bool = Field(True, description="Skip reflecting on a minibatch already perfect.")
        use_merge: bool = Field(True, description="Merge Pareto candidates with a common ancestor.")
        max_merge_invocations: int = Field(5, ge=0, description="Merges at most.")
        seed: int | None = Field(None, description="GEPA's seed (None: drawn from the cell's seeded stream; DSPy's "
                                                   "own default is 0).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        p = self.params
        return dspy.GEPA(metric=metric, auto=p.auto, max_metric_calls=p.max_metric_calls,
                         max_full_evals=p.max_full_evals, reflection_minibatch_size=p.reflection_minibatch_size,
                         candidate_selection_strategy=p.candidate_selection_strategy,
                         reflection_lm=cell_lm(ctx, "proposer"), skip_perfect_score=p.skip_perfect_score,
                         use_merge=p.use_merge, max_merge_invocations=p.max_merge_invocations, num_threads=1,
                         seed=self.seed(p.seed, ctx), track_stats=False)

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset, valset=valset or None)
