"""`dynamic_cheatsheet`: one evolving cheatsheet, rewritten wholesale by a curator.

Modules: `method` (the sheet, its cumulative and retrieval-synthesis curators, the skill form of the sheet);
templates in `prompts/`. See docs/methods/dynamic_cheatsheet.md.
"""

from evoarena.methods.dynamic_cheatsheet.method import DynamicCheatsheet

__all__ = ["DynamicCheatsheet"]
