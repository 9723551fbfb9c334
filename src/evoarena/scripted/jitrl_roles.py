"""How a scripted policy plays JitRL's calls from a fixed ranking of the actions (evidence: mechanism): the
ranking's ranks weigh `RANK_WEIGHTS` (60, 25, 10, 5, then 1), renormalised over the options a prompt offers. A
proposal lists the ranking's first k actions; the numbered-options prompt gets the most likely option's number with
every option's index-token logprob as the alternatives; the confidence prompt one `N: C` line per option; the
evaluator prompt one `N: S` line per step from a scoring rule; any other prompt (the plain step) the first action."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from evoarena.models import Message, PolicyReply, TokenLogprob

RANK_WEIGHTS = (60, 25, 10, 5)  # the weight of the ranking's first, second, … action (1 after the fourth)
_OPTION = re.compile(r"^(\d+)\. (.+?)\s*$", re.MULTILINE)
_STEP = re.compile(r"^Step (\d+):\nState: (.*?)\nAction: (.+?)\nReward: (\S+)", re.MULTILINE | re.DOTALL)
OPTIONS = "Options for the next action:"

Ranking = Callable[[str], list[str]]
"""The actions of the step prompt `text`, best first."""
Scoring = Callable[[list[tuple[str, str, float]], str], list[int]]
"""Each step's score from the (state, action, reward) steps and the final state."""


def weights(options: Sequence[str], ranked: Sequence[str]) -> list[float]:
    """The weights of `options` by their rank in `ranked`, renormalised."""
    raw = [float(RANK_WEIGHTS[ranked.index(o)] if ranked.index(o) < len(RANK_WEIGHTS) else 1) if o in ranked
           else 1.0 for o in options]
    return [w / sum(raw) for w in raw]


def rank(options: Sequence[str], ranked: Sequence[str]) -> PolicyReply:
    """The most likely option's number, with every option's index-token logprob as the alternatives."""
    probs = weights(options, ranked)
    order = sorted(range(len(options)), key=lambda i: -probs[i])
    top = tuple((str(i + 1), math.log(probs[i])) for i in order)
    return PolicyReply(top[0][0], logprobs=(TokenLogprob(top[0][0], top[0][1], top),))


def confidence(options: Sequence[str], ranked: Sequence[str]) -> str:
    return "\n".join(f"{i + 1}: {round(100 * p)}" for i, p in enumerate(weights(options, ranked)))


def evaluate(prompt: str, scoring: Scoring) -> str:
    steps = [(state, action, float(reward)) for _, state, action, reward in _STEP.findall(prompt)]
    final = prompt.rsplit("State:", 1)[-1].split("\n\nReply with", 1)[0]
    return "\n".join(f"{i}: {s}" for i, s in enumerate(scoring(steps, final)))


def answer(messages: Sequence[Message], ranking: Ranking, scoring: Scoring) -> str | PolicyReply:
    """The reply to any of JitRL's prompts (or the plain step prompt) from `ranking` and `scoring`."""
    text = messages[-1].content
    if "You are scoring game actions" in text:
        return evaluate(text, scoring)
    step = text.split(OPTIONS, 1)[0].split("\n\nInstead of one action, propose", 1)[0]
    ranked = ranking(step)
    options = [m.group(2) for m in _OPTION.finditer(text.split(OPTIONS, 1)[1])] if OPTIONS in text else []
    if "Reply with its number only" in text:
        return rank(options, ranked)
    if "give your confidence from 0 to 100" in text:
        return confidence(options, ranked)
    proposal = re.search(r"propose (\d+) different", text)
    if proposal:
        return "\n".join(f"{i + 1}. {a}" for i, a in enumerate(ranked[:int(proposal.group(1))]))
    return ranked[0] if ranked else "look"
