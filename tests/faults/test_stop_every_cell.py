"""`on_provider_error: stop` under parallel cells: the first cell that stops stops them all (issue 12 item 5)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from faulty_endpoint import model_spec, serve

from evoarena.protocol.run.cell import ProviderUnavailable
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore


def _spec(make_spec: Any, url: str) -> Any:
    return make_spec(methods=[{"name": "frozen"}], seeds=[0, 1, 2, 3],
                     models={"down": model_spec(url, max_retries=2)}, roles={"solver": "down"},
                     protocol={"on_provider_error": "stop"})


def test_stop_halts_cells_running_beside_it_and_cancels_the_rest(tmp_path: Path, make_spec: Any) -> None:
    with serve(rate=1.0, kinds=("500",)) as endpoint:
        with pytest.raises(ProviderUnavailable, match="run the same command again"):
            run_experiment(_spec(make_spec, endpoint.url), tmp_path / "run", cells_in_parallel=2, probe=False)
        time.sleep(0.2)  # nothing may arrive after the run returned
        requests = endpoint.requests
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT cell, retries, error FROM calls")
    # 4 cells × 3 tries each without the halt; with it, the two running cells at most, and the second one's back-off
    # ends when the first stops, so at most one more try after the first failure
    assert requests <= 2 * 3
    assert {r["cell"] for r in rows} <= {"frozen__down__s0", "frozen__down__s1"}
    assert sum(r["retries"] + 1 for r in rows) == requests  # every request that reached the server is in the ledger
    assert all(r["error"] for r in rows)
    assert store.run()["status"] == "interrupted"  # type: ignore[index]
    assert not store.query("SELECT * FROM attempts")  # nothing scored


def test_halted_run_resumes_when_the_endpoint_is_back(tmp_path: Path, make_spec: Any) -> None:
    with serve(rate=1.0, kinds=("500",)) as down:
        spec = _spec(make_spec, down.url)
        with pytest.raises(ProviderUnavailable):
            run_experiment(spec, tmp_path / "run", cells_in_parallel=2, probe=False)
        down.rate = 0.0  # the endpoint is back: the same spec (same URL) resumes and finishes
        results = run_experiment(spec, tmp_path / "run", cells_in_parallel=2, probe=False)
    assert [c["condition"] for c in results["conditions"]] == ["frozen"]
    assert results["conditions"][0]["test"]["n_errors"] == 0 and results["conditions"][0]["test"]["n_graded"] == 40
