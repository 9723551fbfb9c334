"""`arith-student` as GEPA's proposer: it reads the reflection prompt (the `gepa` package's and evoarena `gepa`'s
template) and keeps the instruction, adding the rule of each example whose feedback is no "Correct."."""

from __future__ import annotations

from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import RULES, arith_student
from evoarena.scripted.gepa_reflect import examples

INSTRUCTION = "Solve each word problem. Reply with the final answer as a single number."
FAILED = {"inputs": "Q: Ann has 9 pens and gave away 4. How many pens are left?\nA:", "outputs": "13",
          "feedback": "The answer 13 is wrong."}
PASSED = {"inputs": "Q: There are 3 boxes with 5 cups in each. How many cups?\nA:", "outputs": "15",
          "feedback": "Correct."}


def _reply(exs: list[dict[str, str]]) -> str:
    prompt = render_prompt("evoarena.methods.gepa", "reflect", instruction=INSTRUCTION, examples=exs)
    return arith_student([Message("user", prompt)], GenParams())


def test_a_failed_examples_rule_is_added_to_the_instruction_in_a_fence() -> None:
    assert _reply([FAILED, PASSED]) == f"```\n{INSTRUCTION}\n{RULES['sub']}\n```"


def test_nothing_is_added_for_passed_examples_or_a_rule_already_there() -> None:
    assert _reply([PASSED]) == f"```\n{INSTRUCTION}\n```"
    prompt = render_prompt("evoarena.methods.gepa", "reflect", instruction=f"{INSTRUCTION}\n{RULES['sub']}",
                           examples=[FAILED])
    assert arith_student([Message("user", prompt)], GenParams()).count(RULES["sub"]) == 1


def test_the_examples_are_read_from_the_librarys_layout_too() -> None:
    """The library's prompt has two more blank lines between examples: the same (inputs, feedback) are read."""
    library = ("I provided an assistant with the following instructions to perform a task for me:\n```\nX\n```\n\n"
               "The following are examples of different task inputs provided to the assistant along with the "
               "assistant's response for each of them, and some feedback on how the assistant's response could be "
               "better:\n```\n# Example 1\n## Inputs\nQ: 1 + 2 =\nA:\n\n## Generated Outputs\n1\n\n## Feedback\n"
               "The answer 1 is wrong.\n\n\n\n# Example 2\n## Inputs\nQ: 2 + 2 =\nA:\n\n## Generated Outputs\n4\n\n"
               "## Feedback\nCorrect.\n\n\n```\n\nYour task is to write a new instruction for the assistant.")
    assert examples(library) == [("Q: 1 + 2 =\nA:", "The answer 1 is wrong."), ("Q: 2 + 2 =\nA:", "Correct.")]
