"""Sample records shared by the report tests (a uniquely named module, importable from the tests)."""

from __future__ import annotations

import random

from evoarena.report import CallRecord, CellBudget, RunMeta, ScoreRecord


def make_meta(evidence: str = "mechanism", **extra: object) -> RunMeta:
    return RunMeta(
        run_id="run-001",
        spec_name="toy-spec",
        spec_hash="deadbeef" * 8,
        code_version="0.1.0+abc",
        evidence=evidence,
        benchmark="toy-arith",
        test_split_hash="cafe" * 16,
        isolation="process",
        started_at="2024-05-01T10:00:00Z",
        finished_at="2024-05-01T10:05:00Z",
        extra=dict(extra),
    )


def make_scores(
    n_tasks: int = 20, seeds: tuple[int, ...] = (0, 1), with_val: bool = True
) -> list[ScoreRecord]:
    rng = random.Random(7)
    out = []
    for condition, p in (("frozen", 0.4), ("reflexion", 0.7)):
        for model in ("scripted",):
            for seed in seeds:
                for t in range(n_tasks):
                    out.append(
                        ScoreRecord(condition, model, seed, "test", f"t{t:03d}", float(rng.random() < p))
                    )
                if with_val:
                    for t in range(5):
                        out.append(
                            ScoreRecord(condition, model, seed, "val", f"v{t}", float(rng.random() < p))
                        )
    return out


def make_calls() -> list[CallRecord]:
    out = []
    for condition in ("frozen", "reflexion", None):
        for role in ("solver", "reflector"):
            for phase in ("practice", "select", "test"):
                for cached in (False, True):
                    out.append(
                        CallRecord(
                            condition=condition,
                            model="scripted" if condition else None,
                            seed=0 if condition else None,
                            role=role,
                            model_id="scripted/echo",
                            input_tokens=100,
                            output_tokens=20,
                            cost_usd=0.0015,
                            latency_s=0.25,
                            cached=cached,
                            error=None,
                            phase=phase,
                        )
                    )
    return out


def make_budgets() -> list[CellBudget]:
    limits: dict[str, int | None] = {"max_attempts": 10, "max_calls": None, "max_tokens": 5000}
    return [
        CellBudget("reflexion", "scripted", 0, limits, {"attempts": 10, "calls": 40, "tokens": 4000}, True),
        CellBudget("frozen", "scripted", 0, limits, {"attempts": 3, "calls": 3, "tokens": 300}, False),
    ]
