"""Arithmetic and counting word problems: the quickstart benchmark."""

from evoarena.benchmarks.arith.benchmark import ArithBenchmark

__all__ = ["ArithBenchmark"]
