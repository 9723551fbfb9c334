"""`ahe` (Agentic Harness Engineering, arXiv 2604.25850; china-qijizhifeng/agentic-harness-engineering @96f3b64):
the harness as component files (prompt, tool descriptions, middleware rules, long-term memory, skills); each round
the live harness is run k times per task, the last round's change manifest is scored (evoarena.harness.change_scoring)
and the files of harmful changes are rolled back, then an evolve agent reads an overview and per-task detail of the
failures and answers with a new manifest plus the files it edits, adopted one version per change.

Modules: `components` (the files, what is editable, what the solver sees), `reply` (the evolve agent's reply checked
into adoptable changes), `method` (the round). State: `memory/ahe/state.json`. See docs/methods/ahe.md.
"""

from evoarena.methods.ahe import report_view  # noqa: F401  (registers the "ahe" report view)
from evoarena.methods.ahe.method import Ahe

__all__ = ["Ahe"]
