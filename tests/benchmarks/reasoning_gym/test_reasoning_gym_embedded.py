"""reasoning_gym end to end on the real Qwen2.5-Coder-0.5B-Instruct (`--model embedded-small`): three
basic_arithmetic tasks (one each of train, val and test) solved, parsed and graded by the dataset's score_answer."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evoarena.store import RunStore

pytestmark = pytest.mark.embedded


@pytest.mark.timeout(300)
def test_three_basic_arithmetic_tasks_on_the_small_embedded_model(
    frozen_on_embedded_small: Callable[..., RunStore],
) -> None:
    store = frozen_on_embedded_small("rg-embedded", {"name": "reasoning_gym", "params": {
        "dataset": "basic_arithmetic", "config": {"max_terms": 2, "max_digits": 1}, "max_tokens": 160}})
    assert {c["prompt_format"] for c in store.query("SELECT prompt_format FROM calls")} == {"chat-template"}
    rows = store.query("SELECT answer, parse_error, score FROM attempts")
    assert len(rows) == 3
    # every graded row is either parsed from <answer> tags and scored by the dataset, or a parse error scored 0
    assert all((r["answer"] is None) == (r["parse_error"] is not None) for r in rows)
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
