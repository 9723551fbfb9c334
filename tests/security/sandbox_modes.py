"""The sandbox test modes: an isolation level, cold at `bwrap` (``bwrap``), or through the warm worker
(``bwrap:warm``); shared by the limit and daemon attack tests."""

from __future__ import annotations

from evoarena.sandbox import SandboxResult
from evoarena.sandbox.runner import run_with
from evoarena.sandbox.worker import warm_supported

WARM = ["bwrap:warm"] if warm_supported() else []


def split_mode(mode: str) -> tuple[str, bool | None]:
    """(level, warm) of a test mode."""
    level, _, warm = mode.partition(":")
    return level, (True if warm else False if level == "bwrap" else None)


def run(mode: str, code: str, **kwargs: object) -> SandboxResult:
    level, warm = split_mode(mode)
    return run_with(level, code, warm=warm, **kwargs)  # type: ignore[arg-type]
