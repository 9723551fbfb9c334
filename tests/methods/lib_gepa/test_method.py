"""`gepa.optimize` (the `gepa` package's optimiser) under the cell, on the scripted arith student (evidence:
mechanism): calls reach the cell's roles and ledger, metric calls are graded rollouts, the library's best candidate is
the harness — also when the cell's budget stops it — and no test task ever reaches the library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Task, benchmark
from evoarena.benchmarks.arith.benchmark import ArithBenchmark
from evoarena.harness import load_tree
from evoarena.methods.lib_gepa import bridge as bridge_module
from evoarena.methods.lib_gepa.method import budget_stop
from evoarena.methods.lib_gepa.state import read_result
from evoarena.protocol.budget import BudgetExhausted
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore, queries

pytest.importorskip("gepa")

ROLES = {"solver": "s", "proposer": "s"}
MODELS = {"s": {"backend": "scripted", "model": "arith-student"}}
FAMILIES = ["small_sum", "add", "sub", "mul"]


def run(tmp_path: Path, make_spec: Any, params: dict[str, Any], *, budget: dict[str, int] | None = None,
        bench: str = "arith") -> tuple[RunStore, dict[str, str], dict[str, Any]]:
    spec = make_spec(
        benchmark={"name": bench, "params": {"seed": 0, "n_train": 8, "n_val": 4, "n_test": 6, "families": FAMILIES}},
        methods=[{"name": "gepa.optimize", "params": params}], models=MODELS, roles=ROLES,
        **({"budget": budget} if budget else {}))
    results = run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"]), results


def attempts(store: RunStore, phase: str) -> list[dict[str, Any]]:
    return [dict(r) for r in store.query("SELECT task_id, unit_key FROM attempts WHERE phase=?", (phase,))]


def optimize_event(store: RunStore) -> dict[str, Any]:
    (row,) = store.query("SELECT payload FROM events WHERE kind='gepa_optimize'")
    return dict(json.loads(row["payload"]))


def test_the_library_accepts_a_proposal_and_its_best_candidate_is_the_harness(tmp_path: Path, make_spec: Any) -> None:
    """The scripted student answers the library's reflection prompt; the library's best candidate (its own
    `GEPAResult.best_idx`) is `system.md`, every candidate is kept in the result record, the run records the
    library and its version, and the report view shows the run."""
    store, tree, results = run(tmp_path, make_spec, {"max_metric_calls": 40})
    event, result = optimize_event(store), read_result(tree)
    assert result is not None and event["accepted"] >= 1 and len(result.candidates) == event["candidates"] >= 2
    assert event["accepted"] == len(result.candidates) - 1  # no merge: every accepted proposal joined the pool
    assert tree["system.md"] == result.candidates[result.best_idx].text == event["final_candidate"]
    assert event["best_val_mean"] > event["seed_val_mean"]
    initial = store.query("SELECT id FROM harness_versions WHERE step='init'")[0]["id"]
    kept = store.query("SELECT parent_ids FROM harness_versions WHERE manifest LIKE '%gepa.optimize candidate 1\"%'")
    assert json.loads(kept[0]["parent_ids"]) == [initial]  # lineage: candidate 1 under the seed, in the archive
    assert results["meta"]["extra"]["libraries"] == {"gepa.optimize": "gepa 0.1.4"}
    (cell,) = results["views"]["gepa.optimize"]["cells"]  # the report view: the library's own account
    assert cell["accepted"] == event["accepted"] and cell["final_candidate"] == tree["system.md"]


def test_every_metric_call_is_a_graded_rollout_and_every_call_has_its_role(tmp_path: Path, make_spec: Any) -> None:
    """The library's metric calls are the cell's rollouts (one ledger row each, in the practice step), its
    reflection calls the `proposer` role; the first step runs the whole library loop, later steps call nothing."""
    store, _, _ = run(tmp_path, make_spec, {"max_metric_calls": 40})
    event = optimize_event(store)
    rows = attempts(store, "rollout")
    assert len(rows) == event["total_metric_calls"] >= 40
    calls = [c for c in queries.calls(store, errors=False) if c.phase == "practice"]
    assert {c.role for c in calls} == {"solver", "proposer"}
    assert sum(c.role == "proposer" for c in calls) == event["proposals"]
    assert {c.unit for c in calls} == {rows[0]["unit_key"]}


def test_a_budget_stop_keeps_the_best_candidate_so_far(tmp_path: Path, make_spec: Any) -> None:
    """With the cell's budget below the library's own stop, the cell refuses a rollout mid-run: the library's best
    candidate so far is still the harness, saved as a version, and the refusal is recorded."""
    store, tree, _ = run(tmp_path, make_spec, {"max_metric_calls": 500}, budget={"max_attempts": 30})
    result = read_result(tree)
    assert result is not None and result.stopped_by is not None and "max_attempts=30" in result.stopped_by
    assert result.accepted >= 1 and tree["system.md"] == result.candidates[result.best_idx].text
    assert len(attempts(store, "rollout")) == 30


def test_only_the_budgets_refusal_is_kept_as_a_stop() -> None:
    """`budget_stop` matches the protocol's BudgetExhausted (and a subclass) by name, nothing else."""

    class Sub(BudgetExhausted):
        pass

    assert budget_stop(BudgetExhausted("x")) and budget_stop(Sub("x"))
    assert not budget_stop(RuntimeError("budget exhausted: max_calls=3"))


MARK = "ZQXSECRET"


@benchmark("test-marked-arith")
class MarkedArith(ArithBenchmark):
    """Arith whose test tasks carry unique marker ids and texts (and train tasks a marker of their own)."""

    def generate(self) -> list[Task]:
        out = []
        for t in super().generate():
            if t.split == "test":
                i = t.id.rsplit("-", 1)[1]
                t = Task(f"{MARK}-id-{i}", "test", f"{MARK}-id-{i}", f"[{MARK}-text-{i}] {t.prompt}", t.reference,
                         t.meta)
            elif t.split == "train":
                t = Task(t.id, t.split, t.source_id, f"[TRAINMARK] {t.prompt}", t.reference, t.meta)
            out.append(t)
        return out


def test_the_library_never_sees_a_test_task(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack test: every entry point of the library — `optimize`'s datasets, each adapter evaluation (its batch
    and what it returns), each reflective dataset, each reflection prompt — is spied on; no test task's id or text
    reaches it, while the train tasks' marker does (the spy sees what the library sees)."""
    import gepa

    seen: list[str] = []
    real_optimize = gepa.optimize

    def spy_optimize(*args: Any, **kwargs: Any) -> Any:
        seen.append(repr(args) + repr({k: v for k, v in kwargs.items() if k in ("trainset", "valset",
                                                                                   "seed_candidate")}))
        return real_optimize(*args, **kwargs)

    def spied(name: str) -> Any:
        real = getattr(bridge_module.Bridge, name)

        def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = real(self, *args, **kwargs)
            seen.append(repr(args) + repr(kwargs) + repr(out))
            return out
        return spy

    monkeypatch.setattr(gepa, "optimize", spy_optimize)
    for name in ("evaluate", "make_reflective_dataset", "reflection_lm"):
        monkeypatch.setattr(bridge_module.Bridge, name, spied(name))
    store, _, _ = run(tmp_path, make_spec, {"max_metric_calls": 40}, bench="test-marked-arith")
    assert optimize_event(store)["proposals"] >= 1
    text = "\n".join(seen)
    assert "TRAINMARK" in text
    assert MARK not in text
    tested = attempts(store, "test")
    assert tested and all(a["task_id"].startswith(MARK) for a in tested)  # the test split was graded, after the library


def test_params_reach_the_library_under_its_own_names(tmp_path: Path, make_spec: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every param but `max_metric_calls` is passed to `gepa.optimize` under its own name; unset, the library's
    metric-call stop is the guard of 50 per train and val task (8 + 4 here) beside the cell's stop."""
    import gepa

    got: dict[str, Any] = {}
    real = gepa.optimize

    def spy(**kwargs: Any) -> Any:
        got.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(gepa, "optimize", spy)
    params = {"reflection_minibatch_size": 2, "candidate_selection_strategy": "current_best", "use_merge": True,
              "max_merge_invocations": 2, "skip_perfect_score": False, "perfect_score": 2.0,
              "acceptance_criterion": "improvement_or_equal", "cache_evaluation": True}
    run(tmp_path, make_spec, params, budget={"max_attempts": 60})
    assert {k: got[k] for k in params} == params
    assert [getattr(s, "max_metric_calls", None) for s in got["stop_callbacks"]] == [None, 50 * (8 + 4)]


def test_the_proposer_probes_are_the_librarys_reflection_prompt_read_by_its_extractor() -> None:
    """Probes: the library's `InstructionProposalSignature` prompt per example and for all of them; a reply is
    usable when the library's `output_extractor` finds a new instruction in it."""
    from gepa.strategies.instruction_proposal import InstructionProposalSignature

    from evoarena.api import GENERIC_EXAMPLES, Reply
    from evoarena.methods.lib_gepa.method import PROBE_INSTRUCTION, GepaOptimize

    probes = GepaOptimize().probes(GENERIC_EXAMPLES)
    assert [p.name for p in probes] == [f"propose/{ex.id}" for ex in GENERIC_EXAMPLES] + ["propose/all"]
    first = GENERIC_EXAMPLES[0]
    assert probes[0].prompt == InstructionProposalSignature.prompt_renderer({
        "current_instruction_doc": PROBE_INSTRUCTION,
        "dataset_with_feedback": [{"Inputs": first.task, "Generated Outputs": first.output,
                                   "Feedback": first.feedback}]})
    assert probes[0].check(Reply("```\nAdd the two numbers.\n```")).usable
    assert not probes[0].check(Reply(f"```\n{PROBE_INSTRUCTION}\n```")).usable
    assert not probes[0].check(Reply("```\nAdd.", finish_reason="length")).well_formed


def test_the_librarys_run_is_the_same_twice(tmp_path: Path, make_spec: Any) -> None:
    """The library's seed comes from the step's seeded stream: two runs leave the same result record (the same
    seed, candidates, minibatches' outcomes and metric calls)."""
    a = run(tmp_path / "a", make_spec, {"max_metric_calls": 40, "candidate_selection_strategy": "epsilon_greedy"})[1]
    b = run(tmp_path / "b", make_spec, {"max_metric_calls": 40, "candidate_selection_strategy": "epsilon_greedy"})[1]
    assert a["memory/gepa.optimize/result.json"] == b["memory/gepa.optimize/result.json"]


def test_the_curriculum_is_refused_in_one_line() -> None:
    """A protocol that counts submitted attempts per step (the curriculum) is refused: the library's whole loop runs
    in one step and submits none."""
    from types import SimpleNamespace

    from evoarena.methods.lib_gepa.method import GepaOptimize

    ctx = SimpleNamespace(attempt_limit=1)
    with pytest.raises(ValueError, match="curriculum protocol is not supported"):
        GepaOptimize().practice(ctx, None)  # type: ignore[arg-type]


def test_a_refused_reflection_call_stops_the_library_too(tmp_path: Path, make_spec: Any) -> None:
    """The library swallows a failed reflection call (it skips the proposal); the bridge's stop condition still
    ends its loop when the cell refused the call: 4 val rollouts for the seed, 3 on the first minibatch, then the
    8th call — the proposer's — is past `max_calls: 15` less the 8 kept back for grading the initial and final
    versions on val (the library retries a failed reflection once per task: refused again,
    reflective_mutation.py:203-225). The seed, the best so far, stays the harness."""
    store, tree, _ = run(tmp_path, make_spec, {"max_metric_calls": 500}, budget={"max_calls": 15})
    result = read_result(tree)
    assert result is not None and result.stopped_by is not None
    assert "max_calls=15 less 8 kept for val" in result.stopped_by
    assert (result.proposals, result.accepted, len(result.candidates)) == (2, 0, 1)
    assert len(attempts(store, "rollout")) == 7
    assert not store.query("SELECT id FROM calls WHERE role='proposer' AND phase='practice'")


def test_the_registry_does_not_import_the_library() -> None:
    """`evoarena list` and the registry load every method without the package: a fresh interpreter that builds the
    catalog has not imported `gepa` (nor litellm), which only a practising cell imports."""
    import subprocess
    import sys

    code = ("import sys, evoarena.protocol.catalog as c; c.catalog(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gepa', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
