"""Bad benchmark params are refused in one line before a run directory exists (issue 12: input errors are one line):
values of the right type but outside what the benchmark can build — negative sizes, no families, a layer count a
chain does not have, a release file that is not there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import SpecError, parse_spec


def _spec(benchmark: str, params: dict[str, Any], student: str) -> Any:
    return parse_spec({
        "name": "bad-params", "benchmark": {"name": benchmark, "params": params},
        "methods": [{"name": "frozen"}],
        "models": {"s": {"backend": "scripted", "model": student}},
        "roles": {"solver": "s"},
    })


@pytest.mark.parametrize(("benchmark", "params", "student", "message"), [
    ("arith", {"n_train": -3}, "arith-student", "benchmark.params (arith).n_train: must be at least 0 "
                                                "(got -3)"),
    ("arith", {"n_test": 0}, "arith-student", "benchmark.params (arith).n_test: must be at least 1 "
                                              "(got 0)"),
    ("arith", {"families": []}, "arith-student", "benchmark.params (arith).families: needs at least 1 item"),
    ("arith", {"families": ["add", "division"]}, "arith-student", "benchmark.params (arith).families.1: 'division' "
                                                                  "is not one of add, sub"),
    ("clr", {"chains": 0}, "clr-student", "benchmark.params (clr).chains: must be at least 1"),
    ("clr", {"layers": 5}, "clr-student", "benchmark.params (clr).layers: must be at most 4"),
    ("clr", {"max_attempts": 0}, "clr-student", "benchmark.params (clr).max_attempts: must be at least 1 (got 0)"),
    ("clr", {"release": "no/such/release.json"}, "clr-student", "benchmark.params (clr).release: no such file"),
])
def test_out_of_range_params_fail_in_one_line(tmp_path: Path, benchmark: str, params: dict[str, Any], student: str,
                                              message: str) -> None:
    with pytest.raises(SpecError) as err:
        run_experiment(_spec(benchmark, params, student), tmp_path / "run", probe=False)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "run").exists()
