"""Value types of the sandbox: the limits a run is given and the result it records."""

from __future__ import annotations

from dataclasses import dataclass

#: Every value :func:`evoarena.sandbox.isolation_level` may return, strongest first.
ISOLATION_LEVELS: tuple[str, ...] = ("bwrap", "unshare-net+rlimits", "rlimits", "timeout-only")


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed run.

    ``cpu_s`` and ``memory_mb`` are enforced with ``RLIMIT_CPU`` / ``RLIMIT_AS`` where the
    platform has them (all POSIX modes); ``wall_s`` and ``output_bytes`` are enforced by the
    parent everywhere.  ``network`` only has an effect where the network can be switched off
    (bubblewrap or ``unshare -n``).
    """

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 512
    output_bytes: int = 65536
    network: bool = False

    def __post_init__(self) -> None:
        if not self.wall_s > 0:
            raise ValueError(f"wall_s must be > 0, got {self.wall_s!r}")
        if self.cpu_s < 1:
            raise ValueError(f"cpu_s must be >= 1, got {self.cpu_s!r}")
        if self.memory_mb < 16:
            raise ValueError(f"memory_mb must be >= 16, got {self.memory_mb!r}")
        if self.output_bytes < 0:
            raise ValueError(f"output_bytes must be >= 0, got {self.output_bytes!r}")


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed run produced.

    ``returncode`` is the program's exit status, or ``None`` when it was killed for hitting the
    wall-clock or CPU limit (then ``timed_out`` is true).  A program killed by some other signal
    keeps the usual encoding: ``-N`` where the process is waited for directly, ``128 + N`` under
    bubblewrap (which reports its child's death that way).
    """

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    truncated: bool
    isolation: str
    wall_s: float

    def ok(self) -> bool:
        """True when the program exited with status 0 within its limits."""
        return self.returncode == 0 and not self.timed_out
