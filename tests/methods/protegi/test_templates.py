"""ProTeGi's templates against the released ones (microsoft/LMOps `prompt_optimization/optimizers.py`:
`ProTeGi._get_gradients`, `apply_gradient`, `generate_synonyms`, `_sample_error_str`, as public copies of the file
carry them; the release strips each line's indentation, which leaves its gradient and edit prompts a leading newline
that ours do not have): the same text once filled with the same values."""

from __future__ import annotations

from evoarena.methods.prompting import render_prompt
from evoarena.methods.protegi.expand import PACKAGE, error_string

GRADIENT = '''\nI'm trying to write a zero-shot classifier prompt.

My current prompt is:
"{prompt}"

But this prompt gets the following examples wrong:
{error_string}

give {num_feedbacks} reasons why the prompt could have gotten these examples wrong.
Wrap each reason with <START> and <END>
'''
EDIT = '''\nI'm trying to write a zero-shot classifier.

My current prompt is:
"{prompt}"

But it gets the following examples wrong:
{error_str}

Based on these examples the problem with this prompt is that {feedback_str}

Based on the above information, I wrote {steps_per_gradient} different improved prompts.
Each prompt is wrapped with <START> and <END>.

The {steps_per_gradient} new prompts are:
'''
SYNONYM = ("Generate a variation of the following instruction while keeping the semantic meaning.\n\n"
           "Input: {prompt_section}\n\nOutput:")
EXAMPLES = [{"text": "Ticket: Hi. Trouble with my parcel.\nLabels: Billing, Shipping", "label": "Shipping",
             "prediction": "Billing"}, {"text": "Ticket: The invoice again.", "label": "Billing",
                                        "prediction": "Shipping"}]


def released_errors() -> str:
    out = ""
    for i, ex in enumerate(EXAMPLES):
        out += f"## Example {i + 1}\n"
        out += f'Text: "{ex["text"].strip()}"\nLabel: {ex["label"]}\nPrediction: {ex["prediction"]}\n\n'
    return out


def test_the_error_string_is_the_released_one() -> None:
    assert error_string(EXAMPLES) == released_errors()


def test_the_templates_are_the_released_ones() -> None:
    errs = error_string(EXAMPLES)
    assert "\n" + render_prompt(PACKAGE, "gradient", prompt="P", errors=errs, n=1) == GRADIENT.format(
        prompt="P", error_string=released_errors(), num_feedbacks=1)
    assert "\n" + render_prompt(PACKAGE, "edit", prompt="P", errors=errs, gradient="G", n=1) == EDIT.format(
        prompt="P", error_str=released_errors(), feedback_str="G", steps_per_gradient=1)
    assert render_prompt(PACKAGE, "paraphrase", prompt="P") == SYNONYM.format(prompt_section="P")
