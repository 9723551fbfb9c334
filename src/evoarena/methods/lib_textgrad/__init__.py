"""`textgrad.TGD`: TextGrad's prompt optimisation (the `textgrad` library, imported only when a step runs).

Modules: `method` (the example's training loop and validation revert), `bridge` (the quiet import and the engines
that route textgrad's calls to the cell), `report_view` (the fate of each optimizer step). See
docs/methods/textgrad.TGD.md.
"""

from evoarena.methods.lib_textgrad import report_view  # noqa: F401  (registers the "textgrad" report view)
from evoarena.methods.lib_textgrad.method import TextGradTGD

__all__ = ["TextGradTGD"]
