"""The lines a run prints at its start: the run's target and evidence, the methods' confinement and the promises it
lacks, and which model plays each role of each condition."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evoarena.cli.common import out
from evoarena.spec import ExperimentSpec

if TYPE_CHECKING:
    from evoarena.protocol.validate import Resolved


def print_roles(spec: ExperimentSpec, resolved: Resolved) -> None:
    """Under the run's first line: which model plays each role of each condition, and where the solver's stands in."""
    from evoarena.protocol.roles import role_lines

    plays = {condition: cls.roles for condition, cls in resolved.methods.items()}
    for line in role_lines(spec, plays, resolved.benchmark.grader_roles(spec.benchmark.params)):
        out.print(f"  roles  {line}", markup=False, highlight=False, soft_wrap=True)


def print_banner(spec: ExperimentSpec, target: Path, evidence: str) -> None:
    """The run's first line; under process isolation, the methods' confinement and (below bubblewrap) a second line
    with the promises that do not hold at that level."""
    from evoarena.protocol.confinement import promises

    level = spec.protocol.method_confinement
    isolation = "" if spec.protocol.isolation == "in-process" else f"   methods: [bold]own process, {level}[/]"
    out.print(f"[bold]{spec.name}[/] → {target}   evidence: [bold]{evidence}[/]{isolation}")
    lacks = promises(level)["lacks"] if spec.protocol.isolation == "process" else []
    if lacks:
        out.print(f"[yellow]method confinement {level} (protocol.method_confinement): a method {'; '.join(lacks)}[/]",
                  markup=True, highlight=False)
