"""The compaction-gate study (evoarena.studies.compaction_gate): sessions are fixed by their seed, the token
accounting adds up, each arm does what it says, the gate follows its breakeven on sessions built to be clear either
way, the numbers in docs/runtime.md are what they were, and the command prints the study as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.studies.compaction_gate import ARMS, Session, replay, session, study, summarise_rows


def test_sessions_are_seeded() -> None:
    s = session(0)
    assert s == session(0) and s != session(1)
    assert 4 <= len(s.requests_per_step) <= 10 and len(s.result_tokens) == s.requests - 1


def test_the_accounting_adds_up_and_each_arm_does_what_it_says() -> None:
    s = session(3)
    boundaries = len(s.requests_per_step) - 1
    for ratio in (1.0, 12.5):
        never, gate, always = (replay(s, ratio, arm) for arm in ARMS)
        for r in (never, gate, always):
            assert r.sent_tokens == r.read_tokens + r.written_tokens and r.requests == s.requests
            assert r.priced == r.read_tokens + ratio * r.written_tokens
        assert never.compactions == never.summary_input_tokens == 0 and not never.calls
        assert never.written_tokens == never.peak_context  # without compaction only new messages are written
        assert always.compactions == boundaries and len(gate.calls) == boundaries
        assert gate.compactions == sum(c.compact for c in gate.calls)
    assert replay(s, 1.0, "gate").priced == replay(s, 1.0, "always").priced  # breakeven 0: compact when allowed


def test_the_gate_defers_when_the_rewrite_cannot_pay_and_compacts_when_it_can() -> None:
    # a step of three requests, then one request left: a rewrite at 12.5x cannot pay back in the requests left
    short = Session(0, (3, 1), (6000,) * 3)
    never, gate, always = (replay(short, 12.5, arm) for arm in ARMS)
    (call,) = gate.calls
    assert not call.compact and call.reason == "deferred_economic" and call.agrees is True
    assert call.breakeven is not None and call.breakeven > call.actual_remaining == 1
    assert gate.priced == never.priced < always.priced
    # a long tail of requests after the boundary: the same rewrite pays
    long = Session(0, (10, 20), (2000,) * 29)
    never, gate, always = (replay(long, 12.5, arm) for arm in ARMS)
    (call,) = gate.calls
    assert call.compact and call.reason == "economic" and call.agrees is True
    assert gate.priced == always.priced < never.priced


def test_thirty_sessions_as_in_the_docs() -> None:
    sums = {m.ratio: m for m in summarise_rows(study(30))}
    assert {r: m.cost_vs_never["gate"] for r, m in sums.items()} == {
        1.0: 0.3155, 1.25: 0.3288, 2.0: 0.3665, 5.0: 0.5264, 12.5: 0.7904}
    assert {r: m.cost_vs_never["always"] for r, m in sums.items()} == {
        1.0: 0.3118, 1.25: 0.3257, 2.0: 0.3642, 5.0: 0.4848, 12.5: 0.6626}
    assert (sums[12.5].with_summary["gate"], sums[12.5].with_summary["always"]) == (0.8025, 0.698)
    m = sums[12.5]
    assert (m.hindsight_agree, m.hindsight_calls, m.deferred_would_pay, m.compacted_unpaid) == (131, 175, 36, 8)
    assert (m.compactions["gate"], m.compactions["always"], m.gate_not_worse) == (1.87, 6.03, 1)
    assert sums[1.0].hindsight_agree == sums[1.0].hindsight_calls == 161
    assert all(m.over_window["gate"] == m.over_window["always"] == 0 < m.over_window["never"] for m in sums.values())


def test_the_command_line_prints_the_study_as_json() -> None:
    result = CliRunner().invoke(app, ["study", "compaction-gate", "--seeds", "2", "--ratio", "1", "--ratio", "12.5",
                                      "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["study"], data["seeds"], data["ratios"]) == ("compaction-gate", 2, [1.0, 12.5])
    assert [(r["ratio"], r["seed"], r["arm"]) for r in data["rows"]][:3] == [(1.0, 0, a) for a in ARMS]
    assert len(data["rows"]) == 2 * 2 * 3 and [m["ratio"] for m in data["summary"]] == [1.0, 12.5]
    gate = next(r for r in data["rows"] if r["arm"] == "gate")
    assert set(gate["calls"][0]) == {"step", "compact", "reason", "breakeven", "horizon", "actual_remaining",
                                     "agrees"}
    assert data["reading"].startswith("Over 2 sessions")
