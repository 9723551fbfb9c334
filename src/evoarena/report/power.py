"""Power of a paired comparison on n tasks: the minimum detectable difference (MDE) and whether val can break a tie.

The comparison results.json makes is the paired per-task difference D (a condition's score minus the baseline's,
each task averaged over seeds) with a CI from resampling tasks; it shows a difference when the CI leaves 0. In its
large-sample (normal) form that is a two-sided test of mean(D) at level α with the sample SD of D, so a true
difference δ is found with power Φ(√n·δ/σ_D − z_{1−α/2}) and the MDE is (z_{1−α/2} + z_power)·σ_D/√n.

σ_D is not known before the run, so the MDE is written with the second moment ψ = E[D²] (for pass/fail scores: the
share of tasks on which the two conditions disagree, the discordance): σ_D² = ψ − δ², hence
δ = z·√(ψ / (n + z²)). With no ψ given, ψ is the baseline's own per-task variance v — what two conditions disagree
by when one re-decides a random half of the tasks independently at the baseline's rate (for pass/fail, v = p(1 − p)).

Tasks are the unit: replicate seeds are averaged within a task before anything is resampled, so they do not add to n
(greedy calls on a seed-blind backend are the same answer k times; sampled ones only lower a task's own noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.8
_NORMAL = NormalDist()


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1−α/2} + z_power: the distance, in standard errors, a difference must lie from 0 to be found."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    return _NORMAL.inv_cdf(1.0 - alpha / 2) + _NORMAL.inv_cdf(power)


def mde_from_sd(n: int, sd: float, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The MDE of a paired mean difference whose SD is `sd` (known at the effect), on n tasks; None for no tasks."""
    if n <= 0:
        return None
    return z_sum(alpha, power) * sd / math.sqrt(n)


def mde(n: int, discordance: float, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The MDE on n tasks with E[D²] = `discordance` (the pass/fail share of tasks the two disagree on); None for no
    tasks. It never exceeds √discordance, since a difference δ needs E[D²] ≥ δ²."""
    if n <= 0:
        return None
    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance must be in [0, 1], got {discordance}")
    z = z_sum(alpha, power)
    return z * math.sqrt(discordance / (n + z * z))


def power_at(delta: float, n: int, discordance: float, *, alpha: float = ALPHA) -> float:
    """The chance the paired test finds a true difference δ on n tasks with E[D²] = discordance (two-sided)."""
    sd = math.sqrt(max(discordance - delta * delta, 0.0))
    if sd == 0.0:
        return 1.0 if delta != 0.0 else 0.0
    z = _NORMAL.inv_cdf(1.0 - alpha / 2)
    shift = math.sqrt(n) * abs(delta) / sd
    return _NORMAL.cdf(shift - z) + _NORMAL.cdf(-shift - z)


def score_variance(scores: Sequence[float]) -> float:
    """The per-task variance of scores in [0, 1] (sample variance, n − 1). Scores that are all equal — a pilot at the
    floor or the ceiling — say nothing of the spread, so the rate is shrunk first: p̃ = (Σ + 1) / (n + 2),
    v = p̃(1 − p̃)."""
    n = len(scores)
    if n == 0:
        raise ValueError("score_variance: no scores")
    m = math.fsum(scores) / n
    if n == 1 or all(s == scores[0] for s in scores):
        shrunk = (m * n + 1.0) / (n + 2.0)
        return shrunk * (1.0 - shrunk)
    return math.fsum((s - m) ** 2 for s in scores) / (n - 1)


@dataclass(frozen=True)
class TieBreak:
    """What val can tell between two checkpoints whose true difference is δ: its resolution (one task's step), the
    chance they tie on val (ties keep the earlier one) and the chance the better one is selected."""

    n_val: int
    resolution: float | None
    tie: float | None
    better_wins: float | None


def tie_break(n_val: int, delta: float, discordance: float) -> TieBreak:
    """Pass/fail model: on each val task the later checkpoint gains one (prob (ψ + δ)/2), loses one ((ψ − δ)/2) or
    agrees; they tie when gains equal losses, and the later one is kept only when gains exceed losses."""
    if n_val <= 0:
        return TieBreak(n_val, None, None, None)
    psi = min(max(discordance, abs(delta)), 1.0)
    up, down = (psi + delta) / 2, (psi - delta) / 2
    same = max(1.0 - up - down, 0.0)
    tie = better = 0.0
    for gains in range(n_val + 1):
        for losses in range(n_val - gains + 1):
            p = _trinomial(n_val, gains, losses, up, down, same)
            if gains == losses:
                tie += p
            elif gains > losses:
                better += p
    return TieBreak(n_val, 1.0 / n_val, tie, better)


def _trinomial(n: int, a: int, b: int, pa: float, pb: float, pc: float) -> float:
    c = n - a - b
    if (pa == 0.0 and a) or (pb == 0.0 and b) or (pc == 0.0 and c):
        return 0.0
    log = math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(c + 1)
    log += (a * math.log(pa) if a else 0.0) + (b * math.log(pb) if b else 0.0) + (c * math.log(pc) if c else 0.0)
    return math.exp(log)


def edge(mean: float, min_effect: float) -> str | None:
    """"ceiling" when the baseline has less than `min_effect` of room above it, "floor" when it scores below
    `min_effect` (a method has nothing to build on), else None."""
    if 1.0 - mean < min_effect:
        return "ceiling"
    if mean < min_effect:
        return "floor"
    return None
