"""Benchmarks: seeded task sources with hidden graders, one package each; importing this registers them all."""

from evoarena.benchmarks import episodes_view  # noqa: F401  (registers the "episodes" report view)
from evoarena.benchmarks.arith import ArithBenchmark
from evoarena.benchmarks.clr.benchmark import ClrBenchmark
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.humaneval import HumanEvalBenchmark
from evoarena.benchmarks.labels import LabelsBenchmark
from evoarena.benchmarks.maze import MazeBenchmark
from evoarena.benchmarks.reasoning_gym import ReasoningGymBenchmark
from evoarena.benchmarks.sheets import SheetsBenchmark
from evoarena.benchmarks.textworld import TextWorldBenchmark

__all__ = ["ArithBenchmark", "ClrBenchmark", "FilesBenchmark", "HumanEvalBenchmark", "LabelsBenchmark", "MazeBenchmark",
           "ReasoningGymBenchmark", "SheetsBenchmark", "TextWorldBenchmark"]
