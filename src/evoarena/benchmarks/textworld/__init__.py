"""Seeded TextWorld games as episodes (`textworld`), and its scripted solver; importing this registers both (the
games themselves need the `envs` extra: textworld is imported only when a game is generated or played)."""

from evoarena.benchmarks.textworld import scripted
from evoarena.benchmarks.textworld.benchmark import TextWorldBenchmark

__all__ = ["TextWorldBenchmark", "scripted"]
