"""DSPy's optimisers (`dspy.BootstrapFewShot`, `dspy.LabeledFewShot`) run under the protocol: `bridge` (DSPy imported
lazily, its LM and adapter routed to the cell), `method` (one class per optimiser). See docs/methods/lib_dspy.md."""

from evoarena.methods.lib_dspy.method import BootstrapFewShot, LabeledFewShot

__all__ = ["BootstrapFewShot", "LabeledFewShot"]
