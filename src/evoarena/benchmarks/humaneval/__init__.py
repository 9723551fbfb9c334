"""OpenAI's HumanEval problems as a benchmark, each solution tested only in evoarena's sandbox
(docs/benchmarks/humaneval.md)."""

from evoarena.benchmarks.humaneval.benchmark import HumanEvalBenchmark

__all__ = ["HumanEvalBenchmark"]
