"""`gepa.optimize`: the `gepa` package's optimiser as a method, its calls routed through the cell.

Modules: `method` (params, the run, what becomes the harness), `bridge` (the adapter, reflection LM, callback and
stop), `state` (the result record), `report_view`. The package is imported only when a run needs it. See
docs/methods/gepa.optimize.md.
"""

from evoarena.methods.lib_gepa import report_view  # noqa: F401  (registers the "gepa.optimize" report view)
from evoarena.methods.lib_gepa.method import GepaOptimize

__all__ = ["GepaOptimize"]
