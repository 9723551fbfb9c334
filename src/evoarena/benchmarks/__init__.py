"""Benchmarks: seeded task sources with hidden graders, one package each."""

from evoarena.benchmarks.arith import ArithBenchmark
from evoarena.benchmarks.base import Benchmark, Feedback, Parsed, Split, Task, TaskView, TestSplitLocked
from evoarena.benchmarks.clr.benchmark import ClrBenchmark
from evoarena.benchmarks.sheets import SheetsBenchmark

BENCHMARKS: dict[str, type[Benchmark]] = {"arith": ArithBenchmark, "clr": ClrBenchmark, "sheets": SheetsBenchmark}


def build_benchmark(name: str, params: dict[str, object]) -> Benchmark:
    if name not in BENCHMARKS:
        raise ValueError(f"benchmark.name: unknown benchmark {name!r} (known: {sorted(BENCHMARKS)})")
    return BENCHMARKS[name](**params)


__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "ClrBenchmark",
    "SheetsBenchmark",
    "Feedback",
    "Parsed",
    "Split",
    "Task",
    "TaskView",
    "TestSplitLocked",
    "build_benchmark",
]
