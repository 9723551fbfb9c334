"""DSPy's optimisers run under the protocol: `bridge` (DSPy imported lazily, its LM and adapter routed to the cell),
`method` (what every optimiser shares), `optimisers` (one registered class each), `report_view`. See
docs/methods/lib_dspy.md."""

from evoarena.methods.lib_dspy import report_view  # noqa: F401  (registers the "lib_dspy" report view)
from evoarena.methods.lib_dspy.optimisers import (
    COPRO,
    GEPA,
    SIMBA,
    BootstrapFewShot,
    BootstrapFewShotWithRandomSearch,
    LabeledFewShot,
    MIPROv2,
)

__all__ = [
    "COPRO",
    "GEPA",
    "SIMBA",
    "BootstrapFewShot",
    "BootstrapFewShotWithRandomSearch",
    "LabeledFewShot",
    "MIPROv2",
]
