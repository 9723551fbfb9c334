"""`continual_harness` (Continual Harness: Online Adaptation for Self-Improving Foundation Agents, Karten et al.,
arXiv 2605.09998; sethkarten/pokeagent-speedrun, `agents/utils/harness_evolver.py`): reset-free — inside an episode
the solver acts and, every F steps after a warm-up (released: not before step 10, every 10 steps to step 200, then
every 25), a refiner reads the recent trajectory and rewrites the strategic prompt, the skills and the memory, which
the rest of the same episode then runs under; a skill whose stuck rate rose after its change is auto-reverted.

Modules: `cadence` (when), `stuck` (stuck steps, the revert rule), `trajectory` (the refiner's view of the window),
`reply` (the refiner's replies, read strictly), `refiner` (one refinement), `agent` (the episode agent), `state`
(the harness files), `method`, `report_view`. See docs/methods/continual_harness.md.
"""

from evoarena.methods.continual_harness import report_view  # noqa: F401  (registers the "continual_harness" view)
from evoarena.methods.continual_harness.cadence import Cadence, refines_at
from evoarena.methods.continual_harness.method import ContinualHarness

__all__ = ["Cadence", "ContinualHarness", "refines_at"]
