"""An endpoint that goes down: calls are retried, recorded as errors, never scored; the run resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.cell import ProviderUnavailable
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore

MODELS = {"flaky": {"backend": "scripted", "model": "flaky_policy:flaky_student", "max_retries": 1}}
ROLES = {"solver": "flaky", "reflector": "flaky"}


def test_outage_stops_the_run_and_resume_finishes_it(tmp_path: Path, make_spec: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    flag = tmp_path / "down"
    monkeypatch.setenv("EVOARENA_TEST_OUTAGE_FLAG", str(flag))
    spec = make_spec(models=MODELS, roles=ROLES)
    clean = run_experiment(spec, tmp_path / "clean")

    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path / "cache2"))  # no cached answers to hide the outage
    flag.touch()
    with pytest.raises(ProviderUnavailable, match="run the same command again"):
        run_experiment(spec, tmp_path / "outage")
    store = RunStore(tmp_path / "outage")
    assert store.run()["status"] == "interrupted"  # type: ignore[index]
    errors = store.query("SELECT error, retries FROM calls WHERE error IS NOT NULL")
    assert errors and "503" in errors[0]["error"] and errors[0]["retries"] == 1
    assert store.query("SELECT COUNT(*) AS n FROM attempts")[0]["n"] == 0  # nothing scored as a failure

    flag.unlink()
    resumed = run_experiment(spec, tmp_path / "outage")
    assert resumed["conditions"] == clean["conditions"]
    assert all(c["test"]["n_errors"] == 0 for c in resumed["conditions"])


def test_record_mode_keeps_errors_out_of_accuracy(tmp_path: Path, make_spec: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    flag = tmp_path / "down"
    flag.touch()
    monkeypatch.setenv("EVOARENA_TEST_OUTAGE_FLAG", str(flag))
    spec = make_spec(models=MODELS, roles=ROLES, methods=[{"name": "frozen"}],
                     protocol={"on_provider_error": "record"})
    results = run_experiment(spec, tmp_path / "run")
    test = results["conditions"][0]["test"]
    assert test["n_errors"] == 10 and test["n_graded"] == 0 and test["mean"] is None
