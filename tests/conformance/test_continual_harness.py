"""Continual Harness against its released code (sethkarten/pokeagent-speedrun, `agents/utils/harness_evolver.py`;
harness-systems-as-released.md § Continual Harness, lines 70-75; seeds-digest-batch2.md §9, lines 89-97). The cadence
itself and the revert rule are asserted in tests/methods/test_continual_harness.py; here the method's defaults are
tied to them. Each test names the line it checks."""

from __future__ import annotations

from evoarena.methods.continual_harness.cadence import Cadence, schedule
from evoarena.methods.continual_harness.method import ContinualHarness
from evoarena.methods.continual_harness.refiner import PASSES, Config
from evoarena.methods.continual_harness.stuck import revert_due


def test_the_method_defaults_are_the_released_cadence() -> None:
    """harness-systems-as-released.md l.71: "Refiner cadence: not before step 10; every 10 steps to step 200, then
    every 25"; the README's fixed F (digest §9 l.91) is opt-in (`every`)."""
    p = ContinualHarness.Params()
    assert (p.warmup, p.early_every, p.early_until, p.late_every, p.every) == (10, 10, 200, 25, None)
    cadence = Cadence(warmup=p.warmup, early_every=p.early_every, early_until=p.early_until, late_every=p.late_every)
    assert schedule(250, cadence)[-4:] == [190, 200, 225, 250]


def test_revert_above_15_points_flag_at_50_percent_memory_from_the_last_20_steps() -> None:
    """harness-systems-as-released.md l.72-75: "auto-revert skills whose stuck-rate rose > 15 points", "flag skills
    ≥ 50% stuck", "memory add/update (≤ 3–5 changes) from the last 20 steps"."""
    p = ContinualHarness.Params()
    assert (p.revert_threshold, p.flag_threshold, p.memory_window) == (15, 50, 20)
    cfg = Config()
    assert (cfg.revert_threshold, cfg.flag_threshold, cfg.memory_window) == (15, 50, 20)
    assert revert_due({"steps": 5, "pct": 20}, {"steps": 5, "pct": 36}, threshold=p.revert_threshold)
    assert not revert_due({"steps": 5, "pct": 20}, {"steps": 5, "pct": 35}, threshold=p.revert_threshold)


def test_one_pass_runs_prompt_then_skills_then_memory() -> None:
    """harness-systems-as-released.md l.72-75: the order in one pass is revert, orchestrator prompt, sub-agents,
    skills, memory (sub-agents have no counterpart here: docs/methods/continual_harness.md § Deliberate
    differences)."""
    assert PASSES == ("prompt", "skills", "memory")
    assert tuple(ContinualHarness.Params().passes) == PASSES
