"""`gepa`: reflective prompt evolution with a per-instance Pareto candidate pool.

Modules: `method` (the iteration: Pareto selection, reflective proposals, acceptance), `pool` (its state),
`proposals` (an iteration's P x N proposal tasks and their batched evaluation), `merge` (the released merge),
`report_view` (its report section); templates in `prompts/`. See docs/methods/gepa.md.
"""

from evoarena.methods.gepa import report_view  # noqa: F401  (registers the "gepa" report view)
from evoarena.methods.gepa.method import Gepa

__all__ = ["Gepa"]
