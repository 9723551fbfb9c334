"""Concurrency changes how fast, never what: the pinned recipes run at concurrency 16 — cells, episodes, rollouts and
grading in flight together, each scripted call delayed by a random 0–3 ms so they finish in a new order every time —
give exactly the results.json of the sequential run (the golden files of test_results_pinned.py)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_results_pinned import GOLDEN, narrowed, normalised

from evoarena.models import Completion, GenParams, Message, ScriptedBackend
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore


class InFlight:
    """Counts scripted calls in flight (and the most seen at once), with a random delay that reorders them."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._jitter = random.SystemRandom()

    def wrap(self, original):  # type: ignore[no-untyped-def]
        def complete(backend: ScriptedBackend, messages: Sequence[Message], params: GenParams) -> Completion:
            with self._lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            try:
                time.sleep(self._jitter.random() * 0.003)
                return original(backend, messages, params)  # type: ignore[no-any-return]
            finally:
                with self._lock:
                    self.now -= 1

        return complete


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ["arith-basics", "clr-methods", "skillprox-sheets", "gepa-proposals"])
def test_results_at_concurrency_16_are_the_sequential_ones(name: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    meter = InFlight()
    monkeypatch.setattr(ScriptedBackend, "complete", meter.wrap(ScriptedBackend.complete))
    got = normalised(run_experiment(narrowed(name), tmp_path / "run", concurrency=16))
    want = json.loads((GOLDEN / f"{name}.json").read_text("utf-8"))
    assert json.dumps(got, sort_keys=True, indent=1) == json.dumps(want, sort_keys=True, indent=1)
    assert 1 < meter.peak <= 16  # it really ran concurrently, within the limit


def test_a_run_resumes_at_another_concurrency(tmp_path: Path) -> None:
    """The spec hash leaves concurrency out, so the same run directory takes the run up at any concurrency, and a
    finished run re-run at another makes no model call."""
    spec = narrowed("arith-basics")
    faster = spec.model_copy(update={"protocol": spec.protocol.model_copy(update={"concurrency": 8})})
    assert faster.spec_hash() == spec.spec_hash()
    first = run_experiment(spec, tmp_path / "run")
    calls = len(RunStore(tmp_path / "run").query("SELECT id FROM calls WHERE cached = 0"))
    again = run_experiment(faster, tmp_path / "run")
    assert normalised(again) == normalised(first)
    assert len(RunStore(tmp_path / "run").query("SELECT id FROM calls WHERE cached = 0")) == calls
