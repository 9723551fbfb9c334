"""The protocol settings that run each method in a process of its own at the strongest confinement that works here:
bubblewrap (what `make test` installs), else the weaker level a spec must then ask for by name. Tests that compare a
method's results in and out of its process use it, so they run on any machine; tests/security checks each level's
promises."""

from __future__ import annotations

import functools
from typing import Any

from evoarena.sandbox.spawn import CONFINEMENTS, confinement_problem


@functools.cache
def strongest() -> str:
    """The strongest method confinement that works on this machine (`none` always does)."""
    return next(level for level in CONFINEMENTS if confinement_problem(level) is None)


def own_process() -> dict[str, Any]:
    """`protocol:` settings for a method in its own process, asking for a weaker confinement only where bubblewrap
    does not work."""
    level = strongest()
    return {"isolation": "process"} if level == "bwrap" else {"isolation": "process", "method_confinement": level}
