"""Methods' parallel proposals: GEPA's P x N proposer calls, TF-GRPO's per-rollout summaries and SkillProx's
per-trajectory diagnoses each go out as one batch — several calls of that role in flight at once when the run's
concurrency allows — and the run records what the one-at-a-time run records: the same results.json, the same method
events in the same order in every cell, the same ledger rows (in any order within a batch)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_results_pinned import narrowed, normalised

from evoarena.models import Completion, GenParams, Message, ResponseCache, ScriptedBackend
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.run.step_service import RUNNER_EVENTS
from evoarena.scripted.gepa_reflect import is_gepa_reflection
from evoarena.spec import ExperimentSpec, parse_spec
from evoarena.store import RunStore

KINDS: dict[str, Callable[[str], bool]] = {
    "proposer": is_gepa_reflection,
    "summarizer": lambda text: text.rstrip().endswith("Summary:"),
    "diagnoser": lambda text: text.startswith("You are the SkillProx diagnoser."),
}


class Meter:
    """The scripted calls of each batched role in flight (and the most seen at once), each held 10 ms so that a batch
    sent one by one could never overlap while one sent at once does."""

    def __init__(self) -> None:
        self.now = dict.fromkeys(KINDS, 0)
        self.peak = dict.fromkeys(KINDS, 0)
        self._lock = threading.Lock()

    def wrap(self, original):  # type: ignore[no-untyped-def]
        def complete(backend: ScriptedBackend, messages: Sequence[Message], params: GenParams) -> Completion:
            text = "\n\n".join(m.content for m in messages)
            kind = next((k for k, test in KINDS.items() if test(text)), None)
            if kind is None:
                return original(backend, messages, params)  # type: ignore[no-any-return]
            with self._lock:
                self.now[kind] += 1
                self.peak[kind] = max(self.peak[kind], self.now[kind])
            try:
                time.sleep(0.01)
                return original(backend, messages, params)  # type: ignore[no-any-return]
            finally:
                with self._lock:
                    self.now[kind] -= 1

        return complete


def _tf_grpo() -> ExperimentSpec:
    return parse_spec({
        "name": "groups", "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 4, "n_val": 0, "n_test": 2}},
        "methods": [{"name": "tf_grpo", "params": {"group_size": 4}}],
        "models": {"s": {"backend": "scripted", "model": "arith-mixed-groups"}}, "roles": {"solver": "s"},
    })


def _only(name: str, label: str, benchmark: dict[str, Any] | None = None,
          params: dict[str, Any] | None = None) -> ExperimentSpec:
    """A pinned recipe's one condition, its benchmark and method params updated by `benchmark` and `params`."""
    spec = narrowed(name)
    method = next(m for m in spec.methods if (m.label or m.name) == label)
    method = method.model_copy(update={"params": {**method.params, **(params or {})}})
    bench = spec.benchmark.model_copy(update={"params": {**spec.benchmark.params, **(benchmark or {})}})
    return spec.model_copy(update={"methods": [method], "benchmark": bench})


CASES = {
    "gepa": (lambda: _only("gepa-proposals", "gepa-2x2"), "proposer"),
    "tf_grpo": (_tf_grpo, "summarizer"),
    # 28 sheets, 4 of them test: two initially failing train tasks in the first batch (22 give one); then Prox
    "skillprox": (lambda: _only("skillprox-sheets", "G3D", {"tasks": 28, "ratio": [7, 5, 2]},
                                {"iterations": 2, "val_size": 4}), "diagnoser"),
}


def _run(spec: ExperimentSpec, root: Path, concurrency: int,
         monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], RunStore, Meter]:
    meter = Meter()
    with monkeypatch.context() as mp:
        mp.setattr(ScriptedBackend, "complete", meter.wrap(ScriptedBackend.complete))
        got = run_experiment(spec, root / "run", concurrency=concurrency, probe=False,
                             cache=ResponseCache(root / "cache.sqlite"))
    return normalised(got), RunStore(root / "run"), meter


def _method_events(store: RunStore) -> list[tuple[str, str, str]]:
    """Every event a method logged, cell by cell, in the order logged."""
    rows = store.query("SELECT cell, kind, payload FROM events ORDER BY cell, id")
    return [(r["cell"], r["kind"], r["payload"]) for r in rows if r["kind"] not in RUNNER_EVENTS]


def _ledger(store: RunStore) -> list[tuple[Any, ...]]:
    rows = store.query("SELECT cell, unit, role, cache_key, response_blob, cached, error FROM calls")
    return sorted(tuple("" if v is None else v for v in r.values()) for r in rows)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", list(CASES))
def test_a_batched_proposal_runs_side_by_side_and_records_the_sequential_run(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, role = CASES[case]
    spec = make()
    assert len(spec.methods) == 1
    seq, seq_store, seq_meter = _run(spec, tmp_path / "seq", 1, monkeypatch)
    par, par_store, par_meter = _run(spec, tmp_path / "par", 8, monkeypatch)
    assert seq_meter.peak[role] == 1  # one at a time: the baseline really is sequential
    assert par_meter.peak[role] >= 2, f"the {role} calls of a batch never overlapped"
    assert json.dumps(par, sort_keys=True) == json.dumps(seq, sort_keys=True)
    events = _method_events(seq_store)
    assert events and _method_events(par_store) == events
    assert _ledger(par_store) == _ledger(seq_store)
    calls = seq_store.query("SELECT COUNT(*) AS n FROM calls WHERE role = ?", (role,))[0]["n"]
    assert calls >= 2
