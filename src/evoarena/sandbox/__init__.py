"""Run model-written Python code safely: fresh scratch directory, minimal environment, the strongest
isolation the machine offers (bubblewrap > unshare -n + rlimits > rlimits > timeout only), limits on
wall-clock time, CPU, memory and captured output, and the whole process tree killed at the end.

See ``docs/sandbox.md``.
"""

from evoarena.sandbox.isolation import isolation_level
from evoarena.sandbox.limits import ISOLATION_LEVELS, SandboxLimits, SandboxResult
from evoarena.sandbox.runner import run_python, sweep_scratch
from evoarena.sandbox.worker import close_workers

__all__ = ["ISOLATION_LEVELS", "SandboxLimits", "SandboxResult", "close_workers", "isolation_level", "run_python",
           "sweep_scratch"]
