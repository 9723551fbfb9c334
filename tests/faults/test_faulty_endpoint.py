"""A run against an endpoint that misbehaves on a seeded 10% of requests (500, 429, hangs past the timeout,
truncated JSON, empty choices, a choice without a message): no fault is ever scored as an answer, every request
that reached the server is in the ledger, and a run that stops on one resumes to the fault-free result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faulty_endpoint import FAULTS, Endpoint, model_spec, serve

from evoarena.models import ResponseCache
from evoarena.protocol.run.cell import ProviderUnavailable
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore

FAULTY = {"rate": 0.1, "seed": 11, "hang_s": 1.0}


def _science(results: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(c["condition"], c["test"]["mean"], c["val"]["mean"]) for c in results["conditions"]]


def _ledgered_requests(run_dir: Path) -> int:
    rows = RunStore(run_dir).query("SELECT retries FROM calls WHERE cached = 0")
    return sum(r["retries"] + 1 for r in rows)


def _clean(tmp_path: Path, make_spec: Any) -> dict[str, Any]:
    with serve() as ok:
        spec = make_spec(models={"ep": model_spec(ok.url)}, roles={"solver": "ep", "reflector": "ep"}, seeds=[0, 1])
        return run_experiment(spec, tmp_path / "clean", probe=False,
                              cache=ResponseCache(tmp_path / "clean-cache.sqlite"))


def _faults_seen(endpoint: Endpoint) -> set[str]:
    return {k for k in endpoint.served if k != "ok"}


def test_retried_faults_never_reach_the_science_and_every_request_is_ledgered(tmp_path: Path,
                                                                              make_spec: Any) -> None:
    clean = _clean(tmp_path, make_spec)
    with serve(**FAULTY) as ep:
        spec = make_spec(models={"ep": model_spec(ep.url, timeout_s=0.5, max_retries=4)},
                         roles={"solver": "ep", "reflector": "ep"}, protocol={"on_provider_error": "record"},
                         seeds=[0, 1])
        results = run_experiment(spec, tmp_path / "faulty", probe=False)
        requests, seen = ep.requests, _faults_seen(ep)
    assert seen == set(FAULTS)  # the seed reaches every kind of fault, so each was survived
    assert _ledgered_requests(tmp_path / "faulty") == requests
    assert all(c["test"]["n_errors"] == 0 for c in results["conditions"])
    assert _science(results) == _science(clean)


def test_a_run_stopped_by_faults_resumes_to_the_fault_free_result(tmp_path: Path, make_spec: Any) -> None:
    clean = _clean(tmp_path, make_spec)
    stops = 0
    with serve(**FAULTY) as ep:
        spec = make_spec(models={"ep": model_spec(ep.url, timeout_s=0.5, max_retries=0)},
                         roles={"solver": "ep", "reflector": "ep"}, protocol={"on_provider_error": "stop"},
                         seeds=[0, 1])
        while True:
            try:
                results = run_experiment(spec, tmp_path / "faulty", probe=False)
                break
            except ProviderUnavailable:
                stops += 1
                assert stops < 60
        requests = ep.requests
    assert stops >= 3  # the run really stopped and resumed, more than once
    assert _ledgered_requests(tmp_path / "faulty") == requests
    assert _science(results) == _science(clean)
    assert RunStore(tmp_path / "faulty").run()["status"] == "finished"  # type: ignore[index]
