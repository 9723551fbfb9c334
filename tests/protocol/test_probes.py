"""Role probes in a run: recorded in the run store and results.json, a warning on a condition whose role fails
them (results.json and the report), outside every cell's calls and budget, skipped with probe=False, reused on
resume with no new call, and the cells' results untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.models import ResponseCache
from evoarena.protocol.run.cell import ProviderUnavailable
from evoarena.protocol.run.probes import plan_probes
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.validate import validate_spec
from evoarena.report.probes import summarise
from evoarena.spec import ExperimentSpec, parse_spec
from evoarena.store import RunStore, queries
from evoarena.store.probes import probe_rows


def small_spec(**overrides: Any) -> ExperimentSpec:
    data: dict[str, Any] = {
        "name": "small",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
        "methods": [{"name": "frozen"}, {"name": "reflexion"}, {"name": "bootstrap_fewshot"}],
        "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
    }
    return parse_spec({**data, **overrides})


HERE = (Path(__file__).resolve().parent,)


def refusing_reflector() -> ExperimentSpec:
    """The arith-basics recipe's student as solver; a reflector that asks for input instead of reflecting."""
    return small_spec(models={"scripted": {"backend": "scripted", "model": "arith-student"},
                              "refuser": {"backend": "scripted", "model": "refusing_policy:refuser"}},
                      roles={"solver": "scripted", "reflector": "refuser"})


def probe_calls(run_dir: Path) -> list[Any]:
    return queries.calls(RunStore(run_dir), phase="probe")


def without_probes(value: Any) -> Any:
    """results.json without the probes, the run's meta and latencies."""
    if isinstance(value, dict):
        return {k: without_probes(v) for k, v in value.items()
                if k not in ("probes", "probe_warnings", "meta", "latency_s")}
    return [without_probes(v) for v in value] if isinstance(value, list) else value


def test_the_plan_has_one_probe_per_example_for_each_update_role() -> None:
    spec = small_spec()
    resolved = validate_spec(spec)
    planned = plan_probes(spec, resolved.methods, resolved.benchmark)
    assert [(p.method, p.probe.role, p.model, p.conditions) for p in planned] == [
        ("reflexion", "reflector", "scripted", ("reflexion",))] * 2  # frozen and bootstrap_fewshot have none
    assert all(p.params.max_tokens == 250 and p.params.stop == ("\n\n",) for p in planned)  # reflexion's own


def test_a_run_records_its_probes_and_warns_where_a_role_fails_them(tmp_path: Path) -> None:
    seen: list[Any] = []
    results = run_experiment(refusing_reflector(), tmp_path / "run", search=HERE,
                             on_probes=lambda s, t: seen.append((s, t)))
    (summary,), threshold = seen[0]
    assert (summary.method, summary.role, summary.model, summary.n, summary.usable) == ("reflexion", "reflector",
                                                                                         "refuser", 2, 0)
    assert threshold == 0.5
    (row,) = results["probes"]["rows"]
    assert row["warning"] == ("reflector (refuser) produced 0/2 usable reflexion updates in probes: a null here is "
                              "uninformative")
    assert row["conditions"] == ["reflexion"] and row["usable_share"] == 0.0 and row["tokens"] > 0
    by_condition = {c["condition"]: c for c in results["conditions"]}
    assert by_condition["reflexion"]["probe_warnings"] == [row["warning"]]
    assert "probe_warnings" not in by_condition["frozen"]
    html = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert "reflexion: reflector (refuser) produced 0/2 usable reflexion updates" in html
    assert 'id="probes"' in html
    # the probes' calls are in the ledger, outside every cell and every call total of results.json
    calls = probe_calls(tmp_path / "run")
    assert len(calls) == 2 and all(c.cell is None and c.role == "reflector" for c in calls)
    assert "probe" not in results["calls"]["totals"] and "probe" not in results["calls"]["by_phase"]


def test_probes_change_nothing_the_cells_do(tmp_path: Path) -> None:
    probed = run_experiment(small_spec(), tmp_path / "a", cache=ResponseCache(tmp_path / "a.sqlite"))
    plain = run_experiment(small_spec(), tmp_path / "b", probe=False, cache=ResponseCache(tmp_path / "b.sqlite"))
    assert probed["probes"]["rows"][0]["usable"] == 2 and "probe_warnings" not in str(probed["conditions"])
    assert plain["probes"] == {"threshold": 0.5, "rows": []}
    assert probe_calls(tmp_path / "b") == []
    assert without_probes(probed) == without_probes(plain)


def test_resume_reuses_the_stored_probes(tmp_path: Path) -> None:
    run_experiment(refusing_reflector(), tmp_path / "run", search=HERE)
    before = probe_rows(RunStore(tmp_path / "run"))
    again = run_experiment(refusing_reflector(), tmp_path / "run", search=HERE)
    assert len(probe_calls(tmp_path / "run")) == 2  # no new call
    assert probe_rows(RunStore(tmp_path / "run")) == before
    assert again["probes"]["rows"][0]["usable"] == 0


def test_a_threshold_of_zero_warns_of_nothing(tmp_path: Path) -> None:
    results = run_experiment(refusing_reflector(), tmp_path / "run", search=HERE, probe_threshold=0.0)
    assert results["probes"]["threshold"] == 0.0 and results["probes"]["rows"][0]["warning"] is None
    assert "probe_warnings" not in str(results["conditions"])


def test_a_probe_that_met_a_provider_error_is_asked_again_on_resume(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    flag = tmp_path / "down"
    monkeypatch.setenv("EVOARENA_TEST_OUTAGE_FLAG", str(flag))
    spec = small_spec(models={"flaky": {"backend": "scripted", "model": "flaky_policy:flaky_student",
                                        "max_retries": 0}}, roles={"solver": "flaky", "reflector": "flaky"})
    flag.touch()
    with pytest.raises(ProviderUnavailable):
        run_experiment(spec, tmp_path / "run", search=HERE)
    (row,) = [r.row(0.5) for r in summarise(probe_rows(RunStore(tmp_path / "run")))]
    assert (row["n"], row["errors"], row["warning"]) == (0, 2, None)  # no verdict, so no warning
    flag.unlink()
    resumed = run_experiment(spec, tmp_path / "run", search=HERE)
    assert [(r["n"], r["usable"], r["errors"]) for r in resumed["probes"]["rows"]] == [(2, 2, 0)]
