"""`gepa.optimize` against the installed `gepa` 0.1.4: the bridge does what the package's own DefaultAdapter does
(solver messages, reflective records), the package's reflection prompt is the one evoarena's `gepa` sends (up to
blank lines), and its reply extraction is compared with ours. Paths are under site-packages/gepa/."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from evoarena.api import TaskView
from evoarena.methods.gepa.method import Gepa
from evoarena.methods.lib_gepa.bridge import Bridge
from evoarena.methods.lib_gepa.method import GepaOptimize
from evoarena.methods.prompting import render_prompt
from evoarena.methods.replies import parse_instruction
from evoarena.search import Scored
from evoarena.search.pareto import pareto_weights

pytest.importorskip("gepa")

from gepa.adapters.default_adapter.default_adapter import DefaultAdapter  # noqa: E402
from gepa.core.adapter import EvaluationBatch  # noqa: E402
from gepa.strategies.instruction_proposal import InstructionProposalSignature  # noqa: E402

TASK = TaskView("train-000", "train", "train-000", "Tom has 3 apples and gets 4 more. How many apples?")
TASK_TEXT = f"Q: {TASK.prompt}\nA:"
INSTRUCTION = "Solve each word problem.\nReply with the final answer as a single number.\n"
EXAMPLES = [
    {"inputs": "Q: 3 + 4 =\nA:", "outputs": "3", "feedback": "The answer 3 is wrong."},
    {"inputs": TASK_TEXT, "outputs": "7", "feedback": "Correct."},
]


def test_solver_messages_are_the_default_adapters() -> None:
    """default_adapter.py:117-127: the candidate's (first) component as it is as the system message, the data's
    input as the user message — what `build_messages` sends at rollouts and at test time."""
    sent: list[Any] = []
    adapter = DefaultAdapter(model=lambda messages: sent.append(messages) or "7")
    adapter.evaluate([{"input": TASK_TEXT, "additional_context": {}, "answer": "7"}], {"system_prompt": INSTRUCTION})
    ours = GepaOptimize().build_messages({"system.md": INSTRUCTION}, TASK_TEXT, TASK)
    assert [{"role": m.role, "content": m.content} for m in ours] == sent[0]


def test_reflective_records_are_the_default_adapters() -> None:
    """default_adapter.py:176-205: one record per trajectory with the keys Inputs (the data's input: the user
    message), Generated Outputs (the full response) and Feedback, under the one component updated."""
    theirs = DefaultAdapter(model=lambda messages: "3").make_reflective_dataset(
        {"system_prompt": INSTRUCTION},
        EvaluationBatch(outputs=[{"full_assistant_response": "3"}], scores=[0.0], trajectories=[
            {"data": {"input": TASK_TEXT, "additional_context": {}, "answer": "7"}, "full_assistant_response": "3",
             "feedback": "The answer 3 is wrong."}]),
        ["system_prompt"])
    traj = [{"data": {"input": TASK_TEXT, "id": TASK.id}, "full_assistant_response": "3",
             "feedback": "The answer 3 is wrong."}]
    ours = Bridge(ctx=None).make_reflective_dataset(  # type: ignore[arg-type]
        {"system_prompt": INSTRUCTION}, EvaluationBatch(outputs=[{}], scores=[0.0], trajectories=traj),
        ["system_prompt"])
    assert {k: [dict(r) for r in v] for k, v in ours.items()} == {k: [dict(r) for r in v] for k, v in theirs.items()}


def _library_prompt(instruction: str, examples: list[dict[str, str]]) -> str:
    records = [{"Inputs": e["inputs"], "Generated Outputs": e["outputs"], "Feedback": e["feedback"]} for e in examples]
    return str(InstructionProposalSignature.prompt_renderer(
        {"current_instruction_doc": instruction, "dataset_with_feedback": records}))


def test_the_reflection_prompt_is_evoarena_gepas_up_to_blank_lines() -> None:
    """instruction_proposal.py:13-33 (`default_prompt_template`) and :54-94 (`format_samples`: `# Example N`, one
    `## key` per record key, each value followed by a blank line, examples joined by a blank line): the same text as
    evoarena's `gepa` (methods/gepa/prompts/reflect.md), word for word. The library has two more blank lines between
    examples, one more before the closing fence, and no final newline; nothing else differs."""
    theirs = _library_prompt(INSTRUCTION.strip(), EXAMPLES)
    ours = render_prompt(Gepa.__module__.rpartition(".")[0], "reflect", instruction=INSTRUCTION.strip(),
                         examples=EXAMPLES)

    def blank_lines_squeezed(text: str) -> str:
        return re.sub(r"\n{3,}", "\n\n", text).strip()

    assert theirs != ours  # the whitespace differences, kept in evoarena's template
    assert blank_lines_squeezed(theirs) == blank_lines_squeezed(ours)
    assert ours.count("\n\n\n") == 0 and theirs.count("\n\n\n\n# Example 2") == 1


REPLIES = [
    "```\nAdd the numbers.\n```",
    "New instruction:\n```text\nAdd the numbers.\nThen reply.\n```\nDone.",
    "```markdown\nAdd.\n```",
    "Add the numbers.",
    "```\nAdd the numbers.",
    "Add the numbers.\n```",
    "```\nfirst\n```\nbetween\n```\nsecond\n```",
    "```Add.\nThen reply.\n```",
    "```Add the numbers.\nThen reply.```",
    "```Add.```",
]


@pytest.mark.parametrize("raw", REPLIES)
def test_the_libraries_extraction_is_ours_released(raw: str) -> None:
    """instruction_proposal.py:125-155 (`output_extractor`): between the first and last ``` (a language tag line
    dropped), else the reply less a lone fence — evoarena's `parse_instruction(fences="released")`, which also ends
    the text with a newline."""
    theirs = InstructionProposalSignature.output_extractor(raw)["new_instruction"]
    ours, _ = parse_instruction(raw, "released")
    assert ours == theirs + "\n"


def _library_weights(table: list[tuple[float, ...]]) -> dict[int, int]:
    """gepa_utils.py:90-108: the per-instance fronts (every program at the instance's top score), the dominated
    removed (`remove_dominated_programs`, programs ordered by mean), each survivor's number of fronts."""
    from gepa.gepa_utils import remove_dominated_programs

    fronts = {k: {p for p, row in enumerate(table) if row[k] == max(r[k] for r in table)}
              for k in range(len(table[0]))}
    means = [sum(row) / len(row) for row in table]
    weights: dict[int, int] = {}
    for front in remove_dominated_programs(fronts, scores=means).values():
        for p in front:
            weights[p] = weights.get(p, 0) + 1
    return weights


def _tables(seed: int, count: int) -> list[list[tuple[float, ...]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, m = rng.randint(1, 6), rng.randint(1, 6)
        out.append([tuple(rng.choice((0.0, 0.5, 1.0)) for _ in range(m)) for _ in range(n)])
    return out


def _ours(table: list[tuple[float, ...]]) -> dict[str, int]:
    """evoarena's `search.pareto_weights`, the candidates on no front (weight 0, never drawn) left out."""
    weights = pareto_weights([Scored(f"c{p}", row) for p, row in enumerate(table)])
    return {i: w for i, w in weights.items() if w}


def _mean_ties(table: list[tuple[float, ...]]) -> bool:
    means = [sum(row) / len(row) for row in table]
    return len(set(means)) < len(means)


def test_pareto_parent_weights_are_the_librarys_when_means_differ() -> None:
    """gepa_utils.py:37-117 (`select_program_candidate_from_pareto_front`: `rng.choice` over each survivor repeated
    by its front count, after `remove_dominated_programs`) against evoarena's `search.pareto_weights` (one
    `rng.choices` draw with those weights): on random score tables whose candidates' means all differ, the same
    weights, so the same parent distribution (the draws themselves differ: `choice` over a repeated list vs
    `choices` with weights)."""
    tables = [t for t in _tables(0, 400) if not _mean_ties(t)]
    assert len(tables) > 100
    for table in tables:
        assert _ours(table) == {f"c{p}": w for p, w in _library_weights(table).items()}, table


def test_pareto_parent_weights_are_the_librarys_with_mean_ties() -> None:
    """gepa_utils.py:37-75: `remove_dominated_programs` orders programs by score with a stable sort over the order
    they are met in the fronts, and evoarena's `pareto_weights` tries them in that order too; e.g.
    [(0.5, 1, 1, 0, 0), (0, 0.5, 1, 0, 1), (1, 1, 0, 1, 0), (0.5, 0.5, 0.5, 1, 1), (1, 0, 1, 0, 0.5)] leaves
    {c1: 2, c2: 3} to both (it left {c2: 3, c3: 2, c4: 2} to evoarena when ties went by archive index)."""
    for table in [t for t in _tables(0, 400) if _mean_ties(t)]:
        assert _ours(table) == {f"c{p}": w for p, w in _library_weights(table).items()}, table


def test_minibatch_acceptance_is_the_librarys_strict_improvement() -> None:
    """strategies/acceptance.py:44-53 (`StrictImprovementAcceptance`: the child's minibatch sum strictly above the
    parent's) is evoarena `gepa`'s `StrictImprovement("sum")` on 500 random minibatches (ties refused)."""
    from types import SimpleNamespace

    from gepa.strategies.acceptance import StrictImprovementAcceptance

    from evoarena.methods.gepa.method import ACCEPT

    rng = random.Random(1)
    for _ in range(500):
        k = rng.randint(1, 4)
        before, after = ([rng.choice((0.0, 0.5, 1.0)) for _ in range(k)] for _ in range(2))
        proposal = SimpleNamespace(subsample_scores_before=before, subsample_scores_after=after)
        assert StrictImprovementAcceptance().should_accept(proposal, None) == ACCEPT.decide(before, after).accepted
