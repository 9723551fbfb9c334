"""harness.toml's `[solver]` knobs over the benchmark's generation defaults: `stop` (a list; `[]` for none) beside
`temperature` and `max_tokens`; a harness that sets none keeps the benchmark's."""

from __future__ import annotations

import pytest

from evoarena.benchmarks.arith.benchmark import ArithBenchmark
from evoarena.protocol.solve.solver_prompt import solver_params


def test_stop_is_a_knob_and_absent_knobs_keep_the_benchmarks() -> None:
    bench = ArithBenchmark(seed=0, n_train=1, n_val=1, n_test=1)
    assert solver_params(bench, {}).stop == ("\n",)
    toml = "[solver]\ntemperature = 0.5\nmax_tokens = 300\nstop = []\n"
    got = solver_params(bench, {"harness.toml": toml})
    assert (got.temperature, got.max_tokens, got.stop) == (0.5, 300, ())
    got = solver_params(bench, {"harness.toml": '[solver]\nstop = ["END", "\\n\\n"]\n'})
    assert (got.stop, got.max_tokens) == (("END", "\n\n"), bench.solver_params().max_tokens)


def test_a_stop_that_is_not_a_list_of_strings_is_refused() -> None:
    bench = ArithBenchmark(seed=0, n_train=1, n_val=1, n_test=1)
    with pytest.raises(ValueError, match="stop must be a list of strings"):
        solver_params(bench, {"harness.toml": '[solver]\nstop = "END"\n'})
