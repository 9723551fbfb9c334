"""`meta_harness`: a proposer that reads the whole search history through tools and chooses what to read.

Modules: `history` (the candidates' files, scores and traces as a tree), `tools` (the proposer's tools), `functions`
(the function-calling protocol), `method` (the search); templates in `prompts/`. See docs/methods/meta_harness.md.
"""

from evoarena.methods.meta_harness.method import MetaHarness

__all__ = ["MetaHarness"]
