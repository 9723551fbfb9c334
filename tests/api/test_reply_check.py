"""The shared reply check: each kind of flaw on the replies the issue quotes from real runs, and its near misses."""

from __future__ import annotations

from evoarena.api.reply_check import REPEAT_SHARE, duplicate, echo, flaw, refusal, repeat_share, repeated
from evoarena.methods.ace import method as ace
from evoarena.methods.prompting import template_text

CURATE = template_text(ace.__package__, "curate")


def test_a_refusal_or_request_for_input() -> None:
    for text in ("Certainly! Please provide the inputs for the new task.", "Please provide the new instruction.",
                 "Sure, could you share more details about the task?", "I'm sorry, but I can't help with that.",
                 "I need more information to write an instruction."):
        assert refusal(text), text
        assert flaw(text) is not None and flaw(text).kind == "refused"  # type: ignore[union-attr]
    for text in ("Solve the task. Please provide the final answer on the last line.",
                 "Count every occurrence; provide your answer as a number.", "Subtract what is given away."):
        assert not refusal(text), text
    assert not refusal("x " * 120 + "Please provide the inputs.")  # looked for at the start only


def test_an_echo_of_the_template_or_the_prompt() -> None:
    copied = "Identify only the NEW insights in the reflection below that are missing from the current playbook."
    assert echo(copied, template=CURATE)
    assert flaw(copied, template=CURATE).kind == "echo"  # type: ignore[union-attr]
    assert not echo("Subtract what is given away and add what is bought, in order.", template=CURATE)
    assert not echo("Do not regenerate the playbook; add only", template=CURATE)  # seven words in a row: no copy
    prompt = "Task: " + " ".join(f"word{i}" for i in range(40))
    assert echo(prompt, prompt=prompt) and echo(f"Sure.\n{prompt}", prompt=prompt)
    assert not echo("word1 word2 word3 word4 word5 word6 word7 word8 word9", prompt=prompt)  # quotes a little of it


def test_a_duplicate_of_the_parent() -> None:
    parent = "Solve the task.\nReply with the final answer on the last line."
    assert duplicate("  Solve the task. Reply with the final\nanswer on the last line.\n", parent)
    assert flaw(parent + "\n", parent=parent).kind == "duplicate"  # type: ignore[union-attr]
    assert flaw("Solve the task. Reply with the final answer on its own line.", parent=parent) is None


def test_a_list_of_repeated_items() -> None:
    same = ["Always double-check the count before answering."] * 20
    assert repeat_share(same) == 0.95 and repeated(same)
    assert flaw("...", items=same).kind == "repeated"  # type: ignore[union-attr]
    half = ["a", "A ", "b", "b"]  # two of four repeat an earlier item: the threshold itself
    assert repeat_share(half) == REPEAT_SHARE and repeated(half)
    assert not repeated(["a", "b", "c", "a"])  # one of four
    assert not repeated(["a", "a"])  # too few items to call it a list
    assert not repeated([f"rule {i}" for i in range(20)])
