"""`evotest` (EvoTest: Evolutionary Test-Time Learning, He et al., arXiv 2510.13220, ICLR 2026; yf-he/EvoTest
@f92474c): the same game replayed episode after episode; after each, an evolver reads the whole trajectory and the
last failure loops and writes a child configuration — guiding prompt and `extract_state` (scope `released`), also
success / failure memory and the actor's temperature (scope `paper`) — and UCB over the tree of configurations picks
which node to evolve next; rule-based memory (score rises, plateaus, A↔B loops) grows across episodes.

Modules: `method` (the episode step), `state` (the tree, the configuration's files, the learning curve), `memory`
(the rule-based memory), `reply` (the evolver's reply, checked part by part), `step_program` (the harness program
every configuration runs in the sandbox: the step prompt, the extractor, the memory's retrieval), `report_view`.
See docs/methods/evotest.md.
"""

from evoarena.methods.evotest import report_view  # noqa: F401  (registers the "evotest" report view)
from evoarena.methods.evotest.method import EvoTest

__all__ = ["EvoTest"]
