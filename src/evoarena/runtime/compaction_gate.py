"""The cost gate of online context compaction (SoL-Pi, seed 000 §10): at a plan-step boundary, is summarising the
history worth it?

The seed: when a plan step completes, compact if the remaining calls, the context's growth and the cost of
rewriting the prompt cache justify it. The rule here is the released extension's (`economics.ts`), in tokens:

- saving per later request = `archive_tokens − memo_tokens` (the history the summary replaces, minus the summary);
- the one-off cost = `write_tokens × (cache_write_read_ratio − 1)`: after compaction the prompt prefix is new, so
  `write_tokens` (the context now) are written to the provider's cache at the write price instead of being read at
  the read price (prices in units of the read price; a ratio of 1 means no cache surcharge);
- breakeven = cost / saving requests; compact when breakeven ≤ the expected remaining requests.

Expected remaining requests = 1 + floor(mean requests per completed step × remaining steps × scale), capped by the
requests left before the context window fills at the average growth per request. The first compaction may look
twice as far (`first_compaction_request_scale`, still capped by the window); a later one needs breakeven × 1.5 ≤
horizon and must also repay the cache debt still carried from the previous one; none within 2 requests of the last
(cooldown). Near the window (context ≥ window − 16 384 tokens) it compacts regardless, whenever there is a saving.

What the gate does not price (the digest's note on the paper's §2.5): the summary call itself — reading the archived
history and writing the summary is a model call of its own, and its tokens are in neither side of the comparison.
`memo_tokens` is only the summary's expected size in the context (1000 in the released code).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The released default summary size estimate (DEFAULT_NATIVE_SUMMARY_TOKEN_ESTIMATE).
MEMO_TOKENS = 1000


@dataclass(frozen=True)
class Economics:
    """The gate's constants (the released DEFAULT_COMPACTION_ECONOMICS)."""

    remaining_request_scale: float = 1.0
    remaining_request_stddev_k: float = 0.0
    window_reserve_tokens: int = 16_384
    first_compaction_request_scale: float = 2.0
    subsequent_compaction_margin: float = 1.5
    minimum_requests_since_compaction: int = 2


@dataclass(frozen=True)
class GateInput:
    """What the gate reads at a boundary. `boundary_request_counts`: requests each completed step took (None: no
    history yet); `requests_since_last_compaction`: None before the first compaction; `cache_write_read_ratio`:
    None when the provider's cache prices are unknown (then only window protection can compact)."""

    write_tokens: int
    archive_tokens: int
    context_tokens: int
    boundary_request_counts: Sequence[int] | None
    remaining_boundaries: int
    cache_write_read_ratio: float | None
    memo_tokens: int = MEMO_TOKENS
    average_context_increment: float | None = None
    context_window_tokens: int | None = None
    prior_compactions: int = 0
    requests_since_last_compaction: int | None = None
    carried_debt_tokens: float = 0.0


@dataclass(frozen=True)
class Decision:
    """The verdict and the numbers behind it. `reason`: economic, window_protection, deferred_economic,
    deferred_subsequent_margin, deferred_carried_debt, deferred_cooldown, horizon_unavailable,
    cache_ratio_unavailable or non_positive_saving."""

    compact: bool
    reason: str
    saving_tokens: int
    expected_remaining_requests: int | None
    window_request_bound: int | None
    breakeven_requests: float | None
    combined_breakeven_requests: float | None
    effective_horizon: float | None
    incremental_cache_cost_ratio: float | None
    write_tokens: int

    @property
    def debt_tokens(self) -> float:
        """The cache debt a compaction on this decision starts with: write tokens × incremental cost ratio (repaid by
        `saving_tokens` per later request)."""
        ratio = self.incremental_cache_cost_ratio
        return 0.0 if ratio is None else self.write_tokens * ratio


def expected_remaining_requests(counts: Sequence[int], remaining_boundaries: int, *, context_tokens: int,
                                window: int | None, increment: float | None,
                                economics: Economics = Economics()) -> tuple[int, int | None]:  # noqa: B008
    """(expected remaining requests, requests left before the window fills or None). With `stddev_k` > 0 the mean is
    lowered by k standard deviations (halved with fewer than 3 steps), as released; the default k is 0."""
    mean = sum(counts) / max(1, len(counts))
    lower = mean
    if economics.remaining_request_stddev_k != 0:
        if len(counts) < 3:
            lower *= 0.5
        else:
            sd = math.sqrt(sum((c - mean) ** 2 for c in counts) / (len(counts) - 1))
            lower = max(0.0, mean - economics.remaining_request_stddev_k * sd)
    unbounded = 1 + math.floor(lower * max(0, remaining_boundaries) * economics.remaining_request_scale)
    bound = None
    if window is not None and increment is not None and increment > 0:
        bound = max(0, math.floor((window - context_tokens) / increment))
    return (unbounded if bound is None else min(unbounded, bound)), bound


def decide(g: GateInput, economics: Economics = Economics()) -> Decision:  # noqa: B008 - frozen
    """Compact now or not, by the released rule (see the module's docstring)."""
    horizon: int | None = None
    bound: int | None = None
    if g.boundary_request_counts is not None:
        horizon, bound = expected_remaining_requests(
            g.boundary_request_counts, g.remaining_boundaries, context_tokens=g.context_tokens,
            window=g.context_window_tokens, increment=g.average_context_increment, economics=economics)
    saving = g.archive_tokens - g.memo_tokens
    ratio = None if g.cache_write_read_ratio is None else max(0.0, g.cache_write_read_ratio - 1)
    breakeven = g.write_tokens * ratio / saving if saving > 0 and ratio is not None else None
    combined = (g.carried_debt_tokens + g.write_tokens * ratio) / saving if saving > 0 and ratio is not None else None
    first = g.prior_compactions == 0
    effective: float | None = None
    if horizon is not None:
        effective = (min(horizon * economics.first_compaction_request_scale, math.inf if bound is None else bound)
                     if first else float(horizon))
    window_protection = (g.context_window_tokens is not None
                         and g.context_tokens >= g.context_window_tokens - economics.window_reserve_tokens)
    base = horizon is not None and horizon > 0 and breakeven is not None and breakeven <= horizon
    first_ok = first and effective is not None and effective > 0 and breakeven is not None and breakeven <= effective
    margin_ok = (not first and horizon is not None and breakeven is not None
                 and breakeven * economics.subsequent_compaction_margin <= horizon)
    debt_ok = not first and horizon is not None and combined is not None and combined <= horizon
    economic = first_ok if first else (base and margin_ok and debt_ok)
    cooldown = (g.requests_since_last_compaction is not None
                and g.requests_since_last_compaction < economics.minimum_requests_since_compaction)
    compact = saving > 0 and (window_protection or (economic and not cooldown))
    if saving <= 0:
        reason = "non_positive_saving"
    elif window_protection:
        reason = "window_protection"
    elif economic:
        reason = "deferred_cooldown" if cooldown else "economic"
    elif horizon is None:
        reason = "horizon_unavailable"
    elif breakeven is None:
        reason = "cache_ratio_unavailable"
    elif not first and base and not margin_ok:
        reason = "deferred_subsequent_margin"
    elif not first and base and not debt_ok:
        reason = "deferred_carried_debt"
    else:
        reason = "deferred_economic"
    return Decision(compact, reason, saving, horizon, bound, breakeven, combined, effective, ratio, g.write_tokens)
