"""Running a solver's program in the sandbox on a task's cases: the input workbooks go in, the (recomputed,
normalised) values of the target cells come out. The program never sees the expected values."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from evoarena.benchmarks.sheets.driver import MARK
from evoarena.sandbox import SandboxLimits, run_python

LIMITS = SandboxLimits(wall_s=90.0, cpu_s=60, memory_mb=1024, output_bytes=4_000_000)
"""Generous because a workbook with formulas loads the formula engine (numpy, scipy) inside the sandbox."""


@dataclass(frozen=True)
class CaseRun:
    """One case: normalised values of the asked cells in order (None when the case failed, see `error`)."""

    values: list[Any] | None
    error: str | None = None
    styles: list[list[str] | None] | None = None
    missing_sheets: list[str] = field(default_factory=list)
    formulas: int = 0
    note: str | None = None


@dataclass(frozen=True)
class ProgramRun:
    cases: list[CaseRun]
    isolation: str
    failure: str | None = None  # the whole run failed (syntax error at import, timeout, crash)


@cache
def driver_source() -> str:
    return resources.files("evoarena.benchmarks.sheets").joinpath("driver.py").read_text("utf-8")


def run_program(
    program: str,
    inputs: list[tuple[bytes, list[tuple[str, str]]]],
    *,
    styles: bool = False,
    limits: SandboxLimits = LIMITS,
) -> ProgramRun:
    """Run `program` (defining `solve(input_path, output_path)`) once per (input workbook, cells to read)."""
    config = {
        "cases": [{"xlsx": base64.b64encode(xlsx).decode("ascii"), "cells": [list(c) for c in cells]}
                  for xlsx, cells in inputs],  # fmt: skip
        "styles": styles,
    }
    res = run_python(driver_source(), stdin=json.dumps(config), files={"solution.py": program}, limits=limits)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    n = len(inputs)
    if res.limit is not None or line is None:
        why = res.killed_for() or f"no result (exit {res.returncode}): {res.stderr.strip()[-300:]}"
        return ProgramRun([CaseRun(None, why) for _ in range(n)], res.isolation, failure=why)
    data = json.loads(line[len(MARK) :])
    if "load_error" in data:
        why = f"the program could not be loaded: {data['load_error']}"
        return ProgramRun([CaseRun(None, why) for _ in range(n)], res.isolation, failure=why)
    cases = [
        CaseRun(
            values=r.get("values"),
            error=r.get("error"),
            styles=r.get("styles"),
            missing_sheets=list(r.get("missing_sheets") or []),
            formulas=int(r.get("formulas") or 0),
            note=r.get("note"),
        )
        for r in data["results"]
    ]
    return ProgramRun(cases, res.isolation)
