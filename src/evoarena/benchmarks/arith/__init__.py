"""Arithmetic and counting word problems: the quickstart benchmark."""

from evoarena.benchmarks.arith import policy as _policy  # noqa: F401  (registers the scripted policy)
from evoarena.benchmarks.arith.benchmark import ArithBenchmark

__all__ = ["ArithBenchmark"]
