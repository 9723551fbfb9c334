"""Online context compaction: the released cost gate (remaining requests, context growth, cache-rewrite cost; the
summary call itself unpriced), and the compactor that summarises a finished step through a plain function and keeps
the system prompt and everything after the boundary verbatim."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from evoarena.models import Message
from evoarena.runtime import Economics, GateInput, OnlineCompaction, compact, context_tokens, decide, message_tokens
from evoarena.runtime.compaction import SUMMARY_HEADER


def gate(**over: Any) -> GateInput:
    base: dict[str, Any] = {"write_tokens": 50_000, "archive_tokens": 40_000, "context_tokens": 50_000,
                            "boundary_request_counts": (10, 10), "remaining_boundaries": 1,
                            "cache_write_read_ratio": 12.5}
    base.update(over)
    return GateInput(**base)


def test_the_released_constants() -> None:
    e = Economics()
    assert (e.remaining_request_scale, e.remaining_request_stddev_k, e.window_reserve_tokens,
            e.first_compaction_request_scale, e.subsequent_compaction_margin,
            e.minimum_requests_since_compaction) == (1.0, 0.0, 16_384, 2.0, 1.5, 2)
    assert gate().memo_tokens == 1000


def test_breakeven_is_the_cache_rewrite_cost_over_the_saving_and_nothing_else() -> None:
    d = decide(gate())
    # 50 000 tokens rewritten at (12.5 - 1) extra, 39 000 saved per later request; no term for the summary call
    assert d.breakeven_requests == pytest.approx(50_000 * 11.5 / 39_000)
    assert d.saving_tokens == 39_000 and d.incremental_cache_cost_ratio == 11.5
    assert d.expected_remaining_requests == 1 + 10 * 1  # mean requests per step × steps left
    assert d.effective_horizon == 22  # the first compaction may look twice as far
    assert (d.compact, d.reason) == (True, "economic")
    assert d.debt_tokens == pytest.approx(50_000 * 11.5)


def test_remaining_calls_decide_a_later_compaction() -> None:
    later = {"prior_compactions": 1, "requests_since_last_compaction": 10}
    assert decide(gate(**later)).reason == "deferred_economic"               # 14.7 > 11 requests left
    assert decide(gate(**later, remaining_boundaries=2)).reason == "deferred_subsequent_margin"  # 14.7 × 1.5 > 21
    assert decide(gate(**later, remaining_boundaries=3)).compact              # 22.1 ≤ 31
    owed = decide(gate(**later, remaining_boundaries=3, carried_debt_tokens=700_000))
    assert (owed.compact, owed.reason) == (False, "deferred_carried_debt")   # (700 000 + 575 000) / 39 000 > 31
    assert owed.combined_breakeven_requests == pytest.approx(1_275_000 / 39_000)


def test_context_growth_caps_the_horizon_by_the_window() -> None:
    near = gate(context_window_tokens=128_000, average_context_increment=5_000)
    d = decide(near)
    assert d.window_request_bound == 15 and d.effective_horizon == 15 and d.compact  # (128k - 50k) / 5k
    faster = decide(gate(context_window_tokens=128_000, average_context_increment=6_000))
    assert faster.window_request_bound == 13 and (faster.compact, faster.reason) == (False, "deferred_economic")


def test_the_window_protects_itself_and_cooldown_defers_only_economics() -> None:
    full = gate(context_tokens=115_000, write_tokens=115_000, context_window_tokens=128_000,
                cache_write_read_ratio=None, boundary_request_counts=None)
    assert (decide(full).compact, decide(full).reason) == (True, "window_protection")  # 115k ≥ 128k - 16 384
    cooling = {"prior_compactions": 1, "requests_since_last_compaction": 1, "remaining_boundaries": 3}
    assert (decide(gate(**cooling)).compact, decide(gate(**cooling)).reason) == (False, "deferred_cooldown")
    assert decide(gate(**cooling, context_tokens=115_000, context_window_tokens=128_000)).compact


def test_no_price_no_history_or_no_saving_means_no_compaction() -> None:
    assert decide(gate(cache_write_read_ratio=None)).reason == "cache_ratio_unavailable"
    assert decide(gate(boundary_request_counts=None)).reason == "horizon_unavailable"
    small = gate(archive_tokens=900, context_tokens=127_000, context_window_tokens=128_000)
    assert (decide(small).compact, decide(small).reason) == (False, "non_positive_saving")


def test_a_spread_of_step_lengths_lowers_the_horizon_when_asked() -> None:
    cautious = Economics(remaining_request_stddev_k=1.0)
    counts = (10, 2, 18)  # mean 10, sample sd 8
    d = decide(gate(boundary_request_counts=counts, remaining_boundaries=2), cautious)
    assert d.expected_remaining_requests == 1 + (10 - 8) * 2
    assert decide(gate(boundary_request_counts=(10,), remaining_boundaries=2), cautious).expected_remaining_requests \
        == 1 + 5 * 2  # fewer than 3 steps: the mean halved


SYSTEM = Message("system", "You are a careful agent.")


def conversation() -> list[Message]:
    return [SYSTEM, Message("user", "fix the parser"),
            Message("assistant", "reading", tool_calls=()), Message("tool", "x" * 8000, tool_call_id="c1"),
            Message("assistant", "step 1 done"),
            Message("user", "now the docs"), Message("assistant", "on it")]


def test_compact_summarises_only_the_history_before_the_boundary() -> None:
    seen: list[Sequence[Message]] = []

    def summarise(history: Sequence[Message]) -> str:
        seen.append(history)
        return f"{len(history)} messages: parser fixed"

    msgs = conversation()
    out = compact(msgs, 5, summarise)
    assert seen == [tuple(msgs[1:5])]
    assert out.messages[0] == SYSTEM and out.messages[2:] == tuple(msgs[5:])  # verbatim, same objects, same order
    assert out.messages[1] == Message("user", SUMMARY_HEADER.format(n=4) + "\n4 messages: parser fixed")
    assert (out.summarised, out.kept) == (4, 3) and out.tokens_after < out.tokens_before == context_tokens(msgs)
    whole = compact(msgs, 7, summarise, keep_system=False, summary_role="system")
    assert len(whole.messages) == 1 and whole.messages[0].role == "system" and len(seen[-1]) == 7


def test_compact_refuses_a_boundary_it_cannot_honour() -> None:
    msgs = conversation()
    with pytest.raises(ValueError, match="tool results"):
        compact(msgs, 3, lambda h: "s")  # would keep the tool result but summarise its call
    with pytest.raises(ValueError, match="outside"):
        compact(msgs, 8, lambda h: "s")
    with pytest.raises(ValueError, match="nothing to summarise"):
        compact(msgs, 1, lambda h: "s")
    with pytest.raises(TypeError, match="not text"):
        compact(msgs, 5, lambda h: None)  # type: ignore[arg-type, return-value]


def test_an_episode_compacts_at_a_step_boundary_when_the_gate_says_so() -> None:
    calls: list[int] = []

    def summarise(history: Sequence[Message]) -> str:
        calls.append(len(history))
        return "step 1 done: parser fixed, tests pass"

    oc = OnlineCompaction(summarise, cache_write_read_ratio=12.5, context_window_tokens=200_000)
    msgs = [Message("system", "s" * 400), Message("user", "u" * 400)]  # 100 + 100 tokens
    for i in range(10):
        oc.record_request(msgs)
        msgs += [Message("assistant", "a" * 400), Message("tool", "t" * 8000, tool_call_id=str(i))]  # +2100
    assert oc.average_growth == 2100 and context_tokens(msgs) == 21_200 and message_tokens(msgs[-1]) == 2000
    out = oc.step_completed(msgs, remaining_steps=2)
    d = out.decision
    assert oc.boundary_request_counts == [10] and d.expected_remaining_requests == 21
    assert d.window_request_bound == (200_000 - 21_200) // 2100
    assert d.breakeven_requests == pytest.approx(21_200 * 11.5 / (21_100 - 1000))
    assert d.compact and out.compacted is not None and calls == [21]
    assert out.messages[0] == msgs[0] and len(out.messages) == 2
    assert oc.compactions == 1 and oc.debt_tokens == pytest.approx(21_200 * 11.5)
    # the debt is repaid by the saving, one request at a time
    oc.record_request(out.messages)
    assert oc.debt_tokens == pytest.approx(21_200 * 11.5 - 20_100)
    # a second step finishing one request later would pay off (10 steps left) but is in cooldown: no second summary
    again = list(out.messages) + [Message("assistant", "a" * 400), Message("tool", "t" * 80_000, tool_call_id="z")]
    second = oc.step_completed(again, remaining_steps=10)
    assert (second.decision.compact, second.decision.reason) == (False, "deferred_cooldown")
    assert second.messages == tuple(again) and calls == [21]


def test_without_cache_prices_only_the_window_compacts() -> None:
    oc = OnlineCompaction(lambda h: "summary", cache_write_read_ratio=None, context_window_tokens=32_000)
    msgs = [Message("user", "go")]
    oc.record_request(msgs)
    msgs.append(Message("tool", "t" * 40_000, tool_call_id="1"))  # 10 000 tokens: far from the window
    assert oc.step_completed(msgs, remaining_steps=5).decision.reason == "cache_ratio_unavailable"
    msgs.append(Message("tool", "t" * 40_000, tool_call_id="2"))  # 20 000 ≥ 32 000 - 16 384
    assert oc.step_completed(msgs, remaining_steps=5).decision.reason == "window_protection"
    with pytest.raises(ValueError, match="finite"):
        OnlineCompaction(lambda h: "s", cache_write_read_ratio=float("nan"))
