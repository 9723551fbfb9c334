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
    ("arith", {"n_train": -3}, "arith-student", "benchmark.params.n_train/n_val/n_test: expected n_train, n_val >= 0 "
                                                "and n_test >= 1, got [-3, 10, 25]"),
    ("arith", {"n_test": 0}, "arith-student", "benchmark.params.n_train/n_val/n_test"),
    ("arith", {"families": []}, "arith-student", "benchmark.params.families: empty"),
    ("arith", {"families": ["add", "division"]}, "arith-student", "benchmark.params.families: unknown ['division']"),
    ("clr", {"chains": 0}, "clr-student", "benchmark.params.chains: expected a whole number >= 1"),
    ("clr", {"layers": 5}, "clr-student", "benchmark.params.layers: expected 1 to 4"),
    ("clr", {"max_attempts": 0}, "clr-student", "benchmark.params.max_attempts: expected at least 1"),
    ("clr", {"release": "no/such/release.json"}, "clr-student", "benchmark.params.release: no such file"),
])
def test_out_of_range_params_fail_in_one_line(tmp_path: Path, benchmark: str, params: dict[str, Any], student: str,
                                              message: str) -> None:
    with pytest.raises(SpecError) as err:
        run_experiment(_spec(benchmark, params, student), tmp_path / "run", probe=False)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "run").exists()
