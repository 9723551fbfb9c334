"""What each method isolation level promises, and the check that a spec's level works here before a run starts.

`protocol.isolation: process` (`evoarena run --certified`) runs each method in a process of its own at
`protocol.method_confinement` (default `bwrap`); a level that does not work on this machine stops the run before
anything is written, never falling back to a weaker one. The promises per level are docs/security.md's table."""

from __future__ import annotations

from evoarena.sandbox.spawn import confinement_problem
from evoarena.spec import ExperimentSpec, SpecError
from evoarena.store.run_events import MethodIsolation

#: (key, what the method cannot do), in the order docs/security.md's table shows them
PROMISES: tuple[tuple[str, str], ...] = (
    ("no_handles", "reach the test split or the run store through a handle"),
    ("no_keys", "read API keys from its environment"),
    ("no_run_process", "see or signal the run process (/proc, signals, its memory and environment)"),
    ("no_network", "use the network"),
    ("no_store_read", "read the run store or the response cache"),
    ("no_store_write", "write the run store or the response cache"),
    ("own_cpu_cap", "spend more CPU than protocol.method_cpu_s"),
)
_PROCESS = ("no_handles", "no_keys", "own_cpu_cap")
#: which promises hold at each level: in-process (trusted code: none), then the three confinements of a method's
#: own process
HOLDS: dict[str, tuple[str, ...]] = {
    "in-process": (),
    "none": _PROCESS,
    "namespaces": (*_PROCESS, "no_run_process", "no_network"),
    "bwrap": tuple(key for key, _ in PROMISES),
}


def promises(level: str) -> dict[str, list[str]]:
    """The promises that hold and those that do not at `level`, as sentences ("cannot …")."""
    holds = HOLDS.get(level, ())
    return {"holds": [f"cannot {text}" for key, text in PROMISES if key in holds],
            "lacks": [f"can {text}" for key, text in PROMISES if key not in holds]}


def isolation_record(asked: str, got: str) -> MethodIsolation:
    """The runner's `method_isolation` event for one cell: the level asked for, the level its method runs at and
    the promises that hold there."""
    said = promises(got)
    return MethodIsolation(asked=asked, level=got, holds=said["holds"], lacks=said["lacks"])


def check_confinement(spec: ExperimentSpec) -> None:
    """Raise a one-line SpecError when the spec's method confinement does not apply or does not work here."""
    protocol = spec.protocol
    if protocol.isolation != "process":
        if protocol.method_confinement != "bwrap":  # a weaker level asked for, with no process of its own to confine
            raise SpecError("protocol.method_confinement: applies only with protocol.isolation: process "
                            "(or evoarena run --certified)")
        return
    problem = confinement_problem(protocol.method_confinement)
    if problem is None:
        return
    if protocol.method_confinement == "bwrap":
        raise SpecError(f"protocol.isolation: process (--certified) confines each method with bubblewrap, and "
                        f"{problem}; or ask for a weaker level in the spec (protocol.method_confinement: namespaces "
                        "or none)")
    raise SpecError(f"protocol.method_confinement: {protocol.method_confinement} does not work here: {problem}; or "
                    "ask for protocol.method_confinement: none")
