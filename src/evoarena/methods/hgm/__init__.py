"""`hgm` (Huxley-Gödel Machine): a tree of harness versions grown by Thompson sampling over each clade's results.

Modules: `method` (the tree, expansion and evaluation); templates in `prompts/`. See docs/methods/hgm.md.
"""

from evoarena.methods.hgm.method import Hgm

__all__ = ["Hgm"]
