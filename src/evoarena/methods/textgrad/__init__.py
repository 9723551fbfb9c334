"""`textgrad`: TextGrad's prompt optimisation written natively (no `textgrad` import at run time).

Modules: `graph` (text variables, the two operations, the backward pass, the TGD update request), `method` (the
training loop, the validation revert, the two-node pipeline and the direct-rewrite baseline), `report_view` (each
update's fate and its right→wrong count); textgrad's templates in `prompts/`. See docs/methods/textgrad.md.
"""

from evoarena.methods.textgrad import report_view  # noqa: F401  (registers the "textgrad_native" report view)
from evoarena.methods.textgrad.method import TextGrad

__all__ = ["TextGrad"]
