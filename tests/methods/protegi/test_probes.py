"""ProTeGi's role probes: a critique, a rewrite and a paraphrase per example, all asked of the optimizer, judged by
the parsers the method adopts replies with; the scripted optimizer's replies on the labels task pass them."""

from __future__ import annotations

from evoarena.api import Reply
from evoarena.api.probe import GENERIC_EXAMPLES
from evoarena.methods.protegi.method import Protegi


def _reply(text: str) -> Reply:
    return Reply(text=text, finish_reason="stop")


def test_three_probes_per_example_each_judged_by_its_parser() -> None:
    probes = Protegi().probes(GENERIC_EXAMPLES)
    assert [p.name.split("/")[0] for p in probes] == ["critique", "rewrite", "paraphrase"] * 2
    assert {p.role for p in probes} == {"optimizer"}
    critique, rewrite, paraphrase = probes[:3]
    assert critique.judge(_reply("<START>it never says to subtract apples given away<END>")).usable
    assert not critique.judge(_reply("The prompt is fine.")).well_formed
    assert rewrite.judge(_reply("<START>Subtract what is given away, then answer on the last line.<END>")).usable
    assert not rewrite.judge(_reply("<START>Solve the task. Reply with the final answer on the last line.<END>")).usable
    assert paraphrase.judge(_reply("Work out the task and give the final answer on the last line.")).usable
    assert not paraphrase.judge(_reply("")).well_formed
