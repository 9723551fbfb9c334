"""Your own tasks from a file: the `files` benchmark and its deterministic graders (docs/own-tasks.md)."""

from evoarena.benchmarks.files.benchmark import FilesBenchmark

__all__ = ["FilesBenchmark"]
