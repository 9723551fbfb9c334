"""Support tickets labelled by a hidden, seeded rule (the Meta-Harness classification stand-in), and its scripted
student; importing this registers both."""

from evoarena.benchmarks.labels import scripted
from evoarena.benchmarks.labels.benchmark import LabelsBenchmark

__all__ = ["LabelsBenchmark", "scripted"]
