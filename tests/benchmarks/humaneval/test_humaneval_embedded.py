"""humaneval end to end on the real Qwen2.5-Coder-0.5B-Instruct (`--model embedded-small`): three problems (one each
of train, val and test) answered with code that is parsed and run with its hidden test in the sandbox."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evoarena.store import RunStore

pytestmark = pytest.mark.embedded

KNOWN = ("All tests passed.", "Hidden test assertion", "The function raised", "The test raised",
         "The code does not run",
         "Timed out", "The program stopped", "No code was found")


@pytest.mark.timeout(600)
def test_three_problems_on_the_small_embedded_model(frozen_on_embedded_small: Callable[..., RunStore]) -> None:
    store = frozen_on_embedded_small("he-embedded", {"name": "humaneval", "params": {"max_tokens": 256}})
    rows = store.query("SELECT phase, answer, parse_error, score FROM attempts")
    assert {"practice", "select", "test"} <= {r["phase"] for r in rows}
    assert all(r["answer"] and "return" in r["answer"] for r in rows)  # a coder model writes code for each
    assert all(r["score"] in (0.0, 1.0) for r in rows)
    from evoarena.benchmarks.humaneval import HumanEvalBenchmark

    bench = HumanEvalBenchmark(n_train=1, n_val=1, n_test=1)
    tasks = {t.id: t for t in bench.build()}
    graded = store.query("SELECT task_id, answer, score FROM attempts WHERE phase='test'")[0]
    again = bench.grade(tasks[graded["task_id"]], graded["answer"])  # the same verdict when graded again here
    assert again.score == graded["score"] and again.message.startswith(KNOWN)
