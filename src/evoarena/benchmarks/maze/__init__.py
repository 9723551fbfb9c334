"""Seeded grid mazes as episodes (`maze`), and its scripted solver; importing this registers both."""

from evoarena.benchmarks.maze import scripted
from evoarena.benchmarks.maze.benchmark import MazeBenchmark

__all__ = ["MazeBenchmark", "scripted"]
