"""The `repair` mode's bug for one problem: the first mutation of its canonical solution, in the seeded order,
that makes the problem's hidden test fail when run exactly as an answer is graded (sandboxed, `check_cached`), or
None when no mutation breaks the test (the problem is skipped)."""

from __future__ import annotations

from dataclasses import replace

from evoarena.benchmarks.humaneval.code import program
from evoarena.benchmarks.humaneval.mutate import Mutation, mutations, seeded_order
from evoarena.benchmarks.humaneval.problems import Problem
from evoarena.benchmarks.humaneval.run import Outcome, check_cached
from evoarena.sandbox import SandboxLimits

# A mutant that only fails by running out of time or memory (an endless loop, a runaway list) is not taken: each
# try would cost the whole limit, and a solver should see a wrong result or an exception, not a stopwatch.
_UNCLEAN = ("Timed out", "The program was ", "The program stopped without a result")


def breaks(outcome: Outcome) -> bool:
    """Whether a mutant's run is a real, clean failure: a failed assertion, an exception, or code that does not load."""
    return not outcome.passed and not outcome.message.startswith(_UNCLEAN)


def inject(problem: Problem, seed: int, limits: SandboxLimits) -> Mutation | None:
    """The bug injected into `problem` for `seed`: the first mutation (in `seeded_order`) whose program, graded
    like an answer holding the whole function, fails the hidden test cleanly; None if there is none."""
    found = mutations(problem.prompt, problem.canonical_solution)
    for mutation in seeded_order(found, seed, problem.task_id):
        made = program(problem.prompt, mutation.function, problem.entry_point)
        if breaks(check_cached(made.source, problem.test, problem.entry_point, limits)):
            return mutation
    return None


def trial_limits(limits: SandboxLimits) -> SandboxLimits:
    """The grading limits with the clock cut to 1 s: a mutant is run only to see whether it fails cleanly, and one
    that loops forever (rejected all the same) should not cost the whole `timeout_s`."""
    return replace(limits, wall_s=min(limits.wall_s, 1.0), cpu_s=min(limits.cpu_s, 1))
