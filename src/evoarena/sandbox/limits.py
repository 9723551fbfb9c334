"""Value types of the sandbox: the limits a run is given and the result it records."""

from __future__ import annotations

from dataclasses import dataclass

#: Every value :func:`evoarena.sandbox.isolation_level` may return, strongest first.
ISOLATION_LEVELS: tuple[str, ...] = ("bwrap", "unshare-net+rlimits", "rlimits", "timeout-only")


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed run.

    ``cpu_s`` and ``memory_mb`` are enforced with ``RLIMIT_CPU`` / ``RLIMIT_AS`` where the
    platform has them (all POSIX modes); ``wall_s``, ``output_bytes``, ``disk_mb`` (what the scratch
    directory holds) and ``max_processes`` (live descendants) are enforced by the parent everywhere,
    which kills the whole tree when one is passed.  ``network`` only has an effect where the
    network can be switched off (bubblewrap or ``unshare -n``).
    """

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 512
    output_bytes: int = 65536
    network: bool = False
    disk_mb: int = 256
    max_processes: int = 64

    def __post_init__(self) -> None:
        if not self.wall_s > 0:
            raise ValueError(f"wall_s must be > 0, got {self.wall_s!r}")
        if self.cpu_s < 1:
            raise ValueError(f"cpu_s must be >= 1, got {self.cpu_s!r}")
        if self.memory_mb < 16:
            raise ValueError(f"memory_mb must be >= 16, got {self.memory_mb!r}")
        if self.output_bytes < 0:
            raise ValueError(f"output_bytes must be >= 0, got {self.output_bytes!r}")
        if self.disk_mb < 1:
            raise ValueError(f"disk_mb must be >= 1, got {self.disk_mb!r}")
        if self.max_processes < 1:
            raise ValueError(f"max_processes must be >= 1, got {self.max_processes!r}")


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed run produced.

    ``returncode`` is the program's exit status, or ``None`` when it was killed for passing a limit:
    ``limit`` names which (``wall``, ``cpu``, ``disk``, ``processes``; ``timed_out`` is true for the
    first two).  A program killed by some other signal
    keeps the usual encoding: ``-N`` where the process is waited for directly, ``128 + N`` under
    bubblewrap (which reports its child's death that way; a warm run reports it the same way).
    ``warm`` is true when the program ran in a fresh child of a warm worker (:mod:`evoarena.sandbox.worker`)
    rather than in a sandbox started for it alone; ``isolation`` is the level either way.
    """

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    truncated: bool
    isolation: str
    wall_s: float
    limit: str | None = None
    warm: bool = False

    def ok(self) -> bool:
        """True when the program exited with status 0 within its limits."""
        return self.returncode == 0 and not self.timed_out

    def killed_for(self) -> str | None:
        """Why the sandbox killed the program, in words for feedback (None: it was not killed)."""
        return _KILLED_FOR.get(self.limit or "")


_KILLED_FOR = {
    "wall": "timed out",
    "cpu": "timed out",  # CPU time ran out: to the program's author, the same as a wall-clock time-out
    "disk": "killed: it wrote more than the sandbox's disk quota",
    "processes": "killed: it started more processes than the sandbox allows",
}
