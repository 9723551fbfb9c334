"""How a scripted policy plays TextGrad's backward and optimizer calls (evidence: mechanism). The gradient for a
response says whether the string-based loss found it correct; the gradient for the system prompt names the lesson
for the failed query shown in `<LM_INPUT>`; the optimizer step appends every lesson named in its `<FEEDBACK>` spans
to the prompt and sends it between `<IMPROVED_VARIABLE>` tags. Prompts are recognised by a phrase of each textgrad
template (`GRADIENT`, `STEP`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evoarena.models import Message

GRADIENT = "You will give feedback to a variable with the following role"
STEP = "Here is the role of the variable you will improve"
WRONG = "The prediction does not match the ground truth answer."
NO_FEEDBACK = "No feedback: the objective is met."
ADD = "Add this rule to the system prompt: "

Lesson = Callable[[str, str], str | None]
"""The lesson for a failed query (its text, the feedback on it); None when the policy has none."""


def is_textgrad_prompt(messages: Sequence[Message]) -> bool:
    text = messages[-1].content if messages else ""
    return GRADIENT in text or STEP in text


def _span(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>(.*?)</{tag}>", text, flags=re.S)
    return found.group(1).strip() if found else ""


def answer(messages: Sequence[Message], lesson: Lesson) -> str:
    """The reply to textgrad's gradient or update prompt (the last message)."""
    text = messages[-1].content
    if STEP in text:
        return _update(text, lesson)
    if "<OUTPUT_OF_FUNCTION>" in text:  # the loss's backward: was the prediction correct?
        return WRONG if _span(text, "OUTPUT_OF_FUNCTION") in ("0", "") else NO_FEEDBACK
    objective = _span(text, "OBJECTIVE_FUNCTION")
    if WRONG not in objective:
        return NO_FEEDBACK
    query = re.search(r"Q: (.+)", _span(text, "LM_INPUT"))
    rule = lesson(query.group(1).strip(), objective) if query else None
    return f"{ADD}{rule}" if rule else "The system prompt could be clearer, but I cannot say how."


def _update(text: str, lesson: Lesson) -> str:
    """The prompt (in full, from the first conversation's `<LM_SYSTEM_PROMPT>`; else the `<VARIABLE>` span) with
    each rule the feedback names appended once; feedback naming no rule (a probe's grader message) gets the lesson
    for its conversation's query."""
    prompt = _span(text, "LM_SYSTEM_PROMPT") or _span(text, "VARIABLE")
    for chunk in text.split("<CONVERSATION>")[1:]:
        feedback = _span(chunk, "FEEDBACK")
        rules = [r.strip() for r in re.findall(rf"{re.escape(ADD)}(.+)", feedback)]
        if not rules and feedback and NO_FEEDBACK not in feedback:
            query = _span(chunk, "LM_INPUT")
            found = lesson(re.sub(r"^Q: |\nA:$", "", query).strip(), feedback)
            rules = [found] if found else []
        for rule in rules:
            if rule not in prompt:
                prompt = f"{prompt}\n{rule}"
    return f"<IMPROVED_VARIABLE>{prompt}</IMPROVED_VARIABLE>"
