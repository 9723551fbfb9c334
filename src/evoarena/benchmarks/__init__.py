"""Benchmarks: seeded task sources with hidden graders, one package each; importing this registers them all."""

from evoarena.benchmarks.arith import ArithBenchmark
from evoarena.benchmarks.clr.benchmark import ClrBenchmark
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.sheets import SheetsBenchmark

__all__ = ["ArithBenchmark", "ClrBenchmark", "FilesBenchmark", "SheetsBenchmark"]
