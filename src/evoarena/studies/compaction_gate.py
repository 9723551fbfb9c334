"""Online compaction's cost gate replayed over seeded synthetic sessions (SoL-Pi, seed 000 §10): at each plan-step
boundary, compact when the gate says so, never, or always — what do the requests cost, read- and write-priced, at
cache write/read price ratios from 1 to 12.5, and how often does the gate's breakeven call agree with hindsight?

A session is a plan of 4–10 steps, 1–8 model requests per step; before each request after the first, the agent's
last turn adds an assistant message (a tool call, 30 tokens) and its tool result, whose size is drawn around the
session's growth rate (400–4000 tokens a request); a 1500-token system prompt and a 200-token task lead. Requests
carry the whole context, as an agent's do. The window is 128 000 tokens. Prices are in units of the cache-read price:
a request's prefix that equals the previous request's is read (1 a token), the rest is written (the ratio a token);
so compacting rewrites the whole context once, which is the one-off cost the gate weighs against the tokens it
saves on every later request. The summary is a scripted 1000-token text (the gate's own estimate); the summary call
itself — reading the archived history — is counted apart (`summary_input_tokens`), as the gate does not price it.

Hindsight: at each boundary the replay knows how many requests the session really has left; the gate's decision
agrees with hindsight when it compacts exactly when its breakeven is within that count (window protection and
cooldown aside). No model is called.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from evoarena.codec import to_plain
from evoarena.models import Message
from evoarena.runtime import MEMO_TOKENS, OnlineCompaction, compact
from evoarena.runtime.compaction import message_tokens
from evoarena.runtime.text import CHARS_PER_TOKEN

RATIOS = (1.0, 1.25, 2.0, 5.0, 12.5)
ARMS = ("never", "gate", "always")
WINDOW_TOKENS = 128_000
SYSTEM_TOKENS = 1500
TASK_TOKENS = 200
CALL_TOKENS = 30


@dataclass(frozen=True)
class Session:
    """A seeded session: requests per plan step and the tool result's tokens before each request (the first
    request has none: it carries the system prompt and the task)."""

    seed: int
    requests_per_step: tuple[int, ...]
    result_tokens: tuple[int, ...]

    @property
    def requests(self) -> int:
        return sum(self.requests_per_step)


def session(seed: int = 0) -> Session:
    """The seeded session (see the module's docstring)."""
    rng = random.Random(seed)
    steps = rng.randint(4, 10)
    per_step = tuple(rng.randint(1, 8) for _ in range(steps))
    growth = rng.uniform(400, 4000)
    results = tuple(max(1, round(growth * rng.uniform(0.5, 1.5))) for _ in range(sum(per_step) - 1))
    return Session(seed, per_step, results)


def _text(tokens: int, label: str) -> str:
    """A text the released estimate (bytes / 4) counts as `tokens` tokens."""
    body = f"{label} "
    return (body + "x" * (tokens * CHARS_PER_TOKEN - len(body)))[: tokens * CHARS_PER_TOKEN]


def summarise(archive: Sequence[Message]) -> str:
    """The scripted summariser: a text of the gate's estimated summary size, naming what it replaced."""
    return _text(MEMO_TOKENS - 12, f"summary of {len(archive)} messages")


@dataclass(frozen=True)
class GateCall:
    """One boundary under the gate: its reason, breakeven and horizon, the requests the session really had left,
    and whether the decision agrees with hindsight (None when it is not an economic call)."""

    step: int
    compact: bool
    reason: str
    breakeven: float | None
    horizon: int | float | None  # an int when the session's own bound is the smaller (the gate's min keeps its type)
    actual_remaining: int
    agrees: bool | None


@dataclass(frozen=True)
class ArmResult:
    """One session under one arm at one price ratio. Tokens are the released estimate; `priced` = read + ratio ×
    written, in cache-read units; `over_window`: requests whose context exceeded the window."""

    seed: int
    ratio: float
    arm: str
    requests: int
    steps: int
    sent_tokens: int
    read_tokens: int
    written_tokens: int
    priced: float
    compactions: int
    summary_input_tokens: int
    peak_context: int
    over_window: int
    calls: tuple[GateCall, ...] = field(default=())

    @property
    def priced_with_summary(self) -> float:
        """`priced` plus the summary calls' input at the read price (their prefix is the cached context: a lower
        bound on what the calls the gate does not price cost; their output is not counted)."""
        return self.priced + self.summary_input_tokens

    def row(self) -> dict[str, object]:
        """Its plain form with what it derives, as `evoarena study --json` prints it."""
        return {**to_plain(self), "priced_with_summary": self.priced_with_summary}


def replay(s: Session, ratio: float, arm: str) -> ArmResult:
    """Replay `s` under `arm` ("never", "gate" or "always") with cache write/read price ratio `ratio`."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    memo: dict[Message, int] = {}

    def tokens(messages: Sequence[Message]) -> int:
        total = 0
        for m in messages:
            if m not in memo:
                memo[m] = message_tokens(m)
            total += memo[m]
        return total

    gate = OnlineCompaction(summarise, cache_write_read_ratio=ratio, context_window_tokens=WINDOW_TOKENS,
                            tokens=tokens)
    messages: list[Message] = [Message("system", _text(SYSTEM_TOKENS, "system")),
                               Message("user", _text(TASK_TOKENS, "task"))]
    prev: list[Message] = []
    sent = read = written = compactions = summary_in = peak = over = 0
    calls: list[GateCall] = []
    results = iter(s.result_tokens)
    done = 0
    for step, n in enumerate(s.requests_per_step):
        for _ in range(n):
            if done:
                turn = [Message("assistant", _text(CALL_TOKENS, f"call {done}")),
                        Message("tool", _text(next(results), f"result {done}"))]
                messages += turn
            same = 0
            while same < min(len(prev), len(messages)) and prev[same] is messages[same]:
                same += 1
            size, cached = tokens(messages), tokens(messages[:same])
            sent, read, written = sent + size, read + cached, written + size - cached
            peak, over = max(peak, size), over + (size > WINDOW_TOKENS)
            gate.record_request(messages)
            prev = list(messages)
            done += 1
        left = len(s.requests_per_step) - step - 1
        if left == 0 or arm == "never":
            continue
        archive = tokens(messages[1:])
        if arm == "always":
            messages = list(compact(messages, len(messages), summarise).messages)
            compactions, summary_in = compactions + 1, summary_in + archive
        else:
            out = gate.step_completed(messages, remaining_steps=left)
            d = out.decision
            actual = s.requests - done
            economic = d.reason in ("economic", "deferred_economic", "deferred_subsequent_margin",
                                    "deferred_carried_debt")
            agrees = (d.compact == (d.breakeven_requests is not None and d.breakeven_requests <= actual)
                      if economic else None)
            calls.append(GateCall(step, d.compact, d.reason, d.breakeven_requests, d.effective_horizon, actual,
                                  agrees))
            if out.compacted is not None:
                messages = list(out.messages)
                compactions, summary_in = compactions + 1, summary_in + archive
    return ArmResult(s.seed, ratio, arm, s.requests, len(s.requests_per_step), sent, read, written,
                     read + ratio * written, compactions, summary_in, peak, over, tuple(calls))


def study(seeds: int = 30, ratios: Sequence[float] = RATIOS) -> list[ArmResult]:
    """Every arm at every ratio on sessions 0 .. seeds - 1."""
    if seeds < 1:
        raise ValueError("seeds must be >= 1")
    sessions = [session(seed) for seed in range(seeds)]
    return [replay(s, ratio, arm) for ratio in ratios for s in sessions for arm in ARMS]


@dataclass(frozen=True)
class RatioSummary:
    """The arms at one ratio, over the sessions: priced cost relative to never-compact (mean), the same with the
    summary calls' input counted (`with_summary`), compactions per session (mean), sessions where the gate cost no
    more than the cheaper of the other two arms, requests over the window, and the gate's boundary decisions by
    reason and their agreement with hindsight (`deferred_would_pay`: a deferral whose breakeven was within the
    requests really left; `compacted_unpaid`: a compaction whose breakeven was not)."""

    ratio: float
    sessions: int
    cost_vs_never: dict[str, float]
    with_summary: dict[str, float]
    compactions: dict[str, float]
    gate_not_worse: int
    over_window: dict[str, int]
    reasons: dict[str, int]
    hindsight_agree: int
    hindsight_calls: int
    deferred_would_pay: int
    compacted_unpaid: int


def summarise_rows(rows: Sequence[ArmResult]) -> list[RatioSummary]:
    """One summary per ratio, in the order the ratios appear."""
    out = []
    for ratio in dict.fromkeys(r.ratio for r in rows):
        by = {(r.seed, r.arm): r for r in rows if r.ratio == ratio}
        seeds = sorted({seed for seed, _ in by})
        cost = {a: round(statistics.fmean(by[s, a].priced / by[s, "never"].priced for s in seeds), 4) for a in ARMS}
        with_summary = {a: round(statistics.fmean(by[s, a].priced_with_summary / by[s, "never"].priced
                                                  for s in seeds), 4) for a in ARMS}
        comp = {a: round(statistics.fmean(by[s, a].compactions for s in seeds), 2) for a in ARMS}
        not_worse = sum(by[s, "gate"].priced <= min(by[s, "never"].priced, by[s, "always"].priced) + 1e-9
                        for s in seeds)
        calls = [c for s in seeds for c in by[s, "gate"].calls]
        judged = [c.agrees for c in calls if c.agrees is not None]
        out.append(RatioSummary(ratio, len(seeds), cost, with_summary, comp, not_worse,
                                {a: sum(by[s, a].over_window for s in seeds) for a in ARMS},
                                dict(sorted(Counter(c.reason for c in calls).items())), sum(judged), len(judged),
                                sum(c.agrees is False and not c.compact for c in calls),
                                sum(c.agrees is False and c.compact for c in calls)))
    return out


def table(rows: Sequence[ArmResult]) -> str:
    """A plain-text table, one line per ratio, and the gate's decisions by reason."""
    sums = summarise_rows(rows)
    head = (f"{'write/read':>10} {'gate/never':>10} {'always/never':>12} {'+summary g/a':>13} {'compact g/a':>11} "
            f"{'gate <= best':>12} {'over window n/g/a':>17} {'hindsight':>9}")
    lines = [f"Online compaction's gate over {sums[0].sessions if sums else 0} synthetic sessions: priced tokens "
             "(read 1, write = ratio) relative to never compacting (model-free)", head]
    for m in sums:
        ow = "/".join(str(m.over_window[a]) for a in ARMS)
        summ = f"{m.with_summary['gate']:.3f}/{m.with_summary['always']:.3f}"
        comp = f"{m.compactions['gate']:.1f}/{m.compactions['always']:.1f}"
        agree = f"{m.hindsight_agree}/{m.hindsight_calls}"
        lines.append(f"{m.ratio:>10g} {m.cost_vs_never['gate']:>10.3f} {m.cost_vs_never['always']:>12.3f} "
                     f"{summ:>13} {comp:>11} {f'{m.gate_not_worse}/{m.sessions}':>12} {ow:>17} {agree:>9}")
    for m in sums:
        lines.append(f"ratio {m.ratio:g}: " + ", ".join(f"{k} {v}" for k, v in m.reasons.items()))
    return "\n".join(lines)


def reading(rows: Sequence[ArmResult]) -> str:
    """One paragraph on what the numbers say, written from them."""
    sums = summarise_rows(rows)
    if not sums:
        return ""
    lo, hi = sums[0], sums[-1]
    over = {a: max(m.over_window[a] for m in sums) for a in ARMS}
    cheaper = [f"{m.ratio:g}" for m in sums if m.cost_vs_never["always"] < m.cost_vs_never["gate"]]
    cheaper_summary = [f"{m.ratio:g}" for m in sums if m.with_summary["always"] < m.with_summary["gate"]]
    return (
        f"Over {lo.sessions} sessions, compacting at step boundaries cuts the priced tokens to "
        f"{lo.cost_vs_never['gate']:.0%} (gate) and {lo.cost_vs_never['always']:.0%} (always) of never compacting "
        f"at a write/read ratio of {lo.ratio:g}, and to {hi.cost_vs_never['gate']:.0%} and "
        f"{hi.cost_vs_never['always']:.0%} at {hi.ratio:g}, where every compaction rewrites the whole context at the "
        f"write price; requests past the {WINDOW_TOKENS:,}-token window: never {over['never']}, gate "
        f"{over['gate']}, always {over['always']}. The gate compacts at {lo.compactions['gate']:.1f} of "
        f"{lo.compactions['always']:.1f} boundaries per session at {lo.ratio:g} and {hi.compactions['gate']:.1f} at "
        f"{hi.ratio:g}; its calls agree with hindsight {lo.hindsight_agree}/{lo.hindsight_calls} and "
        f"{hi.hindsight_agree}/{hi.hindsight_calls} times, its misses at {hi.ratio:g} deferrals that would have "
        f"paid ({hi.deferred_would_pay}: by breakeven, later-compaction margin or carried debt) and compactions "
        f"that did not ({hi.compacted_unpaid}; the first may look twice as far). On the mean, always-compact is "
        "cheaper than the "
        f"gate at ratios {', '.join(cheaper) or 'none'} ({', '.join(cheaper_summary) or 'none'} with the summary "
        "calls' input counted): the session model gives the summary a fixed 1000 tokens and loses nothing by it, so "
        "this measures the gate's arithmetic against its own cost model, not whether an agent keeps its accuracy "
        "with less history."
    )
