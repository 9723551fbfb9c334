"""`evoarena plan` on scripted specs: the pilot (its own directory, cached calls the run reuses), the MDE it feeds,
the estimate, and the one warning line `evoarena run` prints before any method runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.protocol.run.pilot import Pilot
from evoarena.report.power import mde, score_variance
from evoarena.spec import SpecError, parse_spec

runner = CliRunner()


def _spec(tmp_path: Path, families: list[str], n_test: int = 12, **protocol: Any) -> Path:
    data = {
        "name": "tiny",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 4, "n_test": n_test,
                                                  "families": families}},
        "methods": [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}],
        "models": {"s": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "s", "reflector": "s"},
        "budget": {"max_calls": 10},
        "protocol": protocol,
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_plan_with_a_pilot_gives_the_mde_of_its_spread_and_keeps_the_pilot_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, ["add", "sub"])  # arith-student: worded addition right, subtraction wrong
    result = runner.invoke(app, ["plan", str(spec), "--pilot", "6", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    pilot = plan["pilot"]
    assert sorted(pilot["scores"]) == [0.0] * 3 + [1.0] * 3 and pilot["calls"] == 6 and pilot["cached_calls"] == 0
    assert plan["rates"]["source"] == "pilot" and plan["rates"]["mean"] == 0.5
    (cmp,) = plan["comparisons"]
    assert cmp["condition"] == "reflexion" and cmp["baseline"] == "frozen" and cmp["n_test"] == 12
    assert cmp["mde"] == pytest.approx(mde(12, score_variance(pilot["scores"])))
    assert cmp["detects"] is False and plan["n_val"] == 4 and cmp["tie"]["resolution"] == 0.25
    assert cmp["estimate"]["calls"] == 10 + 12 and cmp["estimate"]["tokens"] > 0
    assert plan["baselines"][0]["estimate"]["calls"] == 2 + 4 + 12  # frozen: practice, v0 on val, test
    (pilot_dir,) = (tmp_path / "runs" / "pilots").iterdir()
    assert (pilot_dir / "pilot.json").is_file() and (pilot_dir / "run.sqlite").is_file()
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["pilots"]  # no run directory was written

    again = runner.invoke(app, ["plan", str(spec), "--pilot", "6", "--json"])
    assert json.loads(again.stdout)["pilot"]["cached_calls"] == 6  # the response cache answered

    run = runner.invoke(app, ["run", str(spec), "--run-dir", str(tmp_path / "run"), "--json", "--no-probe"])
    assert run.exit_code == 0, run.output
    from evoarena.store import RunStore
    from evoarena.store.queries import calls

    piloted = {c.cache_key for c in calls(RunStore(pilot_dir), phase="pilot")}
    frozen_test = [c for c in calls(RunStore(tmp_path / "run"), phase="test") if c.cell and "frozen" in c.cell]
    reused = [c for c in frozen_test if c.cache_key in piloted]
    assert len(reused) == 6 and all(c.cached for c in reused)  # the pilot's calls, read back by the run
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    (versus,) = [v for v in results["versus_baseline"] if v["condition"] == "reflexion"]
    assert 0 < versus["mde"] < 1 and "MDE (80% power)" in (tmp_path / "run" / "report.html").read_text()
    text = runner.invoke(app, ["plan", str(spec)]).output  # the last pilot, read back with no model call
    assert "a pilot of 6 test tasks" in text and "reflexion" in text and "power check:" in text


def test_run_warns_once_before_any_method_on_a_spec_at_the_ceiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, ["add"], n_test=400)  # frozen answers every worded addition: 1.0
    assert runner.invoke(app, ["plan", str(spec), "--pilot", "5"]).exit_code == 0
    result = runner.invoke(app, ["run", str(spec), "--run-dir", str(tmp_path / "run"), "--no-probe",
                                 "--set", "benchmark.params.n_test=400"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "power check" in line]
    assert len(lines) == 1 and "ceiling of the pilot (5 tasks): 1.00" in lines[0]
    assert "cannot detect" not in lines[0]  # 400 test tasks can: only the ceiling is said
    assert result.output.index("power check") < result.output.index("test accuracy")


def test_no_warning_when_the_split_can_detect_min_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, ["add", "sub"], n_test=12, min_effect=0.5)
    text = runner.invoke(app, ["plan", str(spec), "--baseline", "0.5", "--discordance", "0.3"]).output
    assert "given (--baseline)" in text and "power check" not in text
    assert f"{mde(12, 0.3):.3f}" in text  # from the given discordance, not the baseline's p(1 − p)


@pytest.mark.parametrize(("args", "message"), [
    (["--alpha", "0"], "--alpha: 0 is out of range"),
    (["--baseline", "1.5"], "--baseline: 1.5 is out of range"),
    (["--pilot", "0"], "--pilot: 0 is out of range"),
])
def test_bad_numbers_fail_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["plan", str(_spec(tmp_path, ["add"])), *args])
    assert result.exit_code != 0 and message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_min_effect_is_checked_and_left_out_of_the_hash() -> None:
    base = {"name": "x", "benchmark": {"name": "arith"}, "methods": [{"name": "frozen"}],
            "models": {"default": {"backend": "scripted", "model": "arith-student"}}}
    with pytest.raises(SpecError, match="protocol.min_effect"):
        parse_spec({**base, "protocol": {"min_effect": 0}})
    with pytest.raises(SpecError, match="protocol.min_effect"):
        parse_spec({**base, "protocol": {"min_effect": 1.5}})
    assert parse_spec(base).protocol.min_effect == 0.10
    assert parse_spec({**base, "protocol": {"min_effect": 0.3}}).spec_hash() == parse_spec(base).spec_hash()


def _priced(models: dict[str, Any], **budget: Any) -> Any:
    return parse_spec({
        "name": "tiny", "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 4, "n_test": 12}},
        "methods": [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}], "models": models,
        "roles": {"solver": "s", "reflector": "s"}, "budget": {"max_calls": 10, **budget}})


PILOT = Pilot(model="s", seed=0, task_ids=["a", "b", "c", "d"], scores=[0.0, 1.0, 1.0, 0.0], errors=0, calls=4,
              cached_calls=0, input_tokens=400, output_tokens=100, call_latency_s=None)


def test_the_dollar_estimate_prices_each_call_as_the_ledger_does(capsys: pytest.CaptureFixture[str]) -> None:
    from evoarena.cli.plan import print_plan
    from evoarena.protocol.run.planning import make_plan

    price = {"input_per_mtok": 2.0, "output_per_mtok": 6.0}
    scripted = {"backend": "scripted", "model": "arith-student"}
    per_call = (100 * 2.0 + 25 * 6.0) / 1e6  # the pilot's mean call: 100 input, 25 output tokens
    plan = make_plan(_priced({"s": {**scripted, "price": price}}), pilot=PILOT)
    (cmp,) = plan.comparisons
    assert cmp.estimate.usd == pytest.approx((10 + 12) * per_call) and not cmp.estimate.local
    assert plan.baselines[0].estimate.usd == pytest.approx((2 + 4 + 12) * per_call)
    capped = make_plan(_priced({"s": {**scripted, "price": price}}, max_usd=0.001), pilot=PILOT)
    assert capped.comparisons[0].estimate.usd == pytest.approx(0.001 + 12 * per_call)  # evolution stops at max_usd
    print_plan(plan)
    assert f"${(10 + 12) * per_call:.4f}" in capsys.readouterr().out

    free = make_plan(_priced({"s": scripted}), pilot=PILOT).comparisons[0].estimate
    assert free.local and free.usd == 0.0
    remote = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    unknown = make_plan(_priced({"s": remote}), pilot=PILOT).comparisons[0].estimate
    assert unknown.usd is None and not unknown.local
    assert make_plan(_priced({"s": {**remote, "price": price}})).comparisons[0].estimate.usd is None  # no pilot
    for models, shown in (({"s": remote}, "—"), ({"s": scripted}, "$0 local")):
        print_plan(make_plan(_priced(models), pilot=PILOT))
        (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("reflexion")]
        assert shown in row
