"""Any reasoning-gym dataset as a benchmark, graded by its own `score_answer` (docs/benchmarks/reasoning_gym.md)."""

from evoarena.benchmarks.reasoning_gym.benchmark import ReasoningGymBenchmark

__all__ = ["ReasoningGymBenchmark"]
