"""Native `textgrad` against the `textgrad` package (0.1.8 as installed) on the single-variable case: the same batch,
graph and deterministic engine replies, once through the package's objects (`BlackboxLLM`, `StringBasedFunction`,
`tg.sum(...).backward`, `TextualGradientDescent.step`) and once through `evoarena.methods.textgrad.graph`, send the
same backward requests (system and user text byte for byte), in the same order within each example, and the same
optimizer request once the package's gradient set is put in batch order."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from evoarena.methods.lib_textgrad import method as tgd
from evoarena.methods.textgrad import graph
from evoarena.methods.textgrad import method as native

PROMPT = "Solve each word problem. Reply with the final answer as a single number."
BATCH = [("Q: How many times does the word 'cat' appear in: cat, dog, cat?\nA:", "2", "3", 0),
         ("Q: Tom has 4 apples and finds 3 more, then loses 2. How many?\nA:", "5", "5", 1),
         ("Q: How many times does 'a' appear in: a, b, a, a?\nA:", "3", " ".join(["step"] * 25) + " 2", 0)]
"""(query, label, model's reply, correct): a wrong, a right and a long (shortened `<VARIABLE>`) example."""


def reply(system: str | None, prompt: str) -> str:
    """A deterministic engine: a critique named by the request's hash; the optimizer's reply in the tags."""
    if system and "IMPROVED_VARIABLE" in system:
        return "<IMPROVED_VARIABLE> Count every occurrence. </IMPROVED_VARIABLE>"
    return "critique " + hashlib.sha256(prompt.encode()).hexdigest()[:12]


def package_step(batch: Sequence[tuple[str, str, str, int]]) -> tuple[list[tuple[str, str]], tuple[str, str], str]:
    """The example's step with the package alone: backward requests in call order, the optimizer request, new value."""
    tg = tgd.textgrad()
    from textgrad.autograd.string_based_ops import StringBasedFunction

    sent: list[tuple[str, str]] = []
    answers = {q: r for q, _, r, _ in batch}

    class Engine(tg.EngineLM):  # type: ignore[name-defined]
        model_string = "scripted"

        def generate(self, prompt: str, system_prompt: str | None = None, **kwargs: object) -> str:
            if answers.get(prompt) is not None and system_prompt == PROMPT:
                return answers[prompt]
            sent.append((system_prompt or "", prompt))
            return reply(system_prompt, prompt)

        def __call__(self, prompt: str, **kwargs: object) -> str:
            return self.generate(prompt, **kwargs)

    system_prompt = tg.Variable(PROMPT, requires_grad=True, role_description=native.PROMPT_ROLE)
    model = tg.BlackboxLLM(Engine(), system_prompt)
    optimizer = tg.TextualGradientDescent(engine=Engine(), parameters=[system_prompt])
    losses = []
    for query, label, _, correct in batch:
        x = tg.Variable(query, requires_grad=False, role_description=native.QUERY_ROLE)
        y = tg.Variable(label, requires_grad=False, role_description=native.ANSWER_ROLE)
        fn = StringBasedFunction(lambda prediction, ground_truth_answer, c=correct: c,
                                 function_purpose=native.FN_PURPOSE)
        losses.append(fn(inputs=dict(prediction=model(x), ground_truth_answer=y)))
    tg.sum(losses).backward(Engine())
    system_prompt.gradients = tgd.in_batch_order(system_prompt, [q for q, *_ in batch])
    backward_calls = list(sent)
    optimizer.step()
    return backward_calls, sent[-1], str(system_prompt.value)


def native_step(batch: Sequence[tuple[str, str, str, int]]) -> tuple[list[tuple[str, str]], tuple[str, str], str]:
    sent: list[tuple[str, str]] = []

    def engine(requests: Sequence[graph.Request]) -> list[str | None]:
        sent.extend(requests)
        return [reply(s, u) for s, u in requests]

    prompt = graph.Variable(PROMPT, native.PROMPT_ROLE, requires_grad=True)
    losses = []
    for query, label, answer, correct in batch:
        response = graph.llm_call(prompt, [graph.Variable(query, native.QUERY_ROLE)], query, answer)
        truth = graph.Variable(label, native.ANSWER_ROLE)
        losses.append(graph.string_loss([("prediction", response), ("ground_truth_answer", truth)],
                                        native.FN_PURPOSE, str(correct)))
    assert graph.backward(losses, engine)
    prompt.gradients.reverse()
    request = graph.update_request(prompt, graph.gradient_context(prompt))
    new = graph.parse_update(reply(*request))
    assert new is not None
    return sent, request, new


def test_backward_requests_match_the_package() -> None:
    """Same (system, user) backward requests as the package: per example the loss's critique of the response
    (`StringBasedFunction` base template) then the response's critique of the prompt (`LLMCall` chain template,
    carrying the first critique as its objective). The package walks example by example (in the order of its
    predecessor set); the native pass sends a level at a time (every loss, last example first, then every response),
    so only the interleaving of independent requests differs."""
    ours, _, _ = native_step(BATCH)
    theirs, _, _ = package_step(BATCH)
    assert sorted(ours) == sorted(theirs) and len(ours) == 2 * len(BATCH)
    n = len(BATCH)
    # the package: each example's loss critique then, at once, its prompt critique (examples in its set's order)
    pairs = [(ours.index(theirs[2 * k]), ours.index(theirs[2 * k + 1])) for k in range(n)]
    assert all(loss < n <= response and response - n == loss for loss, response in pairs)
    assert any("<VARIABLE> step step step step step step step step step step (...) " in u for _, u in ours)


def test_update_request_and_new_value_match_the_package() -> None:
    """TGD's system prompt, update prompt (every critique inside its conversation, in batch order) and parse."""
    _, ours, new_ours = native_step(BATCH)
    _, theirs, new_theirs = package_step(BATCH)
    assert ours == theirs
    assert new_ours == new_theirs == "Count every occurrence."
