"""A reference harness and asymmetric roles on the scripted student (evidence: mechanism): the headroom over frozen
with each condition's share in results.json, the run summary and report.html; `update` plays every update role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.cli.results import print_results
from evoarena.protocol.roles import role_lines, role_map
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.results_record import RunResults
from evoarena.scripted.arith import RULES
from evoarena.spec import SpecError, parse_spec

TWO_MODELS = {"small": {"backend": "scripted", "model": "arith-student"},
              "large": {"backend": "scripted", "model": "arith-student"}}


def _spec(**overrides: Any) -> Any:
    data: dict[str, Any] = {
        "name": "headroom",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
        "methods": [{"name": "frozen"}, {"name": "reference", "params": {"system": " ".join(RULES.values())}},
                    {"name": "reflexion"}],
        "models": TWO_MODELS,
        "roles": {"solver": "small", "update": "large"},
    }
    return parse_spec({**data, **overrides})


def test_headroom_and_roles_of_an_asymmetric_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = RunResults.model_validate(run_experiment(_spec(), tmp_path / "run"))
    acc = {c.condition: c.test.mean for c in results.conditions if c.test}
    assert acc["reference"] == 1.0 > acc["frozen"]
    (h,) = results.headroom or []
    assert (h.control, h.baseline, h.model) == ("reference", "frozen", "small")
    assert h.diff == pytest.approx(acc["reference"] - acc["frozen"]) and h.ci_low is not None and h.ci_low > 0
    assert h.detectable and h.note is None
    (share,) = h.shares
    assert share.condition == "reflexion" and share.diff is not None and h.diff
    assert share.share == pytest.approx(share.diff / h.diff, abs=1e-5)
    assert results.played_by("reflexion", "reflector") == ["large"]  # `update` reached the reflector
    assert results.played_by("reflexion", "solver") == ["small"]
    html = (tmp_path / "run" / "report.html").read_text()
    assert 'id="headroom"' in html and "large" in html
    print_results(results)
    said = capsys.readouterr().out
    assert "headroom (small): reference − frozen:" in said and "reflexion" in said


def test_update_maps_every_update_role_and_a_named_one_wins() -> None:
    spec = _spec(methods=[{"name": "ace"}, {"name": "reflexion", "roles": {"reflector": "small"}}],
                 roles={"solver": "small", "update": "large", "curator": "small"})
    ace, reflexion = spec.methods
    assert role_map(spec, ace, ("solver", "reflector", "curator")) == {
        "solver": "small", "reflector": "large", "curator": "small"}
    assert role_map(spec, reflexion, ("solver", "reflector"))["reflector"] == "small"
    lines = role_lines(spec, {"ace": ("solver", "reflector", "curator"), "reflexion": ("solver", "reflector")}, ())
    assert lines[0] == "ace: solver → small, reflector → large (update), curator → small"
    assert not any("played by no method" in line for line in lines)


def test_an_unknown_update_model_is_one_line() -> None:
    with pytest.raises(SpecError, match=r"^roles.update: unknown model 'huge' \(known: large, small\)$"):
        _spec(roles={"solver": "small", "update": "huge"})
